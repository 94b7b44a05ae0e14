#pragma once
// Probes on a trained transformer: fine-tuning with a fresh regression head, and ridge probes on each layer's
// frozen hidden states. Both fit on the TRAIN rows, select (checkpoint step, layer, lambda) on the VALIDATION
// rows, and only then predict the TEST rows, whose labels they never read.
// This header pulls in LibTorch: translation units that include it must not include fmt or spdlog.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/regression.hpp"

namespace orbitlaw::probe {

// The sequences of the systems a probe needs, encoded once with the model's tokenizer: tokens, or the exact
// coordinates for a regression-head model (`coordinates`).
class EncodedSystems {
 public:
  EncodedSystems(const simulator::DatasetReader& reader, const std::vector<std::int64_t>& systems,
                 const model::TokenizerConfig& tokenizer, bool coordinates = false);
  EncodedSystems(const simulator::DatasetReader& reader, const std::vector<std::int64_t>& systems,
                 const model::LoadedModel& model);
  // The model's input [L, 2] (int32 tokens or float64 coordinates) and, per system row, its sequence
  // position (-1 when not visible).
  const torch::Tensor& tokens(std::int64_t system) const;
  std::int64_t position_of(std::int64_t system, int row) const;
  bool visible(std::int64_t system, int row) const;  // whether position_of(system, row) exists
  std::int64_t length() const { return length_; }    // L, the same for every system

 private:
  std::int64_t length_ = 0;
  std::vector<std::int64_t> systems_;  // sorted
  std::vector<torch::Tensor> tokens_;
  std::vector<std::vector<std::int64_t>> positions_;
  std::int64_t slot(std::int64_t system) const;
};

struct FineTuneOptions {
  int steps = 300;
  int batch_size = 8;     // systems per step (all their labelled rows count)
  double lr = 3e-4;       // AdamW, all weights
  double head_lr = 3e-3;  // the fresh head learns faster
  double weight_decay = 0.0;
  double grad_clip = 1.0;
  int eval_interval = 25;  // validation MSE every this many steps (and at the end); best state kept
  TargetScaler::Kind target = TargetScaler::Kind::kLog;
  std::uint64_t seed = 0;
  int threads = 1;
  // 0: none. Otherwise fine-tuning stops after the first step that ends past this many seconds, with a final
  // validation check; the best state so far is kept. (Makes results depend on machine speed: for budgets.)
  double time_limit_seconds = 0;
  Json to_json() const;
};

struct FineTuneResult {
  Eigen::VectorXd test_prediction;                       // force per test row
  Eigen::VectorXd validation_prediction;                 // force per validation row, from the selected state
  int selected_step = 0;                                 // step of the state kept (0 = before any update)
  double selected_validation_mse = 0;                    // in scaled-target units
  std::vector<double> train_loss;                        // per step
  std::vector<std::pair<int, double>> validation_curve;  // (step, MSE)
  int steps_run = 0;                                     // < options.steps when the time limit stopped it
  TargetScaler scaler;
  double seconds = 0;
  Json json() const;  // everything but the prediction vectors
};

// Fine-tunes a copy of the checkpoint's model (with a fresh Linear(n_embd -> 1) head on the final hidden
// state): masked MSE on the scaled targets of the train rows, all weights trained, the state with the lowest
// validation MSE kept. `test` supplies only which rows to predict; its labels are never read.
FineTuneResult fine_tune(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                         const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                         const FineTuneOptions& options);

struct VectorFineTuneResult {
  Eigen::MatrixXd test_prediction;        // normalised force vector per test row [n, dim]
  Eigen::MatrixXd validation_prediction;  // from the selected state
  int selected_step = 0;
  double selected_validation_mse = 0;
  std::vector<double> train_loss;
  std::vector<std::pair<int, double>> validation_curve;
  int steps_run = 0;
  double seconds = 0;
  Json json() const;
};

// The force-vector task: the same fine-tuning with a fresh Linear(n_embd -> dim) head regressing the
// per-sequence normalised vectors (masked MSE over both components), selected on the validation rows; the
// test rows' vectors are never read.
VectorFineTuneResult fine_tune_vectors(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                                       const ForceVectorRows& train, const ForceVectorRows& validation,
                                       const ForceVectorRows& test, const FineTuneOptions& options);

struct LinearProbeOptions {
  std::vector<double> lambdas = default_ridge_lambdas();
  TargetScaler::Kind target = TargetScaler::Kind::kLog;
  int batch_size = 16;  // systems per forward pass
  int threads = 1;
  Json to_json() const;
};

struct LinearProbeResult {
  // Per hidden-state layer (0 = embedding output, ..., n_layer = last block, n_layer + 1 = final LayerNorm).
  std::vector<double> validation_r2, test_r2_unused_for_selection, lambdas;
  int selected_layer = 0;           // by validation MSE
  Eigen::VectorXd test_prediction;  // force per test row, from the selected layer
  std::vector<Eigen::VectorXd> test_prediction_by_layer;
  TargetScaler scaler;
  double seconds = 0;
  // Fills test_r2_unused_for_selection from the true test forces, after every choice is made (the probe
  // itself never receives test labels).
  void score_layers(const Eigen::VectorXd& test_force);
  Json json() const;
};

// Ridge probes from each layer's frozen hidden states at the labelled positions. The lambda of each layer and
// the layer itself are chosen on the validation rows; test labels are not read (score_layers reports the
// per-layer test R^2 afterwards).
LinearProbeResult linear_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                               const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                               const LinearProbeOptions& options);

// Liu et al.'s probe (docs/design.md section 6b): ridge probes of the target's vector (its x and y
// components, from each layer's frozen hidden states; one lambda per component, the layer by the summed
// validation MSE). Its magnitude prediction, the length of the predicted vector, is what the law search
// reads.
struct LinearVectorProbeResult {
  std::vector<double> validation_r2, test_r2_unused_for_selection;  // vector R^2 per layer
  std::vector<std::vector<double>> lambdas;                         // per layer, per component
  int selected_layer = 0;
  double scale = 1;                 // the targets are vector / scale (RMS length of the train vectors)
  Eigen::MatrixXd test_vector;      // [test rows, dim] from the selected layer
  Eigen::VectorXd test_prediction;  // |test_vector|
  std::vector<Eigen::MatrixXd> test_vector_by_layer;
  std::vector<double> test_component_r2;  // selected layer, per component
  double seconds = 0;
  // Scores every layer and component against the true test vectors, after every choice is made.
  void score_layers(const Eigen::MatrixXd& test_vectors);
  Json json() const;
};

// `train_vectors` and `validation_vectors` ([rows, dim]) are the target's vectors at the train and validation
// rows; the test rows' vectors are never read.
LinearVectorProbeResult linear_vector_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                                            const ForceRows& train, const ForceRows& validation,
                                            const ForceRows& test, const Eigen::MatrixXd& train_vectors,
                                            const Eigen::MatrixXd& validation_vectors,
                                            const LinearProbeOptions& options);

}  // namespace orbitlaw::probe
