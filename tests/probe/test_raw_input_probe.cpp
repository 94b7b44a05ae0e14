// The raw-input control and the label controls of the supervised probes (raw_input_probe.hpp,
// label_control.hpp): the features are the model's input window, a ridge on three positions recovers the
// acceleration vector as well as the naive second difference does (the kinematic read-out that needs no
// network), and the control labels follow their stated law or permutation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "orbitlaw/common/units.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/label_control.hpp"
#include "orbitlaw/probe/raw_input_probe.hpp"
#include "orbitlaw/probe/statistics.hpp"
#include "probe_test_data.hpp"

using namespace orbitlaw;
using namespace orbitlaw::probe;

namespace {

constexpr double kWeekYears = 7.0 / 365.25;

// One planet around a star of 1 Msun, weekly, a in [1, 2] AU, e < 0.1: orbits along which a weekly second
// difference resolves the acceleration (about 0.12 rad of orbit per week at most).
const std::string& weekly_dataset() {
  static const std::string path = [] {
    simulator::SimulationConfig config = simulator::preset_defaults("vafa-paper");
    config.planets_min = config.planets_max = 1;
    config.star_mass_min = config.star_mass_max = 1.0;
    config.a_min = 1.0;
    config.a_max = 2.0;
    config.e_max = 0.1;
    config.cadences = {kWeekYears};
    config.systems = 60;
    config.seed = 5;
    config.sequence_rows = 1 + 2 * 40;
    simulator::WriteOptions options;
    options.threads = 2;
    const std::string out = (test::probe_temp_dir() / "raw_input_weekly_circular.h5").string();
    simulator::write_dataset(config, out, options);
    return out;
  }();
  return path;
}

struct RawInputData {
  std::unique_ptr<simulator::DatasetReader> reader;
  ForceDataset data;
  model::TokenizerConfig tokenizer;
};

RawInputData raw_input_data() {
  RawInputData s;
  s.reader = std::make_unique<simulator::DatasetReader>(weekly_dataset());
  s.tokenizer.lo = -4;
  s.tokenizer.hi = 4;
  s.tokenizer.bins = 160;
  s.tokenizer.rows = 41;
  s.tokenizer.frame = model::Frame::kHeliocentric;
  ForceSplitConfig split;
  split.target = ProbeTarget::kAcceleration;
  split.observed_rows = s.tokenizer.rows - 2;
  split.test_fraction = 0.25;
  split.validation_fraction = 0.25;
  s.data = build_force_dataset(*s.reader, split);
  return s;
}

std::vector<std::int64_t> every_system(const ForceDataset& d) {
  std::vector<std::int64_t> out = d.train_systems;
  out.insert(out.end(), d.validation_systems.begin(), d.validation_systems.end());
  out.insert(out.end(), d.test_systems.begin(), d.test_systems.end());
  return out;
}

}  // namespace

TEST(RawInputFeatures, AreTheModelsInputWindowNewestFirst) {
  const RawInputData s = raw_input_data();
  const EncodedSystems exact(*s.reader, every_system(s.data), s.tokenizer, /*coordinates=*/true);
  const EncodedSystems binned(*s.reader, every_system(s.data), s.tokenizer, /*coordinates=*/false);
  const ForceRows& rows = s.data.train;
  const Eigen::MatrixXd x = raw_input_features(exact, s.tokenizer, rows, 2, 3);
  const Eigen::MatrixXd t = raw_input_features(binned, s.tokenizer, rows, 2, 3);
  ASSERT_EQ(x.rows(), rows.size());
  ASSERT_EQ(x.cols(), 6);
  int checked = 0;
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    const simulator::System system = s.reader->read_system(rows.system[i]);
    for (int k = 0; k < 3; ++k) {
      // The planet's heliocentric position k observations back (row - 2k; the earliest repeats at the start).
      int row = rows.row[i];
      for (int back = 0; back < k && exact.visible(rows.system[i], row - 2); ++back) row -= 2;
      const int star = row - row % 2 + system.star_index();
      const Eigen::RowVector2d expected = system.position.row(row) - system.position.row(star);
      EXPECT_NEAR(x(i, 2 * k), expected(0), 1e-12);
      EXPECT_NEAR(x(i, 2 * k + 1), expected(1), 1e-12);
      // A token-head model reads the bin centre: within half a bin of the position.
      EXPECT_LE(std::abs(t(i, 2 * k) - expected(0)), 0.5 * s.tokenizer.bin_width() + 1e-12);
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
}

// The rows with two earlier observations of the planet: where a second difference exists at all.
ForceRows with_full_window(const ForceRows& rows) {
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < rows.size(); ++i)
    if (rows.row[i] >= 4) keep.push_back(i);
  return rows.select(keep);
}

TEST(RawInputVectorProbe, ThreePositionsGiveTheAccelerationLikeTheSecondDifference) {
  RawInputData s = raw_input_data();
  for (ForceRows* rows : {&s.data.train, &s.data.validation, &s.data.test}) *rows = with_full_window(*rows);
  const EncodedSystems exact(*s.reader, every_system(s.data), s.tokenizer, true);
  auto vectors = [&](const ForceRows& rows) {
    return target_vectors(*s.reader, rows, ProbeTarget::kAcceleration);
  };
  auto fit = [&](int window) {
    RawInputOptions options;
    options.window = window;
    auto f = [&](const ForceRows& rows) { return raw_input_features(exact, s.tokenizer, rows, 2, window); };
    return raw_input_vector_probe(f(s.data.train), vectors(s.data.train), f(s.data.validation),
                                  vectors(s.data.validation), f(s.data.test), options);
  };
  // The independent reference: the backward second difference (x_t - 2 x_{t-1} + x_{t-2}) / dt^2 in float64.
  const Eigen::MatrixXd x = raw_input_features(exact, s.tokenizer, s.data.test, 2, 3);
  const Eigen::MatrixXd difference =
      (x.middleCols(0, 2) - 2 * x.middleCols(2, 2) + x.middleCols(4, 2)) / (kWeekYears * kWeekYears);
  const double reference = vector_r_squared(vectors(s.data.test), difference);
  ASSERT_GT(reference, 0.9);  // the kinematic read-out this control stands for works on these orbits

  const RawInputProbeResult three = fit(3);
  const double r2_three = vector_r_squared(vectors(s.data.test), three.test_vector);
  EXPECT_GE(r2_three, reference - 0.02)
      << "a ridge on three positions is no worse than the second difference";
  EXPECT_GT(r2_three, 0.8);
  // One position carries no curvature: its linear read-out of the acceleration is far worse.
  const RawInputProbeResult one = fit(1);
  EXPECT_LT(vector_r_squared(vectors(s.data.test), one.test_vector), r2_three - 0.2);
  // The magnitude prediction is the predicted vector's length.
  EXPECT_NEAR(three.test_prediction[0], three.test_vector.row(0).norm(), 1e-15);
}

TEST(LabelControl, LawExponentLabelsFollowTheStatedLaw) {
  RawInputData s = raw_input_data();
  LabelControl control;
  control.law_exponent = 2.5;
  apply_label_control(s.data, control);
  for (const ForceRows* rows : {&s.data.train, &s.data.test}) {
    for (std::int64_t i = 0; i < rows->size(); ++i) {
      const double expected = kGravitationalConstant * rows->m2[i] / std::pow(rows->r[i], 2.5);
      EXPECT_NEAR(rows->force[i] / expected, 1.0, 1e-12);
    }
  }
}

TEST(LabelControl, ShuffleIsAPermutationOfEverySplitsLabels) {
  RawInputData s = raw_input_data();
  const ForceDataset before = s.data;
  LabelControl control;
  control.shuffle = true;
  control.seed = 3;
  apply_label_control(s.data, control);
  auto all = [](const ForceDataset& d) {
    std::vector<double> v;
    for (const ForceRows* rows : {&d.train, &d.validation, &d.test})
      v.insert(v.end(), rows->force.data(), rows->force.data() + rows->force.size());
    return v;
  };
  std::vector<double> a = all(before), b = all(s.data);
  ASSERT_EQ(a.size(), b.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < a.size(); ++i) moved += a[i] != b[i];
  EXPECT_GT(moved, a.size() * 9 / 10);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  // The labels no longer belong to their rows: the true law explains almost none of their variance.
  Eigen::VectorXd log_true(s.data.test.size()), log_shuffled(s.data.test.size());
  for (std::int64_t i = 0; i < s.data.test.size(); ++i) {
    log_true[i] = std::log(before.test.force[i]);
    log_shuffled[i] = std::log(s.data.test.force[i]);
  }
  EXPECT_LT(r_squared(log_shuffled, log_true), 0.2);
}

TEST(LabelControl, RejectsAnExponentOutOfRange) {
  RawInputData s = raw_input_data();
  LabelControl control;
  control.law_exponent = -1;
  EXPECT_THROW(apply_label_control(s.data, control), Error);
}
