// orbitlaw probe: fine-tune or probe a trained model to predict forces, run the oracles, and search the
// predictions for a force law. Thin layer over orbitlaw/probe/run.hpp.
#include <cstdio>

#include "cli_common.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/probe/run.hpp"

namespace orbitlaw::cli {

void add_probe_command(CLI::App& app) {
  auto* sub = app.add_subcommand("probe", "Fine-tune or probe a trained model to predict forces");
  auto& options = add_config_options(sub);
  static probe::ProbeRunPaths paths;
  sub->add_option("--checkpoint", paths.checkpoint, "trained model checkpoint (omit for the oracles only)");
  sub->add_option("--data", paths.data,
                  "trajectory dataset: two-body for the force-magnitude task (orbitlaw simulate --preset "
                  "two-body), any N-body one such as --preset solar-system for --set task=vector");
  sub->add_option("--out", paths.out, "output folder: predictions.h5, sr.json, probe.json, provenance");
  sub->add_flag("--oracle-only", paths.oracle_only, "run only the KNN and Newton oracles (no model probes)");
  sub->add_flag("--resume", paths.resume,
                "reuse what an interrupted run into --out finished (model probes, law searches), when its "
                "config, checkpoint and data are the same");
  sub->callback([&options] {
    if (options.shown(
            probe::resolve_probe_config(options.load(), !paths.checkpoint.empty() && !paths.oracle_only)))
      return;
    if (paths.data.empty() || paths.out.empty()) throw Error("probe needs --data FILE and --out DIR");
    OutputGuard guard("probe");
    for (const auto* input : {&options.config_path, &paths.checkpoint, &paths.data}) guard.input(*input);
    guard.output_folder(paths.out,
                        {"predictions.h5", "sr.json", "probe.json", "probe.provenance.json",
                         "probe.complete.json", "probe.progress.json"},
                        true, {"probe.progress.json", "probe.complete.json", "probe.provenance.json"});
    const auto summary = probe::run_probe(options.load(), paths, library_versions());
    guard.commit();
    for (const auto* path : {&summary.predictions_path, &summary.sr_path, &summary.summary_path}) {
      if (!path->empty()) std::printf("%s\n", path->c_str());  // the vector task writes no sr.json
    }
  });
}

}  // namespace orbitlaw::cli
