// Reading the probe run's config: one function per section, each with its defaults stated once (in the
// options structs, or here where the probe run's defaults differ from a library's).
#include "run_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw::probe::detail {

namespace {

// The force-vector task has no linear probe (the figure needs the fine-tuned head and the oracles).
const std::vector<std::string>& vector_probes() {
  static const std::vector<std::string> names = {"finetune", "knn", "newton"};
  return names;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The raw-input probes read no hidden state, but the model's tokenizer and head decide what its input is.
bool needs_model(const std::string& probe) {
  return probe == "finetune" || probe == "linear" || probe == "linear_vector" || probe == "raw_input" ||
         probe == "raw_input_vector" || probe == kKeplerProbe;
}

// With a model and no 'probes' key: every probe but linear_vector, the raw-input controls and kepler, which
// are asked for by name (their vector targets suit the acceleration probes of the locality experiment,
// docs/design.md section 6b; kepler's targets are orbital elements, not the force).
std::vector<std::string> default_model_probes() {
  std::vector<std::string> names;
  for (const auto& p : known_probes())
    if (p != "linear_vector" && p != "raw_input" && p != "raw_input_vector" && p != kKeplerProbe)
      names.push_back(p);
  return names;
}

std::vector<std::string> read_probes(ConfigReader& reader, bool use_model, bool vector_task) {
  const std::vector<std::string> oracles =
      vector_task ? std::vector<std::string>{"knn", "newton"}
                  : std::vector<std::string>{"knn", "knn_log", "newton", "random"};
  const auto probes =
      reader.get("probes", use_model ? (vector_task ? vector_probes() : default_model_probes()) : oracles);
  for (const auto& p : probes) {
    if (!contains(known_probes(), p))
      throw Error("probe config: unknown probe '" + p + "' (known: " + joined(known_probes()) + ")");
    if (vector_task && !contains(vector_probes(), p))
      throw Error("probe config: probe '" + p +
                  "' has no force-vector version (task vector: finetune, knn, newton)");
    if (needs_model(p) && !use_model)
      throw Error("probe config: probe '" + p + "' needs a model: give --checkpoint (and no --oracle-only)");
  }
  if (probes.empty()) throw Error("probe config: 'probes' is empty");
  return probes;
}

const std::vector<std::pair<TargetScaler::Kind, std::string>>& scalings() {
  static const std::vector<std::pair<TargetScaler::Kind, std::string>> names = {
      {TargetScaler::Kind::kLog, "log"}, {TargetScaler::Kind::kLinear, "linear"}};
  return names;
}

const ConfigSchema<ForceSplitConfig>& split_schema() {
  using S = ForceSplitConfig;
  static const auto schema =
      ConfigSchema<S>()
          .key("systems", &S::systems, "systems used from the dataset (the first ones); 0: all",
               Range::at_least(0))
          .key("test_fraction", &S::test_fraction, "share of the systems held out for the test",
               Range::open(0, 1))
          .key("validation_fraction", &S::validation_fraction,
               "share of the other systems held out for selection", Range::from_below(0, 1))
          .key("test_rows_per_system", &S::test_rows_per_system, "labelled rows per test system; 0: all",
               Range::at_least(0))
          .key("train_rows_per_system", &S::train_rows_per_system,
               "labelled rows per training or validation system; 0: all", Range::at_least(0))
          .key("observed_rows", &S::observed_rows, "system rows a model sees (tokenizer rows - 2)",
               Range::at_least(1));
  return schema;
}

const ConfigSchema<ForceVectorConfig>& vector_schema() {
  using V = ForceVectorConfig;
  static const auto schema =
      ConfigSchema<V>()
          .key("label_fraction", &V::label_fraction, "task vector: labelled positions per training sequence",
               Range::open(0, 1))
          .key("validation_fraction", &V::validation_fraction,
               "task vector: positions held out for selection", Range::open(0, 1))
          .key("test_rows_per_system", &V::test_rows_per_system,
               "task vector: test rows per system; 0: every remaining visible row", Range::at_least(0));
  return schema;
}

const ConfigSchema<FineTuneOptions>& finetune_schema() {
  using F = FineTuneOptions;
  static const auto schema =
      ConfigSchema<F>()
          .key("steps", &F::steps, "fine-tuning steps", Range::at_least(1))
          .key("batch_size", &F::batch_size, "systems per step", Range::at_least(1))
          .key("lr", &F::lr, "AdamW learning rate of the model's weights", Range::greater_than(0))
          .key("head_lr", &F::head_lr, "learning rate of the fresh head", Range::greater_than(0))
          .key("weight_decay", &F::weight_decay, "AdamW weight decay", Range::at_least(0))
          .key("grad_clip", &F::grad_clip, "global gradient-norm clip; 0 disables", Range::at_least(0))
          .key("eval_interval", &F::eval_interval, "steps between validations; the best state is kept",
               Range::at_least(1))
          .choice("target", &F::target, scalings(), "what the head predicts: log or linear force")
          .key("time_limit_seconds", &F::time_limit_seconds, "wall-clock limit of the fine-tuning; 0: none",
               Range::at_least(0));
  return schema;
}

const ConfigSchema<LinearProbeOptions>& linear_schema() {
  using L = LinearProbeOptions;
  static const auto schema =
      ConfigSchema<L>()
          .key("lambdas", &L::lambdas, "ridge penalties tried; the validation MSE picks one")
          .choice("target", &L::target, scalings(), "what the ridge predicts: log or linear force")
          .key("batch_size", &L::batch_size, "systems per forward pass", Range::at_least(1));
  return schema;
}

const ConfigSchema<KnnOptions>& knn_schema() {
  static const auto schema =
      ConfigSchema<KnnOptions>()
          .key("k", &KnnOptions::k, "neighbours averaged", Range::at_least(1))
          .key("state", &KnnOptions::state, "the standardised state the neighbours are found in");
  return schema;
}

const ConfigSchema<RandomFeatureOptions>& random_schema() {
  static const auto schema =
      ConfigSchema<RandomFeatureOptions>().key("features", &RandomFeatureOptions::features,
                                               "random features of the negative control", Range::at_least(1));
  return schema;
}

const ConfigSchema<RawInputOptions>& raw_input_schema() {
  using R = RawInputOptions;
  static const auto schema =
      ConfigSchema<R>()
          .key("window", &R::window, "positions of the model's input the control reads",
               Range::between(1, 64))
          .key("lambdas", &R::lambdas, "ridge penalties tried")
          .choice("target", &R::target, scalings(), "magnitude task: log or linear force");
  return schema;
}

const ConfigSchema<LabelControl>& labels_schema() {
  static const auto schema =
      ConfigSchema<LabelControl>()
          .custom(
              "law_exponent", &LabelControl::law_exponent,
              [](const Json& value, const std::string& where) -> std::optional<double> {
                if (value.is_null()) return std::nullopt;
                if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= 10))
                  throw Error(where + " must be null or a number in (0, 10] (got " + value.dump() + ")");
                return value.get<double>();
              },
              [](const std::optional<double>& k) { return k ? Json(*k) : Json(nullptr); }, "number or null",
              "null or in (0, 10]", "label rows with G m1 m2 / r^k instead of the data's own labels")
          .key("shuffle", &LabelControl::shuffle, "permute the labels across all rows (a control)");
  return schema;
}

// The probe run's budget for the law searches, sized for the CPU quickstart (about 1-2 s per restart on one
// galaxy); raise for real runs.
LawSearchOptions at_probe_budget(LawSearchOptions options, int threads) {
  options.search.iterations = 60;
  options.search.populations = 4;
  options.search.population_size = 30;
  options.search.threads = threads;
  return options;
}

// The law-search keys given in the "sr" section apply to every protocol; a protocol's own section wins.
// kepler predicts orbital elements, not the force, so it has no law search and is left out of the default.
void read_law_searches(ConfigReader& s, ProbeRunConfig& c) {
  std::vector<std::string> force_probes;
  for (const auto& p : c.probes)
    if (p != kKeplerProbe) force_probes.push_back(p);
  c.sr_probes = s.get("probes", force_probes);
  for (const auto& p : c.sr_probes) {
    if (!contains(c.probes, p))
      throw Error("probe config: sr.probes names '" + p + "', which is not among 'probes'");
    if (p == kKeplerProbe)
      throw Error(
          "probe config: sr.probes names 'kepler', whose predictions are orbital elements, not forces");
  }
  const auto protocols = s.get("protocols", std::vector<std::string>{"published", "extended"});
  const auto& schema = law_search_schema();
  const LawSearchOptions shared = schema.read_keys(s, at_probe_budget(published_protocol(), c.threads));
  sr::validate(shared.search);
  for (const auto& name : protocols) {
    LawSearchOptions defaults;
    if (name == "published") {
      defaults = published_protocol();
    } else if (name == "extended") {
      defaults = extended_protocol();
    } else {
      throw Error("probe config: unknown sr protocol '" + name + "' (known: published, extended)");
    }
    defaults = at_probe_budget(defaults, c.threads);
    schema.copy_given(s, shared, defaults);
    ConfigReader section = s.section(name);
    LawSearchOptions options = law_search_options_from_config(section, defaults);
    options.seed = c.seed;
    section.finish();
    s.set_resolved(name, section.resolved());
    c.law_searches.push_back(options);
  }
  // Sections of protocols not run must still hold known keys and values.
  for (const char* name : {"published", "extended"}) {
    if (contains(protocols, name) || !s.has(name)) continue;
    ConfigReader unused = s.section(name);
    law_search_options_from_config(unused, published_protocol());
    unused.finish();
  }
}

}  // namespace

const std::vector<std::string>& known_probes() {
  static const std::vector<std::string> names = {
      "finetune", "linear",  "linear_vector", "raw_input", "raw_input_vector",
      "knn",      "knn_log", "newton",        "random",    kKeplerProbe};
  return names;
}

const ConfigSchema<ProbeRunConfig>& ProbeRunConfig::schema() {
  using P = ProbeRunConfig;
  static const auto schema =
      ConfigSchema<P>()
          .key("seed", &P::seed, "splits, row draws, probes and law searches")
          .key("threads", &P::threads, "CPU threads; 0: OMP_NUM_THREADS, else every core",
               Range::between(0, kMaxThreads))
          .key("device", &P::device, "auto (CUDA if available), cpu, cuda or cuda:N")
          .key("time_limit_seconds", &P::time_limit_seconds,
               "wall-clock budget of the whole run, shared between its stages; 0: none", Range::at_least(0))
          .key("label", &P::label, "the run's name in reports; empty: the model's attention kind, or oracle")
          .choice("task", &P::vector_task,
                  std::vector<std::pair<bool, std::string>>{{false, "magnitude"}, {true, "vector"}},
                  "probe force magnitudes (and search their law) or force vectors")
          .choice("target", &P::target,
                  std::vector<std::pair<ProbeTarget, std::string>>{
                      {ProbeTarget::kForce, "force"}, {ProbeTarget::kAcceleration, "acceleration"}},
                  "magnitude task: the force on the planet or its acceleration")
          .section("split", &P::split, split_schema())
          .section("vector", &P::vector_split, vector_schema())
          .section("finetune", &P::finetune, finetune_schema())
          .section("linear", &P::linear, linear_schema())
          .section("knn", &P::knn, knn_schema())
          .section("random", &P::random_features, random_schema())
          .section("raw_input", &P::raw_input, raw_input_schema())
          .section("labels", &P::labels, labels_schema())
          .custom(
              "observable_bin_width", &P::observable_bin_width,
              [](const Json& value, const std::string& where) {
                const double v = value.is_number() ? value.get<double>() : std::nan("");
                if (!std::isfinite(v) || (v < 0 && v != -1.0))
                  throw Error(where + " must be -1 or a finite number >= 0 (got " + value.dump() + ")");
                return v;
              },
              [](double v) { return Json(v); }, "number", "-1, or at least 0",
              "rows whose visible track bends less than this (AU) are left out of galaxies; -1: one bin")
          .key("allow_distribution_shift", &P::allow_distribution_shift,
               "probe data outside the model's training distribution is refused unless set")
          .key("max_outside_range_fraction", &P::max_outside_fraction,
               "largest share of clamped coordinates the data may have", Range::between(0, 1));
  return schema;
}

std::vector<KeyDoc> ProbeRunConfig::keys() {
  ProbeRunConfig defaults;
  auto docs = schema().keys(defaults);
  docs.push_back(KeyDoc{"probes", "list of strings", "every probe but linear_vector, raw_input* and kepler",
                        "of: " + schema_detail::join_choices(known_probes()),
                        "the probes run (with --oracle-only: knn, knn_log, newton, random)"});
  docs.push_back({"sr.probes", "list of strings", "probes but kepler", "",
                  "the probes whose predictions get law searches"});
  docs.push_back({"sr.protocols", "list of strings", R"(["published","extended"])", "of: published, extended",
                  "the law-search protocols run"});
  for (auto& d : law_search_schema().keys(at_probe_budget(published_protocol(), 0), "sr.")) {
    if (d.key == "sr.threads") d.default_value = "the run's threads";
    docs.push_back(std::move(d));
  }
  for (const char* protocol : {"published", "extended"})
    docs.push_back(
        {std::string("sr.") + protocol, "object", "{}", "the sr.* keys above",
         std::string("the law-search keys for the ") + protocol +
             " protocol alone, over the shared ones (its own defaults: docs/design.md section 6)"});
  return docs;
}

ProbeRunConfig ProbeRunConfig::from_config(const Json& config, bool use_model) {
  ConfigReader reader(config, "probe config");
  ProbeRunConfig c = schema().read_keys(reader, ProbeRunConfig{});
  c.threads = resolve_thread_count(c.threads);  // the count in use is what the provenance records
  c.probes = read_probes(reader, use_model, c.vector_task);
  if (c.vector_task && c.target != ProbeTarget::kForce)
    throw Error(
        "probe config: target 'acceleration' applies to the magnitude task; task vector predicts forces");
  c.split.target = c.target;
  c.split.seed = c.seed;
  c.finetune.seed = c.seed;
  c.finetune.threads = c.threads;
  c.linear.threads = c.threads;
  c.knn.threads = c.threads;
  c.knn_log = c.knn;
  c.knn_log.state = log_knn_state();
  c.random_features.seed = c.seed;
  c.labels.seed = c.seed;
  if (c.labels.active() && c.vector_task)
    throw Error("probe config: 'labels' controls apply to the magnitude task, not task vector");
  ConfigReader sr_section = reader.section("sr");
  read_law_searches(sr_section, c);
  sr_section.finish();
  reader.set_resolved("sr", sr_section.resolved());
  reader.finish();
  c.resolved = reader.resolved();
  c.resolved["threads"] = c.threads;  // the count in use, not the 0 that asked for the machine's share
  return c;
}

}  // namespace orbitlaw::probe::detail
