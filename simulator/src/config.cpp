// Reading and validating a simulation config: preset defaults first, then every key may override them.
#include <cmath>
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

namespace {

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void require_positive(const std::string& key, double value) {
  if (!(value > 0) || !std::isfinite(value))
    throw Error("config: " + key + " must be positive, got " + number(value));
}

void require_range(const std::string& min_key, double lo, const std::string& max_key, double hi) {
  require_positive(min_key, lo);
  require_positive(max_key, hi);
  if (lo > hi)
    throw Error("config: " + min_key + " (" + number(lo) + ") exceeds " + max_key + " (" + number(hi) + ")");
}

OrbitalElements read_planet(const Json& planet, std::size_t index, double& mass) {
  const std::string where = "config: planets[" + std::to_string(index) + "]";
  if (!planet.is_object()) throw Error(where + " must be an object {mass, a, e, i, Omega, omega, M0}");
  // Every element is required: a missing angle read as 0 would put the planet somewhere nobody asked for.
  for (const char* key : {"mass", "a", "e", "i", "Omega", "omega", "M0"}) {
    if (!planet.contains(key))
      throw Error(where + " is missing '" + key + "' (each planet needs mass, a, e, i, Omega, omega, M0)");
  }
  OrbitalElements el;
  ConfigReader reader(planet, where);
  mass = reader.get<double>("mass", 0.0);
  el.a = reader.get<double>("a", 0.0);
  el.e = reader.get<double>("e", 0.0);
  el.i = reader.get<double>("i", 0.0);
  el.Omega = reader.get<double>("Omega", 0.0);
  el.omega = reader.get<double>("omega", 0.0);
  el.M0 = reader.get<double>("M0", 0.0);
  reader.finish();
  return el;
}

}  // namespace

SimulationConfig read_simulation_config(ConfigReader& reader) {
  const std::string preset = reader.get<std::string>("preset", "vafa-paper");
  SimulationConfig c = preset_defaults(preset);
  c.systems = reader.get<std::int64_t>("systems", c.systems);
  c.seed = reader.get<std::uint64_t>("seed", c.seed);
  c.dim = reader.get<int>("dim", c.dim);
  c.sequence_rows = reader.get<int>("sequence_rows", c.sequence_rows);
  c.cadences = reader.get<std::vector<double>>("cadences", c.cadences);
  auto& in = c.integrator;
  in.kind = parse_integrator(reader.get<std::string>("integrator", integrator_name(in.kind)));
  in.abs_tol = reader.get<double>("abs_tol", in.abs_tol);
  in.rel_tol = reader.get<double>("rel_tol", in.rel_tol);
  in.step = reader.get<double>("symplectic_step", in.step);
  in.steps_per_orbit = reader.get<int>("steps_per_orbit", in.steps_per_orbit);
  in.max_evaluations = reader.get<std::int64_t>("max_evaluations", in.max_evaluations);
  in.hill_factor = reader.get<double>("hill_factor", in.hill_factor);
  in.min_star_distance = reader.get<double>("min_star_distance", in.min_star_distance);
  c.planets_min = reader.get<int>("planets_min", c.planets_min);
  c.planets_max = reader.get<int>("planets_max", c.planets_max);
  c.a_min = reader.get<double>("a_min", c.a_min);
  c.a_max = reader.get<double>("a_max", c.a_max);
  c.e_alpha = reader.get<double>("e_alpha", c.e_alpha);
  c.e_beta = reader.get<double>("e_beta", c.e_beta);
  c.e_max = reader.get<double>("e_max", c.e_max);
  c.planet_mass_min = reader.get<double>("planet_mass_min", c.planet_mass_min);
  c.planet_mass_max = reader.get<double>("planet_mass_max", c.planet_mass_max);
  c.star_mass_min = reader.get<double>("star_mass_min", c.star_mass_min);
  c.star_mass_max = reader.get<double>("star_mass_max", c.star_mass_max);
  c.two_body_masses = reader.get<bool>("two_body_masses", c.two_body_masses);
  c.pair_mass_min = reader.get<double>("pair_mass_min", c.pair_mass_min);
  c.pair_mass_max = reader.get<double>("pair_mass_max", c.pair_mass_max);
  c.inclination_max_deg = reader.get<double>("inclination_max_deg", c.inclination_max_deg);
  c.eject_distance = reader.get<double>("eject_distance", c.eject_distance);
  c.max_energy_error = reader.get<double>("max_energy_error", c.max_energy_error);
  c.max_attempts = reader.get<int>("max_attempts", c.max_attempts);
  {
    // A section of its own, "force_law": {"exponent": k}, so the law reads as one setting in a config file.
    // Read as JSON so that a string or null gets the same one-line message naming the key as a bad number.
    ConfigReader law = reader.section("force_law");
    const Json exponent = law.get<Json>("exponent", Json(c.force_exponent));
    law.finish();
    if (!exponent.is_number()) {
      throw Error("config: force_law.exponent must be a finite number with 1 < k < 3 (2 = Newton), got " +
                  exponent.dump());
    }
    c.force_exponent = exponent.get<double>();
    require_force_exponent(c.force_exponent, "config: force_law.exponent");
    // Recorded as a double whether written 2 or 2.0, so equal laws give equal config attributes.
    reader.set_resolved("force_law", Json{{"exponent", c.force_exponent}});
  }
  if (preset == "custom") {
    c.star_mass = reader.get<double>("star_mass", c.star_mass);
    const Json planets = reader.get<Json>("planets", Json::array());
    if (!planets.is_array() || planets.empty()) {
      throw Error("config: preset 'custom' needs 'planets': [{mass, a, e, i, Omega, omega, M0}, ...]");
    }
    c.planets.clear();
    c.planet_masses.clear();
    for (std::size_t p = 0; p < planets.size(); ++p) {
      double mass = 0;
      c.planets.push_back(read_planet(planets[p], p, mass));
      c.planet_masses.push_back(mass);
    }
  }
  reader.finish();

  // Validation: every message names the key and the value.
  if (c.systems < 1) throw Error("config: systems must be at least 1, got " + std::to_string(c.systems));
  if (c.dim != 2 && c.dim != 3) throw Error("config: dim must be 2 or 3, got " + std::to_string(c.dim));
  if (c.cadences.empty()) throw Error("config: cadences must list at least one cadence (years)");
  for (double cadence : c.cadences) require_positive("cadence", cadence);
  require_positive("abs_tol", in.abs_tol);
  require_positive("rel_tol", in.rel_tol);
  if (in.step < 0)
    throw Error("config: symplectic_step must be positive (or 0 = automatic), got " + number(in.step));
  if (in.steps_per_orbit < 1) throw Error("config: steps_per_orbit must be at least 1");
  if (in.max_evaluations < 1) throw Error("config: max_evaluations must be at least 1");
  if (in.kind == IntegratorKind::kKepler && c.force_exponent != kNewtonExponent) {
    throw Error(
        "config: integrator 'kepler' follows analytic Newtonian orbits and needs force_law.exponent = 2, "
        "got " +
        number(c.force_exponent) + " (use rkf78, bulirsch-stoer or symplectic)");
  }
  if (in.min_star_distance < 0 || in.hill_factor < 0)
    throw Error("config: hill_factor and min_star_distance must be >= 0");
  if (c.planets_min < 1 || c.planets_min > c.planets_max) {
    throw Error("config: need 1 <= planets_min <= planets_max, got " + std::to_string(c.planets_min) + ".." +
                std::to_string(c.planets_max));
  }
  require_range("a_min", c.a_min, "a_max", c.a_max);
  require_positive("e_alpha", c.e_alpha);
  require_positive("e_beta", c.e_beta);
  if (!(c.e_max > 0 && c.e_max <= 1)) {
    throw Error("config: e_max must be in (0, 1] (orbits with e >= 1 are unbound), got " + number(c.e_max));
  }
  require_range("planet_mass_min", c.planet_mass_min, "planet_mass_max", c.planet_mass_max);
  require_range("star_mass_min", c.star_mass_min, "star_mass_max", c.star_mass_max);
  require_range("pair_mass_min", c.pair_mass_min, "pair_mass_max", c.pair_mass_max);
  if (c.inclination_max_deg < 0 || c.inclination_max_deg > 180)
    throw Error("config: inclination_max_deg must be in [0, 180]");
  require_positive("eject_distance", c.eject_distance);
  require_positive("max_energy_error", c.max_energy_error);
  if (c.max_attempts < 1) throw Error("config: max_attempts must be at least 1");
  const int max_bodies =
      (c.preset == "custom" || c.planet_masses.size() > 0 ? static_cast<int>(c.planets.size())
                                                          : c.planets_max) +
      1;
  if (c.sequence_rows < 1 + max_bodies) {
    throw Error("config: sequence_rows (" + std::to_string(c.sequence_rows) +
                ") leaves no room for one step of " + std::to_string(max_bodies) + " bodies");
  }
  if (!c.planets.empty()) {
    // A fixed system is checked once here (e >= 1, non-positive masses...) rather than at every draw.
    auto planar = c.planets;
    if (c.dim == 2) {
      for (auto& el : planar) el.i = el.Omega = 0;
    }
    make_system(c.star_mass, c.planet_masses, planar, c.dim, c.force_exponent);
  }
  return c;
}

SimulationConfig simulation_config_from_json(const Json& config, Json* resolved) {
  ConfigReader reader(config, "simulate config");
  SimulationConfig c = read_simulation_config(reader);
  if (resolved) *resolved = reader.resolved();
  return c;
}

}  // namespace orbitlaw::simulator
