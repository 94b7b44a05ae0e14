// Training throughput of a preset GPT on one GPU: tokens/s and model FLOP utilisation (MFU) against the dense
// bf16 matmul ceiling measured in the same run. bf16 autocast, TF32 for float32 matmuls, AdamW (LibTorch's
// C++ AdamW has no fused variant), random tokens generated on the device (no data loading in the timed loop).
// FLOPs per token: 6 N (N = parameters) + 12 n_layer n_embd T (attention scores and weighted sum, forward and
// backward; llm.c / nanoGPT's count), so the figure is comparable with llm.c's ~56% on GPT-2 124M.
//
//   bench_train_step [--preset paper-109m] [--attention softmax|lssa|lssar] [--batch 16] [--steps 10]
//                    [--warmup 3] [--device cuda|cpu] [--no-fused]
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "orbitlaw/model/config.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr
      << "bench_train_step: " << problem
      << "\nusage: bench_train_step [--preset NAME] [--attention softmax|lssa|lssar] [--batch B] [--steps N]"
         " [--warmup N] [--device cuda|cpu] [--no-fused]\n";
  std::exit(2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double matmul_tflops(const torch::Device& device) {
  const int64_t n = device.is_cuda() ? 8192 : 1024;
  const auto options =
      torch::TensorOptions().dtype(device.is_cuda() ? torch::kBFloat16 : torch::kFloat32).device(device);
  const torch::Tensor a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  for (int i = 0; i < 3; ++i) torch::mm(a, b);
  synchronize(device);
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    torch::mm(a, b);
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / (median(ms) * 1e-3) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset_name = "paper-109m", attention = "softmax";
  int64_t batch = 16;
  int steps = 10, warmup = 3;
  bool fused = true;
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--preset")
      preset_name = value();
    else if (arg == "--attention")
      attention = value();
    else if (arg == "--batch")
      batch = std::stoll(value());
    else if (arg == "--steps")
      steps = std::stoi(value());
    else if (arg == "--warmup")
      warmup = std::stoi(value());
    else if (arg == "--device")
      device = value() == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    else if (arg == "--no-fused")
      fused = false;
    else
      usage("unknown argument " + arg);
  }
  if (steps < 1) usage("--steps must be >= 1");
  orbitlaw::model::Preset preset = orbitlaw::model::preset(preset_name);
  preset.model.attention.kind = orbitlaw::model::parse_attention_kind(attention);
  preset.model.attention.allow_fused = fused;
  const int64_t context = preset.model.block_size;
  const int64_t vocab_bins = preset.tokenizer.bins;

  torch::manual_seed(0);
  orbitlaw::model::Gpt model(preset.model);
  model->to(device);
  const int64_t params = model->parameter_count();
  torch::optim::AdamW optimizer(model->parameters(),
                                torch::optim::AdamWOptions(6e-4).betas({0.9, 0.95}).weight_decay(0.1));
  if (device.is_cuda()) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  }
  const auto token_options = torch::TensorOptions().dtype(torch::kInt64).device(device);
  auto step = [&]() {
    const torch::Tensor seq = torch::randint(0, vocab_bins, {batch, context + 1, 2}, token_options);
    const torch::Tensor inputs = seq.slice(1, 0, context), targets = seq.slice(1, 1, context + 1);
    optimizer.zero_grad();
    const auto out = model->forward(inputs);
    const torch::Tensor loss = orbitlaw::model::next_token_loss(out, targets, preset.tokenizer.pad_token());
    loss.backward();
    at::autocast::clear_cache();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    return loss;
  };
  for (int i = 0; i < warmup; ++i) step();
  synchronize(device);
  std::vector<double> ms;
  double last_loss = 0;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const torch::Tensor loss = step();
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    last_loss = loss.item<double>();
  }
  if (device.is_cuda()) at::autocast::set_autocast_enabled(at::kCUDA, false);
  const double step_ms = median(ms);
  const double tokens = static_cast<double>(batch * context);
  const double tokens_per_s = tokens / (step_ms * 1e-3);
  const double flops_per_token = 6.0 * static_cast<double>(params) + 12.0 * preset.model.n_layer *
                                                                         preset.model.n_embd *
                                                                         static_cast<double>(context);
  const double achieved_tflops = flops_per_token * tokens_per_s / 1e12;
  const double ceiling = matmul_tflops(device);
  std::printf("preset %s, attention %s%s, %lld parameters, batch %lld x %lld tokens, %s\n",
              preset_name.c_str(), attention.c_str(), fused ? "" : " (fused kernel off)",
              static_cast<long long>(params), static_cast<long long>(batch), static_cast<long long>(context),
              device.is_cuda() ? "CUDA bf16 autocast" : "CPU fp32");
  std::printf("step %.1f ms (median of %d after %d warm-up), %.0f tokens/s, loss %.3f\n", step_ms, steps,
              warmup, tokens_per_s, last_loss);
  std::printf("model FLOPs %.3g TFLOP/s; dense matmul ceiling measured now %.3g TFLOP/s; MFU %.2g%%\n",
              achieved_tflops, ceiling, 100.0 * achieved_tflops / ceiling);
  return 0;
}
