#include <gtest/gtest.h>

#include "orbitlaw/common/progress.hpp"

TEST(Progress, RendersRateAndEta) {
  orbitlaw::Progress progress("train", 1000, "step");
  progress.set(250);
  progress.set_note("loss 2.5");
  // 250 steps in 50 s: 5 step/s, 750 left: ETA 150 s = 2:30.
  EXPECT_EQ(progress.render(50.0), "train: 250/1000 (25%) 5 step/s elapsed 0:50 ETA 2:30 loss 2.5");
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(orbitlaw::format_duration(59.6), "1:00");
  EXPECT_EQ(orbitlaw::format_duration(3723), "1:02:03");
  EXPECT_EQ(orbitlaw::format_duration(-1), "?");
}
