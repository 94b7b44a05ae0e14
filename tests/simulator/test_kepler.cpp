// Analytic Kepler orbits and building systems, checked against closed-form facts of the two-body problem.
#include <gtest/gtest.h>

#include <cmath>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator/nbody.hpp"

using namespace orbitlaw::simulator;

TEST(Kepler, SolvesKeplersEquationToRounding) {
  for (double e : {0.0, 0.1, 0.5, 0.9, 0.99}) {
    for (double M = -20.0; M <= 20.0; M += 0.37) {
      const double E = solve_kepler(M, e);
      EXPECT_NEAR(std::remainder(E - e * std::sin(E) - M, 2 * std::numbers::pi), 0.0, 1e-14) << e << " " << M;
    }
  }
}

TEST(Kepler, CircularOrbitQuarterPeriodByHand) {
  // a = 1 AU about 1 Msun (planet mass 0): period 1 yr, speed 2 pi AU/yr. After a quarter period the planet
  // has moved from (1, 0) to (0, 1) with velocity (-2 pi, 0).
  OrbitalElements el;
  double x[2], v[2];
  kepler_state(el, kGravitationalConstant, 0.25, 2, x, v);
  EXPECT_NEAR(x[0], 0.0, 1e-14);
  EXPECT_NEAR(x[1], 1.0, 1e-14);
  EXPECT_NEAR(v[0], -2 * std::numbers::pi, 1e-13);
  EXPECT_NEAR(v[1], 0.0, 1e-13);
}

TEST(Kepler, EccentricOrbitSatisfiesVisVivaAndApsides) {
  OrbitalElements el;
  el.a = 2.5;
  el.e = 0.6;
  el.i = 0.3;
  el.Omega = 1.1;
  el.omega = 2.0;
  el.M0 = 0.0;  // starts at pericentre
  const double mu = kGravitationalConstant * 1.7;
  const double period = 2 * std::numbers::pi * std::sqrt(el.a * el.a * el.a / mu);
  double x[3], v[3];
  kepler_state(el, mu, 0.0, 3, x, v);
  EXPECT_NEAR(std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), el.a * (1 - el.e), 1e-13);
  kepler_state(el, mu, 0.5 * period, 3, x, v);
  EXPECT_NEAR(std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), el.a * (1 + el.e), 1e-12);
  for (double t = 0; t < 3 * period; t += 0.11) {
    kepler_state(el, mu, t, 3, x, v);
    const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    EXPECT_NEAR(v2, mu * (2 / r - 1 / el.a), 1e-11 * mu / el.a);
    // The orbit normal is fixed by i and Omega: h = r x v along (sin i sin Omega, -sin i cos Omega, cos i).
    const double h[3] = {x[1] * v[2] - x[2] * v[1], x[2] * v[0] - x[0] * v[2], x[0] * v[1] - x[1] * v[0]};
    const double hn = std::sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
    EXPECT_NEAR(h[0] / hn, std::sin(el.i) * std::sin(el.Omega), 1e-12);
    EXPECT_NEAR(h[2] / hn, std::cos(el.i), 1e-12);
    EXPECT_NEAR(hn, std::sqrt(mu * el.a * (1 - el.e * el.e)), 1e-11 * hn);
  }
}

TEST(MakeSystem, BarycentricFrameAndTwoBodySplit) {
  OrbitalElements el;
  el.a = 1.0;
  el.e = 0.2;
  auto ic = make_system(0.8, {0.2}, {el}, 2);
  ASSERT_EQ(ic.n_bodies(), 2);
  // Centre of mass at rest at the origin; star offset = -m/(M+m) times the relative vector.
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(0.2 * ic.position[c] + 0.8 * ic.position[2 + c], 0.0, 1e-15);
    EXPECT_NEAR(0.2 * ic.velocity[c] + 0.8 * ic.velocity[2 + c], 0.0, 1e-14);
  }
  const double separation = ic.position[0] - ic.position[2];
  EXPECT_NEAR(separation, 0.8, 1e-14);  // pericentre on +x: a (1 - e)
  EXPECT_NEAR(ic.position[2], -0.2 * 0.8, 1e-15);
}

TEST(MakeSystem, RejectsUnphysicalInput) {
  OrbitalElements el;
  el.e = 1.0;
  EXPECT_THROW(make_system(1.0, {1e-3}, {el}, 2), orbitlaw::Error);
  el.e = 0.1;
  EXPECT_THROW(make_system(1.0, {0.0}, {el}, 2), orbitlaw::Error);
  EXPECT_THROW(make_system(-1.0, {1e-3}, {el}, 2), orbitlaw::Error);
  EXPECT_THROW(make_system(1.0, {1e-3}, {el}, 4), orbitlaw::Error);
  el.a = -1;
  EXPECT_THROW(make_system(1.0, {1e-3}, {el}, 2), orbitlaw::Error);
  try {
    el.a = 1;
    el.e = 1.5;
    make_system(1.0, {1e-3}, {el}, 2);
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("eccentricity"), std::string::npos) << e.what();
  }
}

TEST(Physics, AccelerationsMatchHandComputedThreeBodyCase) {
  // Bodies on a line at x = 0, 1, 3 with masses 1, 2, 3 (G = 4 pi^2):
  // a0 = G (2/1 + 3/9) = G * 7/3; a1 = G (-1/1 + 3/4); a2 = G (-1/9 - 2/4).
  const std::vector<double> mass = {1, 2, 3};
  const double x[6] = {0, 0, 1, 0, 3, 0};
  double a[6];
  accelerations(mass, 2, x, a);
  const double G = kGravitationalConstant;
  EXPECT_NEAR(a[0], G * 7.0 / 3.0, 1e-12);
  EXPECT_NEAR(a[2], G * (-1.0 + 0.75), 1e-12);
  EXPECT_NEAR(a[4], G * (-1.0 / 9.0 - 0.5), 1e-12);
  for (int k : {1, 3, 5}) EXPECT_EQ(a[k], 0.0);
  double as[6];
  star_accelerations(mass, 2, x, as);  // star = body 2 (last), mass 3
  EXPECT_NEAR(as[0], G * 3.0 / 9.0, 1e-12);
  EXPECT_NEAR(as[2], G * 3.0 / 4.0, 1e-12);
  EXPECT_EQ(as[4], 0.0);
  const double v[6] = {1, 0, 0, 1, 0, 0};
  EXPECT_NEAR(total_energy(mass, 2, x, v), 0.5 * 1 + 0.5 * 2 - G * (2.0 + 3.0 / 3.0 + 6.0 / 2.0), 1e-12);
  EXPECT_NEAR(angular_momentum(mass, 2, x, v)[0], 2.0 * 1.0, 1e-15);
}
