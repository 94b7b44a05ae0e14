#pragma once
// The project's units: astronomical units, years, solar masses. In them Kepler's third law reads
// P^2 = a^3 / M for a year-long orbit at 1 AU around one solar mass, so G = 4 pi^2.
#include <numbers>

namespace orbitlaw {

inline constexpr double kGravitationalConstant =
    4.0 * std::numbers::pi * std::numbers::pi;  // AU^3/(Msun yr^2)

}  // namespace orbitlaw
