// The Pareto front, its scores and selections against a hand-computed example, and its JSON/CSV forms.
#include <gtest/gtest.h>

#include <cmath>

#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;

namespace {

sr::FrontEntry entry(int complexity, double loss, const std::string& text) {
  sr::FrontEntry e;
  e.complexity = complexity;
  e.loss = loss;
  e.text = text;
  return e;
}

}  // namespace

TEST(SrFront, ScoresAndSelectionsMatchHandComputation) {
  // Candidates: (4, 2) is dominated by (3, 1); (8, 0.2) loses to (8, 0.1); the infinite one is dropped.
  std::vector<sr::FrontEntry> candidates = {entry(1, 10, "a"),    entry(3, 1, "b"),        entry(4, 2, "x"),
                                            entry(5, 0.5, "c"),   entry(8, 0.2, "y"),      entry(8, 0.1, "d"),
                                            entry(10, 0.09, "e"), entry(12, INFINITY, "z")};
  sr::Result r = sr::make_front(candidates, {});
  ASSERT_EQ(r.front.size(), 5u);
  const char* texts[] = {"a", "b", "c", "d", "e"};
  // score_i = -ln(loss_i / loss_{i-1}) / (c_i - c_{i-1}), by hand:
  const double scores[] = {0, std::log(10.0) / 2, std::log(2.0) / 2, std::log(5.0) / 3,
                           std::log(0.1 / 0.09) / 2};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.front[i].text, texts[i]);
    EXPECT_NEAR(r.front[i].score, scores[i], 1e-12) << i;
  }
  EXPECT_NEAR(r.front[1].score, 1.151292546497023, 1e-12);
  EXPECT_EQ(r.highest_score, 1);  // "b"
  EXPECT_EQ(r.most_accurate, 4);  // "e"
  // best: losses <= 1.5 * 0.09 = 0.135 are "d" (score 0.536) and "e" (0.053): "d".
  EXPECT_EQ(r.best, 3);
}

TEST(SrFront, LossFloorMakesRoundingNoiseEqual) {
  std::vector<sr::FrontEntry> candidates = {entry(1, 1.0, "a"), entry(9, 2e-31, "exact"),
                                            entry(13, 1e-32, "exact + noise")};
  sr::Result without = sr::make_front(candidates, {});
  EXPECT_EQ(without.front.size(), 3u);
  EXPECT_EQ(without.front[without.best].text, "exact + noise");  // 2e-31 > 1.5 * 1e-32
  sr::Result with = sr::make_front(candidates, {}, 1e-24);
  ASSERT_EQ(with.front.size(), 2u);
  EXPECT_EQ(with.front[with.best].text, "exact");
  EXPECT_NEAR(with.front[1].score, -std::log(1e-24) / 8, 1e-12);
  EXPECT_EQ(with.front[1].loss, 2e-31);  // reported losses are untouched
  EXPECT_DOUBLE_EQ(sr::loss_floor(sr::LossKind::kLog, 2.0), 2e-24);
  EXPECT_DOUBLE_EQ(sr::loss_floor(sr::LossKind::kL1, 2.0), 2e-12);
}

TEST(SrFront, JsonAndCsv) {
  std::vector<std::string> names = {"r"};
  std::vector<sr::FrontEntry> candidates = {entry(1, 4, ""), entry(3, 1, "")};
  candidates[0].expr = sr::parse("2", names);
  candidates[1].expr = sr::parse("2*r", names);
  sr::Result r = sr::make_front(candidates, names);
  EXPECT_EQ(r.front[1].text, "2*r");
  EXPECT_EQ(r.front[1].latex, "2 \\cdot r");
  orbitlaw::Json j = sr::result_json(r);
  EXPECT_EQ(j["front"].size(), 2u);
  EXPECT_EQ(j["best"], 1);
  EXPECT_EQ(j["front"][1]["expression"]["op"], "*");
  EXPECT_NEAR(j["front"][1]["score"].get<double>(), std::log(4.0) / 2, 1e-12);
  EXPECT_EQ(j["selection"], "score");
  EXPECT_TRUE(j["front"][1]["holdout_loss"].is_null());
  EXPECT_EQ(sr::result_csv(r),
            "complexity,loss,holdout_loss,score,selection,expression\n"
            "1,4,,0,,\"2\"\n"
            "3,1,,0.69314718055994529,best score accuracy,\"2*r\"\n");
  candidates[1].holdout_loss = 1.5;
  EXPECT_EQ(sr::result_csv(sr::make_front(candidates, names)),
            "complexity,loss,holdout_loss,score,selection,expression\n"
            "1,4,,0,,\"2\"\n"
            "3,1,1.5,0.69314718055994529,best score accuracy,\"2*r\"\n");
}

TEST(SrFront, HeldOutLossesChooseTheSimplestWithinOneStandardError) {
  auto held = [](sr::FrontEntry e, double loss, double se) {
    e.holdout_loss = loss;
    e.holdout_loss_se = se;
    return e;
  };
  // Training losses keep falling; held-out losses bottom out at "d" (0.98, standard error 0.2).
  std::vector<sr::FrontEntry> candidates = {
      held(entry(1, 10, "a"), 11, 1), held(entry(3, 1, "b"), 1.2, 0.1), held(entry(5, 0.5, "c"), 1.0, 0.15),
      held(entry(8, 0.1, "d"), 0.98, 0.2), held(entry(9, 0.09, "e"), INFINITY, INFINITY)};
  sr::Result r = sr::make_front(candidates, {});
  ASSERT_EQ(r.front.size(), 5u);
  // Within 0.98 + 0.2 = 1.18: "c" (1.0) and "d"; "b" (1.2) is not. The simplest is "c".
  EXPECT_EQ(r.selection, "holdout");
  EXPECT_EQ(r.front[r.best].text, "c");
  // PySR's rule would have taken "d" (the only entries within 1.5 x 0.09 are "d" and "e"; "d" scores higher).
  for (auto& c : candidates) c.holdout_loss = c.holdout_loss_se = NAN;
  r = sr::make_front(candidates, {});
  EXPECT_EQ(r.selection, "score");
  EXPECT_EQ(r.front[r.best].text, "d");
  // Held-out losses under the floor count as equal, so the simpler of two exact fits is chosen; without a
  // floor, rounding noise (3e-31 against 1e-32, standard error 1e-33) would decide.
  candidates = {held(entry(1, 1, "a"), 1, 0.1), held(entry(9, 1e-20, "exact"), 3e-31, 1e-32),
                held(entry(13, 1e-21, "exact + noise"), 1e-32, 1e-33)};
  r = sr::make_front(candidates, {}, 1e-24);
  ASSERT_EQ(r.front.size(), 3u);
  EXPECT_EQ(r.front[r.best].text, "exact");
  r = sr::make_front(candidates, {});
  EXPECT_EQ(r.front[r.best].text, "exact + noise");
}
