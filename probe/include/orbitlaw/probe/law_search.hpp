#pragma once
// Symbolic regression on a probe's predictions (docs/design.md section 6) and the verdicts against Newton.
// Published protocol (Vafa et al.): inputs r, m1, m2; operators + * sin cos exp inv; size <= 20;
// thresholded-L1 loss; 5 galaxies of 1000 rows drawn at random from the 5000 test rows nearest the training
// states; 3 restarts per galaxy whose fronts are merged; the law is the front entry PySR's "best" rule picks
// (highest score among entries with loss <= 1.5 x the minimum). Extended protocol: / and pow allowed too, and
// the loss is in log space, (ln pred - ln F)^2, so small forces count as much as large ones.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "orbitlaw/probe/statistics.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::probe {

// Variable names of the law search, in column order.
inline const std::vector<std::string>& law_variables() {
  static const std::vector<std::string> names = {"r", "m1", "m2"};
  return names;
}

struct LawSearchOptions {
  std::string protocol = "published";  // a label recorded with the results
  int galaxies = 5;
  int galaxy_rows = 1000;   // rows per galaxy (capped by the rows available)
  int nearest_rows = 5000;  // galaxies are drawn from this many test rows nearest the training states
  // Draw galaxies from observable rows only (Predictions::observable): where the visible track does not bend
  // by a bin, the force is not in the model's input and a law found there says nothing about the model.
  bool observable_only = true;
  double confidence = 0.95;  // of the exponent intervals (the `exponents` verdict tier)
  std::uint64_t seed = 0;    // galaxy draws and searches
  // Bootstrap refits of each selected law's constants (sr::bootstrap_constants), for the intervals of its
  // constants and of its r exponent (law_r_exponent); 0: none.
  int bootstrap_resamples = 100;
  sr::Options search;  // operators, loss, max_size, restarts (3), budget
};
// The two protocols with a budget for the SR engine's defaults; the caller may lower iterations etc.
LawSearchOptions published_protocol();
LawSearchOptions extended_protocol();
// Reads the keys of a protocol section ("galaxies", "galaxy_rows", "nearest_rows", "observable_only",
// "confidence", "bootstrap_resamples", and the search's keys of sr::read_options, e.g. "operators", "loss",
// "max_size", "restarts", "iterations", "time_limit_seconds") on top of `defaults`; unknown keys are rejected
// by the caller's finish().
LawSearchOptions law_search_options_from_config(ConfigReader& section, const LawSearchOptions& defaults);
// Those keys with their types, defaults, ranges and descriptions: one list for every section that holds them.
const ConfigSchema<LawSearchOptions>& law_search_schema();

// Row indices of each galaxy: the `nearest_rows` rows with the smallest distance (ties by index), then
// `galaxies` random subsets of `galaxy_rows` of them (seeded; each sorted ascending).
std::vector<std::vector<std::int64_t>> draw_galaxies(const Eigen::VectorXd& nearest_distance,
                                                     const LawSearchOptions& options);

// How a law compares with Newton's law for the probe target (newton_law: C m1 m2 / r^2 for the force,
// C m2 / r^2 for the acceleration), in the three tiers of docs/design.md section 7:
//   srbench    SRBench's rule: after rounding constants to 3 significant digits the law is Newton's form
//              times a constant C > 0 (any C);
//   strict     srbench, and C within kStrictConstantTolerance of G = 4 pi^2 (both targets carry G);
//   exponents  the power-law fit ln F = c + a ln m1 + b ln m2 + e ln r of the predictions the law was
//              searched on has confidence intervals containing Newton's (a, b, e): (1, 1, -2) for the force,
//              (0, 1, -2) for the acceleration. This tier reads the data, not the law: it does not sit on the
//              rounding edge of a printed exponent.
inline constexpr double kStrictConstantTolerance = 0.05;
struct NewtonVerdict {
  bool equivalent = false;  // the srbench tier
  bool strict = false;
  std::string relation = "none";
  double constant = 0;  // C when the relation is a ratio
  double c_over_g = 0;  // C / G (1 for Newton's constant), 0 when not equivalent
  std::string method = "none";
  Json json() const;
};
NewtonVerdict newton_verdict(const sr::Expr& law, const Eigen::MatrixXd& points,
                             ProbeTarget target = ProbeTarget::kForce);
NewtonVerdict newton_verdict(const std::string& law, const Eigen::MatrixXd& points,
                             ProbeTarget target = ProbeTarget::kForce);

// The verdicts of one galaxy: the law's tiers and the exponent tier of the galaxy's predictions.
struct GalaxyVerdicts {
  NewtonVerdict law;
  bool exponents = false;
  Json exponent_fit = nullptr;  // {"a": [estimate, low, high], "b": ..., "e": ..., "rows": n} or {"error"}
  Json json() const;            // {"srbench", "strict", "exponents", "c_over_g", "relation", ...}
};
// X: the galaxy's rows of (r, m1, m2); y: the predictions the law was searched on.
GalaxyVerdicts galaxy_verdicts(const sr::Expr& law, const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                               double confidence, ProbeTarget target = ProbeTarget::kForce);
// {"a": [..], "b": [..], "e": [..]} of a power-law fit.
Json exponent_intervals(const PowerLawFit& fit);

// The law's exponent of r on the rows of X (r, m1, m2): the median over rows of d ln|f| / d ln r (a central
// difference in ln r), which is e itself for every C m1^a m2^b r^e and a local exponent for other forms. NaN
// when the law is zero, flips sign across the step or is not finite at more than half the rows.
double law_r_exponent(const sr::Expr& law, const Eigen::MatrixXd& X);

// The columns r, m1, m2 of the given rows (all rows when `indices` is empty).
Eigen::MatrixXd law_inputs(const ForceRows& rows, const std::vector<std::int64_t>& indices = {});

struct GalaxyLaw {
  int galaxy = 0;
  std::vector<std::int64_t> rows;  // indices into the predictions' rows
  sr::Result result;
  std::string law;        // the selected entry's text (6 significant digits)
  std::string law_exact;  // the same expression with every constant to 17 digits (what compare reads)
  int complexity = 0;
  double loss = 0;
  sr::Bootstrap bootstrap;  // of the selected law's constants on the galaxy's rows
  // law_r_exponent of the selected law, and its interval over the bootstrap refits (NaN without them).
  double r_exponent = NAN, r_exponent_low = NAN, r_exponent_high = NAN;
  NewtonVerdict newton;
  GalaxyVerdicts verdicts;
};

struct LawSearch {
  std::string probe, protocol;
  LawSearchOptions options;
  std::vector<GalaxyLaw> galaxies;
  double seconds = 0;
  std::string skipped;  // why no galaxy was searched (too few usable rows); empty when searched
  ProbeTarget target = ProbeTarget::kForce;  // of the predictions; decides which Newton form is checked
};

// Runs the protocol on one probe's predictions. Throws Error for an unknown probe. Rows a search cannot use
// leave the galaxies' pool (for a log loss, non-positive predictions; with observable_only, rows whose force
// the model could not see); with fewer than 2 left the search is skipped and says why (`skipped`).
LawSearch search_laws(const Predictions& predictions, const std::string& probe,
                      const LawSearchOptions& options);

// How many of a search's galaxies pass each tier: {"srbench": n, "strict": n, "exponents": n}.
Json newton_galaxies(const LawSearch& search);

// sr.json: {"searches": [...], "galaxies": [...]}. Each search: probe, protocol, options, and galaxies with
// "galaxy", "rows", "front" [{complexity, loss, score, expression}], "best" {expression, exact, complexity,
// loss}, "law_bootstrap" {r_exponent [estimate, low, high], constants [[value, low, high], ...], bootstrap
// {resamples, failed, confidence}}, "newton" (bool, the srbench tier), "verdict" and "verdicts" (all three
// tiers, exponent intervals). Each search also counts its galaxies per tier ("newton_galaxies"). The
// top-level "galaxies" repeats the primary search (the first one) so readers that expect a single search find
// it there.
Json law_searches_json(const std::vector<LawSearch>& searches);

}  // namespace orbitlaw::probe
