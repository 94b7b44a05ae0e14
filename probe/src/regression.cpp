#include "orbitlaw/probe/regression.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::probe {

TargetScaler::Kind TargetScaler::parse_kind(const std::string& name) {
  if (name == "log") return Kind::kLog;
  if (name == "linear") return Kind::kLinear;
  throw Error("probe config: unknown target scaling '" + name + "' (known: log, linear)");
}

std::string TargetScaler::to_string(Kind kind) { return kind == Kind::kLog ? "log" : "linear"; }

TargetScaler TargetScaler::fit(Kind kind, const Eigen::VectorXd& train_force) {
  if (train_force.size() < 2) throw Error("target scaling: need at least 2 training labels");
  if (!train_force.allFinite()) throw Error("target scaling: a training label is not finite");
  TargetScaler scaler;
  scaler.kind_ = kind;
  const double n = static_cast<double>(train_force.size());
  if (kind == Kind::kLog) {
    if ((train_force.array() <= 0).any())
      throw Error("target scaling 'log': a training force is not positive");
    const Eigen::ArrayXd logs = train_force.array().log();
    scaler.shift_ = logs.mean();
    scaler.scale_ = std::sqrt((logs - scaler.shift_).square().sum() / n);
  } else {
    scaler.shift_ = 0;
    scaler.scale_ = std::sqrt(train_force.squaredNorm() / n);
  }
  if (!(scaler.scale_ > 0)) scaler.scale_ = 1;
  return scaler;
}

Eigen::VectorXd TargetScaler::forward(const Eigen::VectorXd& force) const {
  if (kind_ == Kind::kLog) return ((force.array().log() - shift_) / scale_).matrix();
  return force / scale_;
}

Eigen::VectorXd TargetScaler::inverse(const Eigen::VectorXd& target) const {
  if (kind_ == Kind::kLog) return (target.array() * scale_ + shift_).exp().matrix();
  return target * scale_;
}

Json TargetScaler::json() const {
  return Json{{"kind", to_string(kind_)}, {"shift", shift_}, {"scale", scale_}};
}

NormalEquations::NormalEquations(int features)
    : sx_(Eigen::VectorXd::Zero(features)),
      sxy_(Eigen::VectorXd::Zero(features)),
      sxx_(Eigen::MatrixXd::Zero(features, features)) {}

void NormalEquations::add(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  if (X.cols() != sx_.size() || X.rows() != y.size()) {
    throw Error("ridge: a feature batch has shape [" + std::to_string(X.rows()) + ", " +
                std::to_string(X.cols()) + "], expected [" + std::to_string(y.size()) + ", " +
                std::to_string(sx_.size()) + "]");
  }
  if (!X.allFinite() || !y.allFinite()) throw Error("ridge: a feature or target is not finite");
  n_ += X.rows();
  sx_ += X.colwise().sum().transpose();
  sxy_ += X.transpose() * y;
  sxx_.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  sy_ += y.sum();
  syy_ += y.squaredNorm();
}

void NormalEquations::add_sums(std::int64_t rows, const Eigen::VectorXd& sum_x, const Eigen::VectorXd& sum_xy,
                               const Eigen::MatrixXd& sum_xx, double sum_y, double sum_yy) {
  const auto d = sx_.size();
  if (rows < 0 || sum_x.size() != d || sum_xy.size() != d || sum_xx.rows() != d || sum_xx.cols() != d) {
    throw Error("ridge: sums of the wrong shape for " + std::to_string(d) + " features");
  }
  if (!sum_x.allFinite() || !sum_xy.allFinite() || !sum_xx.allFinite() || !std::isfinite(sum_y) ||
      !std::isfinite(sum_yy)) {
    throw Error("ridge: a feature or target is not finite");
  }
  n_ += rows;
  sx_ += sum_x;
  sxy_ += sum_xy;
  sxx_.triangularView<Eigen::Lower>() += sum_xx;
  sy_ += sum_y;
  syy_ += sum_yy;
}

NormalEquations::Solution NormalEquations::solve(double lambda) const {
  if (n_ < 2) throw Error("ridge: need at least 2 rows, have " + std::to_string(n_));
  const double n = static_cast<double>(n_);
  const Eigen::VectorXd mx = sx_ / n;
  const double my = sy_ / n;
  Eigen::MatrixXd cov = sxx_.selfadjointView<Eigen::Lower>();
  cov = cov / n - mx * mx.transpose();
  const Eigen::VectorXd cxy = sxy_ / n - mx * my;
  const double mean_variance = std::max(cov.diagonal().mean(), std::numeric_limits<double>::min());
  cov.diagonal().array() += lambda * mean_variance;
  Solution solution;
  solution.lambda = lambda;
  solution.weights = cov.ldlt().solve(cxy);
  solution.intercept = my - mx.dot(solution.weights);
  return solution;
}

Eigen::VectorXd NormalEquations::Solution::predict(const Eigen::MatrixXd& X) const {
  return (X * weights).array() + intercept;
}

double NormalEquations::mse(const Solution& s) const {
  if (n_ == 0) return std::numeric_limits<double>::quiet_NaN();
  // sum (w.x + b - y)^2 expanded over the accumulated sums.
  const Eigen::MatrixXd sxx = sxx_.selfadjointView<Eigen::Lower>();
  const double n = static_cast<double>(n_);
  const double quad = s.weights.dot(sxx * s.weights);
  const double total = quad + 2 * s.intercept * s.weights.dot(sx_) + n * s.intercept * s.intercept -
                       2 * s.weights.dot(sxy_) - 2 * s.intercept * sy_ + syy_;
  return std::max(0.0, total) / n;
}

double NormalEquations::y_mean() const { return n_ ? sy_ / static_cast<double>(n_) : 0; }
double NormalEquations::y_variance() const {
  if (n_ == 0) return 0;
  const double m = y_mean();
  return std::max(0.0, syy_ / static_cast<double>(n_) - m * m);
}

RidgeSelection select_ridge(const NormalEquations& train, const NormalEquations& validation,
                            const std::vector<double>& lambdas) {
  if (lambdas.empty()) throw Error("ridge: no lambdas to choose from");
  if (validation.rows() == 0) throw Error("ridge: no validation rows to choose lambda on");
  RidgeSelection selection;
  selection.validation_mse = std::numeric_limits<double>::infinity();
  for (double lambda : lambdas) {
    if (!(lambda >= 0)) throw Error("ridge: lambda must be >= 0");
    auto solution = train.solve(lambda);
    const double mse = validation.mse(solution);
    selection.lambdas.push_back(lambda);
    selection.validation_mses.push_back(mse);
    if (mse < selection.validation_mse) {
      selection.validation_mse = mse;
      selection.solution = solution;
    }
  }
  if (selection.solution.weights.size() == 0) throw Error("ridge: no lambda gives a finite validation error");
  return selection;
}

std::vector<double> default_ridge_lambdas() {
  std::vector<double> lambdas;
  for (int e = -6; e <= 2; ++e) lambdas.push_back(std::pow(10.0, e));
  return lambdas;
}

}  // namespace orbitlaw::probe
