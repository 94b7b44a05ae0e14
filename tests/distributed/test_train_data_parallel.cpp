// The real `orbitlaw train` as a data-parallel job: two Gloo ranks started by scripts/launch-dp.sh with batch
// B must log the same per-step train and validation losses as one process with batch 2B (the ranks slice
// the same global batches), rank 0 alone writes the run folder, a resumed two-rank run continues like the
// resumed single process, a wall-clock stop reached by one rank only stops both, ranks started with different
// settings fail together, and an inconsistent launch environment is a one-line error.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "../model/dataset_fixture.hpp"
#include "orbitlaw/common/config.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;

constexpr int kBatch = 4;  // per rank; the single process uses 2 x kBatch
constexpr double kTolerance = 1e-5;

struct Shell {
  int exit_code = -1;
  std::string output;
};

// Runs a /bin/sh command line, capturing stdout and stderr together.
Shell shell(const std::string& command) {
  Shell result;
  FILE* pipe = popen(("(" + command + ") 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

int count_lines_containing(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A port the kernel just handed out on loopback, for MASTER_PORT (every job gets a fresh one).
int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(addr.sin_port);
}

// Every process starts without launcher variables inherited from whoever runs the tests, one thread each,
// and is killed if it hangs (a rank waiting at a collective its peer never reaches).
const std::string kCleanEnv =
    "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT "
    "-u ORBITLAW_DIST_FILE_STORE OMP_NUM_THREADS=1 ";
const std::string kTimeout = "timeout 120 ";

// Preset tiny, shortened: 10 steps with validation at 5 and 10, and a short warm-up so the losses move.
std::string train_args(const fs::path& out, int batch, int steps) {
  return "train --data " + testing::two_body_dataset() + " --out " + out.string() +
         " --preset tiny --set model.block_size=64 --set train.batch_size=" + std::to_string(batch) +
         " --set train.max_steps=" + std::to_string(steps) +
         " --set train.warmup_steps=2 --set train.eval_interval=5 --set train.eval_batches=2"
         " --set train.checkpoint_interval=5 --set train.threads=1 --set train.device=cpu";
}

std::string launch_two_ranks(const std::string& args) {
  return kCleanEnv + "MASTER_PORT=" + std::to_string(free_loopback_port()) + " " + kTimeout + "bash " +
         ORBITLAW_SOURCE_DIR + "/scripts/launch-dp.sh 2 -- " + ORBITLAW_BINARY + " " + args;
}

std::string single_process(const std::string& args) {
  return kCleanEnv + kTimeout + ORBITLAW_BINARY + " " + args;
}

struct Metrics {
  std::map<int, double> train_loss, val_loss;
  int lines = 0;
};

Metrics read_metrics(const fs::path& file) {
  std::ifstream in(file);
  Metrics m;
  std::string line;
  while (std::getline(in, line)) {
    const Json j = Json::parse(line);
    const int step = j.at("step").get<int>();
    EXPECT_EQ(m.train_loss.count(step), 0u) << "step " << step << " logged twice in " << file;
    m.train_loss[step] = j.at("train_loss").get<double>();
    if (j.contains("val_loss")) m.val_loss[step] = j.at("val_loss").get<double>();
    ++m.lines;
  }
  return m;
}

// The largest relative difference between the losses of the same steps; both must log the same steps.
double worst_relative_difference(const std::map<int, double>& a, const std::map<int, double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (const auto& [step, value] : b) {
    EXPECT_TRUE(a.count(step)) << "step " << step << " missing";
    if (!a.count(step)) continue;
    worst = std::max(worst, std::abs(a.at(step) - value) / std::abs(value));
  }
  return worst;
}

Json read_json(const fs::path& file) {
  std::ifstream in(file);
  return Json::parse(in);
}

class TrainDataParallel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("orbitlaw_train_dp_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static inline fs::path dir_;
};

TEST_F(TrainDataParallel, TwoGlooRanksMatchOneProcessWithTheDoubledBatchAndResume) {
  const fs::path dp = dir_ / "two-ranks", single = dir_ / "one-process";
  const Shell ranks = shell(launch_two_ranks(train_args(dp, kBatch, 10)));
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  const Shell alone = shell(single_process(train_args(single, 2 * kBatch, 10)));
  ASSERT_EQ(alone.exit_code, 0) << alone.output;

  const Metrics m2 = read_metrics(dp / "metrics.jsonl"), m1 = read_metrics(single / "metrics.jsonl");
  ASSERT_EQ(m1.train_loss.size(), 10u);
  ASSERT_EQ(m1.val_loss.size(), 2u);  // steps 5 and 10
  const double train_difference = worst_relative_difference(m2.train_loss, m1.train_loss);
  const double val_difference = worst_relative_difference(m2.val_loss, m1.val_loss);
  std::cout << "two ranks vs one process, worst relative difference: train loss " << train_difference
            << ", val loss " << val_difference << "\n";
  EXPECT_LT(train_difference, kTolerance);
  EXPECT_LT(val_difference, kTolerance);
  // The comparison can fail: training moves the loss far more than the tolerance over these steps.
  EXPECT_GT(std::abs(m1.train_loss.at(10) - m1.train_loss.at(1)) / m1.train_loss.at(1), 1000 * kTolerance);

  // Rank 0 alone writes: one line per step, one report line, the run folder holds only its three files and
  // the record of the lock that rank 0 alone held.
  EXPECT_EQ(m2.lines, 10);
  EXPECT_EQ(count_lines_containing(ranks.output, "trained 10 steps"), 1) << ranks.output;
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dp)) files.insert(entry.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{".orbitlaw.lock", "checkpoint.pt", "metrics.jsonl",
                                          "train.provenance.json"}));
  EXPECT_EQ(read_json(dp / ".orbitlaw.lock").at("command"), "train");
  const Json provenance = read_json(dp / "train.provenance.json");
  EXPECT_EQ(provenance.at("data_parallel").at("world_size"), 2);
  EXPECT_EQ(provenance.at("data_parallel").at("backend"), "gloo");
  EXPECT_EQ(provenance.at("data_parallel").at("global_batch_size"), 2 * kBatch);
  EXPECT_EQ(read_json(single / "train.provenance.json").at("data_parallel").at("world_size"), 1);

  // Both resume from their checkpoints to step 14 (every rank reads rank 0's checkpoint) and still agree.
  const Shell ranks_resumed = shell(launch_two_ranks(train_args(dp, kBatch, 14) + " --resume"));
  ASSERT_EQ(ranks_resumed.exit_code, 0) << ranks_resumed.output;
  EXPECT_EQ(count_lines_containing(ranks_resumed.output, "trained 14 steps"), 1) << ranks_resumed.output;
  const Shell alone_resumed = shell(single_process(train_args(single, 2 * kBatch, 14) + " --resume"));
  ASSERT_EQ(alone_resumed.exit_code, 0) << alone_resumed.output;
  const Metrics r2 = read_metrics(dp / "metrics.jsonl"), r1 = read_metrics(single / "metrics.jsonl");
  EXPECT_EQ(r2.lines, 14);
  for (int step = 1; step <= 10; ++step) EXPECT_EQ(r2.train_loss.at(step), m2.train_loss.at(step));
  const double resumed_difference = worst_relative_difference(r2.train_loss, r1.train_loss);
  std::cout << "after resuming to step 14, worst relative train-loss difference " << resumed_difference
            << "\n";
  EXPECT_LT(resumed_difference, kTolerance);
}

// Rank 0 and rank 1 started by hand with their own command lines; the output ends "status S0 S1".
Shell two_ranks_with_own_args(const std::string& rank0_args, const std::string& rank1_args) {
  const std::string env =
      kCleanEnv + "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_loopback_port()) +
      " ";
  const std::string rank0 = env + "RANK=0 " + kTimeout + ORBITLAW_BINARY + " " + rank0_args;
  const std::string rank1 = env + "RANK=1 " + kTimeout + ORBITLAW_BINARY + " " + rank1_args;
  return shell("(" + rank0 + ") & p0=$!; (" + rank1 +
               ") & p1=$!; wait $p0; s0=$?; wait $p1; s1=$?; echo \"status $s0 $s1\"");
}

TEST_F(TrainDataParallel, AWallClockStopReachedByOneRankStopsBoth) {
  // Rank 0's budget runs out after its first step, rank 1's not for an hour: without an agreed decision
  // rank 1 would carry on into a collective rank 0 never joins.
  const fs::path out = dir_ / "budget";
  const Shell both = two_ranks_with_own_args(train_args(out, kBatch, 10) + " --set train.max_seconds=0.001",
                                             train_args(out, kBatch, 10) + " --set train.max_seconds=3600");
  EXPECT_NE(both.output.find("status 0 0"), std::string::npos) << both.output;
  EXPECT_EQ(count_lines_containing(both.output, "(stopped at the time limit)"), 1) << both.output;
  const Metrics m = read_metrics(out / "metrics.jsonl");
  EXPECT_EQ(m.lines, 1);
  EXPECT_EQ(m.val_loss.size(), 1u);  // the stop evaluates, on both ranks together
}

TEST_F(TrainDataParallel, RanksWithDifferentSettingsFailTogether) {
  const fs::path out = dir_ / "mismatch";
  const Shell both = two_ranks_with_own_args(train_args(out, kBatch, 10) + " --set train.lr=0.001",
                                             train_args(out, kBatch, 10));
  EXPECT_NE(both.output.find("status 1 1"), std::string::npos) << both.output;
  EXPECT_EQ(count_lines_containing(both.output, "ranks differ in their training settings"), 2) << both.output;
  EXPECT_FALSE(fs::exists(out / "checkpoint.pt"));
}

TEST_F(TrainDataParallel, InconsistentLaunchEnvironmentIsAOneLineError) {
  struct Case {
    std::string env, expected;
  };
  for (const Case& c :
       {Case{"RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 ",
             "RANK=2 is not below WORLD_SIZE=2"},
        Case{"RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 ", "MASTER_PORT"},
        Case{"WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 ", "RANK and WORLD_SIZE"}}) {
    const fs::path out = dir_ / "bad-env";
    const Shell r = shell(kCleanEnv + c.env + kTimeout + ORBITLAW_BINARY + " " + train_args(out, kBatch, 10));
    EXPECT_NE(r.exit_code, 0) << c.env;
    EXPECT_EQ(count_lines_containing(r.output, "\n"), 1) << c.env << ": " << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.env << ": " << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.env << ": a failed launch left a run folder";
  }
}

}  // namespace
}  // namespace orbitlaw::model
