// The behavioural test of learned gravity, on tracks integrated by the simulator: the exact Newton stepper
// passes the verdict with s = 0; the constant-acceleration extrapolator, wired as a "model", gets s = 1 and
// fails; a stepper of the wrong law is told apart by the a_impl exponent's interval; transplanted histories
// pass through x_t with the stated velocity and curvature, checked against the simulator's integrator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "orbitlaw/common/units.hpp"
#include "orbitlaw/probe/behaviour.hpp"
#include "orbitlaw/simulator/nbody.hpp"

using namespace orbitlaw::probe;
using namespace orbitlaw::simulator;
using orbitlaw::Json;

namespace {

constexpr double kWeek = 7.0 / 365.25;
constexpr double kG = orbitlaw::kGravitationalConstant;

IntegratorSettings tight_settings() {
  IntegratorSettings s;
  s.abs_tol = s.rel_tol = 1e-14;
  return s;
}

// One planet (mass 1e-6) about a star of mass `star`, integrated by rkf78 at weekly cadence, as seen from
// the star.
TwoBodyTrack simulated_track(double a, double e, double omega, double M0, double star, double k, int steps,
                             std::int64_t system) {
  OrbitalElements el;
  el.a = a;
  el.e = e;
  el.omega = omega;
  el.M0 = M0;
  const double planet = 1e-6;
  const auto ic = make_system(star, {planet}, {el}, 2, k);
  std::vector<double> times;
  for (int t = 0; t < steps; ++t) times.push_back(t * kWeek);
  const auto tr = integrate(ic, times, tight_settings());
  EXPECT_EQ(tr.abort, Abort::kNone);
  TwoBodyTrack track;
  track.dt = kWeek;
  track.mu = kG * (star + planet);
  track.k = k;
  track.star_mass = star;
  track.planet_mass = planet;
  track.system = system;
  auto rel = [&](const std::vector<double>& v, int t) {
    return Vec2(v[t * 4] - v[t * 4 + 2], v[t * 4 + 1] - v[t * 4 + 3]);
  };
  for (int t = 0; t < steps; ++t) {
    track.position.push_back(rel(tr.position, t));
    track.velocity.push_back(rel(tr.velocity, t));
    track.acceleration.push_back(rel(tr.acceleration, t));
  }
  return track;
}

// Six planets of the locality experiment's range (a in 0.5-2 AU, e < 0.8 there; here up to 0.5) about a star
// of fixed or varying mass, 64 weekly observations each.
std::vector<BehaviourRow> rows_of_systems(double k, bool varying_star) {
  const double as[] = {0.6, 0.9, 1.2, 1.5, 1.8, 0.75};
  const double es[] = {0.0, 0.3, 0.5, 0.1, 0.4, 0.2};
  const double stars[] = {0.3, 0.7, 1.3, 2.1, 3.2, 0.5};
  std::vector<BehaviourRow> rows;
  for (int i = 0; i < 6; ++i) {
    const auto track =
        simulated_track(as[i], es[i], 0.7 * i, 0.4 * i, varying_star ? stars[i] : 1.0, k, 64, i);
    auto more = rows_of_track(track, 32);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

BehaviourSettings quick_settings() {
  BehaviourSettings s;
  s.transplant_rows = 64;
  s.bootstrap = 200;
  return s;
}

bool names(const LearnedLawVerdict& v, const std::string& part) {
  return std::any_of(v.failed.begin(), v.failed.end(),
                     [&](const std::string& f) { return f.find(part) != std::string::npos; });
}

}  // namespace

TEST(Behaviour, TheNewtonStepperPassesTheVerdictWithSlopeZero) {
  for (bool varying_star : {false, true}) {
    const auto rows = rows_of_systems(2.0, varying_star);
    const auto r = evaluate_behaviour(newton_step_predictor(), rows, quick_settings());
    EXPECT_TRUE(r.verdict.learned) << r.json().dump();
    EXPECT_NEAR(r.transplant.slope, 0.0, 1e-6);
    EXPECT_NEAR(r.implied.law.e, -2.0, 1e-6);
    EXPECT_NEAR(r.implied.constant_ratio, 1.0, 1e-6);
    EXPECT_LT(r.implied.median_angle_deg, 1e-4);
    EXPECT_EQ(r.implied.law.mass_varies, varying_star);
    if (varying_star) {
      EXPECT_NEAR(r.implied.law.b, 1.0, 1e-6);
    }
    // The ladder's order on these tracks, and the stepper at its top.
    EXPECT_LT(r.newton.median(), r.acceleration.median());
    EXPECT_LT(r.acceleration.median(), r.velocity.median());
    EXPECT_LT(r.velocity.median(), r.previous.median());
    EXPECT_EQ(r.ladder_position, "between constant acceleration and the Newton step");
  }
}

TEST(Behaviour, TheConstantAccelerationExtrapolatorGetsSlopeOneAndFails) {
  const auto rows = rows_of_systems(2.0, false);
  const auto r = evaluate_behaviour(constant_acceleration_predictor(), rows, quick_settings());
  EXPECT_NEAR(r.transplant.slope, 1.0, 0.05);
  EXPECT_FALSE(r.verdict.learned);
  EXPECT_TRUE(names(r.verdict, "transplant slope"));
  EXPECT_TRUE(names(r.verdict, "beat constant acceleration"));
  // Its implied acceleration is the history's curvature: close to the truth on a smooth track, which is why
  // the transplant, not the angle, has to tell it apart.
  EXPECT_LT(r.implied.median_angle_deg, 5.0);
}

TEST(Behaviour, PredictorsThatIgnoreTheForceFail) {
  const auto rows = rows_of_systems(2.0, false);
  for (const auto& predictor : {previous_position_predictor(), constant_velocity_predictor()}) {
    const auto r = evaluate_behaviour(predictor, rows, quick_settings());
    EXPECT_FALSE(r.verdict.learned);
    EXPECT_TRUE(names(r.verdict, "median angle"));
  }
}

TEST(Behaviour, TheExponentIntervalTellsTheLawsApart) {
  // Data of a 1/r^2.5 universe: a stepper of that law passes the verdict for its data's law, with an
  // interval containing -2.5 and excluding -2; Newton's stepper on the same data fails on the exponent.
  const auto rows = rows_of_systems(2.5, false);
  const auto own = evaluate_behaviour(newton_step_predictor(), rows, quick_settings());
  EXPECT_TRUE(own.verdict.learned) << own.json().dump();
  EXPECT_LE(own.implied.law.e_low, -2.5 + 1e-9);
  EXPECT_GE(own.implied.law.e_high, -2.5 - 1e-9);
  EXPECT_LT(own.implied.law.e_high, -2.0);
  auto newton = [](const std::vector<TrackWindow>& windows) {
    std::vector<TrackWindow> as_newton = windows;
    for (auto& w : as_newton) w.k = 2.0;
    return newton_step_predictor()(as_newton);
  };
  const auto wrong = evaluate_behaviour(newton, rows, quick_settings());
  EXPECT_FALSE(wrong.verdict.learned);
  EXPECT_TRUE(names(wrong.verdict, "r exponent"));
  EXPECT_GT(wrong.implied.law.e_low, -2.5);
}

TEST(Behaviour, ANoisyPredictorHasAWideIntervalAndFails) {
  // Newton's step plus 2% of the true step's curvature in a direction that changes from row to row: an
  // honest interval is wider than the verdict's +-0.05 or the constant drifts; either way no pass.
  const auto rows = rows_of_systems(2.0, false);
  auto noisy = [](const std::vector<TrackWindow>& windows) {
    auto out = newton_step_predictor()(windows);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const Vec2 a = central_acceleration(windows[i].positions.back(), windows[i].mu, windows[i].k);
      const double phase = 2.39996 * static_cast<double>(i);
      out[i] += 0.3 * a.norm() * windows[i].dt * windows[i].dt * Vec2(std::cos(phase), std::sin(phase));
    }
    return out;
  };
  const auto r = evaluate_behaviour(noisy, rows, quick_settings());
  EXPECT_FALSE(r.verdict.learned);
  EXPECT_GT(r.implied.median_angle_deg, 2.0);
}

// A predictor that infers the mass from the start of its window (the curvature of its first three positions,
// as Newton's law relates them) and steps x_t with Newton's law of that mass: the model a varying-mass regime
// asks for. The full transplant moves what it infers (s = 1); the mass transplant, which keeps the real
// context, does not (s = 0), and only with the latter does it pass. Constant acceleration follows the
// curvature in both.
TEST(Behaviour, TheMassTransplantKeepsTheContextThatTellsTheMass) {
  const auto rows = rows_of_systems(2.0, true);
  auto infers_mass = [](const std::vector<TrackWindow>& windows) {
    std::vector<Vec2> out;
    for (const auto& w : windows) {
      const auto& p = w.positions;
      const Vec2 curvature = (p[2] - 2 * p[1] + p[0]) / (w.dt * w.dt);
      const double mu = curvature.norm() * std::pow(p[1].norm(), w.k);
      out.push_back(2 * p.back() - p[p.size() - 2] + central_acceleration(p.back(), mu, w.k) * w.dt * w.dt);
    }
    return out;
  };
  const auto r = evaluate_behaviour(infers_mass, rows, quick_settings());
  ASSERT_GT(r.mass_transplant.rows, 0);
  EXPECT_TRUE(r.mass_transplant.keep_context);
  EXPECT_EQ(r.mass_transplant.replaced, 3);
  EXPECT_NEAR(r.transplant.slope, 1.0, 0.05);
  EXPECT_NEAR(r.mass_transplant.slope, 0.0, 1e-6);
  EXPECT_NEAR(r.implied.law.b, 1.0, 0.02);
  EXPECT_FALSE(names(r.verdict, "transplant slope")) << r.json().dump();
  const auto kinematic = evaluate_behaviour(constant_acceleration_predictor(), rows, quick_settings());
  EXPECT_NEAR(kinematic.mass_transplant.slope, 1.0, 0.05);
  EXPECT_TRUE(names(kinematic.verdict, "transplant slope"));
  // With a fixed star no mass transplant is run: the position alone tells the force.
  EXPECT_EQ(
      evaluate_behaviour(infers_mass, rows_of_systems(2.0, false), quick_settings()).mass_transplant.rows, 0);
}

TEST(Behaviour, TransplantedHistoriesFollowTheIntegrator) {
  const auto track = simulated_track(1.1, 0.4, 0.2, 1.0, 1.0, 2.0, 40, 0);
  const int t = 30, length = 16;
  const Vec2 x = track.position[t], v = track.velocity[t];
  // lambda = 1 is the real history, as the simulator integrated it.
  const auto real = transplant_history(x, v, track.mu, 2.0, 1.0, kWeek, length);
  ASSERT_EQ(static_cast<int>(real.size()), length);
  EXPECT_EQ(real.back(), x);
  for (int j = 0; j < length; ++j)
    EXPECT_LT((real[length - 1 - j] - track.position[t - j]).norm(), 1e-9) << j;
  // lambda = 0: a straight line at the true velocity.
  const auto straight = transplant_history(x, v, track.mu, 2.0, 0.0, kWeek, length);
  for (int j = 0; j < length; ++j)
    EXPECT_LT((straight[length - 1 - j] - (x - j * kWeek * v)).norm(), 1e-12) << j;
  for (double lambda : {0.5, 1.5}) {
    // The simulator's rkf78 with the star's mass scaled so that G (M' + m) = lambda mu, run from (x_t, -v_t).
    InitialConditions ic;
    ic.dim = 2;
    const double planet = 1e-10;
    ic.mass = {planet, lambda * track.mu / kG - planet};
    ic.position = {x(0), x(1), 0, 0};
    ic.velocity = {-v(0), -v(1), 0, 0};
    std::vector<double> times;
    for (int j = 0; j < length; ++j) times.push_back(j * kWeek);
    const auto tr = integrate(ic, times, tight_settings());
    ASSERT_EQ(tr.abort, Abort::kNone);
    const auto history = transplant_history(x, v, track.mu, 2.0, lambda, kWeek, length);
    for (int j = 0; j < length; ++j) {
      const Vec2 expected(tr.position[j * 4] - tr.position[j * 4 + 2],
                          tr.position[j * 4 + 1] - tr.position[j * 4 + 3]);
      EXPECT_LT((history[length - 1 - j] - expected).norm(), 1e-9) << lambda << " " << j;
    }
    // Through x_t with the stated velocity and lambda times the law's curvature, up to the O(dt^2) terms of
    // these finite differences (0.13% and 1% here at most).
    const Vec2 a_t = central_acceleration(x, track.mu, 2.0);
    const Vec2 step = (history[length - 1] - history[length - 2]) / kWeek + 0.5 * lambda * a_t * kWeek;
    EXPECT_LT((step - v).norm(), 5e-3 * v.norm()) << lambda;
    const Vec2 curvature =
        (history[length - 1] - 2 * history[length - 2] + history[length - 3]) / (kWeek * kWeek);
    const Vec2 expected_curvature = lambda * central_acceleration(history[length - 2], track.mu, 2.0);
    EXPECT_LT((curvature - expected_curvature).norm(), 0.02 * expected_curvature.norm()) << lambda;
  }
}

TEST(Behaviour, RowsOfATrackSeeAtMostTheContext) {
  const auto track = simulated_track(1.0, 0.1, 0, 0, 1.0, 2.0, 20, 7);
  const auto rows = rows_of_track(track, 5);
  ASSERT_EQ(rows.size(), 17u);  // t = 2 .. 18
  EXPECT_EQ(rows.front().window.positions.size(), 3u);
  EXPECT_EQ(rows.back().window.positions.size(), 5u);
  EXPECT_EQ(rows.back().window.positions.back(), track.position[18]);
  EXPECT_EQ(rows.back().next, track.position[19]);
  EXPECT_EQ(rows.back().system, 7);
  EXPECT_THROW(
      evaluate_behaviour(newton_step_predictor(), {rows.begin(), rows.begin() + 3}, quick_settings()),
      orbitlaw::Error);
}

// The law search on a_impl, with nothing fitted to labels: the Newton stepper's implied accelerations give
// Newton's law in every tier; constant velocity's (zero curvature: |a_impl| = |x_t - x_{t-1} + ...| is 0)
// give no law at all.
TEST(Behaviour, TheLawSearchOnImpliedAccelerationsFindsTheNewtonStepsLaw) {
  const auto rows = rows_of_systems(2.0, false);
  const Json quick{{"protocol", "extended"}, {"galaxies", 2},           {"galaxy_rows", 120},
                   {"restarts", 1},          {"time_limit_seconds", 4}, {"bootstrap_resamples", 0}};
  const auto newton = evaluate_behaviour(newton_step_predictor(), rows, quick_settings());
  const auto laws = search_implied_laws(rows, newton, quick);
  EXPECT_EQ(laws["galaxies"].size(), 2u) << laws.dump();
  EXPECT_EQ(laws["newton_galaxies"]["strict"], 2) << laws.dump();
  EXPECT_EQ(laws["newton_galaxies"]["exponents"], 2) << laws.dump();
  const auto previous = evaluate_behaviour(previous_position_predictor(), rows, quick_settings());
  const auto none = search_implied_laws(rows, previous, quick);
  EXPECT_EQ(none["newton_galaxies"]["srbench"], 0) << none.dump();
  EXPECT_THROW(search_implied_laws(rows, newton, Json{{"protocol", "mine"}}), orbitlaw::Error);
  EXPECT_THROW(search_implied_laws(rows, newton, Json{{"galaxy", 2}}), orbitlaw::Error);
}
