// orbitlaw compare: Compare the force laws recovered from several runs with Newton's.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "Compare the force laws recovered from several runs with Newton's");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "compare config");
    reader.finish();
    throw Error("'compare' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
