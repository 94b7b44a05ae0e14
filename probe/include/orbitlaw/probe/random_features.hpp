#pragma once
// The random-feature control: ridge regression of the (log-scaled) force on Gaussian features that carry no
// information about the state. A negative control of the whole chain: a verdict tier that calls its
// predictions Newton's law is broken.
#include <Eigen/Core>
#include <cstdint>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/force_dataset.hpp"

namespace orbitlaw::probe {

struct RandomFeatureOptions {
  int features = 64;
  std::uint64_t seed = 0;
  Json to_json() const;
};

// Feature row of (system, row): standard normal values from a generator seeded by (seed, system, row) alone,
// so the same row gets the same features in any split and on any platform.
Eigen::MatrixXd random_features(const ForceRows& rows, const RandomFeatureOptions& options);

struct RandomFeatureResult {
  Eigen::VectorXd test_prediction;  // forces (always positive: the log target)
  double lambda = 0, validation_mse = 0;
  Json json() const;
};
// Fits on `train`, picks the ridge lambda on `validation`, predicts `test` (whose labels are not read).
RandomFeatureResult random_feature_probe(const ForceRows& train, const ForceRows& validation,
                                         const ForceRows& test, const RandomFeatureOptions& options);

}  // namespace orbitlaw::probe
