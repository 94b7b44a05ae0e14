#include "orbitlaw/model/device.hpp"

#include <ATen/Context.h>

#include <cstdlib>
#include <thread>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::model {

torch::Device resolve_device(const std::string& name) {
  if (name == "auto")
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  torch::Device device(torch::kCPU);
  try {
    device = torch::Device(name);
  } catch (const c10::Error&) {
    throw Error("unknown device '" + name + "' (use auto, cpu, cuda or cuda:N)");
  }
  if (device.is_cuda() && !torch::cuda::is_available())
    throw Error("device '" + name + "': no CUDA GPU available");
  return device;
}

namespace {

// OMP_NUM_THREADS as a positive count, or 0 when it is unset or not one. A test runner that starts one
// process per core sets it to 1: a process that then started a thread per core would oversubscribe the
// machine, and LibTorch's OpenMP workers, spinning at each barrier while another process holds their core,
// run tens of times slower than one thread (20 steps of a tiny model: 0.6 s on one thread, 20 s on two beside
// another job).
int omp_num_threads_from_environment() {
  const char* value = std::getenv("OMP_NUM_THREADS");
  if (value == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  return (end != value && *end == '\0' && n > 0 && n <= 4096) ? static_cast<int>(n) : 0;
}

}  // namespace

void configure_threads(int threads) {
  int n = threads > 0 ? threads : omp_num_threads_from_environment();
  if (n == 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
  static bool inter_op_set = false;
  if (!inter_op_set) {
    try {
      torch::set_num_interop_threads(
          1);  // the model runs one op at a time; the pool would only oversubscribe
    } catch (const c10::Error&) {
      // already initialised by an earlier parallel op: keep its setting
    }
    inter_op_set = true;
  }
}

void enable_tf32() { at::globalContext().setFloat32MatmulPrecision("high"); }

}  // namespace orbitlaw::model
