// Bootstrap intervals of fitted constants against least-squares theory: for y = c x^e with multiplicative
// noise of standard deviation s, fitted in log space, the exponent's standard error is
// s / (sqrt(n) * sd(ln x)), so a 95% interval has half-width 1.96 times that.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

struct PowerData {
  Eigen::MatrixXd X;
  Eigen::VectorXd y;
  double sd_log_x = 0;
};

PowerData power_law(int rows, double noise, std::uint64_t seed) {
  orbitlaw::Xoshiro256 rng(seed, 1, 0);
  PowerData d;
  d.X.resize(rows, 1);
  d.y.resize(rows);
  double mean = 0, square = 0;
  for (int i = 0; i < rows; ++i) {
    const double x = rng.log_uniform(0.5, 30);
    d.X(i, 0) = x;
    d.y[i] = 3.0 * std::pow(x, -1.5) * std::exp(noise * rng.normal());
    mean += std::log(x);
    square += std::log(x) * std::log(x);
  }
  mean /= rows;
  d.sd_log_x = std::sqrt(square / rows - mean * mean);
  return d;
}

TEST(Bootstrap, ExponentIntervalMatchesLeastSquaresTheory) {
  const int rows = 400;
  const double noise = 0.01;
  const PowerData d = power_law(rows, noise, 7);
  sr::Expr law = sr::parse("3*x^-1.5", {"x"});
  sr::fit_constants(law, d.X, d.y, sr::LossKind::kLog);
  const sr::Bootstrap b = sr::bootstrap_constants(law, d.X, d.y, sr::LossKind::kLog, 400, 0.95, 3);
  ASSERT_EQ(b.constants.size(), 2u);  // prefix order: the factor, then the exponent
  EXPECT_EQ(b.resamples, 400);
  EXPECT_EQ(b.failed, 0);
  EXPECT_EQ(b.refits.size(), 400u);
  const sr::ConstantInterval& e = b.constants[1];
  EXPECT_LT(e.low, -1.5);
  EXPECT_GT(e.high, -1.5);
  const double theory = 1.96 * noise / (std::sqrt(static_cast<double>(rows)) * d.sd_log_x);
  const double half_width = (e.high - e.low) / 2;
  EXPECT_GT(half_width, 0.75 * theory) << "bootstrap " << half_width << ", theory " << theory;
  EXPECT_LT(half_width, 1.25 * theory) << "bootstrap " << half_width << ", theory " << theory;
  // A 1.973-type exponent is told apart from 2 when the interval is this narrow; widen the noise tenfold and
  // the interval widens with it.
  const PowerData noisy = power_law(rows, 10 * noise, 7);
  sr::Expr noisy_law = sr::parse("3*x^-1.5", {"x"});
  sr::fit_constants(noisy_law, noisy.X, noisy.y, sr::LossKind::kLog);
  const sr::Bootstrap wide =
      sr::bootstrap_constants(noisy_law, noisy.X, noisy.y, sr::LossKind::kLog, 400, 0.95, 3);
  EXPECT_GT(wide.constants[1].high - wide.constants[1].low, 7 * (e.high - e.low));
}

TEST(Bootstrap, NoiselessDataPinTheConstantsAndFormsWithoutConstantsHaveNone) {
  const PowerData d = power_law(200, 0, 1);
  sr::Expr law = sr::parse("2*x^-1", {"x"});
  sr::fit_constants(law, d.X, d.y, sr::LossKind::kL2);
  const sr::Bootstrap b = sr::bootstrap_constants(law, d.X, d.y, sr::LossKind::kL2, 50, 0.9, 0);
  ASSERT_EQ(b.constants.size(), 2u);
  EXPECT_NEAR(b.constants[0].value, 3.0, 1e-9);
  EXPECT_NEAR(b.constants[1].low, -1.5, 1e-9);
  EXPECT_NEAR(b.constants[1].high, -1.5, 1e-9);
  const sr::Bootstrap none = sr::bootstrap_constants(sr::parse("inv(x)", {"x"}), d.X, d.y, sr::LossKind::kL2);
  EXPECT_TRUE(none.constants.empty());
  EXPECT_TRUE(none.refits.empty());
}

// Vafa et al.'s loss counts residuals below 1e-8 as 0, an absolute threshold. On forces of order 1e-5 with
// relative noise 1e-5 every residual is below it, so every constant near the fit scored 0 and each resample's
// refit kept the full-data constants: an interval of width 0, whatever the noise. The same data in other
// units (times 2^20, exact) must give the same exponent interval, and the constant's scaled by 2^20.
TEST(Bootstrap, ThresholdedL1IntervalsDoNotDependOnTheUnits) {
  const int rows = 300;
  const PowerData d = power_law(rows, 1e-5, 11);
  const double unit = std::ldexp(1.0, 20);
  const Eigen::VectorXd small = d.y * 1e-5;  // 3e-5 x^-1.5: residuals of order 3e-10
  const Eigen::VectorXd large = small * unit;
  sr::Expr small_law = sr::parse("3e-5*x^-1.5", {"x"});
  sr::Expr large_law = sr::parse("31.45728*x^-1.5", {"x"});  // 3e-5 * 2^20
  sr::fit_constants(small_law, d.X, small, sr::LossKind::kThresholdedL1);
  sr::fit_constants(large_law, d.X, large, sr::LossKind::kThresholdedL1);
  const sr::Bootstrap a =
      sr::bootstrap_constants(small_law, d.X, small, sr::LossKind::kThresholdedL1, 200, 0.95, 5);
  const sr::Bootstrap b =
      sr::bootstrap_constants(large_law, d.X, large, sr::LossKind::kThresholdedL1, 200, 0.95, 5);
  ASSERT_EQ(a.constants.size(), 2u);
  ASSERT_EQ(b.constants.size(), 2u);
  const double width = b.constants[1].high - b.constants[1].low;
  // the large units' interval is the L1 fit's: about the noise over sqrt(rows) over sd(ln x), not 0
  EXPECT_GT(width, 0.5 * 2 * 1e-5 / (std::sqrt(static_cast<double>(rows)) * d.sd_log_x));
  EXPECT_LT(b.constants[1].low, -1.5);
  EXPECT_GT(b.constants[1].high, -1.5);
  EXPECT_NEAR(a.constants[1].low, b.constants[1].low, 0.02 * width);
  EXPECT_NEAR(a.constants[1].high, b.constants[1].high, 0.02 * width);
  EXPECT_NEAR(a.constants[0].low * unit, b.constants[0].low, 1e-6 * b.constants[0].value);
  EXPECT_NEAR(a.constants[0].high * unit, b.constants[0].high, 1e-6 * b.constants[0].value);
}

TEST(Bootstrap, PercentilesInterpolateAndBadArgumentsAreErrors) {
  std::vector<double> values;
  for (int i = 101; i >= 1; --i) values.push_back(i);  // unsorted on purpose
  const auto [low, high] = sr::percentile_interval(values, 0.9);
  EXPECT_DOUBLE_EQ(low, 6.0);
  EXPECT_DOUBLE_EQ(high, 96.0);
  EXPECT_TRUE(std::isnan(sr::percentile_interval({}, 0.9).first));
  const PowerData d = power_law(20, 0.01, 1);
  const sr::Expr law = sr::parse("3*x^-1.5", {"x"});
  EXPECT_THROW(sr::bootstrap_constants(law, d.X, d.y, sr::LossKind::kL2, -1), orbitlaw::Error);
  EXPECT_THROW(sr::bootstrap_constants(law, d.X, d.y, sr::LossKind::kL2, 10, 1.0), orbitlaw::Error);
  EXPECT_THROW(sr::bootstrap_constants(law, d.X, d.y.head(5), sr::LossKind::kL2), orbitlaw::Error);
}

}  // namespace
