// orbitlaw simulate: Sample solar systems, integrate them and write an HDF5 dataset.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_simulate_command(CLI::App& app) {
  auto* sub = app.add_subcommand("simulate", "Sample solar systems, integrate them and write an HDF5 dataset");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "simulate config");
    reader.finish();
    throw Error("'simulate' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
