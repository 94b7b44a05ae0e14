#pragma once
// The raw-input control: the linear probes' ridge regressions fitted on the model's input window instead of
// its hidden states. A probe result that the raw input reaches as well is evidence about the data, not about
// what the network computes: with three positions the second difference x_t - 2x_{t-1} + x_{t-2} ~ a dt^2 is
// linear in the input, so a linear read-out of the acceleration vector needs no network at all
// (docs/design.md section 6c). This header pulls in LibTorch (through model_probes.hpp).
#include <Eigen/Core>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/model_probes.hpp"

namespace orbitlaw::probe {

struct RawInputOptions {
  // Observations of the planet per row: the row's own and the window - 1 before it.
  int window = 3;
  std::vector<double> lambdas = default_ridge_lambdas();
  TargetScaler::Kind target = TargetScaler::Kind::kLog;  // the magnitude probe's target scaling
  Json to_json() const;
};

// Feature rows [rows, window * dim]: the planet's coordinates as the model reads them (AU; a token's bin
// centre, or a regression-head model's exact input) at the row and the window - 1 observations before it,
// newest first. Where fewer are visible the earliest visible one repeats. `n_bodies` orders the rows (step *
// n_bodies + body).
Eigen::MatrixXd raw_input_features(const EncodedSystems& encoded, const model::TokenizerConfig& tokenizer,
                                   const ForceRows& rows, int n_bodies, int window);

struct RawInputProbeResult {
  Eigen::VectorXd test_prediction;  // magnitude per test row
  Eigen::MatrixXd test_vector;      // vector task only: [test rows, dim]
  double lambda = 0;                // magnitude task; the vector task's per component are in `lambdas`
  std::vector<double> lambdas;
  double validation_r2 = 0;  // of the fitted target (scaled magnitude, or the vector)
  Json json() const;
};

// Ridge of the scaled magnitude on the features; lambda chosen on the validation rows; test labels never
// read.
RawInputProbeResult raw_input_probe(const Eigen::MatrixXd& train_features, const Eigen::VectorXd& train_force,
                                    const Eigen::MatrixXd& validation_features,
                                    const Eigen::VectorXd& validation_force,
                                    const Eigen::MatrixXd& test_features, const RawInputOptions& options);

// One ridge per component of the target vector (divided by the train vectors' RMS length), each lambda chosen
// on the validation rows; the magnitude prediction is the predicted vector's length, as in
// linear_vector_probe.
RawInputProbeResult raw_input_vector_probe(const Eigen::MatrixXd& train_features,
                                           const Eigen::MatrixXd& train_vectors,
                                           const Eigen::MatrixXd& validation_features,
                                           const Eigen::MatrixXd& validation_vectors,
                                           const Eigen::MatrixXd& test_features,
                                           const RawInputOptions& options);

}  // namespace orbitlaw::probe
