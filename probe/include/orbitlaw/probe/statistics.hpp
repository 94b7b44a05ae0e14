#pragma once
// Accuracy measures of force predictions and the power-law fit ln F = c + a ln m1 + b ln m2 + e ln r.
#include <Eigen/Core>
#include <array>
#include <string>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe {

// Coefficient of determination 1 - SS_res / SS_tot over rows where both values are finite; NaN when fewer
// than 2 such rows or the truth has no spread.
double r_squared(const Eigen::VectorXd& truth, const Eigen::VectorXd& prediction);

// |prediction - truth| / |truth| over rows where it is finite (truth != 0).
struct RelativeError {
  double median = 0, mean = 0, p90 = 0;
  std::int64_t rows = 0;
  Json json() const;
};
RelativeError relative_error(const Eigen::VectorXd& truth, const Eigen::VectorXd& prediction);

// Ordinary least squares of ln F on (1, ln m1, ln m2, ln r) with Student-t confidence intervals. Rows with
// F <= 0 or a non-finite value are dropped (counted). Newton: a = b = 1, e = -2, c = ln G.
struct PowerLawFit {
  // Coefficients in the order c, a, b, e.
  std::array<double, 4> estimate{}, std_error{}, ci_low{}, ci_high{};
  double confidence = 0.95;
  double residual_std = 0;  // of ln F
  double r2_log = 0;        // R^2 of the fit in log space
  std::int64_t rows = 0, dropped = 0;
  double c() const { return estimate[0]; }
  double a() const { return estimate[1]; }
  double b() const { return estimate[2]; }
  double e() const { return estimate[3]; }
  // Whether coefficient i was estimated: a mass that is the same on every row (Liu et al.'s fixed star) has
  // an exponent no fit can identify; it is NaN and not judged.
  std::array<bool, 4> identified{true, true, true, true};
  // Whether the interval of coefficient i (0..3) contains `value`, up to a rounding allowance of 1e-9 (an
  // exact power law has zero-width intervals whose estimates differ from the exponent in the last digits).
  // An unidentified exponent covers every value: nothing can be said against it.
  bool covers(int i, double value) const {
    return !identified[i] || (ci_low[i] - 1e-9 <= value && value <= ci_high[i] + 1e-9);
  }
  // True when the intervals of a, b and e cover the given exponents (Newton's force: 1, 1, -2).
  bool consistent_with(double a, double b, double e) const {
    return covers(1, a) && covers(2, b) && covers(3, e);
  }
  bool consistent_with_newton() const { return consistent_with(1.0, 1.0, -2.0); }
  Json json() const;
};
// A mass that is constant over the usable rows drops out of the design (its exponent is unidentified, NaN).
// Throws Error if the inputs differ in length, fewer than 5 usable rows remain, r is constant, or the design
// is otherwise singular.
PowerLawFit fit_power_law(const Eigen::VectorXd& r, const Eigen::VectorXd& m1, const Eigen::VectorXd& m2,
                          const Eigen::VectorXd& force, double confidence = 0.95);

// Two-sided Student-t quantile: the t with P(|T| <= t) = confidence for `dof` degrees of freedom.
double student_t_quantile(double confidence, double dof);

}  // namespace orbitlaw::probe
