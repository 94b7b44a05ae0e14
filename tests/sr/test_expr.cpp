// Expressions: evaluation against hand-computed values, operator precedence in the parser, domain errors,
// text/LaTeX/JSON output, and structure queries.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

const std::vector<std::string> kNames = {"r", "m1", "m2"};

double eval1(const std::string& text, double r = 2, double m1 = 1e-3, double m2 = 2e-3) {
  Eigen::MatrixXd X(1, 3);
  X << r, m1, m2;
  return sr::parse(text, kNames).evaluate(X)[0];
}

}  // namespace

TEST(SrExpr, NewtonEvaluatesToHandValue) {
  // 39.478 * 1e-3 * 2e-3 / 2^2 = 1.9739e-5
  EXPECT_NEAR(eval1("39.478*m1*m2/r^2"), 1.9739e-5, 1e-18);
}

TEST(SrExpr, ParserFollowsUsualPrecedence) {
  EXPECT_DOUBLE_EQ(eval1("2+3*4^2"), 50);
  EXPECT_DOUBLE_EQ(eval1("-2^2"), -4);
  EXPECT_DOUBLE_EQ(eval1("2^-1"), 0.5);
  EXPECT_DOUBLE_EQ(eval1("2^3^2"), 512);  // right-associative
  EXPECT_DOUBLE_EQ(eval1("(1+2)*3"), 9);
  EXPECT_DOUBLE_EQ(eval1("8/4/2"), 1);  // left-associative
  EXPECT_DOUBLE_EQ(eval1("10-4-3"), 3);
  EXPECT_DOUBLE_EQ(eval1("1.5e-3*2E3"), 3);
  EXPECT_DOUBLE_EQ(eval1("r - -r"), 4);
}

TEST(SrExpr, EveryOperatorMatchesTheStandardLibrary) {
  EXPECT_DOUBLE_EQ(eval1("pow(2, 3)"), 8);
  EXPECT_DOUBLE_EQ(eval1("neg(r)"), -2);
  EXPECT_DOUBLE_EQ(eval1("inv(4)"), 0.25);
  EXPECT_DOUBLE_EQ(eval1("abs(-3)"), 3);
  EXPECT_DOUBLE_EQ(eval1("square(3)"), 9);
  EXPECT_DOUBLE_EQ(eval1("cube(r)"), 8);
  EXPECT_DOUBLE_EQ(eval1("sqrt(16)"), 4);
  EXPECT_DOUBLE_EQ(eval1("exp(r)"), std::exp(2.0));
  EXPECT_DOUBLE_EQ(eval1("log(r)"), std::log(2.0));
  EXPECT_DOUBLE_EQ(eval1("sin(r)"), std::sin(2.0));
  EXPECT_DOUBLE_EQ(eval1("cos(cos(2.19*r))"), std::cos(std::cos(2.19 * 2.0)));
  EXPECT_DOUBLE_EQ(eval1("pi"), std::numbers::pi);
}

TEST(SrExpr, DomainErrorsGiveNonFiniteValuesAndInfiniteLoss) {
  EXPECT_TRUE(std::isnan(eval1("log(-r)")));
  EXPECT_TRUE(std::isnan(eval1("sqrt(-r)")));
  EXPECT_TRUE(std::isinf(eval1("1/(r-2)")));
  EXPECT_TRUE(std::isnan(eval1("(-r)^0.5")));
  Eigen::MatrixXd X(2, 3);
  X << 2, 1, 1, -1, 1, 1;
  Eigen::VectorXd y(2);
  y << 1, 1;
  EXPECT_TRUE(std::isinf(sr::loss(sr::parse("sqrt(r)", kNames), X, y, sr::LossKind::kL2)));
  EXPECT_TRUE(std::isinf(sr::loss(sr::parse("r", kNames), X, y, sr::LossKind::kLog)));  // prediction -1 < 0
  EXPECT_TRUE(std::isfinite(sr::loss(sr::parse("r", kNames), X, y, sr::LossKind::kL2)));
}

TEST(SrExpr, LossesMatchHandComputedValues) {
  Eigen::MatrixXd X(2, 3);
  X << 2, 0, 0, 4, 0, 0;
  Eigen::VectorXd y(2);
  y << 1, 5;  // prediction r = (2, 4): errors (1, -1)
  auto e = sr::parse("r", kNames);
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kL2), 1.0);
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kL1), 1.0);
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kRelative), (1.0 + 1.0 / 25) / 2);
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kLog),
                   (std::pow(std::log(2.0), 2) + std::pow(std::log(4.0 / 5), 2)) / 2);
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kThresholdedL1), 1.0 - 1e-8);
  Eigen::VectorXd w(2);
  w << 3, 1;
  y << 2, 6;  // errors (0, -2)
  EXPECT_DOUBLE_EQ(sr::loss(e, X, y, sr::LossKind::kL2, &w), 4.0 / 4);
  y << 2, 4;  // exact: thresholded L1 is exactly 0
  EXPECT_EQ(sr::loss(e, X, y, sr::LossKind::kThresholdedL1), 0.0);
}

TEST(SrExpr, TextRoundTripsThroughTheParser) {
  Eigen::MatrixXd X(3, 3);
  X << 0.7, 1e-3, 5e-3, 3.1, 2e-4, 1e-2, 35, 4e-3, 3e-4;
  for (const char* text :
       {"39.478*m1*m2/r^2", "cos(cos(2.19*m1))", "-r + m1*(m2 - r)", "r/(m1*m2)", "r^(m1 + 1)", "(r - m1)^2",
        "inv(r + m1)", "-1.5*r", "r - (-2)", "exp(-r)", "square(r - 1)/cube(m2)"}) {
    sr::Expr e = sr::parse(text, kNames);
    std::string printed = e.text(kNames, 17);
    sr::Expr again = sr::parse(printed, kNames);
    Eigen::ArrayXd a = e.evaluate(X), b = again.evaluate(X);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * std::abs(a[i])) << text << " -> " << printed;
  }
  EXPECT_EQ(sr::parse("39.478*m1*m2/r^2", kNames).text(kNames), "39.478*m1*m2/r^2");
  EXPECT_EQ(sr::parse("r - (m1 + m2)", kNames).text(kNames), "r - (m1 + m2)");
  EXPECT_EQ(sr::parse("r/(m1*m2)", kNames).text(kNames), "r/(m1*m2)");
}

TEST(SrExpr, LatexAndJson) {
  sr::Expr e = sr::parse("39.478*m1*m2/r^2", kNames);
  EXPECT_EQ(e.latex(kNames), "\\frac{39.478 \\cdot m_{1} \\cdot m_{2}}{r^{2}}");
  EXPECT_EQ(sr::parse("1.5e-05*sin(r)", kNames).latex(kNames),
            "1.5 \\cdot 10^{-5} \\cdot \\sin\\left(r\\right)");
  orbitlaw::Json j = e.json(kNames);
  EXPECT_EQ(j["op"], "/");
  EXPECT_EQ(j["args"][1]["op"], "pow");
  EXPECT_EQ(j["args"][1]["args"][0]["var"], "r");
  EXPECT_EQ(j["args"][1]["args"][1]["const"], 2.0);
}

TEST(SrExpr, ComplexityAndDepthCountNodes) {
  sr::Expr e = sr::parse("r + m1*m2", kNames);
  EXPECT_EQ(e.complexity(), 5);
  EXPECT_EQ(e.depth(), 3);
  EXPECT_EQ(e.subtree_end(2), 5);
  EXPECT_EQ(sr::parse("cos(cos(2.19*m1))", kNames).depth(), 4);
  EXPECT_EQ(sr::parse("cos(cos(2.19*m1))", kNames).constant_count(), 1);
}

TEST(SrExpr, ParseErrorsNameTheProblem) {
  auto message = [](const std::string& text) {
    try {
      sr::parse(text, kNames);
    } catch (const orbitlaw::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("m1*m3").find("unknown variable 'm3'"), std::string::npos);
  EXPECT_NE(message("(r+m1").find("expected ')'"), std::string::npos);
  EXPECT_NE(message("tan(r)").find("unknown function 'tan'"), std::string::npos);
  EXPECT_NE(message("r +").find("unexpected end"), std::string::npos);
  EXPECT_NE(message("").find("empty"), std::string::npos);
  EXPECT_NE(message("r m1").find("unexpected 'm'"), std::string::npos);
}
