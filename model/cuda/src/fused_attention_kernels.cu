// CUDA kernels of the fused LSSA / LSSAR attention. One thread per query row (forward, dq) or key row (dk,
// dv), one block per tile of rows and per (batch, head); tiles of the other side are staged in shared memory
// as float. The arithmetic lives in fused_attention_tiles.hpp and is shared with the CPU emulation.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "fused_attention_launch.hpp"
#include "orbitlaw/model/fused_attention_tiles.hpp"

namespace orbitlaw::model::cuda::detail {
namespace {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename scalar_t>
__device__ __forceinline__ scalar_t from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

template <typename src_t, int D>
__device__ void load_row(const src_t* src, float* dst) {
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) dst[c] = to_float(src[c]);
}

template <typename dst_t, int D>
__device__ void store_row(const float* src, dst_t* dst) {
  ORBITLAW_UNROLL
  for (int c = 0; c < D; ++c) dst[c] = from_float<dst_t>(src[c]);
}

// Collective: every thread of the block calls load() with the same tile.
template <typename scalar_t, int D, int T>
struct SharedKeyValueTiles {
  const float* k;
  const scalar_t* v;
  int length;
  float* k_tile;
  float* v_tile;

  __device__ tiles::TilePointers load(int tile, bool with_values) {
    __syncthreads();  // everyone is done with the previous tile
    const int first = tile * T;
    for (int idx = threadIdx.x; idx < T * D; idx += blockDim.x) {
      const bool valid = first + idx / D < length;
      const long long at = static_cast<long long>(first) * D + idx;
      k_tile[idx] = valid ? k[at] : 0.0f;
      if (with_values) v_tile[idx] = valid ? to_float(v[at]) : 0.0f;
    }
    __syncthreads();
    return {k_tile, v_tile};
  }
};

template <typename scalar_t, int D, int T>
struct SharedQueryTiles {
  const float* q;
  const float* g;
  const float* stats;
  const float* grad_stats;
  int length;
  float* q_tile;
  float* g_tile;
  float* stats_tile;
  float* grad_stats_tile;

  __device__ tiles::QueryTilePointers load(int tile) {
    __syncthreads();
    const int first = tile * T;
    for (int idx = threadIdx.x; idx < T * D; idx += blockDim.x) {
      const bool valid = first + idx / D < length;
      const long long at = static_cast<long long>(first) * D + idx;
      q_tile[idx] = valid ? q[at] : 0.0f;
      g_tile[idx] = valid ? g[at] : 0.0f;
    }
    for (int idx = threadIdx.x; idx < T * tiles::kForwardStats; idx += blockDim.x) {
      const bool valid = first + idx / tiles::kForwardStats < length;
      stats_tile[idx] = valid ? stats[first * tiles::kForwardStats + idx] : 0.0f;
    }
    for (int idx = threadIdx.x; idx < T * tiles::kBackwardStats; idx += blockDim.x) {
      const bool valid = first + idx / tiles::kBackwardStats < length;
      grad_stats_tile[idx] = valid ? grad_stats[first * tiles::kBackwardStats + idx] : 0.0f;
    }
    __syncthreads();
    return {q_tile, g_tile, stats_tile, grad_stats_tile};
  }
};

template <typename scalar_t, int D>
__global__ void __launch_bounds__(tiles::tile_size_for_head_dim<D>())
    forward_kernel(tiles::Options opt, const float* q_all, const float* k_all, const scalar_t* v_all,
                   float* out_all, float* stats_all) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  __shared__ float k_tile[T * D];
  __shared__ float v_tile[T * D];
  const long long slice = static_cast<long long>(opt.length) * D;
  const long long bh = blockIdx.y;
  SharedKeyValueTiles<scalar_t, D, T> shared{k_all + bh * slice, v_all + bh * slice, opt.length, k_tile,
                                             v_tile};
  const int row = blockIdx.x * T + threadIdx.x;
  const bool active = row < opt.length;
  const long long at = bh * slice + static_cast<long long>(row) * D;
  float q[D];
  float out[D];
  float stats[tiles::kForwardStats];
  if (active) {
    load_row<float, D>(q_all + at, q);
  } else {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) q[c] = 0.0f;
  }
  const int num_tiles = tiles::key_tiles_for_query_block(blockIdx.x, T, opt.length);
  tiles::forward_row<D>(opt, row, active, q, num_tiles, shared, out, stats);
  if (!active) return;
  store_row<float, D>(out, out_all + at);
  float* stats_row = stats_all + (bh * opt.length + row) * tiles::kForwardStats;
  ORBITLAW_UNROLL
  for (int s = 0; s < tiles::kForwardStats; ++s) stats_row[s] = stats[s];
}

template <typename scalar_t, int D>
__global__ void __launch_bounds__(tiles::tile_size_for_head_dim<D>())
    backward_query_kernel(tiles::Options opt, const float* q_all, const float* k_all, const scalar_t* v_all,
                          const float* o_all, const float* g_all, const float* stats_all,
                          float* grad_stats_all, float* dq_all) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  __shared__ float k_tile[T * D];
  __shared__ float v_tile[T * D];
  const long long slice = static_cast<long long>(opt.length) * D;
  const long long bh = blockIdx.y;
  SharedKeyValueTiles<scalar_t, D, T> shared{k_all + bh * slice, v_all + bh * slice, opt.length, k_tile,
                                             v_tile};
  const int row = blockIdx.x * T + threadIdx.x;
  const bool active = row < opt.length;
  const long long at = bh * slice + static_cast<long long>(row) * D;
  float q[D], g[D], o[D], dq[D];
  float row_grad_stats[tiles::kBackwardStats];
  if (active) {
    load_row<float, D>(q_all + at, q);
    load_row<float, D>(g_all + at, g);
    load_row<float, D>(o_all + at, o);
  } else {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) q[c] = g[c] = o[c] = 0.0f;
  }
  const float* stats = stats_all + (bh * opt.length + (active ? row : 0)) * tiles::kForwardStats;
  const int num_tiles = tiles::key_tiles_for_query_block(blockIdx.x, T, opt.length);
  tiles::backward_query_row<D>(opt, row, active, q, g, o, stats, num_tiles, shared, dq, row_grad_stats);
  if (!active) return;
  store_row<float, D>(dq, dq_all + at);
  float* grad_stats_row = grad_stats_all + (bh * opt.length + row) * tiles::kBackwardStats;
  ORBITLAW_UNROLL
  for (int s = 0; s < tiles::kBackwardStats; ++s) grad_stats_row[s] = row_grad_stats[s];
}

template <typename scalar_t, int D>
__global__ void __launch_bounds__(tiles::tile_size_for_head_dim<D>())
    backward_key_kernel(tiles::Options opt, const float* q_all, const float* k_all, const scalar_t* v_all,
                        const float* g_all, const float* stats_all, const float* grad_stats_all,
                        float* dk_all, scalar_t* dv_all) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  __shared__ float q_tile[T * D];
  __shared__ float g_tile[T * D];
  __shared__ float stats_tile[T * tiles::kForwardStats];
  __shared__ float grad_stats_tile[T * tiles::kBackwardStats];
  const long long slice = static_cast<long long>(opt.length) * D;
  const long long bh = blockIdx.y;
  SharedQueryTiles<scalar_t, D, T> shared{q_all + bh * slice,
                                          g_all + bh * slice,
                                          stats_all + bh * opt.length * tiles::kForwardStats,
                                          grad_stats_all + bh * opt.length * tiles::kBackwardStats,
                                          opt.length,
                                          q_tile,
                                          g_tile,
                                          stats_tile,
                                          grad_stats_tile};
  const int key = blockIdx.x * T + threadIdx.x;
  const bool active = key < opt.length;
  const long long at = bh * slice + static_cast<long long>(key) * D;
  float k[D], v[D], dk[D], dv[D];
  if (active) {
    load_row<float, D>(k_all + at, k);
    load_row<scalar_t, D>(v_all + at, v);
  } else {
    ORBITLAW_UNROLL
    for (int c = 0; c < D; ++c) k[c] = v[c] = 0.0f;
  }
  tiles::backward_key_row<D>(opt, key, active, k, v, blockIdx.x, tiles::tile_count(opt.length, T), shared, dk,
                             dv);
  if (!active) return;
  store_row<float, D>(dk, dk_all + at);
  store_row<scalar_t, D>(dv, dv_all + at);
}

void check_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("fused attention: ") + what +
                             " launch failed: " + cudaGetErrorString(err));
  }
}

template <int D>
dim3 grid_for(const Problem& pb) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  if (pb.batch_heads > 65535) {
    throw std::runtime_error("fused attention: batch x heads = " + std::to_string(pb.batch_heads) +
                             " exceeds the CUDA grid limit 65535");
  }
  return dim3(static_cast<unsigned>(tiles::tile_count(pb.length, T)), static_cast<unsigned>(pb.batch_heads));
}

template <typename scalar_t, int D>
void forward_for(const Problem& pb, const ForwardBuffers& buf, cudaStream_t stream) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  const tiles::Options opt{pb.length, T, pb.reweight, pb.p};
  forward_kernel<scalar_t, D><<<grid_for<D>(pb), T, 0, stream>>>(
      opt, static_cast<const float*>(buf.q), static_cast<const float*>(buf.k),
      static_cast<const scalar_t*>(buf.v), static_cast<float*>(buf.out), buf.stats);
  check_launch("forward");
}

template <typename scalar_t, int D>
void backward_for(const Problem& pb, const BackwardBuffers& buf, cudaStream_t stream) {
  constexpr int T = tiles::tile_size_for_head_dim<D>();
  const tiles::Options opt{pb.length, T, pb.reweight, pb.p};
  const auto* q = static_cast<const float*>(buf.q);
  const auto* k = static_cast<const float*>(buf.k);
  const auto* v = static_cast<const scalar_t*>(buf.v);
  const auto* o = static_cast<const float*>(buf.out);
  const auto* g = static_cast<const float*>(buf.grad_out);
  backward_query_kernel<scalar_t, D><<<grid_for<D>(pb), T, 0, stream>>>(
      opt, q, k, v, o, g, buf.stats, buf.grad_stats, static_cast<float*>(buf.grad_q));
  check_launch("backward (queries)");
  backward_key_kernel<scalar_t, D><<<grid_for<D>(pb), T, 0, stream>>>(
      opt, q, k, v, g, buf.stats, buf.grad_stats, static_cast<float*>(buf.grad_k),
      static_cast<scalar_t*>(buf.grad_v));
  check_launch("backward (keys)");
}

struct ForwardLauncher {
  const Problem& pb;
  const ForwardBuffers& buf;
  cudaStream_t stream;
  template <typename scalar_t, int D>
  void operator()() const {
    forward_for<scalar_t, D>(pb, buf, stream);
  }
};

struct BackwardLauncher {
  const Problem& pb;
  const BackwardBuffers& buf;
  cudaStream_t stream;
  template <typename scalar_t, int D>
  void operator()() const {
    backward_for<scalar_t, D>(pb, buf, stream);
  }
};

}  // namespace

void cuda_forward(const Problem& problem, const ForwardBuffers& buffers, void* stream) {
  dispatch_problem<__nv_bfloat16>(problem,
                                  ForwardLauncher{problem, buffers, static_cast<cudaStream_t>(stream)});
}

void cuda_backward(const Problem& problem, const BackwardBuffers& buffers, void* stream) {
  dispatch_problem<__nv_bfloat16>(problem,
                                  BackwardLauncher{problem, buffers, static_cast<cudaStream_t>(stream)});
}

}  // namespace orbitlaw::model::cuda::detail
