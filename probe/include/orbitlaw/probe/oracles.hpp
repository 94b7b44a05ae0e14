#pragma once
// Oracles that see the true state instead of a model's hidden states: k-nearest-neighbour regression on the
// standardised state (Vafa et al.'s oracle) and Newton's law itself.
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "orbitlaw/probe/force_dataset.hpp"

namespace orbitlaw::probe {

// Newton's law for the target per row: G m1 m2 / r^2 (force) or G m2 / r^2 (acceleration).
Eigen::VectorXd newton_force(const ForceRows& rows, ProbeTarget target = ProbeTarget::kForce);

// State variables the KNN oracle can use, by name (each expands to one column per coordinate):
//   "relative_position"  planet position minus star position (dim columns)
//   "relative_velocity"  planet velocity minus star velocity (dim columns)
//   "position", "velocity", "star_position", "star_velocity"  barycentric (dim columns each)
//   "masses"             m1 (planet), m2 (star)
//   "r"                  separation
//   "log_r", "log_masses" ln r; ln m1, ln m2 (a scale-free metric: neighbours at equal relative distance)
// Default (the `knn` probe): Vafa et al.'s standardised true state, relative position, relative velocity and
// masses. The `knn_log` probe uses ln r, ln m1, ln m2 (log_knn_state), the law search's own inputs in the
// coordinates where Newton is linear: reported beside the default, never in its place.
std::vector<std::string> default_knn_state();
std::vector<std::string> log_knn_state();
std::vector<std::string> knn_state_names();
// The state matrix [n, columns]; throws Error naming an unknown variable.
Eigen::MatrixXd state_matrix(const ForceRows& rows, const std::vector<std::string>& variables);

// Exact nearest neighbours in Euclidean distance (a k-d tree over the fitted points).
class NearestNeighbours {
 public:
  explicit NearestNeighbours(Eigen::MatrixXd points);  // [n, d]; throws Error if empty or not finite
  ~NearestNeighbours();
  NearestNeighbours(NearestNeighbours&&) noexcept;
  NearestNeighbours& operator=(NearestNeighbours&&) noexcept;
  // Indices and distances of the k nearest points of `query` (d values), nearest first; ties by lower index.
  void query(const double* point, int k, std::vector<std::int64_t>& indices,
             std::vector<double>& distances) const;
  std::int64_t size() const;
  int dim() const;

 private:
  struct Tree;
  std::unique_ptr<Tree> tree_;
};

struct KnnOptions {
  int k = 2;
  std::vector<std::string> state = default_knn_state();
  int threads = 1;  // predictions do not depend on it
};

// KNN regression: columns are standardised by the training rows' mean and standard deviation (columns with
// zero spread are left unscaled); a prediction is the mean force of the k nearest training rows.
class KnnOracle {
 public:
  KnnOracle(const ForceRows& train, KnnOptions options);
  Eigen::VectorXd predict(const ForceRows& rows) const;
  // Distance (in standardised state) from each row to its nearest training row: "nearness to the training
  // states", used to draw the symbolic-regression galaxies.
  Eigen::VectorXd nearest_distance(const ForceRows& rows) const;
  const KnnOptions& options() const { return options_; }

 private:
  Eigen::MatrixXd standardise(const ForceRows& rows) const;
  KnnOptions options_;
  Eigen::RowVectorXd mean_, scale_;
  Eigen::VectorXd train_force_;
  NearestNeighbours neighbours_;
};

}  // namespace orbitlaw::probe
