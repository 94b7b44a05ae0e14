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
#include <bit>
#include <cmath>
#include <vector>

#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Per-row scalars saved by the forward pass.
enum RowStat { kZ = 0, kMax = 1, kTotal = 2, kKept = 3, kRowStats = 4 };

struct RowShape {
  std::int64_t rows_per_head;  // T_q
  std::int64_t keys;           // T_k
};

struct Row {
  float n;       // keys the row sees
  float c;       // ln(d) ln(n)
  float offset;  // LSSAR's O_i
  std::int64_t visible;
};

Row row_of(std::int64_t flat_row, const RowShape& shape, const LssaRowsSpec& spec) {
  const std::int64_t absolute = spec.row_offset + flat_row % shape.rows_per_head;
  const float n = static_cast<float>(absolute + 1);
  return {n, static_cast<float>(std::log(static_cast<double>(spec.head_dim))) * std::log(n),
          absolute < spec.offset_rows ? 0.0f : 1.0f, absolute + 1};
}

// The row loops below are plain arithmetic (no library calls, no reductions in the same loop), so that the
// compiler vectorises them; they are compiled for AVX-512, AVX2 and the baseline, chosen at load time, and
// without contracting a*b+c into a fused multiply-add (model/CMakeLists.txt says why).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ORBITLAW_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ORBITLAW_ROW_CLONES
#endif

// e^y for y <= 0, to 8e-8 relative (measured over [-20, 0]): y = k ln 2 + r with |r| <= ln(2) / 2, e^r by its
// Taylor polynomial of degree 7 (remainder below 2e-9), 2^k built in the exponent bits. y is clamped at -87
// (e^-87 ~ 1.6e-38, still a normal float); no argument here comes near it (|ln(d) ln(n) q.k| <= ln(d) ln(n)).
inline float exp_nonpositive(float y) {
  y = std::max(y, -87.0f);
  // Round to nearest by adding and subtracting 1.5 * 2^23 (std::floor would not vectorise without
  // -fno-trapping-math).
  const float k = (y * 1.44269504f + 12582912.0f) - 12582912.0f;
  const float r = (y - k * 0.693145752f) - k * 1.42860677e-6f;  // ln 2 split in two: exact k * hi
  const float poly =
      1 + r * (1 + r * (0.5f +
                        r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r / 5040))))));
  return poly * std::bit_cast<float>((static_cast<std::int32_t>(k) + 127) << 23);
}

// log(1 + e) for 0 <= e <= 1 as 2 atanh(z), z = e / (2 + e) <= 1/3: the odd series to z^17 (remainder below
// 1e-9 relative; 2.2e-7 measured in float), with no cancellation for small e.
inline float log1p_unit(float e) {
  const float z = e / (2.0f + e), z2 = z * z;
  const float series =
      1 +
      z2 * (1.0f / 3 +
            z2 * (1.0f / 5 +
                  z2 * (1.0f / 7 +
                        z2 * (1.0f / 9 + z2 * (1.0f / 11 + z2 * (1.0f / 13 + z2 * (1.0f / 15 + z2 / 17)))))));
  return 2.0f * z * series;
}

// softplus(c s_j) into `a` and its derivative sigmoid(c s_j) into `sig`, for j < count.
ORBITLAW_ROW_CLONES void softplus_and_sigmoid(const float* s, float c, std::int64_t count, float* a,
                                              float* sig) {
  for (std::int64_t j = 0; j < count; ++j) {
    const float x = c * s[j];
    const float e = exp_nonpositive(-std::fabs(x));
    a[j] = std::max(x, 0.0f) + log1p_unit(e);
    sig[j] = (x >= 0 ? 1.0f : e) / (1.0f + e);
  }
}

// out_j = (max(n A_j - O, 0) / m)^p for integral p (1 <= p <= 64: squarings, one pass over the row per bit),
// powf otherwise.
ORBITLAW_ROW_CLONES void reweight_row(const float* lssa, const Row& row, float inv_m, double p,
                                      std::int64_t count, float* out, float* base) {
  for (std::int64_t j = 0; j < count; ++j) base[j] = std::max(row.n * lssa[j] - row.offset, 0.0f) * inv_m;
  if (!(p == std::floor(p) && p >= 1 && p <= 64)) {
    for (std::int64_t j = 0; j < count; ++j) out[j] = std::pow(base[j], static_cast<float>(p));
    return;
  }
  auto bits = static_cast<unsigned>(p);
  for (std::int64_t j = 0; j < count; ++j) out[j] = 1.0f;
  for (;;) {
    if (bits & 1u)
      for (std::int64_t j = 0; j < count; ++j) out[j] *= base[j];
    bits >>= 1;
    if (bits == 0) break;
    for (std::int64_t j = 0; j < count; ++j) base[j] *= base[j];
  }
}

// Reductions over a row in 16 interleaved partial results, so that they vectorise and are not bound by the
// latency of one running sum (a fixed order: the same result on every run).
constexpr int kLanes = 16;

ORBITLAW_ROW_CLONES float dot(const float* x, const float* y, std::int64_t count) {
  float lanes[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= count; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[j + l] * y[j + l];
  for (; j < count; ++j) lanes[0] += x[j] * y[j];
  float total = 0;
  for (const float lane : lanes) total += lane;
  return total;
}

ORBITLAW_ROW_CLONES float sum(const float* x, std::int64_t count) {
  float lanes[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= count; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[j + l];
  for (; j < count; ++j) lanes[0] += x[j];
  float total = 0;
  for (const float lane : lanes) total += lane;
  return total;
}

// max_j (n A_j - O), at least 0.
ORBITLAW_ROW_CLONES float largest_excess(const float* lssa, float n, float offset, std::int64_t count) {
  float lanes[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= count; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], n * lssa[j + l] - offset);
  for (; j < count; ++j) lanes[0] = std::max(lanes[0], n * lssa[j] - offset);
  float largest = 0;
  for (const float lane : lanes) largest = std::max(largest, lane);
  return largest;
}

ORBITLAW_ROW_CLONES void scale(float* x, float factor, std::int64_t count) {
  for (std::int64_t j = 0; j < count; ++j) x[j] *= factor;
}

// `scratch` holds `keys` floats.
void forward_row(const float* s, float* lssa, float* sig, float* out, float* stats, float* scratch,
                 const Row& row, std::int64_t keys, const LssaRowsSpec& spec) {
  const std::int64_t count = row.visible;
  softplus_and_sigmoid(s, row.c, count, lssa, sig);
  const float z = sum(lssa, count);
  scale(lssa, 1.0f / z, count);
  std::fill(lssa + count, lssa + keys, 0.0f);
  std::fill(sig + count, sig + keys, 0.0f);
  stats[kZ] = z;
  stats[kMax] = 0;
  stats[kTotal] = 1;
  stats[kKept] = 0;
  if (!spec.reweight) return;
  const float m = largest_excess(lssa, row.n, row.offset, count);
  stats[kMax] = m;
  const bool kept = m > static_cast<float>(kLssarUniformTolerance);
  stats[kKept] = kept ? 1.0f : 0.0f;
  std::fill(out, out + keys, 0.0f);
  if (!kept) return;
  reweight_row(lssa, row, 1.0f / m, spec.p, count, out, scratch);
  const float total = sum(out, count);
  stats[kTotal] = total;
  scale(out, 1.0f / total, count);
}

// dA of LSSAR from dW: dw_j = (dW_j - dot) / T, dA_j = dw_j p x_j^(p-1) n / m with x^(p-1) = w_j / x_j,
// w_j = W_j T, so T cancels: dA_j = (dW_j - dot) p W_j / x_j n / m. A weight that is 0 (u_j <= 0, or x^p
// below float's range) has a gradient that is 0 or below float's range too.
ORBITLAW_ROW_CLONES void reweight_backward(const float* grad, const float* lssa, const float* out, float dot,
                                           float m, float p, const Row& row, std::int64_t count,
                                           float* d_lssa) {
  const float n = row.n, offset = row.offset, factor = p * n / m;  // locals: d_lssa cannot alias them
  for (std::int64_t j = 0; j < count; ++j) {
    const float x = (n * lssa[j] - offset) / m;
    const bool live = (out[j] > 0) & (x > 0);  // & not &&: no branch in the loop
    const float gradient = (grad[j] - dot) * factor * out[j] / (live ? x : 1.0f);  // no division by 0
    d_lssa[j] = live ? gradient : 0.0f;
  }
}

// ds_j = (dA_j - dot) sig_j c / Z.
ORBITLAW_ROW_CLONES void softplus_backward(const float* d_lssa, const float* sig, float dot, float factor,
                                           std::int64_t count, float* ds) {
  for (std::int64_t j = 0; j < count; ++j) ds[j] = (d_lssa[j] - dot) * sig[j] * factor;
}

// ds of one row from dW; `scratch` holds `keys` floats.
void backward_row(const float* grad, const float* lssa, const float* sig, const float* out,
                  const float* stats, float* ds, float* scratch, const Row& row, std::int64_t keys,
                  const LssaRowsSpec& spec) {
  const std::int64_t count = row.visible;
  std::fill(ds, ds + keys, 0.0f);
  const float* d_lssa = grad;
  if (spec.reweight) {
    if (stats[kKept] == 0) return;
    reweight_backward(grad, lssa, out, dot(grad, out, count), stats[kMax], static_cast<float>(spec.p), row,
                      count, scratch);
    d_lssa = scratch;
  }
  softplus_backward(d_lssa, sig, dot(d_lssa, lssa, count), row.c / stats[kZ], count, ds);
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
                    row_of(r, shape, spec), shape.keys, spec);
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
                     row_of(r, shape, spec), shape.keys, spec);
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
