// Reading the probe run's config: one function per section, each with its defaults stated once (in the
// options structs, or here where the probe run's defaults differ from a library's).
#include "run_config.hpp"

#include <algorithm>
#include <cmath>

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
         probe == "raw_input_vector";
}

// With a model and no 'probes' key: every probe but linear_vector and the raw-input controls, which are asked
// for by name (their vector targets suit the acceleration probes of the locality experiment, docs/design.md
// section 6b).
std::vector<std::string> default_model_probes() {
  std::vector<std::string> names;
  for (const auto& p : known_probes())
    if (p != "linear_vector" && p != "raw_input" && p != "raw_input_vector") names.push_back(p);
  return names;
}

double finite_non_negative(double value, const std::string& key) {
  if (!(value >= 0) || !std::isfinite(value))
    throw Error("probe config: '" + key + "' must be a finite number >= 0");
  return value;
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

// Reads section `name` of `reader` with `read`, then records what it resolved to.
template <typename Read>
void read_section(ConfigReader& reader, const char* name, Read read) {
  ConfigReader s = reader.section(name);
  read(s);
  s.finish();
  reader.set_resolved(name, s.resolved());
}

void read_split(ConfigReader& s, ForceSplitConfig& split) {
  split.systems = s.get("systems", split.systems);
  split.test_fraction = s.get("test_fraction", split.test_fraction);
  split.validation_fraction = s.get("validation_fraction", split.validation_fraction);
  split.test_rows_per_system = s.get("test_rows_per_system", split.test_rows_per_system);
  split.train_rows_per_system = s.get("train_rows_per_system", split.train_rows_per_system);
  split.observed_rows = s.get("observed_rows", split.observed_rows);
}

void read_vector_split(ConfigReader& s, ForceVectorConfig& v) {
  v.label_fraction = s.get("label_fraction", v.label_fraction);
  v.validation_fraction = s.get("validation_fraction", v.validation_fraction);
  v.test_rows_per_system = s.get("test_rows_per_system", v.test_rows_per_system);
}

void read_finetune(ConfigReader& s, FineTuneOptions& f) {
  f.steps = s.get("steps", f.steps);
  f.batch_size = s.get("batch_size", f.batch_size);
  f.lr = s.get("lr", f.lr);
  f.head_lr = s.get("head_lr", f.head_lr);
  f.weight_decay = s.get("weight_decay", f.weight_decay);
  f.grad_clip = s.get("grad_clip", f.grad_clip);
  f.eval_interval = s.get("eval_interval", f.eval_interval);
  f.target = TargetScaler::parse_kind(s.get<std::string>("target", "log"));
  f.time_limit_seconds = finite_non_negative(s.get("time_limit_seconds", 0.0), "finetune.time_limit_seconds");
}

void read_linear(ConfigReader& s, LinearProbeOptions& l) {
  l.lambdas = s.get("lambdas", l.lambdas);
  l.target = TargetScaler::parse_kind(s.get<std::string>("target", "log"));
  l.batch_size = s.get("batch_size", l.batch_size);
}

// The keys of the "sr" section shared by both protocols (a protocol's own section wins; time_limit_seconds is
// per galaxy at every level), read into and copied out of a LawSearchOptions so that their defaults are the
// library's. The one exception is the search budget: the probe run's is sized for the CPU quickstart (about
// 1-2 s per restart on one galaxy); raise for real runs.
class SharedLawSearchKeys {
 public:
  explicit SharedLawSearchKeys(int threads) {
    shared_.search.iterations = 60;
    shared_.search.populations = 4;
    shared_.search.population_size = 30;
    shared_.search.threads = threads;
  }
  void read(ConfigReader& s) {
    shared_.galaxies = s.get("galaxies", shared_.galaxies);
    shared_.galaxy_rows = s.get("galaxy_rows", shared_.galaxy_rows);
    shared_.nearest_rows = s.get("nearest_rows", shared_.nearest_rows);
    shared_.observable_only = s.get("observable_only", shared_.observable_only);
    shared_.confidence = s.get("confidence", shared_.confidence);
    auto& search = shared_.search;
    search.restarts = s.get("restarts", search.restarts);
    search.iterations = s.get("iterations", search.iterations);
    search.populations = s.get("populations", search.populations);
    search.population_size = s.get("population_size", search.population_size);
    search.threads = s.get("threads", search.threads);
    search.time_limit_seconds =
        finite_non_negative(s.get("time_limit_seconds", search.time_limit_seconds), "sr.time_limit_seconds");
  }
  void apply_to(LawSearchOptions& o) const {
    o.galaxies = shared_.galaxies;
    o.galaxy_rows = shared_.galaxy_rows;
    o.nearest_rows = shared_.nearest_rows;
    o.observable_only = shared_.observable_only;
    o.confidence = shared_.confidence;
    o.search.restarts = shared_.search.restarts;
    o.search.iterations = shared_.search.iterations;
    o.search.populations = shared_.search.populations;
    o.search.population_size = shared_.search.population_size;
    o.search.threads = shared_.search.threads;
    o.search.time_limit_seconds = shared_.search.time_limit_seconds;
  }

 private:
  LawSearchOptions shared_ = published_protocol();
};

void read_law_searches(ConfigReader& s, ProbeRunConfig& c) {
  c.sr_probes = s.get("probes", c.probes);
  for (const auto& p : c.sr_probes) {
    if (!contains(c.probes, p))
      throw Error("probe config: sr.probes names '" + p + "', which is not among 'probes'");
  }
  const auto protocols = s.get("protocols", std::vector<std::string>{"published", "extended"});
  SharedLawSearchKeys shared(c.threads);
  shared.read(s);
  for (const auto& name : protocols) {
    LawSearchOptions defaults;
    if (name == "published") {
      defaults = published_protocol();
    } else if (name == "extended") {
      defaults = extended_protocol();
    } else {
      throw Error("probe config: unknown sr protocol '" + name + "' (known: published, extended)");
    }
    shared.apply_to(defaults);
    ConfigReader section = s.section(name);
    LawSearchOptions options = law_search_options_from_config(section, defaults);
    options.seed = c.seed;
    section.finish();
    s.set_resolved(name, section.resolved());
    c.law_searches.push_back(options);
  }
  // Sections of protocols not run must still be known keys.
  for (const char* name : {"published", "extended"}) {
    if (!contains(protocols, name) && s.has(name)) s.section(name);
  }
}

}  // namespace

const std::vector<std::string>& known_probes() {
  static const std::vector<std::string> names = {"finetune",  "linear",           "linear_vector",
                                                 "raw_input", "raw_input_vector", "knn",
                                                 "knn_log",   "newton",           "random"};
  return names;
}

ProbeRunConfig ProbeRunConfig::from_config(const Json& config, bool use_model) {
  ProbeRunConfig c;
  ConfigReader reader(config, "probe config");
  c.seed = reader.get<std::uint64_t>("seed", c.seed);
  c.threads = reader.get("threads", c.threads);
  require_thread_count("probe config: 'threads' (0: OMP_NUM_THREADS or every core)", c.threads, 0);
  c.threads = resolve_thread_count(c.threads);  // the count in use is what the provenance records
  c.device = reader.get<std::string>("device", c.device);
  c.time_limit_seconds =
      finite_non_negative(reader.get<double>("time_limit_seconds", 0.0), "time_limit_seconds");
  c.label = reader.get<std::string>("label", c.label);
  const auto task = reader.get<std::string>("task", "magnitude");
  if (task != "magnitude" && task != "vector")
    throw Error("probe config: unknown task '" + task + "' (known: magnitude, vector)");
  c.vector_task = task == "vector";
  c.probes = read_probes(reader, use_model, c.vector_task);
  // What the probes predict: the force (Vafa et al.) or the planet's acceleration (docs/design.md section 6).
  c.target = parse_probe_target(reader.get<std::string>("target", "force"));
  if (c.vector_task && c.target != ProbeTarget::kForce)
    throw Error(
        "probe config: target 'acceleration' applies to the magnitude task; task vector predicts forces");
  c.split.target = c.target;
  read_section(reader, "split", [&](ConfigReader& s) { read_split(s, c.split); });
  c.split.seed = c.seed;
  read_section(reader, "vector", [&](ConfigReader& s) { read_vector_split(s, c.vector_split); });
  read_section(reader, "finetune", [&](ConfigReader& s) { read_finetune(s, c.finetune); });
  c.finetune.seed = c.seed;
  c.finetune.threads = c.threads;
  read_section(reader, "linear", [&](ConfigReader& s) { read_linear(s, c.linear); });
  c.linear.threads = c.threads;
  read_section(reader, "knn", [&](ConfigReader& s) {
    c.knn.k = s.get("k", c.knn.k);
    c.knn.state = s.get("state", c.knn.state);
  });
  c.knn.threads = c.threads;
  c.knn_log = c.knn;
  c.knn_log.state = log_knn_state();
  read_section(reader, "random", [&](ConfigReader& s) {
    c.random_features.features = s.get("features", c.random_features.features);
    if (c.random_features.features < 1) throw Error("probe config: 'random.features' must be >= 1");
  });
  c.random_features.seed = c.seed;
  read_section(reader, "raw_input", [&](ConfigReader& s) {
    c.raw_input.window = s.get("window", c.raw_input.window);
    if (c.raw_input.window < 1 || c.raw_input.window > 64)
      throw Error("probe config: 'raw_input.window' must lie in [1, 64]");
    c.raw_input.lambdas = s.get("lambdas", c.raw_input.lambdas);
    c.raw_input.target = TargetScaler::parse_kind(s.get<std::string>("target", "log"));
  });
  read_section(reader, "labels", [&](ConfigReader& s) {
    const Json exponent = s.get<Json>("law_exponent", nullptr);
    if (!exponent.is_null()) {
      if (!exponent.is_number() || !(exponent.get<double>() > 0 && exponent.get<double>() <= 10))
        throw Error("probe config: 'labels.law_exponent' must be null or a number in (0, 10], got " +
                    exponent.dump());
      c.labels.law_exponent = exponent.get<double>();
    }
    c.labels.shuffle = s.get("shuffle", c.labels.shuffle);
  });
  c.labels.seed = c.seed;
  if (c.labels.active() && c.vector_task)
    throw Error("probe config: 'labels' controls apply to the magnitude task, not task vector");
  c.observable_bin_width = reader.get<double>("observable_bin_width", c.observable_bin_width);
  if (!std::isfinite(c.observable_bin_width) ||
      (c.observable_bin_width < 0 && c.observable_bin_width != -1.0))
    throw Error("probe config: 'observable_bin_width' must be a finite number >= 0");
  c.allow_distribution_shift = reader.get("allow_distribution_shift", c.allow_distribution_shift);
  c.max_outside_fraction = reader.get<double>("max_outside_range_fraction", c.max_outside_fraction);
  if (!(c.max_outside_fraction >= 0 && c.max_outside_fraction <= 1))
    throw Error("probe config: 'max_outside_range_fraction' must lie in [0, 1]");
  read_section(reader, "sr", [&](ConfigReader& s) { read_law_searches(s, c); });
  reader.finish();
  c.resolved = reader.resolved();
  c.resolved["threads"] = c.threads;  // the count in use, not the 0 that asked for the machine's share
  return c;
}

}  // namespace orbitlaw::probe::detail
