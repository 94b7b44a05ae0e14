// The evaluator's values and Jacobian (the fast, column-wise path Levenberg-Marquardt runs on) against a
// naive reference: each row evaluated on its own by recursion over the prefix nodes, with forward-mode
// derivatives carried for every constant.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "evaluator.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

struct Dual {
  double value = 0;
  std::vector<double> d;  // d value / d constant k, constants in prefix order
};

// Evaluates the subtree at `pos` on one row; advances `pos` past it and `constant` past its constants.
Dual reference(const std::vector<sr::Node>& nodes, std::size_t& pos, int& constant, int m,
               const Eigen::RowVectorXd& row) {
  const sr::Node node = nodes[pos++];
  Dual out{0, std::vector<double>(m, 0.0)};
  if (node.op == sr::Op::kConst) {
    out.value = node.value;
    out.d[constant++] = 1;
    return out;
  }
  if (node.op == sr::Op::kVar) {
    out.value = row[node.var];
    return out;
  }
  const Dual a = reference(nodes, pos, constant, m, row);
  if (sr::arity(node.op) == 1) {
    const double x = a.value;
    double f = 0, df = 0;
    switch (node.op) {
      case sr::Op::kNeg:
        f = -x, df = -1;
        break;
      case sr::Op::kInv:
        f = 1 / x, df = -1 / (x * x);
        break;
      case sr::Op::kAbs:
        f = std::abs(x), df = x > 0 ? 1 : (x < 0 ? -1 : 0);
        break;
      case sr::Op::kSquare:
        f = x * x, df = 2 * x;
        break;
      case sr::Op::kCube:
        f = x * x * x, df = 3 * x * x;
        break;
      case sr::Op::kSqrt:
        f = std::sqrt(x), df = 0.5 / std::sqrt(x);
        break;
      case sr::Op::kExp:
        f = std::exp(x), df = std::exp(x);
        break;
      case sr::Op::kLog:
        f = std::log(x), df = 1 / x;
        break;
      case sr::Op::kSin:
        f = std::sin(x), df = std::cos(x);
        break;
      case sr::Op::kCos:
        f = std::cos(x), df = -std::sin(x);
        break;
      default:
        ADD_FAILURE() << "unexpected unary operator";
        break;
    }
    out.value = f;
    for (int k = 0; k < m; ++k) out.d[k] = df * a.d[k];
    return out;
  }
  const Dual b = reference(nodes, pos, constant, m, row);
  const double x = a.value, y = b.value;
  double f = 0, fx = 0, fy = 0;  // f(x, y) and its partial derivatives
  switch (node.op) {
    case sr::Op::kAdd:
      f = x + y, fx = 1, fy = 1;
      break;
    case sr::Op::kSub:
      f = x - y, fx = 1, fy = -1;
      break;
    case sr::Op::kMul:
      f = x * y, fx = y, fy = x;
      break;
    case sr::Op::kDiv:
      f = x / y, fx = 1 / y, fy = -x / (y * y);
      break;
    case sr::Op::kPow:
      f = std::pow(x, y), fx = y * std::pow(x, y - 1), fy = std::pow(x, y) * std::log(x);
      break;
    default:
      ADD_FAILURE() << "unexpected binary operator";
      break;
  }
  out.value = f;
  for (int k = 0; k < m; ++k) out.d[k] = fx * a.d[k] + fy * b.d[k];
  return out;
}

// Relative difference, with an absolute floor for values near zero.
double difference(double got, double want) { return std::abs(got - want) / std::max(1.0, std::abs(want)); }

}  // namespace

// Every operator, constants on the left, the right, both sides and nested, and expressions without any.
TEST(Evaluator, ValuesAndJacobianMatchANaiveRowByRowReference) {
  const std::vector<std::string> names = {"x", "y", "z"};
  const std::vector<std::string> texts = {"1.5*x + 0.7",
                                          "x*y - z",
                                          "2.1/(x + 0.3*y) - 1.7*z",
                                          "pow(1.2*x, 0.8) + pow(y, 1.3*z)",
                                          "sin(0.9*x + 0.2) * cos(1.1*y) + exp(-0.4*z)",
                                          "log(2.5*x*y) + sqrt(0.6*z + 0.1)",
                                          "inv(square(0.5*x) + cube(0.3*y)) - abs(0.8 - z)",
                                          "neg(1.3*x) * (0.4 + y/(0.9 - 0.1*z))",
                                          "3.1*x*y/pow(z + 0.2, 2.2) + 0.05*sin(4*x)",
                                          "(1.1 + x) * (2.2 + y) * (3.3 + z) - 4.4",
                                          "exp(0.1*x)*pow(0.7*y + 0.5, 1.5)/(z + 1.9)"};
  orbitlaw::Xoshiro256 rng(7, 0, 0);
  Eigen::MatrixXd X(64, 3);
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    for (Eigen::Index j = 0; j < X.cols(); ++j) X(i, j) = rng.uniform(0.2, 3.0);
  sr::Evaluator evaluator(X);
  for (const auto& text : texts) {
    SCOPED_TRACE(text);
    const sr::Expr e = sr::parse(text, names);
    const int m = e.constant_count();
    Eigen::ArrayXXd jacobian;
    const Eigen::ArrayXd values = evaluator.values_and_jacobian(e, jacobian);
    ASSERT_EQ(jacobian.rows(), X.rows());
    ASSERT_EQ(jacobian.cols(), m);
    const Eigen::ArrayXd plain = evaluator.values(e);
    double worst_value = 0, worst_derivative = 0;
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      std::size_t pos = 0;
      int constant = 0;
      const Dual want = reference(e.nodes(), pos, constant, m, X.row(i));
      ASSERT_EQ(pos, e.nodes().size());
      ASSERT_TRUE(std::isfinite(want.value)) << "row " << i;
      worst_value =
          std::max({worst_value, difference(values[i], want.value), difference(plain[i], want.value)});
      for (int k = 0; k < m; ++k)
        worst_derivative = std::max(worst_derivative, difference(jacobian(i, k), want.d[k]));
    }
    EXPECT_LT(worst_value, 1e-13);
    EXPECT_LT(worst_derivative, 1e-12);
  }
}

// The evaluator reuses its buffers: a long expression, then a short one, then a constant alone give the
// short ones' own values and a Jacobian of their own width.
TEST(Evaluator, BuffersReusedAcrossExpressionsOfDifferentShapes) {
  const std::vector<std::string> names = {"x"};
  Eigen::MatrixXd X(5, 1);
  X << 0.5, 1, 1.5, 2, 2.5;
  sr::Evaluator evaluator(X);
  Eigen::ArrayXXd jacobian;
  evaluator.values_and_jacobian(sr::parse("1.5*x + 2*x*x + 0.5*sin(3*x)", names), jacobian);
  EXPECT_EQ(jacobian.cols(), 4);
  const Eigen::ArrayXd v = evaluator.values_and_jacobian(sr::parse("2*x", names), jacobian);
  ASSERT_EQ(jacobian.cols(), 1);
  for (Eigen::Index i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(v[i], 2 * X(i, 0));
    EXPECT_DOUBLE_EQ(jacobian(i, 0), X(i, 0));
  }
  const Eigen::ArrayXd c = evaluator.values_and_jacobian(sr::Expr::constant(4), jacobian);
  ASSERT_EQ(jacobian.cols(), 1);
  EXPECT_TRUE((c == 4).all());
  EXPECT_TRUE((jacobian == 1).all());
  evaluator.values_and_jacobian(sr::parse("x*x", names), jacobian);
  EXPECT_EQ(jacobian.cols(), 0);
}

// Powers take two paths: exp(b log a) when every base is positive, std::pow otherwise. Against the reference
// on both: large results on positive bases (the logarithm's rounding grows with |b log a|), and a column
// with negative and zero bases, where whole exponents give real values and 0^0 = 1.
TEST(Evaluator, PowersMatchStdPowOnPositiveAndOnSignedBases) {
  const std::vector<std::string> names = {"x"};
  Eigen::MatrixXd positive(6, 1), signed_bases(6, 1);
  positive << 0.25, 0.5, 1, 2, 2.5, 3;
  signed_bases << -2, -0.5, 0, 0.5, 1, 3;
  const std::vector<std::pair<const Eigen::MatrixXd*, std::string>> cases = {
      {&positive, "pow(1.1*x, 40.3)"},  {&positive, "pow(x, -25.5*x)"},     {&positive, "2*pow(0.9*x, 1.7)"},
      {&signed_bases, "pow(1.5*x, 2)"}, {&signed_bases, "pow(x, 3) + 0.5"}, {&signed_bases, "pow(x, 0)"}};
  for (const auto& [X, text] : cases) {
    SCOPED_TRACE(text);
    const sr::Expr e = sr::parse(text, names);
    const int m = e.constant_count();
    sr::Evaluator evaluator(*X);
    Eigen::ArrayXXd jacobian;
    const Eigen::ArrayXd values = evaluator.values_and_jacobian(e, jacobian);
    const Eigen::ArrayXd plain = evaluator.values(e);
    for (Eigen::Index i = 0; i < X->rows(); ++i) {
      std::size_t pos = 0;
      int constant = 0;
      const Dual want = reference(e.nodes(), pos, constant, m, X->row(i));
      ASSERT_TRUE(std::isfinite(want.value)) << "row " << i;
      EXPECT_LT(difference(values[i], want.value), 1e-13) << "row " << i;
      EXPECT_LT(difference(plain[i], want.value), 1e-13) << "row " << i;
      for (int k = 0; k < m; ++k) {
        if (std::isfinite(want.d[k])) {
          EXPECT_LT(difference(jacobian(i, k), want.d[k]), 1e-12) << "row " << i << " constant " << k;
        } else {
          EXPECT_FALSE(std::isfinite(jacobian(i, k))) << "row " << i << " constant " << k;
        }
      }
    }
  }
}
