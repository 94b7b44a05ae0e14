// orbitlaw simulate: Sample solar systems, integrate them and write an HDF5 dataset (or merge shards).
#include <cstdio>
#include <filesystem>
#include <limits>
#include <thread>

#include "cli_common.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::cli {

namespace {

struct SimulateFlags {
  std::string out;
  std::string preset, integrator, shard;
  std::int64_t systems = -1;  // -1: not given (the flags' validators refuse negative values)
  long long seed = -1;
  int threads = 0;  // 0 = all cores
  std::vector<std::string> merge;
  bool quiet = false;
};

// Refuses work the output disk cannot hold, before any of it is done: a dataset is stored compressed at about
// 52 bytes per 2-D row (measured on the quickstart's data), so half of the raw row size is a safe lower
// bound.
void check_disk_space(const simulator::SimulationConfig& config, std::int64_t systems,
                      const std::string& out) {
  const double raw_row_bytes = (1 + 4 * config.dim) * 8.0;  // time, position, velocity, two accelerations
  const double needed =
      0.5 * raw_row_bytes * static_cast<double>(config.sequence_rows) * static_cast<double>(systems);
  std::filesystem::path folder = std::filesystem::absolute(out).parent_path();
  std::error_code ec;
  const auto space = std::filesystem::space(folder, ec);
  if (ec) return;  // a folder that does not exist is reported by the writer
  if (needed > static_cast<double>(space.available)) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "simulate: %lld systems of %d rows need at least %.3g GB, but %s has %.3g GB free",
                  static_cast<long long>(systems), config.sequence_rows, needed / 1e9, folder.c_str(),
                  static_cast<double>(space.available) / 1e9);
    throw Error(line);
  }
}

void run_merge(const SimulateFlags& flags) {
  if (flags.out.empty()) throw Error("simulate --merge needs --out FILE");
  OutputGuard guard("simulate");
  for (const auto& shard : flags.merge) guard.input(shard);
  guard.lock_file(flags.out);
  simulator::merge_datasets(flags.merge, flags.out);
  guard.commit();
  std::printf("merged %zu shards into %s\n", flags.merge.size(), flags.out.c_str());
}

void run_simulate(const ConfigOptions& options, const SimulateFlags& flags) {
  Json config = options.load();
  // Convenience flags override the config file; --set overrides both (applied again last).
  if (!flags.preset.empty()) config["preset"] = flags.preset;
  if (flags.systems >= 0) config["systems"] = flags.systems;
  if (flags.seed >= 0) config["seed"] = static_cast<std::uint64_t>(flags.seed);
  if (!flags.integrator.empty()) config["integrator"] = flags.integrator;
  apply_overrides(config, options.overrides);
  Json resolved;
  auto sim_config = simulator::simulation_config_from_json(config, &resolved);
  if (options.shown(resolved)) return;
  if (flags.out.empty()) throw Error("simulate needs --out FILE.h5");
  OutputGuard guard("simulate");
  guard.input(options.config_path);
  guard.lock_file(flags.out);
  guard.output_file(flags.out + ".provenance.json");

  simulator::WriteOptions write;
  write.threads = flags.threads > 0 ? flags.threads : std::max(1u, std::thread::hardware_concurrency());
  if (!flags.shard.empty())
    std::tie(write.shard_index, write.shard_count) = simulator::parse_shard(flags.shard);
  check_disk_space(sim_config, (sim_config.systems + write.shard_count - 1) / write.shard_count, flags.out);
  write.resolved_config = resolved;
  write.provenance = provenance_record("simulate", resolved, sim_config.seed, library_versions());
  write.show_progress = !flags.quiet;
  auto summary = simulator::write_dataset(sim_config, flags.out, write);
  write_text_atomic(flags.out + ".provenance.json", write.provenance.dump(2) + "\n");
  guard.commit();

  std::int64_t rejected = 0;
  std::string reasons;
  for (int r = 0; r < static_cast<int>(simulator::Rejection::kCount); ++r) {
    rejected += summary.rejections[r];
    if (summary.rejections[r] == 0) continue;
    reasons += (reasons.empty() ? "" : ", ") +
               std::string(simulator::rejection_name(static_cast<simulator::Rejection>(r))) + " " +
               std::to_string(summary.rejections[r]);
  }
  std::printf(
      "wrote %lld systems (%lld..%lld) to %s in %.2f s (%.1f systems/s, %d threads); rejected %lld draws%s\n",
      static_cast<long long>(summary.systems), static_cast<long long>(summary.first_system),
      static_cast<long long>(summary.first_system + summary.systems - 1), flags.out.c_str(), summary.seconds,
      summary.systems / std::max(summary.seconds, 1e-9), write.threads, static_cast<long long>(rejected),
      reasons.empty() ? "" : (" (" + reasons + ")").c_str());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("simulate", "Sample solar systems, integrate them and write an HDF5 dataset");
  auto& options = add_config_options(sub);
  static SimulateFlags flags;
  sub->add_option("--out,-o", flags.out, "Output dataset (.h5); a provenance record is written beside it");
  sub->add_option("--preset", flags.preset,
                  "vafa-paper (default), vafa-code, two-body, solar-system, outer-solar-system, custom");
  sub->add_option("--systems,-n", flags.systems, "Number of systems in the whole dataset (all shards)")
      ->check(whole_number_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--seed", flags.seed, "Random seed (a system's draw depends on seed and its index only)")
      ->check(unsigned_whole_number());
  sub->add_option("--integrator", flags.integrator, "rkf78 (default), bulirsch-stoer, symplectic, kepler");
  sub->add_option("--threads,-j", flags.threads,
                  "Worker threads (default: all cores; at most 1024); never changes the output")
      ->check(whole_number_in(1, 1024));
  sub->add_option("--shard", flags.shard, "Write only shard i of n (i/n), systems [i*N/n, (i+1)*N/n)");
  sub->add_option("--merge", flags.merge, "Merge these shard files into --out (an HDF5 virtual dataset)")
      ->expected(1, -1);
  sub->add_flag("--quiet,-q", flags.quiet, "No progress line");
  sub->callback([&options] {
    if (!flags.merge.empty()) {
      run_merge(flags);
    } else {
      run_simulate(options, flags);
    }
  });
}

}  // namespace orbitlaw::cli
