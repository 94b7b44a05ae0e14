#include "orbitlaw/model/attention_path.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <sstream>

#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/attention_kinds.hpp"
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
#include "orbitlaw/model/fused_attention.hpp"
#endif

namespace orbitlaw::model {

Json AttentionPath::json() const {
  Json j{{"path", fused ? "fused" : (sdpa ? "sdpa" : (cpu_kernel ? "cpu_kernel" : "unfused"))},
         {"reason", reason}};
  if (difference >= 0) j["parity_difference"] = difference;
  return j;
}

double fused_reference_difference(const AttentionSpec& spec, const torch::Device& device, std::int64_t heads,
                                  std::int64_t length, std::int64_t head_dim) {
  torch::NoGradGuard no_grad;
  // Drawn on the CPU from a fixed seed, so the check sees the same batch on every device.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(20261206);
  auto draw = [&] { return torch::randn({1, heads, length, head_dim}, generator).to(device); };
  const torch::Tensor q = draw(), k = draw(), v = draw();
  AttentionSpec reference_spec = spec;
  reference_spec.allow_fused = false;
  const torch::Tensor fused = attention(q, k, v, spec);
  const torch::Tensor reference = attention(q, k, v, reference_spec);
  const double scale = std::max(reference.abs().max().item<double>(), 1e-30);
  const double difference = (fused - reference).abs().max().item<double>() / scale;
  return std::isfinite(difference) ? difference : std::numeric_limits<double>::infinity();
}

bool fused_kernel_available(const torch::Device& device) {
#ifdef ORBITLAW_WITH_FUSED_ATTENTION
  return device.is_cuda() && cuda::fused_attention_has_cuda_kernels();
#else
  (void)device;
  return false;
#endif
}

AttentionPath choose_attention_path(const ModelConfig& model, const torch::Device& device,
                                    bool kernel_available, const ParityCheck& check) {
  const AttentionSpec& spec = model.attention;
  const AttentionKindInfo& kind = attention_kind_info(spec.kind);
  if (!spec.allow_fused) return {false, "model.allow_fused is off"};
  if (kind.sdpa) {
    return {.reason =
                "scaled_dot_product_attention: the kind is a softmax over scores, computed by PyTorch's "
                "fused kernels (sequences longer than 2048 positions: the reference in query chunks)",
            .sdpa = true};
  }
  if (kind.cpu_weights && device.is_cpu()) {
    return {
        .reason =
            "the kind's CPU kernel: the reference weights and their gradients in one pass per row, by hand "
            "(float32)",
        .cpu_kernel = true};
  }
  if (!kind.fused) return {false, "no fused kernel for this attention kind"};
  if (const std::string refused = kind.fused_refuses(spec); !refused.empty()) return {false, refused};
  if (!kernel_available) return {false, "no fused kernel on this device"};
  std::ostringstream reason;
  double difference = std::numeric_limits<double>::infinity();
  try {
    difference =
        check(spec, device, model.n_head, std::min(model.block_size, 256), model.n_embd / model.n_head);
  } catch (
      const std::exception& e) {  // e.g. a head size the kernel does not support: the unfused path trains
    reason << "the fused kernel failed its parity check on this device (" << e.what()
           << "): trained on the unfused path";
    return {false, reason.str(), difference};
  }
  if (!(difference <= kFusedParityTolerance)) {
    reason << "the fused kernel differs from the unfused reference by " << difference << " (relative, above "
           << kFusedParityTolerance << ") on this device: trained on the unfused path";
    return {false, reason.str(), difference};
  }
  reason << "the fused kernel matched the unfused reference on this device (relative difference "
         << difference << ")";
  return {true, reason.str(), difference};
}

}  // namespace orbitlaw::model
