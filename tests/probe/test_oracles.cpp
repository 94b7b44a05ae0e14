// Nearest neighbours against brute force; KNN and Newton oracles on hand-made rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/oracles.hpp"

using namespace orbitlaw::probe;

TEST(NearestNeighbours, MatchesBruteForce) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> g(0, 1);
  Eigen::MatrixXd points(3000, 4);
  for (int i = 0; i < points.rows(); ++i)
    for (int j = 0; j < 4; ++j) points(i, j) = g(rng) * (j + 1);
  // Duplicated points exercise ties (broken by the lower index).
  points.row(17) = points.row(5);
  NearestNeighbours nn(points);
  std::vector<std::int64_t> indices;
  std::vector<double> distances;
  for (int q = 0; q < 200; ++q) {
    Eigen::RowVector4d query = q == 0 ? Eigen::RowVector4d(points.row(5)) : Eigen::RowVector4d();
    if (q > 0)
      for (int j = 0; j < 4; ++j) query[j] = g(rng) * (j + 1);
    for (int k : {1, 2, 5}) {
      nn.query(query.data(), k, indices, distances);
      std::vector<std::pair<double, std::int64_t>> brute;
      for (int i = 0; i < points.rows(); ++i) brute.push_back({(points.row(i) - query).squaredNorm(), i});
      std::sort(brute.begin(), brute.end());
      ASSERT_EQ(indices.size(), static_cast<std::size_t>(k));
      for (int m = 0; m < k; ++m) {
        EXPECT_EQ(indices[m], brute[m].second) << "query " << q << " k " << k;
        EXPECT_NEAR(distances[m], std::sqrt(brute[m].first), 1e-12);
      }
    }
  }
  const Eigen::RowVector4d duplicate = points.row(5);  // row(5).data() of a column-major matrix is strided
  nn.query(duplicate.data(), 2, indices, distances);
  EXPECT_EQ(indices[0], 5);
  EXPECT_EQ(indices[1], 17);
}

namespace {

ForceRows rows_at(const std::vector<double>& r, const std::vector<double>& m1, const std::vector<double>& m2,
                  const std::vector<double>& force) {
  ForceRows rows;
  const auto n = static_cast<Eigen::Index>(r.size());
  rows.r = Eigen::Map<const Eigen::VectorXd>(r.data(), n);
  rows.m1 = Eigen::Map<const Eigen::VectorXd>(m1.data(), n);
  rows.m2 = Eigen::Map<const Eigen::VectorXd>(m2.data(), n);
  rows.force = Eigen::Map<const Eigen::VectorXd>(force.data(), n);
  rows.position = Eigen::MatrixXd::Zero(n, 2);
  rows.position.col(0) = rows.r;  // planet on the x axis, star at the origin
  rows.velocity = Eigen::MatrixXd::Zero(n, 2);
  rows.star_position = Eigen::MatrixXd::Zero(n, 2);
  rows.star_velocity = Eigen::MatrixXd::Zero(n, 2);
  rows.deviation = Eigen::VectorXd::Zero(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    rows.system.push_back(i);
    rows.row.push_back(0);
  }
  return rows;
}

}  // namespace

TEST(NewtonOracle, IsGM1M2OverR2) {
  const auto rows = rows_at({1.0, 2.0}, {1e-3, 1e-2}, {1.0, 5e-3}, {0, 0});
  const auto f = newton_force(rows);
  EXPECT_NEAR(f[0], 4 * M_PI * M_PI * 1e-3, 1e-15);
  EXPECT_NEAR(f[1], 4 * M_PI * M_PI * 1e-2 * 5e-3 / 4, 1e-17);
}

TEST(KnnOracle, AveragesTheTwoNearestStandardisedStates) {
  // State = r only; train r = 1, 2, 3, 10 with forces 10, 20, 30, 100. Standardising a single column scales
  // all distances equally, so neighbours are the nearest in r.
  const auto train = rows_at({1, 2, 3, 10}, {1, 1, 1, 1}, {1, 1, 1, 1}, {10, 20, 30, 100});
  KnnOptions options;
  options.k = 2;
  options.state = {"r"};
  const KnnOracle knn(train, options);
  const auto query = rows_at({2.2, 9}, {1, 1}, {1, 1}, {0, 0});
  const auto predicted = knn.predict(query);
  EXPECT_DOUBLE_EQ(predicted[0], 25);  // neighbours r = 2, 3
  EXPECT_DOUBLE_EQ(predicted[1], 65);  // neighbours r = 10, 3
  const auto distance = knn.nearest_distance(query);
  // Train r: mean 4, population sd sqrt(((9 + 4 + 1 + 36) / 4)) = sqrt(12.5).
  EXPECT_NEAR(distance[0], 0.2 / std::sqrt(12.5), 1e-12);
  EXPECT_NEAR(distance[1], 1.0 / std::sqrt(12.5), 1e-12);
}

TEST(KnnOracle, StateVariablesAreNamedAndChecked) {
  const auto rows = rows_at({1, 2}, {1e-3, 2e-3}, {1, 1}, {1, 1});
  const auto state = state_matrix(rows, {"relative_position", "relative_velocity", "masses"});
  ASSERT_EQ(state.cols(), 6);  // relative position (2), relative velocity (2), m1, m2
  EXPECT_DOUBLE_EQ(state(1, 0), 2);
  EXPECT_DOUBLE_EQ(state(1, 4), 2e-3);
  EXPECT_EQ(state_matrix(rows, default_knn_state()), state);  // Vafa et al.'s state is the default
  const auto logs = state_matrix(rows, log_knn_state());      // ln r, ln m1, ln m2
  ASSERT_EQ(logs.cols(), 3);
  EXPECT_DOUBLE_EQ(logs(1, 0), std::log(2.0));
  EXPECT_DOUBLE_EQ(logs(1, 1), std::log(2e-3));
  EXPECT_DOUBLE_EQ(logs(1, 2), 0.0);
  EXPECT_THROW(state_matrix(rows, {"momentum"}), orbitlaw::Error);
  KnnOptions zero;
  zero.k = 0;
  EXPECT_THROW(KnnOracle(rows, zero), orbitlaw::Error);
}
