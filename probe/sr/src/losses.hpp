#pragma once
// Loss functions on predictions, and the check that targets suit a loss.
#include <Eigen/Core>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

// Mean (or weighted mean) loss; +inf if any prediction is not finite.
double loss_of(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind,
               const Eigen::ArrayXd* weights);

// The loss of each row, unweighted (NaN or inf on rows where the prediction does not suit the loss).
Eigen::ArrayXd row_losses(const Eigen::ArrayXd& prediction, const Eigen::ArrayXd& y, LossKind kind);

// Throws orbitlaw::Error if y cannot be used with the loss (y <= 0 for kLog, y == 0 for kRelative).
void check_targets(const Eigen::ArrayXd& y, LossKind kind);

}  // namespace orbitlaw::sr
