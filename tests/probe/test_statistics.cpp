// R^2, relative error, Student-t quantiles and the power-law fit against hand-computed and published values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/statistics.hpp"

using namespace orbitlaw::probe;

TEST(Statistics, RSquaredMatchesHandComputedCase) {
  Eigen::VectorXd truth(4), pred(4);
  truth << 1, 2, 3, 4;
  pred << 1, 2, 3, 5;
  // SS_res = 1, SS_tot = 1.5^2 + 0.5^2 + 0.5^2 + 1.5^2 = 5.
  EXPECT_DOUBLE_EQ(r_squared(truth, pred), 0.8);
  EXPECT_DOUBLE_EQ(r_squared(truth, truth), 1.0);
  // Predicting the mean gives 0; a non-finite row is skipped.
  Eigen::VectorXd mean = Eigen::VectorXd::Constant(4, 2.5);
  EXPECT_NEAR(r_squared(truth, mean), 0.0, 1e-15);
  pred[3] = std::nan("");
  EXPECT_DOUBLE_EQ(r_squared(truth, pred), 1.0);
}

TEST(Statistics, RelativeErrorMedianAndMean) {
  Eigen::VectorXd truth(4), pred(4);
  truth << 1, 2, 4, 10;
  pred << 1.1, 1.6, 4, 15;  // errors 0.1, 0.2, 0, 0.5
  const auto e = relative_error(truth, pred);
  EXPECT_EQ(e.rows, 4);
  EXPECT_NEAR(e.median, 0.15, 1e-12);
  EXPECT_NEAR(e.mean, 0.2, 1e-12);
}

TEST(Statistics, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.95, 10), 2.228138851986274, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.95, 1), 12.70620473617471, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.99, 30), 2.749995653567, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.95, 1e7), 1.959964, 1e-5);  // the normal limit
}

namespace {

struct Synthetic {
  Eigen::VectorXd r, m1, m2, force;
};

Synthetic power_law_data(int n, double c, double a, double b, double e, double noise, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> gauss(0, 1);
  Synthetic s{Eigen::VectorXd(n), Eigen::VectorXd(n), Eigen::VectorXd(n), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    s.m1[i] = 1e-4 + u(rng) * 1e-2;
    s.m2[i] = 1e-4 + u(rng) * 1e-2;
    s.r[i] = 0.3 + u(rng) * 40;
    s.force[i] =
        std::exp(c + noise * gauss(rng)) * std::pow(s.m1[i], a) * std::pow(s.m2[i], b) * std::pow(s.r[i], e);
  }
  return s;
}

}  // namespace

TEST(PowerLawFit, RecoversExactExponentsWithoutNoise) {
  std::mt19937_64 rng(1);
  auto s = power_law_data(50, std::log(39.47841760435743), 1, 1, -2, 0, rng);
  const auto fit = fit_power_law(s.r, s.m1, s.m2, s.force);
  EXPECT_NEAR(fit.c(), std::log(39.47841760435743), 1e-9);
  EXPECT_NEAR(fit.a(), 1, 1e-10);
  EXPECT_NEAR(fit.b(), 1, 1e-10);
  EXPECT_NEAR(fit.e(), -2, 1e-10);
  EXPECT_TRUE(fit.consistent_with_newton());
}

TEST(PowerLawFit, IntervalsCoverTheTruthAtTheirNominalRate) {
  // 400 independent noisy data sets with known exponents; a 95% interval must cover the truth in about 95%
  // of them (binomial sd ~ 1.1%, so [91%, 99%] is more than 3.5 sd wide on each side).
  std::mt19937_64 rng(7);
  const double truth[4] = {0.3, 0.7, 1.3, -1.6};
  int covered[4] = {0, 0, 0, 0};
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    auto s = power_law_data(40, truth[0], truth[1], truth[2], truth[3], 0.2, rng);
    const auto fit = fit_power_law(s.r, s.m1, s.m2, s.force, 0.95);
    for (int i = 0; i < 4; ++i) covered[i] += fit.covers(i, truth[i]);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(covered[i], 0.91 * trials) << "coefficient " << i;
    EXPECT_LE(covered[i], 0.99 * trials) << "coefficient " << i;
  }
}

TEST(PowerLawFit, NoisyNewtonIsConsistentAndAWrongLawIsNot) {
  std::mt19937_64 rng(3);
  auto newton = power_law_data(2000, std::log(39.478), 1, 1, -2, 0.05, rng);
  const auto good = fit_power_law(newton.r, newton.m1, newton.m2, newton.force);
  EXPECT_TRUE(good.consistent_with_newton());
  EXPECT_NEAR(good.e(), -2, 0.01);
  auto wrong = power_law_data(2000, 0, 1, 1, -1, 0.05, rng);  // an inverse-distance law
  const auto bad = fit_power_law(wrong.r, wrong.m1, wrong.m2, wrong.force);
  EXPECT_FALSE(bad.consistent_with_newton());
  EXPECT_NEAR(bad.e(), -1, 0.01);
}

TEST(PowerLawFit, DropsNonPositiveRowsAndRejectsDegenerateDesigns) {
  std::mt19937_64 rng(5);
  auto s = power_law_data(30, 0, 1, 1, -2, 0.01, rng);
  s.force[0] = -1;
  s.force[1] = 0;
  const auto fit = fit_power_law(s.r, s.m1, s.m2, s.force);
  EXPECT_EQ(fit.rows, 28);
  EXPECT_EQ(fit.dropped, 2);
  EXPECT_THROW(fit_power_law(s.r.head(3), s.m1.head(3), s.m2.head(3), s.force.head(3)), orbitlaw::Error);
  auto fixed_r = s;
  fixed_r.r.setConstant(1.5);  // no exponent of r can be fitted: an error, not a pass
  EXPECT_THROW(fit_power_law(fixed_r.r, fixed_r.m1, fixed_r.m2, fixed_r.force), orbitlaw::Error);
  auto collinear = s;
  collinear.m2 = collinear.r.array().square();  // ln m2 = 2 ln r
  EXPECT_THROW(fit_power_law(collinear.r, collinear.m1, collinear.m2, collinear.force), orbitlaw::Error);
}

TEST(PowerLawFit, AConstantMassIsUnidentifiedAndNotJudged) {
  // Liu et al.'s fixed star: m2 is the same on every row, so F = C m2^b r^e cannot tell b; the fit drops it,
  // reports it as NaN, and judges the exponents it can see.
  std::mt19937_64 rng(6);
  auto s = power_law_data(500, 0, 1, 1, -2, 0.01, rng);
  s.m2.setConstant(1.0);
  s.force = s.m1.array() * s.r.array().pow(-2.0);  // m2 = 1: the same law
  const auto fit = fit_power_law(s.r, s.m1, s.m2, s.force);
  EXPECT_FALSE(fit.identified[2]);
  EXPECT_TRUE(fit.identified[1] && fit.identified[3]);
  EXPECT_TRUE(std::isnan(fit.b()));
  EXPECT_NEAR(fit.e(), -2, 1e-9);
  EXPECT_NEAR(fit.a(), 1, 1e-9);
  EXPECT_TRUE(fit.consistent_with_newton());
  // The r exponent is still judged: an inverse-cube law at a fixed m2 fails.
  s.force = s.m1.array() * s.r.array().pow(-3.0);
  EXPECT_FALSE(fit_power_law(s.r, s.m1, s.m2, s.force).consistent_with_newton());
}
