// Unfused LSSA / LSSAR, formula by formula from docs/design.md section 5 (no tiling, no shared code with
// the fused kernels, so that it can serve as their reference).
#include "orbitlaw/model/unfused_attention_reference.hpp"

#include <cmath>

#include "orbitlaw/model/fused_attention.hpp"
#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model::cuda {

torch::Tensor unfused_lssa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     bool reweight, double p) {
  const int64_t length = q.size(-2);
  const double head_dim = static_cast<double>(q.size(-1));
  const auto options = q.options();
  // n_i = i keys for 1-based row i, as a column [L, 1].
  const torch::Tensor n = torch::arange(1, length + 1, options).unsqueeze(1);
  const torch::Tensor causal = torch::ones({length, length}, options).tril();
  const torch::Tensor s = std::log(head_dim) * torch::log(n) * torch::matmul(q, k.transpose(-2, -1));
  // softplus without LibTorch's linear cut-off at 20, which |s| can exceed.
  const torch::Tensor a = torch::softplus(s, 1.0, 1.0e4) * causal;
  const torch::Tensor weights = a / a.sum(-1, true);
  if (!reweight) return torch::matmul(weights, v);
  const torch::Tensor offset = (n > 3).to(options.dtype());
  const torch::Tensor u = torch::relu(n * weights - offset) * causal;
  const torch::Tensor u_max = std::get<0>(u.max(-1, true));
  const torch::Tensor kept = u_max > kLssarUniformTolerance;  // orbitlaw/model/lssar_cutoff.hpp
  // Divide by the row maximum before the power: (n A - 1)^15 overflows float32 at long lengths.
  const torch::Tensor w = torch::pow(u / torch::where(kept, u_max, torch::ones_like(u_max)), p);
  const torch::Tensor w_sum = w.sum(-1, true);
  const torch::Tensor reweighted =
      torch::where(kept, w / torch::where(kept, w_sum, torch::ones_like(w_sum)), torch::zeros_like(w));
  return torch::matmul(reweighted, v);
}

}  // namespace orbitlaw::model::cuda
