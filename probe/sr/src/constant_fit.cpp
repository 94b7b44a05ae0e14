// Levenberg-Marquardt on residuals shaped like the loss: plain for L2, divided by y for the relative loss, in
// logarithms for the log loss, and iteratively reweighted (weights 1/|residual|) for the L1 losses. Each
// start ends with the true loss, so a start only wins when it improves the loss that is actually reported.
#include "constant_fit.hpp"

#include <Eigen/Cholesky>
#include <cmath>

#include "losses.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::sr {
namespace {

// The stream of a fit run on its own (not inside a search, whose populations own their generators).
constexpr std::uint64_t kStandaloneFitStream = 0x666974;  // "fit"

enum class Residual { kLinear, kLog };

Eigen::VectorXd get_constants(const Expr& e) {
  Eigen::VectorXd c(e.constant_count());
  int k = 0;
  for (const Node& n : e.nodes()) {
    if (n.op == Op::kConst) c[k++] = n.value;
  }
  return c;
}

void set_constants(Expr& e, const Eigen::VectorXd& c) {
  int k = 0;
  for (Node& n : e.nodes()) {
    if (n.op == Op::kConst) n.value = c[k++];
  }
}

class LevenbergMarquardt {
 public:
  LevenbergMarquardt(const FitTarget& target, std::int64_t& evaluations)
      : target_(target), evaluations_(evaluations) {
    if (target.kind == LossKind::kLog) log_y_ = target.y.log();
  }

  // Minimises sum (scale * (f(p) - f(y)))^2 with f = identity or log, until a step lowers it by less than
  // `tolerance` times itself; returns false if it could not start.
  bool run(Expr& e, Residual kind, const Eigen::ArrayXd& scale, int iterations, double tolerance = 1e-10) {
    Eigen::VectorXd c = get_constants(e);
    Eigen::ArrayXd r;
    Eigen::MatrixXd J;
    if (!residual_and_jacobian(e, kind, scale, r, J)) return false;
    double cost = r.matrix().squaredNorm();
    double lambda = 1e-3;
    for (int it = 0; it < iterations; ++it) {
      Eigen::MatrixXd A = J.transpose() * J;
      Eigen::VectorXd g = J.transpose() * r.matrix();
      bool accepted = false;
      double new_cost = cost;
      Eigen::VectorXd trial;
      // A few damping increases per iteration; failing all of them means c is a (local) optimum.
      for (int tries = 0; tries < 8 && lambda < 1e12; ++tries) {
        Eigen::MatrixXd damped = A;
        damped.diagonal() += lambda * A.diagonal().cwiseMax(1e-12);
        trial = c - damped.ldlt().solve(g);
        if (!trial.allFinite()) {
          lambda *= 4;
          continue;
        }
        set_constants(e, trial);
        Eigen::ArrayXd trial_r;
        if (residual(e, kind, scale, trial_r)) {
          new_cost = trial_r.matrix().squaredNorm();
          if (new_cost < cost) {
            accepted = true;
            break;
          }
        }
        lambda *= 4;
      }
      if (!accepted) {
        set_constants(e, c);
        break;
      }
      lambda = std::max(lambda / 3, 1e-12);
      double improvement = cost - new_cost;
      c = trial;
      cost = new_cost;
      if (improvement <= tolerance * cost || cost == 0) break;
      if (!residual_and_jacobian(e, kind, scale, r, J)) break;
    }
    set_constants(e, c);
    return true;
  }

 private:
  bool residual(const Expr& e, Residual kind, const Eigen::ArrayXd& scale, Eigen::ArrayXd& r) {
    ++evaluations_;
    const Eigen::ArrayXd& p = target_.evaluator.values(e);
    if (kind == Residual::kLog) {
      r = scale * (p.log() - log_y_);
    } else {
      r = scale * (p - target_.y);
    }
    return r.allFinite();
  }
  bool residual_and_jacobian(const Expr& e, Residual kind, const Eigen::ArrayXd& scale, Eigen::ArrayXd& r,
                             Eigen::MatrixXd& J) {
    ++evaluations_;
    Eigen::ArrayXXd d;
    const Eigen::ArrayXd& p = target_.evaluator.values_and_jacobian(e, d);
    if (kind == Residual::kLog) {
      r = scale * (p.log() - log_y_);
      J = (d.colwise() * (scale / p)).matrix();
    } else {
      r = scale * (p - target_.y);
      J = (d.colwise() * scale).matrix();
    }
    return r.allFinite() && J.allFinite();
  }

  const FitTarget& target_;
  std::int64_t& evaluations_;
  Eigen::ArrayXd log_y_;  // computed once per fit, not per step
};

double true_loss(const Expr& e, const FitTarget& target, std::int64_t& evaluations) {
  ++evaluations;
  return loss_of(target.evaluator.values(e), target.y, target.kind, target.weights);
}

// One start: LM shaped for the loss kind, from the constants currently in `e`.
void fit_once(Expr& e, const FitTarget& target, int iterations, std::int64_t& evaluations) {
  LevenbergMarquardt lm(target, evaluations);
  const Eigen::Index n = target.y.size();
  Eigen::ArrayXd base = target.weights ? target.weights->sqrt().eval() : Eigen::ArrayXd::Ones(n);
  switch (target.kind) {
    case LossKind::kL2:
      lm.run(e, Residual::kLinear, base, iterations);
      break;
    case LossKind::kRelative:
      lm.run(e, Residual::kLinear, base / target.y.abs(), iterations);
      break;
    case LossKind::kLog:
      // Logarithms need positive predictions; a relative fit first brings them there when they are not.
      if (!lm.run(e, Residual::kLog, base, iterations)) {
        lm.run(e, Residual::kLinear, base / target.y.abs(), iterations);
        lm.run(e, Residual::kLog, base, iterations);
      }
      break;
    case LossKind::kL1:
    case LossKind::kThresholdedL1: {
      // Iteratively reweighted least squares: |e| = e^2 / |e|, weights from the previous round.
      const double floor =
          target.kind == LossKind::kThresholdedL1 ? 1e-8 : 1e-12 * (target.y.abs().mean() + 1e-300);
      const double tolerance = target.effort.run_tolerance;
      lm.run(e, Residual::kLinear, base, iterations, tolerance);
      double previous = INFINITY;
      for (int round = 0; round < target.effort.l1_rounds; ++round) {
        ++evaluations;
        Eigen::ArrayXd residual = (target.evaluator.values(e) - target.y).abs();
        if (!residual.allFinite()) break;
        double l1 = residual.mean();
        if (!(l1 < previous * (1 - target.effort.l1_tolerance))) break;  // converged (or no longer improving)
        previous = l1;
        lm.run(e, Residual::kLinear, base / residual.max(floor).sqrt(), iterations / 2 + 1, tolerance);
      }
      break;
    }
    case LossKind::kAuto:
      throw Error("internal error: the loss 'auto' reached the constant fit unresolved");
  }
}

}  // namespace

double fit_constants(Expr& expr, const FitTarget& target, int iterations, int restarts, Xoshiro256& rng,
                     std::int64_t& evaluations) {
  double best_loss = true_loss(expr, target, evaluations);
  if (expr.constant_count() == 0) return best_loss;
  const Eigen::VectorXd start = get_constants(expr);
  Eigen::VectorXd best = start;
  for (int attempt = 0; attempt <= restarts; ++attempt) {
    Expr trial = expr;
    if (attempt > 0) {
      // Perturb multiplicatively (keeps scale) and occasionally flip a sign.
      Eigen::VectorXd c = start;
      for (Eigen::Index k = 0; k < c.size(); ++k) {
        double magnitude = c[k] == 0 ? 1.0 : c[k];
        c[k] = magnitude * std::exp(rng.normal());
        if (rng.uniform() < 0.1) c[k] = -c[k];
      }
      set_constants(trial, c);
    }
    fit_once(trial, target, iterations, evaluations);
    double l = true_loss(trial, target, evaluations);
    if (l < best_loss) {
      best_loss = l;
      best = get_constants(trial);
    }
  }
  set_constants(expr, best);
  return best_loss;
}

double fit_constants(Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind kind,
                     const Eigen::VectorXd* weights, int restarts, int iterations, std::uint64_t seed) {
  kind = resolve_loss(kind, y);
  check_targets(y.array(), kind);
  Evaluator evaluator(X);
  Eigen::ArrayXd ya = y.array(), w;
  if (weights) w = weights->array();
  FitTarget target{evaluator, ya, weights ? &w : nullptr, kind};
  Xoshiro256 rng(seed, kStandaloneFitStream, 0);
  std::int64_t evaluations = 0;
  return fit_constants(expr, target, iterations, restarts, rng, evaluations);
}

}  // namespace orbitlaw::sr
