// Defaults that suit the data: the loss chosen from the targets ("auto"), operators that write power laws and
// square roots, and the notice when the data ask for an operator that is off. Budgets are fixed iteration
// counts (no time limits), so results do not depend on machine speed.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

#include "feynman_data.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;
using sr::test::Range;

namespace {

// Newton's law in AU, years and solar masses: forces from 2e-6 to 8, over six decades.
const std::vector<Range> kDefaultsNewtonRanges = {{"r", 0.5, 30}, {"m1", 1e-4, 1e-2, true}, {"m2", 0.5, 5}};

Eigen::VectorXd vector(std::initializer_list<double> values) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double v : values) out[i++] = v;
  return out;
}

// The default options with a small budget: only the size of the search differs from what a user gets.
sr::Options defaults_budget(std::uint64_t seed) { return sr::test::small_budget(seed, 40); }

bool best_is(const sr::Result& r, const sr::test::Dataset& d, const std::string& target) {
  if (r.best < 0) return false;
  return sr::check_equivalence(r.front[r.best].expr, sr::parse(target, d.names), d.X).equivalent;
}

}  // namespace

TEST(SrDefaults, AutoLossIsLogOnlyForPositiveTargetsSpanningMoreThanTwoDecades) {
  EXPECT_EQ(sr::Options{}.loss, sr::LossKind::kAuto);
  EXPECT_EQ(sr::parse_loss_kind("auto"), sr::LossKind::kAuto);
  EXPECT_EQ(sr::to_string(sr::LossKind::kAuto), "auto");
  EXPECT_EQ(sr::choose_loss(vector({1, 50, 101})), sr::LossKind::kLog);
  EXPECT_EQ(sr::choose_loss(vector({1, 50, 100})), sr::LossKind::kL2);     // two decades exactly
  EXPECT_EQ(sr::choose_loss(vector({-1e-3, 1, 1e4})), sr::LossKind::kL2);  // one negative target
  EXPECT_EQ(sr::choose_loss(vector({0, 1, 1e4})), sr::LossKind::kL2);      // a zero target
  EXPECT_EQ(sr::choose_loss(vector({-1e4, -1})), sr::LossKind::kL2);
  EXPECT_EQ(sr::resolve_loss(sr::LossKind::kL1, vector({1, 1e4})), sr::LossKind::kL1);
  EXPECT_EQ(sr::resolve_loss(sr::LossKind::kAuto, vector({1, 1e4})), sr::LossKind::kLog);

  // loss() resolves "auto" the same way: predictions twice the targets cost ln(2)^2 in logarithms on targets
  // spanning four decades, and the mean squared error (1 + 9) / 2 on targets within one.
  const Eigen::MatrixXd X = vector({1, 1e4});
  const sr::Expr twice = sr::parse("2*x", {"x"});
  EXPECT_DOUBLE_EQ(sr::loss(twice, X, vector({1, 1e4}), sr::LossKind::kAuto), std::pow(std::log(2.0), 2));
  EXPECT_DOUBLE_EQ(sr::loss(twice, vector({1, 3}), vector({1, 3}), sr::LossKind::kAuto), 5.0);
}

TEST(SrDefaults, SearchRecordsTheLossItChose) {
  auto wide = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 60, 11);
  sr::Options o = defaults_budget(0);
  o.iterations = 2;
  sr::Result r = sr::search(wide.X, wide.y, wide.names, o);
  EXPECT_EQ(r.loss, sr::LossKind::kLog);
  EXPECT_TRUE(r.loss_auto);
  orbitlaw::Json j = sr::result_json(r);
  EXPECT_EQ(j["loss"], "log");
  EXPECT_EQ(j["loss_chosen_by"], "auto");
  // The front's losses are log losses: the loss of the reported best on all rows, measured independently.
  const auto& best = r.front[r.best];
  EXPECT_NEAR(sr::loss(best.expr, wide.X, wide.y, sr::LossKind::kLog), best.loss, 1e-9 * best.loss + 1e-300);

  // Negative targets: l2.
  auto signed_data = sr::test::sample("x - 3", {{"x", 1, 5}}, 50, 12);
  r = sr::search(signed_data.X, signed_data.y, signed_data.names, o);
  EXPECT_EQ(r.loss, sr::LossKind::kL2);
  EXPECT_TRUE(r.loss_auto);

  // An explicit loss is kept, and recorded as chosen by the options.
  o.loss = sr::LossKind::kRelative;
  r = sr::search(wide.X, wide.y, wide.names, o);
  EXPECT_EQ(r.loss, sr::LossKind::kRelative);
  EXPECT_FALSE(r.loss_auto);
  EXPECT_EQ(sr::result_json(r)["loss_chosen_by"], "options");
}

TEST(SrDefaults, PowerLawsAndSquareRootsAreFoundWithDefaultSettings) {
  // A non-integer power of a six-decade force, and an orbital speed v = 2 pi sqrt(M / r): neither can be
  // written with + - * / alone. Two of three seeds each, at the default operators and loss.
  struct Case {
    const char* formula;
    const char* target;
    std::vector<Range> ranges;
  };
  const std::vector<Case> cases = {
      {"39.478*m1*m2/r^2.5", "m1*m2/r^2.5", kDefaultsNewtonRanges},
      {"6.2832*sqrt(M/r)", "sqrt(M/r)", {{"M", 0.5, 5}, {"r", 0.3, 40}}},
  };
  for (const auto& c : cases) {
    int successes = 0;
    std::string texts;
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      auto d = sr::test::sample(c.formula, c.ranges, 200, 100 + seed);
      sr::Result r = sr::search(d.X, d.y, d.names, defaults_budget(seed));
      successes += best_is(r, d, c.target);
      texts += " | " + (r.best >= 0 ? r.front[r.best].text : std::string("none"));
      EXPECT_TRUE(r.notices.empty()) << c.formula;  // pow is on: nothing to suggest
    }
    EXPECT_GE(successes, 2) << c.formula << ": best were" << texts;
  }
}

TEST(SrDefaults, NoticeNamesTheOperatorTheDataNeed) {
  sr::Options o = defaults_budget(0);
  o.operators = {"+", "-", "*", "/"};
  o.iterations = 20;
  auto notices = [&](const std::string& formula, const std::vector<Range>& ranges) {
    auto d = sr::test::sample(formula, ranges, 200, 7);
    return sr::search(d.X, d.y, d.names, o).notices;
  };
  // r^2.3 needs pow; the fitted power law shows the exponents.
  auto n = notices("39.478*m1*m2/r^2.3", kDefaultsNewtonRanges);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("need the operator pow, which is off"), std::string::npos) << n[0];
  EXPECT_NE(n[0].find("r^-2.3*m1^1*m2^1"), std::string::npos) << n[0];
  // Half powers: r^2.5 = r^2 sqrt(r), and sqrt(M/r); sqrt would do.
  n = notices("39.478*m1*m2/r^2.5", kDefaultsNewtonRanges);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("need the operator sqrt or pow, which is off"), std::string::npos) << n[0];
  n = notices("sqrt(M/r)", {{"M", 0.5, 5}, {"r", 0.3, 40}});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("need the operator sqrt or pow"), std::string::npos) << n[0];
  // With sqrt on, half powers can be written: no notice, whether or not the search found the law.
  o.operators.push_back("sqrt");
  EXPECT_TRUE(notices("39.478*m1*m2/r^2.5", kDefaultsNewtonRanges).empty());
  o.operators.pop_back();
  // Whole powers are written with * and /: no notice, whether or not the search found the law.
  EXPECT_TRUE(notices("39.478*m1*m2/r^2", kDefaultsNewtonRanges).empty());
  // A target that is not positive everywhere: no power law to fit.
  EXPECT_TRUE(notices("r^2.5 - 3", {{"r", 0.5, 30}}).empty());
}

TEST(SrDefaults, AnExactFitStopsTheSearch) {
  // Noiseless Newton at the defaults: once the best loss is at the rounding floor and the simplest exact form
  // has stayed the same for target_patience iterations, the search stops, well before its 200 iterations.
  auto d = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 200, 21);
  sr::Options o = defaults_budget(0);
  o.iterations = 200;
  o.target_patience = 0;
  const sr::Result impatient = sr::search(d.X, d.y, d.names, o);
  o.target_patience = 5;
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  EXPECT_TRUE(best_is(r, d, "m1*m2/r^2")) << r.front[r.best].text;
  EXPECT_LT(r.front[r.most_accurate].loss, 1e-20);
  EXPECT_LT(r.iterations_run, 100);
  // Same seed, same path up to the first exact fit: patience 0 stops there, patience 5 at least 5 later.
  EXPECT_GE(r.iterations_run, impatient.iterations_run + 5);

  // Noisy data never reach the floor: every iteration runs.
  auto noisy = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 200, 22, 0.01);
  o.iterations = 6;
  EXPECT_EQ(sr::search(noisy.X, noisy.y, noisy.names, o).iterations_run, 6);
}

TEST(SrDefaults, HeldOutRowsChooseNewtonDespiteNoise) {
  // Newton with 1% multiplicative noise on 2000 rows: on the fitted rows, terms that fit the noise lower the
  // loss a little; on the 400 held-out rows they do not, and the simplest law within one standard error of
  // the lowest held-out loss is m1*m2/r^2.
  int successes = 0;
  std::string texts;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    auto d = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 2000, 400 + seed, 0.01);
    sr::Options o = defaults_budget(seed);
    o.iterations = 30;
    const sr::Result r = sr::search(d.X, d.y, d.names, o);
    EXPECT_EQ(r.selection, "holdout");
    EXPECT_EQ(r.holdout_rows, 400);
    for (const auto& e : r.front) EXPECT_FALSE(std::isnan(e.holdout_loss)) << e.text;
    const auto& best = r.front[r.best];
    const auto eq = sr::check_equivalence(best.expr, sr::parse("m1*m2/r^2", d.names), d.X);
    successes += eq.equivalent && eq.relation == "ratio";
    if (eq.equivalent) {
      EXPECT_NEAR(eq.constant, 39.478, 0.4) << best.text;
    }
    texts += " | " + best.text;
  }
  EXPECT_EQ(successes, 3) << "best were" << texts;

  // Fewer rows than holdout_min_rows: every row is fitted and PySR's rule chooses.
  auto small = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 249, 410, 0.01);
  sr::Options o = defaults_budget(0);
  o.iterations = 3;
  const sr::Result r = sr::search(small.X, small.y, small.names, o);
  EXPECT_EQ(r.selection, "score");
  EXPECT_EQ(r.holdout_rows, 0);
  EXPECT_TRUE(std::isnan(r.front[0].holdout_loss));
}

TEST(SrDefaults, APlateauThatALaterRestartImprovesOnIsNotTakenForTheNoiseFloor) {
  // Noiseless data beyond + - * / at this size: every restart plateaus far from the law, and a fresh restart
  // can still lower the held-out loss. The search then goes on past the one restart asked for, and stops
  // either when two restarts in a row end at the same level or after 3 more restarts.
  auto d = sr::test::sample("exp(x)*sin(3*x) + x", {{"x", 0.2, 3}}, 600, 440);
  sr::Options o = defaults_budget(0);
  o.iterations = 200;
  o.operators = {"+", "-", "*", "/"};
  o.holdout_patience = 5;
  int beyond_confirmation = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    o.seed = seed;
    const sr::Result r = sr::search(d.X, d.y, d.names, o);
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(r.stop_reason, "held-out plateau");
    EXPECT_GE(r.restarts_run, 2);
    EXPECT_LE(r.restarts_run, 4);
    beyond_confirmation += r.restarts_run > 2;
  }
  EXPECT_GE(beyond_confirmation, 1);  // some plateau was improved on by the restart after it
}

TEST(SrDefaults, ANoisySearchStopsAtTheHeldOutNoiseFloor) {
  // Newton with 1% noise: once m1*m2/r^2 is on the front, its held-out loss is the noise's and nothing the
  // search adds lowers it row by row or is simpler, so the restart stops long before its 200 iterations, a
  // second restart (beyond the one asked for) reaches the same floor and confirms it, and Newton is
  // selected. With holdout_patience 0 the same seed runs every iteration of its one restart.
  auto d = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 2000, 430, 0.01);
  sr::Options o = defaults_budget(0);
  o.iterations = 200;
  EXPECT_EQ(sr::Options{}.holdout_patience, 30);
  EXPECT_EQ(o.restarts, 1);
  o.holdout_patience = 10;
  const sr::Result r = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(r.stop_reason, "held-out plateau");
  EXPECT_EQ(r.restarts_run, 2);
  EXPECT_LT(r.iterations_run, 200);
  EXPECT_GT(r.iterations_run,
            20);  // each restart's first gain sets its level: at least holdout_patience more
  EXPECT_EQ(sr::result_json(r)["stop_reason"], "held-out plateau");
  EXPECT_EQ(sr::result_json(r)["restarts_run"], 2);
  const auto eq = sr::check_equivalence(r.front[r.best].expr, sr::parse("m1*m2/r^2", d.names), d.X);
  EXPECT_TRUE(eq.equivalent && eq.relation == "ratio") << r.front[r.best].text;

  o.holdout_patience = 0;
  o.iterations = r.iterations_run + 5;
  const sr::Result all = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(all.iterations_run, r.iterations_run + 5);
  EXPECT_EQ(all.stop_reason, "iterations");
  EXPECT_EQ(all.restarts_run, 1);

  // No held-out rows (fewer than holdout_min_rows): no plateau to see, every iteration runs.
  auto small = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 200, 431, 0.01);
  o.holdout_patience = 1;
  o.iterations = 15;
  EXPECT_EQ(sr::search(small.X, small.y, small.names, o).iterations_run, 15);

  // Noiseless data stop at the exact fit instead, and say so.
  auto exact = sr::test::sample("39.478*m1*m2/r^2", kDefaultsNewtonRanges, 400, 432);
  o.iterations = 200;
  o.holdout_patience = 30;
  const sr::Result e = sr::search(exact.X, exact.y, exact.names, o);
  EXPECT_EQ(e.stop_reason, "exact fit");

  // A time limit that has passed after the first iteration.
  o.time_limit_seconds = 1e-9;
  const sr::Result cut = sr::search(d.X, d.y, d.names, o);
  EXPECT_EQ(cut.stop_reason, "time limit");
  EXPECT_EQ(cut.iterations_run, 1);

  o.holdout_patience = -1;
  EXPECT_THROW(sr::validate(o), orbitlaw::Error);
}
