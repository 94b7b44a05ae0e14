#pragma once
// A small two-body trajectory dataset written once per test program with the simulator's own writer, and
// removed when the program exits.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "orbitlaw/simulator.hpp"

namespace orbitlaw::model::testing {

struct DatasetDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("orbitlaw_model_tests_" + std::to_string(::getpid()));
  ~DatasetDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// 200 two-body systems (1 cadence row + 64 steps x 2 bodies = 129 rows each).
inline const std::string& two_body_dataset() {
  static DatasetDir dir;
  static const std::string path = [] {
    std::filesystem::create_directories(dir.path);
    const std::string file = (dir.path / "two_body.h5").string();
    auto config = simulator::simulation_config_from_json(
        Json{{"preset", "two-body"}, {"systems", 200}, {"seed", 7}, {"sequence_rows", 129}});
    simulator::write_dataset(config, file, simulator::WriteOptions{});
    return file;
  }();
  return path;
}

}  // namespace orbitlaw::model::testing
