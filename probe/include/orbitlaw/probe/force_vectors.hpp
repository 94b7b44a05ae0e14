#pragma once
// The force-vector task (docs/design.md section 6; Vafa et al. Fig. 1): in each sequence of an N-body dataset
// (our solar system), a seeded 1% of the planet rows the model sees carry the true force vector on that
// planet from all other bodies, taken from the simulation (m_i * total acceleration). Vectors are normalised
// per sequence: each is divided by the sequence's scale, the root mean square of |F| over the sequence's
// train-label rows (never its test rows), so sequences of different systems or cadences weigh alike.
//
// Split (by row, within each sequence, since the solar system is one system): of each sequence's visible
// planet rows in a seeded order, the first ceil(label_fraction * n) are train labels, the next
// ceil(validation_fraction * n) validation labels (all selection), and the remaining rows are test rows,
// whose true vectors are only used for scoring and the true-vs-predicted arrows.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::probe {

struct ForceVectorRows {
  std::vector<std::int64_t> system;  // index of the system in the trajectory dataset
  std::vector<int> row;              // row within the system (step * n_bodies + body)
  std::vector<int> body;             // planet index within the system
  Eigen::VectorXd mass;              // planet mass, Msun
  Eigen::MatrixXd position;          // planet position, barycentric, AU [n, dim]
  Eigen::MatrixXd star_position;     // [n, dim]
  Eigen::MatrixXd force;             // true force / scale, from the simulation's accelerations [n, dim]
  Eigen::VectorXd scale;             // the sequence's normaliser, Msun AU / yr^2

  std::int64_t size() const { return static_cast<std::int64_t>(system.size()); }
  int dim() const { return static_cast<int>(position.cols()); }
  static ForceVectorRows concat(const std::vector<ForceVectorRows>& parts);
  // Calls f(a.member, b.member) for every member with one entry per row.
  template <class A, class B, class F>
  static void columns(A& a, B& b, F&& f) {
    f(a.system, b.system);
    f(a.row, b.row);
    f(a.body, b.body);
    f(a.mass, b.mass);
    f(a.position, b.position);
    f(a.star_position, b.star_position);
    f(a.force, b.force);
    f(a.scale, b.scale);
  }
};

// Rows of the planets among the first `observed_rows` rows of a system (the star's rows excluded).
std::vector<int> visible_planet_rows(const simulator::System& system, int observed_rows);

// The root mean square of |m_i a_i| over `rows` (planet rows): the per-sequence normaliser.
double force_scale(const simulator::System& system, const std::vector<int>& rows);

// Labelled rows: force = m_i * acceleration_i / scale, from the simulation's stored total acceleration.
// Throws Error for a row that is not a planet row.
ForceVectorRows force_vector_rows(const simulator::System& system, std::int64_t index,
                                  const std::vector<int>& rows, double scale);

// The Newton oracle: sum over j != i of G m_i m_j (r_j - r_i) / |r_j - r_i|^3 at each row's step, from the
// positions and masses alone, divided by `scale` (per row). [n, dim].
Eigen::MatrixXd newton_force_vectors(const simulator::System& system, const std::vector<int>& rows,
                                     double scale);

struct ForceVectorConfig {
  std::int64_t systems = 0;      // systems used (the first ones); 0 = all
  double label_fraction = 0.01;  // train labels per sequence (docs/design.md section 6: 1% of positions)
  double validation_fraction = 0.01;
  int test_rows_per_system = 0;  // 0 = every remaining visible planet row (arrows along the orbit)
  int observed_rows = 998;       // rows the model sees (tokenizer rows - 2)
  std::uint64_t seed = 0;
  void validate() const;  // throws Error naming the bad setting
  Json to_json() const;
};

struct ForceVectorDataset {
  ForceVectorRows train, validation, test;
  Eigen::MatrixXd test_newton;  // the Newton oracle's prediction per test row
  std::vector<std::int64_t> systems;
  int dim = 2;
};

// One sequence's rows: its visible planet rows in a seeded order split into train, validation and test, all
// normalised by the scale of its train rows. Throws Error for a system without planets or too few rows.
struct ForceVectorSplit {
  ForceVectorRows train, validation, test;
  Eigen::MatrixXd test_newton;
};
ForceVectorSplit split_force_vector_system(const simulator::System& system, std::int64_t index,
                                           const ForceVectorConfig& config);

// Throws Error for a dataset without planets, a sequence with too few visible planet rows for the three
// splits, or an invalid config.
ForceVectorDataset build_force_vector_dataset(const simulator::DatasetReader& reader,
                                              const ForceVectorConfig& config);

// KNN oracle for vectors: the mean normalised vector of the k nearest train rows in the standardised state
// (planet position relative to the star, ln planet mass), standardised by the train rows.
Eigen::MatrixXd knn_force_vectors(const ForceVectorRows& train, const ForceVectorRows& rows, int k);

// 1 - sum |F - P|^2 / sum |F - mean F|^2 over all rows and components.
double vector_r_squared(const Eigen::MatrixXd& truth, const Eigen::MatrixXd& predicted);

}  // namespace orbitlaw::probe
