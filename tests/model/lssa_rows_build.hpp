#pragma once
// One build of the LSSA / LSSAR row arithmetic (model/src/lssa_rows.hpp) for the target of the including
// file's compile options: tests/model/lssa_rows_{baseline,avx2,avx512}.cpp define ORBITLAW_ROW_CLONES empty,
// include this header and return rows_of_this_build().
#include <cstdint>
#include <vector>

#include "lssa_rows.hpp"  // model/src, the kernel's own header
#include "lssa_rows_builds.hpp"

namespace orbitlaw::model::testing {
namespace {

void forward_of_this_build(const float* s, float* lssa, float* sig, float* out, float* stats,
                           const RowCase& row) {
  std::vector<float> scratch(static_cast<std::size_t>(row.keys));
  lssa_rows::forward_row(s, lssa, sig, out, stats, scratch.data(),
                         lssa_rows::row_at(row.absolute, row.head_dim, row.offset_rows), row.keys,
                         row.reweight, row.p);
}

void backward_of_this_build(const float* grad, const float* lssa, const float* sig, const float* out,
                            const float* stats, float* ds, const RowCase& row) {
  std::vector<float> scratch(static_cast<std::size_t>(row.keys));
  lssa_rows::backward_row(grad, lssa, sig, out, stats, ds, scratch.data(),
                          lssa_rows::row_at(row.absolute, row.head_dim, row.offset_rows), row.keys,
                          row.reweight, row.p);
}

RowsBuild rows_of_this_build() { return {&forward_of_this_build, &backward_of_this_build}; }

}  // namespace
}  // namespace orbitlaw::model::testing
