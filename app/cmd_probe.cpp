// orbitlaw probe: fine-tune or probe a trained model to predict forces, run the oracles, and search the
// predictions for a force law. Thin layer over orbitlaw/probe/run.hpp.
#include <cstdio>

#include "cli_common.hpp"
#include "orbitlaw/error.hpp"
#include "orbitlaw/probe/run.hpp"

namespace orbitlaw::cli {

void add_probe_command(CLI::App& app) {
  auto* sub = app.add_subcommand("probe", "Fine-tune or probe a trained model to predict forces");
  auto& options = add_config_options(sub);
  static probe::ProbeRunPaths paths;
  sub->add_option("--checkpoint", paths.checkpoint, "trained model checkpoint (omit for the oracles only)");
  sub->add_option("--data", paths.data, "two-body trajectory dataset (orbitlaw simulate --preset two-body)")
      ->required();
  sub->add_option("--out", paths.out, "output folder: predictions.h5, sr.json, probe.json, provenance")
      ->required();
  sub->add_flag("--oracle-only", paths.oracle_only, "run only the KNN and Newton oracles (no model probes)");
  sub->footer(
      "Config keys (--config FILE / --set key=value): seed, threads, label, probes, split.*, finetune.*, "
      "linear.*, knn.*, sr.* (see probe/include/orbitlaw/probe/run.hpp).");
  sub->callback([&options] {
    const auto summary = probe::run_probe(options.load(), paths, library_versions());
    std::printf("%s\n%s\n%s\n", summary.predictions_path.c_str(), summary.sr_path.c_str(),
                summary.summary_path.c_str());
  });
}

}  // namespace orbitlaw::cli
