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

void require_order(const std::string& min_key, double lo, const std::string& max_key, double hi) {
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

// The checks that involve more than one key (each key's own range is in the schema).
void validate_simulation_config(const SimulationConfig& c) {
  const auto& in = c.integrator;
  if (in.kind == IntegratorKind::kKepler && c.force_exponent != kNewtonExponent) {
    throw Error(
        "config: integrator 'kepler' follows analytic Newtonian orbits and needs force_law.exponent = 2, "
        "got " +
        number(c.force_exponent) + " (use rkf78, bulirsch-stoer or symplectic)");
  }
  if (c.planets_min > c.planets_max) {
    throw Error("config: need 1 <= planets_min <= planets_max, got " + std::to_string(c.planets_min) + ".." +
                std::to_string(c.planets_max));
  }
  require_order("a_min", c.a_min, "a_max", c.a_max);
  require_order("planet_mass_min", c.planet_mass_min, "planet_mass_max", c.planet_mass_max);
  require_order("star_mass_min", c.star_mass_min, "star_mass_max", c.star_mass_max);
  require_order("pair_mass_min", c.pair_mass_min, "pair_mass_max", c.pair_mass_max);
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
}

}  // namespace

const ConfigSchema<SimulationConfig>& simulation_schema() {
  using S = SimulationConfig;
  // "force_law": {"exponent": k}, a section of its own so the law reads as one setting in a config file.
  static const auto force_law = ConfigSchema<double>().custom(
      "exponent", [](auto& k) -> auto& { return k; },
      [](const Json& value, const std::string& where) {
        if (!value.is_number())
          throw Error(where + " must be a finite number with 1 < k < 3 (2 = Newton), got " + value.dump());
        require_force_exponent(value.get<double>(), where);
        return value.get<double>();
      },
      // Recorded as a double whether written 2 or 2.0, so equal laws give equal config attributes.
      [](double k) { return Json(k); }, "number", "in (1, 3)",
      "every pair attracts with F = G m1 m2 / r^k; 2 is Newton");
  auto integrator = [](auto& c) -> auto& { return c.integrator; };
  static const auto schema =
      ConfigSchema<S>()
          .key("systems", &S::systems, "accepted systems in the dataset, all shards together",
               Range::at_least(1))
          .key("seed", &S::seed, "every draw is a function of (seed, system, attempt)")
          .key("dim", &S::dim, "2 (planar) or 3", Range::between(2, 3))
          .key("sequence_rows", &S::sequence_rows, "rows per system: 1 cadence row + steps x bodies",
               Range::at_least(2))
          .custom(
              "cadences", &S::cadences,
              [](const Json& value, const std::string& where) {
                std::vector<double> cadences;
                if (value.is_array())
                  for (const auto& v : value)
                    if (v.is_number() && v.get<double>() > 0 && std::isfinite(v.get<double>()))
                      cadences.push_back(v.get<double>());
                if (cadences.empty() || cadences.size() != value.size())
                  throw Error(where + " must be a non-empty list of positive numbers (years), got " +
                              value.dump());
                return cadences;
              },
              [](const std::vector<double>& c) { return Json(c); }, "list of numbers", "each greater than 0",
              "years between observations; one drawn uniformly per system")
          .named(
              "integrator", [=](auto& c) -> auto& { return integrator(c).kind; }, parse_integrator,
              integrator_name, integrator_names, "rkf78, bulirsch-stoer, symplectic, or kepler (analytic)")
          .key(
              "abs_tol", [=](auto& c) -> auto& { return integrator(c).abs_tol; },
              "adaptive integrators: absolute tolerance per step", Range::greater_than(0))
          .key(
              "rel_tol", [=](auto& c) -> auto& { return integrator(c).rel_tol; },
              "adaptive integrators: relative tolerance per step", Range::greater_than(0))
          .key(
              "symplectic_step", [=](auto& c) -> auto& { return integrator(c).step; },
              "symplectic: step in years; 0: the shortest period / steps_per_orbit", Range::at_least(0))
          .key(
              "steps_per_orbit", [=](auto& c) -> auto& { return integrator(c).steps_per_orbit; },
              "symplectic with symplectic_step 0", Range::at_least(1))
          .key(
              "max_evaluations", [=](auto& c) -> auto& { return integrator(c).max_evaluations; },
              "force evaluations before a system is given up", Range::at_least(1))
          .key(
              "hill_factor", [=](auto& c) -> auto& { return integrator(c).hill_factor; },
              "reject planets closer than this many mutual Hill radii", Range::at_least(0))
          .key(
              "min_star_distance", [=](auto& c) -> auto& { return integrator(c).min_star_distance; },
              "AU; reject planets closer to the star", Range::at_least(0))
          .key("planets_min", &S::planets_min, "fewest planets per system", Range::at_least(1))
          .key("planets_max", &S::planets_max, "most planets per system", Range::at_least(1))
          .key("a_min", &S::a_min, "AU; semi-major axes uniform in [a_min, a_max]", Range::greater_than(0))
          .key("a_max", &S::a_max, "AU", Range::greater_than(0))
          .key("e_alpha", &S::e_alpha, "eccentricity ~ Beta(e_alpha, e_beta)", Range::greater_than(0))
          .key("e_beta", &S::e_beta, "eccentricity ~ Beta(e_alpha, e_beta)", Range::greater_than(0))
          .key("e_max", &S::e_max, "eccentricities at or above it are redrawn", Range{0.0, 1.0, true, false})
          .key("planet_mass_min", &S::planet_mass_min, "Msun; planet masses log-uniform",
               Range::greater_than(0))
          .key("planet_mass_max", &S::planet_mass_max, "Msun", Range::greater_than(0))
          .key("star_mass_min", &S::star_mass_min, "Msun; star masses uniform", Range::greater_than(0))
          .key("star_mass_max", &S::star_mass_max, "Msun", Range::greater_than(0))
          .key("star_mass_log_uniform", &S::star_mass_log_uniform,
               "star masses log-uniform in [star_mass_min, star_mass_max] instead of uniform")
          .key("two_body_masses", &S::two_body_masses,
               "both masses uniform in [pair_mass_min, pair_mass_max], the heavier is the star")
          .key("pair_mass_min", &S::pair_mass_min, "Msun (two_body_masses)", Range::greater_than(0))
          .key("pair_mass_max", &S::pair_mass_max, "Msun (two_body_masses)", Range::greater_than(0))
          .key("inclination_max_deg", &S::inclination_max_deg, "3D: inclinations uniform in [0, max]",
               Range::between(0, 180))
          .key("eject_distance", &S::eject_distance,
               "AU from the star beyond which a planet counts as ejected", Range::greater_than(0))
          .key("max_energy_error", &S::max_energy_error,
               "relative energy drift above which a system is redrawn", Range::greater_than(0))
          .key("max_attempts", &S::max_attempts, "redraws of one system before giving up", Range::at_least(1))
          .section("force_law", &S::force_exponent, force_law);
  return schema;
}

std::vector<KeyDoc> simulation_keys() {
  auto docs = simulation_schema().keys(preset_defaults("vafa-paper"));
  docs.insert(
      docs.begin(),
      KeyDoc{"preset", "string", "\"vafa-paper\"", "one of: " + schema_detail::join_choices(preset_names()),
             "the sampling preset whose values are the defaults below (here vafa-paper's)"});
  docs.push_back({"star_mass", "number", "1", "greater than 0", "preset custom: the star's mass (Msun)"});
  docs.push_back({"planets", "list of objects", "[]", "each {mass, a, e, i, Omega, omega, M0}",
                  "preset custom: the planets' masses (Msun) and orbital elements (AU, degrees)"});
  return docs;
}

SimulationConfig read_simulation_config(ConfigReader& reader) {
  const std::string preset = reader.get<std::string>("preset", "vafa-paper");
  SimulationConfig c = simulation_schema().read_keys(reader, preset_defaults(preset));
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
  validate_simulation_config(c);
  return c;
}

SimulationConfig simulation_config_from_json(const Json& config, Json* resolved) {
  ConfigReader reader(config, "simulate config");
  SimulationConfig c = read_simulation_config(reader);
  if (resolved) *resolved = reader.resolved();
  return c;
}

}  // namespace orbitlaw::simulator
