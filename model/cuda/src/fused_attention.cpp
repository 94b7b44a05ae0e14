// fused_lssa_attention as a LibTorch autograd function: checks its inputs, allocates outputs and per-row
// statistics, and runs the CUDA kernels (CUDA tensors) or their CPU emulation (CPU tensors).
#include "orbitlaw/model/fused_attention.hpp"

#include <string>

#include "fused_attention_launch.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/model/fused_attention_tiles.hpp"

#if defined(ORBITLAW_FUSED_ATTENTION_CUDA)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace orbitlaw::model::cuda {
namespace {

// The tiles compare in float against the shared cut-off; it is exact in float, so nothing is lost.
static_assert(static_cast<double>(tiles::kUniformRowTolerance) == kLssarUniformTolerance);

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::string shape_of(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "," : "") + std::to_string(t.size(i));
  return s + "]";
}

void check_inputs(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool reweight,
                  double p) {
  if (!q.defined() || !k.defined() || !v.defined()) throw Error("fused_lssa_attention: undefined q, k or v");
  if (q.dim() != 4) throw Error("fused_lssa_attention: q must be [B,H,L,d], got " + shape_of(q));
  if (!q.sizes().equals(k.sizes()) || !q.sizes().equals(v.sizes())) {
    throw Error("fused_lssa_attention: q, k, v shapes differ: " + shape_of(q) + ", " + shape_of(k) + ", " +
                shape_of(v));
  }
  if (q.scalar_type() != k.scalar_type() || q.scalar_type() != v.scalar_type()) {
    throw Error("fused_lssa_attention: q, k, v dtypes differ");
  }
  if (q.scalar_type() != torch::kFloat32 && q.scalar_type() != torch::kBFloat16) {
    throw Error(std::string("fused_lssa_attention: dtype must be float32 or bfloat16, got ") +
                c10::toString(q.scalar_type()));
  }
  if (q.device() != k.device() || q.device() != v.device()) {
    throw Error("fused_lssa_attention: q, k, v are on different devices");
  }
  if (!q.is_cpu() && !q.is_cuda())
    throw Error("fused_lssa_attention: device must be CPU or CUDA, got " + q.device().str());
  if (q.is_cuda() && !fused_attention_has_cuda_kernels()) {
    throw Error("fused_lssa_attention: CUDA tensors given but this build has no CUDA kernels");
  }
  if (!detail::supported_head_dim(static_cast<int>(q.size(3)))) {
    throw Error("fused_lssa_attention: head dimension must be 16, 32, 64 or 128, got " +
                std::to_string(q.size(3)));
  }
  if (q.size(2) < 1 || q.size(2) > (int64_t{1} << 30)) {
    throw Error("fused_lssa_attention: sequence length out of range: " + std::to_string(q.size(2)));
  }
  if (reweight && !(p >= 1.0 && p <= 1000.0)) {
    throw Error("fused_lssa_attention: LSSAR power p must be in [1, 1000], got " + std::to_string(p));
  }
}

// q: the normalised float32 queries; v: the values, whose dtype the outputs take.
detail::Problem problem_of(const torch::Tensor& q, const torch::Tensor& v, bool reweight, double p) {
  return {v.scalar_type() == torch::kFloat32 ? detail::ScalarKind::kFloat32 : detail::ScalarKind::kBFloat16,
          q.size(0) * q.size(1),
          static_cast<int>(q.size(2)),
          static_cast<int>(q.size(3)),
          reweight,
          static_cast<float>(p)};
}

torch::Tensor row_stats(const torch::Tensor& q, int count) {
  return torch::empty({q.size(0), q.size(1), q.size(2), count}, q.options().dtype(torch::kFloat32));
}

void run_forward(const detail::Problem& problem, const detail::ForwardBuffers& buffers,
                 const torch::Tensor& q) {
  if (q.is_cuda()) {
#if defined(ORBITLAW_FUSED_ATTENTION_CUDA)
    const c10::cuda::CUDAGuard guard(q.device());
    detail::cuda_forward(problem, buffers, c10::cuda::getCurrentCUDAStream().stream());
#endif
    return;
  }
  detail::emulate_forward(problem, buffers);
}

void run_backward(const detail::Problem& problem, const detail::BackwardBuffers& buffers,
                  const torch::Tensor& q) {
  if (q.is_cuda()) {
#if defined(ORBITLAW_FUSED_ATTENTION_CUDA)
    const c10::cuda::CUDAGuard guard(q.device());
    detail::cuda_backward(problem, buffers, c10::cuda::getCurrentCUDAStream().stream());
#endif
    return;
  }
  detail::emulate_backward(problem, buffers);
}

// The kernels' autograd function. q, k: L2-normalised float32; v: float32 or bfloat16 (the model's dtype).
class FusedLssaAttention : public torch::autograd::Function<FusedLssaAttention> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q_in, const torch::Tensor& k_in,
                               const torch::Tensor& v_in, bool reweight, double p) {
    const torch::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
    const detail::Problem problem = problem_of(q, v, reweight, p);
    torch::Tensor out = torch::empty_like(q, torch::MemoryFormat::Contiguous);  // float32, see launch header
    torch::Tensor stats = row_stats(q, tiles::kForwardStats);
    run_forward(problem, {q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), stats.data_ptr<float>()},
                q);
    ctx->save_for_backward({q, k, v, out, stats});
    ctx->saved_data["reweight"] = reweight;
    ctx->saved_data["p"] = p;
    return out.to(v.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &stats = saved[4];
    const bool reweight = ctx->saved_data["reweight"].toBool();
    const double p = ctx->saved_data["p"].toDouble();
    torch::Tensor grad_out = grad_outputs[0];
    if (!grad_out.defined()) grad_out = torch::zeros_like(out);
    grad_out = grad_out.to(torch::kFloat32).contiguous();
    const detail::Problem problem = problem_of(q, v, reweight, p);
    torch::Tensor grad_stats = row_stats(q, tiles::kBackwardStats);
    torch::Tensor grad_q = torch::empty_like(q), grad_k = torch::empty_like(k), grad_v = torch::empty_like(v);
    run_backward(problem,
                 {q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), grad_out.data_ptr(),
                  stats.data_ptr<float>(), grad_stats.data_ptr<float>(), grad_q.data_ptr(), grad_k.data_ptr(),
                  grad_v.data_ptr()},
                 q);
    return {grad_q, grad_k, grad_v, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool fused_attention_has_cuda_kernels() {
#if defined(ORBITLAW_FUSED_ATTENTION_CUDA)
  return true;
#else
  return false;
#endif
}

torch::Tensor fused_lssa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   bool reweight, double p) {
  check_inputs(q, k, v, reweight, p);
  // Normalise in float32 whatever the model's dtype: bfloat16 rounding of the unit rows (~4e-3) would be
  // multiplied by ln(d) ln(n) in the scores and by p in LSSAR's weights.
  namespace F = torch::nn::functional;
  const auto unit_rows = F::NormalizeFuncOptions().p(2).dim(-1);
  return FusedLssaAttention::apply(F::normalize(q.to(torch::kFloat32), unit_rows),
                                   F::normalize(k.to(torch::kFloat32), unit_rows), v, reweight,
                                   reweight ? p : 1.0);
}

}  // namespace orbitlaw::model::cuda
