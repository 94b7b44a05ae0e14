#pragma once
// Options every subcommand shares, and the collected library versions that go into provenance records.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "orbitlaw/config.hpp"

namespace orbitlaw::cli {

struct ConfigOptions {
  std::string config_path;             // --config FILE (JSON)
  std::vector<std::string> overrides;  // --set key=value, repeatable
  Json load() const { return load_config(config_path, overrides); }
};

// Adds --config and --set to a subcommand; the returned object is filled when the command line is parsed.
ConfigOptions& add_config_options(CLI::App* sub);

// Versions of every library the tool links, for provenance records.
Json library_versions();

// Subcommand registration, one per cmd_*.cpp.
void add_simulate_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_sr_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace orbitlaw::cli
