#include "orbitlaw/probe/behaviour.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/common/units.hpp"

namespace orbitlaw::probe {

namespace {

// Applies `next` to the last positions of every window.
NextPositionPredictor from_last_positions(std::function<Vec2(const TrackWindow&)> next) {
  return [next](const std::vector<TrackWindow>& windows) {
    std::vector<Vec2> out;
    out.reserve(windows.size());
    for (const auto& w : windows) out.push_back(next(w));
    return out;
  };
}

const Vec2& back(const TrackWindow& w, std::size_t i) {
  if (w.positions.size() <= i)
    throw Error("behaviour: a window needs at least " + std::to_string(i + 1) +
                " positions for this predictor");
  return w.positions[w.positions.size() - 1 - i];
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

Vec2 central_acceleration(const Vec2& x, double mu, double k) {
  const double r = x.norm();
  return -mu * x / std::pow(r, k + 1);
}

Vec2 implied_acceleration(const Vec2& x_hat, const Vec2& x_t, const Vec2& x_prev, double dt) {
  return (x_hat - 2 * x_t + x_prev) / (dt * dt);
}

NextPositionPredictor previous_position_predictor() {
  return from_last_positions([](const TrackWindow& w) { return back(w, 0); });
}

NextPositionPredictor constant_velocity_predictor() {
  return from_last_positions([](const TrackWindow& w) { return Vec2(2 * back(w, 0) - back(w, 1)); });
}

NextPositionPredictor constant_acceleration_predictor() {
  return from_last_positions(
      [](const TrackWindow& w) { return Vec2(3 * back(w, 0) - 3 * back(w, 1) + back(w, 2)); });
}

NextPositionPredictor newton_step_predictor() {
  return from_last_positions([](const TrackWindow& w) {
    return Vec2(2 * back(w, 0) - back(w, 1) + central_acceleration(back(w, 0), w.mu, w.k) * w.dt * w.dt);
  });
}

std::vector<Vec2> transplant_history(const Vec2& x_t, const Vec2& v_t, double mu, double k, double lambda,
                                     double dt, int length, int substeps) {
  if (length < 1 || substeps < 1)
    throw Error("behaviour: a transplanted history needs length and substeps >= 1");
  std::vector<Vec2> history(static_cast<std::size_t>(length));
  history.back() = x_t;
  // Backwards in time is forwards with the velocity reversed (the force depends on position only).
  Vec2 x = x_t, v = -v_t;
  const double h = dt / substeps;
  auto acc = [&](const Vec2& p) {
    return lambda == 0 ? Vec2(0, 0) : central_acceleration(p, lambda * mu, k);
  };
  for (int i = length - 2; i >= 0; --i) {
    for (int s = 0; s < substeps; ++s) {
      const Vec2 k1x = v, k1v = acc(x);
      const Vec2 k2x = v + 0.5 * h * k1v, k2v = acc(x + 0.5 * h * k1x);
      const Vec2 k3x = v + 0.5 * h * k2v, k3v = acc(x + 0.5 * h * k2x);
      const Vec2 k4x = v + h * k3v, k4v = acc(x + h * k3x);
      x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
      v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    }
    history[static_cast<std::size_t>(i)] = x;
  }
  return history;
}

std::vector<BehaviourRow> rows_of_track(const TwoBodyTrack& track, int context) {
  const int steps = static_cast<int>(track.position.size());
  if (static_cast<int>(track.velocity.size()) != steps ||
      static_cast<int>(track.acceleration.size()) != steps)
    throw Error("behaviour: a track's positions, velocities and accelerations differ in length");
  if (context < 3) throw Error("behaviour: the context must hold at least 3 positions");
  std::vector<BehaviourRow> rows;
  for (int t = 2; t + 1 < steps; ++t) {
    BehaviourRow row;
    const int first = std::max(0, t + 1 - context);
    row.window.positions.assign(track.position.begin() + first, track.position.begin() + t + 1);
    row.window.dt = track.dt;
    row.window.mu = track.mu;
    row.window.k = track.k;
    row.velocity = track.velocity[static_cast<std::size_t>(t)];
    row.acceleration = track.acceleration[static_cast<std::size_t>(t)];
    row.next = track.position[static_cast<std::size_t>(t + 1)];
    row.star_mass = track.star_mass;
    row.planet_mass = track.planet_mass;
    row.system = track.system;
    row.step = t;
    rows.push_back(std::move(row));
  }
  return rows;
}

double StepErrors::median() const { return quantile(distance, 0.5); }

double StepErrors::mean() const {
  if (distance.empty()) return std::nan("");
  double sum = 0;
  for (double d : distance) sum += d;
  return sum / static_cast<double>(distance.size());
}

Json StepErrors::json() const {
  return Json{
      {"median", finite_or_null(median())}, {"mean", finite_or_null(mean())}, {"rows", distance.size()}};
}

Json AccelerationLaw::json() const {
  Json j{{"r_exponent", finite_or_null(e)},
         {"r_exponent_ci95", Json::array({finite_or_null(e_low), finite_or_null(e_high)})},
         {"mass_varies", mass_varies},
         {"rows", rows},
         {"systems", systems},
         {"interval", "percentile, resampling whole systems"}};
  if (mass_varies) {
    j["mass_exponent"] = finite_or_null(b);
    j["mass_exponent_ci95"] = Json::array({finite_or_null(b_low), finite_or_null(b_high)});
  }
  return j;
}

namespace {

// Least squares of ln|a_impl| on (1, ln r[, ln M]) over the rows `use` (indices into the columns).
Eigen::VectorXd log_fit(const Eigen::MatrixXd& design, const Eigen::VectorXd& y,
                        const std::vector<int>& use) {
  Eigen::MatrixXd X(static_cast<Eigen::Index>(use.size()), design.cols());
  Eigen::VectorXd Y(static_cast<Eigen::Index>(use.size()));
  for (std::size_t i = 0; i < use.size(); ++i) {
    X.row(static_cast<Eigen::Index>(i)) = design.row(use[i]);
    Y(static_cast<Eigen::Index>(i)) = y(use[i]);
  }
  return X.colPivHouseholderQr().solve(Y);
}

AccelerationLaw fit_acceleration_law(const std::vector<BehaviourRow>& rows, const std::vector<Vec2>& implied,
                                     int bootstrap, std::uint64_t seed) {
  AccelerationLaw law;
  std::vector<int> usable;
  double m_lo = INFINITY, m_hi = -INFINITY;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double a = implied[i].norm();
    if (!(a > 0) || !std::isfinite(a)) continue;
    usable.push_back(static_cast<int>(i));
    m_lo = std::min(m_lo, rows[i].window.mu);
    m_hi = std::max(m_hi, rows[i].window.mu);
  }
  // The planet's own mass moves M + m by at most 0.1% in every preset: a spread that small identifies no
  // exponent (its interval spans tens), so the mass counts as varying only beyond 10%.
  law.mass_varies = m_hi > m_lo * 1.1;
  const Eigen::Index cols = law.mass_varies ? 3 : 2;
  Eigen::MatrixXd design(static_cast<Eigen::Index>(rows.size()), cols);
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  std::vector<std::int64_t> system_ids;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    design(r, 0) = 1;
    design(r, 1) = std::log(rows[i].window.positions.back().norm());
    // The relative motion's mass is M + m (mu / G): Newton's exponent of it is exactly 1.
    if (law.mass_varies) design(r, 2) = std::log(rows[i].window.mu / kGravitationalConstant);
    y(r) = std::log(implied[i].norm());
  }
  for (int i : usable) system_ids.push_back(rows[static_cast<std::size_t>(i)].system);
  std::sort(system_ids.begin(), system_ids.end());
  system_ids.erase(std::unique(system_ids.begin(), system_ids.end()), system_ids.end());
  law.rows = static_cast<std::int64_t>(usable.size());
  law.systems = static_cast<std::int64_t>(system_ids.size());
  if (usable.size() < 5 || system_ids.size() < 2) {
    law.e = law.e_low = law.e_high = law.b = law.b_low = law.b_high = std::nan("");
    return law;
  }
  const auto estimate = log_fit(design, y, usable);
  law.e = estimate(1);
  law.b = law.mass_varies ? estimate(2) : std::nan("");
  // Rows grouped by system, so that a resample draws whole tracks.
  std::vector<std::vector<int>> by_system(system_ids.size());
  for (int i : usable) {
    const auto at =
        std::lower_bound(system_ids.begin(), system_ids.end(), rows[static_cast<std::size_t>(i)].system);
    by_system[static_cast<std::size_t>(at - system_ids.begin())].push_back(i);
  }
  SplitMix64 rng(derive_seed(seed, 0xB007));
  std::vector<double> es, bs;
  for (int b = 0; b < bootstrap; ++b) {
    std::vector<int> use;
    for (std::size_t s = 0; s < by_system.size(); ++s) {
      const auto& picked = by_system[rng.below(by_system.size())];
      use.insert(use.end(), picked.begin(), picked.end());
    }
    const auto fit = log_fit(design, y, use);
    if (!fit.allFinite()) continue;
    es.push_back(fit(1));
    if (law.mass_varies) bs.push_back(fit(2));
  }
  law.e_low = quantile(es, 0.025);
  law.e_high = quantile(es, 0.975);
  law.b_low = law.mass_varies ? quantile(bs, 0.025) : std::nan("");
  law.b_high = law.mass_varies ? quantile(bs, 0.975) : std::nan("");
  return law;
}

}  // namespace

ImpliedAccelerationSummary summarise_implied(const std::vector<BehaviourRow>& rows,
                                             const std::vector<Vec2>& implied, int bootstrap,
                                             std::uint64_t seed) {
  if (rows.size() != implied.size())
    throw Error("behaviour: rows and implied accelerations differ in number");
  ImpliedAccelerationSummary s;
  std::vector<double> angles, ratios;
  double log_constant = 0;
  std::int64_t constant_rows = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Vec2& a = rows[i].acceleration;
    const Vec2& ai = implied[i];
    if (!ai.allFinite()) {
      angles.push_back(180);
      ratios.push_back(INFINITY);
      continue;
    }
    const double cosine = ai.norm() > 0 ? std::clamp(ai.dot(a) / (ai.norm() * a.norm()), -1.0, 1.0) : -1.0;
    angles.push_back(std::acos(cosine) * 180 / std::numbers::pi);
    ratios.push_back(ai.norm() / a.norm());
    if (ai.norm() > 0) {
      const auto& w = rows[i].window;
      log_constant += std::log(ai.norm()) + w.k * std::log(w.positions.back().norm()) - std::log(w.mu);
      ++constant_rows;
    }
  }
  s.median_angle_deg = quantile(angles, 0.5);
  s.ratio_median = quantile(ratios, 0.5);
  s.ratio_q1 = quantile(ratios, 0.25);
  s.ratio_q3 = quantile(ratios, 0.75);
  s.constant_ratio =
      constant_rows ? std::exp(log_constant / static_cast<double>(constant_rows)) : std::nan("");
  s.law = fit_acceleration_law(rows, implied, bootstrap, seed);
  return s;
}

Json ImpliedAccelerationSummary::json() const {
  return Json{{"median_angle_deg", finite_or_null(median_angle_deg)},
              {"magnitude_ratio", Json{{"median", finite_or_null(ratio_median)},
                                       {"q1", finite_or_null(ratio_q1)},
                                       {"q3", finite_or_null(ratio_q3)}}},
              {"constant_ratio", finite_or_null(constant_ratio)},
              {"power_law", law.json()}};
}

TransplantSummary curvature_transplant(const NextPositionPredictor& predictor,
                                       const std::vector<BehaviourRow>& rows,
                                       const BehaviourSettings& settings, int replaced, bool keep_context) {
  TransplantSummary out;
  out.lambdas = settings.lambdas;
  out.replaced = replaced;
  out.keep_context = keep_context;
  if (settings.lambdas.size() < 2)
    throw Error("behaviour: the transplant needs at least two values of lambda");
  if (replaced < 3) throw Error("behaviour: a transplant replaces at least the last 3 positions");
  // Rows evenly spaced over those whose window can hold the transplant (and, keeping the context, at least
  // as many real positions before it as it replaces).
  std::vector<const BehaviourRow*> usable, chosen;
  for (const auto& row : rows)
    if (!keep_context || static_cast<int>(row.window.positions.size()) >= 2 * replaced)
      usable.push_back(&row);
  const std::size_t n =
      std::min<std::size_t>(usable.size(), static_cast<std::size_t>(settings.transplant_rows));
  for (std::size_t i = 0; i < n; ++i) chosen.push_back(usable[i * usable.size() / n]);
  std::vector<TrackWindow> windows;
  for (const auto* row : chosen)
    for (double lambda : settings.lambdas) {
      const auto& w = row->window;
      auto history = transplant_history(w.positions.back(), row->velocity, w.mu, w.k, lambda, w.dt, replaced);
      if (keep_context) history.insert(history.begin(), w.positions.begin(), w.positions.end() - replaced);
      windows.push_back(TrackWindow{std::move(history), w.dt, w.mu, w.k});
    }
  if (windows.empty()) return out;
  const auto predicted = predictor(windows);
  if (predicted.size() != windows.size())
    throw Error("behaviour: the predictor returned the wrong number of rows");
  const std::size_t L = settings.lambdas.size();
  double lambda_mean = 0;
  for (double l : settings.lambdas) lambda_mean += l / static_cast<double>(L);
  double lambda_ss = 0;
  for (double l : settings.lambdas) lambda_ss += (l - lambda_mean) * (l - lambda_mean);
  std::vector<std::vector<double>> projection(L);
  std::vector<double> slopes;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Vec2& a = chosen[i]->acceleration;
    double slope = 0;
    for (std::size_t j = 0; j < L; ++j) {
      const auto& w = windows[i * L + j];
      const Vec2 implied = implied_acceleration(predicted[i * L + j], back(w, 0), back(w, 1), w.dt);
      const double p = implied.dot(a) / a.squaredNorm();  // along a, in units of |a|
      projection[j].push_back(p);
      slope += (settings.lambdas[j] - lambda_mean) * p / lambda_ss;
    }
    slopes.push_back(std::isfinite(slope) ? slope : INFINITY);
  }
  for (const auto& p : projection) out.median_projection.push_back(quantile(p, 0.5));
  out.slope = quantile(slopes, 0.5);
  out.rows = static_cast<std::int64_t>(chosen.size());
  return out;
}

Json TransplantSummary::json() const {
  Json per = Json::array();
  for (std::size_t j = 0; j < lambdas.size(); ++j)
    per.push_back(
        Json{{"lambda", lambdas[j]},
             {"median_projection",
              j < median_projection.size() ? finite_or_null(median_projection[j]) : Json(nullptr)}});
  return Json{{"slope", finite_or_null(slope)},
              {"rows", rows},
              {"replaced_positions", replaced},
              {"real_context_kept", keep_context},
              {"per_lambda", per}};
}

LearnedLawVerdict judge(double law_exponent, const ImpliedAccelerationSummary& implied,
                        const TransplantSummary& transplant, const StepErrors& model,
                        const StepErrors& constant_acceleration) {
  LearnedLawVerdict v;
  auto fail = [&](bool ok, const std::string& what) {
    if (!ok) v.failed.push_back(what);
  };
  // An exact law has a zero-width interval that misses its exponent in the last digits: allow for rounding.
  auto tight = [](double lo, double hi, double target) {
    return lo - 1e-9 <= target && target <= hi + 1e-9 && lo >= target - 0.05 && hi <= target + 0.05;
  };
  const auto& law = implied.law;
  fail(std::abs(transplant.slope) < 0.1,
       "transplant slope |s| >= 0.1 (the prediction follows the history's curvature)");
  fail(tight(law.e_low, law.e_high, -law_exponent),
       "r exponent interval does not contain " + std::to_string(-law_exponent).substr(0, 5) + " within 0.05");
  if (law.mass_varies)
    fail(tight(law.b_low, law.b_high, 1.0), "star-mass exponent interval does not contain 1 within 0.05");
  fail(std::abs(implied.constant_ratio - 1) < 0.05, "law constant not within 5% of the truth");
  fail(implied.median_angle_deg < 2, "median angle to the true acceleration >= 2 degrees");
  fail(model.median() < constant_acceleration.median(), "1-step error does not beat constant acceleration");
  v.learned = v.failed.empty();
  return v;
}

Json LearnedLawVerdict::json() const { return Json{{"learned", learned}, {"failed", failed}}; }

namespace {

std::string place_on_ladder(const BehaviourReport& r) {
  const double m = r.model.median();
  if (!std::isfinite(m) || m >= r.previous.median()) return "worse than the previous position";
  if (m >= r.velocity.median()) return "between the previous position and constant velocity";
  if (m >= r.acceleration.median()) return "between constant velocity and constant acceleration";
  if (m >= r.newton.median()) return "between constant acceleration and the Newton step";
  return "better than the Newton step";
}

StepErrors step_errors(const std::vector<BehaviourRow>& rows, const std::vector<Vec2>& predicted) {
  StepErrors e;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double d = (predicted[i] - rows[i].next).norm();
    e.distance.push_back(std::isfinite(d) ? d : INFINITY);
  }
  return e;
}

}  // namespace

BehaviourReport evaluate_behaviour(const NextPositionPredictor& predictor,
                                   const std::vector<BehaviourRow>& rows, const BehaviourSettings& settings) {
  if (rows.size() < 5)
    throw Error("behaviour: at least 5 rows are needed, got " + std::to_string(rows.size()));
  BehaviourReport report;
  report.law_exponent = rows.front().window.k;
  std::vector<TrackWindow> windows;
  for (const auto& row : rows) {
    if (row.window.k != report.law_exponent) throw Error("behaviour: the rows mix force laws");
    windows.push_back(row.window);
  }
  report.predicted = predictor(windows);
  if (report.predicted.size() != rows.size())
    throw Error("behaviour: the predictor returned the wrong number of rows");
  report.model = step_errors(rows, report.predicted);
  report.previous = step_errors(rows, previous_position_predictor()(windows));
  report.velocity = step_errors(rows, constant_velocity_predictor()(windows));
  report.acceleration = step_errors(rows, constant_acceleration_predictor()(windows));
  report.newton = step_errors(rows, newton_step_predictor()(windows));
  for (std::size_t i = 0; i < rows.size(); ++i)
    report.implied_acceleration.push_back(
        implied_acceleration(report.predicted[i], back(windows[i], 0), back(windows[i], 1), windows[i].dt));
  report.implied = summarise_implied(rows, report.implied_acceleration, settings.bootstrap, settings.seed);
  report.transplant = curvature_transplant(predictor, rows, settings, settings.transplant_history, false);
  // With a mass that varies between systems, only the context tells the mass: keep it and replace the last 3.
  if (report.implied.law.mass_varies)
    report.mass_transplant = curvature_transplant(predictor, rows, settings, 3, true);
  report.verdict = judge(report.law_exponent, report.implied,
                         report.mass_transplant.rows > 0 ? report.mass_transplant : report.transplant,
                         report.model, report.acceleration);
  report.ladder_position = place_on_ladder(report);
  return report;
}

Json BehaviourReport::json() const {
  return Json{{"law_exponent", law_exponent},
              {"verdict", verdict.json()},
              {"ladder_position", ladder_position},
              {"one_step_error_au", Json{{"model", model.json()},
                                         {"previous_position", previous.json()},
                                         {"constant_velocity", velocity.json()},
                                         {"constant_acceleration", acceleration.json()},
                                         {"newton_step", newton.json()}}},
              {"implied_acceleration", implied.json()},
              {"transplant", transplant.json()},
              {"mass_transplant", mass_transplant.rows > 0 ? mass_transplant.json() : Json(nullptr)}};
}

}  // namespace orbitlaw::probe
