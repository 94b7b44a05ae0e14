#pragma once
// Whether what an expression leaves unexplained is noise or a law not yet found, judged from the data alone.
//
// Independent noise e has E(e_i - e_j)^2 = 2 var(e) for any two rows i, j. A residual that is a smooth
// function of the inputs (the part of the law the expression misses) takes close values at neighbouring
// inputs, so the difference between a row's residual and that of its nearest neighbour is much smaller than
// the residual. The ratio
//     half the mean of (r_i - r_nn(i))^2  /  variance of r
// (the difference-based variance estimate of Rice (1984) over the residual's own variance) is about 1 for
// noise and falls towards 0 as the residual's structure dominates. Inputs are scaled to a unit range per
// column for the neighbour search. In many dimensions neighbours are far apart and the ratio drifts towards 1
// whatever the residual: the test then says "noise", which is the cautious answer for the search's stop.
#include <Eigen/Core>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

// The residual whose mean square the loss measures: prediction - y (L2, L1, thresholded L1), (prediction -
// y) / y (relative), ln prediction - ln y (log). Not finite where the prediction does not suit the loss.
Eigen::ArrayXd loss_residuals(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind);

// The ratio above for `residual` on the rows of X; NaN with fewer than 3 rows, a residual that is not finite
// or has no variance, or no input that varies.
double neighbour_variance_ratio(const Eigen::MatrixXd& X, const Eigen::ArrayXd& residual);

// The search takes a ratio below Options::structured_below (0.5) for structure, a law not found. For noise
// the ratio's standard error is about sqrt(2 / rows) (0.07 at 400 rows), so 0.5 is several of them below 1.

}  // namespace orbitlaw::sr
