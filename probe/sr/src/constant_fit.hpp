#pragma once
// Fitting the constants of an expression by Levenberg-Marquardt with restarts.
#include <Eigen/Core>

#include "evaluator.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

// How hard a fit works on the L1 losses: a Levenberg-Marquardt run on the squared residuals, then rounds of
// runs reweighted by the previous round's residuals (iteratively reweighted least squares), most of a fit's
// cost. A search fits the constants of thousands of children a second, and a near-optimum ranks a child as
// well as the optimum does: kSearchFit, fewer rounds and runs that stop sooner (each run solves a problem
// whose weights the next round changes). The final hall of fame, bootstrap refits and fit_constants() on its
// own take kThoroughFit. The other losses fit the same either way.
struct FitEffort {
  int l1_rounds;         // at most this many reweighting rounds after the first run
  double l1_tolerance;   // ... stopping when a round lowers the L1 loss by less than this share
  double run_tolerance;  // a run stops when a step lowers its cost by less than this share
};
inline constexpr FitEffort kThoroughFit{8, 1e-6, 1e-10};
inline constexpr FitEffort kSearchFit{3, 1e-3, 1e-6};

struct FitTarget {
  Evaluator& evaluator;  // rows to fit on (all data, or a batch)
  const Eigen::ArrayXd& y;
  const Eigen::ArrayXd* weights;  // may be null
  LossKind kind;
  FitEffort effort = kThoroughFit;
};

// Fits the constants of `expr` in place; returns the loss on the target's rows (kept only if it improved).
// `evaluations` is increased by the number of expression evaluations used.
double fit_constants(Expr& expr, const FitTarget& target, int iterations, int restarts, Xoshiro256& rng,
                     std::int64_t& evaluations);

}  // namespace orbitlaw::sr
