// The nearest-neighbour test of residual_structure.hpp: a brute-force neighbour search, O(rows^2 x columns),
// which for the search's few hundred fitted rows costs less than one generation.
#include "residual_structure.hpp"

#include <cmath>
#include <limits>

namespace orbitlaw::sr {

Eigen::ArrayXd loss_residuals(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind) {
  switch (kind) {
    case LossKind::kRelative:
      return (prediction - y) / y;
    case LossKind::kLog:
      return prediction.log() - y.log();  // NaN where prediction <= 0
    default:
      return prediction - y;
  }
}

double neighbour_variance_ratio(const Eigen::MatrixXd& X, const Eigen::ArrayXd& residual) {
  const Eigen::Index rows = X.rows();
  if (rows < 3 || residual.size() != rows || !residual.allFinite()) return NAN;
  const double variance = (residual - residual.mean()).square().mean();
  if (!(variance > 0)) return NAN;
  // Inputs on a unit range; constant columns carry no distance.
  Eigen::MatrixXd unit(rows, 0);
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    const double low = X.col(j).minCoeff(), range = X.col(j).maxCoeff() - low;
    if (!(range > 0) || !std::isfinite(range)) continue;
    unit.conservativeResize(Eigen::NoChange, unit.cols() + 1);
    unit.col(unit.cols() - 1) = (X.col(j).array() - low) / range;
  }
  if (unit.cols() == 0) return NAN;
  const Eigen::MatrixXd by_row = unit.transpose();  // one column per row: contiguous for the distances
  double sum = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    double nearest = std::numeric_limits<double>::infinity();
    Eigen::Index at = -1;
    for (Eigen::Index k = 0; k < rows; ++k) {
      if (k == i) continue;
      const double d = (by_row.col(k) - by_row.col(i)).squaredNorm();
      if (d < nearest) {
        nearest = d;
        at = k;
      }
    }
    const double difference = residual[i] - residual[at];
    sum += difference * difference;
  }
  return 0.5 * sum / static_cast<double>(rows) / variance;
}

}  // namespace orbitlaw::sr
