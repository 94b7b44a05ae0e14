// DataParallel on c10d: a Store for the rendezvous (FileStore or TCPStore), then ProcessGroupGloo (CPU) or
// ProcessGroupNCCL (CUDA) as the collective backend. Only this file includes c10d's backend headers.
//
// The torch wheel ships c10d's headers but not Gloo's; ProcessGroupGloo.hpp includes <gloo/...> for
// declarations only (every Gloo object it holds is behind a shared_ptr / unique_ptr, so the class layout does
// not depend on Gloo's version), and the Debian libgloo-dev headers satisfy them. All code runs inside
// libtorch_cpu. Without those headers (ORBITLAW_DISTRIBUTED_GLOO undefined) single-process training still
// builds and runs, and a multi-process CPU job stops with a one-line error.
#include "orbitlaw/model/data_parallel.hpp"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(ORBITLAW_DISTRIBUTED_GLOO)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if defined(ORBITLAW_DISTRIBUTED_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::model::distributed {
namespace {

// An integer environment variable; `fallback` when unset.
int integer_variable(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0 || value > 1000000) {
    throw Error(std::string("data parallel: environment variable ") + name + "='" + text +
                "' is not a non-negative integer");
  }
  return static_cast<int>(value);
}

std::string string_variable(const char* name) {
  const char* text = std::getenv(name);
  return text == nullptr ? std::string() : std::string(text);
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

}  // namespace

LaunchEnvironment LaunchEnvironment::from_environment() {
  LaunchEnvironment env;
  const bool has_world = std::getenv("WORLD_SIZE") != nullptr;
  const bool has_rank = std::getenv("RANK") != nullptr;
  if (has_world != has_rank) throw Error("data parallel: RANK and WORLD_SIZE must be set together");
  env.world_size = integer_variable("WORLD_SIZE", 1);
  env.rank = integer_variable("RANK", 0);
  if (env.world_size < 1) throw Error("data parallel: WORLD_SIZE must be at least 1");
  if (env.rank >= env.world_size) {
    throw Error("data parallel: RANK=" + std::to_string(env.rank) +
                " is not below WORLD_SIZE=" + std::to_string(env.world_size));
  }
  env.local_world_size = integer_variable("LOCAL_WORLD_SIZE", env.world_size);
  env.local_rank = integer_variable("LOCAL_RANK", env.rank);
  if (env.local_world_size < 1) throw Error("data parallel: LOCAL_WORLD_SIZE must be at least 1");
  if (env.local_rank >= env.local_world_size) {
    throw Error("data parallel: LOCAL_RANK=" + std::to_string(env.local_rank) +
                " is not below LOCAL_WORLD_SIZE=" + std::to_string(env.local_world_size));
  }
  env.file_store = string_variable("ORBITLAW_DIST_FILE_STORE");
  env.master_addr = string_variable("MASTER_ADDR");
  env.master_port = integer_variable("MASTER_PORT", 0);
  if (env.distributed() && env.file_store.empty()) {
    if (env.master_addr.empty()) {
      throw Error(
          "data parallel: WORLD_SIZE > 1 needs MASTER_ADDR and MASTER_PORT (or ORBITLAW_DIST_FILE_STORE)");
    }
    if (env.master_port < 1 || env.master_port > 65535) {
      throw Error("data parallel: MASTER_PORT must be a port number in 1..65535");
    }
  }
  return env;
}

struct DataParallel::Backend {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> group;
  std::string name;
};

namespace {

c10::intrusive_ptr<c10d::Store> make_store(const LaunchEnvironment& env, std::chrono::milliseconds timeout) {
  if (!env.file_store.empty()) {
    auto store = c10::make_intrusive<c10d::FileStore>(env.file_store, env.world_size);
    store->setTimeout(timeout);
    return store;
  }
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  // Under torchrun its agent already hosts the store on MASTER_PORT and says so: every rank is a client.
  const bool agent_store = string_variable("TORCHELASTIC_USE_AGENT_STORE") == "True";
  options.isServer = env.rank == 0 && !agent_store;
  options.numWorkers = env.world_size;
  options.waitWorkers = true;
  options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
}

#if defined(ORBITLAW_DISTRIBUTED_GLOO)
std::shared_ptr<::gloo::transport::Device> gloo_device(const LaunchEnvironment& env) {
  const std::string interface = string_variable("GLOO_SOCKET_IFNAME");
  if (!interface.empty()) return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  // A one-machine job (file store or loopback master) talks over loopback; otherwise Gloo picks the address
  // its host name resolves to, as torchrun's default does.
  if (!env.file_store.empty() || is_loopback(env.master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

std::vector<torch::Tensor> parameters_and_buffers(torch::nn::Module& module) {
  std::vector<torch::Tensor> all = module.parameters(true);
  for (const torch::Tensor& b : module.buffers(true)) all.push_back(b);
  return all;
}

// Tensors grouped by dtype so that each group is one flat buffer.
std::map<c10::ScalarType, std::vector<torch::Tensor>> by_dtype(const std::vector<torch::Tensor>& tensors) {
  std::map<c10::ScalarType, std::vector<torch::Tensor>> groups;
  for (const torch::Tensor& t : tensors) groups[t.scalar_type()].push_back(t);
  return groups;
}

torch::Tensor flatten(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> flat;
  flat.reserve(tensors.size());
  for (const torch::Tensor& t : tensors) flat.push_back(t.detach().reshape({-1}));
  return torch::cat(flat);
}

void unflatten_into(const torch::Tensor& flat, const std::vector<torch::Tensor>& tensors) {
  int64_t offset = 0;
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& t : tensors) {
    const int64_t n = t.numel();
    t.copy_(flat.slice(0, offset, offset + n).view_as(t));
    offset += n;
  }
}

void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw Error(std::string("data parallel: ") + what + " failed: " + e.what());
  }
}

}  // namespace

DataParallel::DataParallel(const LaunchEnvironment& env, torch::Device device,
                           std::chrono::milliseconds timeout)
    : rank_(env.rank), world_size_(env.world_size), device_(device), backend_(std::make_unique<Backend>()) {
  backend_->name = "none";
  if (!env.distributed()) return;
  try {
    backend_->store = make_store(env, timeout);
    if (device.is_cuda()) {
#if defined(ORBITLAW_DISTRIBUTED_NCCL)
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      backend_->group =
          c10::make_intrusive<c10d::ProcessGroupNCCL>(backend_->store, rank_, world_size_, options);
      backend_->name = "nccl";
#else
      throw Error("data parallel: CUDA device given but this build has no NCCL backend");
#endif
    } else {
#if defined(ORBITLAW_DISTRIBUTED_GLOO)
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(gloo_device(env));
      backend_->group =
          c10::make_intrusive<c10d::ProcessGroupGloo>(backend_->store, rank_, world_size_, options);
      backend_->name = "gloo";
#else
      throw Error(
          "data parallel: this build has no Gloo backend for CPU processes (install libgloo-dev and "
          "reconfigure)");
#endif
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("data parallel: rendezvous of rank " + std::to_string(rank_) + " of " +
                std::to_string(world_size_) + " failed: " + e.what());
  }
}

DataParallel::~DataParallel() = default;

std::string DataParallel::backend_name() const { return backend_->name; }

void DataParallel::broadcast_parameters(torch::nn::Module& module) {
  if (world_size_ == 1) return;
  for (auto& [dtype, tensors] : by_dtype(parameters_and_buffers(module))) {
    std::vector<torch::Tensor> flat{flatten(tensors).to(device_)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    wait(backend_->group->broadcast(flat, options), "broadcast of the parameters");
    unflatten_into(flat[0], tensors);
  }
}

void DataParallel::average_gradients(torch::nn::Module& module) {
  if (world_size_ == 1) return;
  std::vector<torch::Tensor> grads;
  for (torch::Tensor& p : module.parameters(true)) {
    if (!p.requires_grad()) continue;
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  for (auto& [dtype, tensors] : by_dtype(grads)) {
    std::vector<torch::Tensor> flat{flatten(tensors).to(device_)};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    wait(backend_->group->allreduce(flat, options), "all-reduce of the gradients");
    flat[0].div_(static_cast<double>(world_size_));
    unflatten_into(flat[0], tensors);
  }
}

double DataParallel::average(double value) {
  if (world_size_ == 1) return value;
  std::vector<torch::Tensor> t{
      torch::full({1}, value, torch::TensorOptions().dtype(torch::kFloat64).device(device_))};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  wait(backend_->group->allreduce(t, options), "all-reduce of a scalar");
  return t[0].item<double>() / world_size_;
}

bool DataParallel::any(bool flag) {
  if (world_size_ == 1) return flag;
  std::vector<torch::Tensor> t{
      torch::full({1}, flag ? 1 : 0, torch::TensorOptions().dtype(torch::kInt32).device(device_))};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  wait(backend_->group->allreduce(t, options), "all-reduce of a flag");
  return t[0].item<int>() != 0;
}

void DataParallel::barrier() {
  if (world_size_ == 1) return;
  wait(backend_->group->barrier(), "barrier");
}

}  // namespace orbitlaw::model::distributed
