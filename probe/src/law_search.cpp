#include "orbitlaw/probe/law_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"

namespace orbitlaw::probe {

LawSearchOptions published_protocol() {
  LawSearchOptions options;
  options.protocol = "published";
  options.search.operators = {"+", "*", "sin", "cos", "exp", "inv"};
  options.search.loss = sr::LossKind::kThresholdedL1;
  options.search.max_size = 20;
  options.search.restarts = 3;
  // Constants fitted by Levenberg-Marquardt on 128-row batches (a new batch each iteration), losses measured
  // on every row, and the final hall of fame's constants refitted on every row: on 1000-row galaxies one
  // restart ran 8.5x faster (median of 5) than with fits on every row and recovered Newton as often or more
  // (bench/sr/galaxies.sh; probe/README.md "Speed of a restart").
  options.search.batch_size = 128;
  // The paper's selection, PySR's rule on a front fitted to every row of a galaxy, not the engine's default
  // choice on held-out rows (the extended protocol inherits this).
  options.search.holdout_fraction = 0;
  return options;
}

LawSearchOptions extended_protocol() {
  LawSearchOptions options = published_protocol();
  options.protocol = "extended";
  options.search.operators = {"+", "*", "/", "pow", "sin", "cos", "exp", "inv"};
  options.search.loss = sr::LossKind::kLog;
  return options;
}

const ConfigSchema<LawSearchOptions>& law_search_schema() {
  using L = LawSearchOptions;
  static const auto schema =
      ConfigSchema<L>()
          .key("galaxies", &L::galaxies, "searches, each on its own random draw of rows", Range::at_least(1))
          .key("galaxy_rows", &L::galaxy_rows, "rows per galaxy (capped by the rows available)",
               Range::at_least(1))
          .key("nearest_rows", &L::nearest_rows,
               "galaxies are drawn from this many rows nearest the training states", Range::at_least(1))
          .key("observable_only", &L::observable_only,
               "draw galaxies from rows whose visible track bends by a bin (the force is in the input)")
          .key("confidence", &L::confidence, "of the exponent intervals (the exponents tier)",
               Range::open(0, 1))
          .key("bootstrap_resamples", &L::bootstrap_resamples,
               "refits of each law's constants for their intervals; 0: none", Range::at_least(0))
          .include(&L::search, sr::options_schema());
  return schema;
}

LawSearchOptions law_search_options_from_config(ConfigReader& section, const LawSearchOptions& defaults) {
  LawSearchOptions options = law_search_schema().read_keys(section, defaults);
  sr::validate(options.search);
  return options;
}

std::vector<std::vector<std::int64_t>> draw_galaxies(const Eigen::VectorXd& nearest_distance,
                                                     const LawSearchOptions& options) {
  const auto n = static_cast<std::int64_t>(nearest_distance.size());
  if (n == 0) throw Error("law search: no test rows to draw galaxies from");
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return nearest_distance[a] < nearest_distance[b]; });
  order.resize(std::min<std::int64_t>(n, options.nearest_rows));
  const auto rows = std::min<std::int64_t>(static_cast<std::int64_t>(order.size()), options.galaxy_rows);
  std::vector<std::vector<std::int64_t>> galaxies;
  for (int g = 0; g < options.galaxies; ++g) {
    SplitMix64 rng(derive_seed(options.seed, 100 + static_cast<std::uint64_t>(g)));
    auto pool = order;
    shuffle(pool, rng);
    pool.resize(rows);
    std::sort(pool.begin(), pool.end());
    galaxies.push_back(std::move(pool));
  }
  return galaxies;
}

Json NewtonVerdict::json() const {
  return Json{{"equivalent", equivalent}, {"strict", strict},     {"relation", relation},
              {"constant", constant},     {"c_over_g", c_over_g}, {"method", method}};
}

NewtonVerdict newton_verdict(const sr::Expr& law, const Eigen::MatrixXd& points, ProbeTarget target) {
  const sr::Expr newton = sr::parse(newton_law(target).form, law_variables());
  const sr::Equivalence eq = sr::check_equivalence(law, newton, points);
  NewtonVerdict verdict;
  verdict.relation = eq.relation;
  verdict.constant = eq.constant;
  verdict.method = eq.method;
  // Only a positive constant factor is Newton's law: an offset (F = m1 m2 / r^2 + c) or an attraction with
  // the wrong sign is not.
  verdict.equivalent = eq.equivalent && eq.relation == "ratio" && eq.constant > 0;
  verdict.c_over_g = verdict.equivalent ? eq.constant / kGravitationalConstant : 0;
  verdict.strict = verdict.equivalent && std::abs(verdict.c_over_g - 1) <= kStrictConstantTolerance;
  return verdict;
}

Json exponent_intervals(const PowerLawFit& fit) {
  return Json{{"a", {fit.a(), fit.ci_low[1], fit.ci_high[1]}},
              {"b", {fit.b(), fit.ci_low[2], fit.ci_high[2]}},
              {"e", {fit.e(), fit.ci_low[3], fit.ci_high[3]}},
              {"confidence", fit.confidence},
              {"rows", fit.rows}};
}

Json GalaxyVerdicts::json() const {
  return Json{{"srbench", law.equivalent}, {"strict", law.strict},
              {"exponents", exponents},    {"c_over_g", law.equivalent ? Json(law.c_over_g) : Json(nullptr)},
              {"relation", law.relation},  {"constant", law.constant},
              {"method", law.method},      {"exponent_fit", exponent_fit}};
}

GalaxyVerdicts galaxy_verdicts(const sr::Expr& law, const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                               double confidence, ProbeTarget target) {
  GalaxyVerdicts out;
  out.law = newton_verdict(law, X, target);
  try {
    const PowerLawFit fit = fit_power_law(X.col(0), X.col(1), X.col(2), y, confidence);
    const NewtonLaw newton = newton_law(target);
    out.exponents = fit.consistent_with(newton.a, newton.b, newton.e);
    out.exponent_fit = exponent_intervals(fit);
  } catch (const Error& e) {
    out.exponent_fit = Json{{"error", e.what()}};  // e.g. fewer than 5 positive rows: no tier verdict
  }
  return out;
}

double law_r_exponent(const sr::Expr& law, const Eigen::MatrixXd& X) {
  constexpr double kStep = 1e-4;  // in ln r: truncation error ~1e-8 relative, rounding ~1e-12
  Eigen::MatrixXd up = X, down = X;
  up.col(0) *= std::exp(kStep);
  down.col(0) *= std::exp(-kStep);
  const Eigen::ArrayXd above = law.evaluate(up), below = law.evaluate(down);
  std::vector<double> slopes;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    const double a = above[i], b = below[i];
    if (std::isfinite(a) && std::isfinite(b) && a * b > 0)
      slopes.push_back((std::log(std::abs(a)) - std::log(std::abs(b))) / (2 * kStep));
  }
  if (slopes.empty() || 2 * slopes.size() < static_cast<std::size_t>(X.rows())) return NAN;
  const auto middle = slopes.begin() + static_cast<std::ptrdiff_t>(slopes.size() / 2);
  std::nth_element(slopes.begin(), middle, slopes.end());
  return *middle;
}

namespace {

// The selected law's bootstrap and the interval of its r exponent over the refits.
void bootstrap_law(GalaxyLaw& galaxy, const sr::Expr& law, const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                   const LawSearchOptions& options, std::uint64_t seed) {
  galaxy.r_exponent = law_r_exponent(law, X);
  if (options.bootstrap_resamples == 0) return;
  galaxy.bootstrap = sr::bootstrap_constants(law, X, y, galaxy.result.loss, options.bootstrap_resamples,
                                             options.confidence, seed);
  std::vector<double> exponents;
  for (const sr::Expr& refit : galaxy.bootstrap.refits) {
    const double e = law_r_exponent(refit, X);
    if (std::isfinite(e)) exponents.push_back(e);
  }
  // A law without constants has no refits; its exponent is fixed by its form.
  if (law.constant_count() == 0 && std::isfinite(galaxy.r_exponent)) exponents = {galaxy.r_exponent};
  std::tie(galaxy.r_exponent_low, galaxy.r_exponent_high) =
      sr::percentile_interval(std::move(exponents), options.confidence);
  galaxy.bootstrap.refits.clear();  // only the intervals are kept
}

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json bootstrap_json(const GalaxyLaw& g) {
  Json constants = Json::array();
  for (const auto& c : g.bootstrap.constants)
    constants.push_back({number_or_null(c.value), number_or_null(c.low), number_or_null(c.high)});
  return Json{
      {"r_exponent",
       {number_or_null(g.r_exponent), number_or_null(g.r_exponent_low), number_or_null(g.r_exponent_high)}},
      {"constants", constants},
      {"bootstrap", Json{{"resamples", g.bootstrap.resamples},
                         {"failed", g.bootstrap.failed},
                         {"confidence", g.bootstrap.confidence}}}};
}

}  // namespace

NewtonVerdict newton_verdict(const std::string& law, const Eigen::MatrixXd& points, ProbeTarget target) {
  return newton_verdict(sr::parse(law, law_variables()), points, target);
}

Eigen::MatrixXd law_inputs(const ForceRows& rows, const std::vector<std::int64_t>& indices) {
  const auto n = indices.empty() ? rows.size() : static_cast<std::int64_t>(indices.size());
  Eigen::MatrixXd X(n, 3);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto j = indices.empty() ? i : indices[i];
    X(i, 0) = rows.r[j];
    X(i, 1) = rows.m1[j];
    X(i, 2) = rows.m2[j];
  }
  return X;
}

LawSearch search_laws(const Predictions& predictions, const std::string& probe,
                      const LawSearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Eigen::VectorXd& predicted = predictions.prediction(probe);
  sr::validate(options.search);
  // Rows the loss can use: finite predictions, and positive ones for a log-space loss; observable ones unless
  // told otherwise.
  const bool needs_positive = options.search.loss == sr::LossKind::kLog;
  Eigen::VectorXd distance = predictions.nearest_train_distance;
  std::int64_t usable = 0;
  for (Eigen::Index i = 0; i < distance.size(); ++i) {
    const bool ok = std::isfinite(predicted[i]) && (!needs_positive || predicted[i] > 0) &&
                    (!options.observable_only || predictions.observable(i));
    if (!ok) distance[i] = std::numeric_limits<double>::infinity();
    usable += ok;
  }
  if (usable < 2) {
    // Nothing to search (e.g. no row bends by a bin in a short sequence): recorded, not a failed run.
    std::string needs = needs_positive ? "positive and finite, as the log loss needs" : "finite";
    if (options.observable_only) needs += ", on observable rows";
    LawSearch skipped;
    skipped.probe = probe;
    skipped.protocol = options.protocol;
    skipped.options = options;
    skipped.skipped = std::to_string(usable) + " usable predictions (" + needs + ")";
    skipped.target = predictions.target;
    return skipped;
  }
  LawSearchOptions effective = options;
  effective.nearest_rows = static_cast<int>(std::min<std::int64_t>(options.nearest_rows, usable));
  const auto galaxies = draw_galaxies(distance, effective);

  LawSearch out;
  out.probe = probe;
  out.protocol = options.protocol;
  out.options = effective;
  out.target = predictions.target;
  for (int g = 0; g < static_cast<int>(galaxies.size()); ++g) {
    GalaxyLaw galaxy;
    galaxy.galaxy = g;
    galaxy.rows = galaxies[g];
    const Eigen::MatrixXd X = law_inputs(predictions.rows, galaxy.rows);
    Eigen::VectorXd y(static_cast<Eigen::Index>(galaxy.rows.size()));
    for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = predicted[galaxy.rows[i]];
    sr::Options search = options.search;
    search.seed = derive_seed(options.seed, 200 + static_cast<std::uint64_t>(g));
    galaxy.result = sr::search(X, y, law_variables(), search);
    if (galaxy.result.best < 0 || galaxy.result.front.empty()) {
      throw Error("law search: the symbolic regression returned no front for galaxy " + std::to_string(g));
    }
    const auto& best = galaxy.result.front[galaxy.result.best];
    galaxy.law = best.text;
    galaxy.law_exact = best.expr.text(law_variables(), 17);
    galaxy.complexity = best.complexity;
    galaxy.loss = best.loss;
    galaxy.verdicts = galaxy_verdicts(best.expr, X, y, options.confidence, predictions.target);
    bootstrap_law(galaxy, best.expr, X, y, options,
                  derive_seed(options.seed, 300 + static_cast<std::uint64_t>(g)));
    galaxy.newton = galaxy.verdicts.law;
    out.galaxies.push_back(std::move(galaxy));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

Json newton_galaxies(const LawSearch& search) {
  int srbench = 0, strict = 0, exponents = 0;
  for (const auto& g : search.galaxies) {
    srbench += g.verdicts.law.equivalent;
    strict += g.verdicts.law.strict;
    exponents += g.verdicts.exponents;
  }
  return Json{{"srbench", srbench}, {"strict", strict}, {"exponents", exponents}};
}

Json law_searches_json(const std::vector<LawSearch>& searches) {
  Json list = Json::array();
  for (const auto& search : searches) {
    Json galaxies = Json::array();
    for (const auto& g : search.galaxies) {
      Json front = Json::array();
      for (const auto& entry : g.result.front) {
        front.push_back(Json{{"complexity", entry.complexity},
                             {"loss", entry.loss},
                             {"score", entry.score},
                             {"expression", entry.text}});
      }
      galaxies.push_back(Json{{"galaxy", g.galaxy},
                              {"rows", g.rows},
                              {"front", front},
                              {"best", Json{{"expression", g.law},
                                            {"exact", g.law_exact},
                                            {"complexity", g.complexity},
                                            {"loss", g.loss}}},
                              {"law_bootstrap", bootstrap_json(g)},
                              {"newton", g.newton.equivalent},
                              {"verdict", g.newton.json()},
                              {"verdicts", g.verdicts.json()},
                              {"iterations_run", g.result.iterations_run},
                              {"seconds", g.result.seconds}});
    }
    const auto& s = search.options.search;
    list.push_back(Json{{"probe", search.probe},
                        {"protocol", search.protocol},
                        {"target", to_string(search.target)},
                        {"newton_form", std::string("G*") + newton_law(search.target).form},
                        {"options", Json{{"galaxies", search.options.galaxies},
                                         {"galaxy_rows", search.options.galaxy_rows},
                                         {"nearest_rows", search.options.nearest_rows},
                                         {"seed", search.options.seed},
                                         {"operators", s.operators},
                                         {"loss", sr::to_string(s.loss)},
                                         {"max_size", s.max_size},
                                         {"restarts", s.restarts},
                                         {"iterations", s.iterations},
                                         {"populations", s.populations},
                                         {"population_size", s.population_size},
                                         {"time_limit_seconds_per_galaxy", s.time_limit_seconds},
                                         {"observable_only", search.options.observable_only},
                                         {"confidence", search.options.confidence},
                                         {"bootstrap_resamples", search.options.bootstrap_resamples},
                                         {"selection", "best: highest score among losses <= 1.5 x minimum"}}},
                        {"galaxies", galaxies},
                        {"newton_galaxies", newton_galaxies(search)},
                        {"seconds", search.seconds}});
    if (!search.skipped.empty()) list.back()["skipped"] = search.skipped;
  }
  Json out{{"searches", list}, {"galaxies", list.empty() ? Json::array() : list.front()["galaxies"]}};
  return out;
}

}  // namespace orbitlaw::probe
