#pragma once
// Public interface of orbitlaw_model: the trajectory tokenizer, the GPT with its attention kinds, presets
// and checkpoints. Training and evaluation live in orbitlaw/model/train.hpp and orbitlaw/model/eval.hpp.
// This header pulls in LibTorch: translation units that include it must not include fmt or spdlog.
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/checkpoint.hpp"
#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/gpt.hpp"
#include "orbitlaw/model/tokenizer.hpp"

namespace orbitlaw::model {

// LibTorch version and whether CUDA is compiled in and available, for provenance records.
Json library_versions();

}  // namespace orbitlaw::model
