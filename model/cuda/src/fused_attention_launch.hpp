#pragma once
// Internal entry points of the fused attention: plain pointers, no LibTorch, so that nvcc never parses torch
// headers. fused_attention.cpp validates the tensors, allocates the outputs and calls these.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace orbitlaw::model::cuda::detail {

enum class ScalarKind { kFloat32, kBFloat16 };

// q and k (and their gradients) are always float32 and already L2-normalised: the normalisation runs in
// float32 outside the kernels even for bfloat16 models, because in bfloat16 its rounding (about 4e-3) is
// multiplied by ln(d) ln(n) in the scores and by p in LSSAR's weights. The output and dL/dout are float32
// too: the backward pass needs delta = dL/dout . out, whose bfloat16 rounding LSSAR's factor p would amplify.
// Only v and dL/dv have the dtype `scalar`.
struct Problem {
  ScalarKind scalar;    // of v and grad_v
  int64_t batch_heads;  // B * H; tensors are contiguous [B*H, L, d]
  int length;           // L
  int head_dim;         // d: 16, 32, 64 or 128
  bool reweight;        // LSSAR
  float p;
};

struct ForwardBuffers {
  const void* q;
  const void* k;
  const void* v;
  void* out;
  float* stats;  // [B*H, L, kForwardStats]
};

struct BackwardBuffers {
  const void* q;
  const void* k;
  const void* v;
  const void* out;
  const void* grad_out;
  const float* stats;  // from the forward pass
  float* grad_stats;   // [B*H, L, kBackwardStats], scratch filled by the query pass
  void* grad_q;
  void* grad_k;
  void* grad_v;
};

// The head dimensions the kernels (and the emulation) are instantiated for.
inline bool supported_head_dim(int head_dim) {
  return head_dim == 16 || head_dim == 32 || head_dim == 64 || head_dim == 128;
}

// Calls f.template operator()<scalar_t, D>() for the problem's element type of v (float, or Bf16: the
// bfloat16 type of the compiler at hand) and head dimension D; shared by the CUDA and the CPU entry points so
// both instantiate the same set. C++17, for nvcc.
template <typename Bf16, class F>
void dispatch_problem(const Problem& pb, F&& f) {
  auto by_dim = [&](auto scalar_tag) {
    using scalar_t = decltype(scalar_tag);
    switch (pb.head_dim) {
      case 16:
        return f.template operator()<scalar_t, 16>();
      case 32:
        return f.template operator()<scalar_t, 32>();
      case 64:
        return f.template operator()<scalar_t, 64>();
      case 128:
        return f.template operator()<scalar_t, 128>();
    }
    throw std::runtime_error("fused attention: unsupported head dimension " + std::to_string(pb.head_dim));
  };
  if (pb.scalar == ScalarKind::kFloat32) {
    by_dim(float{});
  } else {
    by_dim(Bf16{});
  }
}

// CPU emulation of the tiled kernels (same tile loops); fused_attention_cpu.cpp.
void emulate_forward(const Problem& problem, const ForwardBuffers& buffers);
void emulate_backward(const Problem& problem, const BackwardBuffers& buffers);

// CUDA kernels on `stream` (a cudaStream_t); fused_attention_kernels.cu. Throw std::runtime_error on launch
// failure.
void cuda_forward(const Problem& problem, const ForwardBuffers& buffers, void* stream);
void cuda_backward(const Problem& problem, const BackwardBuffers& buffers, void* stream);

}  // namespace orbitlaw::model::cuda::detail
