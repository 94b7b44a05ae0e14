// Canonical simplification and SRBench's equivalence rule on hand-made cases.
#include <gtest/gtest.h>

#include <numbers>
#include <random>

#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

const std::vector<std::string> kEquivalenceNames = {"r", "m1", "m2"};

std::string simplified(const std::string& text) {
  return sr::simplify(sr::parse(text, kEquivalenceNames)).text(kEquivalenceNames);
}

// Positive points in the probe's ranges.
Eigen::MatrixXd points(int n = 50) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd X(n, 3);
  for (int i = 0; i < n; ++i)
    X.row(i) << 0.3 + 39.7 * u(rng), std::pow(10, -4 + 2 * u(rng)), std::pow(10, -4 + 2 * u(rng));
  return X;
}

sr::Equivalence check(const std::string& found, const std::string& target) {
  return sr::check_equivalence(found, target, kEquivalenceNames, points());
}

}  // namespace

TEST(SrSimplify, CanonicalFormIsIndependentOfWriting) {
  EXPECT_EQ(simplified("m2*m1*39.478/(r*r)"), "39.478*m1*m2/r^2");
  EXPECT_EQ(simplified("39.478*m1*inv(square(r))*m2"), "39.478*m1*m2/r^2");
  EXPECT_EQ(simplified("(m1*39.478)/(r/m2)/r"), "39.478*m1*m2/r^2");
  EXPECT_EQ(simplified("r - r"), "0");
  EXPECT_EQ(simplified("2*r/(4*r)"), "0.5");
  EXPECT_EQ(simplified("r + 0*m1 + 1*m2"), "r + m2");
  EXPECT_EQ(simplified("(r + m1)^2"), "2*r*m1 + r^2 + m1^2");  // terms in key order
  EXPECT_EQ(simplified("sqrt(r^3/m1)"), "r^1.5/m1^0.5");
  EXPECT_EQ(simplified("cos(0)*r"), "r");
  EXPECT_EQ(simplified("(2*r + 2*m1)/(r + m1)"), "2");
}

TEST(SrSimplify, KeepsValuesOnPositivePoints) {
  Eigen::MatrixXd X = points();
  for (const char* text : {"39.478*m1*m2/r^2 + r", "cos(cos(2.19*m1)) - r*(m1 - m2)", "(r + m1)^3/(m2 + 1)",
                           "exp(-r/m1)*sqrt(m2)", "r/(1 - m1/r) + inv(r + m2)", "abs(r - 3)*log(r)",
                           "(r*m1)^0.5*m2^-1.5", "r^m1 - r"}) {
    sr::Expr e = sr::parse(text, kEquivalenceNames);
    Eigen::ArrayXd a = e.evaluate(X), b = sr::simplify(e).evaluate(X);
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-10 * std::abs(a[i]) + 1e-300)
          << text << " -> " << sr::simplify(e).text(kEquivalenceNames);
    }
  }
}

TEST(SrSimplify, RoundsToSignificantDigits) {
  EXPECT_EQ(sr::round_constants(sr::parse("39.4784*r", kEquivalenceNames)).text(kEquivalenceNames), "39.5*r");
  EXPECT_EQ(sr::round_constants(sr::parse("0.00123456*r", kEquivalenceNames)).text(kEquivalenceNames),
            "0.00123*r");
  EXPECT_EQ(sr::round_constants(sr::parse("-123456*r", kEquivalenceNames)).text(kEquivalenceNames),
            "-123000*r");
  EXPECT_EQ(sr::round_constants(sr::parse("r^2.0001", kEquivalenceNames)).text(kEquivalenceNames), "r^2");
  EXPECT_EQ(sr::round_constants(sr::parse("0*r", kEquivalenceNames)).text(kEquivalenceNames), "0*r");
  EXPECT_EQ(sr::round_constants(sr::parse("1.23456*r", kEquivalenceNames), 5).text(kEquivalenceNames),
            "1.2346*r");
}

TEST(SrEquivalence, RatioDifferenceAndNoneOnHandCases) {
  auto e = check("39.478*m1*m2/r^2", "m1*m2/r^2");
  EXPECT_TRUE(e.equivalent);
  EXPECT_EQ(e.relation, "ratio");
  EXPECT_EQ(e.method, "symbolic");
  EXPECT_DOUBLE_EQ(e.constant, 39.5);  // constants rounded to 3 significant digits first

  e = check("m1*m2/r^2 + 3", "m1*m2/r^2");
  EXPECT_TRUE(e.equivalent);
  EXPECT_EQ(e.relation, "difference");
  EXPECT_DOUBLE_EQ(e.constant, 3);

  e = check("cos(cos(2.19*m1))", "m1*m2/r^2");  // Vafa et al.'s nonsense law
  EXPECT_FALSE(e.equivalent);
  EXPECT_EQ(e.relation, "none");

  EXPECT_FALSE(check("m1*m2/r", "m1*m2/r^2").equivalent);
  EXPECT_FALSE(check("0", "m1*m2/r^2").equivalent);  // a zero ratio is not an equivalence
  EXPECT_FALSE(check("39.478*m1*m2/(r^2 + 0.001)", "m1*m2/r^2").equivalent);
}

TEST(SrEquivalence, ConstantsRoundingDecides) {
  // 2.0001 rounds to 2.00: equivalent. 2.01 stays: not equivalent.
  auto e = check("39.478*m1*m2/r^2.0001", "m1*m2/r^2");
  EXPECT_TRUE(e.equivalent);
  EXPECT_EQ(e.relation, "ratio");
  EXPECT_FALSE(check("39.478*m1*m2/r^2.01", "m1*m2/r^2").equivalent);
  // A small offset that rounding keeps still breaks the ratio (1e-6 * r varies across the points).
  EXPECT_FALSE(check("m1*m2/r^2*(1 + 1e-6*r)", "m1*m2/r^2").equivalent);
}

TEST(SrEquivalence, NumericCheckCatchesWhatSimplificationCannot) {
  auto e = check("2*sin(r)*cos(r)", "sin(2*r)");
  EXPECT_TRUE(e.equivalent);
  EXPECT_EQ(e.method, "numeric");
  EXPECT_NEAR(e.constant, 1.0, 1e-12);
  EXPECT_FALSE(check("2*sin(r)*cos(r)", "sin(r)").equivalent);
  // Without points only the symbolic test is available.
  EXPECT_FALSE(sr::check_equivalence("2*sin(r)*cos(r)", "sin(2*r)", kEquivalenceNames, Eigen::MatrixXd(0, 3))
                   .equivalent);
}

TEST(SrEquivalence, SmallConstantsCountAsZeroOnlyWhenAsked) {
  // A peer's float32 fit: coefficient 0.0796 (1/(4 pi) = 0.0795775 to 3 digits) and an offset of -7e-9.
  const std::vector<std::string> names = {"P", "r"};
  Eigen::MatrixXd X(3, 2);
  X << 1, 1, 2, 3, 5, 4;
  auto strict = sr::check_equivalence("0.0796*P/r^2 - 7e-9", "P/(4*pi*r^2)", names, X);
  EXPECT_FALSE(strict.equivalent);
  sr::EquivalenceRule srbench;
  srbench.zero_below = 1e-4;
  auto lenient = sr::check_equivalence("0.0796*P/r^2 - 7e-9", "P/(4*pi*r^2)", names, X, srbench);
  EXPECT_TRUE(lenient.equivalent);
  EXPECT_EQ(lenient.relation, "ratio");
  EXPECT_NEAR(lenient.constant, 0.0796 * 4 * std::numbers::pi, 1e-12);
}
