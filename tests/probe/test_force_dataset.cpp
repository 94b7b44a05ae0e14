// The force-magnitude task built from a simulated two-body dataset: labels, splits, visible rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/oracles.hpp"
#include "probe_test_data.hpp"

using namespace orbitlaw::probe;

TEST(ForceDataset, LabelsAreTheTrueStarPlanetForce) {
  const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  ForceSplitConfig config;
  config.seed = 3;
  const ForceDataset data = build_force_dataset(reader, config);
  for (const ForceRows* rows : {&data.train, &data.validation, &data.test}) {
    ASSERT_GT(rows->size(), 0);
    for (std::int64_t i = 0; i < rows->size(); ++i) {
      // Independent check: Newton from the stored positions and masses.
      const double r = (rows->position.row(i) - rows->star_position.row(i)).norm();
      EXPECT_NEAR(rows->r[i], r, 1e-12 * r);
      const double newton = 4 * M_PI * M_PI * rows->m1[i] * rows->m2[i] / (r * r);
      EXPECT_NEAR(rows->force[i], newton, 1e-9 * newton);
      EXPECT_LE(rows->m1[i], rows->m2[i]);  // heavier body = star
      EXPECT_GE(rows->m1[i], 1e-4);
      EXPECT_LE(rows->m2[i], 1.01e-2);
      EXPECT_EQ(rows->row[i] % 2, 0);  // planet rows
    }
  }
}

TEST(ForceDataset, SplitsAreDisjointBySystemAndTestHasTwoRowsEach) {
  const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  ForceSplitConfig config;
  config.test_fraction = 0.2;
  config.validation_fraction = 0.25;
  config.observed_rows = 21;  // rows 0..20 visible: planet rows 0, 2, ..., 20
  // By default every visible planet row of a test system is a test row.
  EXPECT_EQ(build_force_dataset(reader, config).test.size(), 12 * 11);
  config.test_rows_per_system = 2;  // Vafa et al.
  const ForceDataset data = build_force_dataset(reader, config);
  EXPECT_EQ(data.test_systems.size(), 12u);
  EXPECT_EQ(data.validation_systems.size(), 12u);
  EXPECT_EQ(data.train_systems.size(), 36u);
  std::set<std::int64_t> all;
  for (const auto* s : {&data.train_systems, &data.validation_systems, &data.test_systems})
    all.insert(s->begin(), s->end());
  EXPECT_EQ(all.size(), 60u);
  EXPECT_EQ(data.test.size(), 24);
  EXPECT_EQ(data.train.size(), 36 * 11);  // every visible planet row
  for (std::int64_t i = 0; i < data.train.size(); ++i) EXPECT_LE(data.train.row[i], 20);
  for (std::int64_t i = 0; i < data.test.size(); ++i) {
    EXPECT_TRUE(std::binary_search(data.test_systems.begin(), data.test_systems.end(), data.test.system[i]));
    EXPECT_LE(data.test.row[i], 20);
  }
  // The same seed gives the same split and rows; another seed another split.
  const ForceDataset again = build_force_dataset(reader, config);
  EXPECT_EQ(again.test.row, data.test.row);
  EXPECT_EQ(again.test_systems, data.test_systems);
  config.seed = 99;
  EXPECT_NE(build_force_dataset(reader, config).test_systems, data.test_systems);
}

TEST(ForceDataset, RejectsBadConfigsAndNonTwoBodyData) {
  const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  ForceSplitConfig config;
  config.test_fraction = 1.5;
  EXPECT_THROW(build_force_dataset(reader, config), orbitlaw::Error);
  config = ForceSplitConfig{};
  config.systems = 1000;
  EXPECT_THROW(build_force_dataset(reader, config), orbitlaw::Error);
  config.systems = 2;
  EXPECT_THROW(build_force_dataset(reader, config), orbitlaw::Error);  // too few for three splits
}

// Uniform circular motion of radius R through angle theta over s steps: the largest distance from the chord
// (uniform in time) is at the middle step, the sagitta R (1 - cos(theta / 2)).
TEST(ForceDataset, StraightLineDeviationIsTheSagittaOfACircularArc) {
  orbitlaw::simulator::System system;
  system.n_bodies = 2;
  system.dim = 2;
  const int steps = 41;
  const double R = 3.0, dtheta = 0.02;
  system.n_steps = steps;
  system.position = Eigen::MatrixXd::Zero(2 * steps, 2);
  for (int k = 0; k < steps; ++k)
    system.position.row(2 * k) << R * std::cos(k * dtheta), R * std::sin(k * dtheta);
  EXPECT_EQ(straight_line_deviation(system, 0), 0);
  EXPECT_EQ(straight_line_deviation(system, 2), 0);  // two points: a straight line
  for (int s : {2, 10, 40}) {
    const double theta = s * dtheta;
    EXPECT_NEAR(straight_line_deviation(system, 2 * s), R * (1 - std::cos(theta / 2)), 1e-12) << s;
  }
  // Straight-line motion never deviates.
  for (int k = 0; k < steps; ++k) system.position.row(2 * k) << 1 + 0.3 * k, -2 + 0.1 * k;
  EXPECT_NEAR(straight_line_deviation(system, 2 * 40), 0, 1e-12);
}

TEST(ForceDataset, EveryRowCarriesItsDeviation) {
  const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  const ForceDataset data = build_force_dataset(reader, ForceSplitConfig{});
  ASSERT_EQ(data.test.deviation.size(), data.test.size());
  for (std::int64_t i = 0; i < data.test.size(); ++i) {
    const auto system = reader.read_system(data.test.system[i]);
    EXPECT_EQ(data.test.deviation[i], straight_line_deviation(system, data.test.row[i]));
  }
}
