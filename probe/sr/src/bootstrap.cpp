// Bootstrap intervals of a law's constants: how far the rows the law was fitted on pin its constants down,
// so that `r^1.973` can be read against `r^2` with an interval rather than by eye.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

constexpr std::uint64_t kBootstrapStream = 0x626f6f74;  // "boot": apart from the search's streams
constexpr int kRefitIterations = 30;

std::vector<double> constants_of(const Expr& expr) {
  std::vector<double> out;
  for (const Node& node : expr.nodes()) {
    if (node.op == Op::kConst) out.push_back(node.value);
  }
  return out;
}

}  // namespace

std::pair<double, double> percentile_interval(std::vector<double> values, double confidence) {
  if (values.empty()) return {NAN, NAN};
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const auto above = std::min(below + 1, values.size() - 1);
    const double t = position - static_cast<double>(below);
    return values[below] + t * (values[above] - values[below]);
  };
  const double tail = (1 - confidence) / 2;
  return {at(tail), at(1 - tail)};
}

Bootstrap bootstrap_constants(const Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                              LossKind kind, int resamples, double confidence, std::uint64_t seed) {
  if (resamples < 0) throw Error("bootstrap: resamples must be >= 0, got " + std::to_string(resamples));
  if (!(confidence > 0 && confidence < 1)) throw Error("bootstrap: confidence must lie in (0, 1)");
  if (X.rows() != y.size() || X.rows() < 2) throw Error("bootstrap: needs at least 2 rows of X and y alike");
  kind = resolve_loss(kind, y);
  // Vafa et al.'s loss counts residuals below 1e-8 as 0, an absolute threshold: on forces of order 1e-5 with
  // small noise every constant near the fit scores 0, no refit may move, and the interval had width 0. The
  // search meets that loss on a target scaled to a root mean square of 2^13 (scaling.hpp), where 1e-8 lies
  // below the L1 fit's own rounding floor; plain L1 is that loss in any units, so the refits use it.
  if (kind == LossKind::kThresholdedL1) kind = LossKind::kL1;
  Bootstrap out;
  out.confidence = confidence;
  const std::vector<double> fitted = constants_of(expr);
  out.constants.resize(fitted.size());
  for (std::size_t k = 0; k < fitted.size(); ++k) out.constants[k].value = fitted[k];
  if (fitted.empty()) return out;

  Xoshiro256 rng(seed, kBootstrapStream, 0);
  const Eigen::Index rows = X.rows();
  Eigen::MatrixXd Xs(rows, X.cols());
  Eigen::VectorXd ys(rows);
  std::vector<std::vector<double>> samples(fitted.size());
  for (int b = 0; b < resamples; ++b) {
    for (Eigen::Index i = 0; i < rows; ++i) {
      const auto j = static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(rows)));
      Xs.row(i) = X.row(j);
      ys[i] = y[j];
    }
    Expr refit = expr;  // starts from the full-data constants: the refit measures the spread around them
    const double l = fit_constants(refit, Xs, ys, kind, nullptr, 0, kRefitIterations, seed);
    ++out.resamples;
    if (!std::isfinite(l)) {
      ++out.failed;
      continue;
    }
    const std::vector<double> c = constants_of(refit);
    for (std::size_t k = 0; k < c.size(); ++k) samples[k].push_back(c[k]);
    out.refits.push_back(std::move(refit));
  }
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    std::tie(out.constants[k].low, out.constants[k].high) = percentile_interval(samples[k], confidence);
  }
  return out;
}

}  // namespace orbitlaw::sr
