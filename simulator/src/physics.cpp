// Newtonian gravity among all bodies: accelerations, energy, angular momentum, and building a barycentric
// system from orbital elements.
#include <cmath>
#include <string>

#include "orbitlaw/error.hpp"
#include "orbitlaw/nbody.hpp"

namespace orbitlaw::simulator {

namespace {

template <int D>
void accelerations_fixed(const std::vector<double>& mass, const double* x, double* a) {
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
      const double inv_r3 = kGravitationalConstant / (r2 * std::sqrt(r2));
      const double si = mass[j] * inv_r3, sj = mass[i] * inv_r3;
      for (int c = 0; c < D; ++c) {
        a[i * D + c] += si * d[c];
        a[j * D + c] -= sj * d[c];
      }
    }
  }
}

}  // namespace

void accelerations(const std::vector<double>& mass, int dim, const double* position, double* acceleration) {
  if (dim == 2) {
    accelerations_fixed<2>(mass, position, acceleration);
  } else {
    accelerations_fixed<3>(mass, position, acceleration);
  }
}

void star_accelerations(const std::vector<double>& mass, int dim, const double* x, double* a) {
  const int n = static_cast<int>(mass.size());
  const int s = n - 1;
  for (int k = 0; k < n * dim; ++k) a[k] = 0.0;
  for (int i = 0; i < s; ++i) {
    double r2 = 0.0;
    for (int c = 0; c < dim; ++c) r2 += (x[s * dim + c] - x[i * dim + c]) * (x[s * dim + c] - x[i * dim + c]);
    const double scale = kGravitationalConstant * mass[s] / (r2 * std::sqrt(r2));
    for (int c = 0; c < dim; ++c) a[i * dim + c] = scale * (x[s * dim + c] - x[i * dim + c]);
  }
}

double total_energy(const std::vector<double>& mass, int dim, const double* x, const double* v) {
  const int n = static_cast<int>(mass.size());
  double kinetic = 0.0, potential = 0.0;
  for (int i = 0; i < n; ++i) {
    double v2 = 0.0;
    for (int c = 0; c < dim; ++c) v2 += v[i * dim + c] * v[i * dim + c];
    kinetic += 0.5 * mass[i] * v2;
    for (int j = i + 1; j < n; ++j) {
      double r2 = 0.0;
      for (int c = 0; c < dim; ++c)
        r2 += (x[j * dim + c] - x[i * dim + c]) * (x[j * dim + c] - x[i * dim + c]);
      potential -= kGravitationalConstant * mass[i] * mass[j] / std::sqrt(r2);
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
                              const std::vector<OrbitalElements>& planets, int dim) {
  if (dim != 2 && dim != 3) throw Error("dim must be 2 or 3, got " + std::to_string(dim));
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
