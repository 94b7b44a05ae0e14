#pragma once
// Fused causal LSSA / LSSAR attention (docs/design.md section 5): tiled, never forming the L x L matrix;
// the backward pass recomputes the attention weights tile by tile, as FlashAttention does.
//
// Include only from translation units that may include LibTorch (so: no fmt or spdlog there).
#include <torch/torch.h>

#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model::cuda {

// Causal length-scaled softplus attention of q, k, v, each [B, H, L, d] with the same dtype and device.
//
// q and k need NOT be L2-normalised: the function normalises every query and key row along d itself
// (LibTorch's F::normalize, eps 1e-12, inside the autograd graph), then computes s_ij = ln(d) ln(i) q_i.k_j.
// Rows that are already normalised (e.g. after RoPE) are fine: normalising twice changes them only by
// rounding. Row i (1-based) sees keys 1..i.
//   reweight == false: LSSA, out_i = sum_j A_ij v_j, A_ij = softplus(s_ij) / sum_j' softplus(s_ij').
//   reweight == true : LSSAR, W_ij proportional to ReLU(i A_ij - O_i)^p (O_i = 0 for i <= 3, else 1), each
//                      row renormalised; the p-th power is taken after dividing by the row maximum, so p = 15
//                      cannot overflow. A row whose largest weight exceeds the uniform level 1/i by no more
//                      than kLssarUniformTolerance (orbitlaw/model/lssar_cutoff.hpp, relative, i.e.
//                      i A_max - 1 <= tolerance; the same cut-off as the unfused orbitlaw::model::attention)
//                      is "all at or below uniform" and its output and gradients are zero.
// p must be >= 1 (p = 15 is the paper's default); it is ignored for LSSA.
//
// Devices and dtypes: CUDA tensors (float32 or bfloat16) run the CUDA kernels when this library was built
// with CUDA; CPU tensors (float32 or bfloat16) run a CPU emulation of the very same tiled algorithm (slow;
// meant for tests and small runs). All arithmetic is float32 (q and k are normalised in float32 even for
// bfloat16 inputs); outputs and gradients have the inputs' dtype. Supported head dimensions d: 16, 32, 64,
// 128. Differentiable in q, k and v (once; no double backward). Throws orbitlaw::Error naming the problem for
// bad shapes, dtypes, devices or p.
torch::Tensor fused_lssa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   bool reweight, double p);

// True when this build contains the CUDA kernels (else CUDA tensors are rejected with an orbitlaw::Error).
bool fused_attention_has_cuda_kernels();

}  // namespace orbitlaw::model::cuda
