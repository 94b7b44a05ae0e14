// The Kepler probes (kepler_probe.hpp): features that are an exact linear function of some elements give
// those elements test R^2 ~ 1 and the others ~ 0, pure noise gives ~ 0 for all; and `orbitlaw probe` with
// probes=["kepler"] reports each element's test R^2 beside the raw-input control's and their difference.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>

#include "../cli/cli_runner.hpp"
#include "orbitlaw/probe/kepler_elements.hpp"
#include "orbitlaw/probe/kepler_probe.hpp"
#include "tiny_checkpoint.hpp"

namespace fs = std::filesystem;
using namespace orbitlaw;
using namespace orbitlaw::probe;

namespace {

// Elements of random bound orbits [rows, 4]: a U(0.5, 5) AU, e U(0, 0.6), true anomaly U(-pi, pi).
Eigen::MatrixXd random_orbit_elements(Eigen::Index rows, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> a(0.5, 5), e(0, 0.6), nu(-std::numbers::pi, std::numbers::pi);
  Eigen::MatrixXd out(rows, 4);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double anomaly = nu(rng);
    out.row(i) << a(rng), e(rng), std::cos(anomaly), std::sin(anomaly);
  }
  return out;
}

Eigen::MatrixXd kepler_noise(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd out(rows, cols);
  for (Eigen::Index i = 0; i < out.size(); ++i) out.data()[i] = normal(rng);
  return out;
}

// Features: `mixed` columns of the elements (picked by `carried`) mixed by a fixed full-rank matrix plus an
// offset, followed by 4 noise columns; with no element carried, noise alone.
Eigen::MatrixXd element_features(const Eigen::MatrixXd& elements, const std::vector<int>& carried,
                                 std::mt19937_64& rng) {
  const Eigen::Index n = elements.rows(), k = static_cast<Eigen::Index>(carried.size());
  Eigen::MatrixXd out(n, 2 * k + 4);
  for (Eigen::Index j = 0; j < k; ++j) {
    const Eigen::VectorXd x = elements.col(carried[static_cast<std::size_t>(j)]);
    out.col(2 * j) = (3.0 + j) * x.array() + 0.5;
    out.col(2 * j + 1) = -0.7 * x.array() + 2.0 * j;
  }
  // Cross-mixing, so that no feature is an element on its own.
  if (k > 1) out.col(1) += 0.25 * out.col(2);
  out.rightCols(4) = kepler_noise(n, 4, rng);
  return out;
}

struct ElementFit {
  std::vector<double> r2;
};

ElementFit fit_elements_from(const std::vector<int>& carried, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Eigen::MatrixXd train = random_orbit_elements(3000, rng),
                        validation = random_orbit_elements(1000, rng),
                        test = random_orbit_elements(1000, rng);
  RawInputOptions options;
  const Eigen::MatrixXd predicted = kepler_feature_probe(
      element_features(train, carried, rng), train, element_features(validation, carried, rng), validation,
      element_features(test, carried, rng), options);
  return ElementFit{element_r2(test, predicted)};
}

}  // namespace

TEST(KeplerProbe, ExactLinearFeaturesGiveOneAndNoiseGivesZero) {
  // a and e carried linearly, the phase not at all: R^2 ~ 1 for a and e, ~ 0 for cos and sin.
  const ElementFit some = fit_elements_from({0, 1}, 3);
  ASSERT_EQ(some.r2.size(), 4u);
  EXPECT_GT(some.r2[0], 1 - 1e-9);
  EXPECT_GT(some.r2[1], 1 - 1e-9);
  EXPECT_NEAR(some.r2[2], 0, 0.02);
  EXPECT_NEAR(some.r2[3], 0, 0.02);
  // Every element carried: each R^2 ~ 1.
  for (double r2 : fit_elements_from({0, 1, 2, 3}, 4).r2) EXPECT_GT(r2, 1 - 1e-9);
  // Noise alone: R^2 ~ 0 (a held-out R^2 of an uninformative ridge is about -features / rows).
  for (double r2 : fit_elements_from({}, 5).r2) EXPECT_NEAR(r2, 0, 0.02);
}

TEST(KeplerProbe, StandardisationRoundTripsAndKeepsConstantElements) {
  std::mt19937_64 rng(7);
  Eigen::MatrixXd elements = random_orbit_elements(50, rng);
  elements.col(1).setConstant(0.2);  // every orbit with the same e
  const ElementScaling scaling = ElementScaling::fit(elements);
  const Eigen::MatrixXd z = scaling.forward(elements);
  EXPECT_LT(z.colwise().mean().cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(std::sqrt(z.col(0).squaredNorm() / 50), 1, 1e-12);
  EXPECT_EQ(scaling.sd[1], 1);  // a constant element is left unscaled, not divided by zero
  EXPECT_LT((scaling.inverse(z) - elements).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(KeplerProbe, ProbeRunReportsEachElementBesideTheRawInputControl) {
  const auto data = test::two_body_dataset(60, 30);
  const fs::path out = test::probe_temp_dir() / "cli-kepler";
  const auto result = test::run_orbitlaw("probe --checkpoint " + test::tiny_checkpoint(41) + " --data " +
                                         data + " --out " + out.string() +
                                         " --set threads=2 --set observable_bin_width=0"
                                         " --set 'probes=[\"kepler\", \"knn\"]' --set 'sr.protocols=[]'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("kepler probes: layer"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(raw input "), std::string::npos) << result.output;
  std::ifstream in(out / "probe.json");
  const auto summary = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  const Json& kepler = summary["probes"]["kepler"];
  ASSERT_TRUE(kepler.is_object()) << summary["probes"];
  EXPECT_EQ(kepler["elements"], (std::vector<std::string>{"a", "e", "cos_anomaly", "sin_anomaly"}));
  for (const auto& name : kepler_element_names()) {
    const double model = kepler["test_r2"][name].get<double>();
    const double raw = kepler["raw_input_test_r2"][name].get<double>();
    EXPECT_TRUE(std::isfinite(model) && model <= 1) << name;
    EXPECT_TRUE(std::isfinite(raw) && raw <= 1) << name;
    EXPECT_DOUBLE_EQ(kepler["selectivity"][name].get<double>(), model - raw) << name;
    // tiny model: embedding output, 2 blocks, final LayerNorm
    EXPECT_EQ(kepler["test_r2_by_layer_unused_for_selection"][name].size(), 4u) << name;
  }
  EXPECT_EQ(kepler["raw_input_window"], 3);
  // The Kepler probe makes no force predictions, so it has no accuracy entry and no law search.
  EXPECT_FALSE(summary["accuracy"].contains("kepler"));
  EXPECT_TRUE(summary["accuracy"].contains("knn"));
}

TEST(KeplerProbe, ConfigRefusesALawSearchOnElementsAndARunWithoutAModel) {
  const auto data = test::two_body_dataset(60, 30);
  const fs::path out = test::probe_temp_dir() / "cli-kepler-bad";
  auto result =
      test::run_orbitlaw("probe --checkpoint " + test::tiny_checkpoint(41) + " --data " + data + " --out " +
                         out.string() + " --set 'probes=[\"kepler\"]' --set 'sr.probes=[\"kepler\"]'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("orbital elements, not forces"), std::string::npos) << result.output;
  result = test::run_orbitlaw("probe --oracle-only --data " + data + " --out " + out.string() +
                              " --set 'probes=[\"kepler\"]'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("needs a model"), std::string::npos) << result.output;
}
