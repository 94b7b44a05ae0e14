// Attention with any registered kind: the kind's fused CUDA kernel, its scaled_dot_product_attention form, or
// its reference weights (model/src/attention_kinds.cpp; on the CPU from the kind's CPU kernel where it has
// one), in query chunks; and RoPE. Rows are 0-based.
#include "orbitlaw/model/attention.hpp"

#include <cmath>

#include "orbitlaw/model/attention_kinds.hpp"

namespace orbitlaw::model {

torch::Tensor apply_rope(const torch::Tensor& x, double theta) {
  const auto t = x.size(-2);
  const auto d = x.size(-1);
  auto opts = torch::TensorOptions().dtype(torch::kFloat64).device(x.device());
  // Frequencies theta^(-2m/d), m = 0 .. d/2 - 1, computed in float64 so long positions keep their phase.
  auto inv_freq = torch::pow(theta, -torch::arange(0, d, 2, opts) / static_cast<double>(d));
  auto angles = torch::outer(torch::arange(t, opts), inv_freq);  // [T, d/2]
  auto cos = torch::cos(angles).to(x.scalar_type());
  auto sin = torch::sin(angles).to(x.scalar_type());
  // Rotate the pairs (x_m, x_{m + d/2}) ("rotate half" layout).
  auto x1 = x.narrow(-1, 0, d / 2);
  auto x2 = x.narrow(-1, d / 2, d / 2);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

torch::Tensor attention_weights(const torch::Tensor& q, const torch::Tensor& k, const AttentionSpec& spec,
                                const torch::Tensor& ssmax_scale, std::int64_t row_offset) {
  TORCH_CHECK(k.size(-2) >= row_offset + q.size(-2), "attention: keys must cover every query row");
  return attention_kind_info(spec.kind).weights(AttentionScores{q, k, spec, ssmax_scale, row_offset});
}

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const AttentionSpec& spec, const torch::Tensor& ssmax_scale,
                        std::int64_t query_chunk) {
  const auto& kind = attention_kind_info(spec.kind);
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
  if (q.is_cuda() && kind.fused && spec.allow_fused && kind.fused_refuses(spec).empty())
    return kind.fused(q, k, v, spec);
#endif
  const auto t = q.size(-2);
  const bool whole_rows = query_chunk <= 0 || query_chunk >= t;
  if (kind.sdpa && spec.allow_fused && whole_rows)
    return kind.sdpa(AttentionScores{q, k, spec, ssmax_scale, 0}, v);
  // The kind's CPU kernel computes the reference weights in one pass per row (float32 only).
  const bool cpu_kernel =
      kind.cpu_weights && spec.allow_fused && q.device().is_cpu() && q.scalar_type() == torch::kFloat;
  auto weights = [&](const torch::Tensor& rows_q, const torch::Tensor& keys_k, std::int64_t row_offset) {
    if (!cpu_kernel) return attention_weights(rows_q, keys_k, spec, ssmax_scale, row_offset);
    return kind.cpu_weights(AttentionScores{rows_q, keys_k, spec, ssmax_scale, row_offset});
  };
  if (whole_rows) return torch::matmul(weights(q, k, 0), v);
  // Row i only sees keys 0..i, so a chunk of rows needs only the keys up to its last row.
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < t; start += query_chunk) {
    const auto rows = std::min(query_chunk, t - start);
    const auto keys = start + rows;
    auto w = weights(q.narrow(-2, start, rows), k.narrow(-2, 0, keys), start);
    parts.push_back(torch::matmul(w, v.narrow(-2, 0, keys)));
  }
  return torch::cat(parts, -2);
}

}  // namespace orbitlaw::model
