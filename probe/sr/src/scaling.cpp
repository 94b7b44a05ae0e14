#include "scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace orbitlaw::sr {
namespace {

// round(log2(root mean square of v)), computed without over- or underflow; 0 for a column of zeros.
int magnitude_exponent(const Eigen::VectorXd& v) {
  const double largest = v.cwiseAbs().maxCoeff();
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  const int e = std::ilogb(largest);
  const double rms = std::sqrt((v.array() * std::ldexp(1.0, -e)).square().mean());  // in units of 2^e
  return e + static_cast<int>(std::lround(std::log2(rms)));
}

std::string power_of_two(int k) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "2^%d (%.3g)", k, std::ldexp(1.0, k));
  return buffer;
}

}  // namespace

Scaling Scaling::choose(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind loss) {
  Scaling s;
  const int ky = magnitude_exponent(y);
  if (loss == LossKind::kThresholdedL1) {
    s.y = ky - kThresholdedL1;
  } else if (std::abs(ky) > kFree) {
    s.y = ky;
  }
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    const int kx = magnitude_exponent(X.col(j));
    s.x.push_back(std::abs(kx) > kFree ? kx : 0);
  }
  return s;
}

bool Scaling::any() const {
  if (y != 0) return true;
  for (int k : x) {
    if (k != 0) return true;
  }
  return false;
}

Eigen::MatrixXd Scaling::scale_x(const Eigen::MatrixXd& X) const {
  Eigen::MatrixXd out = X;
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    if (x[j] != 0) out.col(j) *= std::ldexp(1.0, -x[j]);
  }
  return out;
}

Eigen::VectorXd Scaling::scale_y(const Eigen::VectorXd& v) const { return v * std::ldexp(1.0, -y); }

Expr Scaling::to_data_units(const Expr& law, const Eigen::MatrixXd& X_scaled) const {
  if (!any()) return law;
  std::vector<Node> nodes;
  if (y != 0) {
    nodes.push_back(Node{Op::kMul, 0, 0});
    nodes.push_back(Node{Op::kConst, 0, std::ldexp(1.0, y)});
  }
  for (const Node& n : law.nodes()) {
    if (n.op == Op::kVar && x[n.var] != 0) {
      nodes.push_back(Node{Op::kMul, 0, 0});
      nodes.push_back(n);
      nodes.push_back(Node{Op::kConst, 0, std::ldexp(1.0, -x[n.var])});
    } else {
      nodes.push_back(n);
    }
  }
  const Expr substituted(std::move(nodes));
  const Expr simplified = simplify(substituted);
  // Both forms are evaluated on the scaled rows with the law's own variables: the data-units form's inputs
  // are the scaled ones times 2^x (exact), and its output is compared after dividing by 2^y (exact).
  Eigen::MatrixXd X_data = X_scaled;
  for (Eigen::Index j = 0; j < X_data.cols(); ++j) X_data.col(j) *= std::ldexp(1.0, x[j]);
  const Eigen::ArrayXd want = law.evaluate(X_scaled);
  const Eigen::ArrayXd got = simplified.evaluate(X_data) * std::ldexp(1.0, -y);
  // To 1e-9 of the larger of the row's value and the values' root mean square: a law that cancels large
  // terms (c*(1 - cos(a/r)) with c ~ 1e13) rounds differently once simplified, by far more than 1e-9 of its
  // small rows but not of the data's size; refusing it there would cost such laws two nodes.
  const Eigen::ArrayXd finite = want.isFinite().select(want, 0.0);
  const double largest = finite.abs().maxCoeff();
  const double rms = largest > 0 ? largest * std::sqrt((finite / largest).square().mean()) : 0.0;
  for (Eigen::Index i = 0; i < want.size(); ++i) {
    if (!std::isfinite(want[i])) continue;
    const double scale = std::max({std::abs(want[i]), rms, 1e-300});
    if (!(std::abs(got[i] - want[i]) <= 1e-9 * scale)) return substituted;
  }
  return simplified;
}

double Scaling::log_power_law_factor(const Eigen::VectorXd& exponents) const {
  double k = y;
  for (Eigen::Index j = 0; j < exponents.size(); ++j) k -= exponents[j] * x[j];
  return k * std::log(2.0);
}

std::string Scaling::notice(const std::vector<std::string>& names) const {
  if (!any()) return "";
  std::string scaled;
  if (y != 0) scaled = "the target by " + power_of_two(y);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (x[j] != 0) scaled += (scaled.empty() ? "" : ", ") + names[j] + " by " + power_of_two(x[j]);
  }
  return "the search divided " + scaled +
         " (so that any magnitude is searched alike); the losses are in those units, the laws in the data's";
}

}  // namespace orbitlaw::sr
