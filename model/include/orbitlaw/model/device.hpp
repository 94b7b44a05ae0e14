#pragma once
// Device and thread settings shared by training, evaluation and benchmarks.
#include <torch/torch.h>

#include <string>

namespace orbitlaw::model {

// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N"; throws Error for CUDA without a GPU.
torch::Device resolve_device(const std::string& name);
// LibTorch initialises its pools lazily and would take every core: set intra- and inter-op threads
// explicitly (0: OMP_NUM_THREADS when it is set, else all hardware threads). Inter-op threads can only be set
// once per process. Every provenance record written afterwards says the thread count and CPU capability
// ("compute").
void configure_threads(int threads);
// TF32 matrix multiplications on CUDA (Ampere and later).
void enable_tf32();

}  // namespace orbitlaw::model
