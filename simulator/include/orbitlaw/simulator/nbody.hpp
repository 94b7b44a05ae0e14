#pragma once
// N-body physics under a central power-law attraction (Newton by default): Kepler orbits, pairwise
// accelerations, conserved quantities, and the three ways of advancing a system in time (adaptive
// Boost.Odeint integrators with observations landing exactly on the requested times, a fixed-step symplectic
// integrator, and analytic Kepler orbits).
//
// Units: AU, years, solar masses, G = 4 pi^2. States are flat contiguous vectors: body b, coordinate c sits
// at index b * dim + c. Bodies are ordered planet_1 .. planet_N, star (star last), the sequence interleaving
// order.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "orbitlaw/common/units.hpp"

namespace orbitlaw::simulator {

using orbitlaw::kGravitationalConstant;  // G = 4 pi^2 in AU^3/(Msun yr^2), from units.hpp

// The force law (docs/design.md section 2): every pair attracts with F = G m1 m2 / r^k, so body i accelerates
// by G m_j d / r^(k+1) with d = x_j - x_i, and the pair potential is U = -G m1 m2 / ((k - 1) r^(k-1)).
// k = 2 is Newton and takes the original code paths, bit for bit. Other exponents are counterfactual laws
// for asking whether a model recovers the law that generated its data. They are limited to 1 < k < 3: for
// k <= 1 the potential does not vanish at infinity (k = 1 is logarithmic), so "E < 0 means bound" and the
// relative energy error lose their meaning, and for k >= 3 no circular orbit is stable.
inline constexpr double kNewtonExponent = 2.0;
inline bool valid_force_exponent(double k) { return std::isfinite(k) && k > 1.0 && k < 3.0; }
// Throws orbitlaw::Error "<name> must be a finite number with 1 < k < 3 (2 = Newton), got <k>" for an
// exponent valid_force_exponent refuses; `name` is what the user set (a config key, an attribute).
void require_force_exponent(double k, const std::string& name);

// Classical orbital elements of a planet relative to its star. Angles in radians.
struct OrbitalElements {
  double a = 1;      // semi-major axis, AU
  double e = 0;      // eccentricity, 0 <= e < 1
  double i = 0;      // inclination
  double Omega = 0;  // longitude of the ascending node
  double omega = 0;  // argument of pericentre
  double M0 = 0;     // mean anomaly at t = 0
  std::array<double, 6> as_array() const { return {a, e, i, Omega, omega, M0}; }
};

// Solves Kepler's equation E - e sin E = M for the eccentric anomaly (0 <= e < 1), to rounding accuracy.
double solve_kepler(double mean_anomaly, double e);

// Relative position and velocity (planet minus star) of a Kepler orbit with gravitational parameter mu =
// G (m_star + m_planet) at time t. Writes dim (2 or 3) values to each output; planar output drops z.
void kepler_state(const OrbitalElements& elements, double mu, double t, int dim, double* position,
                  double* velocity);

// The initial state of a system: masses and barycentric positions and velocities.
struct InitialConditions {
  int dim = 2;
  std::vector<double> mass;               // [n_bodies], star last
  std::vector<double> position;           // [n_bodies * dim]
  std::vector<double> velocity;           // [n_bodies * dim]
  std::vector<OrbitalElements> elements;  // [n_bodies - 1] heliocentric elements of the planets
  // The force law the velocities were built for and the system is integrated under; carried with the state
  // so that the integrator cannot use a different law from the one the initial conditions assume.
  double force_exponent = kNewtonExponent;
  int n_bodies() const { return static_cast<int>(mass.size()); }
};

// Builds a system from a star and planets given by heliocentric elements (each planet a two-body Kepler orbit
// about the star with mu = G (M + m)), shifted to the barycentric frame. Throws orbitlaw::Error for a
// non-positive mass or semi-major axis, e outside [0, 1), dim other than 2 or 3, or an exponent outside
// 1 < k < 3. In 2D, i and Omega must be zero (the orientation is omega).
// For k != 2 the position is the Kepler one and the heliocentric velocity is the Kepler velocity scaled by
// a^(1 - k/2): the ratio of the circular speeds at the semi-major axis under the two laws (v^2 = mu / r^(k-1)
// against mu / r), so an e = 0 draw is an exact circular orbit of the k law and e > 0 keeps its direction and
// speed profile. The elements are then the drawn parameters, not osculating elements of the k law.
InitialConditions make_system(double star_mass, const std::vector<double>& planet_masses,
                              const std::vector<OrbitalElements>& planets, int dim,
                              double force_exponent = kNewtonExponent);

// Total acceleration of every body under the force law of exponent k (flat, [n_bodies * dim]).
void accelerations(const std::vector<double>& mass, int dim, const double* position, double* acceleration,
                   double force_exponent = kNewtonExponent);
// Acceleration of each body due to the star alone (zero for the star itself).
void star_accelerations(const std::vector<double>& mass, int dim, const double* position,
                        double* acceleration, double force_exponent = kNewtonExponent);
// Kinetic plus pair potential energy -G m1 m2 / ((k - 1) r^(k-1)) (-G m1 m2 / r for Newton).
double total_energy(const std::vector<double>& mass, int dim, const double* position, const double* velocity,
                    double force_exponent = kNewtonExponent);
// Total angular momentum about the origin: [Lz] in 2D, [Lx, Ly, Lz] in 3D.
std::vector<double> angular_momentum(const std::vector<double>& mass, int dim, const double* position,
                                     const double* velocity);

enum class IntegratorKind {
  kRungeKuttaFehlberg78,  // "rkf78": controlled 7(8) steps, each observation time hit exactly
  kBulirschStoer,         // "bulirsch-stoer": controlled extrapolation, each observation time hit exactly
  kSymplectic,  // "symplectic": symplectic_rkn_sb3a_mclachlan (order 4), fixed step dividing the cadence
  kKepler,      // "kepler": each planet an independent analytic Kepler orbit (Vafa et al.)
};
IntegratorKind parse_integrator(const std::string& name);  // throws orbitlaw::Error naming the valid ones
std::string integrator_name(IntegratorKind kind);
std::vector<std::string> integrator_names();  // every name parse_integrator takes

struct IntegratorSettings {
  IntegratorKind kind = IntegratorKind::kRungeKuttaFehlberg78;
  double abs_tol = 1e-13;  // adaptive integrators: absolute tolerance per step (AU, AU/yr)
  double rel_tol = 1e-13;  // adaptive integrators: relative tolerance per step
  double step = 0;         // symplectic: target step in years; 0 = shortest orbital period / steps_per_orbit
  int steps_per_orbit = 400;                // symplectic with step = 0
  std::int64_t max_evaluations = 20000000;  // force evaluations before giving up (IntegrationAborted)
  // Close-encounter guard, checked at every force evaluation: abort when two planets come closer than
  // hill_factor mutual Hill radii, or a planet closer than min_star_distance to the star. Under a k law the
  // mutual Hill radius is ((m_i + m_j) / ((k + 1) M))^(1/(k+1)) (a_i + a_j) / 2 (the cube root for k = 2).
  double hill_factor = 1.0;
  double min_star_distance = 0.005;  // AU, about one solar radius
};

// Why an integration stopped before the last observation.
enum class Abort { kNone, kCloseEncounter, kStarEncounter, kStepBudget };

struct Trajectory {
  int n_bodies = 0;
  int dim = 2;
  std::vector<double> time;      // [n_steps]
  std::vector<double> position;  // [n_steps * n_bodies * dim], step-major
  std::vector<double> velocity;
  std::vector<double>
      acceleration;  // total N-body acceleration (the system's force law) at the recorded positions
  std::vector<double> star_acceleration;  // due to the star alone
  double energy_error = 0;                // max over observations of |E - E0| / |E0|
  double angular_momentum_error = 0;      // max over observations of |L - L0| / |L0|
  std::int64_t evaluations = 0;           // force evaluations used
  Abort abort = Abort::kNone;             // kNone when every observation was recorded
  int n_steps() const { return static_cast<int>(time.size()); }
};

// Advances `initial` and records the state at each of `times` (ascending, times[0] >= 0; t = 0 is the
// initial state). In kepler mode the recorded accelerations are still the full N-body ones at the recorded
// positions, so the planet-planet terms the analytic orbits neglect stay visible. The force law is
// initial.force_exponent; kepler mode throws orbitlaw::Error for any exponent but 2 (its orbits are
// Newton's).
Trajectory integrate(const InitialConditions& initial, const std::vector<double>& times,
                     const IntegratorSettings& settings);

}  // namespace orbitlaw::simulator
