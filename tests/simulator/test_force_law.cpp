// Counterfactual gravity F = G m1 m2 / r^k (docs/design.md section 2): conservation and circular orbits under
// the k law, stored accelerations against an independent computation, Newton (k = 2) unchanged, kepler mode
// and bad exponents refused, and the dataset attribute round trip.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator.hpp"
#include "test_systems.hpp"

using namespace orbitlaw::simulator;
using orbitlaw::Json;
namespace fs = std::filesystem;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kG = 4.0 * kPi * kPi;  // AU^3 / (Msun yr^2), written out rather than taken from the library

fs::path force_law_scratch(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("orbitlaw_test_force_law_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

IntegratorSettings force_law_settings(IntegratorKind kind) {
  IntegratorSettings s;
  s.kind = kind;
  return s;
}

// Kinetic energy and the pair potential -G m_i m_j / ((k - 1) r^(k-1)), from r = hypot rather than the
// library's (r^2)^((k-1)/2).
struct EnergyParts {
  double kinetic = 0, potential = 0;
};
EnergyParts energy_parts(const std::vector<double>& mass, int dim, const double* x, const double* v,
                         double k) {
  EnergyParts parts;
  const int n = static_cast<int>(mass.size());
  for (int i = 0; i < n; ++i) {
    double v2 = 0;
    for (int c = 0; c < dim; ++c) v2 += v[i * dim + c] * v[i * dim + c];
    parts.kinetic += 0.5 * mass[i] * v2;
    for (int j = i + 1; j < n; ++j) {
      const double r = dim == 2 ? std::hypot(x[j * dim] - x[i * dim], x[j * dim + 1] - x[i * dim + 1])
                                : std::hypot(x[j * dim] - x[i * dim], x[j * dim + 1] - x[i * dim + 1],
                                             x[j * dim + 2] - x[i * dim + 2]);
      parts.potential -= kG * mass[i] * mass[j] / ((k - 1.0) * std::pow(r, k - 1.0));
    }
  }
  return parts;
}
double energy_k(const std::vector<double>& mass, int dim, const double* x, const double* v, double k) {
  const EnergyParts parts = energy_parts(mass, dim, x, v, k);
  return parts.kinetic + parts.potential;
}

// The largest |E - E0| / |E0| over a trajectory's observations, E from energy_k on the recorded states.
double worst_energy_drift(const InitialConditions& ic, const Trajectory& tr, double k) {
  const int stride = ic.n_bodies() * ic.dim;
  const double e0 = energy_k(ic.mass, ic.dim, ic.position.data(), ic.velocity.data(), k);
  double worst = 0;
  for (int m = 0; m < tr.n_steps(); ++m) {
    const double e = energy_k(ic.mass, ic.dim, &tr.position[m * stride], &tr.velocity[m * stride], k);
    worst = std::max(worst, std::abs(e - e0) / std::abs(e0));
  }
  return worst;
}

// Period of a circular orbit of radius r under the k law: v^2 = mu / r^(k-1), so P = 2 pi sqrt(r^(k+1) / mu).
double circular_period(double r, double mu, double k) {
  return 2.0 * kPi * std::sqrt(std::pow(r, k + 1.0) / mu);
}

SimulationConfig config_with_exponent(double k) {
  Json json = {{"systems", 4}, {"seed", 7}, {"planets_max", 4}, {"sequence_rows", 121}};
  json["force_law"] = {{"exponent", k}};
  return simulation_config_from_json(json);
}

WriteOptions force_law_options() {
  WriteOptions options;
  options.provenance = Json{{"fixed", "for comparison"}};
  return options;
}

std::string config_error(const Json& json) {
  try {
    simulation_config_from_json(json);
  } catch (const orbitlaw::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

class ForceLaw : public ::testing::TestWithParam<double> {};
INSTANTIATE_TEST_SUITE_P(Exponents, ForceLaw, ::testing::Values(1.5, 2.5));

// (a) Two planets with planet-planet forces, eccentric orbits, one orbit of the outer planet: every
// non-Kepler integrator conserves the k-law energy. Adaptive ones at their default tolerance within 1e-11;
// the fourth-order symplectic scheme at 400 steps per pericentre time scale within 1e-8.
TEST_P(ForceLaw, EnergyWithTheKPotentialIsConserved) {
  const double k = GetParam();
  OrbitalElements inner, outer;
  inner.a = 1.0, inner.e = 0.3, inner.omega = 0.4, inner.M0 = 1.0;
  outer.a = 2.5, outer.e = 0.1, outer.omega = 2.0, outer.M0 = 4.0;
  const auto ic = make_system(1.0, {1e-3, 1e-4}, {inner, outer}, 2, k);
  const double P = circular_period(2.5, kG * (1.0 + 1e-4), k);
  std::vector<double> times;
  for (int m = 0; m <= 50; ++m) times.push_back(m * P / 50);
  for (auto [kind, tolerance] : {std::pair{IntegratorKind::kRungeKuttaFehlberg78, 1e-11},
                                 {IntegratorKind::kBulirschStoer, 1e-11},
                                 {IntegratorKind::kSymplectic, 1e-8}}) {
    const auto tr = integrate(ic, times, force_law_settings(kind));
    ASSERT_EQ(tr.abort, Abort::kNone) << integrator_name(kind);
    ASSERT_EQ(tr.n_steps(), 51);
    const double worst = worst_energy_drift(ic, tr, k);
    std::printf("[ info ] k = %.1f %s: energy error %.2e over one outer orbit\n", k,
                integrator_name(kind).c_str(), worst);
    EXPECT_LT(worst, tolerance) << integrator_name(kind);
    EXPECT_LT(tr.energy_error, tolerance) << integrator_name(kind);  // the library's own bookkeeping agrees
    EXPECT_LT(tr.angular_momentum_error, 1e-10) << integrator_name(kind);
  }
}

// (b) An e = 0 draw is a circular orbit of the k law: the separation stays at a, and the relative position
// turns at the analytic rate, x(t) = R(2 pi t / P) x(0) with P = 2 pi sqrt(a^(k+1) / (G (M + m))).
TEST_P(ForceLaw, CircularOrbitKeepsItsRadiusAndAnalyticPeriod) {
  const double k = GetParam();
  OrbitalElements el;
  el.a = 1.7;
  el.omega = 0.3;
  const double star = 1.0, planet = 1e-3;
  const auto ic = make_system(star, {planet}, {el}, 2, k);
  const double P = circular_period(el.a, kG * (star + planet), k);
  // The law matters: the Newtonian period at this radius differs by more than 10%.
  ASSERT_GT(std::abs(P - circular_period(el.a, kG * (star + planet), 2.0)), 0.1 * P);
  std::vector<double> times;
  for (int m = 0; m <= 64; ++m) times.push_back(m * P / 32);  // two periods
  for (auto kind : {IntegratorKind::kRungeKuttaFehlberg78, IntegratorKind::kBulirschStoer}) {
    const auto tr = integrate(ic, times, force_law_settings(kind));
    ASSERT_EQ(tr.abort, Abort::kNone);
    const double x0 = tr.position[0] - tr.position[2], y0 = tr.position[1] - tr.position[3];
    double radius_error = 0, phase_error = 0;
    for (int m = 0; m < tr.n_steps(); ++m) {
      const double x = tr.position[m * 4] - tr.position[m * 4 + 2];
      const double y = tr.position[m * 4 + 1] - tr.position[m * 4 + 3];
      radius_error = std::max(radius_error, std::abs(std::hypot(x, y) - el.a) / el.a);
      const double angle = 2.0 * kPi * tr.time[m] / P;
      const double ex = std::cos(angle) * x0 - std::sin(angle) * y0;
      const double ey = std::sin(angle) * x0 + std::cos(angle) * y0;
      phase_error = std::max(phase_error, std::hypot(x - ex, y - ey));
    }
    EXPECT_LT(radius_error, 1e-11) << integrator_name(kind);
    EXPECT_LT(phase_error, 1e-9) << integrator_name(kind);  // AU, after two periods
  }
}

// (b1) The symplectic scheme keeps its fourth order under the k law. No analytic orbit exists for an
// eccentric k != 2 orbit, so the reference is the rkf78 solution at its default tolerance, checked against
// Bulirsch-Stoer (an independent method) to 1e-9 AU; the symplectic errors at steps P/50 and P/100 after ten
// periods must be far above that disagreement and fall by 2^4.
TEST_P(ForceLaw, SymplecticConvergesWithOrderFourAgainstTheAdaptiveReference) {
  const double k = GetParam();
  OrbitalElements el;
  el.a = 1.0, el.e = 0.3, el.omega = 0.7, el.M0 = 0.3;
  const auto ic = make_system(1.0, {1e-3}, {el}, 2, k);
  const double P = circular_period(1.0, kG * 1.001, k);
  const std::vector<double> times = {10 * P};
  const auto reference = integrate(ic, times, force_law_settings(IntegratorKind::kRungeKuttaFehlberg78));
  const auto other = integrate(ic, times, force_law_settings(IntegratorKind::kBulirschStoer));
  ASSERT_EQ(reference.abort, Abort::kNone);
  ASSERT_EQ(other.abort, Abort::kNone);
  auto distance = [&](const Trajectory& tr) {
    double worst = 0;
    for (std::size_t c = 0; c < tr.position.size(); ++c) {
      worst = std::max(worst, std::abs(tr.position[c] - reference.position[c]));
    }
    return worst;
  };
  const double disagreement = distance(other);
  double errors[2];
  for (int halving = 0; halving < 2; ++halving) {
    auto s = force_law_settings(IntegratorKind::kSymplectic);
    s.step = P / (50.0 * (1 << halving));
    errors[halving] = distance(integrate(ic, times, s));
  }
  const double order = std::log2(errors[0] / errors[1]);
  std::printf(
      "[ info ] k = %.1f: rkf78 vs bulirsch-stoer %.2e AU after 10 periods; symplectic %.3e (P/50), "
      "%.3e (P/100): order %.2f\n",
      k, disagreement, errors[0], errors[1], order);
  EXPECT_LT(disagreement, 1e-9);
  EXPECT_GT(errors[1], 1e3 * disagreement);
  EXPECT_GT(order, 3.7);
  EXPECT_LT(order, 4.3);
}

// (b2) The k = 2 conservation test of test_integrators.cpp (the same five planets, eccentricities
// 0.05..0.25, 82.5 yr observed every half year, the span of a vafa-paper system) under the k law. The energy
// error is measured against T0 + |U0| rather than |E0|: for bound orbits in a potential ~ r^-(k-1) the virial
// theorem gives a mean E of -(3 - k)/2 |U|, so |E0| shrinks towards zero as k approaches 3 and the same
// integration error reads larger against it (for this system T0 + |U0| is 3.2 |E0| at k = 2, 7.6 at 2.5 and
// 41 at 2.9). The bounds are the k = 2 test's (1e-11 adaptive, 1e-8 symplectic, on |dE / E0|) converted at
// the Newtonian virial mean T + |U| = 2 |E|: 5e-12 and 5e-9; angular momentum keeps 1e-11 and 1e-10. The
// energy is the k-law one, computed here from the recorded states, and the library's own |dE / E0| must
// agree with it. 1.1 and 2.9 sit near the ends of the accepted range 1 < k < 3.
class ForceLawConservation : public ::testing::TestWithParam<double> {};
INSTANTIATE_TEST_SUITE_P(Exponents, ForceLawConservation, ::testing::Values(1.1, 1.5, 2.5, 2.9));

TEST_P(ForceLawConservation, FivePlanetSystemConservesTheKLawEnergy) {
  const double k = GetParam();
  const auto ic = test::five_planet_system(k);
  const EnergyParts e0 = energy_parts(ic.mass, 2, ic.position.data(), ic.velocity.data(), k);
  const double scale = e0.kinetic + std::abs(e0.potential);
  std::vector<double> times;
  for (int m = 0; m < 166; ++m) times.push_back(0.5 * m);
  for (auto [kind, energy_bound, momentum_bound] :
       {std::tuple{IntegratorKind::kRungeKuttaFehlberg78, 5e-12, 1e-11},
        {IntegratorKind::kBulirschStoer, 5e-12, 1e-11},
        {IntegratorKind::kSymplectic, 5e-9, 1e-10}}) {
    const auto tr = integrate(ic, times, force_law_settings(kind));
    ASSERT_EQ(tr.abort, Abort::kNone) << integrator_name(kind);
    ASSERT_EQ(tr.n_steps(), 166);
    const double drift = worst_energy_drift(ic, tr, k);
    const double scaled = drift * std::abs(e0.kinetic + e0.potential) / scale;
    std::printf(
        "[ info ] k = %.1f %s, 5 planets 82.5 yr: |dE| / (T0 + |U0|) %.2e, |dE / E0| %.2e (library %.2e), "
        "angular momentum %.2e\n",
        k, integrator_name(kind).c_str(), scaled, drift, tr.energy_error, tr.angular_momentum_error);
    EXPECT_LT(scaled, energy_bound) << integrator_name(kind);
    EXPECT_NEAR(tr.energy_error, drift, 1e-3 * drift) << integrator_name(kind);  // the library's own measure
    EXPECT_LT(tr.angular_momentum_error, momentum_bound) << integrator_name(kind);
  }
  // The potential matters: the same recorded states under Newton's potential drift by far more, so the
  // bounds above test the k law and not merely a quantity that every integrator keeps.
  const auto tr = integrate(ic, times, force_law_settings(IntegratorKind::kRungeKuttaFehlberg78));
  EXPECT_GT(worst_energy_drift(ic, tr, 2.0), 1e-6);
}

// (b3) The law read back from a dataset as a physicist would: for a two-body system on an eccentric orbit the
// pair force |F| = m_planet |a_planet| from /row/acceleration, against the separation r of the stored
// positions, lies on a straight line in log-log coordinates with slope -k and intercept ln(G m1 m2). The fit
// is ordinary least squares over every observation; the star's row carries the same force (Newton's third
// law). With k = 2.5 the slope must exclude Newton's -2.
TEST_P(ForceLaw, PairForceAgainstSeparationHasLogLogSlopeMinusK) {
  const double k = GetParam();
  const double star = 1.0, planet = 1e-3;
  // The planet starts at apocentre, 1.6 AU, with about 0.5 (k = 2.5) or 0.3 (k = 1.5) of the circular speed
  // there, and falls to about 0.3 or 0.5 AU.
  Json json = {{"preset", "custom"},
               {"systems", 1},
               {"star_mass", star},
               {"cadences", {0.02}},
               {"sequence_rows", 201},  // 100 observations of 2 bodies, 2 years
               {"force_law", {{"exponent", k}}},
               {"planets",
                {{{"mass", planet},
                  {"a", 1.0},
                  {"e", 0.6},
                  {"i", 0.0},
                  {"Omega", 0.0},
                  {"omega", 0.5},
                  {"M0", kPi}}}}};
  const auto path = force_law_scratch("slope_" + std::to_string(k) + ".h5");
  write_dataset(simulation_config_from_json(json), path.string(), force_law_options());
  DatasetReader reader(path.string());
  ASSERT_EQ(reader.num_systems(), 1);
  const System s = reader.read_system(0);
  ASSERT_EQ(s.n_bodies, 2);
  ASSERT_EQ(s.n_steps, 100);
  double sx = 0, sy = 0, sxx = 0, sxy = 0, lo = 1e300, hi = -1e300, third_law = 0;
  for (int step = 0; step < s.n_steps; ++step) {
    const int p = step * 2, q = step * 2 + 1;  // planet row, star row
    const double r = std::hypot(s.position(q, 0) - s.position(p, 0), s.position(q, 1) - s.position(p, 1));
    const double force = s.mass[0] * std::hypot(s.acceleration(p, 0), s.acceleration(p, 1));
    const double reaction = s.mass[1] * std::hypot(s.acceleration(q, 0), s.acceleration(q, 1));
    third_law = std::max(third_law, std::abs(reaction - force) / force);
    const double x = std::log(r), y = std::log(force);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  const double n = s.n_steps;
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;
  std::printf(
      "[ info ] k = %.1f: fitted log-log slope %.12f over ln r in [%.3f, %.3f]; e^c / (G m1 m2) - 1 = "
      "%.2e\n",
      k, slope, lo, hi, std::exp(intercept) / (kG * star * planet) - 1.0);
  ASSERT_GT(hi - lo, 0.5);  // the orbit spans a factor 1.6 in r at least, so the slope is well determined
  EXPECT_NEAR(slope, -k, 1e-9);
  EXPECT_NEAR(std::exp(intercept) / (kG * star * planet), 1.0, 1e-9);
  EXPECT_LT(third_law, 1e-12);
  EXPECT_GT(std::abs(slope + 2.0), 0.4);  // not Newton
}

// (c) The stored /row/acceleration and /row/star_acceleration of a generated dataset are the k-law ones,
// G m_j d / r^(k+1) summed in the test from the stored positions; the stored trajectories conserve the
// k-law energy (so they were integrated under it); the reader reports the law.
TEST_P(ForceLaw, StoredAccelerationsAreTheKLawOnes) {
  const double k = GetParam();
  const auto path = force_law_scratch("k_" + std::to_string(k) + ".h5");
  write_dataset(config_with_exponent(k), path.string(), force_law_options());
  DatasetReader reader(path.string());
  EXPECT_EQ(reader.force_law_exponent(), k);
  double worst = 0, newton_difference = 0;
  for (std::int64_t index = 0; index < reader.num_systems(); ++index) {
    const System s = reader.read_system(index);
    const int n = s.n_bodies, star = n - 1;
    double e0 = 0;
    for (int step = 0; step < s.n_steps; ++step) {
      std::vector<double> x, v;
      for (int b = 0; b < n; ++b) {
        for (int c = 0; c < 2; ++c) {
          x.push_back(s.position(step * n + b, c));
          v.push_back(s.velocity(step * n + b, c));
        }
      }
      const double e = energy_k(s.mass, 2, x.data(), v.data(), k);
      if (step == 0) e0 = e;
      EXPECT_LT(std::abs(e - e0) / std::abs(e0), 1e-8) << "system " << index << " step " << step;
      for (int i = 0; i < n; ++i) {
        double want[2] = {0, 0}, want_star[2] = {0, 0}, newton[2] = {0, 0};
        for (int j = 0; j < n; ++j) {
          if (j == i) continue;
          const double dx = x[j * 2] - x[i * 2], dy = x[j * 2 + 1] - x[i * 2 + 1];
          const double r = std::hypot(dx, dy);
          const double scale = kG * s.mass[j] / std::pow(r, k + 1.0);
          want[0] += scale * dx, want[1] += scale * dy;
          newton[0] += kG * s.mass[j] / (r * r * r) * dx, newton[1] += kG * s.mass[j] / (r * r * r) * dy;
          if (j == star) want_star[0] = scale * dx, want_star[1] = scale * dy;
        }
        const double norm = std::hypot(want[0], want[1]);
        const double star_norm = i == star ? 1.0 : std::hypot(want_star[0], want_star[1]);
        const int row = step * n + i;
        for (int c = 0; c < 2; ++c) {
          worst = std::max(worst, std::abs(s.acceleration(row, c) - want[c]) / norm);
          worst = std::max(worst, std::abs(s.star_acceleration(row, c) - want_star[c]) / star_norm);
        }
        newton_difference =
            std::max(newton_difference, std::hypot(want[0] - newton[0], want[1] - newton[1]) / norm);
      }
    }
  }
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(newton_difference, 0.1);  // the systems probe the law: k differs visibly from Newton here
}

// (d) Newton stays exactly as it was: no key, exponent 2 and 2.0 give the same arrays and the same config
// attribute, and the stored star accelerations are bit for bit the original G M d / (r2 sqrt(r2)).
TEST(ForceLawNewton, DefaultIsBitIdenticalToExplicitTwo) {
  Json base = {{"systems", 3}, {"seed", 5}, {"planets_max", 3}, {"sequence_rows", 121}};
  Json two = base, two_float = base;
  two["force_law"] = {{"exponent", 2}};
  two_float["force_law"] = {{"exponent", 2.0}};
  std::vector<std::string> paths;
  for (const Json* json : {&base, &two, &two_float}) {
    Json resolved;
    const auto config = simulation_config_from_json(*json, &resolved);
    EXPECT_EQ(config.force_exponent, 2.0);
    EXPECT_EQ(resolved["force_law"]["exponent"], 2.0);
    EXPECT_TRUE(resolved["force_law"]["exponent"].is_number_float());  // 2 and 2.0 record the same way
    auto options = force_law_options();
    options.resolved_config = resolved;
    paths.push_back(force_law_scratch("newton_" + std::to_string(paths.size()) + ".h5").string());
    write_dataset(config, paths.back(), options);
  }
  DatasetReader reference(paths[0]);
  EXPECT_EQ(reference.force_law_exponent(), 2.0);
  for (std::size_t p = 1; p < paths.size(); ++p) {
    DatasetReader other(paths[p]);
    // As text: JSON values compare 2 == 2.0, the stored attribute bytes do not.
    EXPECT_EQ(other.attributes()["config"].dump(), reference.attributes()["config"].dump());
    ASSERT_EQ(other.num_systems(), reference.num_systems());
    for (std::int64_t index = 0; index < reference.num_systems(); ++index) {
      const System a = reference.read_system(index), b = other.read_system(index);
      EXPECT_EQ(a.position, b.position);
      EXPECT_EQ(a.velocity, b.velocity);
      EXPECT_EQ(a.acceleration, b.acceleration);
      EXPECT_EQ(a.star_acceleration, b.star_acceleration);
      EXPECT_EQ(a.energy_error, b.energy_error);
    }
  }
  // The k = 2 path must not go through pow(): pow(r2, 1.5) and r2 * sqrt(r2) differ in the last bit for
  // some separations, and the datasets written before the force law existed used the latter.
  for (std::int64_t index = 0; index < reference.num_systems(); ++index) {
    const System s = reference.read_system(index);
    const int n = s.n_bodies, star = n - 1;
    for (int step = 0; step < s.n_steps; ++step) {
      for (int i = 0; i < star; ++i) {
        double r2 = 0.0;
        for (int c = 0; c < 2; ++c) {
          const double d = s.position(step * n + star, c) - s.position(step * n + i, c);
          r2 += d * d;
        }
        const double scale = kG * s.mass[star] / (r2 * std::sqrt(r2));
        for (int c = 0; c < 2; ++c) {
          const double d = s.position(step * n + star, c) - s.position(step * n + i, c);
          ASSERT_EQ(s.star_acceleration(step * n + i, c), scale * d)
              << "system " << index << " step " << step;
        }
      }
    }
  }
}

// (e) Analytic Kepler orbits are Newton's: kepler mode refuses any other law, in the config and in
// integrate().
TEST(ForceLawKepler, KeplerIntegratorRefusesOtherExponents) {
  const std::string message = config_error({{"integrator", "kepler"}, {"force_law", {{"exponent", 2.5}}}});
  EXPECT_NE(message.find("kepler"), std::string::npos) << message;
  EXPECT_NE(message.find("force_law.exponent = 2"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  OrbitalElements el;
  const auto ic = make_system(1.0, {1e-3}, {el}, 2, 1.5);
  try {
    integrate(ic, {0.0, 0.1}, force_law_settings(IntegratorKind::kKepler));
    ADD_FAILURE() << "kepler mode integrated a k = 1.5 system";
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("force_law.exponent = 2"), std::string::npos) << e.what();
  }
  // Newton in kepler mode is still fine.
  EXPECT_NO_THROW(simulation_config_from_json({{"integrator", "kepler"}, {"force_law", {{"exponent", 2}}}}));
}

// (f) Anything but a finite number in (1, 3) is refused with one line naming the key.
TEST(ForceLawConfig, BadExponentsAreRefusedNamingTheKey) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Json& bad : {Json(nan), Json(0.5), Json(10), Json(1.0), Json(3.0), Json(-2.0), Json("2.5"),
                          Json(nullptr), Json(std::numeric_limits<double>::infinity())}) {
    const std::string message = config_error({{"force_law", {{"exponent", bad}}}});
    EXPECT_NE(message.find("force_law.exponent"), std::string::npos) << bad.dump() << ": " << message;
    EXPECT_NE(message.find("1 < k < 3"), std::string::npos) << bad.dump() << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(config_error({{"force_law", {{"exponant", 2.5}}}}).find("exponant"), std::string::npos);
  EXPECT_NE(config_error({{"force_law", 2.5}}).find("force_law"), std::string::npos);
  EXPECT_EQ(simulation_config_from_json({{"force_law", {{"exponent", 2.9}}}}).force_exponent, 2.9);
  EXPECT_THROW(make_system(1.0, {1e-3}, {OrbitalElements{}}, 2, 3.5), orbitlaw::Error);
}

// The unbound check uses the k-law energy: under k = 2.5 a planet at pericentre 0.2 AU (a = 0.4, e = 0.5) has
// v^2 = 11.9 mu, above Newton's escape speed (10 mu at 0.2 AU) but below the k law's (2 mu / (1.5 r^1.5) =
// 14.9 mu), so it is bound and kept.
TEST(ForceLawConfig, BoundUnderTheLawIsKeptThoughNewtonWouldCallItUnbound) {
  Json json = {
      {"preset", "custom"},
      {"star_mass", 1.0},
      {"cadences", {0.01}},
      {"sequence_rows", 101},
      {"max_attempts", 1},
      {"force_law", {{"exponent", 2.5}}},
      {"planets",
       {{{"mass", 1e-5}, {"a", 0.4}, {"e", 0.5}, {"i", 0.0}, {"Omega", 0.0}, {"omega", 0.0}, {"M0", 0.0}}}}};
  const auto config = simulation_config_from_json(json);
  const auto ic = sample_system(config, 0, 0).initial;
  const double dx = ic.position[0] - ic.position[2], dy = ic.position[1] - ic.position[3];
  const double vx = ic.velocity[0] - ic.velocity[2], vy = ic.velocity[1] - ic.velocity[3];
  const double mu = kG * (1.0 + 1e-5), r = std::hypot(dx, dy), v2 = vx * vx + vy * vy;
  ASSERT_GT(0.5 * v2 - mu / r, 0.0);                         // Newton: unbound
  ASSERT_LT(0.5 * v2 - mu / (1.5 * std::pow(r, 1.5)), 0.0);  // k = 2.5: bound
  const auto accepted = simulate_system(config, 0);          // throws if rejected
  EXPECT_EQ(accepted.attempts, 1);
}

// (g) The attribute round-trips; a file without it (written before it existed) reads as Newton, and a
// nonsensical value is refused when the file is opened.
TEST(ForceLawDataset, ExponentAttributeRoundTripsAndDefaultsToNewton) {
  const auto path = force_law_scratch("round_trip.h5");
  write_dataset(config_with_exponent(1.5), path.string(), force_law_options());
  {
    DatasetReader reader(path.string());
    EXPECT_EQ(reader.force_law_exponent(), 1.5);
    EXPECT_EQ(reader.attributes()["force_law_exponent"], 1.5);
    EXPECT_EQ(reader.attributes()["config"]["force_law"]["exponent"], 1.5);
  }
  auto rewrite = [&](const double* value) {
    const hid_t file = H5Fopen(path.string().c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    ASSERT_GE(H5Adelete(file, "force_law_exponent"), 0);
    if (value) {
      const hid_t space = H5Screate(H5S_SCALAR);
      const hid_t attr =
          H5Acreate2(file, "force_law_exponent", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
      ASSERT_GE(H5Awrite(attr, H5T_NATIVE_DOUBLE, value), 0);
      H5Aclose(attr);
      H5Sclose(space);
    }
    H5Fclose(file);
  };
  const double bogus = 7.0;
  rewrite(&bogus);
  try {
    DatasetReader reader(path.string());
    ADD_FAILURE() << "a force_law_exponent of 7 was accepted";
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("force_law_exponent"), std::string::npos) << e.what();
  }
  rewrite(nullptr);
  DatasetReader old(path.string());
  EXPECT_FALSE(old.attributes().contains("force_law_exponent"));
  EXPECT_EQ(old.force_law_exponent(), 2.0);
}
