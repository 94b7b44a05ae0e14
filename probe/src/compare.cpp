#include "orbitlaw/probe/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/probe/law_search.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "orbitlaw/probe/statistics.hpp"

// compare.json layout:
//   {"newton": {"target": "force" | "acceleration", "law": "C*m1*m2/r^2" (or "C*m2/r^2"), "G": 39.478...,
//               "exponents": [1, 1, -2] (or [0, 1, -2])},
//    "rows": [{"model", "run", "probe", "protocol" (null without a law search), "test_rows",
//              "observable_fraction", "r2", "relative_error" {median, mean, p90}, "power_law" {...},
//              "exponents" {a, b, e: [est, lo, hi]}, "exponents_cover_newton", "galaxies": [{"galaxy", "law",
//              "complexity", "loss", "newton", "verdicts" {srbench, strict, exponents, exponent_fit, ...},
//              "c_over_g", "heldout_relative_error"}], "newton_recovered" (srbench), "tiers" {srbench,
//              strict, exponents: galaxies}, "galaxy_count", "distinct_laws", "law_spread",
//              "heldout_relative_error", "verdict"}]}
// Laws are read from each galaxy's stored exact expression (17 significant digits), not its printed text.
namespace orbitlaw::probe {

namespace {

double nan() { return std::numeric_limits<double>::quiet_NaN(); }

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

double median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  if (values.empty()) return nan();
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Json read_sr_json(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "sr.json").string();
  if (!std::filesystem::exists(path)) return Json::object();
  std::ifstream in(path);
  try {
    return Json::parse(in);
  } catch (const Json::parse_error&) {
    throw Error(path + ": not valid JSON");
  }
}

// Searches of sr.json: the "searches" list, or a single legacy search given only as "galaxies".
std::vector<Json> searches_of(const Json& sr) {
  std::vector<Json> out;
  if (sr.contains("searches")) {
    for (const auto& s : sr["searches"]) out.push_back(s);
  } else if (sr.contains("galaxies")) {
    out.push_back(Json{{"probe", sr.value("probe", "finetune")},
                       {"protocol", sr.value("protocol", "published")},
                       {"galaxies", sr["galaxies"]}});
  }
  return out;
}

Json probe_row(const std::string& model, const std::string& dir, const Predictions& predictions,
               const std::string& probe, double confidence) {
  const auto& truth = predictions.rows.force;
  const auto& predicted = predictions.prediction(probe);
  Json row{
      {"model", model}, {"run", dir}, {"probe", probe}, {"protocol", nullptr}, {"test_rows", truth.size()}};
  row["observable_fraction"] = number(predictions.observable_fraction());
  row["observable_bin_width"] = predictions.observable_bin_width;
  row["r2"] = number(r_squared(truth, predicted));
  row["relative_error"] = relative_error(truth, predicted).json();
  try {
    const auto fit =
        fit_power_law(predictions.rows.r, predictions.rows.m1, predictions.rows.m2, predicted, confidence);
    row["power_law"] = fit.json();
    row["exponents"] = Json{{"a", {fit.a(), fit.ci_low[1], fit.ci_high[1]}},
                            {"b", {fit.b(), fit.ci_low[2], fit.ci_high[2]}},
                            {"e", {fit.e(), fit.ci_low[3], fit.ci_high[3]}}};
    const NewtonLaw newton = newton_law(predictions.target);
    row["exponents_cover_newton"] = fit.consistent_with(newton.a, newton.b, newton.e);
  } catch (const Error& e) {
    row["power_law"] = Json{{"error", e.what()}};
    row["exponents"] = nullptr;
    row["exponents_cover_newton"] = false;
  }
  row["galaxies"] = Json::array();
  row["newton_recovered"] = 0;
  row["tiers"] = Json{{"srbench", 0}, {"strict", 0}, {"exponents", 0}};
  row["galaxy_count"] = 0;
  row["verdict"] = "no law search";
  return row;
}

// Adds the law-search measures of `search` to a copy of `base`.
Json law_row(Json row, const Predictions& predictions, const std::string& probe, const Json& search,
             double confidence) {
  const Eigen::VectorXd& predicted = predictions.prediction(probe);
  row["protocol"] = search.value("protocol", "published");
  const auto& rows = predictions.rows;
  const Eigen::MatrixXd all_inputs = law_inputs(rows);
  const auto n = rows.size();
  Json galaxies = Json::array();
  int recovered = 0, strict = 0, exponents = 0;
  std::set<std::string> distinct;
  std::vector<Eigen::VectorXd> law_values;
  std::vector<double> heldout_errors;
  std::vector<double> c_over_g;
  for (const auto& g : search.value("galaxies", Json::array())) {
    const std::string law = g.contains("best") ? g["best"].value("expression", "") : g.value("law", "");
    if (law.empty()) continue;
    // The stored expression at full precision: re-parsing 6-digit text could move a law across the rounding
    // edge of the srbench tier.
    const std::string exact = g.contains("best") ? g["best"].value("exact", law) : law;
    std::vector<std::int64_t> indices = g.value("rows", std::vector<std::int64_t>{});
    std::vector<char> in_galaxy(n, 0);
    for (auto i : indices) {
      if (i < 0 || i >= n)
        throw Error("sr.json: galaxy row " + std::to_string(i) + " outside the predictions");
      in_galaxy[i] = 1;
    }
    const sr::Expr expr = sr::parse(exact, law_variables());
    const Eigen::MatrixXd points = indices.empty() ? all_inputs : law_inputs(rows, indices);
    Eigen::VectorXd searched(points.rows());
    for (Eigen::Index i = 0; i < searched.size(); ++i)
      searched[i] = predicted[indices.empty() ? i : indices[static_cast<std::size_t>(i)]];
    const GalaxyVerdicts verdicts = galaxy_verdicts(expr, points, searched, confidence, predictions.target);
    const NewtonVerdict& verdict = verdicts.law;
    // Held out: every test row outside this galaxy; the law against the TRUE force there.
    const Eigen::VectorXd values = expr.evaluate(all_inputs).matrix();
    std::vector<double> errors;
    for (std::int64_t i = 0; i < n; ++i) {
      if (!in_galaxy[i]) errors.push_back(std::abs(values[i] - rows.force[i]) / std::abs(rows.force[i]));
    }
    const double heldout = median(errors);
    recovered += verdict.equivalent;
    strict += verdict.strict;
    exponents += verdicts.exponents;
    if (verdict.equivalent) c_over_g.push_back(verdict.c_over_g);
    distinct.insert(sr::simplify(sr::round_constants(expr, 3)).text(law_variables(), 3));
    law_values.push_back(values);
    heldout_errors.push_back(heldout);
    galaxies.push_back(Json{
        {"galaxy", g.value("galaxy", static_cast<int>(galaxies.size()))},
        {"law", law},
        {"complexity", g.contains("best") ? g["best"].value("complexity", 0) : 0},
        {"loss", g.contains("best") ? g["best"].value("loss", nan()) : nan()},
        {"newton", verdict.equivalent},
        {"verdicts", verdicts.json()},
        {"relation", verdict.relation},
        {"c_over_g", number(verdict.equivalent ? verdict.c_over_g : nan())},
        {"heldout_relative_error", number(heldout)},
        // The law's own r exponent with its bootstrap interval (sr.json of this version on).
        {"law_r_exponent", g.contains("law_bootstrap") ? g["law_bootstrap"]["r_exponent"] : Json(nullptr)}});
  }
  // Agreement across galaxies: per test row, the spread (max - min) of the galaxies' laws relative to the
  // true force, then the median over rows. 0 when every galaxy found the same function.
  double spread = nan();
  if (law_values.size() >= 2) {
    std::vector<double> per_row;
    for (std::int64_t i = 0; i < n; ++i) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (const auto& v : law_values) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
      }
      per_row.push_back((hi - lo) / std::abs(rows.force[i]));
    }
    spread = median(per_row);
  }
  const int count = static_cast<int>(galaxies.size());
  row["galaxies"] = galaxies;
  row["newton_recovered"] = recovered;
  row["tiers"] = Json{{"srbench", recovered}, {"strict", strict}, {"exponents", exponents}};
  row["galaxy_count"] = count;
  row["distinct_laws"] = static_cast<int>(distinct.size());
  row["law_spread"] = number(spread);
  row["heldout_relative_error"] = number(median(heldout_errors));
  row["c_over_g"] = number(median(c_over_g));
  if (search.contains("skipped")) row["law_search_skipped"] = search["skipped"];
  row["verdict"] =
      count == 0 && search.contains("skipped") ? "law search skipped: " + search["skipped"].get<std::string>()
      : count == 0                             ? std::string("no law search")
      : recovered == count                     ? "Newton recovered in every galaxy"
      : recovered == 0
          ? std::string("not Newton")
          : "Newton in " + std::to_string(recovered) + " of " + std::to_string(count) + " galaxies";
  return row;
}

std::string fmt_number(const Json& v, const char* format = "%.4g") {
  if (v.is_null()) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v.get<double>());
  return buffer;
}

// An exponent [low, high]; one the fit could not identify (its variable constant, NaN) prints as n/a.
std::string fmt_interval(const Json& v) {
  if (!v.is_array() || v.size() != 3) return "n/a";
  for (const auto& x : v)
    if (!x.is_number() || !std::isfinite(x.get<double>())) return "n/a";
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%.3f [%.3f, %.3f]", v[0].get<double>(), v[1].get<double>(),
                v[2].get<double>());
  return buffer;
}

// A law's r exponent [low, high]; a bound the bootstrap could not give (no refits) prints as n/a.
std::string fmt_exponent(const Json& v) {
  if (!v.is_array() || v.size() != 3 || !v[0].is_number()) return "n/a";
  auto part = [](const Json& x) {
    if (!x.is_number()) return std::string("n/a");
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", x.get<double>());
    return std::string(buffer);
  };
  return part(v[0]) + " [" + part(v[1]) + ", " + part(v[2]) + "]";
}

// A law in a table cell: pipes would end the cell.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return "`" + out + "`";
}

}  // namespace

Json compare_runs(const std::vector<std::string>& run_dirs, const CompareOptions& options) {
  if (run_dirs.empty()) throw Error("compare: no run folders given");
  if (!options.labels.empty() && options.labels.size() != run_dirs.size()) {
    throw Error("compare: " + std::to_string(options.labels.size()) + " labels for " +
                std::to_string(run_dirs.size()) + " run folders");
  }
  Json rows = Json::array();
  ProbeTarget target = ProbeTarget::kForce;
  std::map<std::string, std::string> folder_of_label;  // two runs under one label would share table rows
  for (std::size_t k = 0; k < run_dirs.size(); ++k) {
    const auto& dir = run_dirs[k];
    if (!std::filesystem::is_directory(dir)) throw Error("compare: run folder " + dir + " does not exist");
    // A folder left by a killed run, or whose outputs come from two runs, is refused, never mixed.
    require_complete_stage(dir, "probe");
    const Predictions predictions =
        read_predictions((std::filesystem::path(dir) / "predictions.h5").string());
    // One comparison, one Newton: a force run and an acceleration run have different laws to recover.
    if (k == 0) target = predictions.target;
    if (predictions.target != target)
      throw Error("compare: " + run_dirs[0] + " probes the " + to_string(target) + " but " + dir + " the " +
                  to_string(predictions.target) + "; compare runs of one target at a time");
    const std::string model = options.labels.empty() ? predictions.model : options.labels[k];
    if (const auto [it, fresh] = folder_of_label.emplace(model, dir); !fresh)
      throw Error("compare: " + it->second + " and " + dir + " are both labelled '" + model +
                  "'; give each its own label (--set 'labels=[...]', one per folder)");
    const auto searches = searches_of(read_sr_json(dir));
    for (const auto& probe : predictions.probe_names()) {
      const Json base = probe_row(model, dir, predictions, probe, options.confidence);
      bool any = false;
      for (const auto& search : searches) {
        if (search.value("probe", "") != probe) continue;
        rows.push_back(law_row(base, predictions, probe, search, options.confidence));
        any = true;
      }
      if (!any) rows.push_back(base);
    }
  }
  const NewtonLaw newton = newton_law(target);
  return Json{{"newton", Json{{"target", to_string(target)},
                              {"law", std::string("C*") + newton.form},
                              {"G", kGravitationalConstant},
                              {"exponents", {newton.a, newton.b, newton.e}},
                              {"confidence", options.confidence}}},
              {"rows", rows}};
}

std::string compare_markdown(const Json& comparison) {
  // Newton's law for the compared target (comparisons before targets existed are force comparisons).
  const Json& newton = comparison["newton"];
  const std::string target = newton.value("target", "force");
  const bool force = target == "force";
  const std::string law = force ? "C·m1·m2/r²" : "C·m2/r²";
  const std::string triple = force ? "(1, 1, -2)" : "(0, 1, -2)";
  std::string md;
  md += "## Probe accuracy and power-law exponents\n\n";
  md += "Target: the " + std::string(force ? "force on the planet" : "planet's acceleration") +
        ". Power-law fit ln F = c + a ln m1 + b ln m2 + e ln r of each probe's predicted " + target +
        " on the test rows; Newton: (a, b, e) = " + triple + ". Intervals are 95% confidence intervals.\n\n";
  md += "| model | probe | test rows | observable | R² | median rel. error | a | b | e | covers " + triple +
        " |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|\n";
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& row : comparison["rows"]) {
    const auto key = std::make_pair(row["model"].get<std::string>(), row["probe"].get<std::string>());
    if (!seen.insert(key).second) continue;
    const auto& ex = row["exponents"];
    md += "| " + key.first + " | " + key.second + " | " + std::to_string(row["test_rows"].get<long long>()) +
          " | " + fmt_number(row.value("observable_fraction", Json(nullptr)), "%.3f") + " | " +
          fmt_number(row["r2"]) + " | " + fmt_number(row["relative_error"]["median"]) + " | " +
          (ex.is_null() ? "n/a" : fmt_interval(ex["a"])) + " | " +
          (ex.is_null() ? "n/a" : fmt_interval(ex["b"])) + " | " +
          (ex.is_null() ? "n/a" : fmt_interval(ex["e"])) + " | " +
          (row["exponents_cover_newton"].get<bool>() ? "yes" : "no") + " |\n";
  }
  md += "\n## Recovered " + target + " laws against Newton (" + law + ", G = 4π² ≈ 39.48)\n\n";
  md +=
      "Galaxies recovering Newton in each verdict tier: srbench, the selected law equals " + law +
      " for a constant C > 0 (SRBench rule: constants rounded to 3 significant digits); strict, srbench with "
      "C within 5% of G; exponents, the power-law fit of the galaxy's predictions has 95% intervals "
      "containing " +
      triple +
      ". C/G: median over srbench galaxies. Held-out error: median relative error of the law against the "
      "true " +
      target +
      " on the test rows outside its galaxy (median over galaxies). Spread: median over test rows of (max - "
      "min) of the galaxies' laws relative to the true " +
      target + ".\n\n";
  md +=
      "| model | probe | protocol | srbench | strict | exponents | C/G | held-out rel. error | distinct laws "
      "| "
      "spread | verdict |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : comparison["rows"]) {
    if (row["protocol"].is_null()) continue;
    md += "| " + row["model"].get<std::string>() + " | " + row["probe"].get<std::string>() + " | " +
          row["protocol"].get<std::string>() + " | " + std::to_string(row["newton_recovered"].get<int>()) +
          "/" + std::to_string(row["galaxy_count"].get<int>()) + " | " +
          std::to_string(row["tiers"]["strict"].get<int>()) + "/" +
          std::to_string(row["galaxy_count"].get<int>()) + " | " +
          std::to_string(row["tiers"]["exponents"].get<int>()) + "/" +
          std::to_string(row["galaxy_count"].get<int>()) + " | " + fmt_number(row["c_over_g"]) + " | " +
          fmt_number(row["heldout_relative_error"]) + " | " +
          std::to_string(row["distinct_laws"].get<int>()) + " | " + fmt_number(row["law_spread"]) + " | " +
          row["verdict"].get<std::string>() + " |\n";
  }
  md += "\n## Law per galaxy\n\n";
  md +=
      "| model | probe | protocol | galaxy | law | law's r exponent [bootstrap] | srbench | strict | "
      "exponent e [95%] | exponents | held-out rel. error |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : comparison["rows"]) {
    if (row["protocol"].is_null()) continue;
    for (const auto& g : row["galaxies"]) {
      const Json& v = g["verdicts"];
      const Json fit = v["exponent_fit"].is_object() ? v["exponent_fit"] : Json::object();
      md += "| " + row["model"].get<std::string>() + " | " + row["probe"].get<std::string>() + " | " +
            row["protocol"].get<std::string>() + " | " + std::to_string(g["galaxy"].get<int>()) + " | " +
            cell(g["law"].get<std::string>()) + " | " +
            fmt_exponent(g.value("law_r_exponent", Json(nullptr))) + " | " +
            (g["newton"].get<bool>() ? "yes" : "no") + " | " + (v["strict"].get<bool>() ? "yes" : "no") +
            " | " + (fit.contains("e") ? fmt_interval(fit["e"]) : std::string("n/a")) + " | " +
            (v["exponents"].get<bool>() ? "yes" : "no") + " | " + fmt_number(g["heldout_relative_error"]) +
            " |\n";
    }
  }
  return md;
}

}  // namespace orbitlaw::probe
