// Levenberg-Marquardt constant fitting: exact recovery on noiseless data, each loss shape, weights, and the
// robustness of the L1 losses to outliers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "constant_fit.hpp"
#include "evaluator.hpp"
#include "feynman_data.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

double constant_at(const sr::Expr& e, int k) {
  int seen = 0;
  for (const auto& n : e.nodes()) {
    if (n.op == sr::Op::kConst && seen++ == k) return n.value;
  }
  return NAN;
}

}  // namespace

TEST(SrConstantFit, RecoversNonlinearConstantsExactly) {
  auto d = sr::test::sample("2.5*x^1.7 + 0.3", {{"x", 0.5, 3}}, 100, 1);
  sr::Expr e = sr::parse("1*x^1 + 1", d.names);
  double loss = sr::fit_constants(e, d.X, d.y, sr::LossKind::kL2);
  EXPECT_LT(loss, 1e-20);
  EXPECT_NEAR(constant_at(e, 0), 2.5, 1e-8);
  EXPECT_NEAR(constant_at(e, 1), 1.7, 1e-8);
  EXPECT_NEAR(constant_at(e, 2), 0.3, 1e-8);
}

TEST(SrConstantFit, LogLossFitsGOnDataSpanningOrdersOfMagnitude) {
  auto d = sr::test::sample("39.47841760435743*m1*m2/r^2",
                            {{"r", 0.3, 40}, {"m1", 1e-4, 1e-2, true}, {"m2", 1e-4, 1e-2, true}}, 200, 2);
  for (auto kind : {sr::LossKind::kLog, sr::LossKind::kRelative, sr::LossKind::kL2}) {
    sr::Expr e = sr::parse("1*m1*m2/r^2", d.names);
    sr::fit_constants(e, d.X, d.y, kind);
    EXPECT_NEAR(constant_at(e, 0), 39.47841760435743, 1e-8) << sr::to_string(kind);
  }
}

TEST(SrConstantFit, L1LossesIgnoreOutliersWhereL2DoesNot) {
  auto d = sr::test::sample("3*x", {{"x", 1, 2}}, 100, 3);
  for (int i = 0; i < 100; i += 10) d.y[i] += 5;  // 10% gross outliers
  sr::Expr l2 = sr::parse("1*x", d.names), l1 = l2, thresholded = l2;
  sr::fit_constants(l2, d.X, d.y, sr::LossKind::kL2);
  sr::fit_constants(l1, d.X, d.y, sr::LossKind::kL1);
  sr::fit_constants(thresholded, d.X, d.y, sr::LossKind::kThresholdedL1);
  EXPECT_GT(std::abs(constant_at(l2, 0) - 3), 0.1);
  EXPECT_NEAR(constant_at(l1, 0), 3, 1e-4);
  EXPECT_NEAR(constant_at(thresholded, 0), 3, 1e-4);
}

TEST(SrConstantFit, ZeroWeightsExcludeRows) {
  auto d = sr::test::sample("3*x", {{"x", 1, 2}}, 50, 4);
  Eigen::VectorXd w = Eigen::VectorXd::Ones(50);
  for (int i = 0; i < 50; i += 5) {
    d.y[i] = -100;
    w[i] = 0;
  }
  sr::Expr e = sr::parse("1*x", d.names);
  double loss = sr::fit_constants(e, d.X, d.y, sr::LossKind::kL2, &w);
  EXPECT_NEAR(constant_at(e, 0), 3, 1e-10);
  EXPECT_LT(loss, 1e-20);
}

TEST(SrConstantFit, KeepsConstantsWhenNothingImproves) {
  auto d = sr::test::sample("3*x", {{"x", 1, 2}}, 20, 5);
  sr::Expr e = sr::parse("3*x", d.names);
  EXPECT_EQ(sr::fit_constants(e, d.X, d.y, sr::LossKind::kL2), 0.0);
  EXPECT_EQ(constant_at(e, 0), 3.0);
}

// The search's quick fit against the thorough one on the probe's loss (thresholded L1), noisy Newton from
// constants 30% off: the quick fit must land within 2% of the thorough fit's loss with at most two thirds of
// its evaluations (a search saves more: its children start from their parents' fitted constants).
TEST(SrConstantFit, TheSearchFitNearlyMatchesTheThoroughFitAtAFractionOfItsCost) {
  auto d = sr::test::sample("39.478*m1*m2/r^2", {{"r", 0.3, 5}, {"m1", 1e-4, 1e-2, true}, {"m2", 0.5, 5}},
                            300, 5, 0.05);
  const Eigen::ArrayXd y = d.y.array();
  sr::Evaluator evaluator(d.X);
  double loss[2];
  std::int64_t evaluations[2] = {0, 0};
  const sr::FitEffort efforts[2] = {sr::kThoroughFit, sr::kSearchFit};
  for (int k = 0; k < 2; ++k) {
    sr::Expr e = sr::parse("27.6*m1*m2/(r + 0.1)^1.7", d.names);
    const sr::FitTarget target{evaluator, y, nullptr, sr::LossKind::kThresholdedL1, efforts[k]};
    orbitlaw::Xoshiro256 rng(1, 0, 0);
    loss[k] = sr::fit_constants(e, target, 30, 0, rng, evaluations[k]);
  }
  std::printf("thorough fit: loss %.6g in %lld evaluations; search fit: %.6g in %lld\n", loss[0],
              static_cast<long long>(evaluations[0]), loss[1], static_cast<long long>(evaluations[1]));
  EXPECT_LT(loss[1], loss[0] * 1.02);
  EXPECT_LE(3 * evaluations[1], 2 * evaluations[0]);
}
