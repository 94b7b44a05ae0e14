// The losses of sr.hpp and the public loss() entry point.
#include "losses.hpp"

#include <cmath>

#include "evaluator.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::sr {

Eigen::ArrayXd row_losses(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind) {
  switch (kind) {
    case LossKind::kL2:
      return (prediction - y).square();
    case LossKind::kL1:
      return (prediction - y).abs();
    case LossKind::kRelative:
      return ((prediction - y) / y).square();
    case LossKind::kLog:
      return (prediction.log() - y.log()).square();
    case LossKind::kThresholdedL1:
      return (prediction - y).abs().max(1e-8) - 1e-8;
    case LossKind::kAuto:
      break;
  }
  return row_losses(prediction, y, choose_loss(y.matrix()));
}

double loss_of(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind,
               const Eigen::ArrayXd* weights) {
  if (!prediction.allFinite()) return INFINITY;
  kind = kind == LossKind::kAuto ? choose_loss(y.matrix()) : kind;
  if (kind == LossKind::kLog && (prediction <= 0).any()) return INFINITY;
  const Eigen::ArrayXd per_row = row_losses(prediction, y, kind);
  double value = weights ? (per_row * *weights).sum() / weights->sum() : per_row.mean();
  return std::isfinite(value) ? value : INFINITY;
}

LossKind choose_loss(const Eigen::VectorXd& y) {
  if (y.size() == 0) return LossKind::kL2;
  const double lo = y.minCoeff(), hi = y.maxCoeff();
  return lo > 0 && hi > 100 * lo ? LossKind::kLog : LossKind::kL2;
}

LossKind resolve_loss(LossKind kind, const Eigen::VectorXd& y) {
  return kind == LossKind::kAuto ? choose_loss(y) : kind;
}

void check_targets(const Eigen::ArrayXd& y, LossKind kind) {
  // kAuto chooses a loss that suits y, so it needs no check.
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    if (kind == LossKind::kLog && !(y[i] > 0)) {
      throw Error("the log loss needs positive targets, but row " + std::to_string(i + 1) +
                  " has y = " + std::to_string(y[i]));
    }
    if (kind == LossKind::kRelative && y[i] == 0) {
      throw Error("the relative loss needs non-zero targets, but row " + std::to_string(i + 1) +
                  " has y = 0");
    }
  }
}

double loss(const Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind kind,
            const Eigen::VectorXd* weights) {
  Evaluator evaluator(X);
  Eigen::ArrayXd w;
  if (weights) w = weights->array();
  return loss_of(evaluator.values(expr), y.array(), resolve_loss(kind, y), weights ? &w : nullptr);
}

}  // namespace orbitlaw::sr
