#pragma once
// The predictions file of a probe run (HDF5; h5py/h5dump friendly). Root 1-D datasets per test row:
//   r, m1 (planet mass), m2 (star mass), force_true, system, row, nearest_train_distance, deviation (the
//   planet's bend away from straight-line motion over the visible context, AU)
// 2-D datasets [N, dim]: position, velocity (planet, barycentric), star_position, star_velocity.
// Group predictions/<probe>: the predicted force magnitude per test row (finetune, linear, knn, newton, ...).
// Root attributes (JSON strings): format ("orbitlaw-predictions"), schema_version, model, provenance, config,
// probes (per-probe details such as selected step, layer, lambda, target scaling), observable_bin_width,
// target ("force" or "acceleration": what force_true and the predictions are the magnitude of; schema 2
// files, written before the attribute existed, are force files).
//
// The force-vector task writes its own layout (format "orbitlaw-vector-predictions", attribute task =
// "vector"), read by experiments/report.py for the arrow figure: per test row position, star_position
// [N, dim], force_true_vec [N, dim] (normalised per sequence), scale (the sequence's normaliser), mass, body,
// system, row; group predictions_vec/<probe> [N, dim] (finetune, knn, newton).
#include <Eigen/Core>
#include <string>
#include <utility>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/force_vectors.hpp"

namespace orbitlaw::probe {

inline constexpr const char* kPredictionsFormat = "orbitlaw-predictions";
inline constexpr int kPredictionsSchemaVersion = 3;  // 2: deviation, observable_bin_width; 3: target

struct Predictions {
  ForceRows rows;                          // the test rows: true state and true force
  Eigen::VectorXd nearest_train_distance;  // per row, standardised-state distance to the nearest TRAIN row
  std::vector<std::pair<std::string, Eigen::VectorXd>> probes;  // name -> predicted force, in insertion order
  std::string model;  // e.g. "softmax", "lssar", or "oracle" when no checkpoint was probed
  Json provenance = Json::object();
  Json config = Json::object();
  Json probe_details = Json::object();  // name -> details
  // A row's force is observable when its deviation exceeds this (one tokenizer bin, AU); 0: every row is.
  double observable_bin_width = 0;
  ProbeTarget target = ProbeTarget::kForce;  // what rows.force and the predictions measure

  bool observable(Eigen::Index row) const { return rows.deviation[row] > observable_bin_width; }
  double observable_fraction() const;  // share of the test rows that are observable (NaN without rows)
  const Eigen::VectorXd& prediction(const std::string& probe) const;  // throws Error naming known probes
  bool has(const std::string& probe) const;
  std::vector<std::string> probe_names() const;
};

// Writes atomically (temporary file, rename). Throws Error on a write failure or inconsistent lengths.
void write_predictions(const std::string& path, const Predictions& predictions);
// Throws Error with one line for a missing, corrupt or foreign file.
Predictions read_predictions(const std::string& path);

inline constexpr const char* kVectorPredictionsFormat = "orbitlaw-vector-predictions";

struct VectorPredictions {
  ForceVectorRows rows;                                         // the test rows and their true vectors
  std::vector<std::pair<std::string, Eigen::MatrixXd>> probes;  // name -> predicted vectors [N, dim]
  std::string model;
  Json provenance = Json::object();
  Json config = Json::object();
  Json probe_details = Json::object();
};
// Writes atomically. Throws Error on a write failure or a probe whose shape differs from the rows'.
void write_vector_predictions(const std::string& path, const VectorPredictions& predictions);

}  // namespace orbitlaw::probe
