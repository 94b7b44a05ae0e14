#pragma once
// Shared by the fused-attention tests: random inputs, one forward+backward, relative errors.
#include <torch/torch.h>

#include <functional>

#include "orbitlaw/unfused_attention_reference.hpp"

namespace orbitlaw::model::cuda::testing {

using AttentionFn =
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>;

struct Inputs {
  torch::Tensor q, k, v, grad_out;
};

// Unnormalised random q, k (the function normalises), v and dL/dout, in float64 on the CPU.
inline Inputs random_inputs(int64_t batch, int64_t heads, int64_t length, int64_t head_dim, uint64_t seed) {
  torch::manual_seed(seed);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  return {torch::randn({batch, heads, length, head_dim}, options),
          torch::randn({batch, heads, length, head_dim}, options),
          torch::randn({batch, heads, length, head_dim}, options),
          torch::randn({batch, heads, length, head_dim}, options)};
}

struct Result {
  torch::Tensor out, dq, dk, dv;  // float64, CPU
};

// Runs fn on the inputs converted to dtype/device, backpropagates grad_out; results back in float64 on the
// CPU.
inline Result run_with_grads(const AttentionFn& fn, const Inputs& in, torch::Dtype dtype,
                             torch::Device device) {
  auto prepare = [&](const torch::Tensor& t) { return t.to(device, dtype).detach().requires_grad_(true); };
  torch::Tensor q = prepare(in.q), k = prepare(in.k), v = prepare(in.v);
  torch::Tensor out = fn(q, k, v);
  out.backward(in.grad_out.to(device, dtype));
  auto back = [](const torch::Tensor& t) { return t.detach().to(torch::kCPU, torch::kFloat64); };
  return {back(out), back(q.grad()), back(k.grad()), back(v.grad())};
}

// The independent reference: unfused formulas in float64 on normalised rows, gradients by LibTorch autograd.
inline Result reference(const Inputs& in, bool reweight, double p) {
  namespace F = torch::nn::functional;
  const auto unit_rows = F::NormalizeFuncOptions().p(2).dim(-1);
  return run_with_grads(
      [&](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
        return unfused_lssa_attention(F::normalize(q, unit_rows), F::normalize(k, unit_rows), v, reweight, p);
      },
      in, torch::kFloat64, torch::kCPU);
}

// ||x - ref|| / ||ref|| (Frobenius); absolute when the reference is zero.
inline double relative_error(const torch::Tensor& x, const torch::Tensor& ref) {
  const double diff = (x - ref).norm().item<double>();
  const double scale = ref.norm().item<double>();
  return scale > 0 ? diff / scale : diff;
}

struct Errors {
  double out, dq, dk, dv;
  double worst() const { return std::max(std::max(out, dq), std::max(dk, dv)); }
};

inline Errors compare(const Result& x, const Result& ref) {
  return {relative_error(x.out, ref.out), relative_error(x.dq, ref.dq), relative_error(x.dk, ref.dk),
          relative_error(x.dv, ref.dv)};
}

}  // namespace orbitlaw::model::cuda::testing
