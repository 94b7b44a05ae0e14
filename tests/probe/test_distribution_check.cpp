// Probe data against the model's training distribution: cadences the model never saw and coordinates its
// tokenizer clamps are named; data like the training data passes.
#include <gtest/gtest.h>

#include "orbitlaw/probe/distribution_check.hpp"
#include "probe_test_data.hpp"

using namespace orbitlaw::probe;

namespace {

constexpr double kWeek = 7.0 / 365.25;

// The two-body preset draws each system's cadence from {1 week, 0.5 yr}: 60 systems hold both.
const orbitlaw::simulator::DatasetReader& both_cadences() {
  static const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  return reader;
}

TrainingDistribution trained_on(std::vector<double> cadences, double lo = -50, double hi = 50) {
  TrainingDistribution t;
  t.lo = lo;
  t.hi = hi;
  t.cadences = std::move(cadences);
  t.observed_rows = 39;
  return t;
}

}  // namespace

TEST(DistributionCheck, AnUnseenCadenceIsNamed) {
  const auto check = check_probe_distribution(both_cadences(), 0, trained_on({kWeek}));
  ASSERT_EQ(check.probe_cadences.size(), 2u);
  ASSERT_EQ(check.unseen_cadences.size(), 1u);
  EXPECT_DOUBLE_EQ(check.unseen_cadences[0], 0.5);
  EXPECT_NE(check.problem().find("cadence 0.5 yr never seen in training"), std::string::npos)
      << check.problem();
  EXPECT_FALSE(check.json()["in_distribution"].get<bool>());
}

TEST(DistributionCheck, DataLikeTheTrainingDataPasses) {
  const auto check = check_probe_distribution(both_cadences(), 0, trained_on({kWeek, 0.5}));
  EXPECT_TRUE(check.unseen_cadences.empty());
  EXPECT_EQ(check.outside_range, 0);
  EXPECT_EQ(check.coordinates, 60 * 39 * 2);  // every visible coordinate: 39 rows x 2 of 60 systems
  EXPECT_TRUE(check.problem().empty()) << check.problem();
}

TEST(DistributionCheck, CoordinatesOutsideTheTokenizerRangeAreNamed) {
  // A range of +-1e-3 AU: nearly every coordinate of the probe data lies outside it.
  auto check = check_probe_distribution(both_cadences(), 0, trained_on({kWeek, 0.5}, -1e-3, 1e-3));
  EXPECT_GT(check.outside_range, check.coordinates / 2);
  EXPECT_NE(check.problem().find("outside the tokenizer's range"), std::string::npos) << check.problem();
  // Unknown training cadences (an older checkpoint): only the range is checked.
  check = check_probe_distribution(both_cadences(), 0, trained_on({}));
  EXPECT_FALSE(check.cadences_known);
  EXPECT_TRUE(check.unseen_cadences.empty());
  EXPECT_TRUE(check.problem().empty());
}
