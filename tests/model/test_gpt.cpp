// The GPT: paper-109m parameter count, causality of the whole model, hidden states, and a small model that
// overfits one batch; the same for the regression head, and its loss against a hand computation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <vector>

#include "naive_attention.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace orbitlaw::model {
namespace {

ModelConfig small_config(AttentionKind kind, Positional positional = Positional::kLearned) {
  ModelConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.vocab = 23;
  c.block_size = 32;
  c.attention.kind = kind;
  c.attention.window = 8;
  c.positional = positional;
  return c;
}

TEST(Gpt, Paper109mParameterCount) {
  // Counted by hand from docs/design.md section 4 (V = 7003, d = 768, 12 layers, context 999, biases on):
  const std::int64_t v = 7003, d = 768, layers = 12, context = 999;
  const std::int64_t embeddings = 2 * v * d + (2 * d * d + d) + context * d;
  const std::int64_t block =
      2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  const std::int64_t head = 2 * d + d * 2 * v + 2 * v;  // final LayerNorm, then 768 -> 2 x 7003
  const std::int64_t want = embeddings + layers * block + head;
  EXPECT_EQ(want, 108530870);
  Gpt model(preset("paper-109m").model);
  EXPECT_EQ(model->parameter_count(), want);
  EXPECT_NEAR(static_cast<double>(model->parameter_count()), 108.5e6, 0.01 * 108.5e6);
}

class GptKinds : public ::testing::TestWithParam<AttentionKind> {};

TEST_P(GptKinds, LogitsAtPositionIIgnoreLaterTokens) {
  for (auto positional : {Positional::kLearned, Positional::kRope}) {
    torch::manual_seed(11);
    Gpt model(small_config(GetParam(), positional));
    model->eval();
    torch::NoGradGuard no_grad;
    auto tokens = torch::randint(0, 23, {2, 32, 2}, torch::kInt64);
    auto changed = tokens.clone();
    const std::int64_t i = 20;
    changed.narrow(1, i + 1, 32 - i - 1).random_(0, 23);
    auto a = model->forward(tokens);
    auto b = model->forward(changed);
    EXPECT_TRUE(torch::allclose(a.x_logits.narrow(1, 0, i + 1), b.x_logits.narrow(1, 0, i + 1), 0, 1e-5));
    EXPECT_TRUE(torch::allclose(a.y_logits.narrow(1, 0, i + 1), b.y_logits.narrow(1, 0, i + 1), 0, 1e-5));
    EXPECT_FALSE(torch::allclose(a.x_logits.narrow(1, i + 1, 11), b.x_logits.narrow(1, i + 1, 11), 0, 1e-3));
  }
}

TEST_P(GptKinds, OverfitsOneBatch) {
  // Random token sequences can only be predicted by memorising them: the loss must fall from ~ln(23) = 3.1
  // to near zero.
  torch::manual_seed(12);
  auto config = small_config(GetParam());
  config.n_embd = 64;
  Gpt model(config);
  auto batch = torch::randint(0, 23, {4, 33, 2}, torch::kInt64);
  auto inputs = batch.narrow(1, 0, 32), targets = batch.narrow(1, 1, 32);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 250; ++step) {
    optimizer.zero_grad();
    auto loss = next_token_loss(model->forward(inputs), targets, -100);
    loss.backward();
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT_GT(first, 2.5);
  EXPECT_LT(last, 0.05) << to_string(GetParam());
}

INSTANTIATE_TEST_SUITE_P(All, GptKinds, ::testing::ValuesIn(testing::registered_attention_kinds()),
                         [](const auto& kind_info) { return to_string(kind_info.param); });

ModelConfig regression_config(AttentionKind kind) {
  auto c = small_config(kind);
  c.head = Head::kRegression;
  c.coordinate_scale = 2.0;
  return c;
}

TEST(GptRegression, CausalAndReadsNonCoordinateRowsAsTheStartVector) {
  torch::manual_seed(21);
  Gpt model(regression_config(AttentionKind::kWindow));
  model->eval();
  torch::NoGradGuard no_grad;
  auto xy = torch::randn({2, 32, 2}, torch::kFloat32);
  xy.select(1, 0).fill_(std::numeric_limits<float>::quiet_NaN());
  auto out = model->forward(xy);
  ASSERT_EQ(out.coordinates.sizes(), (std::vector<std::int64_t>{2, 32, 2}));
  EXPECT_TRUE(torch::isfinite(out.coordinates).all().item<bool>());  // NaN rows do not leak
  auto changed = xy.clone();
  changed.narrow(1, 21, 11).normal_();
  auto again = model->forward(changed);
  EXPECT_TRUE(torch::allclose(out.coordinates.narrow(1, 0, 21), again.coordinates.narrow(1, 0, 21), 0, 1e-6));
  EXPECT_FALSE(
      torch::allclose(out.coordinates.narrow(1, 21, 11), again.coordinates.narrow(1, 21, 11), 0, 1e-4));
  // Tokens to a regression model, or coordinates to a token model, are refused.
  EXPECT_THROW(model->forward(torch::zeros({1, 4, 2}, torch::kInt64)), Error);
  Gpt tokens(small_config(AttentionKind::kSoftmax));
  EXPECT_THROW(tokens->forward(torch::zeros({1, 4, 2})), Error);
  auto unscaled = regression_config(AttentionKind::kSoftmax);
  unscaled.coordinate_scale = 0;
  EXPECT_THROW(Gpt{unscaled}, Error);
}

// The residual targets add x_t (step) or 2 x_t - x_{t-1} (step_change) to what the same weights output as
// a position model; the first position after the cadence row has no velocity. Only the regression head has
// them.
TEST(GptRegression, ResidualTargetsAddTheCurrentPositionOrConstantVelocity) {
  auto xy = torch::randn({2, 12, 2}, torch::kFloat32);
  xy.select(1, 0).fill_(std::numeric_limits<float>::quiet_NaN());
  torch::NoGradGuard no_grad;
  auto output_of = [&](Target target) {
    torch::manual_seed(5);
    auto config = regression_config(AttentionKind::kSoftmax);
    config.target = target;
    Gpt model(config);
    model->eval();
    return model->forward(xy).coordinates;
  };
  const auto position = output_of(Target::kPosition);
  const auto step = output_of(Target::kStep);
  const auto change = output_of(Target::kStepChange);
  auto a = xy.accessor<float, 3>();
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 12; ++t)
      for (int c = 0; c < 2; ++c) {
        const double x = t == 0 ? 0.0 : a[b][t][c];
        const double before = t <= 1 ? x : a[b][t - 1][c];
        const double p = position[b][t][c].item<double>();
        EXPECT_NEAR(step[b][t][c].item<double>(), p + x, 1e-5) << b << " " << t;
        EXPECT_NEAR(change[b][t][c].item<double>(), p + 2 * x - before, 1e-5) << b << " " << t;
      }
  auto tokens = small_config(AttentionKind::kSoftmax);
  tokens.target = Target::kStep;
  EXPECT_THROW(tokens.validate(), Error);
  const auto json = regression_config(AttentionKind::kSoftmax);
  auto round = json;
  round.target = Target::kStepChange;
  EXPECT_EQ(ModelConfig::from_json(round.to_json()).target, Target::kStepChange);
}

TEST(GptRegression, LossIsTheMeanSquaredErrorInScaleUnitsOverFiniteTargets) {
  GptOutput out;
  out.coordinates = torch::tensor({{{1.0, 2.0}, {3.0, 4.0}, {0.0, 0.0}}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto targets = torch::tensor({{{1.0, 0.0}, {0.0, 4.0}, {nan, nan}}});
  // Errors (0, 2) and (3, 0) over two positions, scale 2: ((0 + 1) + (2.25 + 0)) / 4 = 0.8125.
  EXPECT_NEAR(next_position_loss(out, targets, 2.0).item<double>(), 0.8125, 1e-15);
  auto [sum, count] = position_squared_error(out, targets, 2.0);
  EXPECT_NEAR(sum.item<double>(), 3.25, 1e-15);
  EXPECT_EQ(count, 2);
}

TEST_P(GptKinds, RegressionHeadOverfitsOneBatch) {
  // Random positions can only be predicted by memorising them: the mean squared error (in units of the
  // scale) starts near the targets' second moment, 1/3 for U(-1, 1), and must fall a hundredfold.
  torch::manual_seed(22);
  auto config = regression_config(GetParam());
  config.n_embd = 64;
  Gpt model(config);
  auto batch = 2.0 * (2 * torch::rand({4, 33, 2}) - 1);
  batch.select(1, 0).fill_(std::numeric_limits<float>::quiet_NaN());
  // The first target follows the NaN row, the same start vector in every sequence: no model can tell those
  // four targets apart, which is why the training loss leaves them out (predictable_targets).
  auto inputs = batch.narrow(1, 0, 32), targets = predictable_targets(inputs, batch.narrow(1, 1, 32));
  EXPECT_TRUE(torch::isnan(targets.select(1, 0)).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(targets.narrow(1, 1, 31)).all().item<bool>());
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 400; ++step) {
    optimizer.zero_grad();
    auto loss = next_position_loss(model->forward(inputs), targets, config.coordinate_scale);
    loss.backward();
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT_GT(first, 0.1);
  EXPECT_LT(last, first / 100) << to_string(GetParam());
}

TEST(Gpt, HiddenStatesAndAttentionMaps) {
  torch::manual_seed(13);
  auto config = small_config(AttentionKind::kSoftmax);
  Gpt model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto tokens = torch::randint(0, 23, {3, 10, 2}, torch::kInt64);
  auto states = model->hidden_states(tokens);
  ASSERT_EQ(states.size(), 4u);  // embedding, 2 blocks, final LayerNorm
  for (auto& s : states) EXPECT_EQ(s.sizes(), (std::vector<std::int64_t>{3, 10, 32}));
  // The final state is post-LayerNorm: zero mean and unit variance per position before the affine part
  // (weight 1, bias 0 at initialisation).
  EXPECT_LT(states.back().mean(-1).abs().max().item<float>(), 1e-5);
  EXPECT_EQ(model->n_embd(), 32);
  auto maps = model->attention_maps(tokens);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].sizes(), (std::vector<std::int64_t>{3, 2, 10, 10}));
  EXPECT_TRUE(torch::allclose(maps[1].sum(-1), torch::ones({3, 2, 10}), 1e-5, 1e-5));
}

TEST(Gpt, LearnedPositionsRefuseInputsLongerThanTheContext) {
  Gpt model(small_config(AttentionKind::kSoftmax));
  EXPECT_THROW(model->forward(torch::zeros({1, 33, 2}, torch::kInt64)), Error);
  Gpt rope(small_config(AttentionKind::kLssar, Positional::kRope));
  EXPECT_EQ(rope->forward(torch::zeros({1, 64, 2}, torch::kInt64)).x_logits.size(1), 64);
}

TEST(Presets, CpuPresetsUseTheirTokenizersVocabulary) {
  for (const auto& name : preset_names()) {
    auto p = preset(name);
    EXPECT_EQ(p.model.vocab, p.tokenizer.vocab()) << name;
    EXPECT_EQ(p.tokenizer.rows, p.model.block_size + 1) << name;
  }
  EXPECT_THROW(preset("huge"), Error);
}

}  // namespace
}  // namespace orbitlaw::model
