#pragma once
// A randomly initialised "tiny" model saved as a checkpoint: the model probes' machinery does not need a
// trained model to be tested. Includes LibTorch: no fmt or spdlog in including files.
#include <string>

#include "orbitlaw/model.hpp"
#include "probe_test_data.hpp"

namespace orbitlaw::test {

// Sequences of `rows` rows (cadence row included) with the tiny preset's 2 x 2 x 64 GPT. `trained_cadences`
// (years), when given, is recorded as the training data's cadences, as `orbitlaw train` does.
inline std::string tiny_checkpoint(int rows, std::uint64_t seed = 1,
                                   std::vector<double> trained_cadences = {}) {
  std::string name = "tiny_" + std::to_string(rows) + "_" + std::to_string(seed);
  for (double c : trained_cadences) {
    name += '_';
    name += std::to_string(c);
  }
  const std::string path = (probe_temp_dir() / (name + ".pt")).string();
  if (std::filesystem::exists(path)) return path;
  const model::Preset preset = model::preset("tiny");
  model::CheckpointContent content;
  if (!trained_cadences.empty()) content.train_state = Json{{"data", {{"cadences", trained_cadences}}}};
  content.tokenizer = preset.tokenizer;
  content.tokenizer.rows = rows;
  content.model = preset.model;
  torch::manual_seed(seed);
  model::Gpt gpt(content.model);
  model::save_checkpoint(path, content, gpt, nullptr);
  return path;
}

}  // namespace orbitlaw::test
