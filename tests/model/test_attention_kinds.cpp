// The attention registry: names, labels, and what decides the fused path and the learned scale. (Every kind
// is also checked against the naive float64 reference in test_attention.cpp and trained in test_gpt.cpp, both
// looping over the registry.)
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
              "unknown attention kind 'linear' (known: softmax, lssa, lssar, ssmax, window)");
  }
}

TEST(AttentionKinds, LabelsCarryTheKindsLabelDetail) {
  AttentionSpec spec;
  EXPECT_EQ(attention_label(spec), "softmax");
  spec.kind = AttentionKind::kLssar;
  spec.p = 15;
  EXPECT_EQ(attention_label(spec), "lssar (p = 15)");
}

TEST(AttentionKinds, OnlySsmaxLearnsAScaleAndOnlyTheSoftplusKindsHaveAFusedKernel) {
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
    const auto path =
        choose_attention_path(config, torch::Device(torch::kCPU), true, [](auto&&...) { return 0.0; });
    EXPECT_EQ(path.fused, softplus) << info.name << ": " << path.reason;
  }
}

}  // namespace
}  // namespace orbitlaw::model
