// orbitlaw sr: Symbolic regression: find a formula y = f(x...) in a data file.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_sr_command(CLI::App& app) {
  auto* sub = app.add_subcommand("sr", "Symbolic regression: find a formula y = f(x...) in a data file");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "sr config");
    reader.finish();
    throw Error("'sr' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
