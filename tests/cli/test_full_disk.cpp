// A full disk under each kind of writer: simulate (an HDF5 dataset), train (the checkpoint), eval (a JSON
// file) and probe (its own HDF5 writer) must end with exit 1 and one line naming the file and the reason, and
// leave no file behind that looks complete (no final file, no temporary one). The disk fills by an LD_PRELOAD
// shim (full_disk_shim.c), which needs no privileges and so runs everywhere; where a tmpfs can be mounted
// (root), simulate is also run into a real filesystem that fills up.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "cli_runner.hpp"

using orbitlaw::test::run_orbitlaw;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  static const fs::path dir = orbitlaw::test::fresh_scratch_dir("orbitlaw_full_disk");
  return dir;
}

// A fresh empty folder under the scratch folder.
std::string folder(const std::string& name) {
  const fs::path dir = scratch() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// The names of the files under `dir`, recursively, relative to it.
std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (!entry.is_directory()) names.insert(fs::relative(entry.path(), dir).string());
  return names;
}

// While alive, the orbitlaw processes the test starts see `dir` fill up after `bytes` bytes (and show no
// progress lines: CI=1).
class FullDisk {
 public:
  FullDisk(const std::string& dir, long bytes) {
    ::setenv("LD_PRELOAD", FULL_DISK_SHIM, 1);
    ::setenv("ORBITLAW_FULL_DISK_DIR", dir.c_str(), 1);
    ::setenv("ORBITLAW_FULL_DISK_AFTER", std::to_string(bytes).c_str(), 1);
  }
  ~FullDisk() {
    for (const char* name : {"LD_PRELOAD", "ORBITLAW_FULL_DISK_DIR", "ORBITLAW_FULL_DISK_AFTER"})
      ::unsetenv(name);
  }
};

// A small clean dataset on the (not full) scratch disk, and a model trained on it for one step.
const std::string& dataset() {
  static const std::string path = [] {
    const std::string p = (scratch() / "data.h5").string();
    const auto r = run_orbitlaw(
        "simulate --preset two-body --systems 40 --seed 5 -j 1 -q --set sequence_rows=61 --out " + p);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return p;
  }();
  return path;
}

const std::string kTrain =
    " --preset tiny --set train.max_steps=1 --set train.threads=1 --set train.device=cpu --set "
    "train.eval_batches=1";

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef __SANITIZE_ADDRESS__
    // GCC's shared ASan runtime aborts a process whose first preloaded library is not itself.
    GTEST_SKIP() << "an ORBITLAW_SANITIZE build: the LD_PRELOAD shim cannot come before the ASan runtime";
#endif
    ::setenv("CI", "1", 1);
  }
  void TearDown() override { ::unsetenv("CI"); }
};

TEST_F(FullDiskTest, SimulateEndsWithOneLineAndNoDataset) {
  const auto dir = folder("simulate");
  orbitlaw::test::CommandResult r;
  {
    FullDisk full(dir, 64 * 1024);  // the two-body dataset of 200 systems takes about 9 MB
    r = run_orbitlaw("simulate --preset two-body --systems 200 --seed 5 -j 1 -q --out " + dir + "/sim.h5");
  }
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      std::regex_match(r.output, std::regex("orbitlaw: error: cannot write '" + dir +
                                            "/sim\\.h5\\.partial-[0-9]+'.*: No space left on device\n")))
      << r.output;
  EXPECT_EQ(files_in(dir), std::set<std::string>{}) << "a dataset, or its temporary file, was left";
}

TEST_F(FullDiskTest, TrainEndsWithOneLineAndNoCheckpoint) {
  const auto dir = folder("train");
  orbitlaw::test::CommandResult r;
  {
    // Room for the provenance record and the metrics line (about 3 KB), not for the checkpoint (about 1 MB).
    FullDisk full(dir, 16 * 1024);
    r = run_orbitlaw("train --data " + dataset() + " --out " + dir + "/run" + kTrain);
  }
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // One error line, after the tokenizer's progress line (printed even off a terminal).
  EXPECT_TRUE(
      std::regex_match(r.output, std::regex("(tokenize [^\n]* done\n)?orbitlaw: error: cannot write '" + dir +
                                            "/run/checkpoint\\.pt': No space left on device\n")))
      << r.output;
  // The run folder holds no checkpoint and no completion record, so nothing takes it for a finished run.
  EXPECT_EQ(files_in(dir),
            (std::set<std::string>{"run/.orbitlaw.lock", "run/metrics.jsonl", "run/train.provenance.json"}));
}

TEST_F(FullDiskTest, EvalEndsWithOneLineAndNoJson) {
  const auto trained = folder("trained");
  const auto t = run_orbitlaw("train --data " + dataset() + " --out " + trained + kTrain);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const auto dir = folder("eval");
  const std::string eval =
      "eval --checkpoint " + trained + "/checkpoint.pt --data " + dataset() + " --out " + dir + "/eval.json";
  // Eval writes its lock file (about 250 bytes), then eval.json (a few KB), then its provenance record; the
  // disk fills first within the lock file, then within eval.json.
  const std::map<long, std::string> full_after{
      {100, "cannot write the lock file '" + dir + "/eval.json.lock': No space left on device"},
      {1024, "cannot write '" + dir + "/eval.json': No space left on device"}};
  for (const auto& [bytes, error] : full_after) {
    orbitlaw::test::CommandResult r;
    {
      FullDisk full(dir, bytes);
      r = run_orbitlaw(eval);
    }
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(r.output, "orbitlaw: error: " + error + "\n");
    EXPECT_EQ(files_in(dir).count("eval.json"), 0u);
    for (const auto& name : files_in(dir)) EXPECT_EQ(name.find(".partial-"), std::string::npos) << name;
  }
}

TEST_F(FullDiskTest, ProbeEndsWithOneLineAndNoPredictions) {
  const auto dir = folder("probe");
  orbitlaw::test::CommandResult r;
  {
    // Room for probe.progress.json, not for predictions.h5 (its own HDF5 writer).
    FullDisk full(dir, 20000);
    r = run_orbitlaw("probe --oracle-only --data " + dataset() + " --out " + dir + "/p");
  }
  EXPECT_EQ(r.exit_code, 1) << r.output;  // not a signal: libhdf5's teardown is skipped after a failed close
  const std::string last = r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1);
  EXPECT_EQ(last, "orbitlaw: error: cannot write predictions file '" + dir +
                      "/p/predictions.h5': No space left on device\n")
      << r.output;
  EXPECT_EQ(r.output.find("orbitlaw: error:"), r.output.size() - last.size()) << "one error line only";
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"p/.orbitlaw.lock", "p/probe.progress.json"}));
}

// simulate --merge writes a virtual dataset (about 38 KB for two shards) that maps the shards: a full disk
// within its lock file or within the merged file (at every size scanned, none of which leaves a file) must
// end in one line and leave neither a merged file nor its temporary file; with room enough it merges.
TEST_F(FullDiskTest, MergeEndsWithOneLineAndNoDataset) {
  const auto shards = folder("shards");
  for (const std::string shard : {"0", "1"}) {
    const auto r = run_orbitlaw(
        "simulate --preset two-body --systems 40 --seed 5 -j 1 -q --set sequence_rows=61 "
        "--shard " +
        shard + "/2 --out " + shards + "/s" + shard + ".h5");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto dir = folder("merge");
  const std::string merge =
      "simulate --merge " + shards + "/s0.h5 " + shards + "/s1.h5 --out " + dir + "/merged.h5";
  for (const long bytes : {100L, 2000L, 8000L, 20000L}) {
    orbitlaw::test::CommandResult r;
    {
      FullDisk full(dir, bytes);
      r = run_orbitlaw(merge);
    }
    EXPECT_EQ(r.exit_code, 1) << "full after " << bytes << " bytes: " << r.output;
    const std::string file = bytes < 1000 ? "the lock file '" + dir + "/merged\\.h5\\.lock'"
                                          : "'" + dir + "/merged\\.h5\\.partial-[0-9]+'";
    EXPECT_TRUE(std::regex_match(
        r.output, std::regex("orbitlaw: error: cannot write " + file + ": No space left on device\n")))
        << "full after " << bytes << " bytes: " << r.output;
    EXPECT_EQ(files_in(dir), std::set<std::string>{}) << "full after " << bytes << " bytes";
  }
  const auto r = run_orbitlaw(merge);  // the same merge with room: the failures above left nothing in its way
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(files_in(dir), std::set<std::string>{"merged.h5"});
}

// The same as SimulateEndsWithOneLineAndNoDataset on a real filesystem that fills up: a tmpfs of 8 MB
// passes simulate's own free-space estimate (7.2 MB) and is too small for the dataset (9.2 MB).
TEST_F(FullDiskTest, SimulateOnARealFullTmpfs) {
  const auto dir = folder("tmpfs");
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=8m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs on " << dir << " (" << std::strerror(errno)
                 << "): it needs root; SimulateEndsWithOneLineAndNoDataset covers the same writer";
  const auto r =
      run_orbitlaw("simulate --preset two-body --systems 200 --seed 5 -j 1 -q --out " + dir + "/sim.h5");
  const auto left = files_in(dir);
  ::umount(dir.c_str());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(
      std::regex_match(r.output, std::regex("orbitlaw: error: cannot write '" + dir +
                                            "/sim\\.h5\\.partial-[0-9]+'.*: No space left on device\n")))
      << r.output;
  EXPECT_EQ(left, std::set<std::string>{});
}

}  // namespace
