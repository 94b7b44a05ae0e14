// CPU emulation of the fused attention kernels: the same tile drivers (fused_attention_tiles.hpp) and the
// same block / thread loops as fused_attention_kernels.cu, with "shared memory" a per-block buffer and the
// threads of a block run one after another. Exists so that the tiled algorithm is tested without a GPU.
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <vector>

#include "fused_attention_launch.hpp"
#include "orbitlaw/model/fused_attention_tiles.hpp"

namespace orbitlaw::model::cuda::detail {
namespace {

template <typename scalar_t>
void load_row(const scalar_t* src, int d, float* dst) {
  for (int c = 0; c < d; ++c) dst[c] = static_cast<float>(src[c]);
}

template <typename scalar_t>
void store_row(const float* src, int d, scalar_t* dst) {
  for (int c = 0; c < d; ++c) dst[c] = static_cast<scalar_t>(src[c]);
}

// A block's shared key/value tile; reloads only when the tile (or the need for values) changes.
template <typename scalar_t, int D>
class KeyValueTileBuffer {
 public:
  KeyValueTileBuffer(const float* k, const scalar_t* v, int length, int tile_size)
      : k_src_(k), v_src_(v), length_(length), tile_size_(tile_size), k_(tile_size * D), v_(tile_size * D) {}

  tiles::TilePointers load(int tile, bool with_values) {
    if (tile != k_tile_) {
      fill(k_src_, tile, k_);
      k_tile_ = tile;
    }
    if (with_values && tile != v_tile_) {
      fill(v_src_, tile, v_);
      v_tile_ = tile;
    }
    return {k_.data(), v_.data()};
  }

 private:
  template <typename src_t>
  void fill(const src_t* src, int tile, std::vector<float>& dst) const {
    for (int r = 0; r < tile_size_; ++r) {
      const int key = tile * tile_size_ + r;
      if (key < length_) {
        load_row(src + static_cast<int64_t>(key) * D, D, dst.data() + r * D);
      } else {
        std::fill_n(dst.data() + r * D, D, 0.0f);
      }
    }
  }

  const float* k_src_;
  const scalar_t* v_src_;
  int length_;
  int tile_size_;
  std::vector<float> k_;
  std::vector<float> v_;
  int k_tile_ = -1;
  int v_tile_ = -1;
};

// A block's shared query tile for the key pass: q, dL/dout and the row scalars.
template <typename scalar_t, int D>
class QueryTileBuffer {
 public:
  QueryTileBuffer(const float* q, const float* g, const float* stats, const float* grad_stats, int length,
                  int tile_size)
      : q_src_(q),
        g_src_(g),
        stats_src_(stats),
        grad_stats_src_(grad_stats),
        length_(length),
        tile_size_(tile_size),
        q_(tile_size * D),
        g_(tile_size * D),
        stats_(tile_size * tiles::kForwardStats),
        grad_stats_(tile_size * tiles::kBackwardStats) {}

  tiles::QueryTilePointers load(int tile) {
    if (tile != tile_) {
      for (int r = 0; r < tile_size_; ++r) {
        const int row = tile * tile_size_ + r;
        const bool valid = row < length_;
        for (int c = 0; c < D; ++c) {
          q_[r * D + c] = valid ? q_src_[static_cast<int64_t>(row) * D + c] : 0.0f;
          g_[r * D + c] = valid ? g_src_[static_cast<int64_t>(row) * D + c] : 0.0f;
        }
        for (int s = 0; s < tiles::kForwardStats; ++s)
          stats_[r * tiles::kForwardStats + s] = valid ? stats_src_[row * tiles::kForwardStats + s] : 0.0f;
        for (int s = 0; s < tiles::kBackwardStats; ++s)
          grad_stats_[r * tiles::kBackwardStats + s] =
              valid ? grad_stats_src_[row * tiles::kBackwardStats + s] : 0.0f;
      }
      tile_ = tile;
    }
    return {q_.data(), g_.data(), stats_.data(), grad_stats_.data()};
  }

 private:
  const float* q_src_;
  const float* g_src_;
  const float* stats_src_;
  const float* grad_stats_src_;
  int length_;
  int tile_size_;
  std::vector<float> q_, g_, stats_, grad_stats_;
  int tile_ = -1;
};

template <typename scalar_t, int D>
void forward_for(const Problem& pb, const ForwardBuffers& buf) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  const tiles::Options opt{pb.length, T, pb.reweight, pb.p};
  const int64_t slice = static_cast<int64_t>(pb.length) * D;
  const auto* q_all = static_cast<const float*>(buf.q);
  const auto* k_all = static_cast<const float*>(buf.k);
  const auto* v_all = static_cast<const scalar_t*>(buf.v);
  auto* out_all = static_cast<float*>(buf.out);
  at::parallel_for(0, pb.batch_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      for (int block = 0; block < tiles::tile_count(pb.length, T); ++block) {
        KeyValueTileBuffer<scalar_t, D> shared(k_all + bh * slice, v_all + bh * slice, pb.length, T);
        const int num_tiles = tiles::key_tiles_for_query_block(block, T, pb.length);
        for (int thread = 0; thread < T; ++thread) {
          const int row = block * T + thread;
          const bool active = row < pb.length;
          float q[D] = {};
          float out[D];
          float stats[tiles::kForwardStats];
          if (active) load_row(q_all + bh * slice + static_cast<int64_t>(row) * D, D, q);
          tiles::forward_row<D>(opt, row, active, q, num_tiles, shared, out, stats);
          if (!active) continue;
          store_row(out, D, out_all + bh * slice + static_cast<int64_t>(row) * D);
          std::copy_n(stats, tiles::kForwardStats, buf.stats + (bh * pb.length + row) * tiles::kForwardStats);
        }
      }
    }
  });
}

template <typename scalar_t, int D>
void backward_for(const Problem& pb, const BackwardBuffers& buf) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  const tiles::Options opt{pb.length, T, pb.reweight, pb.p};
  const int64_t slice = static_cast<int64_t>(pb.length) * D;
  const auto* q_all = static_cast<const float*>(buf.q);
  const auto* k_all = static_cast<const float*>(buf.k);
  const auto* v_all = static_cast<const scalar_t*>(buf.v);
  const auto* o_all = static_cast<const float*>(buf.out);
  const auto* g_all = static_cast<const float*>(buf.grad_out);
  at::parallel_for(0, pb.batch_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const float* stats = buf.stats + bh * pb.length * tiles::kForwardStats;
      float* grad_stats = buf.grad_stats + bh * pb.length * tiles::kBackwardStats;
      // Query pass (first kernel on the GPU): dq and the row scalars.
      for (int block = 0; block < tiles::tile_count(pb.length, T); ++block) {
        KeyValueTileBuffer<scalar_t, D> shared(k_all + bh * slice, v_all + bh * slice, pb.length, T);
        const int num_tiles = tiles::key_tiles_for_query_block(block, T, pb.length);
        for (int thread = 0; thread < T; ++thread) {
          const int row = block * T + thread;
          const bool active = row < pb.length;
          float q[D] = {}, g[D] = {}, o[D] = {}, dq[D];
          float row_grad_stats[tiles::kBackwardStats];
          const int64_t at = bh * slice + static_cast<int64_t>(row) * D;
          if (active) {
            load_row(q_all + at, D, q);
            load_row(g_all + at, D, g);
            load_row(o_all + at, D, o);
          }
          tiles::backward_query_row<D>(opt, row, active, q, g, o,
                                       active ? stats + row * tiles::kForwardStats : stats, num_tiles, shared,
                                       dq, row_grad_stats);
          if (!active) continue;
          store_row(dq, D, static_cast<float*>(buf.grad_q) + at);
          std::copy_n(row_grad_stats, tiles::kBackwardStats, grad_stats + row * tiles::kBackwardStats);
        }
      }
      // Key pass (second kernel on the GPU): dk and dv.
      for (int block = 0; block < tiles::tile_count(pb.length, T); ++block) {
        QueryTileBuffer<scalar_t, D> shared(q_all + bh * slice, g_all + bh * slice, stats, grad_stats,
                                            pb.length, T);
        const int num_tiles = tiles::tile_count(pb.length, T);
        for (int thread = 0; thread < T; ++thread) {
          const int key = block * T + thread;
          const bool active = key < pb.length;
          float k[D] = {}, v[D] = {}, dk[D], dv[D];
          const int64_t at = bh * slice + static_cast<int64_t>(key) * D;
          if (active) {
            load_row(k_all + at, D, k);
            load_row(v_all + at, D, v);
          }
          tiles::backward_key_row<D>(opt, key, active, k, v, block, num_tiles, shared, dk, dv);
          if (!active) continue;
          store_row(dk, D, static_cast<float*>(buf.grad_k) + at);
          store_row(dv, D, static_cast<scalar_t*>(buf.grad_v) + at);
        }
      }
    }
  });
}

}  // namespace

void emulate_forward(const Problem& problem, const ForwardBuffers& buffers) {
  dispatch_problem<c10::BFloat16>(
      problem, [&]<typename scalar_t, int D>() { forward_for<scalar_t, D>(problem, buffers); });
}

void emulate_backward(const Problem& problem, const BackwardBuffers& buffers) {
  dispatch_problem<c10::BFloat16>(
      problem, [&]<typename scalar_t, int D>() { backward_for<scalar_t, D>(problem, buffers); });
}

}  // namespace orbitlaw::model::cuda::detail
