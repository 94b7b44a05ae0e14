// The GPT: paper-109m parameter count, causality of the whole model, hidden states, and a small model that
// overfits one batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

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

INSTANTIATE_TEST_SUITE_P(All, GptKinds,
                         ::testing::Values(AttentionKind::kSoftmax, AttentionKind::kLssa,
                                           AttentionKind::kLssar, AttentionKind::kSsmax,
                                           AttentionKind::kWindow),
                         [](const auto& kind_info) { return to_string(kind_info.param); });

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
