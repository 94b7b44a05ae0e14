// Gravity among all bodies under the power-law force F = G m1 m2 / r^k (Newton for k = 2; docs/design.md
// section 2): accelerations, energy, angular momentum, and building a barycentric system from orbital
// elements.
#include <cmath>
#include <sstream>
#include <string>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator {

namespace {

// kNewton selects the original inverse-square arithmetic at compile time, so k = 2 output stays bit-identical
// and pays for no pow(); other laws need G / r^(k+1) = G / (r^2)^((k+1)/2).
template <int D, bool kNewton>
void accelerations_fixed(const std::vector<double>& mass, const double* x, double* a, double half_k_plus_1) {
  const int n = static_cast<int>(mass.size());
  for (int k = 0; k < n * D; ++k) a[k] = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      double d[D];
      double r2 = 0.0;
      for (int c = 0; c < D; ++c) {
        d[c] = x[j * D + c] - x[i * D + c];
        r2 += d[c] * d[c];
      }
      const double inv_r3 = kNewton ? kGravitationalConstant / (r2 * std::sqrt(r2))
                                    : kGravitationalConstant / std::pow(r2, half_k_plus_1);
      const double si = mass[j] * inv_r3, sj = mass[i] * inv_r3;
      for (int c = 0; c < D; ++c) {
        a[i * D + c] += si * d[c];
        a[j * D + c] -= sj * d[c];
      }
    }
  }
}

}  // namespace

void require_force_exponent(double k, const std::string& name) {
  if (valid_force_exponent(k)) return;
  std::ostringstream out;
  out << name << " must be a finite number with 1 < k < 3 (2 = Newton; k <= 1 has no potential vanishing at "
      << "infinity, k >= 3 no stable circular orbit), got " << k;
  throw Error(out.str());
}

void accelerations(const std::vector<double>& mass, int dim, const double* position, double* acceleration,
                   double force_exponent) {
  const double half_k_plus_1 = 0.5 * (force_exponent + 1.0);
  if (force_exponent == kNewtonExponent) {
    if (dim == 2) {
      accelerations_fixed<2, true>(mass, position, acceleration, half_k_plus_1);
    } else {
      accelerations_fixed<3, true>(mass, position, acceleration, half_k_plus_1);
    }
  } else if (dim == 2) {
    accelerations_fixed<2, false>(mass, position, acceleration, half_k_plus_1);
  } else {
    accelerations_fixed<3, false>(mass, position, acceleration, half_k_plus_1);
  }
}

void star_accelerations(const std::vector<double>& mass, int dim, const double* x, double* a,
                        double force_exponent) {
  const int n = static_cast<int>(mass.size());
  const int s = n - 1;
  const bool newton = force_exponent == kNewtonExponent;
  const double half_k_plus_1 = 0.5 * (force_exponent + 1.0);
  for (int k = 0; k < n * dim; ++k) a[k] = 0.0;
  for (int i = 0; i < s; ++i) {
    double r2 = 0.0;
    for (int c = 0; c < dim; ++c) r2 += (x[s * dim + c] - x[i * dim + c]) * (x[s * dim + c] - x[i * dim + c]);
    const double r_k_plus_1 = newton ? r2 * std::sqrt(r2) : std::pow(r2, half_k_plus_1);
    const double scale = kGravitationalConstant * mass[s] / r_k_plus_1;
    for (int c = 0; c < dim; ++c) a[i * dim + c] = scale * (x[s * dim + c] - x[i * dim + c]);
  }
}

double total_energy(const std::vector<double>& mass, int dim, const double* x, const double* v,
                    double force_exponent) {
  const int n = static_cast<int>(mass.size());
  const bool newton = force_exponent == kNewtonExponent;
  const double k_minus_1 = force_exponent - 1.0;
  double kinetic = 0.0, potential = 0.0;
  for (int i = 0; i < n; ++i) {
    double v2 = 0.0;
    for (int c = 0; c < dim; ++c) v2 += v[i * dim + c] * v[i * dim + c];
    kinetic += 0.5 * mass[i] * v2;
    for (int j = i + 1; j < n; ++j) {
      double r2 = 0.0;
      for (int c = 0; c < dim; ++c)
        r2 += (x[j * dim + c] - x[i * dim + c]) * (x[j * dim + c] - x[i * dim + c]);
      if (newton) {
        potential -= kGravitationalConstant * mass[i] * mass[j] / std::sqrt(r2);
      } else {
        // U = -G m_i m_j / ((k - 1) r^(k-1)): zero at infinity for k > 1, the work done against F = G m m /
        // r^k.
        potential -= kGravitationalConstant * mass[i] * mass[j] / (k_minus_1 * std::pow(r2, 0.5 * k_minus_1));
      }
    }
  }
  return kinetic + potential;
}

std::vector<double> angular_momentum(const std::vector<double>& mass, int dim, const double* x,
                                     const double* v) {
  std::vector<double> L(dim == 2 ? 1 : 3, 0.0);
  for (std::size_t i = 0; i < mass.size(); ++i) {
    const double* r = x + i * dim;
    const double* u = v + i * dim;
    if (dim == 2) {
      L[0] += mass[i] * (r[0] * u[1] - r[1] * u[0]);
    } else {
      L[0] += mass[i] * (r[1] * u[2] - r[2] * u[1]);
      L[1] += mass[i] * (r[2] * u[0] - r[0] * u[2]);
      L[2] += mass[i] * (r[0] * u[1] - r[1] * u[0]);
    }
  }
  return L;
}

InitialConditions make_system(double star_mass, const std::vector<double>& planet_masses,
                              const std::vector<OrbitalElements>& planets, int dim, double force_exponent) {
  if (dim != 2 && dim != 3) throw Error("dim must be 2 or 3, got " + std::to_string(dim));
  require_force_exponent(force_exponent, "force exponent");
  if (!(star_mass > 0) || !std::isfinite(star_mass)) {
    throw Error("star mass must be positive and finite, got " + std::to_string(star_mass));
  }
  if (planet_masses.size() != planets.size()) throw Error("planet masses and elements differ in count");
  if (planets.empty()) throw Error("a system needs at least one planet");
  const int n = static_cast<int>(planets.size()) + 1;
  InitialConditions ic;
  ic.dim = dim;
  ic.mass.assign(planet_masses.begin(), planet_masses.end());
  ic.mass.push_back(star_mass);
  ic.elements = planets;
  ic.force_exponent = force_exponent;
  ic.position.assign(n * dim, 0.0);
  ic.velocity.assign(n * dim, 0.0);
  double total_mass = star_mass;
  for (std::size_t p = 0; p < planets.size(); ++p) {
    const auto& el = planets[p];
    const std::string which = "planet " + std::to_string(p + 1);
    if (!(planet_masses[p] > 0) || !std::isfinite(planet_masses[p])) {
      throw Error(which + ": mass must be positive, got " + std::to_string(planet_masses[p]));
    }
    if (!(el.a > 0) || !std::isfinite(el.a)) {
      throw Error(which + ": semi-major axis must be positive, got " + std::to_string(el.a));
    }
    if (!(el.e >= 0 && el.e < 1)) {
      throw Error(which + ": eccentricity must be in [0, 1) (bound orbit), got " + std::to_string(el.e));
    }
    if (dim == 2 && (el.i != 0 || el.Omega != 0)) {
      throw Error(which + ": a planar system needs i = 0 and Omega = 0 (orientation is omega)");
    }
    total_mass += planet_masses[p];
    const double mu = kGravitationalConstant * (star_mass + planet_masses[p]);
    kepler_state(el, mu, 0.0, dim, &ic.position[p * dim], &ic.velocity[p * dim]);
    if (force_exponent != kNewtonExponent) {
      // Circular speed at radius a: v^2 = mu / a^(k-1) under the k law against mu / a under Newton's, so the
      // Kepler velocity is scaled by their ratio a^(1 - k/2) (see make_system in nbody.hpp). Scaling the
      // whole heliocentric vector before the barycentric shift keeps the total momentum zero.
      const double scale = std::pow(el.a, 1.0 - 0.5 * force_exponent);
      for (int c = 0; c < dim; ++c) ic.velocity[p * dim + c] *= scale;
    }
  }
  // Heliocentric -> barycentric: the star sits at -sum(m_i r_i) / M_total, and every planet moves with it.
  const int s = n - 1;
  for (int c = 0; c < dim; ++c) {
    double moment_x = 0.0, moment_v = 0.0;
    for (int p = 0; p < s; ++p) {
      moment_x += ic.mass[p] * ic.position[p * dim + c];
      moment_v += ic.mass[p] * ic.velocity[p * dim + c];
    }
    const double star_x = -moment_x / total_mass, star_v = -moment_v / total_mass;
    for (int p = 0; p < s; ++p) {
      ic.position[p * dim + c] += star_x;
      ic.velocity[p * dim + c] += star_v;
    }
    ic.position[s * dim + c] = star_x;
    ic.velocity[s * dim + c] = star_v;
  }
  return ic;
}

IntegratorKind parse_integrator(const std::string& name) {
  if (name == "rkf78") return IntegratorKind::kRungeKuttaFehlberg78;
  if (name == "bulirsch-stoer") return IntegratorKind::kBulirschStoer;
  if (name == "symplectic") return IntegratorKind::kSymplectic;
  if (name == "kepler") return IntegratorKind::kKepler;
  throw Error("unknown integrator '" + name + "' (choose rkf78, bulirsch-stoer, symplectic or kepler)");
}

std::vector<std::string> integrator_names() { return {"rkf78", "bulirsch-stoer", "symplectic", "kepler"}; }

std::string integrator_name(IntegratorKind kind) {
  switch (kind) {
    case IntegratorKind::kRungeKuttaFehlberg78:
      return "rkf78";
    case IntegratorKind::kBulirschStoer:
      return "bulirsch-stoer";
    case IntegratorKind::kSymplectic:
      return "symplectic";
    case IntegratorKind::kKepler:
      return "kepler";
  }
  return "unknown";
}

}  // namespace orbitlaw::simulator
