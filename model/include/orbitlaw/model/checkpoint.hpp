#pragma once
// Checkpoints: model, optimizer, training state (step, token count, data-sampling position), torch's RNG
// state, and the model and tokenizer configs, written atomically (temporary file, then rename).
#include <torch/torch.h>

#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace orbitlaw::model {

inline constexpr const char* kCheckpointFormat = "orbitlaw-checkpoint";
inline constexpr int kCheckpointVersion = 1;

struct CheckpointContent {
  ModelConfig model;
  TokenizerConfig tokenizer;
  Json train_state = Json::object();  // step, tokens, next_batch, ... (whatever the trainer records)
  Json provenance = Json::object();
};

// Writes `path` atomically. `optimizer` may be null (an inference-only checkpoint).
void save_checkpoint(const std::string& path, const CheckpointContent& content, Gpt& model,
                     torch::optim::Optimizer* optimizer);

// Restores into an existing model (and optimizer, if given and present in the file) built for `expected`;
// throws Error with one line for a missing or corrupt file, a file that is not an orbitlaw checkpoint, or a
// checkpoint whose model or tokenizer config differs from `expected` (naming the first differing key).
// Restores torch's CPU RNG state when `restore_rng` is set.
CheckpointContent load_checkpoint(const std::string& path, const CheckpointContent& expected, Gpt& model,
                                  torch::optim::Optimizer* optimizer, bool restore_rng = true);

// Reads only the configs and states of a checkpoint (no weights); throws Error as above.
CheckpointContent read_checkpoint_header(const std::string& path);

struct LoadedModel {
  ModelConfig config;
  TokenizerConfig tokenizer;
  Gpt module{nullptr};
  Json train_state;
  Json provenance;
};

// Builds the model a checkpoint describes, loads its weights and moves it to `device` (in eval mode).
LoadedModel load_model(const std::string& path, torch::Device device = torch::kCPU);

}  // namespace orbitlaw::model
