// The search end to end: Newton's law from (r, m1, m2) in the probe's ranges, with and without noise and with
// Vafa et al.'s operators and loss, Kepler's third law, Feynman-database equations, reproducibility, and
// bad input. Budgets are fixed iteration counts (no time limits), so results do not depend on machine speed.
#include <gtest/gtest.h>

#include "feynman_data.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;
using sr::test::Range;

namespace {

const std::vector<Range> kNewtonRanges = {{"r", 0.3, 40}, {"m1", 1e-4, 1e-2, true}, {"m2", 1e-4, 1e-2, true}};
const char* kNewton = "39.47841760435743*m1*m2/r^2";

sr::Options small_budget(std::uint64_t seed) {
  sr::Options o = sr::test::small_budget(seed, 60);
  o.loss = sr::LossKind::kLog;
  o.target_loss = 1e-20;
  return o;
}

// Runs the search and applies the equivalence check to the "best" selection.
sr::Equivalence recovered(const sr::test::Dataset& d, const sr::Options& o, const std::string& target,
                          std::string* best_text = nullptr) {
  sr::Result r = sr::search(d.X, d.y, d.names, o);
  if (r.best < 0) return {};
  if (best_text) *best_text = r.front[r.best].text;
  return sr::check_equivalence(r.front[r.best].expr, sr::parse(target, d.names), d.X);
}

}  // namespace

TEST(SrSearch, NewtonRecoveredInAtLeastNineOfTenSeeds) {
  int successes = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    auto d = sr::test::sample(kNewton, kNewtonRanges, 200, 1000 + seed);
    std::string text;
    auto e = recovered(d, small_budget(seed), "m1*m2/r^2", &text);
    successes += e.equivalent;
    if (e.equivalent) {
      EXPECT_NEAR(e.constant, 39.5, 0.05) << text;  // G = 4 pi^2 = 39.478 to 3 significant digits
    }
    RecordProperty("seed" + std::to_string(seed), text);
  }
  EXPECT_GE(successes, 9);
}

TEST(SrSearch, NewtonRecoveredWithOnePercentNoise) {
  int successes = 0;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    auto d = sr::test::sample(kNewton, kNewtonRanges, 200, 2000 + seed, 0.01);
    sr::Options o = small_budget(seed);
    o.target_loss = -1;  // noisy: no loss is "exact"
    o.iterations = 30;
    std::string text;
    auto e = recovered(d, o, "m1*m2/r^2", &text);
    successes += e.equivalent;
    if (e.equivalent) {
      EXPECT_NEAR(e.constant, 39.478, 0.5) << text;
    }
  }
  EXPECT_GE(successes, 2);
}

TEST(SrSearch, NewtonRecoveredWithVafaOperators) {
  // Vafa et al.'s operator set (+ * sin cos exp inv, size 20) on the probe's ranges, with the log loss.
  int successes = 0;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    auto d = sr::test::sample(kNewton, kNewtonRanges, 200, 3000 + seed);
    sr::Options o = small_budget(seed);
    o.operators = {"+", "*", "sin", "cos", "exp", "inv"};
    o.max_size = 20;
    std::string text;
    successes += recovered(d, o, "m1*m2/r^2", &text).equivalent;
  }
  EXPECT_GE(successes, 2);
}

TEST(SrSearch, ThresholdedL1LossRecoversNewtonAboveItsThreshold) {
  // Vafa et al.'s loss max(1e-8, |pred - y|) - 1e-8 treats every error below 1e-8 as zero, so it can only
  // discriminate forces well above 1e-8: heavier masses and closer orbits than the probe's ranges.
  auto d =
      sr::test::sample(kNewton, {{"r", 0.5, 5}, {"m1", 0.01, 1, true}, {"m2", 0.01, 1, true}}, 200, 3100);
  // Without / and pow, 1/r^2 must be built as inv(r*r): a hard search at this budget, so it is judged over three
  // seeds (at least two), not on one seed's luck.
  int successes = 0;
  std::string texts;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    sr::Options o = small_budget(seed);
    o.operators = {"+", "*", "sin", "cos", "exp", "inv"};
    o.loss = sr::LossKind::kThresholdedL1;
    o.max_size = 20;
    o.target_loss = 0;
    std::string text;
    successes += recovered(d, o, "m1*m2/r^2", &text).equivalent;
    texts += "\n  seed " + std::to_string(seed) + ": " + text;
  }
  EXPECT_GE(successes, 2) << texts;
}

TEST(SrSearch, KeplersThirdLaw) {
  // T = 2 pi sqrt(a^3 / (G M)) = sqrt(a^3 / M) in years with G = 4 pi^2.
  auto d = sr::test::sample("sqrt(a^3/M)", {{"a", 0.3, 40}, {"M", 0.5, 5}}, 200, 4000);
  sr::Options o = small_budget(0);
  o.operators = {"+", "-", "*", "/", "sqrt"};
  std::string text;
  auto e = recovered(d, o, "sqrt(a^3/M)", &text);
  EXPECT_TRUE(e.equivalent) << text;
}

TEST(SrSearch, FeynmanEquations) {
  struct Case {
    const char* id;
    const char* formula;
    const char* target;
    std::vector<Range> ranges;
    std::vector<std::string> operators;
  };
  // Ranges as in the AI Feynman database (1..5 unless the formula needs otherwise).
  const std::vector<Case> cases = {
      {"I.12.2",
       "q1*q2/(4*pi*eps*r^2)",
       "q1*q2/(eps*r^2)",
       {{"q1", 1, 5}, {"q2", 1, 5}, {"eps", 1, 5}, {"r", 1, 5}},
       {"+", "-", "*", "/"}},
      {"I.6.2a",
       "exp(-theta^2/2)/sqrt(2*pi)",
       "exp(-theta^2/2)",
       {{"theta", 1, 3}},
       {"+", "-", "*", "/", "exp"}},
      {"II.3.24", "P/(4*pi*r^2)", "P/r^2", {{"P", 1, 5}, {"r", 1, 5}}, {"+", "-", "*", "/"}},
      {"I.39.10", "3/2*pF*V", "pF*V", {{"pF", 1, 5}, {"V", 1, 5}}, {"+", "-", "*", "/"}},
  };
  // Each equation from three data/search seeds; at least two of three must be recovered exactly.
  for (const auto& c : cases) {
    int successes = 0;
    std::string texts;
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      auto d = sr::test::sample(c.formula, c.ranges, 200, 5000 + seed);
      sr::Options o = small_budget(seed);
      o.operators = c.operators;
      o.loss = sr::LossKind::kL2;
      std::string text;
      successes += recovered(d, o, c.target, &text).equivalent;
      texts += " | " + text;
    }
    EXPECT_GE(successes, 2) << c.id << ": best were" << texts;
  }
}

TEST(SrSearch, SameSeedSameFrontWhateverTheThreadCount) {
  auto d = sr::test::sample(kNewton, kNewtonRanges, 100, 6000, 0.01);
  sr::Options o = small_budget(3);
  o.iterations = 5;
  o.target_loss = -1;
  o.threads = 1;
  sr::Result one = sr::search(d.X, d.y, d.names, o);
  o.threads = 2;
  sr::Result two = sr::search(d.X, d.y, d.names, o);
  ASSERT_EQ(one.front.size(), two.front.size());
  for (std::size_t i = 0; i < one.front.size(); ++i) {
    EXPECT_EQ(one.front[i].text, two.front[i].text);
    EXPECT_EQ(one.front[i].loss, two.front[i].loss);
  }
  EXPECT_EQ(one.iterations_run, 5);
  EXPECT_EQ(one.evaluations, two.evaluations);
}

TEST(SrSearch, RestartsAndBatchesStillFindNewton) {
  auto d = sr::test::sample(kNewton, kNewtonRanges, 2000, 7000);
  sr::Options o = small_budget(1);
  o.batch_size = 100;  // constants fitted on 100 of 2000 rows
  o.restarts = 2;
  o.iterations = 20;
  std::string text;
  auto e = recovered(d, o, "m1*m2/r^2", &text);
  EXPECT_TRUE(e.equivalent) << text;
}

// Constants fitted on 20-row batches are refined on every row: the front's c*x carries the least-squares
// constant of the whole table (closed form sum(x*y)/sum(x*x)), not one batch's (without the refinement
// it misses by 1.4e-4 relative here, with 5% noise; the test asks for 1e-9).
TEST(SrSearch, ConstantsFittedOnBatchesAreRefinedOnEveryRow) {
  auto d = sr::test::sample("2.5*x", {{"x", 1, 5}}, 1000, 7100, 0.05);
  sr::Options o = sr::test::small_budget(3, 5);
  o.operators = {"+", "*"};
  o.loss = sr::LossKind::kL2;
  o.holdout_fraction = 0;
  o.max_size = 5;
  o.batch_size = 20;
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  const Eigen::ArrayXd x = d.X.col(0).array(), y = d.y.array();
  const double least_squares = (x * y).sum() / x.square().sum();
  const sr::FrontEntry* product = nullptr;
  for (const auto& entry : r.front) {
    if (entry.complexity == 3 && entry.expr.constant_count() == 1) product = &entry;
  }
  ASSERT_NE(product, nullptr);
  const Eigen::ArrayXd ratio = product->expr.evaluate(d.X) / x;
  ASSERT_NEAR(ratio.maxCoeff(), ratio.minCoeff(), 1e-12) << product->text << " is not c*x";
  EXPECT_NEAR(ratio[0], least_squares, 1e-9 * least_squares) << product->text;
  EXPECT_NEAR(product->loss, (y - least_squares * x).square().mean(), 1e-9 * product->loss);
}

TEST(SrSearch, BadInputIsAClearError) {
  auto d = sr::test::sample(kNewton, kNewtonRanges, 20, 8000);
  sr::Options o = small_budget(0);
  auto message = [&](const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const sr::Options& opt) {
    try {
      sr::search(X, y, d.names, opt);
    } catch (const orbitlaw::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Eigen::MatrixXd X = d.X;
  X(3, 1) = NAN;
  EXPECT_EQ(message(X, d.y, o), "column 'm1' row 4 is not finite");
  Eigen::VectorXd y = d.y;
  y[5] = INFINITY;
  EXPECT_EQ(message(d.X, y, o), "y row 6 is not finite");
  EXPECT_EQ(message(d.X, d.y.head(10), o), "X has 20 rows but y has 10");
  EXPECT_EQ(message(Eigen::MatrixXd(0, 3), Eigen::VectorXd(0), o),
            "symbolic regression needs at least 8 data rows, got 0");
  // Seven points: a formula with a few constants can fit them exactly, so no law is searched there.
  EXPECT_EQ(message(d.X.topRows(7), d.y.head(7), o), "symbolic regression needs at least 8 data rows, got 7");
  y = d.y;
  y[0] = -1;
  EXPECT_NE(message(d.X, y, o).find("log loss needs positive targets"), std::string::npos);
  sr::Options bad = o;
  bad.operators = {"+", "tan"};
  EXPECT_NE(message(d.X, d.y, bad).find("unknown operator 'tan'"), std::string::npos);
  bad = o;
  bad.populations = 0;
  EXPECT_NE(message(d.X, d.y, bad).find("'populations' must be positive"), std::string::npos);
}
