#pragma once
// The attention kinds of docs/design.md section 5 as one unfused reference path each, readable line by line
// against the formulas. Shapes: q, k, v are [B, H, T, d] with RoPE (if any) already applied; row i (0-based)
// of a causal attention sees keys 0..i, so n_i = i + 1.
#include <torch/torch.h>

#include <cstdint>

#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model {

// Attention output [B, H, T, d]. `ssmax_scale` ([H], learnable s) is required for kSsmax and ignored
// otherwise. Query rows are processed in chunks of `query_chunk` rows (0: all at once) so long sequences
// need O(chunk * T) memory instead of O(T^2); the result does not depend on the chunking. For lssa / lssar on
// CUDA tensors the fused kernel is used when compiled in (ORBITLAW_WITH_FUSED_ATTENTION), spec.allow_fused
// is set and offset_rows == 3.
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const AttentionSpec& spec, const torch::Tensor& ssmax_scale = {},
                        std::int64_t query_chunk = 0);

// Attention weights [B, H, T_q, T_k] for the query rows q ([B, H, T_q, d]) whose absolute row indices start
// at `row_offset`; k holds keys 0..T_k-1 (T_k >= row_offset + T_q). Every row sums to 1, except LSSAR rows
// whose weights are all at or below uniform, which are all zeros (their output is the zero vector).
torch::Tensor attention_weights(const torch::Tensor& q, const torch::Tensor& k, const AttentionSpec& spec,
                                const torch::Tensor& ssmax_scale = {}, std::int64_t row_offset = 0);

// The LSSAR re-weighting of row-normalised LSSA weights A [..., T_q, T_k] (rows from `row_offset`):
// W_ij = ReLU(n_i A_ij - O_i)^p, W_i <- W_i / sum_j W_ij, computed as (u_ij / max_j u_ij)^p with
// u_ij = ReLU(n_i A_ij - O_i) so it stays finite at any length. A row with max_j u_ij <=
// kLssarUniformTolerance (orbitlaw/model/lssar_cutoff.hpp, the same cut-off as the fused kernels) is all at
// or below uniform and is all zeros: rounding noise of a uniform row must not be amplified into weights.
torch::Tensor lssar_reweight(const torch::Tensor& lssa_weights, double p, int offset_rows,
                             std::int64_t row_offset = 0);

// Rotary position embedding (theta base) applied to x [B, H, T, d] for absolute positions 0..T-1 (d even).
torch::Tensor apply_rope(const torch::Tensor& x, double theta);

}  // namespace orbitlaw::model
