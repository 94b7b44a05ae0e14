// `orbitlaw probe` end to end. Includes LibTorch (through model_probes.hpp): no fmt or spdlog here.
#include "orbitlaw/probe/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "orbitlaw/atomic_file.hpp"
#include "orbitlaw/build_info.hpp"
#include "orbitlaw/error.hpp"
#include "orbitlaw/model/device.hpp"
#include "orbitlaw/probe.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "orbitlaw/provenance.hpp"
#include "orbitlaw/stage_record.hpp"
#include "probe_progress.hpp"
#include "run_vector.hpp"

namespace orbitlaw::probe {

namespace {

// In the order predictions.h5 lists them. knn: Vafa et al.'s oracle on the standardised true state; knn_log:
// the same on (ln r, ln m1, ln m2), the law's own inputs (a labelled variant, never the default oracle);
// random: ridge on random features, the negative control.
const std::vector<std::string>& known_probes() {
  static const std::vector<std::string> names = {"finetune", "linear", "knn", "knn_log", "newton", "random"};
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool needs_model(const std::string& probe) { return probe == "finetune" || probe == "linear"; }

// The force-vector task has no linear probe (the figure needs the fine-tuned head and the oracles).
const std::vector<std::string>& vector_probes() {
  static const std::vector<std::string> names = {"finetune", "knn", "newton"};
  return names;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

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

std::string model_label(const model::ModelConfig& config) {
  std::string label = model::to_string(config.attention.kind);
  if (config.attention.kind == model::AttentionKind::kLssar) {
    char p[32];
    std::snprintf(p, sizeof p, " (p = %g)", config.attention.p);
    label += p;
  }
  return label;
}

std::string format(const char* pattern, double value) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

}  // namespace

ProbeRunSummary run_probe(const Json& config, const ProbeRunPaths& paths, const Json& library_versions,
                          bool show_progress) {
  const Log log(show_progress);
  ConfigReader reader(config, "probe config");
  const auto seed = reader.get<std::uint64_t>("seed", 0);
  const int threads = reader.get("threads", 2);
  require_thread_count("probe config: 'threads'", threads, 1);
  // Where the model runs: "auto" (CUDA when available), "cpu", "cuda" or "cuda:N".
  const auto device_name = reader.get<std::string>("device", "auto");
  // A wall-time budget for the whole run (0: none), for callers with a deadline such as gpu-study: the model
  // probes get its first half (fine-tuning stops there, or at finetune.time_limit_seconds if sooner; 80% in
  // the vector task, which has no law search), and each law search an equal share of what is left when it
  // starts. Searches cut short keep the best laws found so far.
  const auto time_limit = reader.get<double>("time_limit_seconds", 0.0);
  if (!(time_limit >= 0) || !std::isfinite(time_limit))
    throw Error("probe config: 'time_limit_seconds' must be a finite number >= 0");
  const auto run_start = std::chrono::steady_clock::now();
  std::string label = reader.get<std::string>("label", "");
  const bool use_model = !paths.checkpoint.empty() && !paths.oracle_only;
  // "magnitude": the two-body force-magnitude task and its law searches; "vector": the force-vector task.
  const auto task = reader.get<std::string>("task", "magnitude");
  if (task != "magnitude" && task != "vector")
    throw Error("probe config: unknown task '" + task + "' (known: magnitude, vector)");
  const bool vector_task = task == "vector";
  std::vector<std::string> default_probes =
      use_model ? (vector_task ? vector_probes() : known_probes())
                : (vector_task ? std::vector<std::string>{"knn", "newton"}
                               : std::vector<std::string>{"knn", "knn_log", "newton", "random"});
  const auto probes = reader.get("probes", default_probes);
  for (const auto& p : probes) {
    if (!contains(known_probes(), p)) {
      throw Error("probe config: unknown probe '" + p + "' (known: " + joined(known_probes()) + ")");
    }
    if (vector_task && !contains(vector_probes(), p))
      throw Error("probe config: probe '" + p +
                  "' has no force-vector version (task vector: finetune, knn, newton)");
    if (needs_model(p) && !use_model) {
      throw Error("probe config: probe '" + p + "' needs a model: give --checkpoint (and no --oracle-only)");
    }
  }
  if (probes.empty()) throw Error("probe config: 'probes' is empty");

  // What the probes predict: the force (Vafa et al.) or the planet's acceleration (docs/design.md section 6).
  const ProbeTarget target = parse_probe_target(reader.get<std::string>("target", "force"));
  if (vector_task && target != ProbeTarget::kForce)
    throw Error(
        "probe config: target 'acceleration' applies to the magnitude task; task vector predicts forces");
  ForceSplitConfig split;
  split.target = target;
  {
    ConfigReader s = reader.section("split");
    split.systems = s.get("systems", split.systems);
    split.test_fraction = s.get("test_fraction", split.test_fraction);
    split.validation_fraction = s.get("validation_fraction", split.validation_fraction);
    split.test_rows_per_system = s.get("test_rows_per_system", split.test_rows_per_system);
    split.train_rows_per_system = s.get("train_rows_per_system", split.train_rows_per_system);
    split.observed_rows = s.get("observed_rows", split.observed_rows);
    split.seed = seed;
    s.finish();
    reader.set_resolved("split", s.resolved());
  }
  ForceVectorConfig vector_split;
  {
    ConfigReader s = reader.section("vector");
    vector_split.label_fraction = s.get("label_fraction", vector_split.label_fraction);
    vector_split.validation_fraction = s.get("validation_fraction", vector_split.validation_fraction);
    vector_split.test_rows_per_system = s.get("test_rows_per_system", vector_split.test_rows_per_system);
    s.finish();
    reader.set_resolved("vector", s.resolved());
  }
  FineTuneOptions finetune;
  {
    ConfigReader s = reader.section("finetune");
    finetune.steps = s.get("steps", finetune.steps);
    finetune.batch_size = s.get("batch_size", finetune.batch_size);
    finetune.lr = s.get("lr", finetune.lr);
    finetune.head_lr = s.get("head_lr", finetune.head_lr);
    finetune.weight_decay = s.get("weight_decay", finetune.weight_decay);
    finetune.grad_clip = s.get("grad_clip", finetune.grad_clip);
    finetune.eval_interval = s.get("eval_interval", finetune.eval_interval);
    finetune.target = TargetScaler::parse_kind(s.get<std::string>("target", "log"));
    finetune.time_limit_seconds = s.get("time_limit_seconds", 0.0);
    if (!(finetune.time_limit_seconds >= 0) || !std::isfinite(finetune.time_limit_seconds))
      throw Error("probe config: 'finetune.time_limit_seconds' must be a finite number >= 0");
    finetune.seed = seed;
    finetune.threads = threads;
    s.finish();
    reader.set_resolved("finetune", s.resolved());
  }
  LinearProbeOptions linear;
  {
    ConfigReader s = reader.section("linear");
    linear.lambdas = s.get("lambdas", linear.lambdas);
    linear.target = TargetScaler::parse_kind(s.get<std::string>("target", "log"));
    linear.batch_size = s.get("batch_size", linear.batch_size);
    linear.threads = threads;
    s.finish();
    reader.set_resolved("linear", s.resolved());
  }
  KnnOptions knn;
  {
    ConfigReader s = reader.section("knn");
    knn.k = s.get("k", knn.k);
    knn.state = s.get("state", knn.state);
    knn.threads = threads;
    s.finish();
    reader.set_resolved("knn", s.resolved());
  }
  KnnOptions knn_log = knn;
  knn_log.state = log_knn_state();
  RandomFeatureOptions random_features;
  {
    ConfigReader s = reader.section("random");
    random_features.features = s.get("features", random_features.features);
    if (random_features.features < 1) throw Error("probe config: 'random.features' must be >= 1");
    random_features.seed = seed;
    s.finish();
    reader.set_resolved("random", s.resolved());
  }
  // Rows whose visible track bends by less than this (AU) do not show the force: galaxies leave them out.
  // Default: one bin of the checkpoint's tokenizer; 0 (every row observable) for oracle-only runs unless set.
  const auto observable_bin_width = reader.get<double>("observable_bin_width", -1.0);
  if (!std::isfinite(observable_bin_width) || (observable_bin_width < 0 && observable_bin_width != -1.0))
    throw Error("probe config: 'observable_bin_width' must be a finite number >= 0");
  // Probe data outside the checkpoint's training distribution (unseen cadence, clamped coordinates) is
  // refused unless this is set.
  const bool allow_distribution_shift = reader.get("allow_distribution_shift", false);
  const auto max_outside_fraction = reader.get<double>("max_outside_range_fraction", 0.01);
  if (!(max_outside_fraction >= 0 && max_outside_fraction <= 1))
    throw Error("probe config: 'max_outside_range_fraction' must lie in [0, 1]");
  // Law searches. The budget keys at the sr level apply to both protocols; a protocol's own section wins.
  std::vector<std::string> sr_probes, protocols;
  std::vector<LawSearchOptions> protocol_options;
  {
    ConfigReader s = reader.section("sr");
    sr_probes = s.get("probes", probes);
    for (const auto& p : sr_probes) {
      if (!contains(probes, p))
        throw Error("probe config: sr.probes names '" + p + "', which is not among 'probes'");
    }
    protocols = s.get("protocols", std::vector<std::string>{"published", "extended"});
    LawSearchOptions shared;
    shared.galaxies = s.get("galaxies", 5);
    shared.galaxy_rows = s.get("galaxy_rows", 1000);
    shared.nearest_rows = s.get("nearest_rows", 5000);
    shared.search.restarts = s.get("restarts", 3);
    // A budget sized for the CPU quickstart (about 1-2 s per restart on one galaxy); raise for real runs.
    shared.search.iterations = s.get("iterations", 60);
    shared.search.populations = s.get("populations", 4);
    shared.search.population_size = s.get("population_size", 30);
    shared.search.threads = s.get("threads", threads);
    shared.observable_only = s.get("observable_only", shared.observable_only);
    shared.confidence = s.get("confidence", shared.confidence);
    for (const auto& name : protocols) {
      LawSearchOptions defaults;
      if (name == "published") {
        defaults = published_protocol();
      } else if (name == "extended") {
        defaults = extended_protocol();
      } else {
        throw Error("probe config: unknown sr protocol '" + name + "' (known: published, extended)");
      }
      defaults.galaxies = shared.galaxies;
      defaults.galaxy_rows = shared.galaxy_rows;
      defaults.nearest_rows = shared.nearest_rows;
      defaults.search.restarts = shared.search.restarts;
      defaults.search.iterations = shared.search.iterations;
      defaults.search.populations = shared.search.populations;
      defaults.search.population_size = shared.search.population_size;
      defaults.search.threads = shared.search.threads;
      defaults.observable_only = shared.observable_only;
      defaults.confidence = shared.confidence;
      ConfigReader section = s.section(name);
      LawSearchOptions options = law_search_options_from_config(section, defaults);
      options.seed = seed;
      section.finish();
      s.set_resolved(name, section.resolved());
      protocol_options.push_back(options);
    }
    // Sections of protocols not run must still be known keys.
    for (const char* name : {"published", "extended"}) {
      if (!contains(protocols, name) && s.has(name)) s.section(name);
    }
    s.finish();
    reader.set_resolved("sr", s.resolved());
  }

  // The probe data against the model's training distribution (magnitude task): one line and exit unless
  // allowed, since a law read off inputs the model never saw says nothing about what it learned.
  std::unique_ptr<simulator::DatasetReader> magnitude_data;
  if (!vector_task) magnitude_data = std::make_unique<simulator::DatasetReader>(paths.data);
  Json distribution = nullptr;
  auto check_distribution = [&](const model::LoadedModel& model) -> Json {
    TrainingDistribution training;
    training.lo = model.tokenizer.lo;
    training.hi = model.tokenizer.hi;
    training.observed_rows = model.tokenizer.rows - 2;
    if (model.train_state.contains("data"))
      training.cadences = model.train_state["data"].value("cadences", std::vector<double>{});
    DistributionCheck check = check_probe_distribution(*magnitude_data, split.systems, training);
    check.max_outside_fraction = max_outside_fraction;
    const std::string problem = check.problem();
    if (!problem.empty() && !allow_distribution_shift)
      throw Error("probe data " + paths.data + " is outside the model's training distribution: " + problem +
                  " (simulate probe data like the training data, or set allow_distribution_shift=true)");
    log("probe data: " + std::to_string(check.outside_range) + " of " + std::to_string(check.coordinates) +
        " visible coordinates" +
        format(" (%.2f%%)", check.coordinates ? 100.0 * static_cast<double>(check.outside_range) /
                                                    static_cast<double>(check.coordinates)
                                              : 0.0) +
        " outside the tokenizer's range, clamped (refused above " +
        format("%.2g%%", 100 * max_outside_fraction) + ")");
    if (!problem.empty()) log("warning: probe data outside the training distribution (allowed): " + problem);
    if (!check.cadences_known)
      log("note: the checkpoint does not record its training cadences; only the coordinate range is checked");
    return check.json();
  };

  // The model first: its tokenizer decides which rows are visible.
  model::LoadedModel loaded;
  if (use_model) {
    if (!std::filesystem::exists(paths.checkpoint))
      throw Error("checkpoint " + paths.checkpoint + " does not exist");
    torch::set_num_threads(threads);
    loaded = model::load_model(paths.checkpoint, model::resolve_device(device_name));
    split.observed_rows = loaded.tokenizer.rows - 2;  // inputs are rows - 1 positions, the cadence first
    if (!vector_task) distribution = check_distribution(loaded);
    if (label.empty()) label = model_label(loaded.config);
    log("loaded " + paths.checkpoint + " (" + label + ", " +
        std::to_string(loaded.module->parameter_count()) + " parameters) on " +
        loaded.module->parameters().front().device().str());
  }
  if (label.empty()) label = "oracle";
  reader.finish();
  Json resolved = reader.resolved();
  resolved["label"] = label;
  resolved["split"]["observed_rows"] = split.observed_rows;
  const double bin_width = observable_bin_width >= 0 ? observable_bin_width
                           : use_model               ? loaded.tokenizer.bin_width()
                                                     : 0.0;
  resolved["observable_bin_width"] = bin_width;
  // Fine-tuning's own limit, capped by what the run's budget leaves it by `share` of the budget.
  const auto finetune_limit = [&, requested = finetune.time_limit_seconds](double share) {
    if (time_limit <= 0) return requested;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const double left = std::max(1.0, share * time_limit - elapsed);
    return requested > 0 ? std::min(requested, left) : left;
  };
  if (vector_task) {
    finetune.time_limit_seconds = finetune_limit(0.8);
    detail::VectorTask vector;
    vector_split.systems = split.systems;
    vector_split.observed_rows = split.observed_rows;
    vector_split.seed = seed;
    vector.split = vector_split;
    vector.finetune = finetune;
    vector.knn_k = knn.k;
    vector.probes = probes;
    vector.label = label;
    vector.seed = seed;
    vector.resolved_config = resolved;
    vector.library_versions = library_versions;
    vector.model = use_model ? &loaded : nullptr;
    vector.log = log;
    return detail::run_vector_task(vector, paths);
  }

  const simulator::DatasetReader& data = *magnitude_data;
  std::filesystem::create_directories(paths.out);
  begin_stage(paths.out, "probe");  // until the end, the folder reads as incomplete
  const Json fingerprint{{"config", resolved},
                         {"checkpoint", use_model ? file_checksum(paths.checkpoint) : std::string()},
                         {"data", {{"path", paths.data}, {"bytes", std::filesystem::file_size(paths.data)}}},
                         {"orbitlaw_revision", build_git_revision()}};
  detail::ProbeProgress progress(paths.out, fingerprint, paths.resume);
  const ForceDataset dataset = build_force_dataset(data, split);
  log("force dataset (target " + to_string(target) + "): " + std::to_string(dataset.train_systems.size()) +
      " train / " + std::to_string(dataset.validation_systems.size()) + " validation / " +
      std::to_string(dataset.test_systems.size()) + " test systems; " + std::to_string(dataset.train.size()) +
      " / " + std::to_string(dataset.validation.size()) + " / " + std::to_string(dataset.test.size()) +
      " labelled rows");

  const std::filesystem::path dir(paths.out);
  ProbeRunSummary out;
  out.predictions_path = (dir / "predictions.h5").string();
  Predictions predictions;
  Json details = Json::object();
  if (progress.predictions_finished(out.predictions_path)) {
    predictions = read_predictions(out.predictions_path);
    details = predictions.probe_details;
    log("resumed: the model probes finished in the interrupted run (" + out.predictions_path + ")");
  } else {
    predictions.rows = dataset.test;
    predictions.model = label;
    predictions.config = resolved;
    predictions.observable_bin_width = bin_width;
    predictions.target = target;
    log("observable test rows (track bends by more than " + format("%.4g AU", bin_width) +
        "): " + format("%.1f%%", 100 * predictions.observable_fraction()));

    // KNN on the train rows: both an oracle and the definition of "near the training states".
    const KnnOracle oracle(dataset.train, knn);
    predictions.nearest_train_distance = oracle.nearest_distance(dataset.test);
    for (const auto& probe : probes) {
      if (probe == "newton") {
        predictions.probes.emplace_back(probe, newton_force(dataset.test, target));
        details[probe] =
            Json{{"law", std::string("G*") + newton_law(target).form}, {"G", kGravitationalConstant}};
      } else if (probe == "knn" || probe == "knn_log") {
        const auto& state = probe == "knn" ? knn.state : knn_log.state;
        predictions.probes.emplace_back(probe, probe == "knn"
                                                   ? oracle.predict(dataset.test)
                                                   : KnnOracle(dataset.train, knn_log).predict(dataset.test));
        details[probe] = Json{{"k", knn.k},
                              {"state", state},
                              {"fitted_on", "train rows"},
                              {"standardised", "by the train rows' mean and standard deviation"}};
      } else if (probe == "random") {
        const RandomFeatureResult result =
            random_feature_probe(dataset.train, dataset.validation, dataset.test, random_features);
        predictions.probes.emplace_back(probe, result.test_prediction);
        details[probe] = result.json();
        details[probe]["options"] = random_features.to_json();
      }
    }
    if (use_model && (contains(probes, "finetune") || contains(probes, "linear"))) {
      std::vector<std::int64_t> systems = dataset.train_systems;
      systems.insert(systems.end(), dataset.validation_systems.begin(), dataset.validation_systems.end());
      systems.insert(systems.end(), dataset.test_systems.begin(), dataset.test_systems.end());
      const EncodedSystems encoded(data, systems, loaded.tokenizer);
      // Model probes only ever see the test rows' positions; a copy without labels makes that structural.
      ForceRows test_inputs = dataset.test;
      test_inputs.force.setConstant(std::numeric_limits<double>::quiet_NaN());
      if (contains(probes, "linear")) {
        LinearProbeResult result =
            linear_probe(loaded, encoded, dataset.train, dataset.validation, test_inputs, linear);
        result.score_layers(dataset.test.force);
        details["linear"] = result.json();
        details["linear"]["options"] = linear.to_json();
        log("linear probes: layer " + std::to_string(result.selected_layer) + " selected (validation R^2 " +
            format("%.4f", result.validation_r2[result.selected_layer]) + "), " +
            format("%.1f s", result.seconds));
        predictions.probes.emplace_back("linear", result.test_prediction);
      }
      if (contains(probes, "finetune")) {
        finetune.time_limit_seconds = finetune_limit(0.5);
        log("fine-tuning: " + std::to_string(finetune.steps) + " steps of " +
            std::to_string(finetune.batch_size) + " systems" +
            (finetune.time_limit_seconds > 0 ? format(", at most %.1f s", finetune.time_limit_seconds) : ""));
        const FineTuneResult result =
            fine_tune(loaded, encoded, dataset.train, dataset.validation, test_inputs, finetune);
        details["finetune"] = result.json();
        details["finetune"]["options"] = finetune.to_json();
        log("fine-tuning: step " + std::to_string(result.selected_step) + " selected (validation MSE " +
            format("%.4g", result.selected_validation_mse) + "), " + format("%.1f s", result.seconds));
        predictions.probes.emplace_back("finetune", result.test_prediction);
      }
      // Keep the file's probe order fixed: that of known_probes() (those that ran).
      std::vector<std::pair<std::string, Eigen::VectorXd>> ordered;
      for (const auto& name : known_probes()) {
        for (auto& p : predictions.probes) {
          if (p.first == name) ordered.push_back(p);
        }
      }
      predictions.probes = ordered;
    }
    predictions.probe_details = details;
    predictions.provenance = detail::predictions_provenance(resolved, seed, library_versions, paths);

    write_predictions(out.predictions_path, predictions);
    progress.predictions_written(out.predictions_path);
    log("wrote " + out.predictions_path);
  }

  Json accuracy = Json::object();
  for (const auto& [name, values] : predictions.probes) {
    accuracy[name] = Json{{"r2", r_squared(dataset.test.force, values)},
                          {"relative_error", relative_error(dataset.test.force, values).json()}};
    log(name + ": test R^2 " + format("%.4f", accuracy[name]["r2"].get<double>()) +
        ", median relative error " +
        format("%.3g", accuracy[name]["relative_error"]["median"].get<double>()));
  }

  Json searches = Json::array();  // sr.json's entries, in protocol-then-probe order
  std::size_t searches_left = protocol_options.size() * sr_probes.size();
  for (const auto& protocol : protocol_options) {
    for (const auto& probe : sr_probes) {
      LawSearchOptions options = protocol;
      if (time_limit > 0) {
        // 5% of the budget is kept for writing; each remaining search gets an equal share of the rest.
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
        const double share =
            std::max(1.0, (0.95 * time_limit - elapsed) / static_cast<double>(searches_left));
        const double per_galaxy = share / std::max(1, options.galaxies);
        const double own = protocol.search.time_limit_seconds;
        options.search.time_limit_seconds = own > 0 ? std::min(own, per_galaxy) : per_galaxy;
      }
      --searches_left;
      if (auto finished = progress.finished_search(probe, options.protocol)) {
        searches.push_back(*finished);
        log("law search " + probe + " / " + options.protocol + ": resumed (finished in the interrupted run)");
        continue;
      }
      const LawSearch s = search_laws(predictions, probe, options);
      searches.push_back(law_searches_json({s})["searches"][0]);
      progress.search_finished(probe, options.protocol, searches.back());
      int srbench = 0, strict = 0, exponents = 0;
      for (const auto& g : s.galaxies) {
        srbench += g.verdicts.law.equivalent;
        strict += g.verdicts.law.strict;
        exponents += g.verdicts.exponents;
      }
      if (!s.skipped.empty()) {
        log("law search " + probe + " / " + options.protocol + ": skipped, " + s.skipped);
        continue;
      }
      const auto of = "/" + std::to_string(s.galaxies.size());
      log("law search " + probe + " / " + options.protocol + ": Newton srbench " + std::to_string(srbench) +
          of + ", strict " + std::to_string(strict) + of + ", exponents " + std::to_string(exponents) + of +
          " (" + format("%.1f s", s.seconds) +
          "); galaxy 0: " + (s.galaxies.empty() ? std::string("-") : s.galaxies.front().law));
    }
  }
  out.sr_path = (dir / "sr.json").string();
  // The layout of law_searches_json: the list, and the first search's galaxies at the top (older readers).
  const Json sr_document{{"searches", searches},
                         {"galaxies", searches.empty() ? Json::array() : searches.front()["galaxies"]}};
  write_text_atomic(out.sr_path, sr_document.dump(2) + "\n");

  out.summary =
      Json{{"model", label},
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
              protocol_options.empty() ? Json(nullptr) : Json(protocol_options.front().observable_only)}}},
           {"distribution", distribution},
           {"probes", details},
           {"config", resolved}};
  detail::write_summary_and_provenance(out, paths, resolved, seed, library_versions);
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
