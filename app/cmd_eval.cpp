// orbitlaw eval: Evaluate a trained model: loss, rollouts, length extrapolation, attention, and the
// behavioural test of learned gravity (its own predictions on the ladder, a_impl, the curvature transplant).
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
#include "orbitlaw/probe/behaviour_eval.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::cli {

namespace {

struct EvalFlags {
  std::string checkpoint, data, out, predictions;
};

// Where the behavioural predictions go: --predictions, or beside the result JSON ("eval.json" ->
// "eval.predictions.h5").
std::string predictions_path(const EvalFlags& flags) {
  if (!flags.predictions.empty()) return flags.predictions;
  auto p = std::filesystem::path(flags.out);
  return (p.parent_path() / (p.stem().string() + ".predictions.h5")).string();
}

// The behavioural test of the model on the eval data, or why it cannot run; writes the predictions file.
Json behaviour_section(const model::LoadedModel& loaded, const model::EvalConfig& config,
                       const EvalFlags& flags) {
  simulator::DatasetReader reader(flags.data);
  if (auto why = probe::behaviour_unavailable(loaded, reader, config.sequences))
    return Json{{"available", false}, {"reason", *why}};
  // A window holds what the model sees: the context less the cadence row.
  const int context = loaded.config.block_size - 1;
  const auto rows = probe::read_behaviour_rows(reader, config.sequences, loaded.config.block_size, context);
  probe::BehaviourSettings settings;
  settings.lambdas = config.transplant_lambdas;
  settings.transplant_history = std::min(config.transplant_history, context);
  settings.transplant_rows = config.transplant_rows;
  settings.bootstrap = config.bootstrap;
  const auto report = probe::evaluate_behaviour(probe::model_predictor(loaded, 256), rows, settings);
  const auto path = predictions_path(flags);
  probe::write_behaviour_predictions(path, rows, report, probe::prediction_kind(loaded));
  Json j = report.json();
  if (!config.law_search.is_null())
    j["law_search"] = probe::search_implied_laws(rows, report, config.law_search);
  j["available"] = true;
  j["prediction"] = probe::prediction_kind(loaded);
  j["predictions_file"] = path;
  return j;
}

// The verdict first, then where the model sits among the baselines and the numbers behind the verdict.
void print_behaviour(const Json& b) {
  if (!b["available"].get<bool>()) {
    std::printf("behaviour: not measured (%s)\n", b["reason"].get<std::string>().c_str());
    return;
  }
  const double k = b["law_exponent"].get<double>();
  const std::string law = k == 2 ? "Newton's law" : "its data's law (F ~ 1/r^" + Json(k).dump() + ")";
  const auto& v = b["verdict"];
  std::printf("verdict: %s %s", v["learned"].get<bool>() ? "learned" : "has NOT learned", law.c_str());
  if (!v["learned"].get<bool>()) std::printf(" (fails: %s)", v["failed"].dump().c_str());
  const auto& one = b["one_step_error_au"];
  const auto& a = b["implied_acceleration"];
  const auto& ci = a["power_law"]["r_exponent_ci95"];
  std::printf(
      "\n1-step median error %.3g AU, %s (constant velocity %.3g, constant acceleration %.3g, Newton step "
      "%.3g); transplant slope s = %s; a_impl r exponent %s [%s, %s]; constant ratio %s; median angle %s "
      "deg\n",
      one["model"]["median"].get<double>(), b["ladder_position"].get<std::string>().c_str(),
      one["constant_velocity"]["median"].get<double>(), one["constant_acceleration"]["median"].get<double>(),
      one["newton_step"]["median"].get<double>(), b["transplant"]["slope"].dump().c_str(),
      a["power_law"]["r_exponent"].dump().c_str(), ci[0].dump().c_str(), ci[1].dump().c_str(),
      a["constant_ratio"].dump().c_str(), a["median_angle_deg"].dump().c_str());
  if (b.contains("law_search")) {
    const auto& laws = b["law_search"];
    const auto& n = laws["newton_galaxies"];
    std::printf(
        "law search on a_impl (%s protocol): Newton in %d of %zu galaxies (srbench), %d (strict), %d "
        "(exponents)\n",
        laws["protocol"].get<std::string>().c_str(), n["srbench"].get<int>(), laws["galaxies"].size(),
        n["strict"].get<int>(), n["exponents"].get<int>());
  }
}

void run_eval(const ConfigOptions& options, const EvalFlags& flags) {
  ConfigReader reader(options.load(), "eval config");
  const auto config = model::EvalConfig::from_config(reader);
  if (options.shown(reader.resolved())) return;
  if (flags.checkpoint.empty() || flags.data.empty() || flags.out.empty())
    throw Error("eval needs --checkpoint FILE, --data FILE and --out FILE.json");
  auto dir = std::filesystem::path(flags.out).parent_path();
  OutputGuard guard("eval");
  for (const auto* input : {&options.config_path, &flags.checkpoint, &flags.data}) guard.input(*input);
  guard.lock_file(flags.out);
  guard.output_file(((dir.empty() ? "." : dir) / "eval.provenance.json").string());
  if (config.behaviour) guard.lock_file(predictions_path(flags));
  auto loaded = model::load_model(flags.checkpoint);
  Json result = model::evaluate(loaded, flags.checkpoint, flags.data, config);
  if (config.behaviour) result["behaviour"] = behaviour_section(loaded, config, flags);
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
  if (result.contains("behaviour")) print_behaviour(result["behaviour"]);
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
  sub->add_option("--predictions", flags.predictions,
                  "behavioural predictions file (HDF5; default: beside --out, <stem>.predictions.h5)");
  sub->callback([&options] { run_eval(options, flags); });
}

}  // namespace orbitlaw::cli
