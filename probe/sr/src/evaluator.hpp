#pragma once
// Evaluates expressions over all rows of a data matrix at once, column-wise with Eigen arrays, reusing its
// buffers between calls (one Evaluator per thread). Optionally also the Jacobian with respect to the
// constants (forward-mode differentiation), which Levenberg-Marquardt needs.
#include <Eigen/Core>
#include <vector>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

class Evaluator {
 public:
  explicit Evaluator(const Eigen::MatrixXd& X) : X_(X) {}
  const Eigen::MatrixXd& data() const { return X_; }
  Eigen::Index rows() const { return X_.rows(); }

  // Values of `expr` on every row; non-finite where the expression is undefined.
  const Eigen::ArrayXd& values(const Expr& expr);
  // Values and d(values)/d(constant k), constants numbered in prefix order. Returns the values.
  const Eigen::ArrayXd& values_and_jacobian(const Expr& expr, Eigen::ArrayXXd& jacobian);

 private:
  const Eigen::MatrixXd& X_;
  std::vector<Eigen::ArrayXd> values_;
  std::vector<Eigen::ArrayXXd> derivatives_;
  std::vector<char> has_constant_;
};

}  // namespace orbitlaw::sr
