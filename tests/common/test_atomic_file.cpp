#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/provenance.hpp"

namespace fs = std::filesystem;

TEST(AtomicOutput, UncommittedOutputLeavesNoFile) {
  auto dir = fs::temp_directory_path() / "orbitlaw_atomic_test";
  fs::remove_all(dir);
  auto final_path = (dir / "out.txt").string();
  {
    orbitlaw::AtomicOutput out(final_path);
    std::ofstream(out.temp_path()) << "half";
    // no commit: an interrupted writer
  }
  EXPECT_FALSE(fs::exists(final_path));
  EXPECT_TRUE(fs::is_empty(dir));
  orbitlaw::write_text_atomic(final_path, "whole");
  std::ifstream in(final_path);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "whole");
  fs::remove_all(dir);
}

// A writer killed with SIGKILL leaves its temporary file; the next writer of the same output removes it,
// but never a live process's file (a concurrent writer) nor another output's.
TEST(AtomicOutput, NextWriterRemovesPartialFilesOfDeadProcessesOnly) {
  auto dir = fs::temp_directory_path() / "orbitlaw_atomic_stale_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // reaped: its pid now names no process
  const auto dead = dir / ("out.h5.partial-" + std::to_string(child));
  const auto live = dir / ("out.h5.partial-" + std::to_string(getppid()));
  const auto other = dir / ("other.h5.partial-" + std::to_string(child));
  for (const auto& p : {dead, live, other}) std::ofstream(p) << "half";
  {
    orbitlaw::AtomicOutput out((dir / "out.h5").string());
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(other));
  }
  fs::remove_all(dir);
}

TEST(Provenance, RecordsConfigSeedRevisionAndVersions) {
  auto dir = fs::temp_directory_path() / "orbitlaw_provenance_test";
  fs::remove_all(dir);
  auto path = orbitlaw::write_provenance(dir.string(), "simulate", orbitlaw::Json{{"n", 3}}, 42,
                                         orbitlaw::Json{{"hdf5", "1.10"}});
  auto record = orbitlaw::load_json_file(path);
  EXPECT_EQ(record["seed"], 42);
  EXPECT_EQ(record["config"]["n"], 3);
  EXPECT_EQ(record["versions"]["hdf5"], "1.10");
  EXPECT_FALSE(record["git_revision"].get<std::string>().empty());
  EXPECT_FALSE(record["versions"]["orbitlaw"].get<std::string>().empty());
  fs::remove_all(dir);
}
