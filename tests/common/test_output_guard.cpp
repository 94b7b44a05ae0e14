// OutputGuard on its own: identity checks, locks and the completion record of a failed run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/common/stage_record.hpp"

namespace fs = std::filesystem;
using orbitlaw::Error;
using orbitlaw::OutputGuard;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("orbitlaw_guard_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The message of the Error `f` throws; empty when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(OutputGuard, AnOutputThatIsAnInputUnderAnotherNameIsRefused) {
  const fs::path dir = fresh("identity");
  std::ofstream(dir / "data.h5") << "data";
  fs::create_hard_link(dir / "data.h5", dir / "second_name.h5");
  fs::create_directories(dir / "probe");
  OutputGuard guard("test");
  guard.input((dir / "data.h5").string());
  guard.input((dir / "probe").string());
  EXPECT_NE(error_of([&] { guard.output_file((dir / "second_name.h5").string()); }).find("is the input"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { guard.output_file((dir / "probe" / "new.json").string()); }).find("inside the input"),
      std::string::npos);
  EXPECT_EQ(error_of([&] { guard.output_file((dir / "other.json").string()); }), "");
}

TEST(OutputGuard, ASecondHolderIsRefusedUntilTheFirstReleases) {
  const fs::path dir = fresh("lock");
  const std::string out = (dir / "result.json").string();
  {
    OutputGuard first("test");
    first.lock_file(out);
    OutputGuard second("test");
    const std::string message = error_of([&] { second.lock_file(out); });
    EXPECT_NE(message.find("in use by another run (pid " + std::to_string(::getpid()) + ":"),
              std::string::npos)
        << message;
  }
  EXPECT_FALSE(fs::exists(out + ".lock"));  // a file's lock goes with its run
  OutputGuard third("test");
  EXPECT_EQ(error_of([&] { third.lock_file(out); }), "");
}

TEST(OutputGuard, AFailedRunRestoresTheRecordOnlyWhenTheOutputsAreUnchanged) {
  for (const bool change_output : {false, true}) {
    const fs::path dir = fresh(change_output ? "changed" : "unchanged");
    std::ofstream(dir / "laws.json") << "{}";
    orbitlaw::complete_stage(dir.string(), "stage", {"laws.json"});
    const std::string record = read_text(dir / "stage.complete.json");
    try {
      OutputGuard guard("test");
      guard.output_folder(dir.string(), {"laws.json"}, true, {"stage.complete.json"});
      orbitlaw::begin_stage(dir.string(), "stage");
      std::ofstream(dir / "stage.progress.json") << "{}";
      if (change_output) std::ofstream(dir / "laws.json") << "{\"new\": 1}";
      throw Error("refused");
    } catch (const Error&) {
    }
    if (change_output) {
      // Its outputs are no longer the ones the record lists: the folder stays incomplete, as the run left it.
      EXPECT_FALSE(fs::exists(dir / "stage.complete.json"));
      EXPECT_TRUE(fs::exists(dir / "stage.progress.json"));
    } else {
      EXPECT_EQ(read_text(dir / "stage.complete.json"), record);
      EXPECT_FALSE(fs::exists(dir / "stage.progress.json"));
    }
  }
}
