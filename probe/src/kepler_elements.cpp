// Osculating orbital elements from two-body state vectors (kepler_elements.hpp).
#include "orbitlaw/probe/kepler_elements.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/units.hpp"

namespace orbitlaw::probe {

namespace {

// |r x v| in 2 or 3 dimensions (the planar case is the z component of the 3-d product).
double specific_angular_momentum(const Eigen::VectorXd& r, const Eigen::VectorXd& v) {
  if (r.size() == 2) return std::abs(r[0] * v[1] - r[1] * v[0]);
  const Eigen::Vector3d r3 = r.head<3>(), v3 = v.head<3>();
  return r3.cross(v3).norm();
}

std::string kepler_number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

}  // namespace

OsculatingElements orbital_elements(const Eigen::VectorXd& r, const Eigen::VectorXd& v, double mu) {
  if (r.size() != v.size() || (r.size() != 2 && r.size() != 3))
    throw Error("kepler elements: position and velocity must both have 2 or 3 components");
  if (!(mu > 0) || !std::isfinite(mu))
    throw Error("kepler elements: mu must be positive, got " + kepler_number_text(mu));
  if (!r.allFinite() || !v.allFinite()) throw Error("kepler elements: the state is not finite");
  const double distance = r.norm();
  if (!(distance > 0)) throw Error("kepler elements: the planet is at the star (r = 0)");
  const double speed2 = v.squaredNorm();
  const double inverse_a = 2 / distance - speed2 / mu;
  // Energy >= 0 is inverse_a <= 0: no ellipse, so no a, and no periodic phase for a probe to read.
  if (!(inverse_a > 0)) {
    throw Error("kepler elements: the orbit is not bound (2/r - v^2/mu = " + kepler_number_text(inverse_a) +
                " <= 0: parabolic or hyperbolic); the elements of an ellipse do not exist");
  }
  const double h = specific_angular_momentum(r, v);
  // A radial orbit has e = 1 exactly and neither a plane nor a periapsis direction; the relative tolerance
  // keeps rounding in r and v from deciding that.
  if (h <= 1e-12 * distance * std::sqrt(speed2)) {
    throw Error(
        "kepler elements: the orbit is radial (zero angular momentum, e = 1); its anomaly is undefined");
  }
  const Eigen::VectorXd e_vector = ((speed2 - mu / distance) * r - r.dot(v) * v) / mu;
  OsculatingElements out;
  out.a = 1 / inverse_a;
  out.e = e_vector.norm();
  if (out.e < kCircularEccentricity) {
    const double longitude = std::atan2(r[1], r[0]);
    out.cos_anomaly = std::cos(longitude);
    out.sin_anomaly = std::sin(longitude);
    return out;
  }
  // From the conic equation, e cos nu = p / r - 1 with p = h^2 / mu, and e sin nu = h r_dot / mu: both are
  // smooth in the state, unlike the angle between e_vec and r, whose sign needs the orbit's sense.
  const double anomaly = std::atan2(h * r.dot(v) / (mu * distance), h * h / (mu * distance) - 1);
  out.cos_anomaly = std::cos(anomaly);
  out.sin_anomaly = std::sin(anomaly);
  return out;
}

const std::vector<std::string>& kepler_element_names() {
  static const std::vector<std::string> names = {"a", "e", "cos_anomaly", "sin_anomaly"};
  return names;
}

Eigen::MatrixXd kepler_elements(const ForceRows& rows) {
  Eigen::MatrixXd out(rows.size(), static_cast<Eigen::Index>(kepler_element_names().size()));
  for (Eigen::Index i = 0; i < rows.size(); ++i) {
    const Eigen::VectorXd r = (rows.position.row(i) - rows.star_position.row(i)).transpose();
    const Eigen::VectorXd v = (rows.velocity.row(i) - rows.star_velocity.row(i)).transpose();
    OsculatingElements elements;
    try {
      elements = orbital_elements(r, v, kGravitationalConstant * (rows.m1[i] + rows.m2[i]));
    } catch (const Error& error) {
      const auto k = static_cast<std::size_t>(i);
      throw Error(std::string(error.what()) + " (system " + std::to_string(rows.system[k]) + ", row " +
                  std::to_string(rows.row[k]) + ")");
    }
    out.row(i) << elements.a, elements.e, elements.cos_anomaly, elements.sin_anomaly;
  }
  return out;
}

}  // namespace orbitlaw::probe
