// orbitlaw sr: symbolic regression, find a formula y = f(x...) in a data file (CSV with a header row, or HDF5
// with 1-D datasets named by the columns). Prints the Pareto front and the three selections; with --out
// PREFIX writes PREFIX.front.json and PREFIX.front.csv atomically, with provenance beside them.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>

#include "cli_common.hpp"
#include "orbitlaw/atomic_file.hpp"
#include "orbitlaw/error.hpp"
#include "orbitlaw/provenance.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::cli {
namespace {

struct SrFlags {
  std::string data, x, y, weights, out, operators, loss, target, check;
  double zero_below = 0;
  int max_size = 0, threads = 0, iterations = 0;
  std::uint64_t seed = 0;
  double time_limit = -1;
};

// "a,b,c" or a JSON array of strings.
std::vector<std::string> string_list(const Json& value, const std::string& key) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& v : value) {
      if (!v.is_string()) throw Error("sr config: '" + key + "' must list names, got " + value.dump());
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  if (!value.is_string()) throw Error("sr config: '" + key + "' must be a comma-separated string or a list");
  std::stringstream stream(value.get<std::string>());
  std::string item;
  while (std::getline(stream, item, ',')) {
    auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

std::string format_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

void print_front(const sr::Result& result) {
  std::printf("%10s  %-11s  %-11s  %-9s  %s\n", "complexity", "loss", "held-out", "score", "expression");
  for (int i = 0; i < static_cast<int>(result.front.size()); ++i) {
    const auto& e = result.front[i];
    std::string marks;
    if (i == result.best) marks += " best";
    if (i == result.highest_score) marks += " score";
    if (i == result.most_accurate) marks += " accuracy";
    std::printf("%10d  %-11s  %-11s  %-9s  %s%s%s\n", e.complexity, format_number(e.loss).c_str(),
                std::isnan(e.holdout_loss) ? "-" : format_number(e.holdout_loss).c_str(),
                format_number(e.score).c_str(), e.text.c_str(), marks.empty() ? "" : "   <-", marks.c_str());
  }
  if (result.selection == "holdout") {
    std::printf(
        "selection: best is the simplest within one standard error of the lowest held-out loss (%d "
        "rows held out)\n",
        result.holdout_rows);
  }
  auto line = [&](const char* label, int index) {
    if (index >= 0) std::printf("%-9s %s\n", label, result.front[index].text.c_str());
  };
  line("best:", result.best);
  line("score:", result.highest_score);
  line("accuracy:", result.most_accurate);
}

}  // namespace

void add_sr_command(CLI::App& app) {
  auto* sub = app.add_subcommand("sr", "Symbolic regression: find a formula y = f(x...) in a data file");
  auto& options = add_config_options(sub);
  static SrFlags flags;
  sub->add_option("--data", flags.data, "CSV (header row) or HDF5 (1-D datasets) file");
  sub->add_option("--x", flags.x, "input columns, comma-separated (e.g. r,m1,m2)");
  sub->add_option("--y", flags.y, "target column");
  sub->add_option("--weights", flags.weights, "optional column of row weights");
  sub->add_option("--out", flags.out, "write PREFIX.front.json and PREFIX.front.csv");
  sub->add_option("--operators", flags.operators,
                  "comma-separated, from: + - * / pow neg inv abs square cube sqrt exp log sin cos");
  const auto int_range = whole_number_in(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  sub->add_option("--max-size", flags.max_size, "largest expression (nodes)")->check(int_range);
  sub->add_option("--seed", flags.seed, "random seed")->check(unsigned_whole_number());
  sub->add_option("--threads", flags.threads, "worker threads")->check(int_range);
  sub->add_option("--time-limit", flags.time_limit, "seconds (0: none)");
  sub->add_option("--iterations", flags.iterations, "iterations")->check(int_range);
  sub->add_option(
      "--loss", flags.loss,
      "auto (default: log when y > 0 spans more than two decades, else l2), l2, l1, relative, log "
      "or thresholded_l1");
  sub->add_option(
      "--target", flags.target,
      "a law to compare with (e.g. \"m1*m2/r^2\"): is the best expression equal to it up to a constant "
      "factor or offset (SRBench's rule)?");
  sub->add_option("--check", flags.check, "skip the search; only compare this expression with --target");
  sub->add_option("--zero-below", flags.zero_below,
                  "equivalence: constants below this magnitude count as 0 (SRBench: 1e-4; default 0)");
  sub->callback([sub, &options] {
    Json config = options.load();
    // Flags win over the config file and --set.
    auto flag = [&](const char* name, const char* key, const Json& value) {
      if (sub->count(name) > 0) config[key] = value;
    };
    flag("--data", "data", flags.data);
    flag("--x", "x", flags.x);
    flag("--y", "y", flags.y);
    flag("--weights", "weights", flags.weights);
    flag("--out", "out", flags.out);
    flag("--operators", "operators", flags.operators);
    flag("--max-size", "max_size", flags.max_size);
    flag("--seed", "seed", flags.seed);
    flag("--threads", "threads", flags.threads);
    flag("--time-limit", "time_limit", flags.time_limit);
    flag("--iterations", "iterations", flags.iterations);
    flag("--loss", "loss", flags.loss);
    flag("--target", "target", flags.target);
    flag("--zero-below", "zero_below", flags.zero_below);

    ConfigReader reader(config, "sr config");
    sr::Options o;
    const std::string data = reader.get<std::string>("data", "");
    const Json x_value = reader.get<Json>("x", Json(""));
    const std::string y_name = reader.get<std::string>("y", "");
    const std::string weights_name = reader.get<std::string>("weights", "");
    const std::string out = reader.get<std::string>("out", "");
    const std::string target = reader.get<std::string>("target", "");
    sr::EquivalenceRule rule;
    rule.zero_below = reader.get<double>("zero_below", rule.zero_below);
    Json default_operators = o.operators;
    o.operators = string_list(reader.get<Json>("operators", default_operators), "operators");
    o.max_size = reader.get<int>("max_size", o.max_size);
    o.max_depth = reader.get<int>("max_depth", o.max_depth);
    o.populations = reader.get<int>("populations", o.populations);
    o.population_size = reader.get<int>("population_size", o.population_size);
    o.iterations = reader.get<int>("iterations", o.iterations);
    o.time_limit_seconds = reader.get<double>("time_limit", o.time_limit_seconds);
    o.target_loss = reader.get<double>("target_loss", o.target_loss);
    o.target_patience = reader.get<int>("target_patience", o.target_patience);
    o.threads = reader.get<int>("threads", o.threads);
    o.seed = reader.get<std::uint64_t>("seed", o.seed);
    o.loss = sr::parse_loss_kind(reader.get<std::string>("loss", sr::to_string(o.loss)));
    o.restarts = reader.get<int>("restarts", o.restarts);
    o.constant_restarts = reader.get<int>("constant_restarts", o.constant_restarts);
    o.optimizer_iterations = reader.get<int>("optimizer_iterations", o.optimizer_iterations);
    o.batch_size = reader.get<int>("batch_size", o.batch_size);
    o.tournament_size = reader.get<int>("tournament_size", o.tournament_size);
    o.parsimony = reader.get<double>("parsimony", o.parsimony);
    o.migration_fraction = reader.get<double>("migration_fraction", o.migration_fraction);
    o.holdout_fraction = reader.get<double>("holdout_fraction", o.holdout_fraction);
    o.holdout_min_rows = reader.get<int>("holdout_min_rows", o.holdout_min_rows);
    reader.finish();
    o.progress = true;

    if (data.empty()) throw Error("sr needs a data file (--data FILE)");
    const std::vector<std::string> x_names = string_list(x_value, "x");
    if (x_names.empty()) throw Error("sr needs input columns (--x a,b,c)");
    if (y_name.empty()) throw Error("sr needs a target column (--y NAME)");
    sr::validate(o);
    if (!(rule.zero_below >= 0) || !std::isfinite(rule.zero_below))
      throw Error("sr: zero_below must be finite and not negative (got " + format_number(rule.zero_below) +
                  ")");
    // A malformed --target must fail now, not after the whole search has run.
    std::optional<sr::Expr> target_law;
    if (!target.empty()) target_law = sr::parse(target, x_names);

    std::vector<std::string> columns = x_names;
    columns.push_back(y_name);
    if (!weights_name.empty()) columns.push_back(weights_name);
    const sr::Table table = sr::read_table(data, columns);
    const Eigen::Index n_x = static_cast<Eigen::Index>(x_names.size());
    const Eigen::MatrixXd X = table.columns.leftCols(n_x);
    const Eigen::VectorXd y = table.columns.col(n_x);
    Eigen::VectorXd w;
    if (!weights_name.empty()) w = table.columns.col(n_x + 1);

    if (sub->count("--check") > 0) {
      if (target.empty()) throw Error("--check needs a --target to compare with");
      const sr::Equivalence e = sr::check_equivalence(flags.check, target, x_names, X, rule);
      const Json j = {{"equivalent", e.equivalent},
                      {"relation", e.relation},
                      {"constant", e.constant},
                      {"method", e.method}};
      std::printf("equivalence: %s\n", j.dump().c_str());
      return;
    }

    const sr::Result result = sr::search(X, y, x_names, o, weights_name.empty() ? nullptr : &w);
    std::printf("sr: %lld rows, x = %s, y = %s, loss %s%s, %d iterations, %.1f s\n",
                static_cast<long long>(X.rows()),
                x_value.is_string() ? x_value.get<std::string>().c_str() : x_value.dump().c_str(),
                y_name.c_str(), sr::to_string(result.loss).c_str(),
                result.loss_auto ? " (chosen by auto)" : "", result.iterations_run, result.seconds);
    print_front(result);
    for (const auto& notice : result.notices) std::printf("notice:   %s\n", notice.c_str());
    Json equivalence;
    if (!target.empty() && result.best >= 0) {
      const sr::Equivalence e = sr::check_equivalence(result.front[result.best].expr, *target_law, X, rule);
      equivalence = {{"target", target},
                     {"equivalent", e.equivalent},
                     {"relation", e.relation},
                     {"constant", e.constant},
                     {"method", e.method}};
      std::string verdict = "not equivalent";
      if (e.equivalent) {
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, "%s %.6g (%s)", e.relation.c_str(), e.constant,
                      e.method.c_str());
        verdict = buffer;
      }
      std::printf("target:   %s -> %s\n", target.c_str(), verdict.c_str());
    }

    if (!out.empty()) {
      Json resolved = reader.resolved();
      const Json versions = library_versions();
      Json document = sr::result_json(result);
      if (!equivalence.is_null()) document["equivalence"] = equivalence;
      document["provenance"] = provenance_record("sr", resolved, o.seed, versions);
      std::filesystem::path prefix(out);
      std::filesystem::path dir =
          prefix.parent_path().empty() ? std::filesystem::path(".") : prefix.parent_path();
      std::filesystem::create_directories(dir);
      write_text_atomic(out + ".front.json", document.dump(2) + "\n");
      write_text_atomic(out + ".front.csv", sr::result_csv(result));
      write_provenance(dir.string(), "sr", resolved, o.seed, versions);
      std::printf("wrote %s.front.json, %s.front.csv\n", out.c_str(), out.c_str());
    }
  });
}

}  // namespace orbitlaw::cli
