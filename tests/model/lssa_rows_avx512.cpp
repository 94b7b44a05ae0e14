// The LSSA / LSSAR row arithmetic built for AVX-512 (-mavx512f): tests/model/CMakeLists.txt.
#define ORBITLAW_ROW_CLONES
#include "lssa_rows_build.hpp"

namespace orbitlaw::model::testing {
RowsBuild rows_avx512() { return rows_of_this_build(); }
}  // namespace orbitlaw::model::testing
