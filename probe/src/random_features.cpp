#include "orbitlaw/probe/random_features.hpp"

#include <cmath>
#include <numbers>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/probe/regression.hpp"

namespace orbitlaw::probe {

Json RandomFeatureOptions::to_json() const { return Json{{"features", features}, {"seed", seed}}; }

Eigen::MatrixXd random_features(const ForceRows& rows, const RandomFeatureOptions& options) {
  if (options.features < 1) throw Error("probe config: 'random.features' must be >= 1");
  Eigen::MatrixXd X(rows.size(), options.features);
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    const auto key =
        static_cast<std::uint64_t>(rows.system[i]) * 1000003ull + static_cast<std::uint64_t>(rows.row[i]);
    SplitMix64 rng(derive_seed(options.seed, 7000 + key));
    // Box-Muller on two uniforms in (0, 1].
    for (int j = 0; j < options.features; ++j) {
      const double u1 = (static_cast<double>(rng.next() >> 11) + 1.0) * 0x1.0p-53;
      const double u2 = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      X(i, j) = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    }
  }
  return X;
}

Json RandomFeatureResult::json() const {
  return Json{{"lambda", lambda},
              {"validation_mse", validation_mse},
              {"target", "log"},
              {"what", "ridge on random Gaussian features: a negative control"}};
}

RandomFeatureResult random_feature_probe(const ForceRows& train, const ForceRows& validation,
                                         const ForceRows& test, const RandomFeatureOptions& options) {
  const auto scaler = TargetScaler::fit(TargetScaler::Kind::kLog, train.force);
  NormalEquations fit(options.features), select(options.features);
  fit.add(random_features(train, options), scaler.forward(train.force));
  select.add(random_features(validation, options), scaler.forward(validation.force));
  const auto ridge = select_ridge(fit, select, default_ridge_lambdas());
  RandomFeatureResult out;
  out.lambda = ridge.solution.lambda;
  out.validation_mse = ridge.validation_mse;
  out.test_prediction = scaler.inverse(ridge.solution.predict(random_features(test, options)));
  return out;
}

}  // namespace orbitlaw::probe
