// Integrators against analytic orbits, conservation laws, and the symplectic method's convergence order.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "orbitlaw/simulator.hpp"
#include "test_systems.hpp"

using namespace orbitlaw::simulator;

namespace {

InitialConditions kepler_pair(double e) {
  OrbitalElements el;
  el.a = 1.0;
  el.e = e;
  el.omega = 0.7;
  el.M0 = 0.3;
  return make_system(1.0, {1e-3}, {el}, 2);
}

double period(double a, double total_mass) {
  return 2 * std::numbers::pi * std::sqrt(a * a * a / (kGravitationalConstant * total_mass));
}

double max_position_difference(const Trajectory& a, const Trajectory& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.position.size(); ++k)
    worst = std::max(worst, std::abs(a.position[k] - b.position[k]));
  return worst;
}

IntegratorSettings settings_for(IntegratorKind kind) {
  IntegratorSettings s;
  s.kind = kind;
  return s;
}

}  // namespace

// 100 orbits of an e = 0.5 Kepler orbit, observed 7 times per orbit, against the analytic solution.
TEST(Integrators, AdaptiveMatchesKeplerOverHundredOrbits) {
  const auto ic = kepler_pair(0.5);
  const double P = period(1.0, 1.001);
  std::vector<double> times;
  for (int k = 0; k <= 700; ++k) times.push_back(k * P / 7.0);
  const auto exact = integrate(ic, times, settings_for(IntegratorKind::kKepler));
  ASSERT_EQ(exact.abort, Abort::kNone);
  // Stated bounds after 100 orbits for both adaptive integrators at their default tolerance (1e-13): position
  // 1e-9 AU, relative energy and angular momentum 1e-11.
  for (auto kind : {IntegratorKind::kRungeKuttaFehlberg78, IntegratorKind::kBulirschStoer}) {
    const auto numeric = integrate(ic, times, settings_for(kind));
    ASSERT_EQ(numeric.abort, Abort::kNone) << integrator_name(kind);
    ASSERT_EQ(numeric.n_steps(), 701);
    EXPECT_EQ(numeric.time.back(), times.back());  // observations land exactly on the requested times
    const double error = max_position_difference(numeric, exact);
    std::printf("[ info ] %s: 100 orbits, max position error %.3e AU, energy error %.2e, %lld evaluations\n",
                integrator_name(kind).c_str(), error, numeric.energy_error,
                static_cast<long long>(numeric.evaluations));
    EXPECT_LT(error, 1e-9) << integrator_name(kind);
    EXPECT_LT(numeric.energy_error, 1e-11) << integrator_name(kind);
    EXPECT_LT(numeric.angular_momentum_error, 1e-11) << integrator_name(kind);
  }
  // The analytic orbit itself conserves both quantities to rounding.
  EXPECT_LT(exact.energy_error, 1e-13);
  EXPECT_LT(exact.angular_momentum_error, 1e-13);
}

TEST(Integrators, RecordedAccelerationsAreNewtonsAtRecordedPositions) {
  const auto ic = kepler_pair(0.2);
  const auto tr = integrate(ic, {0.0, 0.1, 0.2}, settings_for(IntegratorKind::kRungeKuttaFehlberg78));
  // Two bodies: a_planet = G M_star (x_star - x_planet) / r^3, equal to the star-only acceleration.
  for (int k = 0; k < 3; ++k) {
    const double* q = &tr.position[k * 4];
    const double dx = q[2] - q[0], dy = q[3] - q[1];
    const double r3 = std::pow(dx * dx + dy * dy, 1.5);
    EXPECT_NEAR(tr.acceleration[k * 4 + 0], kGravitationalConstant * 1.0 * dx / r3, 1e-12);
    EXPECT_NEAR(tr.star_acceleration[k * 4 + 1], kGravitationalConstant * 1.0 * dy / r3, 1e-12);
    EXPECT_NEAR(tr.acceleration[k * 4 + 2], -kGravitationalConstant * 1e-3 * dx / r3, 1e-15);
    EXPECT_EQ(tr.star_acceleration[k * 4 + 2], 0.0);
  }
}

// Order of symplectic_rkn_sb3a_mclachlan measured from two step sizes against the analytic orbit.
TEST(Integrators, SymplecticConvergesWithOrderFour) {
  const auto ic = kepler_pair(0.3);
  const double P = period(1.0, 1.001);
  const std::vector<double> times = {10 * P};
  const auto exact = integrate(ic, times, settings_for(IntegratorKind::kKepler));
  double errors[2];
  for (int k = 0; k < 2; ++k) {
    auto s = settings_for(IntegratorKind::kSymplectic);
    s.step = P / (50.0 * (1 << k));
    errors[k] = max_position_difference(integrate(ic, times, s), exact);
  }
  const double order = std::log2(errors[0] / errors[1]);
  std::printf("[ info ] symplectic errors %.3e (P/50), %.3e (P/100): order %.2f\n", errors[0], errors[1],
              order);
  EXPECT_GT(order, 3.7);
  EXPECT_LT(order, 4.3);
}

TEST(Integrators, ConservationInFivePlanetSystem) {
  const auto ic = test::five_planet_system();
  std::vector<double> times;
  for (int k = 0; k < 166; ++k) times.push_back(0.5 * k);  // the vafa-paper span of a 6-planet system
  for (auto kind : {IntegratorKind::kRungeKuttaFehlberg78, IntegratorKind::kBulirschStoer}) {
    const auto tr = integrate(ic, times, settings_for(kind));
    ASSERT_EQ(tr.abort, Abort::kNone);
    std::printf("[ info ] %s 5 planets 82.5 yr: energy %.2e, angular momentum %.2e\n",
                integrator_name(kind).c_str(), tr.energy_error, tr.angular_momentum_error);
    EXPECT_LT(tr.energy_error, 1e-11);
    EXPECT_LT(tr.angular_momentum_error, 1e-11);
  }
  auto symplectic = settings_for(IntegratorKind::kSymplectic);
  const auto tr = integrate(ic, times, symplectic);
  std::printf("[ info ] symplectic (auto step) energy %.2e, angular momentum %.2e\n", tr.energy_error,
              tr.angular_momentum_error);
  EXPECT_LT(tr.energy_error, 1e-8);
  EXPECT_LT(tr.angular_momentum_error, 1e-10);  // symplectic RKN conserves angular momentum to rounding
}

// The outer solar system (Sun, Jupiter..Neptune). The unit test runs 100 Jupiter orbits (the benchmark runs
// 1000); stated bound: relative energy and angular momentum error below 1e-11 for the adaptive default.
TEST(Integrators, OuterSolarSystemEnergy) {
  SimulationConfig config = preset_defaults("outer-solar-system");
  config.dim = 3;
  const auto draw = sample_system(config, 0, 0);
  const double jupiter = period(5.20288700, 1.0 + 9.5479194e-4);
  std::vector<double> times;
  for (int k = 0; k <= 100; ++k) times.push_back(k * jupiter);
  const auto tr = integrate(draw.initial, times, settings_for(IntegratorKind::kRungeKuttaFehlberg78));
  ASSERT_EQ(tr.abort, Abort::kNone);
  std::printf("[ info ] outer solar system, 100 Jupiter orbits: energy %.2e, angular momentum %.2e\n",
              tr.energy_error, tr.angular_momentum_error);
  EXPECT_LT(tr.energy_error, 1e-11);
  EXPECT_LT(tr.angular_momentum_error, 1e-11);
}

TEST(Integrators, CloseEncounterAborts) {
  // Two massive planets on crossing orbits (the outer one's pericentre 0.8 AU is inside the inner circle).
  std::vector<OrbitalElements> planets(2);
  planets[0].a = 1.0;
  planets[1].a = 1.6;
  planets[1].e = 0.5;
  planets[1].M0 = 2.0;
  const auto ic = make_system(1.0, {1e-3, 1e-3}, planets, 2);
  std::vector<double> times;
  for (int k = 0; k < 2000; ++k) times.push_back(0.5 * k);
  const auto tr = integrate(ic, times, settings_for(IntegratorKind::kRungeKuttaFehlberg78));
  EXPECT_EQ(tr.abort, Abort::kCloseEncounter);
  EXPECT_LT(tr.n_steps(), 2000);
}
