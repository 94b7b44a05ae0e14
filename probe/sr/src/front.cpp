// The Pareto front, its scores and the three model selections, and its JSON and CSV forms.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

std::string csv_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

double loss_floor(LossKind kind, double reference) {
  // kAuto resolves to a squared loss whatever the data.
  bool squared = kind != LossKind::kL1 && kind != LossKind::kThresholdedL1;
  return (squared ? 1e-24 : 1e-12) * reference;
}

Result make_front(std::vector<FrontEntry> candidates, const std::vector<std::string>& names,
                  double loss_floor) {
  // ln(0) would make scores infinite: the floor is at least the smallest normal double.
  const double floor = std::max(loss_floor, std::numeric_limits<double>::min());
  auto floored = [floor](double loss) { return std::max(loss, floor); };
  auto log_loss_floor = [&](double loss) { return std::log(floored(loss)); };
  std::map<int, FrontEntry> best_per_complexity;
  for (auto& c : candidates) {
    if (!std::isfinite(c.loss)) continue;
    auto it = best_per_complexity.find(c.complexity);
    if (it == best_per_complexity.end() || c.loss < it->second.loss)
      best_per_complexity[c.complexity] = std::move(c);
  }
  Result result;
  double best_loss = INFINITY;
  for (auto& [complexity, entry] : best_per_complexity) {
    if (!(floored(entry.loss) < best_loss)) continue;  // dominated by a simpler expression
    best_loss = floored(entry.loss);
    result.front.push_back(std::move(entry));
  }
  for (std::size_t i = 0; i < result.front.size(); ++i) {
    FrontEntry& e = result.front[i];
    if (i == 0) {
      e.score = 0;
    } else {
      const FrontEntry& prev = result.front[i - 1];
      e.score = -(log_loss_floor(e.loss) - log_loss_floor(prev.loss)) / (e.complexity - prev.complexity);
    }
    if (!e.expr.empty()) {
      if (e.text.empty()) e.text = e.expr.text(names);
      if (e.latex.empty()) e.latex = e.expr.latex(names);
      if (e.json.is_null()) e.json = e.expr.json(names);
    }
  }
  if (result.front.empty()) return result;
  const int n = static_cast<int>(result.front.size());
  result.most_accurate = n - 1;
  result.highest_score = 0;
  for (int i = 1; i < n; ++i) {
    if (result.front[i].score > result.front[result.highest_score].score) result.highest_score = i;
  }
  // With held-out losses: the one-standard-error rule, the simplest entry within one standard error of the
  // lowest held-out loss.
  int lowest = -1;
  for (int i = 0; i < n; ++i) {
    const double h = result.front[i].holdout_loss;
    if (std::isfinite(h) && (lowest < 0 || floored(h) < floored(result.front[lowest].holdout_loss)))
      lowest = i;
  }
  if (lowest >= 0) {
    const double se = result.front[lowest].holdout_loss_se;
    const double limit = floored(result.front[lowest].holdout_loss) + (std::isfinite(se) ? se : 0);
    for (int i = 0; i <= lowest && result.best < 0; ++i) {
      const double h = result.front[i].holdout_loss;
      if (std::isfinite(h) && floored(h) <= limit) result.best = i;
    }
    result.selection = "holdout";
    return result;
  }
  // PySR's "best": highest score among the entries within 1.5x of the lowest loss.
  const double threshold = 1.5 * floored(result.front.back().loss);
  for (int i = 0; i < n; ++i) {
    if (floored(result.front[i].loss) > threshold) continue;
    if (result.best < 0 || result.front[i].score > result.front[result.best].score) result.best = i;
  }
  return result;
}

Json result_json(const Result& result) {
  Json front = Json::array();
  for (const auto& e : result.front) {
    front.push_back({{"complexity", e.complexity},
                     {"loss", e.loss},
                     {"holdout_loss", finite_or_null(e.holdout_loss)},
                     {"holdout_loss_se", finite_or_null(e.holdout_loss_se)},
                     {"score", e.score},
                     {"text", e.text},
                     {"latex", e.latex},
                     {"expression", e.json}});
  }
  return {{"front", front},
          {"loss", to_string(result.loss)},
          {"loss_chosen_by", result.loss_auto ? "auto" : "options"},
          {"notices", result.notices},
          {"best", result.best},
          {"selection", result.selection},
          {"holdout_rows", result.holdout_rows},
          {"highest_score", result.highest_score},
          {"most_accurate", result.most_accurate},
          {"iterations_run", result.iterations_run},
          {"restarts_run", result.restarts_run},
          {"stop_reason", result.stop_reason},
          {"seconds", result.seconds},
          {"evaluations", result.evaluations}};
}

std::string result_csv(const Result& result) {
  std::string out = "complexity,loss,holdout_loss,score,selection,expression\n";
  for (int i = 0; i < static_cast<int>(result.front.size()); ++i) {
    const auto& e = result.front[i];
    std::string selection;
    if (i == result.best) selection += "best ";
    if (i == result.highest_score) selection += "score ";
    if (i == result.most_accurate) selection += "accuracy ";
    if (!selection.empty()) selection.pop_back();
    out.append(std::to_string(e.complexity)).append(",").append(number(e.loss)).append(",");
    out.append(std::isfinite(e.holdout_loss) ? number(e.holdout_loss) : "").append(",");
    out.append(number(e.score))
        .append(",")
        .append(selection)
        .append(",")
        .append(csv_quote(e.text))
        .append("\n");
  }
  return out;
}

}  // namespace orbitlaw::sr
