// orbitlaw train: Train a transformer on a trajectory dataset.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_train_command(CLI::App& app) {
  auto* sub = app.add_subcommand("train", "Train a transformer on a trajectory dataset");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "train config");
    reader.finish();
    throw Error("'train' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
