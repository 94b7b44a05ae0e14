// The search options' config keys: one vocabulary for `orbitlaw sr` and the probe's law searches.
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

std::vector<std::string> name_list(const Json& value, const std::string& key) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& v : value) {
      if (!v.is_string()) throw Error("config: '" + key + "' must list names, got " + value.dump());
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  if (!value.is_string()) throw Error("config: '" + key + "' must be a comma-separated string or a list");
  std::stringstream stream(value.get<std::string>());
  std::string item;
  while (std::getline(stream, item, ',')) {
    auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

void read_options(ConfigReader& reader, Options& o) {
  o.operators = name_list(reader.get<Json>("operators", Json(o.operators)), "operators");
  o.loss = parse_loss_kind(reader.get<std::string>("loss", to_string(o.loss)));
  o.max_size = reader.get("max_size", o.max_size);
  o.max_depth = reader.get("max_depth", o.max_depth);
  o.populations = reader.get("populations", o.populations);
  o.population_size = reader.get("population_size", o.population_size);
  o.iterations = reader.get("iterations", o.iterations);
  o.time_limit_seconds = reader.get("time_limit_seconds", o.time_limit_seconds);
  o.target_loss = reader.get("target_loss", o.target_loss);
  o.target_patience = reader.get("target_patience", o.target_patience);
  o.threads = reader.get("threads", o.threads);
  o.restarts = reader.get("restarts", o.restarts);
  o.constant_restarts = reader.get("constant_restarts", o.constant_restarts);
  o.optimizer_iterations = reader.get("optimizer_iterations", o.optimizer_iterations);
  o.batch_size = reader.get("batch_size", o.batch_size);
  o.tournament_size = reader.get("tournament_size", o.tournament_size);
  o.parsimony = reader.get("parsimony", o.parsimony);
  o.migration_fraction = reader.get("migration_fraction", o.migration_fraction);
  o.holdout_fraction = reader.get("holdout_fraction", o.holdout_fraction);
  o.holdout_min_rows = reader.get("holdout_min_rows", o.holdout_min_rows);
  o.holdout_patience = reader.get("holdout_patience", o.holdout_patience);
}

}  // namespace orbitlaw::sr
