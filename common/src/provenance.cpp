#include "orbitlaw/common/provenance.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/build_info.hpp"

namespace orbitlaw {

namespace {
std::string& stored_command_line() {
  static std::string line;
  return line;
}

Json& stored_compute() {
  static Json compute = nullptr;
  return compute;
}

std::string utc_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += argv[i];
  }
  stored_command_line() = line;
}

const std::string& command_line() { return stored_command_line(); }

void record_compute(const Json& compute) { stored_compute() = compute; }

Json provenance_record(const std::string& stage, const Json& resolved_config, std::uint64_t seed,
                       const Json& versions) {
  Json all_versions = versions.is_object() ? versions : Json::object();
  all_versions["orbitlaw"] = build_version();
  all_versions["compiler"] = build_compiler();
  Json record{{"stage", stage},
              {"config", resolved_config},
              {"seed", seed},
              {"git_revision", build_git_revision()},
              {"build_type", build_type()},
              {"versions", all_versions},
              {"command_line", command_line()},
              {"host", host_name()},
              {"time_utc", utc_now()}};
  if (!stored_compute().is_null()) record["compute"] = stored_compute();
  return record;
}

std::string write_provenance(const std::string& dir, const std::string& stage, const Json& resolved_config,
                             std::uint64_t seed, const Json& versions) {
  std::filesystem::create_directories(dir);
  std::string path = (std::filesystem::path(dir) / (stage + ".provenance.json")).string();
  write_text_atomic(path, provenance_record(stage, resolved_config, seed, versions).dump(2) + "\n");
  return path;
}

}  // namespace orbitlaw
