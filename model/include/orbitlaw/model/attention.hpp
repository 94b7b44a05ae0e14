#pragma once
// Causal attention of any registered kind (orbitlaw/model/attention_kinds.hpp). Shapes: q, k, v are
// [B, H, T, d] with RoPE (if any) already applied; row i (0-based) of a causal attention sees keys 0..i, so
// n_i = i + 1.
#include <torch/torch.h>

#include <cstdint>

#include "orbitlaw/model/attention_kinds.hpp"
#include "orbitlaw/model/config.hpp"

namespace orbitlaw::model {

// Attention output [B, H, T, d]. `ssmax_scale` ([H], the learned per-head scale) is required by kinds that
// have one and ignored otherwise. Query rows are processed in chunks of `query_chunk` rows (0: all at once)
// so long sequences need O(chunk * T) memory instead of O(T^2); the result does not depend on the chunking.
// On CUDA tensors a kind's fused kernel is used when compiled in (ORBITLAW_WITH_FUSED_ATTENTION),
// spec.allow_fused is set and the kind's fused_refuses(spec) is empty. On any device, a kind with a
// scaled_dot_product_attention form (AttentionKindInfo::sdpa) uses it when spec.allow_fused is set and the
// rows are not chunked. A kind with a CPU kernel (AttentionKindInfo::cpu_weights) computes its weights with
// it on float32 CPU tensors when spec.allow_fused is set. spec.allow_fused off gives the reference weights
// (the parity tests compare the paths).
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const AttentionSpec& spec, const torch::Tensor& ssmax_scale = {},
                        std::int64_t query_chunk = 0);

// Attention weights [B, H, T_q, T_k] for the query rows q ([B, H, T_q, d]) whose absolute row indices start
// at `row_offset`; k holds keys 0..T_k-1 (T_k >= row_offset + T_q). For kinds whose rows sum to 1, every row
// does, except LSSAR rows whose weights are all at or below uniform, which are all zeros (output zero).
torch::Tensor attention_weights(const torch::Tensor& q, const torch::Tensor& k, const AttentionSpec& spec,
                                const torch::Tensor& ssmax_scale = {}, std::int64_t row_offset = 0);

// Rotary position embedding (theta base) applied to x [B, H, T, d] for absolute positions 0..T-1 (d even).
torch::Tensor apply_rope(const torch::Tensor& x, double theta);

}  // namespace orbitlaw::model
