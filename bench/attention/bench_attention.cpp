// Attention benchmark, side by side in one run: fused LSSAR (orbitlaw's kernels), the unfused LSSAR reference
// (LibTorch operations materialising L x L), and softmax through LibTorch's fused
// scaled_dot_product_attention. Forward and forward+backward time (median of repeats after warm-up) and, on
// CUDA, peak memory above the inputs; ratios against fused softmax measured in the same run. On the CPU it
// runs small lengths (the fused path is then the CPU emulation, so its times say nothing about the GPU
// kernels; the CPU run proves the script).
//
//   bench_attention [--device cuda|cpu] [--lengths 1024,4096,16384] [--batch 1] [--heads 12] [--head-dim 64]
//                   [--dtype bf16|fp32] [--repeats 5] [--warmup 2] [--json FILE] [--matmul-ceiling]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "orbitlaw/model/fused_attention.hpp"
#include "orbitlaw/model/unfused_attention_reference.hpp"

#if defined(ORBITLAW_BENCH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace {

using orbitlaw::model::cuda::fused_lssa_attention;
using orbitlaw::model::cuda::unfused_lssa_attention;

struct Settings {
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  std::vector<int64_t> lengths;
  int64_t batch = 1, heads = 12, head_dim = 64;
  torch::Dtype dtype = torch::kBFloat16;
  int repeats = 5, warmup = 2;
  std::string json;
  bool matmul_ceiling = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr
      << "bench_attention: " << problem
      << "\nusage: bench_attention [--device cuda|cpu] [--lengths L1,L2,...] [--batch B] [--heads H]"
         " [--head-dim d] [--dtype bf16|fp32] [--repeats N] [--warmup N] [--json FILE] [--matmul-ceiling]\n";
  std::exit(2);
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--device") {
      const std::string d = value();
      if (d != "cuda" && d != "cpu") usage("--device must be cuda or cpu");
      s.device = d == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    } else if (arg == "--lengths") {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) s.lengths.push_back(std::stoll(item));
    } else if (arg == "--batch") {
      s.batch = std::stoll(value());
    } else if (arg == "--heads") {
      s.heads = std::stoll(value());
    } else if (arg == "--head-dim") {
      s.head_dim = std::stoll(value());
    } else if (arg == "--dtype") {
      const std::string d = value();
      if (d != "bf16" && d != "fp32") usage("--dtype must be bf16 or fp32");
      s.dtype = d == "bf16" ? torch::kBFloat16 : torch::kFloat32;
    } else if (arg == "--repeats") {
      s.repeats = std::stoi(value());
    } else if (arg == "--warmup") {
      s.warmup = std::stoi(value());
    } else if (arg == "--json") {
      s.json = value();
    } else if (arg == "--matmul-ceiling") {
      s.matmul_ceiling = true;
    } else {
      usage("unknown argument " + arg);
    }
  }
  if (s.device.is_cuda() && !torch::cuda::is_available())
    usage("--device cuda but no CUDA device is available");
  if (s.lengths.empty())
    s.lengths =
        s.device.is_cuda() ? std::vector<int64_t>{1024, 4096, 16384} : std::vector<int64_t>{128, 256, 512};
  if (s.repeats < 1) usage("--repeats must be >= 1");
  return s;
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

struct Measurement {
  std::optional<double> forward_ms, train_ms;              // empty: did not fit in memory
  std::optional<double> forward_peak_mib, train_peak_mib;  // CUDA only
  std::string note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

#if defined(ORBITLAW_BENCH_CUDA)
void reset_peak(const torch::Device& device) {
  if (device.is_cuda())
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
}
double peak_mib(const torch::Device& device, int64_t baseline_bytes) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
  const int64_t peak =
      stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  return static_cast<double>(peak - baseline_bytes) / (1024.0 * 1024.0);
}
int64_t allocated_bytes(const torch::Device& device) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
  return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current;
}
#else
void reset_peak(const torch::Device&) {}
double peak_mib(const torch::Device&, int64_t) { return 0; }
int64_t allocated_bytes(const torch::Device&) { return 0; }
#endif

using Attention =
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>;

// Median wall time of fn over repeats (after warm-up), and the peak memory of one call above what was
// allocated before it.
std::pair<double, std::optional<double>> time_and_peak(const Settings& s, const std::function<void()>& fn) {
  for (int i = 0; i < s.warmup; ++i) fn();
  synchronize(s.device);
  std::vector<double> ms;
  for (int i = 0; i < s.repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    synchronize(s.device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::optional<double> peak;
  if (s.device.is_cuda()) {
    const int64_t baseline = allocated_bytes(s.device);
    reset_peak(s.device);
    fn();
    synchronize(s.device);
    peak = peak_mib(s.device, baseline);
  }
  return {median(ms), peak};
}

bool is_out_of_memory(const std::exception& e) {
  const std::string what = e.what();
  return what.find("out of memory") != std::string::npos || what.find("OutOfMemory") != std::string::npos ||
         what.find("can't allocate memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos;
}

Measurement measure(const Settings& s, int64_t length, const Attention& attention) {
  const auto options = torch::TensorOptions().dtype(s.dtype).device(s.device);
  torch::manual_seed(0);
  const torch::Tensor q = torch::randn({s.batch, s.heads, length, s.head_dim}, options);
  const torch::Tensor k = torch::randn({s.batch, s.heads, length, s.head_dim}, options);
  const torch::Tensor v = torch::randn({s.batch, s.heads, length, s.head_dim}, options);
  const torch::Tensor g = torch::randn({s.batch, s.heads, length, s.head_dim}, options);
  Measurement m;
  try {
    auto [ms, peak] = time_and_peak(s, [&] {
      torch::NoGradGuard no_grad;
      attention(q, k, v);
    });
    m.forward_ms = ms;
    m.forward_peak_mib = peak;
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    m.note = "forward out of memory";
  }
  if (s.device.is_cuda()) torch::cuda::synchronize();
  try {
    const torch::Tensor qg = q.detach().requires_grad_(true), kg = k.detach().requires_grad_(true),
                        vg = v.detach().requires_grad_(true);
    auto [ms, peak] = time_and_peak(s, [&] {
      attention(qg, kg, vg).backward(g);
      qg.mutable_grad().reset();
      kg.mutable_grad().reset();
      vg.mutable_grad().reset();
    });
    m.train_ms = ms;
    m.train_peak_mib = peak;
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    m.note += m.note.empty() ? "forward+backward out of memory" : "; forward+backward out of memory";
  }
  return m;
}

std::string fmt_opt(const std::optional<double>& x, const char* unit) {
  if (!x) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f%s", *x, unit);
  return buf;
}

std::string ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", *a / *b);
  return buf;
}

std::string json_number(const std::optional<double>& x) {
  if (!x) return "null";
  std::ostringstream o;
  o.precision(6);
  o << *x;
  return o.str();
}

// Dense bf16 matmul throughput (TFLOP/s), the ceiling for MFU figures: 8192^3 on CUDA, 1024^3 on the CPU.
double matmul_tflops(const Settings& s) {
  const int64_t n = s.device.is_cuda() ? 8192 : 1024;
  const auto options =
      torch::TensorOptions().dtype(s.device.is_cuda() ? torch::kBFloat16 : torch::kFloat32).device(s.device);
  const torch::Tensor a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  auto [ms, peak] = time_and_peak(s, [&] { torch::mm(a, b); });
  (void)peak;
  return 2.0 * n * n * n / (ms * 1e-3) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  torch::manual_seed(0);
  if (s.device.is_cpu())
    torch::set_num_threads(std::max(1, std::min(2, static_cast<int>(torch::get_num_threads()))));
  const double p = 15.0;
  const std::vector<std::pair<std::string, Attention>> kinds = {
      {"softmax_sdpa",
       [](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
         return torch::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
       }},
      {"lssar_fused", [p](const torch::Tensor& q, const torch::Tensor& k,
                          const torch::Tensor& v) { return fused_lssa_attention(q, k, v, true, p); }},
      {"lssar_unfused",
       [p](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
         namespace F = torch::nn::functional;
         const auto unit_rows = F::NormalizeFuncOptions().p(2).dim(-1);
         return unfused_lssa_attention(F::normalize(q, unit_rows), F::normalize(k, unit_rows), v, true, p);
       }},
  };
  std::cout << "attention benchmark on " << (s.device.is_cuda() ? "CUDA" : "CPU")
            << (s.device.is_cpu() ? " (fused = CPU emulation of the kernels)" : "") << ", B=" << s.batch
            << " H=" << s.heads << " d=" << s.head_dim
            << " dtype=" << (s.dtype == torch::kBFloat16 ? "bf16" : "fp32") << ", median of " << s.repeats
            << " after " << s.warmup << " warm-up, LibTorch " << TORCH_VERSION << "\n";
  std::ostringstream json;
  json << "{\n  \"device\": \"" << (s.device.is_cuda() ? "cuda" : "cpu") << "\", \"batch\": " << s.batch
       << ", \"heads\": " << s.heads << ", \"head_dim\": " << s.head_dim << ", \"dtype\": \""
       << (s.dtype == torch::kBFloat16 ? "bf16" : "fp32") << "\", \"repeats\": " << s.repeats
       << ", \"torch\": \"" << TORCH_VERSION << "\",\n  \"results\": [";
  bool first_json = true;
  for (const int64_t length : s.lengths) {
    std::vector<Measurement> ms;
    for (const auto& [name, fn] : kinds) ms.push_back(measure(s, length, fn));
    const Measurement& softmax = ms[0];
    std::cout << "\nL = " << length << "\n";
    std::printf("  %-14s %12s %12s %14s %14s %10s %10s  %s\n", "kind", "fwd", "fwd+bwd", "fwd peak",
                "train peak", "t/softmax", "mem/softmax", "");
    for (size_t i = 0; i < kinds.size(); ++i) {
      const Measurement& m = ms[i];
      std::printf("  %-14s %12s %12s %14s %14s %10s %10s  %s\n", kinds[i].first.c_str(),
                  fmt_opt(m.forward_ms, " ms").c_str(), fmt_opt(m.train_ms, " ms").c_str(),
                  fmt_opt(m.forward_peak_mib, " MiB").c_str(), fmt_opt(m.train_peak_mib, " MiB").c_str(),
                  ratio(m.train_ms, softmax.train_ms).c_str(),
                  ratio(m.train_peak_mib, softmax.train_peak_mib).c_str(), m.note.c_str());
      json << (first_json ? "\n" : ",\n") << "    {\"length\": " << length << ", \"kind\": \""
           << kinds[i].first << "\", \"forward_ms\": " << json_number(m.forward_ms)
           << ", \"train_ms\": " << json_number(m.train_ms)
           << ", \"forward_peak_mib\": " << json_number(m.forward_peak_mib)
           << ", \"train_peak_mib\": " << json_number(m.train_peak_mib) << ", \"note\": \"" << m.note
           << "\"}";
      first_json = false;
    }
    std::cout << "  fused LSSAR vs unfused: time " << ratio(ms[1].train_ms, ms[2].train_ms) << ", memory "
              << ratio(ms[1].train_peak_mib, ms[2].train_peak_mib) << " (fwd+bwd)\n";
  }
  json << "\n  ]";
  if (s.matmul_ceiling) {
    const double tflops = matmul_tflops(s);
    std::printf("\ndense %s matmul ceiling: %.3g TFLOP/s\n",
                s.device.is_cuda() ? "bf16 8192^3" : "fp32 1024^3", tflops);
    json << ",\n  \"matmul_tflops\": " << tflops;
  }
  json << "\n}\n";
  if (!s.json.empty()) {
    std::ofstream out(s.json);
    out << json.str();
    if (!out) {
      std::cerr << "bench_attention: cannot write " << s.json << "\n";
      return 1;
    }
  }
  return 0;
}
