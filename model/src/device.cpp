#include "orbitlaw/model/device.hpp"

#include <ATen/Context.h>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/provenance.hpp"

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

void configure_threads(int threads) {
  torch::set_num_threads(resolve_thread_count(threads));  // 0: OMP_NUM_THREADS or every core
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
  record_compute(
      Json{{"cpu_threads", torch::get_num_threads()}, {"cpu_capability", at::get_cpu_capability()}});
}

void enable_tf32() { at::globalContext().setFloat32MatmulPrecision("high"); }

}  // namespace orbitlaw::model
