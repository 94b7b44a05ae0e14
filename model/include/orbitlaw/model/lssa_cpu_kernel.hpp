#pragma once
// LSSA and LSSAR weights on the CPU in one pass per query row, forward and backward written by hand
// (docs/design.md section 5). The reference formulas (model/src/attention_kinds.cpp) take a dozen LibTorch
// operations over the whole T x T matrix, each with its own allocation and autograd node; at the sweeps'
// sizes (T = 128, head size 16) those passes, not the arithmetic, are most of a training step. This kernel
// computes the same function: tests/model/test_attention.cpp checks it against the naive float64 reference,
// values and gradients, on both sides of LSSAR's near-uniform cut-off.
#include <torch/torch.h>

#include <cstdint>

namespace orbitlaw::model {

struct LssaRowsSpec {
  std::int64_t head_dim = 0;    // d of ln(d) ln(n_i)
  std::int64_t row_offset = 0;  // absolute index of the first query row (row i sees keys 0..i)
  bool reweight = false;        // false: LSSA; true: LSSAR
  double p = 15;                // LSSAR's power (p >= 1)
  int offset_rows = 3;          // LSSAR's O_i is 0 on the first offset_rows absolute rows, 1 after
};

// The attention weights [B, H, T_q, T_k] from `dots` = q_i.k_j of L2-normalised rows ([B, H, T_q, T_k],
// float32, CPU): A_ij = softplus(ln(d) ln(n_i) dots_ij) / sum over visible j, and for LSSAR
// W_ij = (u_ij / max_j u_ij)^p renormalised, u_ij = ReLU(n_i A_ij - O_i), all-zero rows at or below the
// cut-off (orbitlaw/model/lssar_cutoff.hpp). Keys a row does not see get weight 0. Differentiable in `dots`
// (once).
torch::Tensor lssa_cpu_weights(const torch::Tensor& dots, const LssaRowsSpec& spec);

}  // namespace orbitlaw::model
