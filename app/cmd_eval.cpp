// orbitlaw eval: Evaluate a trained model: loss, rollouts, length extrapolation, attention.
// (Includes LibTorch through the model headers: no fmt or spdlog in this file.)
#include <cstdio>
#include <filesystem>

#include "cli_common.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/model/eval.hpp"
#include "orbitlaw/model/tokenizer.hpp"

namespace orbitlaw::cli {

namespace {

struct EvalFlags {
  std::string checkpoint, data, out;
};

void run_eval(const ConfigOptions& options, const EvalFlags& flags) {
  ConfigReader reader(options.load(), "eval config");
  const auto config = model::EvalConfig::from_config(reader);
  if (flags.checkpoint.empty() || flags.data.empty() || flags.out.empty())
    throw Error("eval needs --checkpoint FILE, --data FILE and --out FILE.json");
  auto dir = std::filesystem::path(flags.out).parent_path();
  OutputGuard guard("eval");
  for (const auto* input : {&options.config_path, &flags.checkpoint, &flags.data}) guard.input(*input);
  guard.lock_file(flags.out);
  guard.output_file(((dir.empty() ? "." : dir) / "eval.provenance.json").string());
  auto loaded = model::load_model(flags.checkpoint);
  Json result = model::evaluate(loaded, flags.checkpoint, flags.data, config);
  result["provenance"] = provenance_record("eval", reader.resolved(), 0, library_versions());
  write_text_atomic(flags.out, result.dump(2) + "\n");
  write_provenance(dir.empty() ? "." : dir.string(), "eval", reader.resolved(), 0, library_versions());
  if (result.contains("next_position")) {
    std::printf("loss %.6f (mean squared error in units of (%g AU)^2), next-position RMS error %.4f AU",
                result["loss"].get<double>(), loaded.config.coordinate_scale,
                result["next_position"]["rmse_au"].get<double>());
  } else {
    std::printf("loss %.4f (unigram %.4f), accuracy %.4f", result["loss"].get<double>(),
                result["next_token"]["unigram_loss"].get<double>(), result["accuracy"].get<double>());
  }
  if (result["trajectory_error"].contains("1") && result["trajectory_error"]["1"]["model"].is_number()) {
    const auto& one = result["trajectory_error"]["1"];
    std::printf(
        "; 1-step error %.4f AU (previous position %.4f AU, constant velocity %.4f AU; "
        "medians %.4f, %.4f, %.4f AU)",
        one["model"].get<double>(), one["previous_position"].get<double>(),
        one["constant_velocity"].get<double>(), one["median"]["model"].get<double>(),
        one["median"]["previous_position"].get<double>(), one["median"]["constant_velocity"].get<double>());
  }
  guard.commit();
  std::printf("; wrote %s\n", flags.out.c_str());
  const Json& clamped = result["clamped_coordinates"];
  const double fraction = clamped["fraction"].get<double>();
  std::printf("clamped: %lld of %lld coordinates (%.2f%%) outside the tokenizer's range [%g, %g) AU\n",
              static_cast<long long>(clamped["count"].get<std::int64_t>()),
              static_cast<long long>(clamped["coordinates"].get<std::int64_t>()), 100 * fraction,
              loaded.tokenizer.lo, loaded.tokenizer.hi);
  if (fraction > model::kClampedWarningFraction) {
    std::fprintf(
        stderr,
        "warning: %.1f%% of the coordinates lie outside the tokenizer's range and were clamped to its edge "
        "bins; the figures above describe a model shown a distorted track\n",
        100 * fraction);
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("eval", "Evaluate a trained model: loss, rollouts, length extrapolation, attention");
  auto& options = add_config_options(sub);
  static EvalFlags flags;
  sub->add_option("--checkpoint", flags.checkpoint, "checkpoint.pt written by orbitlaw train");
  sub->add_option("--data", flags.data, "HDF5 trajectory dataset to evaluate on");
  sub->add_option("--out", flags.out,
                  "result JSON (shape documented in model/include/orbitlaw/model/eval.hpp)");
  sub->callback([&options] { run_eval(options, flags); });
}

}  // namespace orbitlaw::cli
