// The CUDA kernels against the unfused float64 reference: fp32 relative error < 1e-3, bf16 < 1e-2, forward
// and gradients, lengths around the tile sizes. Skipped where no GPU (or no CUDA build) is present.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "attention_test_support.hpp"
#include "orbitlaw/model/attention_path.hpp"

namespace orbitlaw::model::cuda {
namespace {

using namespace testing;  // the shared checks of attention_test_support.hpp

bool cuda_ready() { return fused_attention_has_cuda_kernels() && torch::cuda::is_available(); }

// Lengths around the tile sizes, including non-multiples; p = 15 for LSSAR.
const std::vector<Case> kCudaCases = {{true, 15, 1, 64},     {true, 15, 5, 64},    {false, 15, 63, 64},
                                      {true, 15, 64, 64},    {true, 15, 65, 64},   {false, 15, 257, 32},
                                      {true, 15, 257, 32},   {true, 15, 1000, 64}, {true, 15, 100, 128},
                                      {false, 15, 100, 128}, {true, 15, 130, 16}};

TEST(CudaVsFloat64, Float32) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCudaCases) {
    SCOPED_TRACE(describe(c));
    expect_all_below(fused_vs_float64(c, torch::kFloat32, torch::kCUDA, 2, 3, 100 + c.length, "cuda float32"),
                     1e-3);
  }
}

TEST(CudaVsFloat64, BFloat16) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCudaCases) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(
        fused_vs_float64(c, torch::kBFloat16, torch::kCUDA, 2, 3, 200 + c.length, "cuda bfloat16").worst(),
        1e-2);
  }
}

// The GPU runs the same tile drivers as the CPU emulation: both agree to float32 rounding.
TEST(CudaVsFloat64, AgreesWithCpuEmulation) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  for (const Case& c : kCudaCases) {
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

// The parity check training runs before it uses the fused kernel (orbitlaw/model/attention_path.hpp) passes
// on this GPU for both kinds at the small models' head shape, and the path chosen is the fused one.
TEST(FusedAttentionCuda, TrainingParityCheckPassesAndChoosesTheFusedPath) {
  if (!cuda_ready()) GTEST_SKIP() << "no CUDA device or no CUDA kernels in this build";
  const torch::Device gpu(torch::kCUDA);
  for (const AttentionKind kind : {AttentionKind::kLssa, AttentionKind::kLssar}) {
    ModelConfig model;
    model.n_head = 4;
    model.n_embd = 128;
    model.block_size = 256;
    model.attention.kind = kind;
    const AttentionPath path = choose_attention_path(model, gpu, fused_kernel_available(gpu));
    std::cout << "  " << path.reason << "\n";
    EXPECT_TRUE(path.fused) << path.reason;
    EXPECT_LE(path.difference, kFusedParityTolerance);
  }
}

}  // namespace
}  // namespace orbitlaw::model::cuda
