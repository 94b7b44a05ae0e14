// Every attention kind against the naive float64 reference (forward and gradients), causality, row sums,
// the LSSAR all-at-or-below-uniform row and its cut-off, and LSSAR at n = 16384 in fp32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "naive_attention.hpp"
#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/attention_kinds.hpp"
#include "orbitlaw/model/lssa_cpu_kernel.hpp"

namespace orbitlaw::model {
namespace {

using testing::naive_attention;

AttentionSpec spec_of(AttentionKind kind) {
  AttentionSpec spec;
  spec.kind = kind;
  spec.window = 5;
  return spec;
}

struct Inputs {
  torch::Tensor q, k, v, scale;
};

Inputs random_inputs(std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d, torch::Dtype dtype,
                     std::uint64_t seed) {
  torch::manual_seed(seed);
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  Inputs in{torch::randn({b, h, t, d}, opts), torch::randn({b, h, t, d}, opts),
            torch::randn({b, h, t, d}, opts), torch::rand({h}, opts) + 0.5};
  in.q = in.q.to(dtype).requires_grad_();
  in.k = in.k.to(dtype).requires_grad_();
  in.v = in.v.to(dtype).requires_grad_();
  in.scale = in.scale.to(dtype).requires_grad_();
  return in;
}

// Forward output and gradients of sum(out * g) with respect to q, k, v and the SSMax scale.
std::vector<torch::Tensor> output_and_grads(const Inputs& in, const torch::Tensor& g, bool naive,
                                            const AttentionSpec& spec, std::int64_t chunk = 0) {
  for (auto* t : {&in.q, &in.k, &in.v, &in.scale}) t->mutable_grad() = torch::Tensor();
  auto out = naive ? naive_attention(in.q, in.k, in.v, spec, in.scale)
                   : attention(in.q, in.k, in.v, spec, in.scale, chunk);
  (out * g.to(out.scalar_type())).sum().backward();
  auto grad_or_zero = [](const torch::Tensor& t) {
    return t.grad().defined() ? t.grad() : torch::zeros_like(t);
  };
  return {out.detach().to(torch::kFloat64), grad_or_zero(in.q).to(torch::kFloat64),
          grad_or_zero(in.k).to(torch::kFloat64), grad_or_zero(in.v).to(torch::kFloat64),
          grad_or_zero(in.scale).to(torch::kFloat64)};
}

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want, double rtol,
                  double atol, const std::string& what) {
  const char* names[] = {"output", "dq", "dk", "dv", "ds"};
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = (got[i] - want[i]).abs().max().item<double>();
    const double scale = want[i].abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(got[i], want[i], rtol, atol))
        << what << " " << names[i] << ": max abs error " << err << " (max |value| " << scale << ")";
  }
}

class AttentionKinds : public ::testing::TestWithParam<AttentionKind> {};

// Both paths of a kind: the fused one where it has one (scaled_dot_product_attention on the CPU; the CUDA
// kernels have tests of their own) and the reference weights (allow_fused off).
std::vector<std::pair<AttentionSpec, std::string>> both_paths(AttentionSpec spec) {
  std::vector<std::pair<AttentionSpec, std::string>> paths{{spec, to_string(spec.kind)}};
  spec.allow_fused = false;
  paths.emplace_back(spec, to_string(spec.kind) + " reference");
  return paths;
}

TEST_P(AttentionKinds, MatchesNaiveFloat64ReferenceInFloat64) {
  auto in = random_inputs(2, 3, 13, 8, torch::kFloat64, 1);
  auto g = torch::randn({2, 3, 13, 8}, torch::kFloat64);
  const auto want = output_and_grads(in, g, true, spec_of(GetParam()));
  for (const auto& [spec, what] : both_paths(spec_of(GetParam()))) {
    expect_close(output_and_grads(in, g, false, spec), want, 1e-9, 1e-10, what + " fp64");
    // Chunking the query rows must not change anything.
    expect_close(output_and_grads(in, g, false, spec, 4), want, 1e-9, 1e-10, what + " chunked");
  }
}

TEST_P(AttentionKinds, MatchesNaiveFloat64ReferenceInFloat32) {
  auto in64 = random_inputs(2, 2, 24, 16, torch::kFloat64, 2);
  auto in32 = random_inputs(2, 2, 24, 16, torch::kFloat32, 2);
  auto g = torch::randn({2, 2, 24, 16}, torch::kFloat64);
  const auto want = output_and_grads(in64, g, true, spec_of(GetParam()));
  // p = 15 amplifies fp32 rounding of the weights 15-fold, hence the looser bound for LSSAR.
  const double tol = GetParam() == AttentionKind::kLssar ? 2e-3 : 2e-4;
  for (const auto& [spec, what] : both_paths(spec_of(GetParam()))) {
    expect_close(output_and_grads(in32, g, false, spec), want, tol, tol, what + " fp32");
    // Chunks start at row offsets that the CPU kernels (lssa, lssar) must honour.
    expect_close(output_and_grads(in32, g, false, spec, 7), want, tol, tol, what + " fp32 chunked");
  }
}

// The CPU kernel of LSSA and LSSAR (float32) against their reference formulas in float64, at the sweeps'
// shape (batch 16, 2 heads, 128 positions, head size 16), for the powers and offsets the experiments use.
TEST(CpuKernel, MatchesTheFloat64ReferenceAtTheSweepShape) {
  auto in64 = random_inputs(16, 2, 128, 16, torch::kFloat64, 7);
  auto in32 = random_inputs(16, 2, 128, 16, torch::kFloat32, 7);
  auto g = torch::randn({16, 2, 128, 16}, torch::kFloat64);
  struct Case {
    AttentionKind kind;
    double p;
    int offset_rows;
    double tol;
  };
  for (const Case& c : {Case{AttentionKind::kLssa, 15, 3, 2e-4}, Case{AttentionKind::kLssar, 15, 3, 2e-3},
                        Case{AttentionKind::kLssar, 3, 3, 5e-4}, Case{AttentionKind::kLssar, 2.5, 0, 5e-4}}) {
    AttentionSpec spec = spec_of(c.kind);
    spec.p = c.p;
    spec.offset_rows = c.offset_rows;
    AttentionSpec reference = spec;
    reference.allow_fused = false;
    const auto want = output_and_grads(in64, g, false, reference);
    const auto got = output_and_grads(in32, g, false, spec);
    // Relative to each tensor's largest value: the gradients' scale grows with p.
    for (std::size_t i = 0; i < 4; ++i) {
      const double scale = want[i].abs().max().item<double>();
      EXPECT_LE((got[i] - want[i]).abs().max().item<double>(), c.tol * scale)
          << to_string(c.kind) << " p = " << c.p << " offset_rows = " << c.offset_rows << " tensor " << i;
    }
  }
}

// The kernel's values and gradients are a function of the numbers alone, not of where they lie in memory (a
// run repeated with another heap layout must reproduce its predictions exactly). One 11 x 11 block repeated
// in 16 heads puts its rows at every float alignment (head h starts 121 h floats in); the same numbers placed
// at every shift past an aligned allocation move the inputs too. Rows of 11 and 63 keys leave remainders
// after every vector width.
TEST(CpuKernel, ResultsDoNotDependOnMemoryAlignment) {
  torch::manual_seed(11);
  for (const std::int64_t t : {11, 63}) {
    const auto dots = (torch::rand({1, 1, t, t}, torch::kFloat32) * 2 - 1).expand({2, 8, t, t}).contiguous();
    const auto grad = torch::randn({1, 1, t, t}, torch::kFloat32).expand({2, 8, t, t}).contiguous();
    for (const bool reweight : {false, true}) {
      const LssaRowsSpec spec{16, 0, reweight, 15, 3};
      torch::Tensor first_value, first_grad;
      for (std::int64_t shift = 0; shift < 16; ++shift) {
        auto storage = torch::zeros({dots.numel() + 16}, torch::kFloat32);
        auto placed = storage.narrow(0, shift, dots.numel()).view(dots.sizes());
        placed.copy_(dots);
        auto grad_storage = torch::zeros({grad.numel() + 16}, torch::kFloat32);
        auto placed_grad = grad_storage.narrow(0, 15 - shift, grad.numel()).view(grad.sizes());
        placed_grad.copy_(grad);
        placed.requires_grad_(true);
        const auto value = lssa_cpu_weights(placed, spec).detach();
        lssa_cpu_weights(placed, spec).backward(placed_grad);
        const auto value_grad = placed.grad();
        const std::string where = "T " + std::to_string(t) + " reweight " + std::to_string(reweight) +
                                  " shift " + std::to_string(shift);
        for (std::int64_t head = 1; head < 16; ++head) {
          EXPECT_TRUE(torch::equal(value.view({16, t, t})[head], value.view({16, t, t})[0]))
              << where << " head " << head;
          EXPECT_TRUE(torch::equal(value_grad.view({16, t, t})[head], value_grad.view({16, t, t})[0]))
              << where << " head " << head;
        }
        if (shift == 0) {
          first_value = value.clone();
          first_grad = value_grad.clone();
          continue;
        }
        EXPECT_TRUE(torch::equal(value, first_value)) << where;
        EXPECT_TRUE(torch::equal(value_grad, first_grad)) << where;
      }
    }
  }
}

TEST_P(AttentionKinds, RowsSumToOneAndNothingAboveTheDiagonal) {
  const auto spec = spec_of(GetParam());
  auto in = random_inputs(2, 2, 40, 8, torch::kFloat32, 3);
  auto w = attention_weights(in.q, in.k, spec, in.scale).detach();
  if (attention_kind_info(spec.kind).rows_sum_to_one) {
    EXPECT_TRUE(torch::allclose(w.sum(-1), torch::ones({2, 2, 40}), 1e-5, 1e-5));
  } else {
    EXPECT_FALSE(torch::allclose(w.sum(-1), torch::ones({2, 2, 40}), 1e-2, 1e-2));  // the flag is true to it
  }
  EXPECT_EQ(torch::triu(w, 1).abs().max().item<float>(), 0.0f);
  EXPECT_GE(w.min().item<float>(), 0.0f);
  if (spec.kind == AttentionKind::kWindow) {
    EXPECT_EQ(torch::tril(w, -spec.window).abs().max().item<float>(), 0.0f);  // nothing beyond the window
  }
}

TEST_P(AttentionKinds, OutputAtRowIDoesNotDependOnLaterKeysOrValues) {
  const auto spec = spec_of(GetParam());
  auto in = random_inputs(1, 2, 30, 8, torch::kFloat32, 4);
  torch::NoGradGuard no_grad;
  auto before = attention(in.q, in.k, in.v, spec, in.scale);
  const std::int64_t i = 17;
  auto q2 = in.q.clone(), k2 = in.k.clone(), v2 = in.v.clone();
  q2.narrow(2, i + 1, 30 - i - 1).normal_();
  k2.narrow(2, i + 1, 30 - i - 1).normal_();
  v2.narrow(2, i + 1, 30 - i - 1).normal_();
  auto after = attention(q2, k2, v2, spec, in.scale);
  EXPECT_TRUE(torch::allclose(before.narrow(2, 0, i + 1), after.narrow(2, 0, i + 1), 0, 1e-6));
  EXPECT_FALSE(torch::allclose(before.narrow(2, i + 1, 1), after.narrow(2, i + 1, 1), 0, 1e-3));
}

INSTANTIATE_TEST_SUITE_P(All, AttentionKinds, ::testing::ValuesIn(testing::registered_attention_kinds()),
                         [](const auto& kind_info) { return to_string(kind_info.param); });

TEST(Lssar, ReweightingOfHandComputedRows) {
  // Row 3 (0-based; n = 4, O = 1): n A - 1 = [0.6, -0.2, -0.2, -0.2] keeps only key 0.
  // Row 4 (n = 5): A = [0.3, 0.3, 0.2, 0.1, 0.1], n A - 1 = [0.5, 0.5, 0, -0.5, -0.5] -> [0.5, 0.5, 0, 0, 0].
  auto a = torch::zeros({5, 5}, torch::kFloat64);
  a[0][0] = 1;
  a[1].narrow(0, 0, 2).fill_(0.5);
  a[2].narrow(0, 0, 3).copy_(torch::tensor({0.5, 0.25, 0.25}, torch::kFloat64));
  a[3].narrow(0, 0, 4).copy_(torch::tensor({0.4, 0.2, 0.2, 0.2}, torch::kFloat64));
  a[4].copy_(torch::tensor({0.3, 0.3, 0.2, 0.1, 0.1}, torch::kFloat64));
  auto w = lssar_reweight(a, 15, 3);
  // Row 2 (n = 3, O = 0): (3 A)^15 = [1.5^15, 0.75^15, 0.75^15], normalised.
  const double big = std::pow(1.5, 15), small = std::pow(0.75, 15);
  EXPECT_NEAR(w[2][0].item<double>(), big / (big + 2 * small), 1e-12);
  EXPECT_NEAR(w[2][1].item<double>(), small / (big + 2 * small), 1e-12);
  EXPECT_TRUE(torch::allclose(w[3], torch::tensor({1.0, 0.0, 0.0, 0.0, 0.0}, torch::kFloat64)));
  EXPECT_TRUE(torch::allclose(w[4], torch::tensor({0.5, 0.5, 0.0, 0.0, 0.0}, torch::kFloat64)));
  EXPECT_TRUE(torch::allclose(w[1], torch::tensor({0.5, 0.5, 0.0, 0.0, 0.0}, torch::kFloat64)));
}

TEST(Lssar, AllAtOrBelowUniformRowIsAllZeros) {
  // Exactly uniform rows: from row 3 on (O = 1) nothing is above uniform, so the rows are all zeros; the
  // first 3 rows (O = 0) stay uniform.
  const int t = 8;
  auto a = torch::tril(torch::ones({t, t}, torch::kFloat64));
  a = a / a.sum(-1, true);
  auto w = lssar_reweight(a, 15, 3);
  EXPECT_TRUE(torch::allclose(w.narrow(0, 0, 3), a.narrow(0, 0, 3)));
  EXPECT_EQ(w.narrow(0, 3, t - 3).abs().max().item<double>(), 0.0);

  // Through the whole attention: a zero query makes every LSSA row uniform (up to rounding); LSSAR then
  // outputs the zero vector on rows 3.., and the mean of the visible values on rows 0..2.
  AttentionSpec spec;
  spec.kind = AttentionKind::kLssar;
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    torch::manual_seed(5);
    auto q = torch::zeros({1, 1, 40, 8}, dtype);
    auto k = torch::randn({1, 1, 40, 8}, dtype);
    auto v = torch::randn({1, 1, 40, 8}, dtype);
    auto out = attention(q, k, v, spec);
    EXPECT_EQ(out.narrow(2, 3, 37).abs().max().item<double>(), 0.0);
    auto mean_first3 = v.narrow(2, 0, 3).cumsum(2) / torch::arange(1, 4, dtype).view({1, 1, 3, 1});
    EXPECT_TRUE(torch::allclose(out.narrow(2, 0, 3), mean_first3, 1e-5, 1e-6));
    auto weights = attention_weights(q, k, spec);
    EXPECT_EQ(weights.narrow(2, 3, 37).sum().item<double>(), 0.0);
  }
}

TEST(Lssar, NearUniformCutOffJudgesTheWholeRowInEveryDtype) {
  // Row 4 (0-based; n = 5, O = 1) built from its excesses x_j = n A_j - 1, in units of the cut-off tau
  // (orbitlaw/model/lssar_cutoff.hpp, shared with the fused kernels); the excesses sum to 0 as A sums to 1.
  const double tau = kLssarUniformTolerance;
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    auto row = [&](double x0, double x1) {
      const double rest = -(x0 + x1) / 3;
      auto x = torch::tensor({x0, x1, rest, rest, rest}, torch::kFloat64) * tau;
      return ((1 + x) / 5).unsqueeze(0).to(dtype).requires_grad_();
    };
    // Absolute on the weights; relative on the small share, whose excess 0.5 tau carries float32's rounding
    // of A (~6e-8 / 5e-4 relative) raised to the 15th power.
    const bool f64 = dtype == torch::kFloat64;
    const double tol = f64 ? 1e-12 : 1e-6, share_tol = f64 ? 1e-9 : 5e-2;
    // Largest excess 2 tau: the row is kept and follows the formula with no per-key tolerance, so the key at
    // 0.5 tau keeps its (0.5 / 2)^15 share.
    const double small = std::pow(0.25, 15);
    auto w = lssar_reweight(row(2, 0.5), 15, 3, 4).to(torch::kFloat64);
    EXPECT_NEAR(w[0][0].item<double>(), 1 / (1 + small), tol);
    EXPECT_NEAR(w[0][1].item<double>() / small, 1 / (1 + small), share_tol);
    EXPECT_EQ(w[0].slice(0, 2).abs().max().item<double>(), 0.0);
    // Just above the cut-off (1.1 tau): kept, W = [1, (0.5 / 1.1)^15, 0, 0, 0] normalised.
    const double r = std::pow(0.5 / 1.1, 15);
    w = lssar_reweight(row(1.1, 0.5), 15, 3, 4).to(torch::kFloat64);
    EXPECT_NEAR(w[0][0].item<double>(), 1 / (1 + r), tol);
    EXPECT_NEAR(w[0][1].item<double>(), r / (1 + r), tol);
    // Just below it (0.9 tau): all at or below uniform, all zeros, and no gradient flows through the row.
    auto below = row(0.9, 0.5);
    auto zero = lssar_reweight(below, 15, 3, 4);
    EXPECT_EQ(zero.abs().max().item<double>(), 0.0);
    (zero * torch::arange(1, 6, zero.options()).unsqueeze(0)).sum().backward();
    EXPECT_EQ(below.grad().abs().max().item<double>(), 0.0);
  }
}

TEST(Lssar, FiniteAndExactAt16384PositionsInFloat32) {
  // One head, d = 8. Every query points along u; keys are -u except +u at 0, 5000 and 10000, so attention is
  // as concentrated as it gets: n A ~ n on the +u keys, and the literal (n A - 1)^15 overflows fp32 (~1e63).
  // Exact answer: from row 3 on, the output is the mean of the values at the +u keys the row can see.
  const std::int64_t n = 16384, d = 8;
  torch::manual_seed(6);
  auto u = torch::randn({d});
  u = u / u.norm();
  auto q = u.expand({1, 1, n, d}).clone();
  auto k = (-u).expand({1, 1, n, d}).clone();
  for (std::int64_t j : {0, 5000, 10000}) k[0][0][j] = u;
  auto v = torch::randn({1, 1, n, d});
  AttentionSpec spec;
  spec.kind = AttentionKind::kLssar;
  torch::NoGradGuard no_grad;
  auto out = attention(q, k, v, spec, {}, 1024);
  ASSERT_TRUE(torch::isfinite(out).all().item<bool>());
  auto v0 = v[0][0][0], v1 = v[0][0][5000], v2 = v[0][0][10000];
  for (std::int64_t i : {3, 100, 4999, 5000, 7777, 9999, 10000, 16383}) {
    auto want = i < 5000 ? v0 : (i < 10000 ? (v0 + v1) / 2 : (v0 + v1 + v2) / 3);
    EXPECT_TRUE(torch::allclose(out[0][0][i], want, 1e-4, 1e-5)) << "row " << i;
  }
  // The same rows without the row-max scaling overflow, so the scaling is what keeps them finite.
  auto last = attention_weights(q.narrow(2, n - 1, 1), k, AttentionSpec{AttentionKind::kLssa}, {}, n - 1);
  auto literal = (static_cast<double>(n) * last - 1).relu().pow(15.0);
  EXPECT_TRUE(torch::isinf(literal).any().item<bool>());
}

TEST(Rope, RotatesPairsByPositionTimesFrequency) {
  // d = 4: frequencies 1 and theta^(-1/2); position t rotates (x_0, x_2) by t and (x_1, x_3) by t / 100.
  auto x = torch::ones({1, 1, 3, 4}, torch::kFloat64);
  auto y = apply_rope(x, 10000);
  for (int t = 0; t < 3; ++t) {
    const double a = t, b = t / 100.0;
    EXPECT_NEAR(y[0][0][t][0].item<double>(), std::cos(a) - std::sin(a), 1e-12);
    EXPECT_NEAR(y[0][0][t][2].item<double>(), std::sin(a) + std::cos(a), 1e-12);
    EXPECT_NEAR(y[0][0][t][1].item<double>(), std::cos(b) - std::sin(b), 1e-12);
    EXPECT_NEAR(y[0][0][t][3].item<double>(), std::sin(b) + std::cos(b), 1e-12);
  }
}

}  // namespace
}  // namespace orbitlaw::model
