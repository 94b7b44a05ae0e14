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
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::cli {
namespace {

struct SrFlags {
  std::string data, x, y, weights, out, operators, loss, target, check;
  double zero_below = 0;
  int significant_digits = 3;
  int max_size = 0, threads = 0, iterations = 0;
  std::uint64_t seed = 0;
  double time_limit = -1;
};

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

// What one `orbitlaw sr` run was asked, from its config (the flags merged in).
struct SrRequest {
  std::string data, y_name, weights_name, out, target;
  Json x_value = "";  // as given, for the summary line
  std::vector<std::string> x_names;
  sr::Options options;
  sr::EquivalenceRule rule;
  Json resolved;
};

// Flags win over the config file and --set.
Json merged_config(CLI::App* sub, ConfigOptions& options, const SrFlags& flags) {
  Json config = options.load();
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
  flag("--time-limit", "time_limit_seconds", flags.time_limit);
  flag("--iterations", "iterations", flags.iterations);
  flag("--loss", "loss", flags.loss);
  flag("--target", "target", flags.target);
  flag("--zero-below", "zero_below", flags.zero_below);
  flag("--significant-digits", "significant_digits", flags.significant_digits);
  return config;
}

const ConfigSchema<SrRequest>& sr_request_schema() {
  using R = SrRequest;
  static const auto schema =
      ConfigSchema<R>()
          .key("data", &R::data, "CSV with a header row, or HDF5 with 1-D datasets named by the columns")
          .custom(
              "x", &R::x_value, [](const Json& value, const std::string&) { return value; },
              [](const Json& value) { return value; }, "list of strings", "or \"a,b,c\"", "input columns")
          .key("y", &R::y_name, "target column")
          .key("weights", &R::weights_name, "column of row weights; empty: none")
          .key("out", &R::out, "output prefix: PREFIX.front.json and PREFIX.front.csv; empty: print only")
          .key("target", &R::target, "a law to compare the best expression with, e.g. \"x0*x1/x2^2\"")
          .key(
              "zero_below", [](auto& r) -> auto& { return r.rule.zero_below; },
              "target comparison: constants below this count as zero", Range::at_least(0))
          .key(
              "significant_digits", [](auto& r) -> auto& { return r.rule.significant_digits; },
              "target comparison: constants rounded to this many digits (17: as they are)",
              Range::between(1, 17))
          .key(
              "seed", [](auto& r) -> auto& { return r.options.seed; }, "searches, restarts and held-out rows")
          .include(&R::options, sr::options_schema());
  return schema;
}

}  // namespace

std::vector<KeyDoc> sr_config_keys() { return sr_request_schema().keys(SrRequest{}); }

namespace {

// Reads and checks everything before any data is read: a bad setting or a malformed --target must fail now,
// not after the whole search has run.
SrRequest read_request(const Json& config) {
  ConfigReader reader(config, "sr config");
  SrRequest r = sr_request_schema().read(reader, SrRequest{});
  r.resolved = reader.resolved();
  r.options.progress = true;
  if (r.data.empty()) throw Error("sr needs a data file (--data FILE)");
  r.x_names = sr::name_list(r.x_value, "sr config: x");
  if (r.x_names.empty()) throw Error("sr needs input columns (--x a,b,c)");
  sr::check_variable_names(r.x_names);  // before any data is read: the laws must parse back
  if (r.y_name.empty()) throw Error("sr needs a target column (--y NAME)");
  sr::validate(r.options);
  return r;
}

Json equivalence_json(const sr::Equivalence& e) {
  return {
      {"equivalent", e.equivalent}, {"relation", e.relation}, {"constant", e.constant}, {"method", e.method}};
}

// The best expression against the --target law; prints the verdict and returns it for the JSON output.
Json compare_with_target(const sr::Result& result, const SrRequest& r, const sr::Expr& target_law,
                         const Eigen::MatrixXd& X) {
  if (result.best < 0) return nullptr;
  const sr::Equivalence e = sr::check_equivalence(result.front[result.best].expr, target_law, X, r.rule);
  Json equivalence = equivalence_json(e);
  equivalence["target"] = r.target;
  std::string verdict = "not equivalent";
  if (e.equivalent) {
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%s %.6g (%s)", e.relation.c_str(), e.constant, e.method.c_str());
    verdict = buffer;
  }
  std::printf("target:   %s -> %s\n", r.target.c_str(), verdict.c_str());
  return equivalence;
}

// PREFIX.front.json (with the equivalence and provenance), PREFIX.front.csv, and the provenance record.
void write_outputs(const sr::Result& result, const SrRequest& r, const Json& equivalence) {
  const Json versions = library_versions();
  Json document = sr::result_json(result);
  if (!equivalence.is_null()) document["equivalence"] = equivalence;
  document["provenance"] = provenance_record("sr", r.resolved, r.options.seed, versions);
  const std::filesystem::path prefix(r.out);
  const std::filesystem::path dir =
      prefix.parent_path().empty() ? std::filesystem::path(".") : prefix.parent_path();
  std::filesystem::create_directories(dir);
  write_text_atomic(r.out + ".front.json", document.dump(2) + "\n");
  write_text_atomic(r.out + ".front.csv", sr::result_csv(result));
  write_provenance(dir.string(), "sr", r.resolved, r.options.seed, versions);
  std::printf("wrote %s.front.json, %s.front.csv\n", r.out.c_str(), r.out.c_str());
}

void run_sr(const SrRequest& r, const std::string& check, const std::string& config_path) {
  OutputGuard guard("sr");
  guard.input(config_path);
  guard.input(r.data);
  if (!r.out.empty() && check.empty()) {
    guard.lock_file(r.out + ".front.json");
    guard.output_file(r.out + ".front.csv");
    const std::filesystem::path dir = std::filesystem::path(r.out).parent_path();
    guard.output_file(((dir.empty() ? "." : dir) / "sr.provenance.json").string());
  }
  std::optional<sr::Expr> target_law;
  if (!r.target.empty()) target_law = sr::parse(r.target, r.x_names);
  std::vector<std::string> columns = r.x_names;
  columns.push_back(r.y_name);
  if (!r.weights_name.empty()) columns.push_back(r.weights_name);
  const sr::Table table = sr::read_table(r.data, columns);
  const Eigen::Index n_x = static_cast<Eigen::Index>(r.x_names.size());
  const Eigen::MatrixXd X = table.columns.leftCols(n_x);
  const Eigen::VectorXd y = table.columns.col(n_x);
  Eigen::VectorXd w;
  if (!r.weights_name.empty()) w = table.columns.col(n_x + 1);

  if (!check.empty()) {
    if (r.target.empty()) throw Error("--check needs a --target to compare with");
    const sr::Equivalence e = sr::check_equivalence(check, r.target, r.x_names, X, r.rule);
    std::printf("equivalence: %s\n", equivalence_json(e).dump().c_str());
    return;
  }
  const sr::Result result = sr::search(X, y, r.x_names, r.options, r.weights_name.empty() ? nullptr : &w);
  std::printf(
      "sr: %lld rows, x = %s, y = %s, loss %s%s, %d iterations in %d restart%s (stopped by: %s), %.1f s\n",
      static_cast<long long>(X.rows()),
      r.x_value.is_string() ? r.x_value.get<std::string>().c_str() : r.x_value.dump().c_str(),
      r.y_name.c_str(), sr::to_string(result.loss).c_str(), result.loss_auto ? " (chosen by auto)" : "",
      result.iterations_run, result.restarts_run, result.restarts_run == 1 ? "" : "s",
      result.stop_reason.c_str(), result.seconds);
  print_front(result);
  for (const auto& notice : result.notices) std::printf("notice:   %s\n", notice.c_str());
  const Json equivalence = target_law ? compare_with_target(result, r, *target_law, X) : Json(nullptr);
  if (!r.out.empty()) write_outputs(result, r, equivalence);
  guard.commit();
}

}  // namespace

void add_sr_command(CLI::App& app) {
  auto* sub = app.add_subcommand("sr", "Symbolic regression: find a formula y = f(x...) in a data file");
  auto& options = add_config_options(sub);
  static SrFlags flags;
  sub->add_option("--data", flags.data, "CSV (header row; - for standard input) or HDF5 (1-D datasets) file");
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
  sub->add_option("--significant-digits", flags.significant_digits,
                  "equivalence: the found law's constants are rounded to this many digits first (SRBench: 3, "
                  "the default; 17 keeps them as they are)")
      ->check(int_range);
  sub->callback([sub, &options] {
    const SrRequest request = read_request(merged_config(sub, options, flags));
    run_sr(request, sub->count("--check") > 0 ? flags.check : std::string(), options.config_path);
  });
}

}  // namespace orbitlaw::cli
