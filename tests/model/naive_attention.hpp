#pragma once
// An independent, deliberately naive float64 version of docs/design.md section 5, one query row at a time
// over only its visible keys (no masks, no row-max scaling, no chunking), to check the library against.
// Built from differentiable torch ops so gradients can be compared too.
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "orbitlaw/model/attention_kinds.hpp"
#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model::testing {

// Every kind in the registry, so that a new kind is checked by every test that loops over kinds.
inline std::vector<AttentionKind> registered_attention_kinds() {
  std::vector<AttentionKind> kinds;
  for (const auto& info : attention_kinds()) kinds.push_back(AttentionKind::parse(info.name));
  return kinds;
}

// q, k, v: [T, d] float64 for one head; s: the SSMax scale of this head. Returns [T, d].
inline torch::Tensor naive_head_attention(const torch::Tensor& q, const torch::Tensor& k,
                                          const torch::Tensor& v, const AttentionSpec& spec,
                                          const torch::Tensor& s = {}) {
  const auto t = q.size(0);
  const double d = static_cast<double>(q.size(1));
  std::vector<torch::Tensor> rows;
  for (std::int64_t i = 0; i < t; ++i) {
    const double n = static_cast<double>(i + 1);  // the paper's n_i for 1-based row i + 1
    std::int64_t first = 0;
    if (spec.kind == AttentionKind::kWindow) first = std::max<std::int64_t>(0, i - spec.window + 1);
    auto keys = k.slice(0, first, i + 1);
    auto values = v.slice(0, first, i + 1);
    auto qi = q[i];
    const AttentionKind kind = spec.kind;
    torch::Tensor w;
    if (kind == AttentionKind::kSoftmax || kind == AttentionKind::kWindow) {
      auto logits = keys.mv(qi) / std::sqrt(d);
      auto e = torch::exp(logits - logits.max());
      w = e / e.sum();
    } else if (kind == AttentionKind::kSsmax) {
      auto logits = s * std::log(n) * keys.mv(qi) / std::sqrt(d);
      auto e = torch::exp(logits - logits.max());
      w = e / e.sum();
    } else if (kind == AttentionKind::kLssa || kind == AttentionKind::kLssar) {
      auto qn = qi / qi.norm().clamp_min(1e-12);
      auto kn = keys / keys.norm(2, {1}, true).clamp_min(1e-12);
      auto scores = std::log(d) * std::log(n) * kn.mv(qn);
      auto a = torch::log1p(torch::exp(scores));  // softplus
      a = a / a.sum();
      if (kind == AttentionKind::kLssa) {
        w = a;
      } else {
        const double offset = i < spec.offset_rows ? 0.0 : 1.0;
        auto u = torch::relu(n * a - offset);
        auto r = u.pow(spec.p);
        // Near-uniform rows (largest excess at most the cut-off of section 5) are all zeros.
        const bool kept = u.max().item<double>() > kLssarUniformTolerance;
        w = kept ? r / r.sum() : torch::zeros_like(r);
      }
    } else if (kind == AttentionKind::parse("sigmoid")) {
      // sigmoid(q.k / sqrt(d) - ln n), one key at a time: 1 / (1 + exp(-(x))).
      w = 1 / (1 + torch::exp(-(keys.mv(qi) / std::sqrt(d) - std::log(n))));
    } else {
      throw std::logic_error("naive_attention: no reference for attention kind '" + to_string(kind) +
                             "': add one here with the kind");
    }
    rows.push_back(w.unsqueeze(0).mm(values).squeeze(0));
  }
  return torch::stack(rows);
}

// [B, H, T, d] version; `scale` is the [H] SSMax scale (or undefined).
inline torch::Tensor naive_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const AttentionSpec& spec, const torch::Tensor& scale = {}) {
  std::vector<torch::Tensor> batch;
  for (std::int64_t b = 0; b < q.size(0); ++b) {
    std::vector<torch::Tensor> heads;
    for (std::int64_t h = 0; h < q.size(1); ++h) {
      heads.push_back(
          naive_head_attention(q[b][h], k[b][h], v[b][h], spec, scale.defined() ? scale[h] : scale));
    }
    batch.push_back(torch::stack(heads));
  }
  return torch::stack(batch);
}

}  // namespace orbitlaw::model::testing
