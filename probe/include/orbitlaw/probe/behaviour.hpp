#pragma once
// What a model predicts, read without fitting anything to labels (docs/design.md, "Learned gravity from the
// model's own predictions"). A next-position predictor is judged on one body's track at a time:
//   - its implied acceleration a_impl = (x_hat - 2 x_t + x_{t-1}) / dt^2 against the true acceleration
//     (angle, magnitude ratio, power law in r and in the star's mass);
//   - its 1-step error on the behavioural ladder: previous position, constant velocity, constant acceleration
//     (3 x_t - 3 x_{t-1} + x_{t-2}) and one Stormer-Verlet step with the true law (the ceiling);
//   - the curvature transplant: the visible history replaced by a track through x_t with the true velocity,
//     integrated under the law scaled by lambda. The slope s of a_impl (along the true acceleration, in units
//     of its magnitude) against lambda is 0 for a predictor that computes the force from the position and 1
//     for one that extrapolates the history's curvature.
// The verdict combines them (LearnedLawVerdict). Tracks are positions relative to the star, one body per
// step: the heliocentric frame of a one-planet system, the locality experiment's data.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe {

using Vec2 = Eigen::Vector2d;

// What a predictor is given: one body's observed positions relative to its star, oldest first, the last
// being x_t, and the cadence. `mu` and `k` are the truth (a = -mu x / |x|^(k+1)); only the oracle predictors
// (the Newton step) read them, never a model.
struct TrackWindow {
  std::vector<Vec2> positions;
  double dt = 0;
  double mu = 0;
  double k = 2;
};

// Predicts x_{t+1} for each window (same order).
using NextPositionPredictor = std::function<std::vector<Vec2>(const std::vector<TrackWindow>& windows)>;

// The predictors that learn nothing, for the ladder and as controls.
NextPositionPredictor previous_position_predictor();
NextPositionPredictor constant_velocity_predictor();      // 2 x_t - x_{t-1}
NextPositionPredictor constant_acceleration_predictor();  // 3 x_t - 3 x_{t-1} + x_{t-2}
NextPositionPredictor newton_step_predictor();            // 2 x_t - x_{t-1} + a(x_t) dt^2 under the true law

// The central acceleration -mu x / |x|^(k+1).
Vec2 central_acceleration(const Vec2& x, double mu, double k);

// The implied acceleration of a prediction x_hat after ... x_{t-1}, x_t.
Vec2 implied_acceleration(const Vec2& x_hat, const Vec2& x_t, const Vec2& x_prev, double dt);

// A history of `length` positions at cadence dt ending at `x_t`, whose velocity at x_t is `v_t`, integrated
// backwards under a = -lambda mu x / |x|^(k+1) (RK4, `substeps` per cadence; lambda = 0 is a straight line).
// Oldest first; the last entry is x_t itself.
std::vector<Vec2> transplant_history(const Vec2& x_t, const Vec2& v_t, double mu, double k, double lambda,
                                     double dt, int length, int substeps = 256);

// One place in one body's track at which the predictor is judged: the window it sees (true history), the
// truth at t, and where it comes from.
struct BehaviourRow {
  TrackWindow window;
  Vec2 velocity;      // true velocity at t, relative to the star
  Vec2 acceleration;  // true acceleration at t, relative to the star
  Vec2 next;          // true x_{t+1}
  double star_mass = 0, planet_mass = 0;
  std::int64_t system = 0;  // index in the dataset
  int step = 0;             // t
};

// Rows of a two-body heliocentric track: every step t >= 2 whose window fits `context` positions (the window
// is the last min(t + 1, context) observations). Positions, velocities and accelerations are planet minus
// star; `mu` = G (M + m) for the law of exponent k.
struct TwoBodyTrack {
  std::vector<Vec2> position, velocity, acceleration;  // per step, relative to the star
  double dt = 0, mu = 0, k = 2, star_mass = 0, planet_mass = 0;
  std::int64_t system = 0;
};
std::vector<BehaviourRow> rows_of_track(const TwoBodyTrack& track, int context);

// Settings of the behavioural evaluation (the eval config's "behaviour" keys).
struct BehaviourSettings {
  std::vector<double> lambdas = {0, 0.5, 1, 1.5};
  int transplant_history = 16;  // positions in a transplanted history (x_t included)
  int transplant_rows = 256;    // rows transplanted (evenly spaced over the 1-step rows)
  int bootstrap = 400;          // resamples of systems for the power-law intervals
  std::uint64_t seed = 1;
};

// 1-step errors (AU) of one predictor on the rows.
struct StepErrors {
  std::vector<double> distance;
  double median() const;
  double mean() const;
  Json json() const;
};

// The power law |a| = C r^e (M + m)^b fitted by least squares in log space, M + m = mu / G being the mass of
// the relative motion; intervals by resampling whole systems (rows of one track are not independent). b is
// fitted only when that mass varies between systems (NaN otherwise).
struct AccelerationLaw {
  double e = 0, e_low = 0, e_high = 0;
  double b = 0, b_low = 0, b_high = 0;
  bool mass_varies = false;
  std::int64_t rows = 0, systems = 0;
  Json json() const;
};

// What a_impl of one predictor says, against the truth.
struct ImpliedAccelerationSummary {
  double median_angle_deg = 0;                          // angle between a_impl and a
  double ratio_median = 0, ratio_q1 = 0, ratio_q3 = 0;  // |a_impl| / |a|
  // Geometric mean of |a_impl| r^k / mu over the rows: the constant of the data's own law (k, mu = G (M + m))
  // read from the predictions, as a ratio to the truth (1 for a predictor that has the law's constant).
  double constant_ratio = 0;
  AccelerationLaw law;
  Json json() const;
};

// The curvature transplant of one predictor: per lambda, the median of a_impl along the true acceleration in
// units of |a|, and s, the median over rows of the least-squares slope of that projection against lambda.
struct TransplantSummary {
  std::vector<double> lambdas, median_projection;
  double slope = 0;
  std::int64_t rows = 0;
  int replaced = 0;           // positions of the history replaced (x_t included)
  bool keep_context = false;  // whether the real positions before them were kept
  Json json() const;
};

// The verdict of docs/design.md: the predictor has learned the data's law (Newton's when k = 2) when |s| <
// 0.1 (the mass transplant's s where the mass varies), the r exponent's interval contains -k and lies within
// -k +- 0.05 (likewise b and 1 where the star's mass varies), the constant ratio is within 5% of 1, the
// median angle is below 2 degrees, and its median 1-step error beats constant acceleration's. Each failed
// condition is named.
struct LearnedLawVerdict {
  bool learned = false;
  std::vector<std::string> failed;
  Json json() const;
};

struct BehaviourReport {
  double law_exponent = 2;                                     // k of the data
  StepErrors model, previous, velocity, acceleration, newton;  // the 1-step ladder
  ImpliedAccelerationSummary implied;
  TransplantSummary transplant;
  TransplantSummary mass_transplant;  // only where the mass varies between systems (rows = 0 otherwise)
  LearnedLawVerdict verdict;          // judged on the mass transplant's s where it was run
  std::string ladder_position;        // e.g. "between constant velocity and constant acceleration"
  // Per 1-step row, for the predictions file.
  std::vector<Vec2> predicted, implied_acceleration;
  Json json() const;
};

// Runs the whole behavioural evaluation of `predictor` on `rows` (all from data of one law exponent k).
// Throws Error when fewer than 5 rows or 2 systems are given.
BehaviourReport evaluate_behaviour(const NextPositionPredictor& predictor,
                                   const std::vector<BehaviourRow>& rows, const BehaviourSettings& settings);

// Pieces of the above, for tests and reports.
ImpliedAccelerationSummary summarise_implied(const std::vector<BehaviourRow>& rows,
                                             const std::vector<Vec2>& implied, int bootstrap,
                                             std::uint64_t seed);
TransplantSummary curvature_transplant(const NextPositionPredictor& predictor,
                                       const std::vector<BehaviourRow>& rows,
                                       const BehaviourSettings& settings);
LearnedLawVerdict judge(double law_exponent, const ImpliedAccelerationSummary& implied,
                        const TransplantSummary& transplant, const StepErrors& model,
                        const StepErrors& constant_acceleration);

// The law search on the implied accelerations, with nothing fitted to labels: |a_impl| against (r, m1 =
// planet mass, m2 = star mass) over the 1-step rows, galaxies drawn from all of them, judged by the three
// tiers of docs/design.md section 7 for the acceleration (C m2 / r^2, C against G). `settings`: "protocol"
// ("published" or "extended", the default) and any key of a probe protocol section (galaxies, galaxy_rows,
// restarts, time_limit_seconds, ...). Returns {"protocol", "galaxies": [{law, srbench, strict, exponents,
// c_over_g, r_exponent}], "newton_galaxies": {srbench, strict, exponents}, "seconds"}.
Json search_implied_laws(const std::vector<BehaviourRow>& rows, const BehaviourReport& report,
                         const Json& settings);

}  // namespace orbitlaw::probe
