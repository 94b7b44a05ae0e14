// orbitlaw report: Write the Markdown/HTML report of an experiment run folder.
#include "cli_common.hpp"
#include "orbitlaw/error.hpp"

namespace orbitlaw::cli {

void add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand("report", "Write the Markdown/HTML report of an experiment run folder");
  auto& options = add_config_options(sub);
  sub->callback([&options] {
    ConfigReader reader(options.load(), "report config");
    reader.finish();
    throw Error("'report' is not implemented yet");
  });
}

}  // namespace orbitlaw::cli
