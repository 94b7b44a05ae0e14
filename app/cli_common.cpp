#include "cli_common.hpp"

#include <memory>

#include "orbitlaw/model.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::cli {

ConfigOptions& add_config_options(CLI::App* sub) {
  // Owned by the subcommand's lifetime: CLI11 keeps pointers into it until parsing is done.
  static std::vector<std::unique_ptr<ConfigOptions>> storage;
  storage.push_back(std::make_unique<ConfigOptions>());
  ConfigOptions& options = *storage.back();
  sub->add_option("--config,-c", options.config_path, "JSON config file");
  sub->add_option("--set", options.overrides, "override a config key: --set key=value (dotted keys for sections)");
  return options;
}

Json library_versions() {
  Json versions = simulator::library_versions();
  versions.update(model::library_versions());
  return versions;
}

}  // namespace orbitlaw::cli
