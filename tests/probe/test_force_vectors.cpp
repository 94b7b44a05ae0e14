// The force-vector task: labels against an independent naive pairwise sum, the per-sequence normalisation and
// row split, and the Newton oracle (R^2 ~ 1) against a probe on random features (R^2 ~ 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/simulator.hpp"
#include "probe_test_data.hpp"

using namespace orbitlaw::probe;
namespace sim = orbitlaw::simulator;

namespace {

constexpr double kG = 39.47841760435743;  // 4 pi^2, AU^3 / (Msun yr^2)

// sum_j G m_i m_j (r_j - r_i) / |r_j - r_i|^3 over the bodies of one step, written out independently.
std::array<double, 2> naive_force(const std::vector<double>& mass,
                                  const std::vector<std::array<double, 2>>& at, int i) {
  std::array<double, 2> f{0, 0};
  for (std::size_t j = 0; j < mass.size(); ++j) {
    if (static_cast<int>(j) == i) continue;
    const double dx = at[j][0] - at[i][0], dy = at[j][1] - at[i][1];
    const double d3 = std::pow(dx * dx + dy * dy, 1.5);
    f[0] += kG * mass[i] * mass[j] * dx / d3;
    f[1] += kG * mass[i] * mass[j] * dy / d3;
  }
  return f;
}

// A small simulated dataset of `preset`, cached per process.
std::string dataset(const std::string& preset, int systems, int rows) {
  const auto path = orbitlaw::test::probe_temp_dir() / ("vectors_" + preset + "_" + std::to_string(systems) +
                                                        "_" + std::to_string(rows) + ".h5");
  if (!std::filesystem::exists(path)) {
    sim::SimulationConfig config = sim::preset_defaults(preset);
    config.systems = systems;
    config.seed = 5;
    config.sequence_rows = rows;
    sim::WriteOptions options;
    options.threads = 2;
    sim::write_dataset(config, path.string(), options);
  }
  return path.string();
}

}  // namespace

TEST(ForceVectors, LabelsEqualANaivePairwiseSumOnAHandMadeThreeBodyState) {
  // Two planets and a star (star last), two steps; accelerations as the simulator stores them.
  sim::System system;
  system.n_bodies = 3;
  system.n_steps = 2;
  system.dim = 2;
  system.mass = {1e-3, 3e-4, 1.2};
  const std::vector<std::vector<std::array<double, 2>>> steps = {{{1.0, 0.0}, {-0.5, 2.0}, {0.001, -0.002}},
                                                                 {{0.9, 0.4}, {-0.7, 1.9}, {0.0015, -0.001}}};
  system.position.resize(6, 2);
  system.acceleration.resize(6, 2);
  for (int s = 0; s < 2; ++s) {
    std::vector<double> flat;
    for (const auto& p : steps[s]) flat.insert(flat.end(), p.begin(), p.end());
    std::vector<double> acc(flat.size());
    sim::accelerations(system.mass, 2, flat.data(), acc.data());
    for (int b = 0; b < 3; ++b) {
      system.position.row(s * 3 + b) << steps[s][b][0], steps[s][b][1];
      system.acceleration.row(s * 3 + b) << acc[b * 2], acc[b * 2 + 1];
    }
  }
  const std::vector<int> rows = {0, 1, 3, 4};  // both planets at both steps
  const double scale = 2.5;
  const ForceVectorRows labelled = force_vector_rows(system, 7, rows, scale);
  const Eigen::MatrixXd newton = newton_force_vectors(system, rows, scale);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int step = rows[k] / 3, body = rows[k] % 3;
    const auto expected = naive_force(system.mass, steps[step], body);
    for (int c = 0; c < 2; ++c) {
      EXPECT_NEAR(labelled.force(k, c) * scale, expected[c], 1e-12 * std::abs(expected[c]) + 1e-300)
          << "row " << rows[k] << " component " << c;
      EXPECT_NEAR(newton(k, c) * scale, expected[c], 1e-12 * std::abs(expected[c]));
    }
    EXPECT_EQ(labelled.body[k], body);
    EXPECT_EQ(labelled.system[k], 7);
    EXPECT_DOUBLE_EQ(labelled.mass[k], system.mass[body]);
    EXPECT_DOUBLE_EQ(labelled.star_position(k, 0), steps[step][2][0]);
  }
  EXPECT_THROW(force_vector_rows(system, 7, {2}, 1.0), orbitlaw::Error);  // the star's row
}

TEST(ForceVectors, SimulatedLabelsAreTheForcesAtTheObservedPositions) {
  // The stored accelerations of an integrated solar system agree with the naive sum at the stored positions.
  const sim::DatasetReader reader(orbitlaw::test::solar_dataset(1, 400));
  const sim::System system = reader.read_system(0);
  ASSERT_EQ(system.n_bodies, 9);
  const auto rows = visible_planet_rows(system, 998);
  ASSERT_EQ(rows.size(), 8u * 44u);
  const ForceVectorRows labelled = force_vector_rows(system, 0, rows, 1.0);
  double worst = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int first = rows[k] - rows[k] % 9;
    std::vector<std::array<double, 2>> at;
    for (int b = 0; b < 9; ++b) at.push_back({system.position(first + b, 0), system.position(first + b, 1)});
    const auto expected = naive_force(system.mass, at, rows[k] % 9);
    const double norm = std::hypot(expected[0], expected[1]);
    worst = std::max(
        worst, std::hypot(labelled.force(k, 0) - expected[0], labelled.force(k, 1) - expected[1]) / norm);
  }
  EXPECT_LT(worst, 1e-10);
}

TEST(ForceVectors, NormalisedPerSequenceAndSplitByRowWithinEachSequence) {
  const std::string path = dataset("vafa-paper", 3, 601);
  const sim::DatasetReader reader(path);
  ForceVectorConfig config;
  config.label_fraction = 0.05;
  config.validation_fraction = 0.05;
  config.seed = 3;
  const ForceVectorDataset data = build_force_vector_dataset(reader, config);
  ASSERT_EQ(data.systems.size(), 3u);
  std::set<double> scales;
  for (std::int64_t s = 0; s < 3; ++s) {
    const sim::System system = reader.read_system(s);
    int n = 0;  // visible planet rows
    for (int row = 0; row < system.rows(); ++row) n += row % system.n_bodies != system.n_bodies - 1;
    // The documented normaliser: RMS of |m_i a_i| over the sequence's train-label rows only.
    double sum = 0;
    int n_train = 0;
    for (std::int64_t i = 0; i < data.train.size(); ++i) {
      if (data.train.system[i] != s) continue;
      sum += std::pow(system.mass[data.train.body[i]] * system.acceleration.row(data.train.row[i]).norm(), 2);
      ++n_train;
    }
    ASSERT_GT(n_train, 0);
    const double scale = std::sqrt(sum / n_train);
    scales.insert(scale);
    std::set<int> seen;
    auto check = [&](const ForceVectorRows& rows, std::size_t expected_count, const char* split) {
      std::size_t count = 0;
      for (std::int64_t i = 0; i < rows.size(); ++i) {
        if (rows.system[i] != s) continue;
        ++count;
        EXPECT_NEAR(rows.scale[i], scale, 1e-12 * scale);
        const Eigen::RowVectorXd force = system.mass[rows.body[i]] * system.acceleration.row(rows.row[i]);
        EXPECT_LT((rows.force.row(i) * scale - force).norm(), 1e-12 * force.norm()) << split;
        EXPECT_TRUE(seen.insert(rows.row[i]).second) << "row " << rows.row[i] << " in two splits";
      }
      EXPECT_EQ(count, expected_count) << split << " rows of system " << s;
    };
    const auto labels = static_cast<std::size_t>(std::ceil(0.05 * n));
    check(data.train, labels, "train");
    check(data.validation, labels, "validation");
    check(data.test, n - 2 * labels, "test");
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n));  // every visible planet row, exactly once
  }
  EXPECT_EQ(scales.size(), 3u);  // each sequence has its own scale
  // Normalised: the mean |F|^2 over a sequence's train rows is 1.
  EXPECT_NEAR(data.train.force.squaredNorm() / data.train.size(), 1.0, 1e-9);

  config.label_fraction = 0.6;
  config.validation_fraction = 0.5;
  EXPECT_THROW(build_force_vector_dataset(reader, config), orbitlaw::Error);
}

// The scale must not read test rows: poisoning every test row's acceleration leaves the train and validation
// labels and the scale bit-identical.
TEST(ForceVectors, PoisonedTestRowsLeaveTheScaleBitIdentical) {
  const sim::DatasetReader reader(dataset("vafa-paper", 3, 601));
  ForceVectorConfig config;
  config.label_fraction = 0.05;
  config.validation_fraction = 0.05;
  config.seed = 3;
  const sim::System clean = reader.read_system(1);
  const ForceVectorSplit before = split_force_vector_system(clean, 1, config);
  sim::System poisoned = clean;
  for (int row : before.test.row) poisoned.acceleration.row(row) *= 1e6;
  const ForceVectorSplit after = split_force_vector_system(poisoned, 1, config);
  ASSERT_EQ(after.test.row, before.test.row);
  EXPECT_EQ(after.train.scale, before.train.scale);
  EXPECT_EQ(after.train.force, before.train.force);
  EXPECT_EQ(after.validation.force, before.validation.force);
  EXPECT_EQ(after.test.scale, before.test.scale);
  EXPECT_NE(after.test.force, before.test.force);  // the poison did reach the test labels
}

TEST(ForceVectors, NewtonOracleHasRSquaredOneRandomFeaturesDoNot) {
  const sim::DatasetReader reader(dataset("vafa-paper", 3, 601));
  ForceVectorConfig config;
  config.label_fraction = 0.3;  // enough train rows for a fair ridge fit
  config.seed = 1;
  const ForceVectorDataset data = build_force_vector_dataset(reader, config);
  EXPECT_GT(vector_r_squared(data.test.force, data.test_newton), 1 - 1e-9);

  std::mt19937_64 rng(2);
  std::normal_distribution<double> g(0, 1);
  auto features = [&](std::int64_t n) {
    Eigen::MatrixXd X(n, 8);
    for (std::int64_t i = 0; i < n; ++i)
      for (int j = 0; j < 8; ++j) X(i, j) = g(rng);
    return X;
  };
  const Eigen::MatrixXd train_x = features(data.train.size()),
                        validation_x = features(data.validation.size()), test_x = features(data.test.size());
  Eigen::MatrixXd random(data.test.size(), 2);
  for (int c = 0; c < 2; ++c) {
    NormalEquations fit(8), select(8);
    fit.add(train_x, data.train.force.col(c));
    select.add(validation_x, data.validation.force.col(c));
    random.col(c) = select_ridge(fit, select, default_ridge_lambdas()).solution.predict(test_x);
  }
  EXPECT_LT(vector_r_squared(data.test.force, random), 0.1);
  // The KNN oracle on the same train labels sits in between.
  const double knn = vector_r_squared(data.test.force, knn_force_vectors(data.train, data.test, 2));
  EXPECT_GT(knn, vector_r_squared(data.test.force, random));
}
