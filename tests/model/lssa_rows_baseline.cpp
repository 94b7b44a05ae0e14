// The LSSA / LSSAR row arithmetic built for the baseline x86-64 target (no extra option):
// tests/model/CMakeLists.txt.
#define ORBITLAW_ROW_CLONES
#include "lssa_rows_build.hpp"

namespace orbitlaw::model::testing {
RowsBuild rows_baseline() { return rows_of_this_build(); }
}  // namespace orbitlaw::model::testing
