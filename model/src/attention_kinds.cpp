// The attention kinds, one registry entry each: its formula (docs/design.md section 5) as the unfused
// reference path, readable line by line against the paper, and its fused kernel where one exists. Rows are
// 0-based here, so the paper's row i (1-based) with n_i = i keys is row i - 1 with n = i.
#include "orbitlaw/model/attention_kinds.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/model/lssa_cpu_kernel.hpp"
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
#include "orbitlaw/model/fused_attention.hpp"
#endif

namespace orbitlaw::model {

torch::Tensor keys_seen(std::int64_t t_q, std::int64_t row_offset, const torch::TensorOptions& options) {
  return torch::arange(row_offset + 1, row_offset + t_q + 1, options).unsqueeze(1);
}

torch::Tensor visible_keys(std::int64_t t_q, std::int64_t t_k, std::int64_t row_offset, std::int64_t window,
                           torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
  auto i = keys_seen(t_q, row_offset, opts) - 1;  // the absolute row index
  auto j = torch::arange(t_k, opts).unsqueeze(0);
  auto visible = j <= i;
  if (window > 0) visible = visible & (j > i - window);
  return visible;
}

torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& visible) {
  return torch::softmax(scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity()),
                        -1);
}

torch::Tensor lssar_reweight(const torch::Tensor& lssa_weights, double p, int offset_rows,
                             std::int64_t row_offset) {
  const auto t_q = lssa_weights.size(-2);
  auto opts = lssa_weights.options();
  auto n = keys_seen(t_q, row_offset, opts);  // n_i: keys visible from the row
  auto rows = n - 1;
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

namespace {

namespace F = torch::nn::functional;

torch::Tensor scaled_dot_products(const AttentionScores& in) {
  return torch::matmul(in.q, in.k.transpose(-2, -1)) / std::sqrt(static_cast<double>(in.q.size(-1)));
}

torch::Tensor visible(const AttentionScores& in, std::int64_t window) {
  return visible_keys(in.q.size(-2), in.k.size(-2), in.row_offset, window, in.q.device());
}

// A = softmax(Q K^T / sqrt(d) + causal -inf mask)
torch::Tensor softmax_weights(const AttentionScores& in) {
  return masked_softmax(scaled_dot_products(in), visible(in, 0));
}

// The same, each row seeing only its last `window` keys (itself included).
torch::Tensor window_weights(const AttentionScores& in) {
  return masked_softmax(scaled_dot_products(in), visible(in, in.spec.window));
}

// softmax and window as one call of scaled_dot_product_attention: its default scale is 1/sqrt(d), and a
// boolean mask (true: visible) gives the window. Causal softmax needs no mask tensor at all.
torch::Tensor softmax_sdpa(const AttentionScores& in, const torch::Tensor& v) {
  return at::scaled_dot_product_attention(in.q, in.k, v, {}, 0.0, /*is_causal=*/true);
}

torch::Tensor window_sdpa(const AttentionScores& in, const torch::Tensor& v) {
  return at::scaled_dot_product_attention(in.q, in.k, v, visible(in, in.spec.window));
}

// The row factor s_h ln(n_i) of SSMax, [1, H, T_q, 1].
torch::Tensor ssmax_row_factor(const AttentionScores& in) {
  TORCH_CHECK(in.learned_scale.defined(), "ssmax attention needs its per-head scale");
  return in.learned_scale.view({1, -1, 1, 1}) *
         torch::log(keys_seen(in.q.size(-2), in.row_offset, in.q.options()));
}

// A = softmax(s_h ln(n_i) q.k / sqrt(d)), s_h learnable per head.
torch::Tensor ssmax_weights(const AttentionScores& in) {
  TORCH_CHECK(in.learned_scale.defined(), "ssmax attention needs its per-head scale");
  auto s = in.learned_scale.view({1, -1, 1, 1});
  auto n = keys_seen(in.q.size(-2), in.row_offset, in.q.options());
  const double d = static_cast<double>(in.q.size(-1));
  return masked_softmax(s * torch::log(n) * torch::matmul(in.q, in.k.transpose(-2, -1)) / std::sqrt(d),
                        visible(in, 0));
}

// The row factor multiplies q_i, so that the scores are those of causal softmax attention.
torch::Tensor ssmax_sdpa(const AttentionScores& in, const torch::Tensor& v) {
  return at::scaled_dot_product_attention(in.q * ssmax_row_factor(in), in.k, v, {}, 0.0, /*is_causal=*/true);
}

// L2-normalised rows, s_ij = ln(d) ln(n_i) q_i.k_j, A_ij = softplus(s_ij) for j <= i, 0 above (a
// multiplicative mask), then each row divided by its sum. No 1/sqrt(d).
torch::Tensor lssa_weights(const AttentionScores& in) {
  const double d = static_cast<double>(in.q.size(-1));
  auto n = keys_seen(in.q.size(-2), in.row_offset, in.q.options());
  auto qn = F::normalize(in.q, F::NormalizeFuncOptions().p(2).dim(-1));
  auto kn = F::normalize(in.k, F::NormalizeFuncOptions().p(2).dim(-1));
  auto s = std::log(d) * torch::log(n) * torch::matmul(qn, kn.transpose(-2, -1));
  auto a = torch::softplus(s) * visible(in, 0).to(s.scalar_type());
  return a / a.sum(-1, true);
}

// LSSA's weights re-weighted: W_ij = ReLU(n_i A_ij - O_i)^p, renormalised (lssar_reweight).
torch::Tensor lssar_weights(const AttentionScores& in) {
  return lssar_reweight(lssa_weights(in), in.spec.p, in.spec.offset_rows, in.row_offset);
}

// LSSA and LSSAR through the CPU kernel: the same normalised dot products, then one pass per row.
torch::Tensor softplus_cpu_weights(const AttentionScores& in, bool reweight) {
  auto qn = F::normalize(in.q, F::NormalizeFuncOptions().p(2).dim(-1));
  auto kn = F::normalize(in.k, F::NormalizeFuncOptions().p(2).dim(-1));
  return lssa_cpu_weights(torch::matmul(qn, kn.transpose(-2, -1)), {.head_dim = in.q.size(-1),
                                                                    .row_offset = in.row_offset,
                                                                    .reweight = reweight,
                                                                    .p = in.spec.p,
                                                                    .offset_rows = in.spec.offset_rows});
}

torch::Tensor lssa_cpu(const AttentionScores& in) { return softplus_cpu_weights(in, false); }
torch::Tensor lssar_cpu(const AttentionScores& in) { return softplus_cpu_weights(in, true); }

// Sigmoid attention (Ramapuram et al., ICLR 2025): A_ij = sigmoid(q.k / sqrt(d) - ln n_i) for j <= i, 0
// above. Rows are not normalised; the bias -ln n_i keeps a row's total weight of order 1 at any length.
torch::Tensor sigmoid_weights(const AttentionScores& in) {
  auto n = keys_seen(in.q.size(-2), in.row_offset, in.q.options());
  auto a = torch::sigmoid(scaled_dot_products(in) - torch::log(n));
  return a * visible(in, 0).to(a.scalar_type());
}

// The fused LSSA/LSSAR kernel (model/cuda) computes O_i with offset_rows = 3 only.
std::string lssa_fused_refuses(const AttentionSpec& spec) {
  return spec.offset_rows == 3 ? "" : "the fused kernel needs offset_rows = 3";
}

torch::Tensor fused_softplus_kind(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  const AttentionSpec& spec) {
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
  return cuda::fused_lssa_attention(q, k, v, spec.kind == AttentionKind::kLssar, spec.p);
#else
  (void)q, (void)k, (void)v, (void)spec;
  throw Error("attention: this build has no fused kernels");
#endif
}

std::string p_label(const AttentionSpec& spec) {
  char text[32];
  std::snprintf(text, sizeof text, "p = %g", spec.p);
  return text;
}

std::vector<AttentionKindInfo> make_registry() {
  std::vector<AttentionKindInfo> kinds;
  kinds.push_back({.name = "softmax",
                   .description = "causal softmax attention, softmax(q.k / sqrt(d))",
                   .keys = {"allow_fused"},
                   .weights = softmax_weights,
                   .sdpa = softmax_sdpa});
  kinds.push_back(
      {.name = "lssa",
       .description =
           "length-scaled softplus attention: softplus(ln(d) ln(n_i) q.k) of unit rows q, k; rows normalised",
       .keys = {"allow_fused"},
       .weights = lssa_weights,
       .cpu_weights = lssa_cpu,
       .fused = fused_softplus_kind,
       .fused_refuses = lssa_fused_refuses});
  kinds.push_back({.name = "lssar",
                   .description =
                       "LSSA re-weighted: ReLU(n_i A_ij - O_i)^p, rows normalised (O_i = 0 on the first "
                       "offset_rows rows)",
                   .keys = {"p", "offset_rows", "allow_fused"},
                   .weights = lssar_weights,
                   .cpu_weights = lssar_cpu,
                   .fused = fused_softplus_kind,
                   .fused_refuses = lssa_fused_refuses,
                   .label_detail = p_label});
  kinds.push_back(
      {.name = "ssmax",
       .description = "scalable softmax: softmax(s_h ln(n_i) q.k / sqrt(d)), s_h learned per head",
       .keys = {"ssmax_init", "allow_fused"},
       .weights = ssmax_weights,
       .sdpa = ssmax_sdpa,
       .learned_scale = true});
  kinds.push_back({.name = "window",
                   .description = "softmax over each row's last `window` keys (itself included)",
                   .keys = {"window", "allow_fused"},
                   .weights = window_weights,
                   .sdpa = window_sdpa});
  kinds.push_back({.name = "sigmoid",
                   .description = "sigmoid attention: sigmoid(q.k / sqrt(d) - ln n_i), rows not normalised",
                   .keys = {},
                   .weights = sigmoid_weights,
                   .rows_sum_to_one = false});
  return kinds;
}

}  // namespace

const std::vector<AttentionKindInfo>& attention_kinds() {
  static const std::vector<AttentionKindInfo> kinds = make_registry();
  return kinds;
}

const AttentionKindInfo& attention_kind_info(AttentionKind kind) {
  for (const auto& info : attention_kinds())
    if (info.name == kind.name()) return info;
  throw Error("attention: unknown kind '" + std::string(kind.name()) + "'");
}

AttentionKind AttentionKind::parse(std::string_view name) {
  std::string known;
  for (const auto& info : attention_kinds()) {
    if (info.name == name) return AttentionKind(info.name);
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error("unknown attention kind '" + std::string(name) + "' (known: " + known + ")");
}

std::string attention_label(const AttentionSpec& spec) {
  const auto& info = attention_kind_info(spec.kind);
  std::string label(info.name);
  if (info.label_detail) label += " (" + info.label_detail(spec) + ")";
  return label;
}

}  // namespace orbitlaw::model
