#include "cli_common.hpp"

#include <charconv>
#include <cstdio>
#include <limits>
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
  sub->add_option("--set", options.overrides,
                  "override a config key: --set key=value (dotted keys for sections)");
  sub->add_flag(
      "--show-config", options.show,
      "print the resolved config (every key with the value it would use, defaults included) and exit");
  const std::string name = sub->get_name();
  if (name == "simulate" || name == "train" || name == "eval" || name == "probe" || name == "sr" ||
      name == "compare")
    sub->footer(
        "Every config key (--config, --set) with its type, default and description: orbitlaw config keys " +
        name);
  return options;
}

bool ConfigOptions::shown(const Json& resolved) const {
  if (!show) return false;
  std::printf("%s\n", resolved.dump(2).c_str());
  return true;
}

Json library_versions() {
  Json versions = simulator::library_versions();
  versions.update(model::library_versions());
  return versions;
}

}  // namespace orbitlaw::cli

namespace orbitlaw::cli {

namespace {
template <typename T>
std::string check_whole_number(const std::string& text, T lo, T hi) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < lo || value > hi)
    return "'" + text + "' is not a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return "";
}
}  // namespace

CLI::Validator whole_number_in(long long lo, long long hi) {
  return CLI::Validator([lo, hi](std::string& text) { return check_whole_number<long long>(text, lo, hi); },
                        "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator unsigned_whole_number() {
  return CLI::Validator(
      [](std::string& text) {
        return check_whole_number<unsigned long long>(text, 0,
                                                      std::numeric_limits<unsigned long long>::max());
      },
      "UINT64");
}

}  // namespace orbitlaw::cli
