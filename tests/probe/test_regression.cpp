// Ridge regression from streamed normal equations against a direct dense solution; target scaling.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/regression.hpp"

using namespace orbitlaw::probe;

namespace {

Eigen::MatrixXd random_matrix(int rows, int cols, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  Eigen::MatrixXd m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = g(rng) * (j + 1) + 0.5 * j;
  return m;
}

}  // namespace

TEST(Ridge, ZeroLambdaEqualsOrdinaryLeastSquaresAndBatchingDoesNotMatter) {
  std::mt19937_64 rng(2);
  const Eigen::MatrixXd X = random_matrix(300, 5, rng);
  Eigen::VectorXd w(5);
  w << 0.5, -1, 2, 0, 3;
  std::normal_distribution<double> g(0, 0.1);
  Eigen::VectorXd y = (X * w).array() + 1.5;
  for (int i = 0; i < y.size(); ++i) y[i] += g(rng);

  // Reference: dense least squares with an intercept column.
  Eigen::MatrixXd design(300, 6);
  design << Eigen::VectorXd::Ones(300), X;
  const Eigen::VectorXd beta = design.colPivHouseholderQr().solve(y);

  NormalEquations one(5), batched(5);
  one.add(X, y);
  for (int start = 0; start < 300; start += 70) {
    const int n = std::min(70, 300 - start);
    batched.add(X.middleRows(start, n), y.segment(start, n));
  }
  // The same sums formed by hand, row by row, and handed over in two parts (as a GPU caller does).
  NormalEquations from_sums(5);
  for (int start : {0, 120}) {
    const int n = start == 0 ? 120 : 180;
    Eigen::VectorXd sx = Eigen::VectorXd::Zero(5), sxy = Eigen::VectorXd::Zero(5);
    Eigen::MatrixXd sxx = Eigen::MatrixXd::Zero(5, 5);
    double sy = 0, syy = 0;
    for (int i = start; i < start + n; ++i) {
      for (int a = 0; a < 5; ++a) {
        sx[a] += X(i, a);
        sxy[a] += X(i, a) * y[i];
        for (int b = 0; b < 5; ++b) sxx(a, b) += X(i, a) * X(i, b);
      }
      sy += y[i];
      syy += y[i] * y[i];
    }
    from_sums.add_sums(n, sx, sxy, sxx, sy, syy);
  }
  EXPECT_EQ(from_sums.rows(), 300);
  EXPECT_NEAR(from_sums.y_variance(), one.y_variance(), 1e-12);
  for (const auto* eq : {&one, &batched, &from_sums}) {
    const auto s = eq->solve(0);
    EXPECT_NEAR(s.intercept, beta[0], 1e-8);
    for (int j = 0; j < 5; ++j) EXPECT_NEAR(s.weights[j], beta[j + 1], 1e-8);
    const double direct = (s.predict(X) - y).squaredNorm() / 300;
    EXPECT_NEAR(eq->mse(s), direct, 1e-10);
  }
}

TEST(Ridge, SumsOfTheWrongShapeOrNotFiniteAreErrors) {
  NormalEquations eq(3);
  const Eigen::VectorXd v3 = Eigen::VectorXd::Ones(3);
  const Eigen::MatrixXd m3 = Eigen::MatrixXd::Identity(3, 3);
  EXPECT_THROW(eq.add_sums(4, Eigen::VectorXd::Ones(2), v3, m3, 1, 1), orbitlaw::Error);
  EXPECT_THROW(eq.add_sums(4, v3, v3, Eigen::MatrixXd::Identity(2, 2), 1, 1), orbitlaw::Error);
  Eigen::MatrixXd bad = m3;
  bad(2, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(eq.add_sums(4, v3, v3, bad, 1, 1), orbitlaw::Error);
  EXPECT_THROW(eq.add_sums(4, v3, v3, m3, std::numeric_limits<double>::infinity(), 1), orbitlaw::Error);
  EXPECT_EQ(eq.rows(), 0);  // nothing was added
}

TEST(Ridge, LambdaShrinksTowardsTheMeanAndIsChosenOnValidation) {
  std::mt19937_64 rng(4);
  // Pure-noise features: the best validation model is the heavily regularised one (close to the mean).
  const Eigen::MatrixXd X = random_matrix(60, 20, rng);
  const Eigen::MatrixXd Xv = random_matrix(500, 20, rng);
  std::normal_distribution<double> g(0, 1);
  Eigen::VectorXd y(60), yv(500);
  for (auto& v : y) v = g(rng);
  for (auto& v : yv) v = g(rng);
  NormalEquations train(20), validation(20);
  train.add(X, y);
  validation.add(Xv, yv);
  const auto selection = select_ridge(train, validation, {0.0, 1e-2, 1.0, 1e3});
  EXPECT_DOUBLE_EQ(selection.solution.lambda, 1e3);
  EXPECT_LT(selection.solution.weights.norm(), train.solve(0).weights.norm() / 10);
  ASSERT_EQ(selection.validation_mses.size(), 4u);
  for (double mse : selection.validation_mses) EXPECT_GE(mse, selection.validation_mse);
}

TEST(TargetScaler, LogAndLinearRoundTripWithTrainStatistics) {
  Eigen::VectorXd f(3);
  f << std::exp(1.0), std::exp(2.0), std::exp(3.0);
  const auto log_scaler = TargetScaler::fit(TargetScaler::Kind::kLog, f);
  EXPECT_NEAR(log_scaler.shift(), 2.0, 1e-12);
  EXPECT_NEAR(log_scaler.scale(), std::sqrt(2.0 / 3.0), 1e-12);
  const Eigen::VectorXd y = log_scaler.forward(f);
  EXPECT_NEAR(y[1], 0.0, 1e-12);
  EXPECT_NEAR((log_scaler.inverse(y) - f).norm(), 0.0, 1e-10);
  const auto linear = TargetScaler::fit(TargetScaler::Kind::kLinear, f);
  EXPECT_NEAR(linear.scale(), std::sqrt(f.squaredNorm() / 3), 1e-12);
  EXPECT_NEAR((linear.inverse(linear.forward(f)) - f).norm(), 0.0, 1e-12);
  Eigen::VectorXd bad = f;
  bad[0] = -1;
  EXPECT_THROW(TargetScaler::fit(TargetScaler::Kind::kLog, bad), orbitlaw::Error);
  EXPECT_THROW(TargetScaler::parse_kind("cubic"), orbitlaw::Error);
}
