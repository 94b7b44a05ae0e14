#include "orbitlaw/probe/statistics.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/units.hpp"

namespace orbitlaw::probe {

namespace {

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

double r_squared(const Eigen::VectorXd& truth, const Eigen::VectorXd& prediction) {
  if (truth.size() != prediction.size()) throw Error("r_squared: truth and prediction differ in length");
  double sum = 0;
  std::int64_t n = 0;
  for (Eigen::Index i = 0; i < truth.size(); ++i) {
    if (std::isfinite(truth[i]) && std::isfinite(prediction[i])) {
      sum += truth[i];
      ++n;
    }
  }
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const double mean = sum / static_cast<double>(n);
  double ss_res = 0, ss_tot = 0;
  for (Eigen::Index i = 0; i < truth.size(); ++i) {
    if (std::isfinite(truth[i]) && std::isfinite(prediction[i])) {
      ss_res += (prediction[i] - truth[i]) * (prediction[i] - truth[i]);
      ss_tot += (truth[i] - mean) * (truth[i] - mean);
    }
  }
  if (!(ss_tot > 0)) return std::numeric_limits<double>::quiet_NaN();
  return 1 - ss_res / ss_tot;
}

RelativeError relative_error(const Eigen::VectorXd& truth, const Eigen::VectorXd& prediction) {
  if (truth.size() != prediction.size()) throw Error("relative_error: truth and prediction differ in length");
  std::vector<double> errors;
  for (Eigen::Index i = 0; i < truth.size(); ++i) {
    const double e = std::abs(prediction[i] - truth[i]) / std::abs(truth[i]);
    if (std::isfinite(e)) errors.push_back(e);
  }
  RelativeError out;
  out.rows = static_cast<std::int64_t>(errors.size());
  if (errors.empty()) {
    out.median = out.mean = out.p90 = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::sort(errors.begin(), errors.end());
  double sum = 0;
  for (double e : errors) sum += e;
  out.mean = sum / static_cast<double>(errors.size());
  out.median = quantile_of_sorted(errors, 0.5);
  out.p90 = quantile_of_sorted(errors, 0.9);
  return out;
}

Json RelativeError::json() const {
  return Json{{"median", median}, {"mean", mean}, {"p90", p90}, {"rows", rows}};
}

double student_t_quantile(double confidence, double dof) {
  if (!(confidence > 0 && confidence < 1)) throw Error("confidence must lie in (0, 1)");
  if (!(dof > 0)) throw Error("student_t_quantile: degrees of freedom must be positive");
  boost::math::students_t distribution(dof);
  return boost::math::quantile(distribution, 0.5 + confidence / 2);
}

PowerLawFit fit_power_law(const Eigen::VectorXd& r, const Eigen::VectorXd& m1, const Eigen::VectorXd& m2,
                          const Eigen::VectorXd& force, double confidence) {
  const auto n = r.size();
  if (m1.size() != n || m2.size() != n || force.size() != n) {
    throw Error("power-law fit: r, m1, m2 and force differ in length");
  }
  std::vector<Eigen::Index> usable;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (force[i] > 0 && r[i] > 0 && m1[i] > 0 && m2[i] > 0 && std::isfinite(force[i]) &&
        std::isfinite(r[i]) && std::isfinite(m1[i]) && std::isfinite(m2[i])) {
      usable.push_back(i);
    }
  }
  PowerLawFit fit;
  fit.confidence = confidence;
  fit.rows = static_cast<std::int64_t>(usable.size());
  fit.dropped = n - fit.rows;
  if (fit.rows < 5) {
    throw Error("power-law fit: " + std::to_string(fit.rows) +
                " usable rows (positive, finite); need at least 5");
  }
  const auto k = static_cast<Eigen::Index>(usable.size());
  const Eigen::VectorXd* inputs[4] = {nullptr, &m1, &m2, &r};
  // The design's columns: the intercept, then each input whose logarithm varies over the usable rows.
  std::vector<int> columns = {0};
  for (int c = 1; c < 4; ++c) {
    const double first = std::log((*inputs[c])[usable[0]]);
    bool varies = false;
    for (const auto j : usable) varies = varies || std::log((*inputs[c])[j]) != first;
    fit.identified[c] = varies;
    if (varies) columns.push_back(c);
  }
  if (!fit.identified[3]) throw Error("power-law fit: r is the same on every row; no exponent of r to fit");
  const auto p = static_cast<Eigen::Index>(columns.size());
  Eigen::MatrixXd X(k, p);
  Eigen::VectorXd y(k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const auto j = usable[i];
    for (Eigen::Index c = 0; c < p; ++c) X(i, c) = columns[c] == 0 ? 1.0 : std::log((*inputs[columns[c]])[j]);
    y[i] = std::log(force[j]);
  }
  // QR with column pivoting reports rank; a rank-deficient design (collinear inputs) has no unique fit.
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(X);
  if (qr.rank() < p) throw Error("power-law fit: ln m1, ln m2 and ln r are collinear; no unique fit");
  const Eigen::VectorXd beta = qr.solve(y);
  const Eigen::VectorXd residual = y - X * beta;
  const double dof = static_cast<double>(k - p);
  const double sigma2 = dof > 0 ? residual.squaredNorm() / dof : 0;
  const Eigen::MatrixXd covariance = sigma2 * (X.transpose() * X).inverse();
  const double t = dof > 0 ? student_t_quantile(confidence, dof) : std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  fit.estimate.fill(kNaN);
  fit.std_error.fill(kNaN);
  fit.ci_low.fill(kNaN);
  fit.ci_high.fill(kNaN);
  for (Eigen::Index c = 0; c < p; ++c) {
    const int i = columns[c];
    fit.estimate[i] = beta[c];
    fit.std_error[i] = std::sqrt(std::max(0.0, covariance(c, c)));
    fit.ci_low[i] = beta[c] - t * fit.std_error[i];
    fit.ci_high[i] = beta[c] + t * fit.std_error[i];
  }
  fit.residual_std = std::sqrt(sigma2);
  const double ss_tot = (y.array() - y.mean()).square().sum();
  fit.r2_log = ss_tot > 0 ? 1 - residual.squaredNorm() / ss_tot : std::numeric_limits<double>::quiet_NaN();
  return fit;
}

Json PowerLawFit::json() const {
  static const char* names[4] = {"c", "a", "b", "e"};
  Json coefficients = Json::object();
  for (int i = 0; i < 4; ++i) {
    coefficients[names[i]] = Json{{"estimate", estimate[i]},
                                  {"std_error", std_error[i]},
                                  {"ci_low", ci_low[i]},
                                  {"ci_high", ci_high[i]}};
  }
  return Json{{"coefficients", coefficients},
              {"confidence", confidence},
              {"residual_std", residual_std},
              {"r2_log", r2_log},
              {"rows", rows},
              {"dropped", dropped},
              {"c_minus_ln_g", estimate[0] - std::log(kGravitationalConstant)}};
}

}  // namespace orbitlaw::probe
