#include "orbitlaw/probe/raw_input_probe.hpp"

#include <algorithm>
#include <cmath>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/regression.hpp"

namespace orbitlaw::probe {

Json RawInputOptions::to_json() const {
  return Json{{"window", window}, {"lambdas", lambdas}, {"target", TargetScaler::to_string(target)}};
}

Eigen::MatrixXd raw_input_features(const EncodedSystems& encoded, const model::TokenizerConfig& tokenizer,
                                   const ForceRows& rows, int n_bodies, int window) {
  if (window < 1) throw Error("probe config: 'raw_input.window' must be >= 1");
  if (n_bodies < 1) throw Error("raw-input probe: n_bodies must be >= 1");
  const int dim = rows.dim();
  Eigen::MatrixXd X(rows.size(), window * dim);
  std::int64_t cached_system = -1;
  torch::Tensor coordinates;  // [L, 2] float64 AU of the cached system
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    const std::int64_t system = rows.system[i];
    if (system != cached_system) {
      const torch::Tensor& input = encoded.tokens(system);
      // A regression-head model reads coordinates; a token-head model reads bins, whose centres it sees.
      coordinates = input.is_floating_point() ? input.to(torch::kFloat64)
                                              : model::decode_tokens(input.to(torch::kInt64), tokenizer);
      coordinates = coordinates.contiguous();
      cached_system = system;
    }
    const auto* values = coordinates.data_ptr<double>();
    const auto columns = coordinates.size(1);
    int row = rows.row[i];
    std::int64_t position = encoded.position_of(system, row);
    for (int k = 0; k < window; ++k) {
      // The previous observation of the same body, where the model's context holds it.
      if (k > 0 && encoded.visible(system, row - n_bodies)) {
        row -= n_bodies;
        position = encoded.position_of(system, row);
      }
      for (int d = 0; d < dim; ++d) X(i, k * dim + d) = values[position * columns + d];
    }
  }
  if (!X.allFinite()) throw Error("raw-input probe: an input coordinate is not a coordinate bin");
  return X;
}

Json RawInputProbeResult::json() const {
  Json out{{"validation_r2", validation_r2},
           {"what", "ridge on the model's input window (no network): the raw-input control"}};
  if (lambdas.empty()) {
    out["lambda"] = lambda;
  } else {
    out["lambdas"] = lambdas;
  }
  return out;
}

namespace {

double r2_of(const NormalEquations& validation, const NormalEquations::Solution& solution) {
  const double variance = validation.y_variance();
  return variance > 0 ? 1 - validation.mse(solution) / variance : 0;
}

}  // namespace

RawInputProbeResult raw_input_probe(const Eigen::MatrixXd& train_features, const Eigen::VectorXd& train_force,
                                    const Eigen::MatrixXd& validation_features,
                                    const Eigen::VectorXd& validation_force,
                                    const Eigen::MatrixXd& test_features, const RawInputOptions& options) {
  const auto scaler = TargetScaler::fit(options.target, train_force);
  const int features = static_cast<int>(train_features.cols());
  NormalEquations fit(features), select(features);
  fit.add(train_features, scaler.forward(train_force));
  select.add(validation_features, scaler.forward(validation_force));
  const auto ridge = select_ridge(fit, select, options.lambdas);
  RawInputProbeResult out;
  out.lambda = ridge.solution.lambda;
  out.validation_r2 = r2_of(select, ridge.solution);
  out.test_prediction = scaler.inverse(ridge.solution.predict(test_features));
  return out;
}

RawInputProbeResult raw_input_vector_probe(const Eigen::MatrixXd& train_features,
                                           const Eigen::MatrixXd& train_vectors,
                                           const Eigen::MatrixXd& validation_features,
                                           const Eigen::MatrixXd& validation_vectors,
                                           const Eigen::MatrixXd& test_features,
                                           const RawInputOptions& options) {
  if (train_vectors.rows() != train_features.rows() ||
      validation_vectors.rows() != validation_features.rows() ||
      train_vectors.cols() != validation_vectors.cols() || train_vectors.cols() < 1)
    throw Error("raw-input vector probe: the target vectors do not match the train and validation rows");
  const double scale = std::sqrt(train_vectors.squaredNorm() / static_cast<double>(train_vectors.rows()));
  if (!(scale > 0)) throw Error("raw-input vector probe: every train vector is zero");
  const int features = static_cast<int>(train_features.cols());
  RawInputProbeResult out;
  out.test_vector.resize(test_features.rows(), train_vectors.cols());
  Eigen::MatrixXd validation_prediction(validation_features.rows(), train_vectors.cols());
  for (Eigen::Index c = 0; c < train_vectors.cols(); ++c) {
    NormalEquations fit(features), select(features);
    fit.add(train_features, train_vectors.col(c) / scale);
    select.add(validation_features, validation_vectors.col(c) / scale);
    const auto ridge = select_ridge(fit, select, options.lambdas);
    out.lambdas.push_back(ridge.solution.lambda);
    out.test_vector.col(c) = ridge.solution.predict(test_features) * scale;
    validation_prediction.col(c) = ridge.solution.predict(validation_features) * scale;
  }
  out.validation_r2 = vector_r_squared(validation_vectors, validation_prediction);
  out.test_prediction = out.test_vector.rowwise().norm();
  return out;
}

}  // namespace orbitlaw::probe
