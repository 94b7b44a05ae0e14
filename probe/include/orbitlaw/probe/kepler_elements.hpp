#pragma once
// The osculating two-body orbital elements of a planet relative to its star: the targets of the Kepler probes
// (docs/design.md section 6b). A model is called "Keplerian" only if its hidden states carry the
// orbit's size, shape and phase linearly, beyond what its raw input window carries; these are the labels
// that claim is tested against. Units are the dataset's (AU, yr, Msun; G = 4 pi^2).
#include <Eigen/Core>
#include <string>
#include <vector>

#include "orbitlaw/probe/force_dataset.hpp"

namespace orbitlaw::probe {

struct OsculatingElements {
  double a = 0;  // semi-major axis, AU
  double e = 0;  // eccentricity, in [0, 1)
  // The phase as the cosine and sine of the true anomaly (the angle from periapsis): continuous along the
  // orbit, where the angle itself jumps by 2 pi once per period. For an orbit with e below
  // kCircularEccentricity periapsis is not defined by the state; the anomaly is then measured from the
  // reference x axis (the true longitude), so that the phase stays a deterministic function of the state.
  double cos_anomaly = 1;
  double sin_anomaly = 0;
};

// Below this eccentricity the direction of periapsis is rounding noise (state vectors carry ~1e-16 relative
// error, which e of this size cannot outweigh), so the anomaly falls back to the true longitude.
inline constexpr double kCircularEccentricity = 1e-10;

// Elements of the orbit with relative position `r` and relative velocity `v` (planet minus star; 2 or 3
// components) under the gravitational parameter mu = G (m_star + m_planet):
//   a = 1 / (2 / |r| - |v|^2 / mu),  e = |e_vec|,  e_vec = ((|v|^2 - mu / |r|) r - (r . v) v) / mu,
//   true anomaly = atan2(h (r . v) / (mu |r|), h^2 / (mu |r|) - 1)   (= atan2(e sin nu, e cos nu)).
// Throws Error for an orbit without elliptic elements: r = 0, an unbound state (energy >= 0: parabolic or
// hyperbolic, a <= 0), or a radial one (zero angular momentum: e = 1 and no plane or periapsis).
OsculatingElements orbital_elements(const Eigen::VectorXd& r, const Eigen::VectorXd& v, double mu);

// The element names, in the column order of kepler_elements: a, e, cos_anomaly, sin_anomaly.
const std::vector<std::string>& kepler_element_names();

// Each row's elements from its true state (planet relative to star, mu = G (m1 + m2)), [rows, 4] in the
// order of kepler_element_names(). Throws Error naming the system and row of a state without elliptic
// elements.
Eigen::MatrixXd kepler_elements(const ForceRows& rows);

}  // namespace orbitlaw::probe
