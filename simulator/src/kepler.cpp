// Analytic two-body orbits: Kepler's equation and the conversion from orbital elements to a state vector.
#include <cmath>

#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator {

double solve_kepler(double mean_anomaly, double e) {
  // Reduce to [-pi, pi] so the starting guess is good and the result does not lose digits to large M.
  double M = std::remainder(mean_anomaly, 2.0 * std::numbers::pi);
  // Starting at pi for eccentric orbits keeps Newton's iteration monotone (Danby's advice is similar).
  double E = e < 0.8 ? M : (M >= 0 ? std::numbers::pi : -std::numbers::pi);
  for (int iteration = 0; iteration < 64; ++iteration) {
    double f = E - e * std::sin(E) - M;
    double fp = 1.0 - e * std::cos(E);
    double delta = f / fp;
    E -= delta;
    if (std::abs(delta) <= 1e-15 * (1.0 + std::abs(E))) break;
  }
  return E;
}

void kepler_state(const OrbitalElements& el, double mu, double t, int dim, double* position,
                  double* velocity) {
  const double n = std::sqrt(mu / (el.a * el.a * el.a));
  const double E = solve_kepler(el.M0 + n * t, el.e);
  const double cosE = std::cos(E), sinE = std::sin(E);
  const double root = std::sqrt(1.0 - el.e * el.e);
  const double denominator = 1.0 - el.e * cosE;
  // Perifocal frame: x towards pericentre, y along the motion at pericentre.
  const double xp = el.a * (cosE - el.e);
  const double yp = el.a * root * sinE;
  const double vxp = -el.a * n * sinE / denominator;
  const double vyp = el.a * n * root * cosE / denominator;
  // Rotation R = Rz(Omega) Rx(i) Rz(omega) applied to the perifocal vectors.
  const double cO = std::cos(el.Omega), sO = std::sin(el.Omega);
  const double co = std::cos(el.omega), so = std::sin(el.omega);
  const double ci = std::cos(el.i), si = std::sin(el.i);
  const double r11 = cO * co - sO * so * ci, r12 = -cO * so - sO * co * ci;
  const double r21 = sO * co + cO * so * ci, r22 = -sO * so + cO * co * ci;
  const double r31 = so * si, r32 = co * si;
  position[0] = r11 * xp + r12 * yp;
  position[1] = r21 * xp + r22 * yp;
  velocity[0] = r11 * vxp + r12 * vyp;
  velocity[1] = r21 * vxp + r22 * vyp;
  if (dim == 3) {
    position[2] = r31 * xp + r32 * yp;
    velocity[2] = r31 * vxp + r32 * vyp;
  }
}

}  // namespace orbitlaw::simulator
