// The search in the data's units: the same law at 1e-170, 1 and 1e170 (targets and inputs) is found with the
// same constant, and the thresholded L1 loss of Vafa et al.'s protocol recovers Newton on forces of order
// 1e-5, where its absolute threshold 1e-8 let every expression within 1e-8 of the forces score 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "feynman_data.hpp"
#include "orbitlaw/sr.hpp"
#include "scaling.hpp"  // the engine's own, on the include path of test_sr

namespace sr = orbitlaw::sr;
using sr::test::Range;

namespace {

struct Scale {
  double x0, x1, x2;  // each input ranges over [1, 5] times this
};

sr::Result search_at(const Scale& s, const std::string& law, sr::Options o, sr::test::Dataset* data) {
  *data =
      sr::test::sample(law, {{"x0", s.x0, 5 * s.x0}, {"x1", s.x1, 5 * s.x1}, {"x2", s.x2, 5 * s.x2}}, 200, 7);
  return sr::search(data->X, data->y, data->names, o);
}

}  // namespace

// y = 3.7 x0 x1 / x2^2 with the target near 1e-230, 1e-170, 1 and 1e170, and inputs from 1e-170 to 1e170
// (the last: a target of order 1 from inputs of 1e-170 and 1e170). With the squared loss, unscaled, the small
// targets' squared errors underflow to 0 (any constant scores 0) and the large one's overflow (nothing
// scores). Each must give the law with 3.7 to 1e-9, and the same front text as order 1.
TEST(SrScaling, TheSameLawIsFoundAtEveryMagnitude) {
  sr::Options o = sr::test::small_budget(1, 60);
  o.loss = sr::LossKind::kL2;
  const std::string law = "3.7*x0*x1/x2^2";
  const std::vector<Scale> scales = {{1, 1, 1},           {1e-170, 1, 1},
                                     {1e100, 1e70, 1},    {1e-100, 1e-100, 1e15},
                                     {1e-60, 1e60, 1e85}, {1e-170, 1e170, 1e-3}};
  std::string order_one_text;
  for (const Scale& s : scales) {
    sr::test::Dataset d;
    const sr::Result r = search_at(s, law, o, &d);
    char label[96];
    std::snprintf(label, sizeof label, "inputs x %g, %g, %g; y[0] = %g", s.x0, s.x1, s.x2, d.y[0]);
    ASSERT_GE(r.best, 0) << label;
    sr::EquivalenceRule exact;
    exact.significant_digits = 17;
    const sr::Equivalence e =
        sr::check_equivalence(r.front[r.best].expr, sr::parse("x0*x1/x2^2", d.names), d.X, exact);
    EXPECT_TRUE(e.equivalent) << label << ": " << r.front[r.best].text;
    EXPECT_EQ(e.relation, "ratio") << label;
    EXPECT_NEAR(e.constant, 3.7, 3.7e-9) << label << ": " << r.front[r.best].text;
    if (order_one_text.empty()) {
      order_one_text = r.front[r.best].text;
      EXPECT_TRUE(r.notices.empty()) << "order 1 is searched as it is";
    } else {
      EXPECT_EQ(r.front[r.best].text, order_one_text) << label;
      ASSERT_FALSE(r.notices.empty()) << label;
      EXPECT_NE(r.notices.back().find("the search divided the target by 2^"), std::string::npos)
          << r.notices.back();
    }
  }
}

// A law with a constant inside a function: the input's scale must be folded into that constant, and the
// law read back by the parser predicts the data.
TEST(SrScaling, ConstantsInsideFunctionsAreMappedBack) {
  sr::Options o = sr::test::small_budget(2, 60);
  o.operators = {"+", "*", "sin"};
  o.loss = sr::LossKind::kL2;
  // sin(1.3e-40 * x) with x ~ 1e40: of order 1 inside, 2e-50 outside.
  auto d = sr::test::sample("2e-50*sin(1.3e-40*x)", {{"x", 1e40, 2e40}}, 200, 11);
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  ASSERT_GE(r.best, 0);
  const sr::Expr read_back = sr::parse(r.front[r.best].text, d.names);
  const Eigen::ArrayXd predicted = read_back.evaluate(d.X);
  EXPECT_LT(((predicted - d.y.array()).abs() / d.y.array().abs()).maxCoeff(), 1e-5) << r.front[r.best].text;
}

// Vafa et al.'s protocol (their operators and thresholded L1 loss, PySR's selection on every row, batches of
// 128) on an exact Newton table of two-body forces of order 1e-5 (AU, yr, Msun), in 5 galaxies (seeds). The
// loss's threshold 1e-8 is a thousandth of these forces: unscaled, stand-ins within 1e-8 such as a Taylor
// series of sin scored 0 like Newton. Each galaxy must choose Newton, and every entry of its front that
// scores 0 must be Newton.
TEST(SrScaling, ThresholdedL1FindsNewtonOnForcesOfOrder1e5) {
  const std::vector<Range> ranges = {{"r", 2, 4}, {"m1", 0.8, 1.2}, {"m2", 1e-6, 3e-6, true}};
  int newton = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    auto d = sr::test::sample("39.47841760435743*m1*m2/r^2", ranges, 1000, 500 + seed);
    ASSERT_LT(d.y.maxCoeff(), 1e-4);
    sr::Options o;
    o.operators = {"+", "*", "sin", "cos", "exp", "inv"};
    o.loss = sr::LossKind::kThresholdedL1;
    o.max_size = 20;
    o.batch_size = 128;
    o.holdout_fraction = 0;
    o.iterations = 60;
    o.seed = seed;
    const sr::Result r = sr::search(d.X, d.y, d.names, o);
    ASSERT_GE(r.best, 0);
    const sr::Expr target = sr::parse("m1*m2/r^2", d.names);
    const sr::Equivalence e = sr::check_equivalence(r.front[r.best].expr, target, d.X);
    newton += e.equivalent && std::abs(e.constant - 39.5) < 0.05;
    for (const auto& entry : r.front) {
      if (entry.loss == 0) {
        EXPECT_TRUE(sr::check_equivalence(entry.expr, target, d.X).equivalent)
            << "seed " << seed << ": " << entry.text << " scores 0";
      }
    }
    RecordProperty("seed" + std::to_string(seed), r.front[r.best].text);
  }
  EXPECT_EQ(newton, 5);
}

// The scaling itself: which columns it scales, and that a law maps back exactly (powers of two).
TEST(SrScaling, PowersOfTwoChosenAndUndoneExactly) {
  Eigen::MatrixXd X(4, 2);
  X << 1, 1e-170, 2, 2e-170, 3, 3e-170, 4, 4e-170;
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(4, 1e-5);
  const sr::Scaling l2 = sr::Scaling::choose(X, y, sr::LossKind::kL2);
  EXPECT_EQ(l2.y, 0);  // 1e-5 is within 2^±20 of 1: left as it is
  EXPECT_EQ(l2.x[0], 0);
  EXPECT_EQ(l2.x[1], static_cast<int>(std::lround(std::log2(std::sqrt(7.5) * 1e-170))));
  // Thresholded L1 scales its target to a root mean square of 2^13 whatever its size.
  const sr::Scaling l1 = sr::Scaling::choose(X, y, sr::LossKind::kThresholdedL1);
  EXPECT_EQ(l1.y, static_cast<int>(std::lround(std::log2(1e-5))) - 13);
  EXPECT_NEAR(std::abs(std::log2(std::abs(l1.scale_y(y)[0])) - 13), 0, 0.5);

  sr::Scaling s;
  s.y = 10;
  s.x = {-5, 0};
  // 2 * x0'^2 * x1 with x0' = x0 * 2^5: in the data's units 2^10 * 2 * 2^10 * x0^2 * x1 = 2^21 x0^2 x1.
  const sr::Expr law = sr::parse("2*x0^2*x1", {"x0", "x1"});
  const sr::Expr mapped = s.to_data_units(law, s.scale_x(X));
  EXPECT_EQ(mapped.text({"x0", "x1"}, 17), "2097152*x0^2*x1");
  EXPECT_EQ(mapped.complexity(), law.complexity());
}
