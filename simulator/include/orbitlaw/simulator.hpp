#pragma once
// Public interface of orbitlaw_simulator: sampling presets, simulating one system, and writing, merging and
// reading HDF5 trajectory datasets (schema in docs/dataset-format.md).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/simulator/dataset.hpp"
#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator {

// Versions of HDF5, Eigen and Boost this library was built with, for provenance records.
Json library_versions();

// Named sampling presets: "vafa-paper" (default), "vafa-code", "two-body", "solar-system",
// "outer-solar-system" (Sun, Jupiter..Neptune) and "custom" (star_mass + planets given in the config).
const std::vector<std::string>& preset_names();

// Everything that decides the contents of a dataset. Threads, sharding and file names are not here: they
// never change the data.
struct SimulationConfig {
  std::string preset = "vafa-paper";
  std::int64_t systems = 1000;  // accepted systems in the whole dataset (all shards together)
  std::uint64_t seed = 0;
  int dim = 2;
  int sequence_rows = 1000;  // 1 cadence row + n_steps * n_bodies body rows; n_steps = (rows - 1) / n_bodies
  std::vector<double> cadences = {7.0 / 365.25, 0.5};  // years; one drawn uniformly per system
  IntegratorSettings integrator;
  // Config key force_law.exponent: every pair attracts with F = G m1 m2 / r^k (nbody.hpp; 2 = Newton).
  double force_exponent = kNewtonExponent;
  // Sampling (preset defaults; every value can be overridden).
  int planets_min = 1, planets_max = 10;
  double a_min = 0.3, a_max = 42.0;                       // AU, uniform
  double e_alpha = 0.867, e_beta = 3.03, e_max = 0.95;    // Beta(alpha, beta), redrawn while e >= e_max
  double planet_mass_min = 1e-7, planet_mass_max = 1e-3;  // Msun, log-uniform
  double star_mass_min = 0.5, star_mass_max = 5.0;        // Msun, uniform (log-uniform if the flag is set)
  bool star_mass_log_uniform = false;
  bool two_body_masses =
      false;  // two-body preset: both masses U(pair_mass_min, pair_mass_max), heavier = star
  double pair_mass_min = 1e-4, pair_mass_max = 1.01e-2;
  double inclination_max_deg = 5.0;  // 3D only: i ~ U(0, max), Omega ~ U(0, 2 pi)
  // "custom" preset: one fixed system.
  double star_mass = 1.0;
  std::vector<double> planet_masses;
  std::vector<OrbitalElements> planets;
  // Rejection rule (docs/dataset-format.md): also integrator.hill_factor and integrator.min_star_distance.
  double eject_distance = 1000.0;  // AU from the star; beyond it, or unbound, counts as an ejection
  double max_energy_error = 1e-8;  // relative; larger means the integration cannot be trusted
  int max_attempts = 1000;         // redraws of one system before giving up with an error
};

// The defaults of a preset; throws orbitlaw::Error for an unknown name.
SimulationConfig preset_defaults(const std::string& preset);

// The keys of a simulation config (but preset, star_mass and planets), bound to SimulationConfig.
const ConfigSchema<SimulationConfig>& simulation_schema();
// Every key with its type, vafa-paper's default, range and description, for `orbitlaw config keys simulate`.
std::vector<KeyDoc> simulation_keys();

// Reads and validates a config (defaults come from the preset named by "preset"). Throws orbitlaw::Error
// naming the key for unknown keys (via reader.finish()), wrong types and out-of-range values.
SimulationConfig read_simulation_config(ConfigReader& reader);
// The same, from a JSON object; `resolved` (if not null) receives every setting in force.
SimulationConfig simulation_config_from_json(const Json& config, Json* resolved = nullptr);

// Why a drawn system was not kept.
enum class Rejection { kEjection, kCloseEncounter, kStarEncounter, kStepBudget, kEnergyError, kCount };
const char* rejection_name(Rejection reason);
using RejectionCounts = std::array<std::int64_t, static_cast<int>(Rejection::kCount)>;

// The initial conditions and cadence drawn for system `index`, attempt `attempt`. Deterministic in
// (config.seed, index, attempt) alone.
struct SampledSystem {
  InitialConditions initial;
  double cadence = 0;
};
SampledSystem sample_system(const SimulationConfig& config, std::int64_t index, int attempt);

// Number of observation times of a system with n_bodies bodies: floor((sequence_rows - 1) / n_bodies).
int steps_for(const SimulationConfig& config, int n_bodies);

struct SimulatedSystem {
  System system;
  std::int64_t index = 0;
  int attempts = 1;              // draws used, including the accepted one
  RejectionCounts rejections{};  // why the earlier draws were rejected
};
// Draws and integrates system `index`, redrawing rejected ones; throws orbitlaw::Error after max_attempts.
SimulatedSystem simulate_system(const SimulationConfig& config, std::int64_t index);
// Integrates a given system for n_steps observations at the cadence (no rejection).
System simulate_initial(const SimulationConfig& config, const InitialConditions& initial, double cadence,
                        int n_steps, Trajectory* trajectory = nullptr);

struct WriteOptions {
  int threads = 1;  // never changes the output
  int shard_index = 0;
  int shard_count = 1;   // shard i of n holds systems [i*N/n, (i+1)*N/n)
  Json provenance;       // embedded as the "provenance" attribute (a provenance_record)
  Json resolved_config;  // embedded as the "config" attribute; empty = derived from the config
  bool show_progress = false;
};

struct DatasetSummary {
  std::int64_t systems = 0;  // written to this file
  std::int64_t first_system = 0;
  RejectionCounts rejections{};
  double seconds = 0;
};

// Simulates this shard's systems on `threads` threads and writes them to `path` (via `<path>.partial-PID`,
// renamed when complete). The file's bytes depend only on the config, the shard and the provenance.
DatasetSummary write_dataset(const SimulationConfig& config, const std::string& path,
                             const WriteOptions& options);

// Merges shards written with the same config into one logical dataset at `path`: /row and /body are HDF5
// virtual datasets over the shard files (stored by path relative to the output's folder, so keep them
// together); /system is copied with global offsets. Throws orbitlaw::Error on mismatched or missing shards.
void merge_datasets(const std::vector<std::string>& shards, const std::string& path);

// Parses "i/n" (0 <= i < n) for --shard; throws orbitlaw::Error otherwise.
std::pair<int, int> parse_shard(const std::string& text);

}  // namespace orbitlaw::simulator
