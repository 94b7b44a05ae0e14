#pragma once
// LSSAR's near-uniform cut-off (docs/design.md section 5), the one definition that every implementation of
// LSSAR uses: the unfused reference (model/src/attention.cpp), the fused kernels and their CPU emulation
// (model/include/orbitlaw/model/fused_attention_tiles.hpp) and the fused tests' float64 reference. It is
// compiled by g++ (C++20) and by nvcc (C++17, device code): no includes, nothing newer than C++17.

namespace orbitlaw::model {

// LSSAR row i (n_i keys, offset O_i) with u_ij = n_i A_ij - O_i is "all at or below uniform" when
// max_j u_ij <= kLssarUniformTolerance: W is then all zeros and the row's output (and every gradient through
// it) is zero. Otherwise W_ij is proportional to ReLU(u_ij)^p exactly as the formula says (no per-key
// tolerance: the row maximum is above the cut-off, so rounding noise of keys at the uniform level is divided
// by it and then raised to the p-th power, which makes it negligible).
//
// Why 2^-10 (about 0.1%) for every dtype:
//  - It must be above the rounding noise of u_max for an exactly uniform row (identical keys, or a zero
//    query), else the p-th power turns that noise into a near one-hot weight on an arbitrary key. float64
//    noise is below 1e-12 at any length. float32 noise grows with the length when the normaliser is summed
//    key by key, as the fused kernel does: measured worst case over 200 row values (n A - 1 with a
//    sequential float32 sum) 1.5e-5 at n = 1024, 2.3e-4 at n = 16384, 4.8e-4 at n = 32768, 9.4e-4 at
//    n = 65536 (about n eps / 8). The former 64 float epsilons (7.6e-6) is already exceeded at n ~ 512, so
//    it only suited LibTorch's pairwise sums; 2^-10 leaves a factor 4 at 16k keys and 2 at 32k.
//  - It must be the same number in every dtype, so that a model trained in float32 (or bfloat16 autocast)
//    on the GPU and evaluated in float32 or float64 on the CPU computes one function: a cut-off in machine
//    epsilons would move by a factor 2^29 between float32 and float64. 2^-10 is exactly representable in
//    float64, float32 and bfloat16, so every path compares against the same real number.
//  - It is far below any excess that carries information: a row whose largest weight is within 0.1% of
//    uniform attends uniformly for every practical purpose, and re-weighting it would only pick out noise.
inline constexpr double kLssarUniformTolerance = 1.0 / 1024.0;

static_assert(static_cast<double>(static_cast<float>(kLssarUniformTolerance)) == kLssarUniformTolerance,
              "the LSSAR cut-off must be exact in float32, which the fused kernels compare in");

}  // namespace orbitlaw::model
