// Data parallel through c10d/Gloo: this test binary starts itself twice as rank 0 and rank 1 (FileStore in a
// temporary folder, or a TCPStore on loopback); the two train a tiny float64 model for a few Adam steps on
// halves of each batch and must reproduce, to rounding, the losses and parameters of one process trained on
// the whole batch.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/model/data_parallel.hpp"

extern char** environ;

namespace orbitlaw::model::distributed {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 6;
constexpr int kGlobalBatch = 16;
constexpr const char* kWorkerOutput = "ORBITLAW_DP_TEST_OUT";

struct Trajectory {
  std::vector<double> losses;   // the global-batch loss of every step
  std::vector<double> params;   // all parameters after the last step
  std::vector<double> initial;  // all parameters before the first step (after the broadcast)
  bool writer = false;
};

// rank/world: which shard of every global batch this process trains on; dp == nullptr: one process alone.
Trajectory train(int rank, int world, DataParallel* dp, const fs::path& checkpoint) {
  torch::manual_seed(1234);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  const torch::Tensor x = torch::randn({kSteps, kGlobalBatch, 4}, f64);
  const torch::Tensor y = torch::sin(x.sum(-1, true));
  torch::manual_seed(100 + rank);  // ranks start from different weights: the broadcast must fix that
  torch::nn::Sequential model(torch::nn::Linear(4, 8), torch::nn::Functional(torch::tanh),
                              torch::nn::Linear(8, 1));
  model->to(torch::kFloat64);
  if (dp != nullptr) dp->broadcast_parameters(*model);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.05));
  Trajectory result;
  auto flat_parameters = [&] {
    std::vector<double> all;
    for (const torch::Tensor& p : model->parameters()) {
      const torch::Tensor flat = p.detach().reshape({-1}).contiguous();
      all.insert(all.end(), flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
    }
    return all;
  };
  result.initial = flat_parameters();
  for (int step = 0; step < kSteps; ++step) {
    const torch::Tensor xs = x[step].chunk(world)[rank];
    const torch::Tensor ys = y[step].chunk(world)[rank];
    const torch::Tensor loss = torch::mse_loss(model->forward(xs), ys);
    optimizer.zero_grad();
    loss.backward();
    if (dp != nullptr) dp->average_gradients(*model);
    optimizer.step();
    result.losses.push_back(dp != nullptr ? dp->average(loss.item<double>()) : loss.item<double>());
  }
  result.params = flat_parameters();
  if (dp != nullptr && dp->is_checkpoint_writer()) {
    torch::save(model, checkpoint.string());
    result.writer = true;
  }
  return result;
}

void write_trajectory(const Trajectory& t, const fs::path& path) {
  std::ofstream out(path);
  out.precision(17);
  out << t.writer << "\n" << t.losses.size() << "\n";
  for (double v : t.losses) out << v << "\n";
  out << t.params.size() << "\n";
  for (double v : t.params) out << v << "\n";
}

Trajectory read_trajectory(const fs::path& path) {
  std::ifstream in(path);
  Trajectory t;
  size_t n = 0;
  in >> t.writer >> n;
  t.losses.resize(n);
  for (double& v : t.losses) in >> v;
  in >> n;
  t.params.resize(n);
  for (double& v : t.params) in >> v;
  if (!in) throw std::runtime_error("unreadable worker output " + path.string());
  return t;
}

// The worker half of the test: runs only inside a process started by RunTwoRanks below.
TEST(DataParallelWorker, TrainTinyModel) {
  const char* out = std::getenv(kWorkerOutput);
  if (out == nullptr) GTEST_SKIP() << "worker process only (started by the two-rank tests)";
  torch::set_num_threads(1);
  const LaunchEnvironment env = LaunchEnvironment::from_environment();
  DataParallel dp(env, torch::kCPU, std::chrono::seconds(60));
  ASSERT_EQ(dp.backend_name(), "gloo");
  const fs::path output(out);
  write_trajectory(train(env.rank, env.world_size, &dp, output.parent_path() / "checkpoint.pt"), output);
  dp.barrier();
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "orbitlaw-dp-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Environment of a worker: ours without any launcher variables, plus `extra`.
std::vector<std::string> worker_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    bool ours = false;
    for (const char* name : {"RANK=", "WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT=",
                             "ORBITLAW_DIST_FILE_STORE=", "ORBITLAW_DP_TEST_OUT=", "OMP_NUM_THREADS="}) {
      ours = ours || entry.rfind(name, 0) == 0;
    }
    if (!ours) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  env.push_back("OMP_NUM_THREADS=1");
  return env;
}

pid_t spawn_worker(const std::vector<std::string>& env_strings, const fs::path& log) {
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=DataParallelWorker.TrainTinyModel";
  std::vector<char*> argv{exe.data(), filter.data(), nullptr};
  std::vector<std::string> env_copy = env_strings;
  std::vector<char*> envp;
  for (std::string& s : env_copy) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  return pid;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits for both workers (at most two minutes; then they are killed). Returns their exit statuses.
std::vector<int> wait_for(const std::vector<pid_t>& pids) {
  std::vector<int> status(pids.size(), -1);
  std::vector<bool> done(pids.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  size_t remaining = pids.size();
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int st = 0;
      if (!done[i] && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        done[i] = true;
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        --remaining;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (done[i]) continue;
    kill(pids[i], SIGKILL);
    waitpid(pids[i], nullptr, 0);
  }
  return status;
}

// Two ranks with the given rendezvous variables against one process with the whole batch.
void run_two_ranks(const TempDir& dir, const std::vector<std::string>& rendezvous) {
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> extra = rendezvous;
    extra.push_back("RANK=" + std::to_string(rank));
    extra.push_back("WORLD_SIZE=2");
    extra.push_back(std::string(kWorkerOutput) + "=" +
                    (dir.path() / ("rank" + std::to_string(rank) + ".txt")).string());
    pids.push_back(
        spawn_worker(worker_environment(extra), dir.path() / ("rank" + std::to_string(rank) + ".log")));
  }
  const std::vector<int> status = wait_for(pids);
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_EQ(status[rank], 0) << "rank " << rank << " failed:\n"
                               << slurp(dir.path() / ("rank" + std::to_string(rank) + ".log"));
  }
  const Trajectory r0 = read_trajectory(dir.path() / "rank0.txt");
  const Trajectory r1 = read_trajectory(dir.path() / "rank1.txt");
  const Trajectory single = train(0, 1, nullptr, {});

  // Both ranks hold bitwise the same model: the all-reduced mean is the same number on both.
  EXPECT_EQ(r0.params, r1.params);
  EXPECT_EQ(r0.losses, r1.losses);
  // Against one process with the doubled batch: equal up to float64 rounding of the split sums.
  ASSERT_EQ(r0.losses.size(), single.losses.size());
  ASSERT_EQ(r0.params.size(), single.params.size());
  for (size_t i = 0; i < single.losses.size(); ++i) {
    EXPECT_NEAR(r0.losses[i], single.losses[i], 1e-12 * std::abs(single.losses[i])) << "step " << i;
  }
  for (size_t i = 0; i < single.params.size(); ++i) {
    EXPECT_NEAR(r0.params[i], single.params[i], 1e-10) << "parameter " << i;
  }
  // The comparison must be able to fail: training moved the parameters far beyond the tolerance.
  double moved = 0;
  for (size_t i = 0; i < single.params.size(); ++i) {
    moved = std::max(moved, std::abs(single.params[i] - single.initial[i]));
  }
  EXPECT_GT(moved, 0.1);
  // Exactly one checkpoint writer, rank 0.
  EXPECT_TRUE(r0.writer);
  EXPECT_FALSE(r1.writer);
  EXPECT_TRUE(fs::exists(dir.path() / "checkpoint.pt"));
}

TEST(DataParallel, TwoGlooRanksWithFileStoreMatchOneProcessWithDoubledBatch) {
  TempDir dir;
  run_two_ranks(dir, {"ORBITLAW_DIST_FILE_STORE=" + (dir.path() / "store").string()});
}

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 29500;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(DataParallel, TwoGlooRanksWithTcpStoreMatchOneProcessWithDoubledBatch) {
  TempDir dir;
  run_two_ranks(dir, {"MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(free_loopback_port())});
}

// Each case sets the launcher variables, parses, and restores the environment.
class EnvironmentGuard {
 public:
  explicit EnvironmentGuard(std::vector<std::pair<std::string, std::string>> vars) {
    for (const char* name :
         {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "ORBITLAW_DIST_FILE_STORE"}) {
      if (const char* v = std::getenv(name)) saved_.emplace_back(name, v);
      unsetenv(name);
    }
    for (const auto& [k, v] : vars) setenv(k.c_str(), v.c_str(), 1);
  }
  ~EnvironmentGuard() {
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "ORBITLAW_DIST_FILE_STORE"})
      unsetenv(name);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(LaunchEnvironment, ReadsTorchrunVariables) {
  {
    EnvironmentGuard g({});
    const auto env = LaunchEnvironment::from_environment();
    EXPECT_EQ(env.world_size, 1);
    EXPECT_FALSE(env.distributed());
    DataParallel dp(env, torch::kCPU);  // single process: no rendezvous, no-ops
    EXPECT_EQ(dp.backend_name(), "none");
    EXPECT_EQ(dp.average(2.5), 2.5);
  }
  {
    EnvironmentGuard g(
        {{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}});
    const auto env = LaunchEnvironment::from_environment();
    EXPECT_EQ(env.rank, 3);
    EXPECT_EQ(env.world_size, 8);
    EXPECT_EQ(env.master_addr, "node0");
    EXPECT_EQ(env.master_port, 29500);
  }
}

TEST(LaunchEnvironment, BadVariablesAreClearErrors) {
  auto fails = [](std::vector<std::pair<std::string, std::string>> vars, const std::string& needle) {
    EnvironmentGuard g(std::move(vars));
    try {
      LaunchEnvironment::from_environment();
    } catch (const Error& e) {
      return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(
      fails({{"RANK", "abc"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}, "RANK"));
  EXPECT_TRUE(
      fails({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}, "below"));
  EXPECT_TRUE(fails({{"RANK", "0"}}, "together"));
  EXPECT_TRUE(fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "MASTER_ADDR"));
  EXPECT_TRUE(
      fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}, "port"));
}

}  // namespace
}  // namespace orbitlaw::model::distributed
