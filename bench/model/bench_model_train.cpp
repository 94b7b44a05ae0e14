// Training throughput of the LibTorch GPT: one optimizer step (forward, loss, backward, clip, AdamW) on
// fixed random tokens, timed step by step after warm-up; prints one JSON line. bench/model/run.sh runs it
// beside the same model in Python PyTorch (gpt_reference.py) and prints the ratio.
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

}  // namespace

int main(int argc, char** argv) {
  orbitlaw::retain_freed_memory();  // as the orbitlaw tool does
  using namespace orbitlaw::model;
  std::string kind = "softmax", preset_name = "small";
  int steps = 10, warmup = 3, batch = 8, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--kind")
      kind = v;
    else if (a == "--preset")
      preset_name = v;
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
  const auto before = rss_mib().first;
  Preset p = preset(preset_name);
  ModelConfig config = p.model;
  config.attention.kind = parse_attention_kind(kind);
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
  auto tokens = torch::randint(0, p.tokenizer.bins, {batch, t + 1, 2}, torch::kInt64);
  auto inputs = tokens.narrow(1, 0, t), targets = tokens.narrow(1, 1, t);

  std::vector<double> seconds;
  double last_loss = 0;
  for (int i = 0; i < warmup + steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    auto loss = next_token_loss(model->forward(inputs), targets, p.tokenizer.pad_token());
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
      "{\"impl\": \"libtorch\", \"kind\": \"%s\", \"preset\": \"%s\", \"batch\": %d, \"context\": %d, "
      "\"threads\": %d, "
      "\"parameters\": %lld, \"median_step_s\": %.6f, \"tokens_per_s\": %.1f, \"peak_rss_mib\": %.1f, "
      "\"rss_before_model_mib\": %.1f, \"final_loss\": %.4f}\n",
      kind.c_str(), preset_name.c_str(), batch, t, threads, static_cast<long long>(model->parameter_count()),
      median, batch * t / median, peak, before, last_loss);
  return 0;
}
