// orbitlaw: does a transformer trained on planetary positions learn Newton's law of gravitation?
// This file only wires subcommands together and turns errors into one line and a non-zero exit.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "orbitlaw/common/build_info.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/memory.hpp"
#include "orbitlaw/common/provenance.hpp"

int main(int argc, char** argv) {
  orbitlaw::retain_freed_memory();
  orbitlaw::set_command_line(argc, argv);
  CLI::App app{
      "orbitlaw: simulate solar systems, train transformers on them, and ask which force law they learned"};
  app.set_version_flag("--version", std::string("orbitlaw ") + orbitlaw::build_version() + " (" +
                                        orbitlaw::build_git_revision() + ")");
  app.require_subcommand(1);
  orbitlaw::cli::add_simulate_command(app);
  orbitlaw::cli::add_inspect_command(app);
  orbitlaw::cli::add_train_command(app);
  orbitlaw::cli::add_eval_command(app);
  orbitlaw::cli::add_probe_command(app);
  orbitlaw::cli::add_sr_command(app);
  orbitlaw::cli::add_compare_command(app);
  orbitlaw::cli::add_report_command(app);
  orbitlaw::cli::add_config_command(app);

  // `orbitlaw config show SUB ARGS...` is `orbitlaw SUB --show-config ARGS...`: one resolution path.
  std::vector<char*> args(argv, argv + argc);
  static char show_flag[] = "--show-config";
  if (argc >= 3 && std::string(argv[1]) == "config" && std::string(argv[2]) == "show") {
    const std::string sub = argc >= 4 ? argv[3] : "";
    if (sub != "simulate" && sub != "train" && sub != "eval" && sub != "probe") {
      std::fprintf(stderr,
                   "orbitlaw: error: config show needs a subcommand: simulate, train, eval or probe\n");
      return 2;
    }
    args = {argv[0], argv[3], show_flag};
    args.insert(args.end(), argv + 4, argv + argc);
    argc = static_cast<int>(args.size());
    argv = args.data();
  }

  if (argc >= 2 && argv[1][0] != '-') {
    std::string name = argv[1];
    bool known = false;
    for (auto* sub : app.get_subcommands({})) known = known || sub->get_name() == name;
    if (!known) {
      std::fprintf(stderr, "orbitlaw: error: unknown subcommand '%s' (see orbitlaw --help)\n", name.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "orbitlaw: error: %s\n", e.what());
    return 2;
  } catch (const orbitlaw::Error& e) {
    std::fprintf(stderr, "orbitlaw: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orbitlaw: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
