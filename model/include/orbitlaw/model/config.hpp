#pragma once
// Model configuration (docs/design.md section 4) and the named presets: the paper's 109M GPT, CPU-sized ones.
#include <string>
#include <string_view>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/model/tokenizer.hpp"

namespace orbitlaw::model {

// An attention kind (docs/design.md section 5), by name. What a kind computes, the keys it reads, whether a
// fused kernel exists and its description live in one entry of the registry
// (orbitlaw/model/attention_kinds.hpp, model/src/attention_kinds.cpp): adding a kind adds one entry there.
class AttentionKind {
 public:
  constexpr AttentionKind() = default;
  // The registered kind called `name`; throws Error naming the registered kinds otherwise.
  static AttentionKind parse(std::string_view name);
  constexpr std::string_view name() const { return name_; }
  friend constexpr bool operator==(AttentionKind a, AttentionKind b) { return a.name_ == b.name_; }

  // The kinds of the papers, for code and tests that name one; every other kind is reached by its name.
  static const AttentionKind kSoftmax, kLssa, kLssar, kSsmax, kWindow;

 private:
  constexpr explicit AttentionKind(std::string_view name) : name_(name) {}
  std::string_view name_ = "softmax";  // always a registry entry's name, which has static storage
};
inline constexpr AttentionKind AttentionKind::kSoftmax{"softmax"};
inline constexpr AttentionKind AttentionKind::kLssa{"lssa"};
inline constexpr AttentionKind AttentionKind::kLssar{"lssar"};
inline constexpr AttentionKind AttentionKind::kSsmax{"ssmax"};
inline constexpr AttentionKind AttentionKind::kWindow{"window"};
std::string to_string(AttentionKind kind);
AttentionKind parse_attention_kind(const std::string& name);  // AttentionKind::parse

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kSoftmax;
  double p = 15;          // LSSAR power (>= 1)
  int offset_rows = 3;    // LSSAR: O_i = 0 on the first offset_rows rows, 1 afterwards
  int window = 128;       // sliding-window softmax: each row sees its last `window` keys (itself included)
  double ssmax_init = 1;  // SSMax: initial value of the learnable per-head scale s
  // Use the kind's fused path where it has one: its CUDA kernel on CUDA tensors when compiled in (lssa,
  // lssar), or PyTorch's scaled_dot_product_attention on any device (softmax, window, ssmax).
  bool allow_fused = true;
};

enum class Positional { kLearned, kRope };

// What the model reads and predicts: coordinate tokens with a softmax over bins per channel (Vafa et al.), or
// the coordinates themselves as real numbers through a linear embedding, predicted by a linear head under a
// mean-squared-error loss (Liu et al.'s regression setting; docs/design.md section 4).
enum class Head { kTokens, kRegression };
std::string to_string(Head head);

// What the regression head's output means: the next position itself ("position", Liu et al.), the step from
// the current input ("step": x_hat = x_t + output), or the step's change ("step_change": x_hat = 2 x_t -
// x_{t-1}
// + output, so the head predicts the curvature a dt^2 on top of constant velocity). The inputs are the
// previous positions of the sequence, so the two residual targets mean one body's step only where a sequence
// holds one body (the heliocentric frame of one-planet systems); a position after the cadence row has no
// x_{t-1} and takes x_t in its place.
enum class Target { kPosition, kStep, kStepChange };
std::string to_string(Target target);

struct ModelConfig {
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab = 7003;      // per channel; must equal the tokenizer's vocab()
  int block_size = 999;  // training context (positions); learned positions cap the input length to this
  AttentionSpec attention;
  Positional positional = Positional::kLearned;
  double rope_theta = 10000;
  double dropout = 0;
  bool bias = true;
  Head head = Head::kTokens;
  Target target = Target::kPosition;  // regression head only
  // Regression head: coordinates are divided by this (AU) on the way in and multiplied on the way out; 0 in a
  // config means "the tokenizer's coordinate_scale()", which training resolves.
  double coordinate_scale = 0;

  int head_dim() const { return n_embd / n_head; }
  // The "model" section's keys: types, defaults (these members' initial values), ranges, descriptions.
  static const ConfigSchema<ModelConfig>& schema();
  void validate() const;  // throws Error on a value outside its range or an inconsistent setting
  Json to_json() const;
  static ModelConfig from_config(ConfigReader& section, const ModelConfig& defaults);
  static ModelConfig from_json(const Json& json);
  bool operator==(const ModelConfig& other) const { return to_json() == other.to_json(); }
};

// Default training settings of a preset; the train command reads its "train" section on top of these.
struct TrainDefaults {
  int batch_size = 8;  // sequences per micro-batch
  int grad_accum = 1;  // micro-batches per optimizer step
  double lr = 6e-4;
  double min_lr = 6e-5;
  int warmup_steps = 100;
  int max_steps = 1000;
};

struct Preset {
  std::string name;
  TokenizerConfig tokenizer;
  ModelConfig model;
  TrainDefaults train;
};

// "paper-109m" (Vafa et al.: 12 x 12 x 768, context 999, 7000 bins; 108.53M parameters), "small"
// (4 x 4 x 128, context 256, 500 bins) and "tiny" (2 x 2 x 64, context 128, 500 bins). Throws Error naming
// the known presets for an unknown name.
Preset preset(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace orbitlaw::model
