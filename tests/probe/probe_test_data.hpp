#pragma once
// Small two-body trajectory datasets for the probe tests, simulated once per test binary into a temp folder.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "orbitlaw/simulator.hpp"

namespace orbitlaw::test {

inline std::filesystem::path probe_temp_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("orbitlaw-probe-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// A two-body dataset (the probe preset: both masses U(1e-4, 1.01e-2), heavier = star) of `systems` systems
// with `steps` observations each; cached by its parameters.
inline std::string two_body_dataset(int systems, int steps, std::uint64_t seed = 11) {
  static std::map<std::string, std::string> cache;
  const std::string key = std::to_string(systems) + "-" + std::to_string(steps) + "-" + std::to_string(seed);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  simulator::SimulationConfig config = simulator::preset_defaults("two-body");
  config.systems = systems;
  config.seed = seed;
  config.sequence_rows = 1 + 2 * steps;
  simulator::WriteOptions options;
  options.threads = 2;
  const std::string path = (probe_temp_dir() / ("two_body_" + key + ".h5")).string();
  simulator::write_dataset(config, path, options);
  cache[key] = path;
  return path;
}

// A solar-system dataset (9 bodies, star last; every sequence the same system, cadence drawn per sequence)
// for the force-vector task; cached by its parameters.
inline std::string solar_dataset(int systems, int rows) {
  const auto path =
      probe_temp_dir() / ("solar_" + std::to_string(systems) + "_" + std::to_string(rows) + ".h5");
  if (!std::filesystem::exists(path)) {
    simulator::SimulationConfig config = simulator::preset_defaults("solar-system");
    config.systems = systems;
    config.sequence_rows = rows;
    simulator::write_dataset(config, path.string(), simulator::WriteOptions{});
  }
  return path.string();
}

}  // namespace orbitlaw::test
