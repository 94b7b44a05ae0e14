// The attention registry: names, labels, what decides the fused path and the learned scale, and the sigmoid
// kind added through it, against hand-computed weights. (Every kind is also checked against the naive float64
// reference in test_attention.cpp and trained in test_gpt.cpp, both looping over the registry.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/attention_kinds.hpp"
#include "orbitlaw/model/attention_path.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace orbitlaw::model {
namespace {

TEST(AttentionKinds, EveryKindParsesByNameAndUnknownNamesListThem) {
  for (const auto& info : attention_kinds()) EXPECT_EQ(AttentionKind::parse(info.name).name(), info.name);
  EXPECT_EQ(AttentionKind::parse("lssar"), AttentionKind::kLssar);
  try {
    AttentionKind::parse("linear");
    FAIL() << "an unknown kind parsed";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown attention kind 'linear' (known: softmax, lssa, lssar, ssmax, window, sigmoid)");
  }
}

TEST(AttentionKinds, LabelsCarryTheKindsLabelDetail) {
  AttentionSpec spec;
  EXPECT_EQ(attention_label(spec), "softmax");
  spec.kind = AttentionKind::kLssar;
  spec.p = 15;
  EXPECT_EQ(attention_label(spec), "lssar (p = 15)");
  spec.kind = AttentionKind::parse("sigmoid");
  EXPECT_EQ(attention_label(spec), "sigmoid");
}

TEST(AttentionKinds, OnlySsmaxLearnsAScaleAndEachKindHasItsFusedPaths) {
  for (const auto& info : attention_kinds()) {
    ModelConfig config;
    config.n_layer = 1;
    config.n_head = 2;
    config.n_embd = 8;
    config.vocab = 10;
    config.block_size = 8;
    config.attention.kind = AttentionKind::parse(info.name);
    Gpt model(config);
    bool has_scale = false;
    for (const auto& p : model->named_parameters()) has_scale = has_scale || p.key().ends_with("ssmax_scale");
    EXPECT_EQ(has_scale, info.name == "ssmax") << info.name;
    const bool softplus = info.name == "lssa" || info.name == "lssar";
    EXPECT_EQ(info.fused != nullptr, softplus) << info.name;
    // On a GPU (a CUDA device needs none to be named) the CUDA kernel, on the CPU the CPU kernel.
    const auto path =
        choose_attention_path(config, torch::Device(torch::kCUDA), true, [](auto&&...) { return 0.0; });
    EXPECT_EQ(path.fused, softplus) << info.name << ": " << path.reason;
    EXPECT_EQ(info.cpu_weights != nullptr, softplus) << info.name;
    // The softmax-over-scores kinds, and only they, run as scaled_dot_product_attention.
    const bool softmax_family = info.name == "softmax" || info.name == "window" || info.name == "ssmax";
    EXPECT_EQ(info.sdpa != nullptr, softmax_family) << info.name;
    EXPECT_EQ(path.json().at("path"), softplus ? "fused" : (softmax_family ? "sdpa" : "unfused"))
        << info.name;
    const auto on_cpu =
        choose_attention_path(config, torch::Device(torch::kCPU), false, [](auto&&...) { return 0.0; });
    EXPECT_EQ(on_cpu.json().at("path"), softplus ? "cpu_kernel" : (softmax_family ? "sdpa" : "unfused"))
        << info.name;
    config.attention.allow_fused = false;
    const auto off =
        choose_attention_path(config, torch::Device(torch::kCPU), true, [](auto&&...) { return 0.0; });
    EXPECT_EQ(off.json().at("path"), "unfused") << info.name;
  }
}

// sigmoid(q.k / sqrt(d) - ln n_i) for j <= i, by hand: d = 1, q = (1, 2), k = (1, -1).
TEST(AttentionKinds, SigmoidWeightsByHand) {
  auto q = torch::tensor({1.0, 2.0}, torch::kFloat64).view({1, 1, 2, 1});
  auto k = torch::tensor({1.0, -1.0}, torch::kFloat64).view({1, 1, 2, 1});
  AttentionSpec spec;
  spec.kind = AttentionKind::parse("sigmoid");
  auto w = attention_weights(q, k, spec).view({2, 2});
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  EXPECT_NEAR(w[0][0].item<double>(), sigmoid(1), 1e-15);
  EXPECT_EQ(w[0][1].item<double>(), 0);  // the future is not seen
  EXPECT_NEAR(w[1][0].item<double>(), sigmoid(2 - std::log(2)), 1e-15);
  EXPECT_NEAR(w[1][1].item<double>(), sigmoid(-2 - std::log(2)), 1e-15);
  // Its config round-trips through JSON, as a checkpoint stores it.
  ModelConfig config;
  config.attention.kind = spec.kind;
  EXPECT_EQ(ModelConfig::from_json(config.to_json()).attention.kind, spec.kind);
}

}  // namespace
}  // namespace orbitlaw::model
