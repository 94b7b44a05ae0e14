#pragma once
// Which attention path a model trains with on its device. Kinds that are a softmax over scores use PyTorch's
// scaled_dot_product_attention on every device, and kinds with a CPU kernel use it on the CPU (both checked
// against the reference by tests/model/test_attention.cpp). The fused LSSA/LSSAR kernel is used on a GPU only
// after it has matched the unfused reference (model::attention with allow_fused off) there, on one random
// batch of the model's own head shape; on a mismatch the model trains on the unfused path. Either way the run
// records the path and why (train.provenance.json, "attention_path").
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/config.hpp"

namespace orbitlaw::model {

// Relative difference (max |fused - reference| / max |reference|) above which the fused kernel is not
// trusted: both paths compute in float32, which agree to a few 1e-6 when the kernel is right.
inline constexpr double kFusedParityTolerance = 1e-4;

struct AttentionPath {
  bool fused = false;
  std::string reason;
  double difference = -1;   // the parity check's relative difference; -1 when no check ran
  bool sdpa = false;        // the kind's scaled_dot_product_attention form (AttentionKindInfo::sdpa)
  bool cpu_kernel = false;  // the kind's CPU kernel for its weights (AttentionKindInfo::cpu_weights)
  Json json() const;
};

// The parity check: the relative difference of the fused and unfused paths of `spec` on `device` for one
// seeded random batch of `heads` heads, `length` positions and `head_dim` channels.
double fused_reference_difference(const AttentionSpec& spec, const torch::Device& device, std::int64_t heads,
                                  std::int64_t length, std::int64_t head_dim);
using ParityCheck = std::function<double(const AttentionSpec&, const torch::Device&, std::int64_t heads,
                                         std::int64_t length, std::int64_t head_dim)>;

// Whether the fused kernel can run on `device` at all: a CUDA device and the kernels compiled in.
bool fused_kernel_available(const torch::Device& device);

// The path `model` trains with on `device`; `kernel_available` is fused_kernel_available(device) (a parameter
// so that the decision can be tested without a GPU), `check` the parity check.
AttentionPath choose_attention_path(const ModelConfig& model, const torch::Device& device,
                                    bool kernel_available,
                                    const ParityCheck& check = fused_reference_difference);

}  // namespace orbitlaw::model
