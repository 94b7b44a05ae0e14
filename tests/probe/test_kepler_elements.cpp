// The Kepler probes' targets (kepler_elements.hpp): elements computed from state vectors agree with the
// (a, e, true anomaly) the states were built from by the textbook perifocal formulas, a circular orbit has
// a = r and e = 0, orbits without elliptic elements are refused with a message, and along a simulated
// two-body track a and e stay those the simulator drew (they are integrals of the motion).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/units.hpp"
#include "orbitlaw/probe/kepler_elements.hpp"
#include "probe_test_data.hpp"

using namespace orbitlaw;
using namespace orbitlaw::probe;

namespace {

struct KeplerState {
  Eigen::VectorXd r, v;
};

// The independent construction: perifocal coordinates of the orbit (a, e, true anomaly nu) rotated by the
// argument of periapsis omega, r = p / (1 + e cos nu), v = sqrt(mu / p) (-sin nu, e + cos nu) (Curtis,
// Orbital Mechanics, eqs. 4.37-4.38). `sense` -1 runs the orbit clockwise (mirror image in y).
KeplerState state_from_elements(double a, double e, double nu, double omega, double mu, double sense = 1) {
  const double p = a * (1 - e * e);
  const double r = p / (1 + e * std::cos(nu));
  const Eigen::Vector2d r_peri(r * std::cos(nu), r * std::sin(nu));
  const Eigen::Vector2d v_peri = std::sqrt(mu / p) * Eigen::Vector2d(-std::sin(nu), e + std::cos(nu));
  Eigen::Matrix2d rotation;
  rotation << std::cos(omega), -std::sin(omega), std::sin(omega), std::cos(omega);
  const Eigen::Matrix2d mirror = Eigen::Vector2d(1, sense).asDiagonal();
  return KeplerState{mirror * rotation * r_peri, mirror * rotation * v_peri};
}

}  // namespace

TEST(KeplerElements, CircularOrbitHasARadiusAndZeroEccentricity) {
  const double mu = kGravitationalConstant * 1.001;
  for (double angle : {0.0, 0.7, 2.5, -1.9}) {
    const double radius = 1.7;
    Eigen::VectorXd r(2), v(2);
    r << radius * std::cos(angle), radius * std::sin(angle);
    v << -std::sin(angle), std::cos(angle);
    v *= std::sqrt(mu / radius);  // circular speed
    const OsculatingElements el = orbital_elements(r, v, mu);
    EXPECT_NEAR(el.a, radius, 1e-12 * radius);
    EXPECT_NEAR(el.e, 0, 1e-12);
    // Any phase is right for a circle; it must still be a point on the unit circle.
    EXPECT_NEAR(el.cos_anomaly * el.cos_anomaly + el.sin_anomaly * el.sin_anomaly, 1, 1e-12);
  }
}

TEST(KeplerElements, EllipseRoundTripsThroughStateVectors) {
  const double mu = kGravitationalConstant * 0.8;
  int checked = 0;
  for (double a : {0.4, 1.0, 4.5}) {
    for (double e : {1e-6, 0.05, 0.3, 0.9}) {
      for (double nu : {0.0, 0.4, 1.9, 3.0, -2.2, -0.1}) {
        for (double sense : {1.0, -1.0}) {
          const KeplerState s = state_from_elements(a, e, nu, 0.83, mu, sense);
          const OsculatingElements el = orbital_elements(s.r, s.v, mu);
          EXPECT_NEAR(el.a, a, 1e-12 * a) << "a " << a << " e " << e << " nu " << nu;
          EXPECT_NEAR(el.e, e, 1e-12) << "a " << a << " e " << e << " nu " << nu;
          // The anomaly is measured in the orbit's own sense, so a mirrored orbit has the same phase.
          // Rounding of order 1e-16 in e cos nu and e sin nu moves the angle by 1e-16 / e: 1e-10 at e = 1e-6.
          const double phase_tolerance = e >= 0.05 ? 1e-12 : 1e-9;
          EXPECT_NEAR(el.cos_anomaly, std::cos(nu), phase_tolerance) << "e " << e << " nu " << nu;
          EXPECT_NEAR(el.sin_anomaly, std::sin(nu), phase_tolerance) << "e " << e << " nu " << nu;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 144);
}

TEST(KeplerElements, ThreeDimensionalStateMatchesItsPlanarOrbit) {
  const double mu = kGravitationalConstant;
  const KeplerState s = state_from_elements(2.0, 0.4, 1.1, 0.2, mu);
  // The same orbit tilted out of the xy plane by 30 degrees about the x axis.
  const double tilt = std::numbers::pi / 6;
  Eigen::Matrix3d rotation;
  rotation << 1, 0, 0, 0, std::cos(tilt), -std::sin(tilt), 0, std::sin(tilt), std::cos(tilt);
  const Eigen::VectorXd r = rotation * Eigen::Vector3d(s.r[0], s.r[1], 0);
  const Eigen::VectorXd v = rotation * Eigen::Vector3d(s.v[0], s.v[1], 0);
  const OsculatingElements el = orbital_elements(r, v, mu);
  EXPECT_NEAR(el.a, 2.0, 1e-12);
  EXPECT_NEAR(el.e, 0.4, 1e-12);
  EXPECT_NEAR(el.cos_anomaly, std::cos(1.1), 1e-12);
  EXPECT_NEAR(el.sin_anomaly, std::sin(1.1), 1e-12);
}

TEST(KeplerElements, RefusesOrbitsWithoutEllipticElements) {
  const double mu = kGravitationalConstant;
  Eigen::VectorXd r(2), v(2);
  r << 1, 0;
  auto message = [&] {
    try {
      orbital_elements(r, v, mu);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  v << 0, 1.5 * std::sqrt(2 * mu);  // above escape speed: hyperbolic
  EXPECT_NE(message().find("not bound"), std::string::npos) << message();
  v << 0, std::sqrt(2 * mu);  // exactly escape speed: parabolic
  EXPECT_NE(message().find("not bound"), std::string::npos) << message();
  v << 0.5 * std::sqrt(mu), 0;  // falling straight in: radial
  EXPECT_NE(message().find("radial"), std::string::npos) << message();
  r << 0, 0;
  EXPECT_NE(message().find("r = 0"), std::string::npos) << message();
}

TEST(KeplerElements, AreIntegralsOfTheMotionAlongASimulatedTrack) {
  const simulator::DatasetReader reader(test::two_body_dataset(6, 60));
  for (std::int64_t index = 0; index < 6; ++index) {
    const simulator::System system = reader.read_system(index);
    std::vector<int> rows;
    for (int row = 0; row < system.rows(); ++row)
      if (row % system.n_bodies != system.star_index()) rows.push_back(row);
    const ForceRows labelled = force_rows(system, index, rows);
    const Eigen::MatrixXd elements = kepler_elements(labelled);
    ASSERT_EQ(elements.rows(), static_cast<Eigen::Index>(rows.size()));
    ASSERT_EQ(elements.cols(), 4);
    // a and e are the ones the simulator drew the orbit from (stored per body, mu = G (m_star + m_planet)),
    // and they are conserved by the two-body motion (to the integrator's accuracy) ...
    const double a = system.elements[0][0], e = system.elements[0][1];
    ASSERT_GT(a, 0);
    EXPECT_LT((elements.col(0).array() - a).abs().maxCoeff(), 1e-6 * a) << "system " << index;
    EXPECT_LT((elements.col(1).array() - e).abs().maxCoeff(), 1e-6) << "system " << index;
    // ... and the phase is a point on the unit circle.
    const Eigen::ArrayXd norm = elements.col(2).array().square() + elements.col(3).array().square();
    EXPECT_LT((norm - 1).abs().maxCoeff(), 1e-12);
  }
}
