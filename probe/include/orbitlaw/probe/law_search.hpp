#pragma once
// Symbolic regression on a probe's predictions (DESIGN.md section 6) and the verdicts against Newton.
// Published protocol (Vafa et al.): inputs r, m1, m2; operators + * sin cos exp inv; size <= 20;
// thresholded-L1 loss; 5 galaxies of 1000 rows drawn at random from the 5000 test rows nearest the training
// states; 3 restarts per galaxy whose fronts are merged; the law is the front entry PySR's "best" rule picks
// (highest score among entries with loss <= 1.5 x the minimum). Extended protocol: / and pow allowed too, and
// the loss is in log space, (ln pred - ln F)^2, so small forces count as much as large ones.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/config.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::probe {

// Variable names of the law search, in column order.
inline const std::vector<std::string>& law_variables() {
  static const std::vector<std::string> names = {"r", "m1", "m2"};
  return names;
}
inline constexpr const char* kNewtonForm = "m1*m2/r^2";

struct LawSearchOptions {
  std::string protocol = "published";  // a label recorded with the results
  int galaxies = 5;
  int galaxy_rows = 1000;   // rows per galaxy (capped by the rows available)
  int nearest_rows = 5000;  // galaxies are drawn from this many test rows nearest the training states
  std::uint64_t seed = 0;   // galaxy draws and searches
  sr::Options search;       // operators, loss, max_size, restarts (3), budget
};
// The two protocols with a budget for the SR engine's defaults; the caller may lower iterations etc.
LawSearchOptions published_protocol();
LawSearchOptions extended_protocol();
// Reads the keys of a protocol section ("galaxies", "galaxy_rows", "nearest_rows", "operators", "loss",
// "max_size", "restarts", "iterations", "populations", "population_size", "threads", "optimizer_iterations",
// "time_limit_seconds") on top of `defaults`; unknown keys are rejected by the caller's finish().
LawSearchOptions law_search_options_from_config(ConfigReader& section, const LawSearchOptions& defaults);

// Row indices of each galaxy: the `nearest_rows` rows with the smallest distance (ties by index), then
// `galaxies` random subsets of `galaxy_rows` of them (seeded; each sorted ascending).
std::vector<std::vector<std::int64_t>> draw_galaxies(const Eigen::VectorXd& nearest_distance,
                                                     const LawSearchOptions& options);

// How a law compares with Newton's C m1 m2 / r^2.
struct NewtonVerdict {
  bool equivalent = false;  // SRBench rule: found / (m1 m2 / r^2) is a constant C (a ratio, C > 0)
  std::string relation = "none";
  double constant = 0;  // C when the relation is a ratio
  double c_over_g = 0;  // C / G (1 for Newton's constant), 0 when not equivalent
  std::string method = "none";
  Json json() const;
};
NewtonVerdict newton_verdict(const sr::Expr& law, const Eigen::MatrixXd& points);
NewtonVerdict newton_verdict(const std::string& law, const Eigen::MatrixXd& points);

// The columns r, m1, m2 of the given rows (all rows when `indices` is empty).
Eigen::MatrixXd law_inputs(const ForceRows& rows, const std::vector<std::int64_t>& indices = {});

struct GalaxyLaw {
  int galaxy = 0;
  std::vector<std::int64_t> rows;  // indices into the predictions' rows
  sr::Result result;
  std::string law;  // the selected entry's text
  int complexity = 0;
  double loss = 0;
  NewtonVerdict newton;
};

struct LawSearch {
  std::string probe, protocol;
  LawSearchOptions options;
  std::vector<GalaxyLaw> galaxies;
  double seconds = 0;
};

// Runs the protocol on one probe's predictions. Throws Error for an unknown probe or unusable predictions
// (for a log loss, rows with a non-positive prediction are excluded from the galaxies' pool and counted).
LawSearch search_laws(const Predictions& predictions, const std::string& probe,
                      const LawSearchOptions& options);

// sr.json: {"searches": [...], "galaxies": [...]}. Each search: probe, protocol, options, and galaxies with
// "galaxy", "rows", "front" [{complexity, loss, score, expression}], "best" {expression, complexity, loss},
// "newton" (bool) and "verdict". The top-level "galaxies" repeats the primary search (the first one) so
// readers that expect a single search find it there.
Json law_searches_json(const std::vector<LawSearch>& searches);

}  // namespace orbitlaw::probe
