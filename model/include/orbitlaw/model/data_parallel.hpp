#pragma once
// Data-parallel training through LibTorch's distributed backend (c10d): Gloo between CPU processes, NCCL
// between GPUs. Launched like torchrun: every process reads its rank and the world size from the environment.
//
// What a training loop calls (every rank runs the same loop on its own shard of each global batch):
//   auto env = LaunchEnvironment::from_environment();
//   DataParallel dp(env, device);
//   dp.broadcast_parameters(model);          // once, after building the model: everyone starts from rank 0
//   for each step:
//     loss = model(local_batch) ...; loss.backward();
//     dp.average_gradients(model);           // after backward, before clipping and optimizer.step()
//     optimizer.step();
//     double logged = dp.average(loss.item<double>());   // the global-batch loss (equal shard sizes)
//     if (dp.is_checkpoint_writer()) write_checkpoint(...);  // rank 0 only
// With equal shard sizes and a mean loss, averaged gradients equal the gradient of the mean over the global
// batch, so N ranks with batch b each train like one process with batch N b.
//
// Include only from translation units that may include LibTorch (so: no fmt or spdlog there).
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>

namespace orbitlaw::model::distributed {

// Where this process sits in the job, from the variables torchrun sets:
//   RANK, WORLD_SIZE (both absent: a single process), MASTER_ADDR and MASTER_PORT (rank 0 hosts a TCPStore),
//   or ORBITLAW_DIST_FILE_STORE=<path> (a FileStore on a shared file system; takes precedence over TCP).
//   LOCAL_RANK (default: RANK) picks this process's GPU; LOCAL_WORLD_SIZE (default: WORLD_SIZE) is the
//   number of ranks on this machine, which share its CPU cores.
//   GLOO_SOCKET_IFNAME, when set, names the network interface Gloo uses. Under torchrun
//   (TORCHELASTIC_USE_AGENT_STORE=True) its agent hosts the TCPStore and every rank connects as a client.
struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr;
  int master_port = 0;
  std::string file_store;

  // Throws orbitlaw::Error naming the variable for malformed or inconsistent values.
  static LaunchEnvironment from_environment();
  bool distributed() const { return world_size > 1; }
};

class DataParallel {
 public:
  // Connects to the other ranks: Gloo when device is the CPU, NCCL when it is a CUDA device (one GPU per
  // rank). A single-process environment (world size 1) communicates with nobody and every call is a no-op.
  // Throws orbitlaw::Error when the rendezvous fails or times out, or when the build lacks the backend.
  DataParallel(const LaunchEnvironment& env, torch::Device device,
               std::chrono::milliseconds timeout = std::chrono::minutes(5));
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // Exactly one process writes checkpoints and run records: rank 0.
  bool is_checkpoint_writer() const { return rank_ == 0; }
  // The backend's name: "gloo", "nccl" or "none" (single process).
  std::string backend_name() const;

  // Copies rank 0's parameters and buffers into every rank's module (modules must have the same structure).
  void broadcast_parameters(torch::nn::Module& module);
  // Replaces every parameter's gradient by its mean over the ranks (one flat all-reduce per dtype). A
  // parameter without a gradient on this rank contributes zeros and receives the mean.
  void average_gradients(torch::nn::Module& module);
  // The mean of a scalar over the ranks (e.g. the step's loss for logging).
  double average(double value);
  // True on every rank when `flag` is true on any rank: decisions such as a wall-clock stop must be taken
  // by all ranks together, or the ones that carry on wait forever at their next collective.
  bool any(bool flag);
  void barrier();

 private:
  struct Backend;
  int rank_ = 0;
  int world_size_ = 1;
  torch::Device device_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace orbitlaw::model::distributed
