#include "orbitlaw/model/config.hpp"

#include <cmath>

namespace orbitlaw::model {

namespace {
struct KindName {
  AttentionKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {{AttentionKind::kSoftmax, "softmax"},
                                   {AttentionKind::kLssa, "lssa"},
                                   {AttentionKind::kLssar, "lssar"},
                                   {AttentionKind::kSsmax, "ssmax"},
                                   {AttentionKind::kWindow, "window"}};
}  // namespace

std::string to_string(AttentionKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "unknown";
}

AttentionKind parse_attention_kind(const std::string& name) {
  for (const auto& k : kKindNames)
    if (name == k.name) return k.kind;
  throw Error("unknown attention kind '" + name + "' (known: softmax, lssa, lssar, ssmax, window)");
}

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

void ModelConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error("model config: " + what); };
  if (n_layer < 1) fail("n_layer must be at least 1");
  if (n_head < 1) fail("n_head must be at least 1");
  if (n_embd < 1 || n_embd % n_head != 0)
    fail("n_embd (" + std::to_string(n_embd) + ") must be a positive multiple of n_head (" +
         std::to_string(n_head) + ")");
  if (positional == Positional::kRope && head_dim() % 2 != 0) fail("RoPE needs an even head dimension");
  if (vocab < 2) fail("vocab must be at least 2");
  if (block_size < 1) fail("block_size must be at least 1");
  if (attention.p < 1) fail("p must be at least 1 (got " + std::to_string(attention.p) + ")");
  if (attention.offset_rows < 0) fail("offset_rows must be non-negative");
  if (attention.window < 1) fail("window must be at least 1");
  if (!(attention.ssmax_init > 0)) fail("ssmax_init must be positive");
  if (!(rope_theta > 0)) fail("rope_theta must be positive");
  if (dropout < 0 || dropout >= 1) fail("dropout must be in [0, 1)");
  if (target != Target::kPosition && head != Head::kRegression)
    fail("target '" + to_string(target) + "' needs head = regression");
  if (!(coordinate_scale >= 0) || !std::isfinite(coordinate_scale))
    fail("coordinate_scale must be finite and non-negative (0: the tokenizer's range)");
}

Json ModelConfig::to_json() const {
  return Json{{"n_layer", n_layer},
              {"n_head", n_head},
              {"n_embd", n_embd},
              {"vocab", vocab},
              {"block_size", block_size},
              {"attention", to_string(attention.kind)},
              {"p", attention.p},
              {"offset_rows", attention.offset_rows},
              {"window", attention.window},
              {"ssmax_init", attention.ssmax_init},
              {"allow_fused", attention.allow_fused},
              {"positional", positional == Positional::kRope ? "rope" : "learned"},
              {"rope_theta", rope_theta},
              {"dropout", dropout},
              {"bias", bias},
              {"head", to_string(head)},
              {"target", to_string(target)},
              {"coordinate_scale", coordinate_scale}};
}

ModelConfig ModelConfig::from_config(ConfigReader& s, const ModelConfig& d) {
  ModelConfig c;
  c.n_layer = s.get<int>("n_layer", d.n_layer);
  c.n_head = s.get<int>("n_head", d.n_head);
  c.n_embd = s.get<int>("n_embd", d.n_embd);
  c.vocab = s.get<int>("vocab", d.vocab);
  c.block_size = s.get<int>("block_size", d.block_size);
  c.attention.kind = parse_attention_kind(s.get<std::string>("attention", to_string(d.attention.kind)));
  c.attention.p = s.get<double>("p", d.attention.p);
  c.attention.offset_rows = s.get<int>("offset_rows", d.attention.offset_rows);
  c.attention.window = s.get<int>("window", d.attention.window);
  c.attention.ssmax_init = s.get<double>("ssmax_init", d.attention.ssmax_init);
  c.attention.allow_fused = s.get<bool>("allow_fused", d.attention.allow_fused);
  const std::string pos =
      s.get<std::string>("positional", d.positional == Positional::kRope ? "rope" : "learned");
  if (pos == "rope") {
    c.positional = Positional::kRope;
  } else if (pos == "learned") {
    c.positional = Positional::kLearned;
  } else {
    throw Error("model config: positional must be 'learned' or 'rope' (got '" + pos + "')");
  }
  c.rope_theta = s.get<double>("rope_theta", d.rope_theta);
  c.dropout = s.get<double>("dropout", d.dropout);
  c.bias = s.get<bool>("bias", d.bias);
  const std::string head = s.get<std::string>("head", to_string(d.head));
  if (head == "regression") {
    c.head = Head::kRegression;
  } else if (head == "tokens") {
    c.head = Head::kTokens;
  } else {
    throw Error("model config: head must be 'tokens' or 'regression' (got '" + head + "')");
  }
  const std::string target = s.get<std::string>("target", to_string(d.target));
  if (target == "position") {
    c.target = Target::kPosition;
  } else if (target == "step") {
    c.target = Target::kStep;
  } else if (target == "step_change") {
    c.target = Target::kStepChange;
  } else {
    throw Error("model config: target must be 'position', 'step' or 'step_change' (got '" + target + "')");
  }
  c.coordinate_scale = s.get<double>("coordinate_scale", d.coordinate_scale);
  s.finish();
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
