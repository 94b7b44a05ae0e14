// Time integration of an N-body system through Boost.Odeint (adaptive and symplectic) or analytic Kepler
// orbits, recording the state at requested observation times.
#include <algorithm>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <limits>
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator {

namespace odeint = boost::numeric::odeint;
using StateVector = std::vector<double>;

namespace {

// Thrown from inside the right-hand side to stop an integration that went somewhere we do not keep.
struct IntegrationAborted {
  Abort reason;
};

// Pairwise accelerations under the system's force law (the same arithmetic as accelerations() in
// physics.cpp) that also watch for close encounters and count evaluations. The squared encounter distance
// of every pair is precomputed so the guard costs one comparison per pair.
class GuardedGravity {
 public:
  GuardedGravity(const InitialConditions& ic, const IntegratorSettings& settings)
      : mass_(ic.mass),
        dim_(ic.dim),
        n_(ic.n_bodies()),
        max_evaluations_(settings.max_evaluations),
        newton_(ic.force_exponent == kNewtonExponent),
        half_k_plus_1_(0.5 * (ic.force_exponent + 1.0)) {
    limit2_.assign(static_cast<std::size_t>(n_) * n_, 0.0);
    const int s = n_ - 1;
    const double star_mass = mass_[s];
    for (int i = 0; i < s; ++i) {
      limit2_[i * n_ + s] = settings.min_star_distance * settings.min_star_distance;
      if (settings.hill_factor <= 0 || ic.elements.size() != static_cast<std::size_t>(s)) continue;
      for (int j = i + 1; j < s; ++j) {
        // Hill radius under the k law: the planet's pull G m / h^k balances the tidal term (k + 1) G M h /
        // a^(k+1) of the rotating frame, so h = a (m / ((k + 1) M))^(1/(k+1)); Newton's cube root for k = 2.
        const double mass_ratio = (mass_[i] + mass_[j]) / ((ic.force_exponent + 1.0) * star_mass);
        const double root = newton_ ? std::cbrt((mass_[i] + mass_[j]) / (3.0 * star_mass))
                                    : std::pow(mass_ratio, 1.0 / (ic.force_exponent + 1.0));
        const double hill = root * 0.5 * (ic.elements[i].a + ic.elements[j].a) * settings.hill_factor;
        limit2_[i * n_ + j] = hill * hill;
      }
    }
  }

  void operator()(const double* x, double* a) {
    if (++evaluations_ > max_evaluations_) throw IntegrationAborted{Abort::kStepBudget};
    if (newton_) {
      if (dim_ == 2) {
        compute<2, true>(x, a);
      } else {
        compute<3, true>(x, a);
      }
    } else if (dim_ == 2) {
      compute<2, false>(x, a);
    } else {
      compute<3, false>(x, a);
    }
  }
  std::int64_t evaluations() const { return evaluations_; }

 private:
  // kNewton keeps the inverse-square arithmetic bit-identical and free of pow().
  template <int D, bool kNewton>
  void compute(const double* x, double* a) const {
    for (int k = 0; k < n_ * D; ++k) a[k] = 0.0;
    for (int i = 0; i < n_; ++i) {
      for (int j = i + 1; j < n_; ++j) {
        double d[D];
        double r2 = 0.0;
        for (int c = 0; c < D; ++c) {
          d[c] = x[j * D + c] - x[i * D + c];
          r2 += d[c] * d[c];
        }
        if (r2 < limit2_[i * n_ + j]) {
          throw IntegrationAborted{j == n_ - 1 ? Abort::kStarEncounter : Abort::kCloseEncounter};
        }
        const double inv_r3 = kNewton ? kGravitationalConstant / (r2 * std::sqrt(r2))
                                      : kGravitationalConstant / std::pow(r2, half_k_plus_1_);
        const double si = mass_[j] * inv_r3, sj = mass_[i] * inv_r3;
        for (int c = 0; c < D; ++c) {
          a[i * D + c] += si * d[c];
          a[j * D + c] -= sj * d[c];
        }
      }
    }
  }

  const std::vector<double>& mass_;
  int dim_;
  int n_;
  std::int64_t max_evaluations_;
  bool newton_;
  double half_k_plus_1_;  // (k + 1) / 2: r^(k+1) = (r^2)^((k+1)/2)
  std::int64_t evaluations_ = 0;
  std::vector<double> limit2_;
};

// Stores observations and tracks the conservation errors.
class Recorder {
 public:
  Recorder(const InitialConditions& ic, Trajectory& out, std::size_t n_times) : ic_(ic), out_(out) {
    const int nd = ic.n_bodies() * ic.dim;
    out_.n_bodies = ic.n_bodies();
    out_.dim = ic.dim;
    out_.time.reserve(n_times);
    for (auto* v : {&out_.position, &out_.velocity, &out_.acceleration, &out_.star_acceleration}) {
      v->reserve(n_times * nd);
    }
    energy0_ = total_energy(ic.mass, ic.dim, ic.position.data(), ic.velocity.data(), ic.force_exponent);
    angular0_ = angular_momentum(ic.mass, ic.dim, ic.position.data(), ic.velocity.data());
  }

  void record(double t, const double* q, const double* v) {
    const int nd = ic_.n_bodies() * ic_.dim;
    out_.time.push_back(t);
    out_.position.insert(out_.position.end(), q, q + nd);
    out_.velocity.insert(out_.velocity.end(), v, v + nd);
    const std::size_t offset = out_.acceleration.size();
    out_.acceleration.resize(offset + nd);
    out_.star_acceleration.resize(offset + nd);
    accelerations(ic_.mass, ic_.dim, q, &out_.acceleration[offset], ic_.force_exponent);
    star_accelerations(ic_.mass, ic_.dim, q, &out_.star_acceleration[offset], ic_.force_exponent);
    const double energy = total_energy(ic_.mass, ic_.dim, q, v, ic_.force_exponent);
    out_.energy_error = std::max(out_.energy_error, std::abs(energy - energy0_) / std::abs(energy0_));
    const auto L = angular_momentum(ic_.mass, ic_.dim, q, v);
    double diff2 = 0.0, norm2 = 0.0;
    for (std::size_t c = 0; c < L.size(); ++c) {
      diff2 += (L[c] - angular0_[c]) * (L[c] - angular0_[c]);
      norm2 += angular0_[c] * angular0_[c];
    }
    out_.angular_momentum_error = std::max(out_.angular_momentum_error, std::sqrt(diff2 / norm2));
  }

 private:
  const InitialConditions& ic_;
  Trajectory& out_;
  double energy0_ = 0;
  std::vector<double> angular0_;
};

void integrate_adaptive(const InitialConditions& ic, const std::vector<double>& times,
                        const IntegratorSettings& settings, GuardedGravity& gravity, Recorder& recorder) {
  const std::size_t nd = ic.position.size();
  StateVector x(2 * nd);
  std::copy(ic.position.begin(), ic.position.end(), x.begin());
  std::copy(ic.velocity.begin(), ic.velocity.end(), x.begin() + nd);
  auto rhs = [&](const StateVector& state, StateVector& derivative, double) {
    std::copy(state.begin() + nd, state.end(), derivative.begin());
    gravity(state.data(), derivative.data() + nd);
  };
  auto observe = [&](const StateVector& state, double t) {
    recorder.record(t, state.data(), state.data() + nd);
  };
  // The observation list starts at t = 0 (the initial state) so that integrate_times hits every time exactly.
  std::vector<double> all_times;
  all_times.reserve(times.size() + 1);
  const bool prepend_zero = times.front() > 0;
  if (prepend_zero) all_times.push_back(0.0);
  all_times.insert(all_times.end(), times.begin(), times.end());
  bool skip_first = prepend_zero;
  auto observe_requested = [&](const StateVector& state, double t) {
    if (skip_first) {
      skip_first = false;
      return;
    }
    observe(state, t);
  };
  const double first_dt = all_times.size() > 1 ? (all_times[1] - all_times[0]) / 16.0 : 1e-3;
  odeint::max_step_checker no_limit(std::numeric_limits<int>::max());  // our evaluation budget bounds work
  if (settings.kind == IntegratorKind::kBulirschStoer) {
    odeint::bulirsch_stoer<StateVector> stepper(settings.abs_tol, settings.rel_tol);
    odeint::integrate_times(stepper, rhs, x, all_times.begin(), all_times.end(), first_dt, observe_requested,
                            no_limit);
  } else {
    auto stepper = odeint::make_controlled(settings.abs_tol, settings.rel_tol,
                                           odeint::runge_kutta_fehlberg78<StateVector>());
    odeint::integrate_times(stepper, rhs, x, all_times.begin(), all_times.end(), first_dt, observe_requested,
                            no_limit);
  }
}

// The shortest time scale of the system: each planet's period shortened by its pericentre passage. Under a
// k law the circular period at radius a is 2 pi sqrt(a^(k+1) / mu) (from v^2 = mu / a^(k-1)) and the
// dynamical time at pericentre scales as r^((k+1)/2), hence the factor (1 - e)^((k+1)/2); k = 2 keeps the
// original arithmetic.
double shortest_time_scale(const InitialConditions& ic) {
  double shortest = std::numeric_limits<double>::infinity();
  const double star_mass = ic.mass.back();
  const double k = ic.force_exponent;
  for (std::size_t p = 0; p < ic.elements.size(); ++p) {
    const auto& el = ic.elements[p];
    const double mu = kGravitationalConstant * (star_mass + ic.mass[p]);
    if (k == kNewtonExponent) {
      const double period =
          2.0 * std::numbers::pi *
          std::sqrt(el.a * el.a * el.a / (kGravitationalConstant * (star_mass + ic.mass[p])));
      shortest = std::min(shortest, period * std::pow(1.0 - el.e, 1.5));
    } else {
      const double period = 2.0 * std::numbers::pi * std::sqrt(std::pow(el.a, k + 1.0) / mu);
      shortest = std::min(shortest, period * std::pow(1.0 - el.e, 0.5 * (k + 1.0)));
    }
  }
  return shortest;
}

void integrate_symplectic(const InitialConditions& ic, const std::vector<double>& times,
                          const IntegratorSettings& settings, GuardedGravity& gravity, Recorder& recorder) {
  StateVector q = ic.position, v = ic.velocity;
  const double target =
      settings.step > 0 ? settings.step : shortest_time_scale(ic) / settings.steps_per_orbit;
  if (!(target > 0) || !std::isfinite(target)) throw Error("symplectic step must be positive");
  auto force = [&](const StateVector& position, StateVector& dvdt) { gravity(position.data(), dvdt.data()); };
  odeint::symplectic_rkn_sb3a_mclachlan<StateVector> stepper;
  double t = 0.0;
  for (double t_next : times) {
    const double interval = t_next - t;
    if (interval > 0) {
      // A whole number of equal steps per interval, so observations land exactly on the requested times.
      const auto n_sub = static_cast<std::int64_t>(std::ceil(interval / target * (1.0 - 1e-12)));
      const double h = interval / static_cast<double>(n_sub);
      for (std::int64_t k = 0; k < n_sub; ++k) {
        stepper.do_step(force, std::make_pair(std::ref(q), std::ref(v)), t + static_cast<double>(k) * h, h);
      }
    }
    t = t_next;
    recorder.record(t, q.data(), v.data());
  }
}

void integrate_kepler(const InitialConditions& ic, const std::vector<double>& times, Recorder& recorder) {
  const int n = ic.n_bodies(), s = n - 1, dim = ic.dim;
  if (ic.elements.size() != static_cast<std::size_t>(s)) throw Error("kepler mode needs orbital elements");
  const double star_mass = ic.mass[s];
  double total_mass = star_mass;
  for (int p = 0; p < s; ++p) total_mass += ic.mass[p];
  StateVector q(n * dim), v(n * dim);
  for (double t : times) {
    for (int p = 0; p < s; ++p) {
      kepler_state(ic.elements[p], kGravitationalConstant * (star_mass + ic.mass[p]), t, dim, &q[p * dim],
                   &v[p * dim]);
    }
    for (int c = 0; c < dim; ++c) {
      double moment_x = 0.0, moment_v = 0.0;
      for (int p = 0; p < s; ++p) {
        moment_x += ic.mass[p] * q[p * dim + c];
        moment_v += ic.mass[p] * v[p * dim + c];
      }
      const double star_x = -moment_x / total_mass, star_v = -moment_v / total_mass;
      for (int p = 0; p < s; ++p) {
        q[p * dim + c] += star_x;
        v[p * dim + c] += star_v;
      }
      q[s * dim + c] = star_x;
      v[s * dim + c] = star_v;
    }
    recorder.record(t, q.data(), v.data());
  }
}

}  // namespace

Trajectory integrate(const InitialConditions& initial, const std::vector<double>& times,
                     const IntegratorSettings& settings) {
  if (times.empty()) throw Error("no observation times");
  if (times.front() < 0) throw Error("observation times must not be negative");
  require_force_exponent(initial.force_exponent, "force exponent");
  if (settings.kind == IntegratorKind::kKepler && initial.force_exponent != kNewtonExponent) {
    std::ostringstream message;
    message << "integrator 'kepler' follows analytic Newtonian orbits and needs force_law.exponent = 2, got "
            << initial.force_exponent << " (use rkf78, bulirsch-stoer or symplectic)";
    throw Error(message.str());
  }
  for (std::size_t k = 1; k < times.size(); ++k) {
    if (!(times[k] > times[k - 1])) throw Error("observation times must increase");
  }
  Trajectory out;
  Recorder recorder(initial, out, times.size());
  GuardedGravity gravity(initial, settings);
  try {
    switch (settings.kind) {
      case IntegratorKind::kRungeKuttaFehlberg78:
      case IntegratorKind::kBulirschStoer:
        integrate_adaptive(initial, times, settings, gravity, recorder);
        break;
      case IntegratorKind::kSymplectic:
        integrate_symplectic(initial, times, settings, gravity, recorder);
        break;
      case IntegratorKind::kKepler:
        integrate_kepler(initial, times, recorder);
        break;
    }
  } catch (const IntegrationAborted& aborted) {
    out.abort = aborted.reason;
  } catch (const odeint::odeint_error&) {
    out.abort = Abort::kStepBudget;  // the step-size controller gave up: a near-collision in practice
  }
  out.evaluations = gravity.evaluations();
  return out;
}

}  // namespace orbitlaw::simulator
