// The crash guard: a probe killed by a signal in the forked child is a one-line error naming the file and
// the signal; a probe that returns or throws lets the caller go on; the parent's state is untouched by the
// child; a guard inside the child runs nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "orbitlaw/common/crash_guard.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw {
namespace {

std::string error_of(const std::function<void()>& probe) {
  try {
    crash_guard("damaged.h5", "libhdf5", probe);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CrashGuard, AProbeKilledByASignalIsAOneLineError) {
  EXPECT_EQ(error_of([] { std::raise(SIGSEGV); }),
            "'damaged.h5': libhdf5 crashed reading it (signal 11); the file is damaged");
  EXPECT_EQ(error_of([] { std::raise(SIGBUS); }),
            "'damaged.h5': libhdf5 crashed reading it (signal 7); the file is damaged");
}

TEST(CrashGuard, AProbeThatReturnsOrThrowsLetsTheReaderGoOn) {
  EXPECT_EQ(error_of([] {}), "(no error)");
  EXPECT_EQ(error_of([] { throw Error("the reader's own error, met again by the parent"); }), "(no error)");
}

TEST(CrashGuard, TheProbeRunsInAChildAndAGuardThereRunsNothing) {
  int touched = 0;
  const std::string marker = ::testing::TempDir() + "crash_guard_" + std::to_string(::getpid());
  EXPECT_EQ(error_of([&] {
              touched = 1;
              // Nested, in the child. Had it forked, its child's crash would be an Error here (the outer
              // child exits 1: no error above); had it run the probe inline, the marker below would not
              // be written.
              crash_guard("inner.h5", "libhdf5", [] { std::raise(SIGSEGV); });
              std::ofstream(marker) << "ran";
              std::raise(SIGSEGV);
            }),
            "'damaged.h5': libhdf5 crashed reading it (signal 11); the file is damaged");
  EXPECT_EQ(touched, 0);  // the probe ran in another process
  std::string text;
  std::ifstream(marker) >> text;
  EXPECT_EQ(text, "ran");
  std::remove(marker.c_str());
}

}  // namespace
}  // namespace orbitlaw
