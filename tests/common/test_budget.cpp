// Budget: shares of a wall-clock budget, checked against a clock started in the past.
#include <gtest/gtest.h>

#include <cmath>

#include "orbitlaw/common/budget.hpp"

namespace {

using orbitlaw::Budget;

Budget started_ago(double budget_seconds, double seconds_ago) {
  const auto ago =
      std::chrono::duration_cast<Budget::Clock::duration>(std::chrono::duration<double>(seconds_ago));
  return Budget(budget_seconds, Budget::Clock::now() - ago);
}

TEST(Budget, UnlimitedNeverRunsOut) {
  const Budget none = started_ago(0, 1e6);
  EXPECT_FALSE(none.limited());
  EXPECT_FALSE(none.exhausted());
  EXPECT_TRUE(std::isinf(none.left_until(0.5)));
  EXPECT_EQ(none.cap(7, 0.5), 7);  // a stage's own limit stands
  EXPECT_EQ(none.cap(0, 0.5), 0);  // and no limit stays none
  EXPECT_FALSE(Budget(-3).limited());
}

TEST(Budget, SharesCountFromTheStart) {
  const Budget b = started_ago(100, 30);  // 30 of 100 s spent
  EXPECT_TRUE(b.limited());
  EXPECT_NEAR(b.elapsed(), 30, 0.5);
  EXPECT_NEAR(b.left_until(0.5), 20, 0.5);   // half the budget is at 50 s
  EXPECT_NEAR(b.left_until(0.95), 65, 0.5);  // 95 s - 30 s
  EXPECT_EQ(b.left_until(0.2), 1.0);         // that share is already spent: the floor
  EXPECT_EQ(b.left_until(0.2, 5.0), 5.0);
  EXPECT_NEAR(b.cap(0, 0.5), 20, 0.5);     // no own limit: what the share leaves
  EXPECT_NEAR(b.cap(10, 0.5), 10, 1e-12);  // a smaller own limit wins
  EXPECT_NEAR(b.cap(60, 0.5), 20, 0.5);    // a larger one is capped
  EXPECT_FALSE(b.exhausted());
  EXPECT_TRUE(started_ago(10, 11).exhausted());
}

}  // namespace
