#include "orbitlaw/probe/oracles.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::probe {

Eigen::VectorXd newton_force(const ForceRows& rows, ProbeTarget target) {
  const Eigen::ArrayXd acceleration = kGravitationalConstant * rows.m2.array() / rows.r.array().square();
  if (target == ProbeTarget::kForce) return (acceleration * rows.m1.array()).matrix();
  return acceleration.matrix();
}

// Vafa et al.'s oracle sees the standardised true state, not the law's inputs: a KNN on (ln r, ln m1, ln m2)
// is a regression in the coordinates where Newton's law is linear, so recovering Newton from it would prove
// little (docs/design.md section 6). The log state stays available as the labelled variant `knn_log`.
std::vector<std::string> default_knn_state() { return {"relative_position", "relative_velocity", "masses"}; }

// On the quickstart's earlier probe data (1000 two-body systems) the linear state above gave the KNN test
// R^2 -0.01 and this one 0.86: standardised linear columns that span decades leave the small-mass, small-r
// corner with distant neighbours (probe/README.md).
std::vector<std::string> log_knn_state() { return {"log_r", "log_masses"}; }

std::vector<std::string> knn_state_names() {
  return {"relative_position",
          "relative_velocity",
          "position",
          "velocity",
          "star_position",
          "star_velocity",
          "masses",
          "r",
          "log_r",
          "log_masses"};
}

Eigen::MatrixXd state_matrix(const ForceRows& rows, const std::vector<std::string>& variables) {
  if (variables.empty()) throw Error("knn: the state has no variables");
  std::vector<Eigen::MatrixXd> blocks;
  for (const auto& name : variables) {
    if (name == "relative_position") {
      blocks.push_back(rows.position - rows.star_position);
    } else if (name == "relative_velocity") {
      blocks.push_back(rows.velocity - rows.star_velocity);
    } else if (name == "position") {
      blocks.push_back(rows.position);
    } else if (name == "velocity") {
      blocks.push_back(rows.velocity);
    } else if (name == "star_position") {
      blocks.push_back(rows.star_position);
    } else if (name == "star_velocity") {
      blocks.push_back(rows.star_velocity);
    } else if (name == "masses") {
      Eigen::MatrixXd masses(rows.size(), 2);
      masses.col(0) = rows.m1;
      masses.col(1) = rows.m2;
      blocks.push_back(masses);
    } else if (name == "r") {
      blocks.push_back(rows.r);
    } else if (name == "log_r") {
      blocks.push_back(rows.r.array().log().matrix());
    } else if (name == "log_masses") {
      Eigen::MatrixXd masses(rows.size(), 2);
      masses.col(0) = rows.m1.array().log().matrix();
      masses.col(1) = rows.m2.array().log().matrix();
      blocks.push_back(masses);
    } else {
      std::string known;
      for (const auto& k : knn_state_names()) known += (known.empty() ? "" : ", ") + k;
      throw Error("knn: unknown state variable '" + name + "' (known: " + known + ")");
    }
  }
  Eigen::Index cols = 0;
  for (const auto& b : blocks) cols += b.cols();
  Eigen::MatrixXd state(rows.size(), cols);
  Eigen::Index at = 0;
  for (const auto& b : blocks) {
    state.middleCols(at, b.cols()) = b;
    at += b.cols();
  }
  return state;
}

// A k-d tree: nodes split on the dimension of largest spread at the median; leaves hold up to kLeaf points.
struct NearestNeighbours::Tree {
  static constexpr int kLeaf = 16;
  struct Node {
    int split_dim = -1;  // -1: leaf
    double split = 0;
    std::int64_t begin = 0, end = 0;  // range in `order`
    int left = -1, right = -1;
  };
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> points;
  std::vector<std::int64_t> order;
  std::vector<Node> nodes;

  int build(std::int64_t begin, std::int64_t end) {
    const int id = static_cast<int>(nodes.size());
    nodes.push_back(Node{-1, 0, begin, end, -1, -1});
    if (end - begin <= kLeaf) return id;
    const auto d = points.cols();
    int best_dim = 0;
    double best_spread = -1;
    for (Eigen::Index j = 0; j < d; ++j) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (auto i = begin; i < end; ++i) {
        lo = std::min(lo, points(order[i], j));
        hi = std::max(hi, points(order[i], j));
      }
      if (hi - lo > best_spread) {
        best_spread = hi - lo;
        best_dim = static_cast<int>(j);
      }
    }
    if (best_spread <= 0) return id;  // all points equal: keep as one leaf
    const auto mid = begin + (end - begin) / 2;
    std::nth_element(
        order.begin() + begin, order.begin() + mid, order.begin() + end,
        [&](std::int64_t a, std::int64_t b) { return points(a, best_dim) < points(b, best_dim); });
    nodes[id].split_dim = best_dim;
    nodes[id].split = points(order[mid], best_dim);
    const int left = build(begin, mid);
    const int right = build(mid, end);
    nodes[id].left = left;
    nodes[id].right = right;
    return id;
  }

  // Best k as (squared distance, index) pairs, kept sorted; lexicographic order breaks ties by index.
  void search(int id, const double* q, std::size_t k,
              std::vector<std::pair<double, std::int64_t>>& best) const {
    const Node& node = nodes[id];
    if (node.split_dim < 0) {
      for (auto i = node.begin; i < node.end; ++i) {
        const auto p = order[i];
        double dist = 0;
        for (Eigen::Index j = 0; j < points.cols(); ++j) {
          const double diff = points(p, j) - q[j];
          dist += diff * diff;
        }
        const std::pair<double, std::int64_t> candidate{dist, p};
        if (best.size() < k || candidate < best.back()) {
          best.insert(std::upper_bound(best.begin(), best.end(), candidate), candidate);
          if (best.size() > k) best.pop_back();
        }
      }
      return;
    }
    const double diff = q[node.split_dim] - node.split;
    const int near = diff < 0 ? node.left : node.right;
    const int far = diff < 0 ? node.right : node.left;
    search(near, q, k, best);
    // Points equal to the split can sit on either side, hence <= rather than <.
    if (best.size() < k || diff * diff <= best.back().first) search(far, q, k, best);
  }
};

NearestNeighbours::NearestNeighbours(Eigen::MatrixXd points) : tree_(std::make_unique<Tree>()) {
  if (points.rows() == 0 || points.cols() == 0) throw Error("nearest neighbours: no points to search");
  if (!points.allFinite()) throw Error("nearest neighbours: the points contain a non-finite value");
  tree_->points = points;
  tree_->order.resize(points.rows());
  for (Eigen::Index i = 0; i < points.rows(); ++i) tree_->order[i] = i;
  tree_->build(0, points.rows());
}

NearestNeighbours::~NearestNeighbours() = default;
NearestNeighbours::NearestNeighbours(NearestNeighbours&&) noexcept = default;
NearestNeighbours& NearestNeighbours::operator=(NearestNeighbours&&) noexcept = default;

void NearestNeighbours::query(const double* point, int k, std::vector<std::int64_t>& indices,
                              std::vector<double>& distances) const {
  std::vector<std::pair<double, std::int64_t>> best;
  best.reserve(k + 1);
  tree_->search(0, point, static_cast<std::size_t>(std::max(1, k)), best);
  indices.clear();
  distances.clear();
  for (const auto& [dist, index] : best) {
    indices.push_back(index);
    distances.push_back(std::sqrt(dist));
  }
}

std::int64_t NearestNeighbours::size() const { return tree_->points.rows(); }
int NearestNeighbours::dim() const { return static_cast<int>(tree_->points.cols()); }

namespace {

// Runs body(i) for i in [0, n) on `threads` threads; each i is written by exactly one thread.
template <class Body>
void parallel_for(std::int64_t n, int threads, Body body) {
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::int64_t>(1, n / 64))));
  if (threads == 1) {
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::int64_t i = t; i < n; i += threads) body(i);
    });
  }
  for (auto& thread : pool) thread.join();
}

}  // namespace

KnnOracle::KnnOracle(const ForceRows& train, KnnOptions options)
    : options_(std::move(options)), neighbours_([&] {
        if (train.size() == 0) throw Error("knn: no training rows");
        if (options_.k < 1) throw Error("knn: k must be >= 1, got " + std::to_string(options_.k));
        Eigen::MatrixXd state = state_matrix(train, options_.state);
        mean_ = state.colwise().mean();
        Eigen::MatrixXd centred = state.rowwise() - mean_;
        scale_ = (centred.array().square().colwise().sum() / static_cast<double>(state.rows())).sqrt();
        for (Eigen::Index j = 0; j < scale_.size(); ++j) {
          if (!(scale_[j] > 0)) scale_[j] = 1;
        }
        return Eigen::MatrixXd(centred.array().rowwise() / scale_.array());
      }()) {
  train_force_ = train.force;
  if (!train_force_.allFinite()) throw Error("knn: a training label is not finite");
}

Eigen::MatrixXd KnnOracle::standardise(const ForceRows& rows) const {
  Eigen::MatrixXd state = state_matrix(rows, options_.state);
  return (state.rowwise() - mean_).array().rowwise() / scale_.array();
}

Eigen::VectorXd KnnOracle::predict(const ForceRows& rows) const {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> state = standardise(rows);
  Eigen::VectorXd out(rows.size());
  parallel_for(rows.size(), options_.threads, [&](std::int64_t i) {
    std::vector<std::int64_t> indices;
    std::vector<double> distances;
    neighbours_.query(state.row(i).data(), options_.k, indices, distances);
    double sum = 0;
    for (auto j : indices) sum += train_force_[j];
    out[i] = sum / static_cast<double>(indices.size());
  });
  return out;
}

Eigen::VectorXd KnnOracle::nearest_distance(const ForceRows& rows) const {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> state = standardise(rows);
  Eigen::VectorXd out(rows.size());
  parallel_for(rows.size(), options_.threads, [&](std::int64_t i) {
    std::vector<std::int64_t> indices;
    std::vector<double> distances;
    neighbours_.query(state.row(i).data(), 1, indices, distances);
    out[i] = distances.front();
  });
  return out;
}

}  // namespace orbitlaw::probe
