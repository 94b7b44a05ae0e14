#pragma once
// A randomly initialised "tiny" model saved as a checkpoint: the model probes' machinery does not need a
// trained model to be tested. Includes LibTorch: no fmt or spdlog in including files.
#include <string>

#include "orbitlaw/model.hpp"
#include "probe_test_data.hpp"

namespace orbitlaw::test {

// Sequences of `rows` rows (cadence row included) with the tiny preset's 2 x 2 x 64 GPT.
inline std::string tiny_checkpoint(int rows, std::uint64_t seed = 1) {
  const std::string path =
      (probe_temp_dir() / ("tiny_" + std::to_string(rows) + "_" + std::to_string(seed) + ".pt")).string();
  if (std::filesystem::exists(path)) return path;
  const model::Preset preset = model::preset("tiny");
  model::CheckpointContent content;
  content.tokenizer = preset.tokenizer;
  content.tokenizer.rows = rows;
  content.model = preset.model;
  torch::manual_seed(seed);
  model::Gpt gpt(content.model);
  model::save_checkpoint(path, content, gpt, nullptr);
  return path;
}

}  // namespace orbitlaw::test
