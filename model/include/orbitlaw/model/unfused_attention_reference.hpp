#pragma once
// The unfused LSSA / LSSAR attention: plain LibTorch operations that materialise the L x L weights. The
// independent reference the fused kernels are tested against (run it in float64), and the "unfused path" of
// the attention benchmark. Same contract as fused_lssa_attention (q, k already L2-normalised; same
// uniform-row rule), any dtype and device, differentiable through LibTorch's autograd.
#include <torch/torch.h>

namespace orbitlaw::model::cuda {

torch::Tensor unfused_lssa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     bool reweight, double p);

}  // namespace orbitlaw::model::cuda
