// The Kepler probes (kepler_probe.hpp): element targets put on one footing, fitted by the existing linear
// probes on hidden states and on the raw input window, and scored per element. Includes LibTorch: no fmt or
// spdlog here.
#include "orbitlaw/probe/kepler_probe.hpp"

#include <cstdio>
#include <utility>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/kepler_elements.hpp"
#include "orbitlaw/probe/statistics.hpp"

namespace orbitlaw::probe {

ElementScaling ElementScaling::fit(const Eigen::MatrixXd& train_elements) {
  if (train_elements.rows() < 2) throw Error("kepler probe: fewer than 2 train rows");
  ElementScaling out;
  out.mean = train_elements.colwise().mean();
  const Eigen::MatrixXd centred = train_elements.rowwise() - out.mean;
  out.sd = (centred.colwise().squaredNorm() / static_cast<double>(train_elements.rows())).cwiseSqrt();
  for (Eigen::Index c = 0; c < out.sd.size(); ++c)
    if (!(out.sd[c] > 0)) out.sd[c] = 1;
  return out;
}

Eigen::MatrixXd ElementScaling::forward(const Eigen::MatrixXd& elements) const {
  return ((elements.rowwise() - mean).array().rowwise() / sd.array()).matrix();
}

Eigen::MatrixXd ElementScaling::inverse(const Eigen::MatrixXd& standardised) const {
  return (standardised.array().rowwise() * sd.array()).matrix().rowwise() + mean;
}

std::vector<double> element_r2(const Eigen::MatrixXd& truth, const Eigen::MatrixXd& prediction) {
  if (truth.rows() != prediction.rows() || truth.cols() != prediction.cols())
    throw Error("kepler probe: predicted and true elements differ in shape");
  std::vector<double> out;
  for (Eigen::Index c = 0; c < truth.cols(); ++c) out.push_back(r_squared(truth.col(c), prediction.col(c)));
  return out;
}

Eigen::MatrixXd kepler_feature_probe(const Eigen::MatrixXd& train_features,
                                     const Eigen::MatrixXd& train_elements,
                                     const Eigen::MatrixXd& validation_features,
                                     const Eigen::MatrixXd& validation_elements,
                                     const Eigen::MatrixXd& test_features, const RawInputOptions& options,
                                     RawInputProbeResult* fit) {
  const ElementScaling scaling = ElementScaling::fit(train_elements);
  RawInputProbeResult result =
      raw_input_vector_probe(train_features, scaling.forward(train_elements), validation_features,
                             scaling.forward(validation_elements), test_features, options);
  Eigen::MatrixXd out = scaling.inverse(result.test_vector);
  if (fit) *fit = std::move(result);
  return out;
}

void KeplerProbeResult::score(const Eigen::MatrixXd& true_test_elements) {
  test_r2 = element_r2(true_test_elements, test_elements);
  raw_input_test_r2 = element_r2(true_test_elements, raw_input_test_elements);
  test_r2_by_layer.clear();
  for (const auto& prediction : test_elements_by_layer)
    test_r2_by_layer.push_back(element_r2(true_test_elements, prediction));
}

namespace {

// {"a": values[0], "e": values[1], ...}; empty (not yet scored) gives null.
Json per_element_json(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  Json out = Json::object();
  for (std::size_t k = 0; k < values.size(); ++k) out[kepler_element_names()[k]] = values[k];
  return out;
}

std::vector<double> element_differences(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) out.push_back(a[k] - b[k]);
  return out;
}

std::vector<double> row_values(const Eigen::RowVectorXd& v) { return {v.data(), v.data() + v.size()}; }

}  // namespace

Json KeplerProbeResult::json() const {
  Json by_layer = Json::object();
  for (std::size_t k = 0; k < kepler_element_names().size() && !test_r2_by_layer.empty(); ++k) {
    std::vector<double> values;
    for (const auto& layer : test_r2_by_layer) values.push_back(layer[k]);
    by_layer[kepler_element_names()[k]] = values;
  }
  Json model_fit = model.json();
  model_fit.erase("test_r2_unused_for_selection");  // of the standardised vector; per element below
  model_fit.erase("test_component_r2_unused_for_selection");
  model_fit.erase("target");
  return Json{
      {"elements", kepler_element_names()},
      {"definition",
       "osculating two-body elements of the planet relative to the star from the true state, mu = G (m_star "
       "+ "
       "m_planet): a = 1 / (2/r - v^2/mu) (AU), e = |e_vec|, the phase as cos and sin of the true anomaly "
       "(of the true longitude where e < 1e-10)"},
      {"test_r2", per_element_json(test_r2)},
      {"raw_input_test_r2", per_element_json(raw_input_test_r2)},
      {"selectivity", per_element_json(element_differences(test_r2, raw_input_test_r2))},
      {"test_r2_by_layer_unused_for_selection", by_layer},
      {"selected_layer", model.selected_layer},
      {"model", model_fit},
      {"raw_input", raw_input.json()},
      {"raw_input_window", raw_input_window},
      {"standardisation",
       {{"mean", per_element_json(row_values(scaling.mean))},
        {"sd", per_element_json(row_values(scaling.sd))}}},
      {"selection",
       "each element standardised by the train rows' mean and sd; per layer and element lambda, then one "
       "layer "
       "for all elements, by the summed validation MSE; the control's lambdas by validation MSE"},
      {"selectivity_is", "the model's test R^2 minus the raw-input control's, per element"}};
}

std::string KeplerProbeResult::log_line() const {
  std::string out = "kepler probes: layer " + std::to_string(model.selected_layer) + " selected; test R^2";
  for (std::size_t k = 0; k < test_r2.size() && k < raw_input_test_r2.size(); ++k) {
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%s %s %.4f (raw input %.4f)", k ? "," : "",
                  kepler_element_names()[k].c_str(), test_r2[k], raw_input_test_r2[k]);
    out += buffer;
  }
  return out;
}

KeplerProbeResult kepler_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                               const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                               int n_bodies, const LinearProbeOptions& linear, const RawInputOptions& raw) {
  KeplerProbeResult out;
  const Eigen::MatrixXd train_elements = kepler_elements(train);
  const Eigen::MatrixXd validation_elements = kepler_elements(validation);
  out.scaling = ElementScaling::fit(train_elements);
  out.model =
      linear_vector_probe(loaded, encoded, train, validation, test, out.scaling.forward(train_elements),
                          out.scaling.forward(validation_elements), linear);
  for (const auto& layer : out.model.test_vector_by_layer)
    out.test_elements_by_layer.push_back(out.scaling.inverse(layer));
  out.test_elements = out.test_elements_by_layer[static_cast<std::size_t>(out.model.selected_layer)];

  auto features = [&](const ForceRows& rows) {
    return raw_input_features(encoded, loaded.tokenizer, rows, n_bodies, raw.window);
  };
  out.raw_input_window = raw.window;
  out.raw_input_test_elements =
      kepler_feature_probe(features(train), train_elements, features(validation), validation_elements,
                           features(test), raw, &out.raw_input);
  return out;
}

}  // namespace orbitlaw::probe
