#pragma once
// Test systems shared by the Newtonian and the counterfactual-law tests, so that both sets of bounds speak of
// the same dynamics.
#include <vector>

#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator::test {

// Five planets about a 1.2 Msun star, a = 1 .. 15 AU, e = 0.05 .. 0.25, masses 1e-6 .. 1e-3 Msun, planar,
// under the force law of exponent k (velocities as make_system builds them for k).
inline InitialConditions five_planet_system(double k = kNewtonExponent) {
  std::vector<OrbitalElements> planets(5);
  const std::vector<double> masses = {1e-3, 3e-4, 5e-5, 2e-4, 1e-6};
  const double a[5] = {1.0, 2.2, 4.1, 7.5, 15.0};
  for (int p = 0; p < 5; ++p) {
    planets[p].a = a[p];
    planets[p].e = 0.05 * (p + 1);
    planets[p].omega = 1.3 * p;
    planets[p].M0 = 0.9 * p;
  }
  return make_system(1.2, masses, planets, 2, k);
}

}  // namespace orbitlaw::simulator::test
