// `orbitlaw probe` end to end: orchestration over the run's config (run_config.hpp). Includes LibTorch
// (through model_probes.hpp): no fmt or spdlog here.
#include "orbitlaw/probe/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/budget.hpp"
#include "orbitlaw/common/build_info.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/model/attention_kinds.hpp"
#include "orbitlaw/model/device.hpp"
#include "orbitlaw/probe.hpp"
#include "orbitlaw/probe/kepler_elements.hpp"
#include "orbitlaw/probe/kepler_probe.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "probe_progress.hpp"
#include "run_config.hpp"
#include "run_vector.hpp"

namespace orbitlaw::probe {

namespace {

using detail::ProbeRunConfig;

// How a run's wall-time budget (time_limit_seconds) is shared, for callers with a deadline such as
// gpu-study: the model probes may spend up to the first kModelProbeShare of it (fine-tuning stops there, or
// at finetune.time_limit_seconds if sooner; kVectorModelProbeShare in the vector task, which has no law
// search), and each law search an equal share of what is left when it starts, keeping the last kWritingShare
// for writing the outputs. Searches cut short keep the best laws found so far. This is the probe's own split
// of the time it is given; how an experiment divides its whole budget between stages is the driver's
// (experiments/lib/budget.py), which passes the probe its share as time_limit_seconds.
constexpr double kModelProbeShare = 0.5;
constexpr double kVectorModelProbeShare = 0.8;
constexpr double kWritingShare = 0.05;

class Log {
 public:
  explicit Log(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void operator()(const std::string& message) const {
    if (!enabled_) return;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "[probe %7.1fs] %s\n", t, message.c_str());
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

bool asks_for(const ProbeRunConfig& c, const std::string& probe) {
  return std::find(c.probes.begin(), c.probes.end(), probe) != c.probes.end();
}

std::string model_label(const model::ModelConfig& config) { return model::attention_label(config.attention); }

std::string format(const char* pattern, double value) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// The probe data against the model's training distribution (magnitude task): one line and exit unless
// allowed, since a law read off inputs the model never saw says nothing about what it learned.
Json check_distribution(const simulator::DatasetReader& data, const std::string& data_path,
                        const ProbeRunConfig& c, const model::LoadedModel& model, const Log& log) {
  TrainingDistribution training;
  training.lo = model.tokenizer.lo;
  training.hi = model.tokenizer.hi;
  training.observed_rows = model.tokenizer.rows - 2;
  if (model.train_state.contains("data"))
    training.cadences = model.train_state["data"].value("cadences", std::vector<double>{});
  DistributionCheck check = check_probe_distribution(data, c.split.systems, training);
  check.max_outside_fraction = c.max_outside_fraction;
  const std::string problem = check.problem();
  if (!problem.empty() && !c.allow_distribution_shift)
    throw Error("probe data " + data_path + " is outside the model's training distribution: " + problem +
                " (simulate probe data like the training data, or set allow_distribution_shift=true)");
  const double percent = check.coordinates ? 100.0 * static_cast<double>(check.outside_range) /
                                                 static_cast<double>(check.coordinates)
                                           : 0.0;
  log("probe data: " + std::to_string(check.outside_range) + " of " + std::to_string(check.coordinates) +
      " visible coordinates" + format(" (%.2f%%)", percent) +
      " outside the tokenizer's range, clamped (refused above " +
      format("%.2g%%", 100 * c.max_outside_fraction) + ")");
  if (!problem.empty()) log("warning: probe data outside the training distribution (allowed): " + problem);
  if (!check.cadences_known)
    log("note: the checkpoint does not record its training cadences; only the coordinate range is checked");
  return check.json();
}

model::LoadedModel load_probe_model(const ProbeRunConfig& c, const std::string& checkpoint) {
  if (!std::filesystem::exists(checkpoint)) throw Error("checkpoint " + checkpoint + " does not exist");
  model::configure_threads(c.threads);
  return model::load_model(checkpoint, model::resolve_device(c.device));
}

// The oracles and controls, which see the true state of the train rows.
void run_oracle_probes(const ProbeRunConfig& c, const ForceDataset& dataset, const KnnOracle& knn,
                       Predictions& predictions, Json& details) {
  for (const auto& probe : c.probes) {
    if (probe == "newton") {
      predictions.probes.emplace_back(probe, newton_force(dataset.test, c.target));
      details[probe] =
          Json{{"law", std::string("G*") + newton_law(c.target).form}, {"G", kGravitationalConstant}};
    } else if (probe == "knn" || probe == "knn_log") {
      const KnnOptions& options = probe == "knn" ? c.knn : c.knn_log;
      predictions.probes.emplace_back(probe, probe == "knn"
                                                 ? knn.predict(dataset.test)
                                                 : KnnOracle(dataset.train, options).predict(dataset.test));
      details[probe] = Json{{"k", c.knn.k},
                            {"state", options.state},
                            {"fitted_on", "train rows"},
                            {"standardised", "by the train rows' mean and standard deviation"}};
    } else if (probe == "random") {
      const RandomFeatureResult result =
          random_feature_probe(dataset.train, dataset.validation, dataset.test, c.random_features);
      predictions.probes.emplace_back(probe, result.test_prediction);
      details[probe] = result.json();
      details[probe]["options"] = c.random_features.to_json();
    }
  }
}

// The target's vectors at `rows` as the probes are fitted to them: the data's own, or under a label control
// each row's true direction with the control's magnitude (label_control.hpp).
Eigen::MatrixXd labelled_vectors(const simulator::DatasetReader& data, const ForceRows& rows,
                                 const ProbeRunConfig& c) {
  Eigen::MatrixXd vectors = target_vectors(data, rows, c.target);
  if (!c.labels.active()) return vectors;
  for (Eigen::Index i = 0; i < vectors.rows(); ++i) {
    const double length = vectors.row(i).norm();
    if (length > 0) vectors.row(i) *= rows.force[i] / length;
  }
  return vectors;
}

// The raw-input controls: the linear probes' ridges on the model's input window (raw_input_probe.hpp).
void run_raw_input_probes(const ProbeRunConfig& c, const model::LoadedModel& model,
                          const simulator::DatasetReader& data, const ForceDataset& dataset,
                          const EncodedSystems& encoded, Predictions& predictions, Json& details,
                          const Log& log) {
  const int n_bodies = data.read_system(dataset.train.system.front()).n_bodies;
  auto features = [&](const ForceRows& rows) {
    return raw_input_features(encoded, model.tokenizer, rows, n_bodies, c.raw_input.window);
  };
  const Eigen::MatrixXd train = features(dataset.train), validation = features(dataset.validation),
                        test = features(dataset.test);
  if (asks_for(c, "raw_input")) {
    const RawInputProbeResult result =
        raw_input_probe(train, dataset.train.force, validation, dataset.validation.force, test, c.raw_input);
    details["raw_input"] = result.json();
    details["raw_input"]["options"] = c.raw_input.to_json();
    log("raw-input probe (window " + std::to_string(c.raw_input.window) + "): validation R^2 " +
        format("%.4f", result.validation_r2));
    predictions.probes.emplace_back("raw_input", result.test_prediction);
  }
  if (asks_for(c, "raw_input_vector")) {
    const RawInputProbeResult result =
        raw_input_vector_probe(train, labelled_vectors(data, dataset.train, c), validation,
                               labelled_vectors(data, dataset.validation, c), test, c.raw_input);
    details["raw_input_vector"] = result.json();
    details["raw_input_vector"]["options"] = c.raw_input.to_json();
    details["raw_input_vector"]["test_vector_r2_unused_for_selection"] =
        vector_r_squared(labelled_vectors(data, dataset.test, c), result.test_vector);
    log("raw-input vector probe (window " + std::to_string(c.raw_input.window) + "): validation R^2 " +
        format("%.4f", result.validation_r2));
    predictions.probes.emplace_back("raw_input_vector", result.test_prediction);
  }
}

// The probes that read the model's hidden states: per-layer linear probes and the fine-tuned head.
void run_model_probes(const ProbeRunConfig& c, const Budget& budget, const model::LoadedModel& model,
                      const simulator::DatasetReader& data, const ForceDataset& dataset,
                      Predictions& predictions, Json& details, const Log& log) {
  std::vector<std::int64_t> systems = dataset.train_systems;
  systems.insert(systems.end(), dataset.validation_systems.begin(), dataset.validation_systems.end());
  systems.insert(systems.end(), dataset.test_systems.begin(), dataset.test_systems.end());
  const EncodedSystems encoded(data, systems, model);
  // Model probes only ever see the test rows' positions; a copy without labels makes that structural.
  ForceRows test_inputs = dataset.test;
  test_inputs.force.setConstant(std::numeric_limits<double>::quiet_NaN());
  if (asks_for(c, "linear")) {
    LinearProbeResult result =
        linear_probe(model, encoded, dataset.train, dataset.validation, test_inputs, c.linear);
    result.score_layers(dataset.test.force);
    details["linear"] = result.json();
    details["linear"]["options"] = c.linear.to_json();
    log("linear probes: layer " + std::to_string(result.selected_layer) + " selected (validation R^2 " +
        format("%.4f", result.validation_r2[result.selected_layer]) + "), " +
        format("%.1f s", result.seconds));
    predictions.probes.emplace_back("linear", result.test_prediction);
  }
  if (asks_for(c, "linear_vector")) {
    LinearVectorProbeResult result = linear_vector_probe(
        model, encoded, dataset.train, dataset.validation, test_inputs,
        labelled_vectors(data, dataset.train, c), labelled_vectors(data, dataset.validation, c), c.linear);
    result.score_layers(labelled_vectors(data, dataset.test, c));  // after every choice is made
    details["linear_vector"] = result.json();
    details["linear_vector"]["options"] = c.linear.to_json();
    log("linear vector probes: layer " + std::to_string(result.selected_layer) +
        " selected (validation R^2 " + format("%.4f", result.validation_r2[result.selected_layer]) +
        "; test R^2 of the components " + format("%.4f", result.test_component_r2.front()) + ", " +
        format("%.4f", result.test_component_r2.back()) + "), " + format("%.1f s", result.seconds));
    predictions.probes.emplace_back("linear_vector", result.test_prediction);
  }
  if (asks_for(c, "raw_input") || asks_for(c, "raw_input_vector"))
    run_raw_input_probes(c, model, data, dataset, encoded, predictions, details, log);
  if (asks_for(c, detail::kKeplerProbe)) {
    // The data's own elements even under a label control: the control replaces force labels only.
    const int n_bodies = data.read_system(dataset.train.system.front()).n_bodies;
    KeplerProbeResult result = kepler_probe(model, encoded, dataset.train, dataset.validation, test_inputs,
                                            n_bodies, c.linear, c.raw_input);
    result.score(kepler_elements(dataset.test));  // after every choice is made
    details[detail::kKeplerProbe] = result.json();
    details[detail::kKeplerProbe]["options"] = {{"linear", c.linear.to_json()},
                                                {"raw_input", c.raw_input.to_json()}};
    log(result.log_line());
  }
  if (asks_for(c, "finetune")) {
    FineTuneOptions finetune = c.finetune;
    finetune.time_limit_seconds = budget.cap(c.finetune.time_limit_seconds, kModelProbeShare);
    log("fine-tuning: " + std::to_string(finetune.steps) + " steps of " +
        std::to_string(finetune.batch_size) + " systems" +
        (finetune.time_limit_seconds > 0 ? format(", at most %.1f s", finetune.time_limit_seconds) : ""));
    const FineTuneResult result =
        fine_tune(model, encoded, dataset.train, dataset.validation, test_inputs, finetune);
    details["finetune"] = result.json();
    details["finetune"]["options"] = finetune.to_json();
    log("fine-tuning: step " + std::to_string(result.selected_step) + " selected (validation MSE " +
        format("%.4g", result.selected_validation_mse) + "), " + format("%.1f s", result.seconds));
    predictions.probes.emplace_back("finetune", result.test_prediction);
  }
}

// Every probe's predictions on the test rows, in the order of known_probes(), with what each probe was.
Predictions compute_predictions(const ProbeRunConfig& c, const Budget& budget,
                                const model::LoadedModel* model, const simulator::DatasetReader& data,
                                const ForceDataset& dataset, double bin_width, const Log& log) {
  Predictions predictions;
  predictions.rows = dataset.test;
  predictions.model = c.label;
  predictions.config = c.resolved;
  predictions.observable_bin_width = bin_width;
  predictions.target = c.target;
  log("observable test rows (track bends by more than " + format("%.4g AU", bin_width) +
      "): " + format("%.1f%%", 100 * predictions.observable_fraction()));
  // KNN on the train rows: both an oracle and the definition of "near the training states".
  const KnnOracle knn(dataset.train, c.knn);
  predictions.nearest_train_distance = knn.nearest_distance(dataset.test);
  Json details = Json::object();
  run_oracle_probes(c, dataset, knn, predictions, details);
  if (model &&
      (asks_for(c, "finetune") || asks_for(c, "linear") || asks_for(c, "linear_vector") ||
       asks_for(c, "raw_input") || asks_for(c, "raw_input_vector") || asks_for(c, detail::kKeplerProbe))) {
    run_model_probes(c, budget, *model, data, dataset, predictions, details, log);
    std::vector<std::pair<std::string, Eigen::VectorXd>> ordered;
    for (const auto& name : detail::known_probes()) {
      for (auto& p : predictions.probes) {
        if (p.first == name) ordered.push_back(p);
      }
    }
    predictions.probes = ordered;
  }
  predictions.probe_details = details;
  return predictions;
}

// Each probe's accuracy on the test rows (R^2 and relative error), logged as it is computed.
Json score_probes(const ForceDataset& dataset, const Predictions& predictions, const Log& log) {
  Json accuracy = Json::object();
  for (const auto& [name, values] : predictions.probes) {
    accuracy[name] = Json{{"r2", r_squared(dataset.test.force, values)},
                          {"relative_error", relative_error(dataset.test.force, values).json()}};
    log(name + ": test R^2 " + format("%.4f", accuracy[name]["r2"].get<double>()) +
        ", median relative error " +
        format("%.3g", accuracy[name]["relative_error"]["median"].get<double>()));
  }
  return accuracy;
}

void log_law_search(const LawSearch& s, const std::string& probe, const std::string& protocol,
                    const Log& log) {
  const std::string name = "law search " + probe + " / " + protocol;
  if (!s.skipped.empty()) {
    log(name + ": skipped, " + s.skipped);
    return;
  }
  int srbench = 0, strict = 0, exponents = 0;
  for (const auto& g : s.galaxies) {
    srbench += g.verdicts.law.equivalent;
    strict += g.verdicts.law.strict;
    exponents += g.verdicts.exponents;
  }
  const auto of = "/" + std::to_string(s.galaxies.size());
  log(name + ": Newton srbench " + std::to_string(srbench) + of + ", strict " + std::to_string(strict) + of +
      ", exponents " + std::to_string(exponents) + of + " (" + format("%.1f s", s.seconds) +
      "); galaxy 0: " + (s.galaxies.empty() ? std::string("-") : s.galaxies.front().law));
}

// The law searches of every protocol on every sr probe (sr.json's entries, in protocol-then-probe order);
// those an interrupted run finished are reused.
Json run_law_searches(const ProbeRunConfig& c, const Budget& budget, const Predictions& predictions,
                      detail::ProbeProgress& progress, const Log& log) {
  Json searches = Json::array();
  std::size_t searches_left = c.law_searches.size() * c.sr_probes.size();
  for (const auto& protocol : c.law_searches) {
    for (const auto& probe : c.sr_probes) {
      LawSearchOptions options = protocol;
      const double requested = protocol.search.time_limit_seconds;  // per galaxy; 0: none
      if (budget.limited()) {
        const double share =
            std::max(1.0, budget.left_until(1 - kWritingShare, 0.0) / static_cast<double>(searches_left));
        const double per_galaxy = share / std::max(1, options.galaxies);
        options.search.time_limit_seconds = requested > 0 ? std::min(requested, per_galaxy) : per_galaxy;
        if (options.search.time_limit_seconds != requested)
          log("law search " + probe + " / " + options.protocol + ": time limit per galaxy " +
              format("%.3g s", options.search.time_limit_seconds) + " (requested " +
              (requested > 0 ? format("%.3g s", requested) : std::string("none")) +
              "; lowered to this search's share of time_limit_seconds)");
      }
      --searches_left;
      if (auto finished = progress.finished_search(probe, options.protocol)) {
        searches.push_back(*finished);
        log("law search " + probe + " / " + options.protocol + ": resumed (finished in the interrupted run)");
        continue;
      }
      const LawSearch s = search_laws(predictions, probe, options);
      searches.push_back(law_searches_json({s})["searches"][0]);
      searches.back()["options"]["time_limit_seconds_requested"] = requested;
      progress.search_finished(probe, options.protocol, searches.back());
      log_law_search(s, probe, options.protocol, log);
    }
  }
  return searches;
}

Json summary_json(const ProbeRunConfig& c, const ProbeRunPaths& paths, const ForceDataset& dataset,
                  const Predictions& predictions, const Json& accuracy, const Json& distribution,
                  double bin_width) {
  return Json{{"model", c.label},
              {"checkpoint", paths.checkpoint},
              {"data", paths.data},
              {"split",
               {{"train_systems", dataset.train_systems.size()},
                {"validation_systems", dataset.validation_systems.size()},
                {"test_systems", dataset.test_systems.size()},
                {"train_rows", dataset.train.size()},
                {"validation_rows", dataset.validation.size()},
                {"test_rows", dataset.test.size()}}},
              {"accuracy", accuracy},
              {"observable",
               {{"bin_width", bin_width},
                {"fraction", predictions.observable_fraction()},
                {"galaxies_observable_only",
                 c.law_searches.empty() ? Json(nullptr) : Json(c.law_searches.front().observable_only)}}},
              {"distribution", distribution},
              {"probes", predictions.probe_details},
              {"config", c.resolved}};
}

ProbeRunSummary run_vector(const ProbeRunConfig& c, const Budget& budget, const model::LoadedModel* model,
                           const ProbeRunPaths& paths, const Json& library_versions, const Log& log) {
  detail::VectorTask vector;
  vector.split = c.vector_split;
  vector.split.systems = c.split.systems;
  vector.split.observed_rows = c.split.observed_rows;
  vector.split.seed = c.seed;
  vector.finetune = c.finetune;
  vector.finetune.time_limit_seconds = budget.cap(c.finetune.time_limit_seconds, kVectorModelProbeShare);
  vector.knn_k = c.knn.k;
  vector.probes = c.probes;
  vector.label = c.label;
  vector.seed = c.seed;
  vector.resolved_config = c.resolved;
  vector.library_versions = library_versions;
  vector.model = model;
  vector.log = log;
  return detail::run_vector_task(vector, paths);
}

}  // namespace

Json resolve_probe_config(const Json& config, bool use_model) {
  return ProbeRunConfig::from_config(config, use_model).resolved;
}

std::vector<KeyDoc> probe_config_keys() { return ProbeRunConfig::keys(); }

ProbeRunSummary run_probe(const Json& config, const ProbeRunPaths& paths, const Json& library_versions,
                          bool show_progress) {
  const Log log(show_progress);
  const bool use_model = !paths.checkpoint.empty() && !paths.oracle_only;
  ProbeRunConfig c = ProbeRunConfig::from_config(config, use_model);
  const Budget budget(c.time_limit_seconds);

  // The model first: its tokenizer decides which rows are visible.
  std::unique_ptr<simulator::DatasetReader> magnitude_data;
  if (!c.vector_task) magnitude_data = std::make_unique<simulator::DatasetReader>(paths.data);
  model::LoadedModel loaded;
  Json distribution = nullptr;
  if (use_model) {
    loaded = load_probe_model(c, paths.checkpoint);
    c.split.observed_rows = loaded.tokenizer.rows - 2;  // inputs are rows - 1 positions, the cadence first
    if (!c.vector_task) distribution = check_distribution(*magnitude_data, paths.data, c, loaded, log);
    if (c.label.empty()) c.label = model_label(loaded.config);
    log("loaded " + paths.checkpoint + " (" + c.label + ", " +
        std::to_string(loaded.module->parameter_count()) + " parameters) on " +
        loaded.module->parameters().front().device().str());
  }
  if (c.label.empty()) c.label = "oracle";
  const double bin_width = c.observable_bin_width >= 0 ? c.observable_bin_width
                           : use_model                 ? loaded.tokenizer.bin_width()
                                                       : 0.0;
  c.resolved["label"] = c.label;
  c.resolved["split"]["observed_rows"] = c.split.observed_rows;
  c.resolved["observable_bin_width"] = bin_width;
  if (c.vector_task)
    return run_vector(c, budget, use_model ? &loaded : nullptr, paths, library_versions, log);

  const simulator::DatasetReader& data = *magnitude_data;
  std::filesystem::create_directories(paths.out);
  begin_stage(paths.out, "probe");  // until the end, the folder reads as incomplete
  const Json fingerprint{{"config", c.resolved},
                         {"checkpoint", use_model ? file_checksum(paths.checkpoint) : std::string()},
                         // The data's contents, not its name or size: a file rewritten in place at the same
                         // size must not resume onto predictions made from the old one.
                         {"data", {{"path", paths.data}, {"checksum", file_checksum(paths.data)}}},
                         {"orbitlaw_revision", build_git_revision()}};
  detail::ProbeProgress progress(paths.out, fingerprint, paths.resume);
  ForceDataset dataset = build_force_dataset(data, c.split);
  apply_label_control(dataset, c.labels);
  if (c.labels.active())
    log("labels: the control task " + c.labels.to_json().dump() + ", not the data's own labels");
  log("force dataset (target " + to_string(c.target) + "): " + std::to_string(dataset.train_systems.size()) +
      " train / " + std::to_string(dataset.validation_systems.size()) + " validation / " +
      std::to_string(dataset.test_systems.size()) + " test systems; " + std::to_string(dataset.train.size()) +
      " / " + std::to_string(dataset.validation.size()) + " / " + std::to_string(dataset.test.size()) +
      " labelled rows");

  const std::filesystem::path dir(paths.out);
  ProbeRunSummary out;
  out.predictions_path = (dir / "predictions.h5").string();
  Predictions predictions;
  if (progress.predictions_finished(out.predictions_path)) {
    predictions = read_predictions(out.predictions_path);
    log("resumed: the model probes finished in the interrupted run (" + out.predictions_path + ")");
  } else {
    predictions =
        compute_predictions(c, budget, use_model ? &loaded : nullptr, data, dataset, bin_width, log);
    predictions.provenance = detail::predictions_provenance(c.resolved, c.seed, library_versions, paths);
    write_predictions(out.predictions_path, predictions);
    progress.predictions_written(out.predictions_path);
    log("wrote " + out.predictions_path);
  }
  const Json accuracy = score_probes(dataset, predictions, log);
  const Json searches = run_law_searches(c, budget, predictions, progress, log);
  out.sr_path = (dir / "sr.json").string();
  // The layout of law_searches_json: the list, and the first search's galaxies at the top (older readers).
  const Json sr_document{{"searches", searches},
                         {"galaxies", searches.empty() ? Json::array() : searches.front()["galaxies"]}};
  write_text_atomic(out.sr_path, sr_document.dump(2) + "\n");
  out.summary = summary_json(c, paths, dataset, predictions, accuracy, distribution, bin_width);
  detail::write_summary_and_provenance(out, paths, c.resolved, c.seed, library_versions);
  return out;
}

namespace detail {

Json predictions_provenance(const Json& resolved, std::uint64_t seed, const Json& library_versions,
                            const ProbeRunPaths& paths) {
  Json record = provenance_record("probe", resolved, seed, library_versions);
  record["checkpoint"] = paths.checkpoint;
  record["data"] = paths.data;
  return record;
}

void write_summary_and_provenance(ProbeRunSummary& out, const ProbeRunPaths& paths, const Json& resolved,
                                  std::uint64_t seed, const Json& library_versions) {
  out.summary_path = (std::filesystem::path(paths.out) / "probe.json").string();
  write_text_atomic(out.summary_path, out.summary.dump(2) + "\n");
  out.provenance_path = write_provenance(paths.out, "probe", resolved, seed, library_versions);
  // The last act: the record that says this folder's outputs belong together and are whole.
  std::vector<std::string> outputs;
  for (const std::string& path : {out.predictions_path, out.sr_path, out.summary_path, out.provenance_path})
    if (!path.empty()) outputs.push_back(std::filesystem::path(path).filename().string());
  Json inputs{{"data", {{"path", paths.data}, {"bytes", std::filesystem::file_size(paths.data)}}}};
  if (!paths.checkpoint.empty())
    inputs["checkpoint"] = {{"path", paths.checkpoint}, {"checksum", file_checksum(paths.checkpoint)}};
  complete_stage(paths.out, "probe", outputs, inputs);
  std::filesystem::remove((std::filesystem::path(paths.out) / "probe.progress.json").string());
}

}  // namespace detail

}  // namespace orbitlaw::probe
