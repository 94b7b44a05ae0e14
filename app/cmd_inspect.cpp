// orbitlaw inspect: Describe an orbitlaw HDF5 dataset.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_inspect_command(CLI::App& app) {
  auto* sub = app.add_subcommand("inspect", "Describe an orbitlaw HDF5 dataset");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "inspect config");
    reader.finish();
    throw Error("'inspect' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
