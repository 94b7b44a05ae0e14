// orbitlaw eval: Evaluate a trained model: loss, rollouts, length extrapolation, attention.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_eval_command(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "Evaluate a trained model: loss, rollouts, length extrapolation, attention");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "eval config");
    reader.finish();
    throw Error("'eval' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
