// Training throughput of the LibTorch GPT: one optimizer step (forward, loss, backward, clip, AdamW) on
// fixed random tokens (or coordinates, for the regression head), timed step by step after warm-up; prints one
// JSON line. bench/model/run.sh runs it beside the same model in Python PyTorch (gpt_reference.py) and prints
// the ratio; bench/model/sweep.sh does the same for the sweeps' model (--shape sweep) on both attention
// paths.
//
//   --shape PRESET|sweep   a preset's model and token head, or the locality/quickstart model: 2 layers, 2
//   heads,
//                          width 32, context 128, RoPE, regression head (sliding window: 2 positions)
//   --path fused|reference the kind's fused path (model.allow_fused) or its reference formula
//   --peak                 instead: the float32 rate of a 1024^3 matrix product on --threads threads
//   (GFLOP/s)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "orbitlaw/common/memory.hpp"
#include "orbitlaw/model.hpp"
#include "orbitlaw/model/device.hpp"

namespace {

// Resident set size now and its peak so far, in MiB (Linux /proc).
std::pair<double, double> rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  double now = 0, peak = 0;
  while (status >> key) {
    double kb = 0;
    if (key == "VmRSS:" && status >> kb) now = kb / 1024;
    if (key == "VmHWM:" && status >> kb) peak = kb / 1024;
  }
  return {now, peak};
}

// The float32 rate of a 1024^3 matrix product on the configured threads (median of 9), in GFLOP/s: the
// machine's practical peak, measured in the same run as the model.
double matmul_gflops() {
  auto a = torch::randn({1024, 1024}), b = torch::randn({1024, 1024});
  std::vector<double> rates;
  for (int i = 0; i < 12; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto c = torch::mm(a, b);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= 3) rates.push_back(2.0 * 1024 * 1024 * 1024 / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// The model a run of --shape trains: a preset's (token head), or the sweeps' (docs/experiments.md: the
// locality and quickstart experiments' 2-layer width-32 regression model; the window kind sees 2 positions).
orbitlaw::model::ModelConfig model_config(const std::string& shape, const std::string& kind,
                                          const std::string& path) {
  using namespace orbitlaw::model;
  ModelConfig config = preset(shape == "sweep" ? "tiny" : shape).model;
  if (shape == "sweep") {
    config.n_layer = 2;
    config.n_head = 2;
    config.n_embd = 32;
    config.block_size = 128;
    config.positional = Positional::kRope;
    config.head = Head::kRegression;
    config.coordinate_scale = 4;
    config.attention.window = 2;
  }
  config.attention.kind = parse_attention_kind(kind);
  config.attention.allow_fused = path == "fused";
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  orbitlaw::retain_freed_memory();  // as the orbitlaw tool does
  using namespace orbitlaw::model;
  std::string kind = "softmax", shape = "small", path = "fused";
  bool peak_only = false;
  int steps = 10, warmup = 3, batch = 8, threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--peak") {
      peak_only = true;
      continue;
    }
    if (i + 1 >= argc) break;
    const std::string v = argv[++i];
    if (a == "--kind")
      kind = v;
    else if (a == "--preset" || a == "--shape")
      shape = v;
    else if (a == "--path")
      path = v;
    else if (a == "--steps")
      steps = std::stoi(v);
    else if (a == "--warmup")
      warmup = std::stoi(v);
    else if (a == "--batch")
      batch = std::stoi(v);
    else if (a == "--threads")
      threads = std::stoi(v);
  }
  configure_threads(threads);
  if (peak_only) {
    std::printf("{\"impl\": \"libtorch\", \"threads\": %d, \"matmul_gflops\": %.2f}\n", threads,
                matmul_gflops());
    return 0;
  }
  const auto before = rss_mib().first;
  const ModelConfig config = model_config(shape, kind, path);
  const bool regression = config.head == Head::kRegression;
  torch::manual_seed(1);
  Gpt model(config);
  model->train();
  std::vector<torch::Tensor> decay, no_decay;
  for (auto& t : model->parameters()) (t.dim() >= 2 ? decay : no_decay).push_back(t);
  auto options = torch::optim::AdamWOptions(1e-3).betas({0.9, 0.95});
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(
                                 torch::optim::AdamWOptions(options).weight_decay(0.1)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(
                                    torch::optim::AdamWOptions(options).weight_decay(0)));
  torch::optim::AdamW optimizer(std::move(groups), options);
  const int t = config.block_size;
  const std::int64_t pad = config.vocab - 1;  // the tokenizer's pad token (bins + 2)
  auto data = regression ? torch::randn({batch, t + 1, 2}, torch::kFloat64)
                         : torch::randint(0, config.vocab - 3, {batch, t + 1, 2}, torch::kInt64);
  auto inputs = data.narrow(1, 0, t), targets = data.narrow(1, 1, t);
  auto loss_of = [&](const GptOutput& out) {
    return regression ? next_position_loss(out, targets, config.coordinate_scale)
                      : next_token_loss(out, targets, pad);
  };

  std::vector<double> seconds;
  double last_loss = 0;
  for (int i = 0; i < warmup + steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    auto loss = loss_of(model->forward(inputs));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    last_loss = loss.item<double>();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= warmup) seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const auto [now, peak] = rss_mib();
  (void)now;
  std::printf(
      "{\"impl\": \"libtorch\", \"kind\": \"%s\", \"preset\": \"%s\", \"path\": \"%s\", \"batch\": %d, "
      "\"context\": %d, \"threads\": %d, "
      "\"parameters\": %lld, \"median_step_s\": %.6f, \"tokens_per_s\": %.1f, \"peak_rss_mib\": %.1f, "
      "\"rss_before_model_mib\": %.1f, \"final_loss\": %.4f}\n",
      kind.c_str(), shape.c_str(), path.c_str(), batch, t, threads,
      static_cast<long long>(model->parameter_count()), median, batch * t / median, peak, before, last_loss);
  return 0;
}
