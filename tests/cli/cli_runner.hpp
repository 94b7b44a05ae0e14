#pragma once
// Runs the orbitlaw binary as a user would and captures its exit status and combined output.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace orbitlaw::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;
  int lines() const {
    int n = 0;
    for (char c : output) n += c == '\n';
    return n;
  }
};

inline CommandResult run_orbitlaw(const std::string& args) {
  std::string command = std::string(ORBITLAW_BINARY) + " " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// An empty folder `<temp>/<name>_<pid>` for one test binary's files.
inline std::filesystem::path fresh_scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace orbitlaw::test
