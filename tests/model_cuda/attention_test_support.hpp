#pragma once
// Shared by the fused-attention tests (CPU emulation and CUDA): random inputs, one forward+backward, relative
// errors, and the check of the fused function against the float64 reference over a list of cases.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <iostream>
#include <string>

#include "orbitlaw/model/fused_attention.hpp"
#include "orbitlaw/model/unfused_attention_reference.hpp"

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

// The function under test: the fused autograd function with LSSAR (reweight) or LSSA.
inline AttentionFn fused(bool reweight, double p) {
  return [=](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    return fused_lssa_attention(q, k, v, reweight, p);
  };
}

struct Case {
  bool reweight;
  double p;  // LSSAR power
  int64_t length;
  int64_t head_dim;
};

inline std::string describe(const Case& c) {
  return "L=" + std::to_string(c.length) + " d=" + std::to_string(c.head_dim) +
         (c.reweight ? " LSSAR p=" + std::to_string(static_cast<int>(c.p)) : std::string(" LSSA"));
}

// The fused function in `dtype` on `device` against the float64 reference for one case, on random
// [batch, heads, L, d] inputs from `seed`, printed with `label`. For bfloat16 the reference sees the same
// bf16-rounded inputs, so the error measured is the kernel's, not the inputs' rounding.
inline Errors fused_vs_float64(const Case& c, torch::Dtype dtype, torch::Device device, int64_t batch,
                               int64_t heads, uint64_t seed, const std::string& label) {
  Inputs in = random_inputs(batch, heads, c.length, c.head_dim, seed);
  if (dtype == torch::kBFloat16) {
    for (torch::Tensor* t : {&in.q, &in.k, &in.v, &in.grad_out})
      *t = t->to(torch::kBFloat16).to(torch::kFloat64);
  }
  const Result ref = reference(in, c.reweight, c.p);
  const Errors err = compare(run_with_grads(fused(c.reweight, c.p), in, dtype, device), ref);
  std::cout << "  " << label << " " << describe(c) << ": rel err out " << err.out << " dq " << err.dq
            << " dk " << err.dk << " dv " << err.dv << "\n";
  return err;
}

// Forward and all three gradients below `bound`, each reported on its own.
inline void expect_all_below(const Errors& err, double bound) {
  EXPECT_LT(err.out, bound);
  EXPECT_LT(err.dq, bound);
  EXPECT_LT(err.dk, bound);
  EXPECT_LT(err.dv, bound);
}

}  // namespace orbitlaw::model::cuda::testing
