#pragma once
// A checkpoint's structure against the config it records, checked before anything in it is used. LibTorch
// restores a module by replacing each parameter with the stored tensor whatever its shape or dtype, and an
// optimizer's moments likewise, so a file whose tensors disagree with its config would load without a word
// and then fail deep inside a forward pass (a C++ backtrace) or compute with the wrong weights. Each check
// throws Error with one line naming the file and the first problem.
#include <torch/torch.h>

#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/checkpoint.hpp"

namespace orbitlaw::model::detail {

// The records that are JSON text: train_state and provenance must be objects, and the train_state keys the
// trainer and the probe read must have their types; the model's vocabulary must be its tokenizer's.
void check_checkpoint_records(const CheckpointContent& content, const std::string& path);

// Every tensor `module` holds (parameters and buffers, recursively) must be in `archive` with the same shape
// and dtype, and `archive` must hold nothing else.
void check_module_tensors(const torch::nn::Module& module, torch::serialize::InputArchive& archive,
                          const std::string& path);

// After an optimizer is restored: each AdamW moment must have its parameter's shape and dtype.
void check_optimizer_state(const torch::optim::Optimizer& optimizer, const std::string& path);

}  // namespace orbitlaw::model::detail
