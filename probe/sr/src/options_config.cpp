// The search options' config keys: one vocabulary for `orbitlaw sr` and the probe's law searches.
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

std::vector<std::string> name_list(const Json& value, const std::string& key) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& v : value) {
      if (!v.is_string()) throw Error(key + " must list names (got " + value.dump() + ")");
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  if (!value.is_string())
    throw Error(key + " must be a comma-separated string or a list of names (got " + value.dump() + ")");
  std::stringstream stream(value.get<std::string>());
  std::string item;
  while (std::getline(stream, item, ',')) {
    auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

const ConfigSchema<Options>& options_schema() {
  static const auto schema =
      ConfigSchema<Options>()
          .custom(
              "operators", &Options::operators,
              [](const Json& value, const std::string& where) {
                auto names = name_list(value, where);
                if (names.empty()) throw Error(where + " is empty");
                return names;
              },
              [](const std::vector<std::string>& names) { return Json(names); }, "list of strings",
              "a list or \"a,b,c\" of: " + schema_detail::join_choices(all_operator_names()),
              "the operators expressions are built from")
          .choice("loss", &Options::loss,
                  std::vector<std::pair<LossKind, std::string>>{{LossKind::kAuto, "auto"},
                                                                {LossKind::kL2, "l2"},
                                                                {LossKind::kL1, "l1"},
                                                                {LossKind::kRelative, "relative"},
                                                                {LossKind::kLog, "log"},
                                                                {LossKind::kThresholdedL1, "thresholded_l1"}},
                  "the loss the search minimises; auto: chosen from the target's range")
          .key("max_size", &Options::max_size, "most nodes in an expression", Range::at_least(1))
          .key("max_depth", &Options::max_depth, "deepest path, leaves included", Range::at_least(1))
          .key("populations", &Options::populations, "populations evolved independently between migrations",
               Range::at_least(1))
          .key("population_size", &Options::population_size, "expressions per population", Range::at_least(2))
          .key("iterations", &Options::iterations,
               "one iteration: population_size mutations in every population", Range::at_least(1))
          .key("time_limit_seconds", &Options::time_limit_seconds,
               "wall-clock limit per search (per galaxy in a probe run); 0: none", Range::at_least(0))
          .key("target_loss", &Options::target_loss,
               "stop at this loss (or the rounding floor) once the simplest such form is stable; < 0: the "
               "floor")
          .key("target_patience", &Options::target_patience,
               "iterations the simplest form at the target loss must stay simplest", Range::at_least(0))
          .key("threads", &Options::threads, "search threads; results depend on the seed only",
               Range::between(1, kMaxThreads))
          .key("restarts", &Options::restarts, "independent searches whose fronts are merged",
               Range::at_least(1))
          .key("constant_restarts", &Options::constant_restarts,
               "extra Levenberg-Marquardt starts from perturbed constants", Range::at_least(0))
          .key("optimizer_iterations", &Options::optimizer_iterations,
               "Levenberg-Marquardt iterations per start", Range::at_least(0))
          .key("batch_size", &Options::batch_size, "rows constants are fitted on; 0: all", Range::at_least(0))
          .key("tournament_size", &Options::tournament_size, "expressions per selection tournament",
               Range::at_least(1))
          .key("parsimony", &Options::parsimony, "selection pressure per node", Range::at_least(0))
          .key("migration_fraction", &Options::migration_fraction,
               "share of each population replaced by hall-of-fame members per iteration",
               Range::between(0, 1))
          .key("holdout_fraction", &Options::holdout_fraction,
               "share of rows held out to choose the best expression on; 0: never", Range::from_below(0, 1))
          .key("holdout_min_rows", &Options::holdout_min_rows, "fewer rows than this: none held out",
               Range::at_least(0))
          .key("holdout_patience", &Options::holdout_patience,
               "iterations without a held-out gain before a restart stops; 0: never", Range::at_least(0))
          .key("structured_below", &Options::structured_below,
               "under a time limit, a held-out plateau whose best residual has a nearest-neighbour variance "
               "ratio below this (noise: about 1) is a law not found, and restarts go on; 0: never",
               Range::between(0, 1));
  return schema;
}

void read_options(ConfigReader& reader, Options& o) { o = options_schema().read_keys(reader, o); }

}  // namespace orbitlaw::sr
