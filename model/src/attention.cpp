// Unfused reference attention, one branch per kind of docs/design.md section 5. Rows are 0-based here, so the
// paper's row i (1-based) with n_i = i keys is row i - 1 with n = i.
#include "orbitlaw/model/attention.hpp"

#include <cmath>
#include <limits>

#ifdef ORBITLAW_WITH_FUSED_ATTENTION
#include "orbitlaw/fused_attention.hpp"
#endif

namespace orbitlaw::model {

namespace {

namespace F = torch::nn::functional;

// Absolute 0-based index of each query row, as [T_q, 1].
torch::Tensor query_rows(std::int64_t t_q, std::int64_t row_offset, const torch::TensorOptions& options) {
  return torch::arange(row_offset, row_offset + t_q, options).unsqueeze(1);
}

// true where key j is visible from query row i (j <= i, and within the window when one is given).
torch::Tensor visible_keys(std::int64_t t_q, std::int64_t t_k, std::int64_t row_offset, std::int64_t window,
                           torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
  auto i = query_rows(t_q, row_offset, opts);
  auto j = torch::arange(t_k, opts).unsqueeze(0);
  auto visible = j <= i;
  if (window > 0) visible = visible & (j > i - window);
  return visible;
}

torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& visible) {
  return torch::softmax(scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity()),
                        -1);
}

}  // namespace

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

torch::Tensor lssar_reweight(const torch::Tensor& lssa_weights, double p, int offset_rows,
                             std::int64_t row_offset) {
  const auto t_q = lssa_weights.size(-2);
  auto opts = lssa_weights.options();
  auto rows = query_rows(t_q, row_offset, opts);
  auto n = rows + 1;                                     // n_i: keys visible from the row
  auto offset = (rows >= offset_rows).to(opts.dtype());  // O_i: 0 on the first offset_rows rows, else 1
  // u_ij = ReLU(n_i A_ij - O_i). Divide by the row maximum before the power: (n A - 1)^15 overflows fp32 at
  // long lengths, and the renormalisation below makes the division exact in value. The maximum is a constant
  // of the row, so it is detached (its gradient would cancel in the renormalisation anyway).
  auto excess = torch::relu(n * lssa_weights - offset);
  auto row_max = std::get<0>(excess.max(-1, true)).detach();
  // The near-uniform cut-off, shared with the fused kernels: a row whose largest excess is at most
  // kLssarUniformTolerance is all at or below uniform (rounding noise of a uniform row is not signal).
  auto kept = row_max > kLssarUniformTolerance;
  auto scaled = excess / torch::where(kept, row_max, torch::ones_like(row_max));
  // Dropped rows are multiplied by 0 (zero weights and zero gradients); their sum is 0, so they are divided
  // by 1 instead. (torch::where, not clamp_min: a row with a single weight above uniform sums to exactly 1,
  // where clamp_min's gradient would be cut.)
  auto w = scaled.pow(p) * kept.to(scaled.scalar_type());
  auto total = w.sum(-1, true);
  return w / torch::where(kept, total, torch::ones_like(total));
}

torch::Tensor attention_weights(const torch::Tensor& q, const torch::Tensor& k, const AttentionSpec& spec,
                                const torch::Tensor& ssmax_scale, std::int64_t row_offset) {
  const auto t_q = q.size(-2);
  const auto t_k = k.size(-2);
  const double d = static_cast<double>(q.size(-1));
  TORCH_CHECK(t_k >= row_offset + t_q, "attention: keys must cover every query row");
  const auto window = spec.kind == AttentionKind::kWindow ? spec.window : 0;
  auto visible = visible_keys(t_q, t_k, row_offset, window, q.device());
  auto n = query_rows(t_q, row_offset, q.options()) + 1;  // [T_q, 1]

  switch (spec.kind) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kWindow:
      // A = softmax(Q K^T / sqrt(d) + causal (and window) -inf mask)
      return masked_softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(d), visible);
    case AttentionKind::kSsmax: {
      // A = softmax(s_h ln(n_i) q.k / sqrt(d))
      TORCH_CHECK(ssmax_scale.defined(), "ssmax attention needs its per-head scale");
      auto s = ssmax_scale.view({1, -1, 1, 1});
      return masked_softmax(s * torch::log(n) * torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(d),
                            visible);
    }
    case AttentionKind::kLssa:
    case AttentionKind::kLssar: {
      // L2-normalised rows, s_ij = ln(d) ln(n_i) q_i.k_j, A_ij = softplus(s_ij) for j <= i, 0 above
      // (multiplicative mask), then each row divided by its sum. No 1/sqrt(d).
      auto qn = F::normalize(q, F::NormalizeFuncOptions().p(2).dim(-1));
      auto kn = F::normalize(k, F::NormalizeFuncOptions().p(2).dim(-1));
      auto s = std::log(d) * torch::log(n) * torch::matmul(qn, kn.transpose(-2, -1));
      auto a = torch::softplus(s) * visible.to(s.scalar_type());
      a = a / a.sum(-1, true);
      if (spec.kind == AttentionKind::kLssa) return a;
      return lssar_reweight(a, spec.p, spec.offset_rows, row_offset);
    }
  }
  throw Error("attention: unknown kind");
}

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const AttentionSpec& spec, const torch::Tensor& ssmax_scale,
                        std::int64_t query_chunk) {
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
  const bool softplus_kind = spec.kind == AttentionKind::kLssa || spec.kind == AttentionKind::kLssar;
  if (q.is_cuda() && softplus_kind && spec.allow_fused && spec.offset_rows == 3) {
    return cuda::fused_lssa_attention(q, k, v, spec.kind == AttentionKind::kLssar, spec.p);
  }
#endif
  const auto t = q.size(-2);
  if (query_chunk <= 0 || query_chunk >= t)
    return torch::matmul(attention_weights(q, k, spec, ssmax_scale), v);
  // Row i only sees keys 0..i, so a chunk of rows needs only the keys up to its last row.
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < t; start += query_chunk) {
    const auto rows = std::min(query_chunk, t - start);
    const auto keys = start + rows;
    auto w = attention_weights(q.narrow(-2, start, rows), k.narrow(-2, 0, keys), spec, ssmax_scale, start);
    parts.push_back(torch::matmul(w, v.narrow(-2, 0, keys)));
  }
  return torch::cat(parts, -2);
}

}  // namespace orbitlaw::model
