// One system from draw to accepted trajectory: integrate, apply the rejection rule, redraw if needed.
#include <cmath>
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

namespace {

// The first reason (if any) to reject an integrated system; see docs/dataset-format.md, "Rejection rule".
bool rejected(const SimulationConfig& config, const InitialConditions& ic, const Trajectory& tr,
              Rejection& why) {
  switch (tr.abort) {
    case Abort::kCloseEncounter:
      why = Rejection::kCloseEncounter;
      return true;
    case Abort::kStarEncounter:
      why = Rejection::kStarEncounter;
      return true;
    case Abort::kStepBudget:
      why = Rejection::kStepBudget;
      return true;
    case Abort::kNone:
      break;
  }
  const int n = tr.n_bodies, s = n - 1, dim = tr.dim;
  for (int k = 0; k < tr.n_steps(); ++k) {
    const double* q = &tr.position[static_cast<std::size_t>(k) * n * dim];
    const double* v = &tr.velocity[static_cast<std::size_t>(k) * n * dim];
    for (int p = 0; p < s; ++p) {
      double r2 = 0, v2 = 0;
      for (int c = 0; c < dim; ++c) {
        r2 += (q[p * dim + c] - q[s * dim + c]) * (q[p * dim + c] - q[s * dim + c]);
        v2 += (v[p * dim + c] - v[s * dim + c]) * (v[p * dim + c] - v[s * dim + c]);
      }
      const double r = std::sqrt(r2);
      // Two-body energy relative to the star under the system's law; for 1 < k < 3 the potential vanishes at
      // infinity and dominates the centrifugal term there, so E >= 0 means unbound as under Newton.
      const double mu = kGravitationalConstant * (ic.mass[s] + ic.mass[p]);
      const double law = ic.force_exponent;
      const double specific_energy = law == kNewtonExponent
                                         ? 0.5 * v2 - kGravitationalConstant * (ic.mass[s] + ic.mass[p]) / r
                                         : 0.5 * v2 - mu / ((law - 1.0) * std::pow(r, law - 1.0));
      if (r > config.eject_distance || specific_energy >= 0) {
        why = Rejection::kEjection;
        return true;
      }
    }
  }
  // Analytic Kepler orbits ignore planet-planet forces by design, so their N-body energy is not a check.
  if (config.integrator.kind != IntegratorKind::kKepler && tr.energy_error > config.max_energy_error) {
    why = Rejection::kEnergyError;
    return true;
  }
  return false;
}

}  // namespace

const char* rejection_name(Rejection reason) {
  switch (reason) {
    case Rejection::kEjection:
      return "ejection";
    case Rejection::kCloseEncounter:
      return "close_encounter";
    case Rejection::kStarEncounter:
      return "star_encounter";
    case Rejection::kStepBudget:
      return "step_budget";
    case Rejection::kEnergyError:
      return "energy_error";
    case Rejection::kCount:
      break;
  }
  return "unknown";
}

namespace {

System to_system(const InitialConditions& ic, double cadence, const Trajectory& tr) {
  System sys;
  sys.n_bodies = ic.n_bodies();
  sys.n_steps = tr.n_steps();
  sys.dim = ic.dim;
  sys.cadence = cadence;
  sys.mass = ic.mass;
  sys.elements.assign(sys.n_bodies, std::array<double, 6>{});
  for (std::size_t p = 0; p < ic.elements.size(); ++p) sys.elements[p] = ic.elements[p].as_array();
  sys.time = tr.time;
  const int rows = sys.rows();
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto copy = [&](const std::vector<double>& flat) {
    return Eigen::MatrixXd(Eigen::Map<const RowMajor>(flat.data(), rows, sys.dim));
  };
  sys.position = copy(tr.position);
  sys.velocity = copy(tr.velocity);
  sys.acceleration = copy(tr.acceleration);
  sys.star_acceleration = copy(tr.star_acceleration);
  sys.energy_error = tr.energy_error;
  sys.angular_momentum_error = tr.angular_momentum_error;
  return sys;
}

}  // namespace

System simulate_initial(const SimulationConfig& config, const InitialConditions& initial, double cadence,
                        int n_steps, Trajectory* trajectory) {
  // The dataset's attributes come from the config, so a system built for another law would be mislabelled.
  if (initial.force_exponent != config.force_exponent) {
    std::ostringstream message;
    message << "initial conditions were built for force exponent " << initial.force_exponent
            << " but the config has force_law.exponent = " << config.force_exponent;
    throw Error(message.str());
  }
  std::vector<double> times(n_steps);
  for (int k = 0; k < n_steps; ++k) times[k] = k * cadence;
  Trajectory tr = integrate(initial, times, config.integrator);
  System sys = to_system(initial, cadence, tr);
  if (trajectory) *trajectory = std::move(tr);
  return sys;
}

SimulatedSystem simulate_system(const SimulationConfig& config, std::int64_t index) {
  SimulatedSystem out;
  out.index = index;
  for (int attempt = 0; attempt < config.max_attempts; ++attempt) {
    SampledSystem draw = sample_system(config, index, attempt);
    const int n_steps = steps_for(config, draw.initial.n_bodies());
    std::vector<double> times(n_steps);
    for (int k = 0; k < n_steps; ++k) times[k] = k * draw.cadence;
    Trajectory tr = integrate(draw.initial, times, config.integrator);
    Rejection why{};
    if (rejected(config, draw.initial, tr, why)) {
      ++out.rejections[static_cast<int>(why)];
      continue;
    }
    out.system = to_system(draw.initial, draw.cadence, tr);
    out.attempts = attempt + 1;
    return out;
  }
  throw Error("system " + std::to_string(index) + " was rejected " + std::to_string(config.max_attempts) +
              " times in a row; the sampling settings produce unstable systems (see max_attempts)");
}

}  // namespace orbitlaw::simulator
