// The fused LSSA/LSSAR algorithm on CPU tensors, i.e. the CPU emulation of the CUDA kernels (same tile
// drivers, same tile loops), against the unfused float64 reference, hand-computed cases, and the model's own
// unfused attention (orbitlaw::model::attention), near-uniform LSSAR rows included.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "attention_test_support.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/lssar_cutoff.hpp"

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

// ------------------------------------------------------------------------------------------------------------
// The fused path (here its CPU emulation) against the model's unfused path, orbitlaw::model::attention: a
// model trained with the fused kernels on the GPU and evaluated on the CPU must compute one function, LSSAR's
// near-uniform cut-off (orbitlaw/model/lssar_cutoff.hpp) included. The fused function only takes float32 and
// bfloat16, so every input below holds float32 values: the float64 comparison runs model::attention in
// float64 on exactly the values the emulation sees (what remains is the emulation's float32 rounding), the
// float32 comparison runs model::attention in float32 (both sides' rounding).

// Heads of near_uniform_inputs: 0 random rows; 1 identical keys (every row exactly uniform, LSSAR rows 4..
// all at the uniform level); 2.. "graded": identical keys except key 0, turned towards the query (the same
// for every row) by a small angle, so key 0 is the only key above uniform and the excess x_i = n_i A_max - 1
// grows slowly with the row (as ln n_i): over the three heads it runs from about 0.2 to 4 cut-offs, densely
// enough (consecutive rows differ by < 1% near the cut-off) that moving the cut-off of either path by more
// than a few percent changes which rows are zero.
// Sine of the graded heads' angle at d = 16 (scaled by ln 16 / ln d, which keeps the excess the same).
constexpr double kGradedSinAngles[] = {1e-4, 2e-4, 4e-4};
constexpr int64_t kNearUniformHeads = 2 + static_cast<int64_t>(std::size(kGradedSinAngles));
// Rows whose excess is within 2% of the cut-off are left out of the comparison (their grad_out is zero):
// float32 rounding of x is ~1e-6 absolute here (0.1% of the cut-off), so only there may the paths disagree.
constexpr double kCutoffBand = 0.02;

Inputs near_uniform_inputs(int64_t length, int64_t head_dim, uint64_t seed) {
  Inputs in = random_inputs(1, kNearUniformHeads, length, head_dim, seed);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  // A random rotation, so that the special directions are not coordinate axes.
  const torch::Tensor rotation = std::get<0>(torch::linalg_qr(torch::randn({head_dim, head_dim}, f64)));
  const torch::Tensor e1 = rotation.select(1, 0), e2 = rotation.select(1, 1);
  in.k[0][1].copy_(in.k[0][1][0].clone().expand({length, head_dim}));
  for (int64_t g = 0; g < static_cast<int64_t>(std::size(kGradedSinAngles)); ++g) {
    const double sin_angle = kGradedSinAngles[g] * std::log(16.0) / std::log(static_cast<double>(head_dim));
    in.q[0][2 + g].copy_(e2.expand({length, head_dim}));
    in.k[0][2 + g].copy_(e1.expand({length, head_dim}));
    in.k[0][2 + g][0].copy_(std::sqrt(1 - sin_angle * sin_angle) * e1 + sin_angle * e2);
  }
  for (torch::Tensor* t : {&in.q, &in.k, &in.v, &in.grad_out})
    *t = t->to(torch::kFloat32).to(torch::kFloat64);
  return in;
}

// x_i = n_i max_j A_ij - O_i of every row ([B, H, L], float64), LSSA written out from design.md section 5.
torch::Tensor row_excess(const Inputs& in) {
  const int64_t length = in.q.size(2);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  const torch::Tensor qn = in.q / in.q.norm(2, {-1}, true), kn = in.k / in.k.norm(2, {-1}, true);
  const torch::Tensor n = torch::arange(1, length + 1, f64).unsqueeze(1);
  const torch::Tensor s =
      std::log(static_cast<double>(in.q.size(3))) * torch::log(n) * torch::matmul(qn, kn.transpose(-2, -1));
  const torch::Tensor a = torch::softplus(s, 1.0, 1.0e4) * torch::ones({length, length}, f64).tril();
  const torch::Tensor offset = (n > 3).to(torch::kFloat64).squeeze(1);
  return std::get<0>((n * a / a.sum(-1, true)).max(-1)) - offset;
}

AttentionFn model_attention(AttentionKind kind, double p) {
  AttentionSpec spec;
  spec.kind = kind;
  spec.p = p;
  spec.offset_rows = 3;
  return [=](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    return orbitlaw::model::attention(q, k, v, spec);
  };
}

// Largest |x| over the rows selected by `rows` ([B, H, L] bool) of x [B, H, L, d].
double max_abs_on_rows(const torch::Tensor& x, const torch::Tensor& rows) {
  return x.masked_select(rows.unsqueeze(-1).expand_as(x)).abs().max().item<double>();
}

// Rows 1..L of the lengths around the tile sizes (64 keys for d <= 64, 32 for d = 128).
const std::vector<std::pair<int64_t, int64_t>> kModelCases = {{130, 16}, {100, 64}, {40, 128}};

// Relative errors (Frobenius; out, dq, dk, dv) of the emulation against model::attention, measured at most
// (LibTorch 2.15, CPU): LSSA 9.2e-6 in float64 and 9.6e-6 in float32, LSSAR 5.3e-6 and 4.1e-6; all of it the
// float32 rounding of the emulation (and, for the float32 reference, of model::attention). Bounds with a
// margin of 3 (float64) and 5 (float32).
constexpr double kVsModelFloat64 = 3e-5;
constexpr double kVsModelFloat32 = 5e-5;

TEST(EmulationVsModelAttention, LssarNearUniformAndRandomRows) {
  constexpr double tau = kLssarUniformTolerance;
  for (const auto& [length, head_dim] : kModelCases) {
    const std::string name = "L=" + std::to_string(length) + " d=" + std::to_string(head_dim);
    SCOPED_TRACE(name);
    Inputs in = near_uniform_inputs(length, head_dim, 4000 + length);
    const torch::Tensor x = row_excess(in);
    const torch::Tensor band = (x / tau - 1).abs() < kCutoffBand;
    const torch::Tensor below = (x <= tau).logical_and(band.logical_not());
    const torch::Tensor graded = torch::arange(kNearUniformHeads).ge(2).view({1, -1, 1}).expand_as(x);
    // Graded rows from row 4 on (O_i = 1) above the cut-off: key 0 is their only key above uniform.
    const torch::Tensor above_graded = (x > tau)
                                           .logical_and(band.logical_not())
                                           .logical_and(graded)
                                           .logical_and(torch::arange(length).ge(3).view({1, 1, -1}));
    // The construction: identical keys are uniform to float64 rounding; graded rows on both sides of the
    // cut-off, within a factor 2 of it; no random row anywhere near it.
    EXPECT_LT(x[0][1].slice(0, 3).abs().max().item<double>(), 1e-12);
    const torch::Tensor ratio = x.masked_select(graded) / tau;
    EXPECT_GE(ratio.gt(0.5).logical_and(ratio.lt(1 - kCutoffBand)).sum().item<int64_t>(), 10);
    EXPECT_GE(ratio.gt(1 + kCutoffBand).logical_and(ratio.lt(2)).sum().item<int64_t>(), 10);
    EXPECT_EQ(band[0][0].sum().item<int64_t>(), 0);
    in.grad_out = in.grad_out * band.logical_not().unsqueeze(-1);
    const torch::Tensor off_band = band.logical_not().unsqueeze(-1).to(torch::kFloat64);
    const torch::Tensor v0 = in.v.select(2, 0).unsqueeze(2).expand_as(in.v);

    for (const double p : {15.0, 3.0}) {
      SCOPED_TRACE("p=" + std::to_string(p));
      const Result emu = run_with_grads(fused(true, p), in, torch::kFloat32, torch::kCPU);
      const Result ref64 =
          run_with_grads(model_attention(AttentionKind::kLssar, p), in, torch::kFloat64, torch::kCPU);
      const Result ref32 =
          run_with_grads(model_attention(AttentionKind::kLssar, p), in, torch::kFloat32, torch::kCPU);
      // Independent expectations: rows at or below the cut-off are exactly zero, graded rows above it put
      // all their weight on key 0 (the only key above uniform), in each path.
      for (const Result* r : {&emu, &ref64, &ref32}) {
        EXPECT_EQ(max_abs_on_rows(r->out, below), 0.0);
        EXPECT_LT(max_abs_on_rows(r->out - v0, above_graded), 1e-5);
      }
      // And the two paths against each other, forward and gradients, off the band.
      auto off = [&](Result r) {
        r.out = r.out * off_band;
        return r;
      };
      const Errors e64 = compare(off(emu), off(ref64));
      const Errors e32 = compare(off(emu), off(ref32));
      std::cout << "  LSSAR p=" << p << " " << name << " vs model::attention: float64 worst " << e64.worst()
                << ", float32 worst " << e32.worst() << "\n";
      expect_all_below(e64, kVsModelFloat64);
      expect_all_below(e32, kVsModelFloat32);
    }
  }
}

// LSSA has no cut-off: the same inputs, every row compared.
TEST(EmulationVsModelAttention, LssaNearUniformAndRandomRows) {
  for (const auto& [length, head_dim] : kModelCases) {
    const std::string name = "L=" + std::to_string(length) + " d=" + std::to_string(head_dim);
    SCOPED_TRACE(name);
    const Inputs in = near_uniform_inputs(length, head_dim, 5000 + length);
    const Result emu = run_with_grads(fused(false, 1), in, torch::kFloat32, torch::kCPU);
    const Errors e64 = compare(
        emu, run_with_grads(model_attention(AttentionKind::kLssa, 1), in, torch::kFloat64, torch::kCPU));
    const Errors e32 = compare(
        emu, run_with_grads(model_attention(AttentionKind::kLssa, 1), in, torch::kFloat32, torch::kCPU));
    std::cout << "  LSSA " << name << " vs model::attention: float64 worst " << e64.worst()
              << ", float32 worst " << e32.worst() << "\n";
    expect_all_below(e64, kVsModelFloat64);
    expect_all_below(e32, kVsModelFloat32);
  }
}

}  // namespace
}  // namespace orbitlaw::model::cuda
