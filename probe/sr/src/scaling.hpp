#pragma once
// The search in the data's own units: targets and inputs of any finite magnitude (1e-170, 1e170) are divided
// by powers of two that bring them near 1 before the search, and the laws found are mapped back afterwards.
// Powers of two, because multiplying by one is exact in floating point: the scaled data are the data, and a
// law mapped back predicts what the scaled law predicted, bit for bit up to the simplifier's rounding.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

struct Scaling {
  int y = 0;           // the search sees y * 2^-y
  std::vector<int> x;  // and column j as x_j * 2^-x[j]

  // Columns whose root mean square lies within 2^±kFree of 1 are left as they are, so that the search on
  // ordinary data is unchanged (a scaled column turns a constant-free law such as x0 + x1 into one with a
  // constant factor). Beyond, squared losses under- or overflow and constants must be found at magnitudes the
  // search does not start from.
  //
  // The target of the thresholded L1 loss is always scaled, to a root mean square of 2^kThresholdedL1: its
  // threshold 1e-8 is absolute, so on forces of order 1e-5 every expression within 1e-8 (a thousandth) scored
  // 0, and the search stopped at a Taylor-series stand-in such as c*(1 - cos(a/r)) for Newton. At 1e-8 of
  // the target's size the stand-ins still tie with Newton (their error can be made 1e-9 of it); at about
  // 1e-12 (1e-8 / 2^13), the engine's rounding floor of L1 losses (loss_floor()), they cannot, since the
  // cancellation in 1 - cos(a/r) then costs more than that. The threshold keeps its role, counting rounding
  // noise as 0, in any units.
  static constexpr int kThresholdedL1 = 13;
  static constexpr int kFree = 20;

  static Scaling choose(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind loss);
  bool any() const;
  Eigen::MatrixXd scale_x(const Eigen::MatrixXd& X) const;
  Eigen::VectorXd scale_y(const Eigen::VectorXd& y) const;
  // A law found on the scaled data, in the data's units: 2^y * f(x_j * 2^-x[j]), simplified when the
  // simplified form predicts the same values on `X_scaled` (the scaled rows) to 1e-9, else as substituted.
  Expr to_data_units(const Expr& law, const Eigen::MatrixXd& X_scaled) const;
  // The natural logarithm of the factor that turns a power law's constant c * prod x'^a into data units.
  double log_power_law_factor(const Eigen::VectorXd& exponents) const;
  // One line for Result::notices; empty when nothing is scaled.
  std::string notice(const std::vector<std::string>& names) const;
};

}  // namespace orbitlaw::sr
