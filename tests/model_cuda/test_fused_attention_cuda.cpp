// The CUDA kernels against the unfused float64 reference: fp32 relative error < 1e-3, bf16 < 1e-2, forward
// and gradients, lengths around the tile sizes. Skipped where no GPU (or no CUDA build) is present.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "attention_test_support.hpp"
#include "orbitlaw/fused_attention.hpp"

namespace orbitlaw::model::cuda {
namespace {

using testing::AttentionFn;
using testing::compare;
using testing::Errors;
using testing::random_inputs;
using testing::reference;
using testing::run_with_grads;

bool cuda_ready() { return fused_attention_has_cuda_kernels() && torch::cuda::is_available(); }

AttentionFn fused(bool reweight, double p) {
  return [=](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    return fused_lssa_attention(q, k, v, reweight, p);
  };
}

struct Case {
  bool reweight;
  int64_t length;
  int64_t head_dim;
};

const std::vector<Case> kCases = {{true, 1, 64},    {true, 5, 64},     {false, 63, 64}, {true, 64, 64},
                                  {true, 65, 64},   {false, 257, 32},  {true, 257, 32}, {true, 1000, 64},
                                  {true, 100, 128}, {false, 100, 128}, {true, 130, 16}};

std::string describe(const Case& c) {
  return "L=" + std::to_string(c.length) + " d=" + std::to_string(c.head_dim) +
         (c.reweight ? " LSSAR" : " LSSA");
}

TEST(CudaVsFloat64, Float32) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    const auto in = random_inputs(2, 3, c.length, c.head_dim, 100 + static_cast<uint64_t>(c.length));
    const auto ref = reference(in, c.reweight, 15);
    const Errors err = compare(run_with_grads(fused(c.reweight, 15), in, torch::kFloat32, torch::kCUDA), ref);
    std::cout << "  cuda float32 " << describe(c) << ": rel err out " << err.out << " dq " << err.dq << " dk "
              << err.dk << " dv " << err.dv << "\n";
    EXPECT_LT(err.out, 1e-3);
    EXPECT_LT(err.dq, 1e-3);
    EXPECT_LT(err.dk, 1e-3);
    EXPECT_LT(err.dv, 1e-3);
  }
}

TEST(CudaVsFloat64, BFloat16) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    auto in = random_inputs(2, 3, c.length, c.head_dim, 200 + static_cast<uint64_t>(c.length));
    for (torch::Tensor* t : {&in.q, &in.k, &in.v, &in.grad_out})
      *t = t->to(torch::kBFloat16).to(torch::kFloat64);
    const auto ref = reference(in, c.reweight, 15);
    const Errors err =
        compare(run_with_grads(fused(c.reweight, 15), in, torch::kBFloat16, torch::kCUDA), ref);
    std::cout << "  cuda bfloat16 " << describe(c) << ": rel err out " << err.out << " dq " << err.dq
              << " dk " << err.dk << " dv " << err.dv << "\n";
    EXPECT_LT(err.worst(), 1e-2);
  }
}

// The GPU runs the same tile drivers as the CPU emulation: both agree to float32 rounding.
TEST(CudaVsFloat64, AgreesWithCpuEmulation) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    const auto in = random_inputs(1, 2, c.length, c.head_dim, 300 + static_cast<uint64_t>(c.length));
    const auto cpu = run_with_grads(fused(c.reweight, 15), in, torch::kFloat32, torch::kCPU);
    const auto gpu = run_with_grads(fused(c.reweight, 15), in, torch::kFloat32, torch::kCUDA);
    EXPECT_LT(compare(gpu, cpu).worst(), 1e-4);
  }
}

// A long sequence at the model's head size: finite, and still within the fp32 bound of the reference.
TEST(FusedAttentionCuda, LongSequenceLssar) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  const auto in = random_inputs(1, 2, 4096, 64, 17);
  const auto ref = reference(in, true, 15);
  const auto got = run_with_grads(fused(true, 15), in, torch::kFloat32, torch::kCUDA);
  ASSERT_TRUE(torch::isfinite(got.out).all().item<bool>());
  const Errors err = compare(got, ref);
  std::cout << "  cuda float32 L=4096 d=64 LSSAR: worst rel err " << err.worst() << "\n";
  EXPECT_LT(err.worst(), 1e-3);
}

}  // namespace
}  // namespace orbitlaw::model::cuda
