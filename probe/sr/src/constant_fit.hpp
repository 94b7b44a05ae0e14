#pragma once
// Fitting the constants of an expression by Levenberg-Marquardt with restarts.
#include <Eigen/Core>

#include "evaluator.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

struct FitTarget {
  Evaluator& evaluator;  // rows to fit on (all data, or a batch)
  const Eigen::ArrayXd& y;
  const Eigen::ArrayXd* weights;  // may be null
  LossKind kind;
};

// Fits the constants of `expr` in place; returns the loss on the target's rows (kept only if it improved).
// `evaluations` is increased by the number of expression evaluations used.
double fit_constants(Expr& expr, const FitTarget& target, int iterations, int restarts, Xoshiro256& rng,
                     std::int64_t& evaluations);

}  // namespace orbitlaw::sr
