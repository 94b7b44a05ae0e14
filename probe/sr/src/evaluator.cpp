// Stack evaluation of a prefix expression read right to left: operands are pushed before their operator, so
// an operator finds its left operand on top of the stack and its right operand below it.
#include "evaluator.hpp"

#include <cmath>

namespace orbitlaw::sr {
namespace {

// Unary operator applied in place.
void apply_unary(Op op, Eigen::ArrayXd& a) {
  switch (op) {
    case Op::kNeg:
      a = -a;
      break;
    case Op::kInv:
      a = a.inverse();
      break;
    case Op::kAbs:
      a = a.abs();
      break;
    case Op::kSquare:
      a = a.square();
      break;
    case Op::kCube:
      a = a.cube();
      break;
    case Op::kSqrt:
      a = a.sqrt();
      break;  // NaN below 0
    case Op::kExp:
      a = a.exp();
      break;
    case Op::kLog:
      a = a.log();
      break;  // NaN below 0, -inf at 0
    case Op::kSin:
      a = a.sin();
      break;
    case Op::kCos:
      a = a.cos();
      break;
    default:
      break;
  }
}

// Derivative of a unary operator at a (before it was applied).
Eigen::ArrayXd unary_derivative(Op op, const Eigen::ArrayXd& a) {
  switch (op) {
    case Op::kNeg:
      return Eigen::ArrayXd::Constant(a.size(), -1.0);
    case Op::kInv:
      return -a.square().inverse();
    case Op::kAbs:
      return a.sign();
    case Op::kSquare:
      return 2.0 * a;
    case Op::kCube:
      return 3.0 * a.square();
    case Op::kSqrt:
      return 0.5 / a.sqrt();
    case Op::kExp:
      return a.exp();
    case Op::kLog:
      return a.inverse();
    case Op::kSin:
      return a.cos();
    case Op::kCos:
      return -a.sin();
    default:
      return Eigen::ArrayXd::Zero(a.size());
  }
}

// Whether a^b may be computed as exp(b log a): every base positive and finite and every exponent finite.
// Eigen vectorises exp and log, while a.pow(b) calls std::pow per row, several times slower: it took half of
// a law search's time with pow among the operators. Elsewhere std::pow keeps its rules (negative bases with
// whole exponents, 0^0 = 1, 1^inf = 1). Rounding: exp(b log a) is within |b log a| + 1 ulps of std::pow,
// 1e-13 relative for a result of 1e100.
bool power_by_logarithm(const Eigen::ArrayXd& a, const Eigen::ArrayXd& b) {
  return (a > 0).all() && (a < INFINITY).all() && b.isFinite().all();
}

// a^b element-wise.
Eigen::ArrayXd power(const Eigen::ArrayXd& a, const Eigen::ArrayXd& b) {
  if (power_by_logarithm(a, b)) return (b * a.log()).exp();
  return a.pow(b);
}

// b = a^b, and db = its derivative from da and db, the derivatives of the operands that depend on constants
// (ca, cb). With positive bases the derivatives come from a^b itself (b a^b / a and a^b log a), without a
// second and third pow.
void power_with_derivative(const Eigen::ArrayXd& a, Eigen::ArrayXd& b, const Eigen::ArrayXXd& da,
                           Eigen::ArrayXXd& db, bool ca, bool cb) {
  const bool by_logarithm = power_by_logarithm(a, b);
  Eigen::ArrayXd log_a, p;
  if (by_logarithm) {
    log_a = a.log();
    p = (b * log_a).exp();
  } else {
    p = a.pow(b);
  }
  Eigen::ArrayXd d_base, d_exponent;
  if (ca) d_base = by_logarithm ? (b * p / a).eval() : (b * a.pow(b - 1.0)).eval();
  if (cb) d_exponent = by_logarithm ? (p * log_a).eval() : (p * a.log()).eval();
  if (ca && cb) {
    db = da.colwise() * d_base + db.colwise() * d_exponent;
  } else if (ca) {
    db = da.colwise() * d_base;
  } else if (cb) {
    db.colwise() *= d_exponent;
  }
  b = std::move(p);
}

// result (stored in b) = a op b, where a is the left operand.
void apply_binary(Op op, const Eigen::ArrayXd& a, Eigen::ArrayXd& b) {
  switch (op) {
    case Op::kAdd:
      b = a + b;
      break;
    case Op::kSub:
      b = a - b;
      break;
    case Op::kMul:
      b = a * b;
      break;
    case Op::kDiv:
      b = a / b;
      break;
    case Op::kPow:
      b = power(a, b);
      break;  // NaN for a negative base and a non-integer exponent
    default:
      break;
  }
}

}  // namespace

const Eigen::ArrayXd& Evaluator::values(const Expr& expr) {
  const auto& nodes = expr.nodes();
  const Eigen::Index n = X_.rows();
  if (values_.size() < nodes.size() + 1) values_.resize(nodes.size() + 1);
  std::size_t top = 0;  // number of entries on the stack
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& node = *it;
    switch (arity(node.op)) {
      case 0:
        if (node.op == Op::kConst) {
          values_[top].setConstant(n, node.value);
        } else {
          values_[top] = X_.col(node.var).array();
        }
        ++top;
        break;
      case 1:
        apply_unary(node.op, values_[top - 1]);
        break;
      default:
        apply_binary(node.op, values_[top - 1], values_[top - 2]);
        --top;
        break;
    }
  }
  if (top == 0) {
    values_[0].setConstant(n, std::nan(""));
    top = 1;
  }
  return values_[top - 1];
}

const Eigen::ArrayXd& Evaluator::values_and_jacobian(const Expr& expr, Eigen::ArrayXXd& jacobian) {
  const auto& nodes = expr.nodes();
  const Eigen::Index n = X_.rows();
  const int m = expr.constant_count();
  if (values_.size() < nodes.size() + 1) values_.resize(nodes.size() + 1);
  if (derivatives_.size() < nodes.size() + 1) derivatives_.resize(nodes.size() + 1);
  if (has_constant_.size() < nodes.size() + 1) has_constant_.resize(nodes.size() + 1);
  int constant_index = m;  // constants are met in reverse prefix order
  std::size_t top = 0;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& node = *it;
    switch (arity(node.op)) {
      case 0: {
        // Subtrees without constants carry no derivative array at all (it would be zero): most leaves.
        if (node.op == Op::kConst) {
          values_[top].setConstant(n, node.value);
          auto& d = derivatives_[top];
          d.setZero(n, m);
          d.col(--constant_index).setOnes();
          has_constant_[top] = 1;
        } else {
          values_[top] = X_.col(node.var).array();
          has_constant_[top] = 0;
        }
        ++top;
        break;
      }
      case 1: {
        auto& a = values_[top - 1];
        if (has_constant_[top - 1]) derivatives_[top - 1].colwise() *= unary_derivative(node.op, a);
        apply_unary(node.op, a);
        break;
      }
      default: {
        auto& a = values_[top - 1];
        auto& b = values_[top - 2];
        auto& da = derivatives_[top - 1];
        auto& db = derivatives_[top - 2];
        const bool ca = has_constant_[top - 1], cb = has_constant_[top - 2];
        if (node.op == Op::kPow) {
          power_with_derivative(a, b, da, db, ca, cb);
          has_constant_[top - 2] = ca || cb;
          --top;
          break;
        }
        if (ca && cb) {
          switch (node.op) {
            case Op::kAdd: db = da + db; break;
            case Op::kSub: db = da - db; break;
            case Op::kMul: db = da.colwise() * b + db.colwise() * a; break;
            case Op::kDiv: {
              Eigen::ArrayXd inv_b = b.inverse();
              db = da.colwise() * inv_b - db.colwise() * (a * inv_b.square());
              break;
            }
            default: break;
          }
        } else if (ca) {  // only the left operand depends on constants
          switch (node.op) {
            case Op::kAdd:
            case Op::kSub: db = da; break;
            case Op::kMul: db = da.colwise() * b; break;
            case Op::kDiv:
              db = da.colwise() / b;
              break;
            default: break;
          }
        } else if (cb) {  // only the right operand does
          switch (node.op) {
            case Op::kAdd: break;
            case Op::kSub: db = -db; break;
            case Op::kMul: db.colwise() *= a; break;
            case Op::kDiv:
              db.colwise() *= -a / b.square();
              break;
            default: break;
          }
        }
        has_constant_[top - 2] = ca || cb;
        apply_binary(node.op, a, b);
        --top;
        break;
      }
    }
  }
  if (top == 0) {
    values_[0].setConstant(n, std::nan(""));
    has_constant_[0] = 0;
    top = 1;
  }
  if (has_constant_[top - 1]) {
    jacobian = derivatives_[top - 1];
  } else {
    jacobian.setZero(n, m);
  }
  return values_[top - 1];
}

}  // namespace orbitlaw::sr
