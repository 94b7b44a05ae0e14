#pragma once
// Target scaling of force labels and ridge regression from streamed features (normal equations), used by the
// linear probes on frozen hidden states and by the random-feature control.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe {

// Forces span about eight orders of magnitude (1e-10 .. 1e-2 Msun AU / yr^2 in the two-body preset), so a
// regression on raw forces would fit the largest ones only. Targets are therefore:
//   "log"    y = (ln F - mu) / sigma, mu and sigma = mean and standard deviation of ln F over the TRAIN rows;
//            predictions are exp(mu + sigma * y) (always positive). The default.
//   "linear" y = F / s, s = root mean square of F over the TRAIN rows (Vafa et al.'s raw-force regression up
//            to a constant factor); predictions are s * y.
class TargetScaler {
 public:
  enum class Kind { kLog, kLinear };
  static Kind parse_kind(const std::string& name);  // throws Error naming the bad value
  static std::string to_string(Kind kind);

  TargetScaler() = default;
  // Fits shift and scale on training forces (all > 0 and finite for kLog; throws Error otherwise).
  static TargetScaler fit(Kind kind, const Eigen::VectorXd& train_force);
  Eigen::VectorXd forward(const Eigen::VectorXd& force) const;   // force -> target
  Eigen::VectorXd inverse(const Eigen::VectorXd& target) const;  // target -> force
  Kind kind() const { return kind_; }
  double shift() const { return shift_; }
  double scale() const { return scale_; }
  Json json() const;

 private:
  Kind kind_ = Kind::kLog;
  double shift_ = 0, scale_ = 1;
};

// Sufficient statistics of a least-squares problem with intercept: sums of x, y, x x^T, x y, y^2.
// Rows can be added in any number of batches, so features never need to be held in memory at once.
class NormalEquations {
 public:
  explicit NormalEquations(int features);
  void add(const Eigen::MatrixXd& X, const Eigen::VectorXd& y);  // X [n, features]; non-finite rows throw
  // The same accumulation from sums formed elsewhere (e.g. on a GPU): `rows` rows with column sums `sum_x`,
  // X^T y `sum_xy`, X^T X `sum_xx` (at least its lower triangle), and the sums of y and y^2.
  void add_sums(std::int64_t rows, const Eigen::VectorXd& sum_x, const Eigen::VectorXd& sum_xy,
                const Eigen::MatrixXd& sum_xx, double sum_y, double sum_yy);
  std::int64_t rows() const { return n_; }
  int features() const { return static_cast<int>(sx_.size()); }

  // Ridge solution on centred data: w = (C + lambda * mean(diag C) * I)^-1 c, intercept from the means, so
  // lambda is relative to the average feature variance. Throws Error with fewer than 2 rows.
  struct Solution {
    Eigen::VectorXd weights;
    double intercept = 0;
    double lambda = 0;
    Eigen::VectorXd predict(const Eigen::MatrixXd& X) const;
  };
  Solution solve(double lambda) const;
  // Mean squared error of a solution on the rows accumulated here.
  double mse(const Solution& solution) const;
  // Mean and variance of y over the accumulated rows.
  double y_mean() const;
  double y_variance() const;

 private:
  std::int64_t n_ = 0;
  Eigen::VectorXd sx_, sxy_;
  Eigen::MatrixXd sxx_;
  double sy_ = 0, syy_ = 0;
};

// Picks lambda from `lambdas` by the validation rows' mean squared error (never by test rows).
struct RidgeSelection {
  NormalEquations::Solution solution;
  double validation_mse = 0;
  std::vector<double> lambdas, validation_mses;  // the whole path
};
RidgeSelection select_ridge(const NormalEquations& train, const NormalEquations& validation,
                            const std::vector<double>& lambdas);
std::vector<double> default_ridge_lambdas();  // 1e-6 .. 1e2, one per decade

}  // namespace orbitlaw::probe
