#include "orbitlaw/model/config.hpp"

#include <cmath>
#include <utility>

#include "orbitlaw/model/attention_kinds.hpp"

namespace orbitlaw::model {

std::string to_string(AttentionKind kind) { return std::string(kind.name()); }

AttentionKind parse_attention_kind(const std::string& name) { return AttentionKind::parse(name); }

std::string to_string(Head head) { return head == Head::kRegression ? "regression" : "tokens"; }

std::string to_string(Target target) {
  switch (target) {
    case Target::kStep:
      return "step";
    case Target::kStepChange:
      return "step_change";
    default:
      return "position";
  }
}

const ConfigSchema<ModelConfig>& ModelConfig::schema() {
  static const auto schema =
      ConfigSchema<ModelConfig>()
          .key("n_layer", &ModelConfig::n_layer, "transformer blocks", Range::at_least(1))
          .key("n_head", &ModelConfig::n_head, "attention heads per block", Range::at_least(1))
          .key("n_embd", &ModelConfig::n_embd, "width of the residual stream, a multiple of n_head",
               Range::at_least(1))
          .key("vocab", &ModelConfig::vocab, "tokens per channel; follows tokenizer.bins (bins + 3)",
               Range::at_least(2))
          .key("block_size", &ModelConfig::block_size,
               "context in positions; learned position embeddings cap the input to it", Range::at_least(1))
          .named(
              "attention", [](auto& c) -> auto& { return c.attention.kind; },
              [](const std::string& name) { return AttentionKind::parse(name); },
              [](AttentionKind kind) { return to_string(kind); },
              [] {
                std::vector<std::string> names;
                for (const auto& info : attention_kinds()) names.emplace_back(info.name);
                return names;
              },
              "attention kind (orbitlaw config kinds describes each)")
          .key(
              "p", [](auto& c) -> auto& { return c.attention.p; }, "lssar: the power of the re-weighting",
              Range::at_least(1))
          .key(
              "offset_rows", [](auto& c) -> auto& { return c.attention.offset_rows; },
              "lssar: O_i = 0 on the first offset_rows rows, 1 after", Range::at_least(0))
          .key(
              "window", [](auto& c) -> auto& { return c.attention.window; },
              "window: the keys each row sees, itself included", Range::at_least(1))
          .key(
              "ssmax_init", [](auto& c) -> auto& { return c.attention.ssmax_init; },
              "ssmax: initial value of the learned per-head scale", Range::greater_than(0))
          .key(
              "allow_fused", [](auto& c) -> auto& { return c.attention.allow_fused; },
              "use the kind's fused path: scaled_dot_product_attention (softmax, window, ssmax), the CPU "
              "kernel (lssa, lssar; float32) or the CUDA kernel (lssa, lssar; after a parity check)")
          .choice("positional", &ModelConfig::positional,
                  std::vector<std::pair<Positional, std::string>>{{Positional::kLearned, "learned"},
                                                                  {Positional::kRope, "rope"}},
                  "position encoding: learned embeddings or rotary (RoPE)")
          .key("rope_theta", &ModelConfig::rope_theta, "rope: the frequency base", Range::greater_than(0))
          .key("dropout", &ModelConfig::dropout, "dropout probability", Range::from_below(0, 1))
          .key("bias", &ModelConfig::bias, "bias terms in the linear layers")
          .choice("head", &ModelConfig::head,
                  std::vector<std::pair<Head, std::string>>{{Head::kTokens, "tokens"},
                                                            {Head::kRegression, "regression"}},
                  "tokens: a softmax over coordinate bins; regression: the coordinates under a squared error")
          .choice("target", &ModelConfig::target,
                  std::vector<std::pair<Target, std::string>>{{Target::kPosition, "position"},
                                                              {Target::kStep, "step"},
                                                              {Target::kStepChange, "step_change"}},
                  "regression: the next position, the step from x_t, or the step's change")
          .key("coordinate_scale", &ModelConfig::coordinate_scale,
               "regression: AU per model coordinate (0: the tokenizer's range)", Range::at_least(0));
  return schema;
}

void ModelConfig::validate() const {
  schema().check(*this, "model.");
  auto fail = [](const std::string& what) { throw Error("model config: " + what); };
  if (n_embd % n_head != 0)
    fail("n_embd (" + std::to_string(n_embd) + ") must be a positive multiple of n_head (" +
         std::to_string(n_head) + ")");
  if (positional == Positional::kRope && head_dim() % 2 != 0) fail("RoPE needs an even head dimension");
  if (target != Target::kPosition && head != Head::kRegression)
    fail("target '" + to_string(target) + "' needs head = regression");
}

Json ModelConfig::to_json() const { return schema().to_json(*this); }

ModelConfig ModelConfig::from_config(ConfigReader& s, const ModelConfig& d) {
  ModelConfig c = schema().read(s, d);
  c.validate();
  return c;
}

ModelConfig ModelConfig::from_json(const Json& json) {
  ConfigReader reader(json, "model");
  return from_config(reader, ModelConfig{});
}

Preset preset(const std::string& name) {
  Preset p;
  p.name = name;
  if (name == "paper-109m") {
    // Vafa et al.: batch 512 sequences per step (here 32 x 16 accumulation), lr 6e-4, 2000 warm-up steps.
    p.train = TrainDefaults{32, 16, 6e-4, 6e-5, 2000, 100000};
  } else if (name == "small" || name == "tiny") {
    // docs/design.md section 9: on 2 CPU cores the 7000-bin head dominates and nothing is learned in minutes;
    // 500 bins (0.2 AU) and a short context learn orbits.
    p.tokenizer.bins = 500;
    const bool small = name == "small";
    p.model.n_layer = small ? 4 : 2;
    p.model.n_head = small ? 4 : 2;
    p.model.n_embd = small ? 128 : 64;
    p.model.block_size = small ? 256 : 128;
    p.model.attention.window = small ? 64 : 32;
    p.tokenizer.rows = p.model.block_size + 1;
    p.train = TrainDefaults{small ? 8 : 16, 1, small ? 1e-3 : 2e-3, 1e-4, 50, 600};
  } else {
    throw Error("unknown preset '" + name + "' (known: paper-109m, small, tiny)");
  }
  p.model.vocab = p.tokenizer.vocab();
  return p;
}

std::vector<std::string> preset_names() { return {"paper-109m", "small", "tiny"}; }

}  // namespace orbitlaw::model
