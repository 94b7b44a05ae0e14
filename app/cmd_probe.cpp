// orbitlaw probe: Fine-tune or probe a trained model to predict forces.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_probe_command(CLI::App& app) {
  auto* sub = app.add_subcommand("probe", "Fine-tune or probe a trained model to predict forces");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "probe config");
    reader.finish();
    throw Error("'probe' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
