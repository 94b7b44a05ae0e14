#pragma once
// The tiled LSSA / LSSAR algorithm, written once for two compilers: nvcc builds the CUDA kernels from it and
// g++ builds a CPU emulation from it, so the CPU tests exercise the same tile loops and per-tile arithmetic
// that run on the GPU. No LibTorch and no CUDA headers here (only the plain C++17 lssar_cutoff.hpp).
//
// Work split (FlashAttention style; one thread owns one query row or one key row):
//  - forward_row: one query row, loops over key tiles. LSSA needs one pass (softplus >= 0, so the l1
//    normaliser needs no running maximum). LSSAR needs two: pass 1 gives the normaliser z and the largest
//    softplus weight (softplus is monotone, so the largest LSSA weight is known before pass 2 and the p-th
//    power is taken of (u / u_max) <= 1, never overflowing), pass 2 accumulates the re-weighted output.
//  - backward_query_row: one query row, loops over key tiles: dq and the per-row scalars (delta = g.o and,
//  for
//    LSSAR, e = sum_j A_ij du_ij) that the key pass needs.
//  - backward_key_row: one key row, loops over query tiles: dk and dv. No atomics, deterministic.
//
// A Loader hands out tiles. Its load() is collective on the GPU (every thread of the block calls it with the
// same tile index, it synchronises and fills shared memory), so every thread runs every loop iteration and
// only skips the arithmetic when its row is inactive. The CPU loader copies the tile into a buffer.
#include <math.h>

#include "orbitlaw/model/lssar_cutoff.hpp"

#if defined(__CUDACC__)
#define ORBITLAW_HD __host__ __device__ __forceinline__
#define ORBITLAW_UNROLL _Pragma("unroll")
#else
#define ORBITLAW_HD inline
#define ORBITLAW_UNROLL
#endif

namespace orbitlaw::model::cuda::tiles {

// LSSAR's near-uniform cut-off in float, the arithmetic of the tiles: the one definition in
// orbitlaw/model/lssar_cutoff.hpp (shared with the unfused path), exactly representable in float.
constexpr float kUniformRowTolerance = static_cast<float>(::orbitlaw::model::kLssarUniformTolerance);

// Per-row scalars saved by the forward pass, in this order, for the backward pass.
enum ForwardStat { kZ = 0, kUMax = 1, kWSum = 2, kForwardStats = 3 };
// Per-row scalars computed by backward_query_row for backward_key_row.
enum BackwardStat { kDelta = 0, kE = 1, kBackwardStats = 2 };

struct RowConstants {
  float n;       // keys the row sees
  float scale;   // ln(d) ln(n)
  float offset;  // O_i of LSSAR: 0 for the first three rows, 1 after
};

ORBITLAW_HD RowConstants row_constants(int row, int head_dim) {
  const float n = static_cast<float>(row + 1);
  return {n, logf(static_cast<float>(head_dim)) * logf(n), row < 3 ? 0.0f : 1.0f};
}

// Keys of tile `tile` (tile_size keys each) that causal row `row` may see.
ORBITLAW_HD int visible_keys_in_tile(int row, int tile, int tile_size) {
  const int count = row + 1 - tile * tile_size;
  return count < 0 ? 0 : (count > tile_size ? tile_size : count);
}

// Stable for any sign: max(x, 0) + log1p(exp(-|x|)).
ORBITLAW_HD float softplus(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }

// d softplus / dx.
ORBITLAW_HD float sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}

template <int D>
ORBITLAW_HD float dot(const float* a, const float* b) {
  float sum = 0.0f;
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) sum += a[c] * b[c];
  return sum;
}

template <int D>
ORBITLAW_HD void add_scaled(float* acc, float weight, const float* x) {
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) acc[c] += weight * x[c];
}

// LSSAR keeps a row only when its largest weight is above uniform by more than the cut-off
// (u_max = n A_max - O > kUniformRowTolerance), as the unfused orbitlaw::model::lssar_reweight does.
ORBITLAW_HD bool reweighted_row_kept(float u_max) { return u_max > kUniformRowTolerance; }

// LSSAR re-weighting of one LSSA weight a (normaliser z): u = n a / z - O. Returns (u / u_max)^p for u > 0,
// else 0, and the derivative factor p (u / u_max)^(p - 1) / u_max through *slope.
ORBITLAW_HD float reweight(float a, float z, const RowConstants& rc, float u_max, float p, float* slope) {
  const float u = rc.n * a / z - rc.offset;
  if (u <= 0.0f) {
    *slope = 0.0f;
    return 0.0f;
  }
  const float r = u / u_max;
  const float r_pm1 = powf(r, p - 1.0f);
  *slope = p * r_pm1 / u_max;
  return r_pm1 * r;
}

struct TilePointers {
  const float* k;  // tile_size x D, row-major
  const float* v;  // tile_size x D (only when asked for)
};

struct Options {
  int length;     // L
  int tile_size;  // keys (or queries) per tile
  bool reweight;  // LSSAR when true
  float p;        // LSSAR power
};

// Forward pass of one query row. num_tiles: key tiles the whole block visits (same for all its threads).
// q: the row's query (D floats). out: D floats. stats: kForwardStats floats.
template <int D, class Loader>
ORBITLAW_HD void forward_row(const Options& opt, int row, bool active, const float* q, int num_tiles,
                             Loader& loader, float* out, float* stats) {
  const RowConstants rc = row_constants(row, D);
  float acc[D];
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) acc[c] = 0.0f;
  float z = 0.0f;
  if (!opt.reweight) {
    for (int t = 0; t < num_tiles; ++t) {
      const TilePointers tile = loader.load(t, true);
      const int count = active ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
      for (int j = 0; j < count; ++j) {
        const float a = softplus(rc.scale * dot<D>(q, tile.k + j * D));
        z += a;
        add_scaled<D>(acc, a, tile.v + j * D);
      }
    }
    if (active) {
      ORBITLAW_UNROLL
      for (int c = 0; c < D; ++c) out[c] = acc[c] / z;
      stats[kZ] = z;
      stats[kUMax] = 0.0f;
      stats[kWSum] = 0.0f;
    }
    return;
  }
  // LSSAR pass 1: normaliser and largest weight.
  float a_max = 0.0f;
  for (int t = 0; t < num_tiles; ++t) {
    const TilePointers tile = loader.load(t, false);
    const int count = active ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
    for (int j = 0; j < count; ++j) {
      const float a = softplus(rc.scale * dot<D>(q, tile.k + j * D));
      z += a;
      a_max = fmaxf(a_max, a);
    }
  }
  const float u_max = rc.n * a_max / z - rc.offset;
  const bool kept = active && reweighted_row_kept(u_max);
  // Pass 2: re-weighted output, weights relative to the row maximum.
  float w_sum = 0.0f;
  for (int t = 0; t < num_tiles; ++t) {
    const TilePointers tile = loader.load(t, true);
    const int count = kept ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
    for (int j = 0; j < count; ++j) {
      const float a = softplus(rc.scale * dot<D>(q, tile.k + j * D));
      float slope;
      const float w = reweight(a, z, rc, u_max, opt.p, &slope);
      w_sum += w;
      add_scaled<D>(acc, w, tile.v + j * D);
    }
  }
  if (active) {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) out[c] = kept ? acc[c] / w_sum : 0.0f;
    stats[kZ] = z;
    stats[kUMax] = u_max;
    stats[kWSum] = kept ? w_sum : 0.0f;
  }
}

// Backward pass of one query row: dq (D floats) and the row scalars (kBackwardStats floats).
// g: dL/d(out) of the row; o: the forward output of the row; stats: its forward stats.
template <int D, class Loader>
ORBITLAW_HD void backward_query_row(const Options& opt, int row, bool active, const float* q, const float* g,
                                    const float* o, const float* stats, int num_tiles, Loader& loader,
                                    float* dq, float* row_grad_stats) {
  const RowConstants rc = row_constants(row, D);
  float acc[D];
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) acc[c] = 0.0f;
  const float delta = active ? dot<D>(g, o) : 0.0f;
  const float z = active ? stats[kZ] : 1.0f;
  float e = 0.0f;
  if (!opt.reweight) {
    for (int t = 0; t < num_tiles; ++t) {
      const TilePointers tile = loader.load(t, true);
      const int count = active ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
      for (int j = 0; j < count; ++j) {
        const float s = rc.scale * dot<D>(q, tile.k + j * D);
        const float ds = (dot<D>(g, tile.v + j * D) - delta) / z * sigmoid(s);
        add_scaled<D>(acc, rc.scale * ds, tile.k + j * D);
      }
    }
  } else {
    const float u_max = active ? stats[kUMax] : 0.0f;
    const float w_sum = active ? stats[kWSum] : 0.0f;
    const bool kept = active && reweighted_row_kept(u_max);
    // Pass A: e = sum_j A_j du_j, where du_j = dL/du_j.
    for (int t = 0; t < num_tiles; ++t) {
      const TilePointers tile = loader.load(t, true);
      const int count = kept ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
      for (int j = 0; j < count; ++j) {
        const float a = softplus(rc.scale * dot<D>(q, tile.k + j * D));
        float slope;
        reweight(a, z, rc, u_max, opt.p, &slope);
        if (slope == 0.0f) continue;
        const float du = slope / w_sum * (dot<D>(g, tile.v + j * D) - delta);
        e += a / z * du;
      }
    }
    // Pass B: ds_j = n (du_j - e) / z * sigmoid(s_j); dq = scale sum_j ds_j k_j.
    for (int t = 0; t < num_tiles; ++t) {
      const TilePointers tile = loader.load(t, true);
      const int count = kept ? visible_keys_in_tile(row, t, opt.tile_size) : 0;
      for (int j = 0; j < count; ++j) {
        const float s = rc.scale * dot<D>(q, tile.k + j * D);
        const float a = softplus(s);
        float slope;
        reweight(a, z, rc, u_max, opt.p, &slope);
        const float du = slope == 0.0f ? 0.0f : slope / w_sum * (dot<D>(g, tile.v + j * D) - delta);
        const float ds = rc.n * (du - e) / z * sigmoid(s);
        add_scaled<D>(acc, rc.scale * ds, tile.k + j * D);
      }
    }
  }
  if (active) {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) dq[c] = acc[c];
    row_grad_stats[kDelta] = delta;
    row_grad_stats[kE] = e;
  }
}

// A tile of query rows for the key pass.
struct QueryTilePointers {
  const float* q;           // tile_size x D
  const float* g;           // tile_size x D
  const float* stats;       // tile_size x kForwardStats
  const float* grad_stats;  // tile_size x kBackwardStats
};

// Backward pass of one key row `key`: dk and dv (D floats each). The block visits query tiles
// first_tile..num_tiles-1 (the same for all its threads); rows before the key are masked.
template <int D, class Loader>
ORBITLAW_HD void backward_key_row(const Options& opt, int key, bool active, const float* k, const float* v,
                                  int first_tile, int num_tiles, Loader& loader, float* dk, float* dv) {
  float dk_acc[D];
  float dv_acc[D];
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) dk_acc[c] = dv_acc[c] = 0.0f;
  for (int t = first_tile; t < num_tiles; ++t) {
    const QueryTilePointers tile = loader.load(t);
    if (!active) continue;
    for (int r = 0; r < opt.tile_size; ++r) {
      const int row = t * opt.tile_size + r;
      if (row < key || row >= opt.length) continue;
      const RowConstants rc = row_constants(row, D);
      const float* q = tile.q + r * D;
      const float* g = tile.g + r * D;
      const float* stats = tile.stats + r * kForwardStats;
      const float z = stats[kZ];
      const float delta = tile.grad_stats[r * kBackwardStats + kDelta];
      const float s = rc.scale * dot<D>(q, k);
      const float a = softplus(s);
      float weight;  // the attention weight P_ij that multiplies v_j
      float ds;      // dL/ds_ij
      if (!opt.reweight) {
        weight = a / z;
        ds = (dot<D>(g, v) - delta) / z * sigmoid(s);
      } else {
        const float u_max = stats[kUMax];
        if (!reweighted_row_kept(u_max)) continue;
        const float w_sum = stats[kWSum];
        const float e = tile.grad_stats[r * kBackwardStats + kE];
        float slope;
        weight = reweight(a, z, rc, u_max, opt.p, &slope) / w_sum;
        const float du = slope == 0.0f ? 0.0f : slope / w_sum * (dot<D>(g, v) - delta);
        ds = rc.n * (du - e) / z * sigmoid(s);
      }
      add_scaled<D>(dv_acc, weight, g);
      add_scaled<D>(dk_acc, rc.scale * ds, q);
    }
  }
  if (active) {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) {
      dk[c] = dk_acc[c];
      dv[c] = dv_acc[c];
    }
  }
}

// Tiles a block must visit: the key tiles up to its last query row, or the query tiles from its first key
// row.
ORBITLAW_HD int key_tiles_for_query_block(int block, int tile_size, int length) {
  int last_row = (block + 1) * tile_size - 1;
  if (last_row > length - 1) last_row = length - 1;
  return last_row / tile_size + 1;
}
ORBITLAW_HD int tile_count(int length, int tile_size) { return (length + tile_size - 1) / tile_size; }

// Tile size (keys or queries per tile, and threads per block) for head dimension D: shared memory stays
// under 48 KiB in the key pass, which holds 2 x tile x D floats plus stats.
template <int D>
constexpr int tile_size_for_head_dim() {
  return D <= 64 ? 64 : 32;
}

}  // namespace orbitlaw::model::cuda::tiles
