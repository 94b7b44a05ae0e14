// The LSSA / LSSAR row arithmetic built for AVX2 (-mavx2): tests/model/CMakeLists.txt.
#define ORBITLAW_ROW_CLONES
#include "lssa_rows_build.hpp"

namespace orbitlaw::model::testing {
RowsBuild rows_avx2() { return rows_of_this_build(); }
}  // namespace orbitlaw::model::testing
