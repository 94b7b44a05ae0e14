// The fused LSSA/LSSAR algorithm on CPU tensors, i.e. the CPU emulation of the CUDA kernels (same tile
// drivers, same tile loops), against the unfused float64 reference and hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "attention_test_support.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::model::cuda {
namespace {

using namespace testing;  // the shared checks of attention_test_support.hpp

// Lengths around the tile sizes (64 keys for d <= 64, 32 for d = 128) and the first rows (O_i = 0 up to row
// 3). One test per dtype looping over the cases: each CTest process pays LibTorch's start-up once.
const std::vector<Case> kCases = {{false, 1, 1, 16},   {true, 15, 1, 16},   {true, 15, 4, 16},
                                  {false, 1, 5, 32},   {true, 15, 63, 64},  {true, 15, 64, 64},
                                  {true, 15, 65, 64},  {false, 1, 130, 64}, {true, 3, 130, 64},
                                  {true, 15, 200, 16}, {true, 15, 33, 128}, {false, 1, 70, 128}};

// float32 arithmetic in the tiles against float64 formulas: forward and all three gradients.
TEST(EmulationVsFloat64, Float32MatchesReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    expect_all_below(fused_vs_float64(c, torch::kFloat32, torch::kCPU, 2, 2, 1000 + c.length, "float32"),
                     1e-4);
  }
}

// bfloat16 inputs and outputs (float32 inside): the reference sees the same bf16-rounded inputs.
TEST(EmulationVsFloat64, BFloat16MatchesReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(fused_vs_float64(c, torch::kBFloat16, torch::kCPU, 1, 2, 2000 + c.length, "bfloat16").worst(),
              1e-2);
  }
}

// Row 1 has scale ln(1) = 0 and one key: it returns its own value exactly (up to rounding), for LSSA and
// LSSAR.
TEST(FusedAttentionEmulation, FirstRowAttendsOnlyToItself) {
  const auto in = random_inputs(1, 3, 9, 32, 7);
  for (bool reweight : {false, true}) {
    const auto out = fused_lssa_attention(in.q.to(torch::kFloat32), in.k.to(torch::kFloat32),
                                          in.v.to(torch::kFloat32), reweight, 15);
    EXPECT_TRUE(torch::allclose(out.select(2, 0).to(torch::kFloat64), in.v.select(2, 0), 1e-6, 1e-6));
  }
}

// All keys identical: every LSSA row is exactly uniform. LSSAR rows 1..3 (O_i = 0) keep the uniform weights,
// so row i outputs the mean of v_1..v_i; rows 4.. are all at the uniform level and give zeros. Gradients by
// hand: dL/dv_j = sum over rows i <= 3 with i >= j of g_i / i; q does not matter (all scores move together),
// so dq = 0.
TEST(FusedAttentionEmulation, AllUniformRowsGiveZerosAndHandComputedGradients) {
  const int64_t length = 70;  // crosses a 64-key tile
  torch::manual_seed(3);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor q = torch::randn({1, 1, length, 16}, f32).requires_grad_(true);
  torch::Tensor k =
      torch::randn({1, 1, 1, 16}, f32).expand({1, 1, length, 16}).contiguous().requires_grad_(true);
  torch::Tensor v = torch::randn({1, 1, length, 16}, f32).requires_grad_(true);
  const torch::Tensor g = torch::randn({1, 1, length, 16}, f32);
  const torch::Tensor out = fused_lssa_attention(q, k, v, true, 15);
  out.backward(g);

  const torch::Tensor vv = v.detach()[0][0], gg = g[0][0], o = out.detach()[0][0];
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(torch::allclose(o[i], vv.slice(0, 0, i + 1).mean(0), 1e-5, 1e-5)) << "row " << i + 1;
  }
  EXPECT_EQ(o.slice(0, 3).abs().max().item<float>(), 0.0f);

  torch::Tensor expected_dv = torch::zeros_like(vv);
  for (int64_t i = 0; i < 3; ++i) expected_dv.slice(0, 0, i + 1) += gg[i] / static_cast<float>(i + 1);
  EXPECT_TRUE(torch::allclose(v.grad()[0][0], expected_dv, 1e-5, 1e-6));
  EXPECT_LT(q.grad().abs().max().item<float>(), 1e-5f);
  EXPECT_EQ(k.grad()[0][0].slice(0, 3).abs().max().item<float>(), 0.0f);  // keys 4.. only feed zero rows
}

// p = 15 at length 2048: (n A - 1)^15 would overflow float32 (n = 2048: up to ~1e49) without the row-maximum
// scaling. Peaked rows: every query equals one earlier key.
TEST(FusedAttentionEmulation, LongRowsWithPowerFifteenStayFiniteAndAccurate) {
  auto in = random_inputs(1, 1, 2048, 16, 11);
  in.q = in.k.roll(3, 2);
  const auto ref = reference(in, true, 15);
  const auto got = run_with_grads(fused(true, 15), in, torch::kFloat32, torch::kCPU);
  EXPECT_TRUE(torch::isfinite(got.out).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(got.dq).all().item<bool>());
  const Errors err = compare(got, ref);
  std::cout << "  L=2048 LSSAR p=15 peaked: worst rel err " << err.worst() << "\n";
  EXPECT_LT(err.worst(), 1e-3);
}

// Layouts: a [B, L, H, d] tensor viewed as [B, H, L, d] (non-contiguous) gives the same result.
TEST(FusedAttentionEmulation, NonContiguousInputsGiveTheSameResult) {
  torch::manual_seed(5);
  const torch::Tensor blhd = torch::randn({2, 40, 3, 32});
  const torch::Tensor view = blhd.transpose(1, 2);
  ASSERT_FALSE(view.is_contiguous());
  const auto a = fused_lssa_attention(view, view * 0.5, view + 1, true, 15);
  const torch::Tensor c = view.contiguous();
  const auto b = fused_lssa_attention(c, c * 0.5, c + 1, true, 15);
  EXPECT_TRUE(torch::equal(a, b));
}

TEST(FusedAttentionEmulation, BadInputsAreClearErrors) {
  const torch::Tensor x = torch::randn({1, 2, 8, 32});
  EXPECT_THROW(fused_lssa_attention(x[0], x[0], x[0], true, 15), Error);        // 3-D
  EXPECT_THROW(fused_lssa_attention(x, x, x.slice(2, 0, 4), true, 15), Error);  // shapes
  EXPECT_THROW(
      fused_lssa_attention(x.to(torch::kFloat64), x.to(torch::kFloat64), x.to(torch::kFloat64), true, 15),
      Error);                                                                         // dtype
  EXPECT_THROW(fused_lssa_attention(x, x.to(torch::kBFloat16), x, true, 15), Error);  // mixed dtypes
  const torch::Tensor d48 = torch::randn({1, 1, 8, 48});
  EXPECT_THROW(fused_lssa_attention(d48, d48, d48, false, 1), Error);  // head dim
  EXPECT_THROW(fused_lssa_attention(x, x, x, true, 0.5), Error);       // p < 1
  try {
    fused_lssa_attention(d48, d48, d48, false, 1);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("head dimension"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orbitlaw::model::cuda
