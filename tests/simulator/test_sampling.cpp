// Presets and the per-system random draws: distributions, determinism, validation.
#include <gtest/gtest.h>

#include <cmath>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator.hpp"

using namespace orbitlaw::simulator;
using orbitlaw::Json;

namespace {
// One custom-preset planet with every element given (a, e as asked; the angles 0).
Json planet(double mass, double a, double e) {
  return {{"mass", mass}, {"a", a}, {"e", e}, {"i", 0.0}, {"Omega", 0.0}, {"omega", 0.0}, {"M0", 0.0}};
}
}  // namespace

TEST(Sampling, VafaPaperDistributions) {
  SimulationConfig config = preset_defaults("vafa-paper");
  config.seed = 7;
  const int n = 4000;
  double e_sum = 0, a_sum = 0, log_m_sum = 0, star_sum = 0, weekly = 0;
  int planets_seen[11] = {0};
  int planet_count = 0;
  for (int k = 0; k < n; ++k) {
    const auto draw = sample_system(config, k, 0);
    const int planets = draw.initial.n_bodies() - 1;
    ASSERT_GE(planets, 1);
    ASSERT_LE(planets, 10);
    ++planets_seen[planets];
    star_sum += draw.initial.mass.back();
    weekly += draw.cadence == 7.0 / 365.25;
    EXPECT_TRUE(draw.cadence == 7.0 / 365.25 || draw.cadence == 0.5);
    for (int p = 0; p < planets; ++p) {
      const auto& el = draw.initial.elements[p];
      ASSERT_GE(el.a, 0.3);
      ASSERT_LT(el.a, 42.0);
      ASSERT_LT(el.e, config.e_max);
      e_sum += el.e;
      a_sum += el.a;
      log_m_sum += std::log10(draw.initial.mass[p]);
      ++planet_count;
    }
  }
  // Beta(0.867, 3.03) has mean 0.2225 (the e_max = 0.95 cut removes a negligible tail); U(0.3, 42)
  // mean 21.15; log10 of LogUniform(1e-7, 1e-3) mean -5; U(0.5, 5) mean 2.75; cadences half and half.
  EXPECT_NEAR(e_sum / planet_count, 0.867 / (0.867 + 3.03), 0.01);
  EXPECT_NEAR(a_sum / planet_count, 21.15, 0.5);
  EXPECT_NEAR(log_m_sum / planet_count, -5.0, 0.05);
  EXPECT_NEAR(star_sum / n, 2.75, 0.06);
  EXPECT_NEAR(weekly / n, 0.5, 0.03);
  for (int p = 1; p <= 10; ++p) EXPECT_NEAR(planets_seen[p], n / 10, 90) << p;
}

// A star whose mass must be inferred from the track (docs/design.md, the attention axis): log-uniform over
// 0.25-4 Msun puts half the stars below the geometric mean 1 Msun and log(m) uniform; uniform over the same
// range puts only (1 - 0.25) / 3.75 = 20% below 1 Msun.
TEST(Sampling, StarMassesLogUniformWhenAsked) {
  SimulationConfig config = preset_defaults("vafa-paper");
  config.seed = 11;
  config.star_mass_min = 0.25;
  config.star_mass_max = 4.0;
  for (const bool log_uniform : {true, false}) {
    config.star_mass_log_uniform = log_uniform;
    const int n = 4000;
    double below_one = 0, log_sum = 0, log_square_sum = 0;
    for (int k = 0; k < n; ++k) {
      const double m = sample_system(config, k, 0).initial.mass.back();
      ASSERT_GE(m, 0.25);
      ASSERT_LE(m, 4.0);
      below_one += m < 1.0;
      log_sum += std::log(m);
      log_square_sum += std::log(m) * std::log(m);
    }
    if (log_uniform) {
      // ln m ~ U(-ln 4, ln 4): mean 0, variance (2 ln 4)^2 / 12.
      EXPECT_NEAR(below_one / n, 0.5, 0.03);
      EXPECT_NEAR(log_sum / n, 0.0, 0.04);
      EXPECT_NEAR(log_square_sum / n, std::pow(2 * std::log(4.0), 2) / 12, 0.05);
    } else {
      EXPECT_NEAR(below_one / n, 0.2, 0.03);
    }
  }
}

TEST(Sampling, DrawsDependOnSeedIndexAndAttemptOnly) {
  SimulationConfig config = preset_defaults("vafa-paper");
  const auto a = sample_system(config, 12, 0), b = sample_system(config, 12, 0);
  EXPECT_EQ(a.initial.position, b.initial.position);
  EXPECT_NE(a.initial.position, sample_system(config, 12, 1).initial.position);
  EXPECT_NE(a.initial.position, sample_system(config, 13, 0).initial.position);
  config.seed = 1;
  EXPECT_NE(a.initial.position, sample_system(config, 12, 0).initial.position);
}

TEST(Sampling, TwoBodyHeavierIsStar) {
  SimulationConfig config = preset_defaults("two-body");
  for (int k = 0; k < 200; ++k) {
    const auto draw = sample_system(config, k, 0);
    ASSERT_EQ(draw.initial.n_bodies(), 2);
    EXPECT_GE(draw.initial.mass[1], draw.initial.mass[0]);
    EXPECT_GE(draw.initial.mass[0], 1e-4);
    EXPECT_LE(draw.initial.mass[1], 1.01e-2);
  }
}

TEST(Sampling, SolarSystemPresetHasRealPlanets) {
  SimulationConfig config = preset_defaults("solar-system");
  config.dim = 3;
  const auto draw = sample_system(config, 0, 0);
  ASSERT_EQ(draw.initial.n_bodies(), 9);
  EXPECT_NEAR(draw.initial.mass[4] / 9.5479e-4, 1.0, 1e-4);  // Jupiter
  EXPECT_NEAR(draw.initial.elements[2].a, 1.0, 1e-5);        // Earth
  // Heliocentric distance of Earth within its perihelion/aphelion, and the Sun near the barycentre.
  const double* earth = &draw.initial.position[2 * 3];
  const double* sun = &draw.initial.position[8 * 3];
  const double r = std::hypot(earth[0] - sun[0], earth[1] - sun[1], earth[2] - sun[2]);
  EXPECT_GT(r, 0.983);
  EXPECT_LT(r, 1.017);
  EXPECT_LT(std::hypot(sun[0], sun[1], sun[2]), 0.01);
}

TEST(SimulationConfig, ReadsPresetDefaultsAndOverrides) {
  Json resolved;
  auto config = simulation_config_from_json(Json{{"preset", "vafa-code"}, {"systems", 5}}, &resolved);
  EXPECT_EQ(config.a_max, 32.0);
  EXPECT_EQ(config.systems, 5);
  EXPECT_EQ(resolved["a_max"], 32.0);
  EXPECT_EQ(resolved["integrator"], "rkf78");
  EXPECT_EQ(steps_for(config, 3), 333);  // floor(999 / 3)
}

TEST(SimulationConfig, RejectsBadValuesWithNamedKey) {
  auto message = [](const Json& config) {
    try {
      simulation_config_from_json(config);
    } catch (const orbitlaw::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"preset", "nope"}}).find("unknown preset 'nope'"), std::string::npos);
  EXPECT_NE(message({{"cadences", {0.5, 0.0}}}).find("cadences must be a non-empty list of positive numbers"),
            std::string::npos);
  EXPECT_NE(message({{"cadences", {-1.0}}}).find("cadences must be a non-empty list of positive numbers"),
            std::string::npos);
  EXPECT_NE(message({{"e_max", 1.2}}).find("e_max"), std::string::npos);
  EXPECT_NE(message({{"planet_mass_min", 0.0}}).find("planet_mass_min must be greater than 0 (got 0)"),
            std::string::npos);
  EXPECT_NE(message({{"star_mass_min", -1.0}}).find("star_mass_min must be greater than 0 (got -1)"),
            std::string::npos);
  EXPECT_NE(message({{"integrator", "euler"}})
                .find("integrator must be one of: rkf78, bulirsch-stoer, symplectic, "
                      "kepler (got 'euler')"),
            std::string::npos);
  EXPECT_NE(message({{"no_such_key", 1}}).find("unknown key 'no_such_key'"), std::string::npos);
  const Json hyperbolic = {{"preset", "custom"}, {"planets", {planet(1e-3, 1.0, 1.0)}}};
  EXPECT_NE(message(hyperbolic).find("eccentricity must be in [0, 1)"), std::string::npos)
      << message(hyperbolic);
  const Json massless = {{"preset", "custom"}, {"planets", {planet(0.0, 1.0, 0.1)}}};
  EXPECT_NE(message(massless).find("mass must be positive"), std::string::npos) << message(massless);
  const Json no_star = {{"preset", "custom"}, {"star_mass", -2.0}, {"planets", {planet(1e-3, 1.0, 0.0)}}};
  EXPECT_NE(message(no_star).find("star mass must be positive"), std::string::npos) << message(no_star);
  // A missing element is named, never read as 0.
  for (const char* key : {"mass", "a", "e", "i", "Omega", "omega", "M0"}) {
    Json partial = planet(1e-3, 1.0, 0.1);
    partial.erase(key);
    const std::string text = message({{"preset", "custom"}, {"planets", {partial}}});
    EXPECT_NE(text.find(std::string("planets[0] is missing '") + key + "'"), std::string::npos) << text;
  }
}
