// The nearest-neighbour test that tells a law not found from noise (probe/sr/src/residual_structure.hpp), on
// residuals whose nature is known, and the search's use of it: under a time limit a noiseless search stuck
// on a plateau goes on restarting until the limit, while a noisy one still stops at its noise floor.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "feynman_data.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"
#include "residual_structure.hpp"

namespace sr = orbitlaw::sr;

namespace {

Eigen::MatrixXd uniform_inputs(int rows, int columns, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd X(rows, columns);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < columns; ++j) X(i, j) = u(rng);
  return X;
}

Eigen::ArrayXd gaussian(int rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  Eigen::ArrayXd e(rows);
  for (int i = 0; i < rows; ++i) e[i] = normal(rng);
  return e;
}

}  // namespace

TEST(ResidualStructure, NoiseGivesAboutOneWhateverTheInputs) {
  // E(e_i - e_j)^2 = 2 var(e) for independent e: the ratio's expectation is 1, its standard error about
  // sqrt(2 / rows) = 0.07 at 400 rows. Within four of them, at 1, 2 and 9 inputs.
  for (int columns : {1, 2, 9}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const double ratio =
          sr::neighbour_variance_ratio(uniform_inputs(400, columns, seed), 3.0 * gaussian(400, 100 + seed));
      EXPECT_NEAR(ratio, 1.0, 0.28) << columns << " inputs, seed " << seed;
      EXPECT_GT(ratio, sr::Options{}.structured_below);
    }
  }
}

TEST(ResidualStructure, ASmoothResidualGivesFarLessThanNoise) {
  // r = sin(2 pi x) on 400 rows of [0, 1]: a row's nearest neighbour lies about 1/800 away, so the residuals
  // differ by about 2 pi / 800 x |cos| and the ratio is of order (2 pi / 800)^2, far below 0.01.
  const Eigen::MatrixXd X1 = uniform_inputs(400, 1, 7);
  const Eigen::ArrayXd smooth = (2 * M_PI * X1.col(0).array()).sin();
  EXPECT_LT(sr::neighbour_variance_ratio(X1, smooth), 0.01);
  // Three inputs, one unused (its range still spreads the neighbours): still structure.
  const Eigen::MatrixXd X3 = uniform_inputs(400, 3, 8);
  const Eigen::ArrayXd in_two = X3.col(0).array() * X3.col(1).array() + (3 * X3.col(1).array()).cos();
  EXPECT_LT(sr::neighbour_variance_ratio(X3, in_two), 0.25);
  // Structure under noise of half its size still reads as structure; noise alone on the same rows does not.
  const Eigen::ArrayXd mixed = smooth / std::sqrt(0.5) + 0.5 * gaussian(400, 9);
  EXPECT_LT(sr::neighbour_variance_ratio(X1, mixed), sr::Options{}.structured_below);
  EXPECT_GT(sr::neighbour_variance_ratio(X1, gaussian(400, 9)), sr::Options{}.structured_below);
  // The scale of an input does not matter (unit range per column), nor the residual's offset and scale.
  Eigen::MatrixXd X3_scaled = X3;
  X3_scaled.col(2) *= 1e9;
  EXPECT_DOUBLE_EQ(sr::neighbour_variance_ratio(X3_scaled, in_two), sr::neighbour_variance_ratio(X3, in_two));
  EXPECT_NEAR(sr::neighbour_variance_ratio(X3, 1e-6 * in_two + 5.0), sr::neighbour_variance_ratio(X3, in_two),
              1e-9);
}

TEST(ResidualStructure, NoAnswerWithoutVarianceRowsOrFiniteValues) {
  const Eigen::MatrixXd X = uniform_inputs(10, 2, 3);
  EXPECT_TRUE(std::isnan(sr::neighbour_variance_ratio(X, Eigen::ArrayXd::Constant(10, 2.0))));
  EXPECT_TRUE(std::isnan(sr::neighbour_variance_ratio(X.topRows(2), gaussian(2, 1))));
  Eigen::ArrayXd with_nan = gaussian(10, 1);
  with_nan[4] = NAN;
  EXPECT_TRUE(std::isnan(sr::neighbour_variance_ratio(X, with_nan)));
  EXPECT_TRUE(std::isnan(sr::neighbour_variance_ratio(Eigen::MatrixXd::Ones(10, 2), gaussian(10, 1))));
}

TEST(ResidualStructure, TheResidualIsTheOneTheLossSquares) {
  const Eigen::ArrayXd y = (Eigen::ArrayXd(3) << 1, 2, 4).finished();
  const Eigen::ArrayXd p = (Eigen::ArrayXd(3) << 2, 2, 1).finished();
  const Eigen::ArrayXd plain = sr::loss_residuals(p, y, sr::LossKind::kL2);
  EXPECT_EQ(plain[0], 1.0);
  EXPECT_EQ(plain[2], -3.0);
  EXPECT_EQ(sr::loss_residuals(p, y, sr::LossKind::kRelative)[2], -0.75);
  EXPECT_DOUBLE_EQ(sr::loss_residuals(p, y, sr::LossKind::kLog)[0], std::log(2.0));
  EXPECT_TRUE(std::isnan(sr::loss_residuals(-p, y, sr::LossKind::kLog)[0]));
}

TEST(ResidualStructure, UnderATimeLimitAStuckNoiselessSearchRestartsUntilIt) {
  // The data of SrDefaults.APlateauThatALaterRestartImprovesOnIsNotTakenForTheNoiseFloor: every restart
  // plateaus far from exp(x) sin(3x) + x, which + - * / cannot write at this size, and its residual is a
  // smooth function of x. Without a time limit the search stops after at most 4 restarts (that test); with
  // one, the plateau is not taken for the noise floor and fresh restarts run until the limit.
  auto d = sr::test::sample("exp(x)*sin(3*x) + x", {{"x", 0.2, 3}}, 600, 440);
  sr::Options o = sr::test::small_budget(0, 200);
  o.operators = {"+", "-", "*", "/"};
  o.holdout_patience = 5;
  o.time_limit_seconds = 4;
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(r.stop_reason, "time limit");
  EXPECT_GT(r.restarts_run, 4);
  // structured_below 0 takes every plateau for the noise floor: the search ends as it does without a limit.
  o.structured_below = 0;
  const sr::Result bounded = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(bounded.stop_reason, "held-out plateau");
  EXPECT_LE(bounded.restarts_run, 4);
  o.structured_below = 1.5;
  EXPECT_THROW(sr::validate(o), orbitlaw::Error);
}

TEST(ResidualStructure, UnderATimeLimitANoisySearchStillStopsAtItsNoiseFloor) {
  // Newton with 1% noise: the residual of m1*m2/r^2 is the noise, so the plateau is the noise floor and the
  // search stops there, as without a limit (SrDefaults.ANoisySearchStopsAtTheHeldOutNoiseFloor), long before
  // a limit of 10 minutes.
  auto d = sr::test::sample("39.478*m1*m2/r^2", {{"r", 0.5, 30}, {"m1", 1e-4, 1e-2, true}, {"m2", 0.5, 5}},
                            2000, 430, 0.01);
  sr::Options o = sr::test::small_budget(0, 200);
  o.holdout_patience = 10;
  o.time_limit_seconds = 600;
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(r.stop_reason, "held-out plateau");
  EXPECT_EQ(r.restarts_run, 2);
  const auto eq = sr::check_equivalence(r.front[r.best].expr, sr::parse("m1*m2/r^2", d.names), d.X);
  EXPECT_TRUE(eq.equivalent) << r.front[r.best].text;
}
