// kill -9 at random points of simulate, train and probe, then a rerun (--resume where the stage resumes): the
// final outputs equal an uninterrupted run's, bit for bit in every number the stage computes (timings and
// provenance aside); no file looks complete while the stage is not; compare refuses a probe folder whose
// stage did not complete; stale partial files of the killed process are gone after the rerun.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "cli_runner.hpp"
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "orbitlaw/simulator/dataset.hpp"

using orbitlaw::Json;
using orbitlaw::test::run_orbitlaw;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

fs::path scratch() {
  static const fs::path dir = orbitlaw::test::fresh_scratch_dir("orbitlaw_kill");
  return dir;
}

std::string path_of(const std::string& name) { return (scratch() / name).string(); }

// Seconds an uninterrupted `orbitlaw args` takes (it must succeed).
double timed_run(const std::string& args) {
  const auto start = Clock::now();
  const auto r = run_orbitlaw(args);
  EXPECT_EQ(r.exit_code, 0) << "orbitlaw " << args << "\n" << r.output;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Starts `orbitlaw args`; once `ready()` holds, waits `seconds` more and sends SIGKILL. Returns true when the
// process was killed, false when it finished first.
bool run_and_kill(const std::string& args, const std::function<bool()>& ready, double seconds) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    const std::string command = std::string("exec ") + ORBITLAW_BINARY + " " + args;
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  auto finished = [&] { return waitpid(pid, &status, WNOHANG) == pid; };
  while (!ready()) {
    if (finished()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (finished()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return true;
}

// A predicate: some file in `dir` has a name starting with `prefix` (a writer's temporary file, say).
std::function<bool()> file_starting_with(const fs::path& dir, const std::string& prefix) {
  return [dir, prefix] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
    return false;
  };
}

std::function<bool()> file_exists(const std::string& path) {
  return [path] { return fs::exists(path); };
}

std::vector<std::string> partial_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".partial-") != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// A JSON document without its wall-clock fields: what two runs of a deterministic stage must share.
Json without_timings(Json j) {
  if (j.is_object()) {
    for (const char* key : {"seconds", "elapsed_seconds", "time_limit_seconds_per_galaxy"}) j.erase(key);
    for (auto& [key, value] : j.items()) value = without_timings(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_timings(value);
  }
  return j;
}

// Random kill points, reproducible: fractions of an uninterrupted run's duration.
std::vector<double> kill_fractions(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 0.9);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(u(rng));
  return out;
}

}  // namespace

TEST(KillResume, SimulateRerunWritesTheUninterruptedDataset) {
  const std::string args =
      "simulate --preset two-body --systems 3000 --seed 4 -j 1 -q --set sequence_rows=201 --out ";
  const double seconds = timed_run(args + path_of("sim_reference.h5"));
  int mid_way = 0;
  for (double f : kill_fractions(1, 3)) {
    const std::string out = path_of("sim_killed.h5");
    fs::remove(out);
    // Killed while its temporary file is being written, at a random point of the run.
    run_and_kill(args + out, file_starting_with(scratch(), "sim_killed.h5.partial-"), 0.6 * f * seconds);
    // Until the rename that ends the run, the output does not exist under its name.
    mid_way += !fs::exists(out);
    ASSERT_EQ(run_orbitlaw(args + out).exit_code, 0);
    EXPECT_TRUE(partial_files(scratch()).empty()) << partial_files(scratch()).front();
    const orbitlaw::simulator::DatasetReader a(path_of("sim_reference.h5")), b(out);
    ASSERT_EQ(a.num_systems(), b.num_systems());
    for (std::int64_t k = 0; k < a.num_systems(); ++k) {
      const auto x = a.read_system(k), y = b.read_system(k);
      ASSERT_TRUE(x.position == y.position && x.velocity == y.velocity && x.mass == y.mass) << "system " << k;
    }
  }
  std::printf("[ kill -9 ] simulate: %d of 3 runs killed before their output was complete (%.2f s whole)\n",
              mid_way, seconds);
  EXPECT_GE(mid_way, 1);
}

TEST(KillResume, TrainResumedFromItsCheckpointEndsWhereTheUninterruptedRunEnds) {
  const std::string data = path_of("train_data.h5");
  ASSERT_EQ(
      run_orbitlaw("simulate --preset two-body --systems 60 --seed 2 -j 2 -q --set sequence_rows=61 --out " +
                   data)
          .exit_code,
      0);
  const std::string settings =
      " --preset tiny --set model.n_layer=1 --set model.n_embd=32 --set model.block_size=32"
      " --set train.max_steps=150 --set train.batch_size=4 --set train.eval_interval=20 --set "
      "train.eval_batches=2"
      " --set train.checkpoint_interval=5 --set train.threads=1 --set train.device=cpu --data " +
      data;
  const double seconds = timed_run("train" + settings + " --out " + path_of("train_reference"));
  const std::string eval = " --set sequences=8 --data " + data;
  ASSERT_EQ(run_orbitlaw("eval --checkpoint " + path_of("train_reference/checkpoint.pt") + eval + " --out " +
                         path_of("eval_reference.json"))
                .exit_code,
            0);
  const Json reference = read_json(path_of("eval_reference.json"));
  int killed = 0;
  for (double f : kill_fractions(2, 3)) {
    const std::string out = path_of("train_killed");
    fs::remove_all(out);
    // Killed once the first checkpoint exists, at a random point of the rest of the run.
    if (run_and_kill("train" + settings + " --out " + out, file_exists(out + "/checkpoint.pt"),
                     0.6 * f * seconds))
      ++killed;
    ASSERT_EQ(run_orbitlaw("train" + settings + " --out " + out + " --resume").exit_code, 0);
    ASSERT_EQ(
        run_orbitlaw("eval --checkpoint " + out + "/checkpoint.pt" + eval + " --out " + path_of("eval.json"))
            .exit_code,
        0);
    const Json resumed = read_json(path_of("eval.json"));
    EXPECT_EQ(resumed["loss"], reference["loss"]);
    EXPECT_EQ(resumed["next_token"], reference["next_token"]);
    EXPECT_EQ(resumed["trajectory_error"], reference["trajectory_error"]);
    EXPECT_TRUE(partial_files(out).empty());
  }
  std::printf("[ kill -9 ] train: %d of 3 runs killed mid-way (%.2f s uninterrupted)\n", killed, seconds);
  EXPECT_GE(killed, 1);
}

namespace {

// Probe inputs: 60 two-body systems of 30 steps from `seed`, and (with `checkpoint`) a tiny model trained on
// them for 2 steps into that folder.
void two_body_probe_inputs(const std::string& data, std::uint64_t seed, const std::string& checkpoint = "") {
  ASSERT_EQ(run_orbitlaw("simulate --preset two-body --systems 60 -j 2 -q --set sequence_rows=61 --seed " +
                         std::to_string(seed) + " --out " + data)
                .exit_code,
            0);
  if (checkpoint.empty()) return;
  ASSERT_EQ(
      run_orbitlaw("train --preset tiny --set model.n_layer=1 --set model.n_embd=32 --set model.block_size=40"
                   " --set train.max_steps=2 --set train.threads=1 --set train.device=cpu --data " +
                   data + " --out " + checkpoint)
          .exit_code,
      0);
}

}  // namespace

TEST(KillResume, ProbeResumedGivesTheUninterruptedResultsAndCompareRefusesTheKilledFolder) {
  const std::string data = path_of("probe_data.h5");
  const std::string checkpoint = path_of("probe_model");
  two_body_probe_inputs(data, 11, checkpoint);
  const std::string args =
      "probe --checkpoint " + checkpoint + "/checkpoint.pt --data " + data +
      " --set threads=1 --set device=cpu --set finetune.steps=60 --set finetune.batch_size=4"
      " --set finetune.eval_interval=10 --set observable_bin_width=0 --set "
      "'probes=[\"finetune\",\"knn\",\"newton\"]'"
      " --set sr.galaxies=2 --set sr.galaxy_rows=20 --set sr.nearest_rows=30 --set sr.iterations=60"
      " --set sr.restarts=1 --set sr.populations=2 --set sr.population_size=12 --set sr.threads=1 --out ";
  const std::string reference = path_of("probe_reference");
  const double seconds = timed_run(args + reference);
  const auto expected = orbitlaw::probe::read_predictions(reference + "/predictions.h5");
  const Json expected_laws = without_timings(read_json(reference + "/sr.json"));
  int mid_way = 0, reused = 0;
  for (double f : kill_fractions(3, 3)) {
    const std::string out = path_of("probe_killed");
    fs::remove_all(out);
    // Killed once the stage has begun (its progress record exists), at a random point of the rest.
    run_and_kill(args + out, file_exists(out + "/probe.progress.json"), 0.8 * f * seconds);
    // compare accepts the folder exactly when the stage wrote its completion record.
    const bool complete = fs::exists(out + "/probe.complete.json");
    mid_way += !complete;
    const auto checked = run_orbitlaw("compare " + out + " --out " + path_of("cmp/"));
    EXPECT_EQ(checked.exit_code, complete ? 0 : 1) << checked.output;
    if (!complete) {
      EXPECT_NE(checked.output.find("did not complete"), std::string::npos) << checked.output;
    }
    const auto resumed = run_orbitlaw(args + out + " --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    reused += resumed.output.find("resumed") != std::string::npos;
    const auto got = orbitlaw::probe::read_predictions(out + "/predictions.h5");
    ASSERT_EQ(got.probe_names(), expected.probe_names());
    for (const auto& name : expected.probe_names())
      EXPECT_TRUE(got.prediction(name) == expected.prediction(name)) << name << " differs after the resume";
    EXPECT_EQ(without_timings(read_json(out + "/sr.json")), expected_laws);
    EXPECT_FALSE(fs::exists(out + "/probe.progress.json"));
    EXPECT_EQ(run_orbitlaw("compare " + out + " --out " + path_of("cmp/")).exit_code, 0);
  }
  std::printf(
      "[ kill -9 ] probe: %d of 3 runs killed before the stage completed, %d resumes reused finished parts "
      "(%.2f s whole)\n",
      mid_way, reused, seconds);
  EXPECT_GE(mid_way, 1);
}

// A killed probe resumed onto data rewritten in place at the same size: the stale predictions are not reused
// (the resume fingerprint holds the data's checksum, not its name and size).
TEST(KillResume, ProbeResumeRefusesDataRewrittenAtTheSameSize) {
  const std::string data = path_of("stale_data.h5"), other = path_of("stale_other.h5");
  const std::string checkpoint = path_of("stale_model");
  two_body_probe_inputs(data, 11, checkpoint);
  two_body_probe_inputs(other, 12);
  // A law search long enough that the kill lands in it, after the predictions were written.
  const std::string out = path_of("stale_probe");
  const std::string args = "probe --checkpoint " + checkpoint + "/checkpoint.pt --data " + data +
                           " --set threads=1 --set device=cpu --set observable_bin_width=0"
                           " --set 'probes=[\"knn\"]' --set sr.galaxies=2 --set sr.galaxy_rows=20"
                           " --set sr.iterations=100000 --set sr.restarts=1 --set sr.threads=1 --out " +
                           out;
  ASSERT_TRUE(run_and_kill(args, file_exists(out + "/predictions.h5"), 0.3)) << "the probe finished first";
  ASSERT_TRUE(fs::exists(out + "/probe.progress.json"));
  // Other systems in the same file, padded to its size (HDF5 reads a file longer than its end of data).
  const auto size = fs::file_size(data);
  ASSERT_LE(fs::file_size(other), size);
  fs::resize_file(other, size);
  fs::rename(other, data);
  const auto resumed = run_orbitlaw(args + " --resume");
  EXPECT_EQ(resumed.exit_code, 1) << resumed.output;
  EXPECT_NE(resumed.output.find("cannot resume: the interrupted run had another data"), std::string::npos)
      << resumed.output;
}
