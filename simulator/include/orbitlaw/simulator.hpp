#pragma once
// Public interface of orbitlaw_simulator.
#include "orbitlaw/config.hpp"

namespace orbitlaw::simulator {

// Versions of HDF5, Eigen and Boost this library was built with, for provenance records.
Json library_versions();

}  // namespace orbitlaw::simulator
