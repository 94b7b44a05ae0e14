// orbitlaw train: Train a transformer on a trajectory dataset.
// (Includes LibTorch through the model headers: no fmt or spdlog in this file.)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "cli_common.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/model/data.hpp"
#include "orbitlaw/model/train.hpp"

namespace orbitlaw::cli {

namespace {

struct TrainFlags {
  std::string data, val, out, preset, pretokenize;
  bool resume = false, resume_changed = false;
  std::optional<double> max_minutes;  // unset: the config's train.max_minutes
};

void run_train(const ConfigOptions& options, const TrainFlags& flags) {
  model::TrainRequest request;
  Json config = options.load();
  if (flags.max_minutes) config["train"]["max_minutes"] = *flags.max_minutes;
  model::resolve_train_config(config, flags.preset, request);
  if (options.shown(request.resolved_config)) return;
  if (flags.data.empty())
    throw Error("train needs --data FILE (an HDF5 trajectory dataset or a pre-tokenized file)");
  OutputGuard guard("train");
  for (const auto* input : {&options.config_path, &flags.data, &flags.val}) guard.input(*input);
  if (!flags.pretokenize.empty()) {
    // Tokenize once, write the uint16 form for large runs, and stop.
    guard.lock_file(flags.pretokenize);
    auto store = model::TokenStore::from_dataset(flags.data, request.tokenizer);
    store.save(flags.pretokenize);
    std::printf("wrote %lld sequences of %d rows to %s\n", static_cast<long long>(store.size()), store.rows(),
                flags.pretokenize.c_str());
    guard.commit();
    return;
  }
  if (flags.out.empty()) throw Error("train needs --out DIR");
  // In a data-parallel job rank 0 alone writes the run folder, so it alone holds the lock; the others only
  // make the checks.
  const char* rank = std::getenv("RANK");
  guard.output_folder(flags.out, {"checkpoint.pt", "metrics.jsonl", "train.provenance.json"},
                      rank == nullptr || std::strcmp(rank, "0") == 0, {"train.provenance.json"});
  request.data = flags.data;
  request.val = flags.val;
  request.out = flags.out;
  request.resume = flags.resume || flags.resume_changed;
  request.resume_changed = flags.resume_changed;
  auto result = model::train(request);
  guard.commit();
  if (result.rank != 0) return;  // in a data-parallel job rank 0 reports for all
  std::printf("trained %d steps: train loss %.4g, val loss %.4g%s; checkpoint %s\n", result.steps,
              result.final_train_loss, result.final_val_loss,
              result.stopped_by_time_limit ? " (stopped at the time limit)" : "", result.checkpoint.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  // Data parallel when launched like torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the
  // environment), e.g. by scripts/launch-dp.sh.
  auto* sub = app.add_subcommand("train",
                                 "Train a transformer on a trajectory dataset (data parallel when "
                                 "launched like torchrun, e.g. by scripts/launch-dp.sh)");
  auto& options = add_config_options(sub);
  static TrainFlags flags;
  sub->add_option("--data", flags.data, "training data: HDF5 trajectory dataset or pre-tokenized file");
  sub->add_option("--val", flags.val, "validation data (default: hold out train.val_fraction of --data)");
  sub->add_option("--out", flags.out, "run directory (checkpoint.pt, metrics.jsonl, train.provenance.json)");
  sub->add_option("--preset", flags.preset,
                  "model preset: tiny, small or paper-109m (default: config, else tiny)");
  sub->add_flag(
      "--resume", flags.resume,
      "continue the run in --out from its checkpoint (refused if its data or learning settings differ)");
  sub->add_flag("--resume-changed", flags.resume_changed,
                "continue it even where data or learning settings differ (recorded in its provenance)");
  sub->add_option("--max-minutes", flags.max_minutes, "stop cleanly with a checkpoint after this wall time");
  sub->add_option("--pretokenize", flags.pretokenize, "write --data as a pre-tokenized uint16 file and exit");
  sub->callback([&options] { run_train(options, flags); });
}

}  // namespace orbitlaw::cli
