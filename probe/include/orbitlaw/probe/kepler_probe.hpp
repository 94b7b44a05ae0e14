#pragma once
// The Kepler probes (probe "kepler"; docs/design.md section 6b): linear read-outs of the orbit's osculating
// elements (a, e and the phase as cos and sin of the true anomaly, kepler_elements.hpp) from each layer's
// frozen hidden states, beside the same read-out from the raw input window as the control. A model is
// credited with an element only as far as its hidden states beat its input: a network that merely stores its
// input window must not be called Keplerian. The fits are the existing ones (linear_vector_probe and
// raw_input_vector_probe, one ridge per element, lambda and layer chosen on the validation rows); this file
// only builds the targets, puts the elements on one footing, and scores each element. This header pulls in
// LibTorch.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "orbitlaw/probe/raw_input_probe.hpp"

namespace orbitlaw::probe {

// The elements in units of their train spread: (x - train mean) / train standard deviation per element. The
// probes' shared layer is chosen by the validation MSE summed over the elements, which in AU and radians
// would be decided by a alone; standardised, each element weighs the same. A constant element keeps scale 1.
struct ElementScaling {
  Eigen::RowVectorXd mean, sd;
  static ElementScaling fit(const Eigen::MatrixXd& train_elements);
  Eigen::MatrixXd forward(const Eigen::MatrixXd& elements) const;
  Eigen::MatrixXd inverse(const Eigen::MatrixXd& standardised) const;
};

// Test R^2 of each column (element) of a prediction.
std::vector<double> element_r2(const Eigen::MatrixXd& truth, const Eigen::MatrixXd& prediction);

// The control alone, on any features: one ridge per standardised element (raw_input_vector_probe), lambdas
// by validation MSE; returns the test rows' elements in their own units. Test elements are never read.
Eigen::MatrixXd kepler_feature_probe(const Eigen::MatrixXd& train_features,
                                     const Eigen::MatrixXd& train_elements,
                                     const Eigen::MatrixXd& validation_features,
                                     const Eigen::MatrixXd& validation_elements,
                                     const Eigen::MatrixXd& test_features, const RawInputOptions& options,
                                     RawInputProbeResult* fit = nullptr);

struct KeplerProbeResult {
  LinearVectorProbeResult model;  // on the standardised elements; its vectors are not the elements
  RawInputProbeResult raw_input;  // the control's fit, on the standardised elements
  ElementScaling scaling;
  Eigen::MatrixXd test_elements;            // the model's prediction at the selected layer [test rows, 4]
  Eigen::MatrixXd raw_input_test_elements;  // the control's
  std::vector<Eigen::MatrixXd> test_elements_by_layer;
  int raw_input_window = 0;
  // Filled by score(), after every choice is made: per element (kepler_element_names() order).
  std::vector<double> test_r2, raw_input_test_r2;
  std::vector<std::vector<double>> test_r2_by_layer;  // [layer][element]
  void score(const Eigen::MatrixXd& true_test_elements);
  Json json() const;
  std::string log_line() const;  // the selected layer and each element's test R^2 beside the control's
};

// The probes on a model's hidden states and on its raw input window (`raw`'s window and lambdas); the
// elements of the train and validation rows come from their true states, the test rows' are never read.
KeplerProbeResult kepler_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                               const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                               int n_bodies, const LinearProbeOptions& linear, const RawInputOptions& raw);

}  // namespace orbitlaw::probe
