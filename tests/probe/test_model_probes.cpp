// Fine-tuning and linear probes: test labels never reach training or selection (poisoned test labels give
// bit-identical training, selection and predictions), and fine-tuning does learn on the train rows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "orbitlaw/probe/statistics.hpp"
#include "tiny_checkpoint.hpp"

using namespace orbitlaw::probe;

namespace {

struct Setup {
  orbitlaw::model::LoadedModel loaded;
  ForceDataset data;
  std::unique_ptr<EncodedSystems> encoded;
};

Setup& setup() {
  static Setup s = [] {
    Setup out;
    torch::set_num_threads(1);
    out.loaded = orbitlaw::model::load_model(orbitlaw::test::tiny_checkpoint(41));
    static const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
    ForceSplitConfig split;
    split.observed_rows = out.loaded.tokenizer.rows - 2;
    split.test_fraction = 0.2;
    split.validation_fraction = 0.2;
    out.data = build_force_dataset(reader, split);
    std::vector<std::int64_t> systems = out.data.train_systems;
    systems.insert(systems.end(), out.data.validation_systems.begin(), out.data.validation_systems.end());
    systems.insert(systems.end(), out.data.test_systems.begin(), out.data.test_systems.end());
    out.encoded = std::make_unique<EncodedSystems>(reader, systems, out.loaded.tokenizer);
    return out;
  }();
  return s;
}

ForceRows poisoned(const ForceRows& rows, double value) {
  ForceRows out = rows;
  out.force.setConstant(value);
  return out;
}

FineTuneOptions quick_finetune() {
  FineTuneOptions options;
  options.steps = 40;
  options.batch_size = 4;
  options.eval_interval = 10;
  options.threads = 1;
  options.seed = 3;
  return options;
}

}  // namespace

TEST(FineTune, TestLabelsNeverReachTrainingOrSelection) {
  auto& s = setup();
  const auto clean =
      fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, quick_finetune());
  for (double poison : {std::numeric_limits<double>::quiet_NaN(), -1e30}) {
    const auto dirty = fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation,
                                 poisoned(s.data.test, poison), quick_finetune());
    EXPECT_EQ(dirty.train_loss, clean.train_loss);
    EXPECT_EQ(dirty.validation_curve, clean.validation_curve);
    EXPECT_EQ(dirty.selected_step, clean.selected_step);
    EXPECT_EQ(dirty.test_prediction, clean.test_prediction);  // bit-identical
  }
}

TEST(FineTune, LearnsOnTrainRowsAndSelectsOnValidation) {
  auto& s = setup();
  const auto result =
      fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, quick_finetune());
  ASSERT_EQ(result.train_loss.size(), 40u);
  ASSERT_EQ(result.validation_curve.size(), 5u);  // steps 0, 10, 20, 30, 40
  EXPECT_GT(result.selected_step, 0);
  EXPECT_LT(result.selected_validation_mse, result.validation_curve.front().second);
  double lowest = result.validation_curve.front().second;
  for (const auto& [step, mse] : result.validation_curve) lowest = std::min(lowest, mse);
  EXPECT_EQ(result.selected_validation_mse, lowest);
  EXPECT_TRUE(result.test_prediction.allFinite());
  EXPECT_TRUE((result.test_prediction.array() > 0).all());  // log target scaling
  EXPECT_EQ(result.test_prediction.size(), s.data.test.size());
  // The model is not moved by fine-tuning: a second run from the same checkpoint gives the same result.
  const auto again =
      fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, quick_finetune());
  EXPECT_EQ(again.test_prediction, result.test_prediction);
}

TEST(FineTune, TimeLimitStopsEarlyAndKeepsTheBestStateSoFar) {
  auto& s = setup();
  FineTuneOptions options = quick_finetune();
  options.steps = 1000000;  // hours on one core: only the limit can end it
  options.eval_interval = options.steps;  // no periodic check: only the start and the stop
  options.time_limit_seconds = 0.5;
  const auto result = fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, options);
  EXPECT_GT(result.steps_run, 0);
  EXPECT_LT(result.steps_run, options.steps);
  EXPECT_EQ(result.train_loss.size(), static_cast<std::size_t>(result.steps_run));
  // Checked at step 0 and, because the limit stopped it, at the last step run.
  ASSERT_EQ(result.validation_curve.size(), 2u);
  EXPECT_EQ(result.validation_curve.back().first, result.steps_run);
  EXPECT_TRUE(result.test_prediction.allFinite());
  EXPECT_EQ(result.json()["steps_run"], result.steps_run);
  // Without a limit the same options run every step (here 40 of them).
  options.steps = 40;
  options.time_limit_seconds = 0;
  EXPECT_EQ(fine_tune(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, options).steps_run,
            40);
}

TEST(LinearProbe, TestLabelsNeverReachSelection) {
  auto& s = setup();
  LinearProbeOptions options;
  options.threads = 1;
  const auto clean =
      linear_probe(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, options);
  const auto dirty = linear_probe(s.loaded, *s.encoded, s.data.train, s.data.validation,
                                  poisoned(s.data.test, std::numeric_limits<double>::quiet_NaN()), options);
  EXPECT_EQ(dirty.selected_layer, clean.selected_layer);
  EXPECT_EQ(dirty.lambdas, clean.lambdas);
  EXPECT_EQ(dirty.validation_r2, clean.validation_r2);
  EXPECT_EQ(dirty.test_prediction, clean.test_prediction);
  ASSERT_EQ(clean.validation_r2.size(), static_cast<std::size_t>(s.loaded.config.n_layer + 2));
  // The selected layer has the best validation R^2.
  for (double r2 : clean.validation_r2) EXPECT_LE(r2, clean.validation_r2[clean.selected_layer]);
}

namespace {

// The hidden state of `layer` at each row of `rows`, in float64, straight from the model (no batching).
Eigen::MatrixXd hidden_at(Setup& s, const ForceRows& rows, int layer) {
  torch::NoGradGuard no_grad;
  Eigen::MatrixXd out(rows.size(), s.loaded.config.n_embd);
  for (Eigen::Index i = 0; i < rows.size(); ++i) {
    const auto system = rows.system[static_cast<std::size_t>(i)];
    const auto tokens = s.encoded->tokens(system).to(torch::kInt64).unsqueeze(0);
    const auto h =
        s.loaded.module->hidden_states(tokens)[static_cast<std::size_t>(layer)][0].to(torch::kFloat64);
    const auto at = h[s.encoded->position_of(system, rows.row[static_cast<std::size_t>(i)])].contiguous();
    for (Eigen::Index j = 0; j < out.cols(); ++j) out(i, j) = at[j].item<double>();
  }
  return out;
}

}  // namespace

// A target planted as an exact linear function of the final hidden state: the vector probe must find that
// layer and reproduce the planted test vectors (which it never reads) and their lengths.
TEST(LinearVectorProbe, RecoversAVectorPlantedInAHiddenLayer) {
  auto& s = setup();
  const int layer = s.loaded.config.n_layer + 1;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(s.loaded.config.n_embd, 2);
  for (Eigen::Index j = 0; j < A.rows(); ++j) {
    A(j, 0) = std::sin(1.0 + j);
    A(j, 1) = std::cos(2.0 * j);
  }
  const Eigen::RowVector2d offset(0.3, -0.7);
  auto planted = [&](const ForceRows& rows) {
    return Eigen::MatrixXd((hidden_at(s, rows, layer) * A).rowwise() + offset);
  };
  LinearProbeOptions options;
  options.threads = 1;
  options.lambdas = {1e-9};
  ForceRows test_inputs = s.data.test;
  test_inputs.force.setConstant(std::numeric_limits<double>::quiet_NaN());
  auto result = linear_vector_probe(s.loaded, *s.encoded, s.data.train, s.data.validation, test_inputs,
                                    planted(s.data.train), planted(s.data.validation), options);
  const Eigen::MatrixXd truth = planted(s.data.test);
  result.score_layers(truth);
  EXPECT_EQ(result.selected_layer, layer);
  EXPECT_GT(result.validation_r2[static_cast<std::size_t>(layer)], 1 - 1e-6);
  ASSERT_EQ(result.test_vector.rows(), truth.rows());
  const double rms = std::sqrt(truth.squaredNorm() / static_cast<double>(truth.rows()));
  EXPECT_LT((result.test_vector - truth).cwiseAbs().maxCoeff(), 1e-4 * rms);
  EXPECT_LT((result.test_prediction - truth.rowwise().norm()).cwiseAbs().maxCoeff(), 1e-4 * rms);
  for (double r2 : result.test_component_r2) EXPECT_GT(r2, 1 - 1e-6);
  // The embedding layer sees the tokens only: it cannot carry what the final layer computes.
  EXPECT_LT(result.validation_r2.front(), result.validation_r2[static_cast<std::size_t>(layer)] - 1e-3);
}

TEST(LinearVectorProbe, RejectsVectorsThatDoNotMatchTheRows) {
  auto& s = setup();
  LinearProbeOptions options;
  const Eigen::MatrixXd train = Eigen::MatrixXd::Ones(s.data.train.size(), 2);
  const Eigen::MatrixXd short_validation = Eigen::MatrixXd::Ones(s.data.validation.size() - 1, 2);
  EXPECT_THROW(linear_vector_probe(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, train,
                                   short_validation, options),
               orbitlaw::Error);
  Eigen::MatrixXd validation = Eigen::MatrixXd::Ones(s.data.validation.size(), 2);
  validation(0, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(linear_vector_probe(s.loaded, *s.encoded, s.data.train, s.data.validation, s.data.test, train,
                                   validation, options),
               orbitlaw::Error);
}

// The vectors behind the magnitudes: their lengths are the rows' labels, for both targets, and they point
// from the planet towards the star.
TEST(TargetVectors, LengthsAreTheLabelsAndTheyPointAtTheStar) {
  static const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::two_body_dataset(60, 30));
  for (const auto target : {ProbeTarget::kForce, ProbeTarget::kAcceleration}) {
    ForceSplitConfig split;
    split.observed_rows = 28;
    split.test_fraction = 0.2;
    split.validation_fraction = 0.2;
    split.target = target;
    const ForceDataset data = build_force_dataset(reader, split);
    const Eigen::MatrixXd vectors = target_vectors(reader, data.train, target);
    ASSERT_EQ(vectors.rows(), data.train.size());
    for (Eigen::Index i = 0; i < vectors.rows(); ++i) {
      EXPECT_NEAR(vectors.row(i).norm(), data.train.force[i], 1e-12 * data.train.force[i]);
      const Eigen::RowVectorXd towards_star = data.train.star_position.row(i) - data.train.position.row(i);
      EXPECT_GT(vectors.row(i).dot(towards_star), 0.999 * vectors.row(i).norm() * towards_star.norm());
    }
  }
}

namespace {

// Two solar-system sequences (9 bodies) for the force-vector fine-tune; 20% of the visible planet rows are
// train labels so the tiny model has something to fit.
struct VectorSetup {
  ForceVectorDataset data;
  std::unique_ptr<EncodedSystems> encoded;
};

VectorSetup& vector_setup() {
  static VectorSetup s = [] {
    VectorSetup out;
    static const orbitlaw::simulator::DatasetReader reader(orbitlaw::test::solar_dataset(2, 400));
    ForceVectorConfig split;
    split.observed_rows = setup().loaded.tokenizer.rows - 2;
    split.label_fraction = 0.2;
    split.validation_fraction = 0.2;
    out.data = build_force_vector_dataset(reader, split);
    out.encoded = std::make_unique<EncodedSystems>(reader, out.data.systems, setup().loaded.tokenizer);
    return out;
  }();
  return s;
}

}  // namespace

TEST(FineTuneVectors, TwoOutputHeadLearnsAndNeverReadsTestVectors) {
  auto& s = vector_setup();
  const auto& model = setup().loaded;
  const auto clean =
      fine_tune_vectors(model, *s.encoded, s.data.train, s.data.validation, s.data.test, quick_finetune());
  ASSERT_EQ(clean.test_prediction.rows(), s.data.test.size());
  ASSERT_EQ(clean.test_prediction.cols(), 2);
  EXPECT_TRUE(clean.test_prediction.allFinite());
  EXPECT_GT(clean.selected_step, 0);
  EXPECT_LT(clean.selected_validation_mse, clean.validation_curve.front().second);
  ForceVectorRows poisoned_test = s.data.test;
  poisoned_test.force.setConstant(std::numeric_limits<double>::quiet_NaN());
  const auto dirty =
      fine_tune_vectors(model, *s.encoded, s.data.train, s.data.validation, poisoned_test, quick_finetune());
  EXPECT_EQ(dirty.train_loss, clean.train_loss);
  EXPECT_EQ(dirty.validation_curve, clean.validation_curve);
  EXPECT_EQ(dirty.test_prediction, clean.test_prediction);  // bit-identical
}
