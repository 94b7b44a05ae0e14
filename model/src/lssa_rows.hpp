#pragma once
// The arithmetic of one LSSA / LSSAR query row, forward and backward (model/src/lssa_cpu_kernel.cpp gives the
// formulas and runs it over a tensor's rows). Plain C++, no LibTorch, so that the tests can build it for each
// instruction set and compare the bits (tests/model/test_lssa_rows.cpp).
//
// Included by one file per build: its functions have internal linkage, so that builds for different targets
// never meet at link time.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "orbitlaw/model/lssar_cutoff.hpp"

namespace orbitlaw::model::lssa_rows {
namespace {

// Per-row scalars saved by the forward pass.
enum RowStat { kZ = 0, kMax = 1, kTotal = 2, kKept = 3, kRowStats = 4 };

struct Row {
  float n;       // keys the row sees
  float c;       // ln(d) ln(n)
  float offset;  // LSSAR's O_i
  std::int64_t visible;
};

// The row of absolute index `absolute` (it sees keys 0..absolute) for head size `head_dim`.
inline Row row_at(std::int64_t absolute, std::int64_t head_dim, int offset_rows) {
  const float n = static_cast<float>(absolute + 1);
  return {n, static_cast<float>(std::log(static_cast<double>(head_dim))) * std::log(n),
          absolute < offset_rows ? 0.0f : 1.0f, absolute + 1};
}

// The row loops below are plain arithmetic (no library calls, no reductions in the same loop), so that the
// compiler vectorises them; they are compiled for AVX-512, AVX2 and the baseline, chosen at load time,
// without contracting a*b+c into a fused multiply-add and without trapping math (ORBITLAW_LSSA_ROWS_OPTIONS,
// model/CMakeLists.txt, says why): every build then rounds alike and gives the same bits.
// A file that includes this header with ORBITLAW_ROW_CLONES defined (empty) gets one build, for the target of
// its own compile options: tests/model/lssa_rows_*.cpp check that every build gives the same bits.
#ifndef ORBITLAW_ROW_CLONES
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ORBITLAW_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ORBITLAW_ROW_CLONES
#endif
#endif

// e^y for y <= 0, to 8e-8 relative (measured over [-20, 0]): y = k ln 2 + r with |r| <= ln(2) / 2, e^r by its
// Taylor polynomial of degree 7 (remainder below 2e-9), 2^k built in the exponent bits. y is clamped at -87
// (e^-87 ~ 1.6e-38, still a normal float); no argument here comes near it (|ln(d) ln(n) q.k| <= ln(d) ln(n)).
inline float exp_nonpositive(float y) {
  y = std::max(y, -87.0f);
  // Round to nearest by adding and subtracting 1.5 * 2^23 (std::floor is a library call on the baseline
  // target, which has no vector rounding instruction).
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
                 const Row& row, std::int64_t keys, bool reweight, double p) {
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
  if (!reweight) return;
  const float m = largest_excess(lssa, row.n, row.offset, count);
  stats[kMax] = m;
  const bool kept = m > static_cast<float>(kLssarUniformTolerance);
  stats[kKept] = kept ? 1.0f : 0.0f;
  std::fill(out, out + keys, 0.0f);
  if (!kept) return;
  reweight_row(lssa, row, 1.0f / m, p, count, out, scratch);
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
                  bool reweight, double p) {
  const std::int64_t count = row.visible;
  std::fill(ds, ds + keys, 0.0f);
  const float* d_lssa = grad;
  if (reweight) {
    if (stats[kKept] == 0) return;
    reweight_backward(grad, lssa, out, dot(grad, out, count), stats[kMax], static_cast<float>(p), row, count,
                      scratch);
    d_lssa = scratch;
  }
  softplus_backward(d_lssa, sig, dot(d_lssa, lssa, count), row.c / stats[kZ], count, ds);
}

}  // namespace
}  // namespace orbitlaw::model::lssa_rows
