// Levenberg-Marquardt constant fitting: exact recovery on noiseless data, each loss shape, weights, and the
// robustness of the L1 losses to outliers.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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
