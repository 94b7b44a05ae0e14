// LSSA / LSSAR weights, one query row at a time, forward and backward by hand
// (orbitlaw/model/lssa_cpu_kernel.hpp).
//
// Per row (n keys visible, c = ln(d) ln(n), s_j = dots_ij):
//   forward   a_j = softplus(c s_j), Z = sum a_j, A_j = a_j / Z                       (LSSA: the output)
//             u_j = max(n A_j - O, 0), m = max u_j, x_j = u_j / m, w_j = x_j^p, T = sum w_j, W_j = w_j / T
//   backward  dw_j = (dW_j - sum_k dW_k W_k) / T
//             dA_j = dw_j p x_j^(p-1) n / m  where u_j > 0 (m is a constant of the row, as in the reference)
//             da_j = (dA_j - sum_k dA_k A_k) / Z,  ds_j = da_j sigmoid(c s_j) c
// A row with m <= kLssarUniformTolerance is all zeros, with zero gradients (the reference's cut-off).
#include "orbitlaw/model/lssa_cpu_kernel.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lssa_rows.hpp"

namespace orbitlaw::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

using lssa_rows::backward_row;
using lssa_rows::forward_row;
using lssa_rows::kRowStats;
using lssa_rows::Row;

struct RowShape {
  std::int64_t rows_per_head;  // T_q
  std::int64_t keys;           // T_k
};

Row row_of(std::int64_t flat_row, const RowShape& shape, const LssaRowsSpec& spec) {
  return lssa_rows::row_at(spec.row_offset + flat_row % shape.rows_per_head, spec.head_dim, spec.offset_rows);
}

class LssaRows : public torch::autograd::Function<LssaRows> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& dots_in, std::int64_t head_dim,
                               std::int64_t row_offset, bool reweight, double p, std::int64_t offset_rows) {
    const LssaRowsSpec spec{head_dim, row_offset, reweight, p, static_cast<int>(offset_rows)};
    const torch::Tensor dots = dots_in.contiguous();
    const RowShape shape{dots.size(-2), dots.size(-1)};
    TORCH_CHECK(shape.keys >= row_offset + shape.rows_per_head,
                "lssa_cpu_weights: keys must cover every row");
    const std::int64_t rows = dots.numel() / std::max<std::int64_t>(shape.keys, 1);
    auto lssa = torch::empty_like(dots), sig = torch::empty_like(dots);
    auto out = reweight ? torch::empty_like(dots) : lssa;
    auto stats = torch::empty({rows, kRowStats}, dots.options());
    const float* s = dots.data_ptr<float>();
    float *a = lssa.data_ptr<float>(), *g = sig.data_ptr<float>(), *w = out.data_ptr<float>(),
          *st = stats.data_ptr<float>();
    at::parallel_for(0, rows, 16, [&](std::int64_t begin, std::int64_t end) {
      std::vector<float> scratch(static_cast<std::size_t>(shape.keys));
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t at = r * shape.keys;
        forward_row(s + at, a + at, g + at, w + at, st + r * kRowStats, scratch.data(),
                    row_of(r, shape, spec), shape.keys, spec.reweight, spec.p);
      }
    });
    ctx->save_for_backward({lssa, sig, out, stats});
    ctx->saved_data["head_dim"] = head_dim;
    ctx->saved_data["row_offset"] = row_offset;
    ctx->saved_data["reweight"] = reweight;
    ctx->saved_data["p"] = p;
    ctx->saved_data["offset_rows"] = offset_rows;
    return reweight ? out : lssa.clone();  // LSSA's output must not alias what backward reads
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &lssa = saved[0], &sig = saved[1], &out = saved[2], &stats = saved[3];
    const LssaRowsSpec spec{ctx->saved_data["head_dim"].toInt(), ctx->saved_data["row_offset"].toInt(),
                            ctx->saved_data["reweight"].toBool(), ctx->saved_data["p"].toDouble(),
                            static_cast<int>(ctx->saved_data["offset_rows"].toInt())};
    if (!grads[0].defined())  // the weights did not reach the loss
      return {torch::Tensor(), torch::Tensor(), torch::Tensor(),
              torch::Tensor(), torch::Tensor(), torch::Tensor()};
    const torch::Tensor grad = grads[0].contiguous();
    const RowShape shape{lssa.size(-2), lssa.size(-1)};
    const std::int64_t rows = lssa.numel() / std::max<std::int64_t>(shape.keys, 1);
    auto ds = torch::empty_like(lssa);
    const float *gr = grad.data_ptr<float>(), *a = lssa.data_ptr<float>(), *g = sig.data_ptr<float>(),
                *w = out.data_ptr<float>(), *st = stats.data_ptr<float>();
    float* d = ds.data_ptr<float>();
    at::parallel_for(0, rows, 16, [&](std::int64_t begin, std::int64_t end) {
      std::vector<float> scratch(static_cast<std::size_t>(shape.keys));
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t at = r * shape.keys;
        backward_row(gr + at, a + at, g + at, w + at, st + r * kRowStats, d + at, scratch.data(),
                     row_of(r, shape, spec), shape.keys, spec.reweight, spec.p);
      }
    });
    return {ds, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor lssa_cpu_weights(const torch::Tensor& dots, const LssaRowsSpec& spec) {
  TORCH_CHECK(dots.device().is_cpu() && dots.scalar_type() == torch::kFloat,
              "lssa_cpu_weights: float32 CPU tensors only");
  TORCH_CHECK(!spec.reweight || spec.p >= 1, "lssa_cpu_weights: LSSAR needs p >= 1");
  return LssaRows::apply(dots, spec.head_dim, spec.row_offset, spec.reweight, spec.p,
                         static_cast<std::int64_t>(spec.offset_rows));
}

}  // namespace orbitlaw::model
