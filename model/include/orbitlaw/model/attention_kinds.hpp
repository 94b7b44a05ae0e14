#pragma once
// The registry of attention kinds (docs/design.md section 5). One entry per kind holds its name, a one-line
// description, the model-config keys it reads, its reference formula and its fused kernel, if any. Everything
// that depends on the kind reads the entry: the model's parameters (gpt.cpp), the unfused and fused paths
// (attention.cpp, attention_path.cpp), labels, the CLI's list of kinds and the generated key reference.
// Adding a kind adds one entry to model/src/attention_kinds.cpp (and its tests).
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model {

// What a kind's reference formula receives: query rows q [B, H, T_q, d] whose absolute (0-based) row indices
// start at row_offset, keys k [B, H, T_k, d] holding keys 0..T_k-1, the spec, and the per-head learned scale
// [H] of kinds that have one (undefined otherwise).
struct AttentionScores {
  const torch::Tensor& q;
  const torch::Tensor& k;
  const AttentionSpec& spec;
  const torch::Tensor& learned_scale;
  std::int64_t row_offset;
};

using AttentionWeightsFn = torch::Tensor (*)(const AttentionScores& in);
using FusedAttentionFn = torch::Tensor (*)(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const AttentionSpec& spec);
using FusedRefusalFn = std::string (*)(const AttentionSpec& spec);
using SdpaAttentionFn = torch::Tensor (*)(const AttentionScores& in, const torch::Tensor& v);
using LabelDetailFn = std::string (*)(const AttentionSpec& spec);

struct AttentionKindInfo {
  std::string_view name;
  std::string_view description;        // one line: what the kind computes
  std::vector<std::string_view> keys;  // the model-config keys besides "attention" that the kind reads
  // The unfused reference path: weights [B, H, T_q, T_k], zero for every key a row does not see.
  AttentionWeightsFn weights = nullptr;
  // The reference weights computed by a hand-written CPU kernel (forward and backward in one pass per row,
  // orbitlaw/model/lssa_cpu_kernel.hpp), or nullptr. Used for float32 CPU tensors when spec.allow_fused is
  // set.
  AttentionWeightsFn cpu_weights = nullptr;
  // The fused CUDA kernel's output [B, H, T, d], or nullptr for a kind without one. It is called on CUDA
  // tensors only, in builds with the kernels compiled in, when spec.allow_fused is set and
  // fused_refuses(spec) is empty; fused_refuses says why the kernel cannot compute this spec.
  FusedAttentionFn fused = nullptr;
  FusedRefusalFn fused_refuses = nullptr;
  // The kind written as PyTorch's scaled_dot_product_attention (its fused CPU and GPU kernels, which never
  // form the T x T weights in memory): the output [B, H, T, d] of whole sequences (row_offset 0), equal to
  // the reference weights times v in exact arithmetic; nullptr for a kind that is not a softmax over scores.
  // Used on any device when spec.allow_fused is set and the rows are not processed in query chunks.
  SdpaAttentionFn sdpa = nullptr;
  bool learned_scale = false;   // one learnable scale per head, initialised to ssmax_init
  bool rows_sum_to_one = true;  // each row's weights are a distribution over the keys it sees
  // What a model's label adds to the name ("p = 15" gives "lssar (p = 15)"); nullptr: the name alone.
  LabelDetailFn label_detail = nullptr;
};

// The LSSAR re-weighting of row-normalised LSSA weights A [..., T_q, T_k] (rows from `row_offset`):
// W_ij = ReLU(n_i A_ij - O_i)^p, W_i <- W_i / sum_j W_ij, computed as (u_ij / max_j u_ij)^p with
// u_ij = ReLU(n_i A_ij - O_i) so it stays finite at any length. A row with max_j u_ij <=
// kLssarUniformTolerance (orbitlaw/model/lssar_cutoff.hpp, the same cut-off as the fused kernels) is all at
// or below uniform and is all zeros: rounding noise of a uniform row must not be amplified into weights.
torch::Tensor lssar_reweight(const torch::Tensor& lssa_weights, double p, int offset_rows,
                             std::int64_t row_offset = 0);

// Building blocks of the kinds' formulas. n_i, the number of keys row i sees, as [T_q, 1] for the query rows
// from `row_offset`:
torch::Tensor keys_seen(std::int64_t t_q, std::int64_t row_offset, const torch::TensorOptions& options);
// [T_q, T_k] true where key j is visible from query row i: j <= i, and j > i - window when window > 0.
torch::Tensor visible_keys(std::int64_t t_q, std::int64_t t_k, std::int64_t row_offset, std::int64_t window,
                           torch::Device device);
// Softmax over the last dimension with invisible keys at -infinity.
torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& visible);

// Every registered kind, in the order the CLI and the docs list them.
const std::vector<AttentionKindInfo>& attention_kinds();
// The entry of `kind` (which AttentionKind::parse guarantees exists).
const AttentionKindInfo& attention_kind_info(AttentionKind kind);
// The kind's name and its label detail: "softmax", "lssar (p = 15)".
std::string attention_label(const AttentionSpec& spec);

}  // namespace orbitlaw::model
