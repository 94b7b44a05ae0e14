// Sampling presets and the per-system draw of initial conditions.
#include <cmath>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

namespace {

constexpr double kDegree = std::numbers::pi / 180.0;

// J2000 mean elements of the planets (Standish, "Keplerian Elements for Approximate Positions of the Major
// Planets", JPL): a [AU], e, i, mean longitude L, longitude of perihelion varpi, node Omega [deg]; masses in
// solar masses (IAU 2015 / DE430 GM ratios; Earth includes the Moon).
struct PlanetRecord {
  const char* name;
  double mass, a, e, i, L, varpi, Omega;
};
constexpr PlanetRecord kSolarSystem[] = {
    {"Mercury", 1.6601367e-7, 0.38709927, 0.20563593, 7.00497902, 252.25032350, 77.45779628, 48.33076593},
    {"Venus", 2.4478383e-6, 0.72333566, 0.00677672, 3.39467605, 181.97909950, 131.60246718, 76.67984255},
    {"Earth", 3.0404326e-6, 1.00000261, 0.01671123, -0.00001531, 100.46457166, 102.93768193, 0.0},
    {"Mars", 3.2271514e-7, 1.52371034, 0.09339410, 1.84969142, -4.55343205, -23.94362959, 49.55953891},
    {"Jupiter", 9.5479194e-4, 5.20288700, 0.04838624, 1.30439695, 34.39644051, 14.72847983, 100.47390909},
    {"Saturn", 2.8588598e-4, 9.53667594, 0.05386179, 2.48599187, 49.95424423, 92.59887831, 113.66242448},
    {"Uranus", 4.3662440e-5, 19.18916464, 0.04725744, 0.77263783, 313.23810451, 170.95427630, 74.01692503},
    {"Neptune", 5.1513890e-5, 30.06992276, 0.00859048, 1.77004347, -55.12002969, 44.96476227, 131.78422574},
};

void add_solar_planets(SimulationConfig& config, int first, int last) {
  config.star_mass = 1.0;
  config.planet_masses.clear();
  config.planets.clear();
  for (int p = first; p <= last; ++p) {
    const auto& r = kSolarSystem[p];
    OrbitalElements el;
    el.a = r.a;
    el.e = r.e;
    el.i = r.i * kDegree;
    el.Omega = r.Omega * kDegree;
    el.omega = (r.varpi - r.Omega) * kDegree;
    el.M0 = (r.L - r.varpi) * kDegree;
    config.planet_masses.push_back(r.mass);
    config.planets.push_back(el);
  }
}

// A fixed system in the requested dimension: planar keeps the longitude of pericentre as the orientation.
std::vector<OrbitalElements> oriented(const std::vector<OrbitalElements>& planets, int dim) {
  if (dim == 3) return planets;
  auto flat = planets;
  for (auto& el : flat) {
    el.omega = el.omega + el.Omega;
    el.i = 0;
    el.Omega = 0;
  }
  return flat;
}

bool is_fixed_system(const std::string& preset) {
  return preset == "solar-system" || preset == "outer-solar-system" || preset == "custom";
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"vafa-paper",   "vafa-code",          "two-body",
                                                 "solar-system", "outer-solar-system", "custom"};
  return names;
}

SimulationConfig preset_defaults(const std::string& preset) {
  SimulationConfig config;
  config.preset = preset;
  if (preset == "vafa-paper") return config;
  if (preset == "vafa-code") {
    config.a_max = 32.0;
    return config;
  }
  if (preset == "two-body") {
    config.planets_min = config.planets_max = 1;
    config.two_body_masses = true;
    return config;
  }
  if (preset == "solar-system") {
    add_solar_planets(config, 0, 7);
    return config;
  }
  if (preset == "outer-solar-system") {
    add_solar_planets(config, 4, 7);
    return config;
  }
  if (preset == "custom") return config;
  std::string valid;
  for (const auto& name : preset_names()) valid += (valid.empty() ? "" : ", ") + name;
  throw Error("unknown preset '" + preset + "' (choose " + valid + ")");
}

int steps_for(const SimulationConfig& config, int n_bodies) { return (config.sequence_rows - 1) / n_bodies; }

SampledSystem sample_system(const SimulationConfig& config, std::int64_t index, int attempt) {
  Xoshiro256 rng(config.seed, static_cast<std::uint64_t>(index), static_cast<std::uint64_t>(attempt));
  SampledSystem out;
  out.cadence = config.cadences[static_cast<std::size_t>(
      rng.uniform_int(0, static_cast<int>(config.cadences.size()) - 1))];
  if (is_fixed_system(config.preset)) {
    out.initial = make_system(config.star_mass, config.planet_masses, oriented(config.planets, config.dim),
                              config.dim, config.force_exponent);
    return out;
  }
  const int n_planets = rng.uniform_int(config.planets_min, config.planets_max);
  double star_mass = 0;
  std::vector<double> masses(n_planets);
  if (config.two_body_masses) {
    const double m1 = rng.uniform(config.pair_mass_min, config.pair_mass_max);
    const double m2 = rng.uniform(config.pair_mass_min, config.pair_mass_max);
    star_mass = std::max(m1, m2);
    masses[0] = std::min(m1, m2);
  } else {
    star_mass = config.star_mass_log_uniform ? rng.log_uniform(config.star_mass_min, config.star_mass_max)
                                             : rng.uniform(config.star_mass_min, config.star_mass_max);
    for (auto& m : masses) m = rng.log_uniform(config.planet_mass_min, config.planet_mass_max);
  }
  std::vector<OrbitalElements> planets(n_planets);
  for (auto& el : planets) {
    el.a = rng.uniform(config.a_min, config.a_max);
    do {
      el.e = rng.beta(config.e_alpha, config.e_beta);
    } while (el.e >= config.e_max);
    el.omega = rng.uniform(0.0, 2.0 * std::numbers::pi);
    el.M0 = rng.uniform(0.0, 2.0 * std::numbers::pi);
    if (config.dim == 3) {
      el.i = rng.uniform(0.0, config.inclination_max_deg * kDegree);
      el.Omega = rng.uniform(0.0, 2.0 * std::numbers::pi);
    }
  }
  out.initial = make_system(star_mass, masses, planets, config.dim, config.force_exponent);
  return out;
}

}  // namespace orbitlaw::simulator
