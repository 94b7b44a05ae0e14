#pragma once
// The builds of the LSSA / LSSAR row arithmetic that test_lssa_rows.cpp compares: the baseline x86-64 target,
// AVX2 and AVX-512, the targets of the kernel's target_clones (model/src/lssa_rows.hpp), each from its own
// file with its own compile options (tests/model/CMakeLists.txt).
#include <cstdint>

namespace orbitlaw::model::testing {

// One query row: its absolute index (it sees keys 0..absolute), the row's length in memory (keys >= absolute
// + 1), the head size and LSSAR's parameters.
struct RowCase {
  std::int64_t absolute = 0;
  std::int64_t keys = 1;
  std::int64_t head_dim = 16;
  int offset_rows = 3;
  bool reweight = false;
  double p = 15;
};

struct RowsBuild {
  // s[keys] -> lssa, sig, out [keys] and the row's 4 saved scalars (stats)
  void (*forward)(const float* s, float* lssa, float* sig, float* out, float* stats, const RowCase& row);
  // dW[keys] and the forward's results -> ds[keys]
  void (*backward)(const float* grad, const float* lssa, const float* sig, const float* out,
                   const float* stats, float* ds, const RowCase& row);
};

RowsBuild rows_baseline();
#ifdef ORBITLAW_TEST_ROW_BUILDS_X86
RowsBuild rows_avx2();
RowsBuild rows_avx512();
#endif

}  // namespace orbitlaw::model::testing
