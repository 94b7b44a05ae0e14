#pragma once
// Options every subcommand shares, and the collected library versions that go into provenance records.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"

namespace orbitlaw::cli {

struct ConfigOptions {
  std::string config_path;             // --config FILE (JSON)
  std::vector<std::string> overrides;  // --set key=value, repeatable
  bool show = false;                   // --show-config
  Json load() const { return load_config(config_path, overrides); }
  // With --show-config: prints `resolved` (every key the subcommand reads, with the value it would use,
  // defaults included) and returns true, and the subcommand stops before touching any file.
  bool shown(const Json& resolved) const;
};

// Adds --config, --set and --show-config to a subcommand; the returned object is filled when the command line
// is parsed.
ConfigOptions& add_config_options(CLI::App* sub);

// A check that an integer option's text is a whole number within [lo, hi] (CLI11 alone would saturate a
// value beyond the type's range, e.g. 1e20 systems read as 2^63 - 1, without a word).
CLI::Validator whole_number_in(long long lo, long long hi);
// The same for unsigned options (seeds): a whole number in [0, 2^64 - 1].
CLI::Validator unsigned_whole_number();

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
void add_config_command(CLI::App& app);

// The config keys of the subcommands whose configs the app itself reads (orbitlaw config keys).
std::vector<KeyDoc> sr_config_keys();
std::vector<KeyDoc> compare_config_keys();

}  // namespace orbitlaw::cli
