#include <H5public.h>

#include <Eigen/Core>
#include <boost/version.hpp>

#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

Json library_versions() {
  return Json{{"hdf5", std::to_string(H5_VERS_MAJOR) + "." + std::to_string(H5_VERS_MINOR) + "." +
                           std::to_string(H5_VERS_RELEASE)},
              {"eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                            "." + std::to_string(EIGEN_MINOR_VERSION)},
              {"boost", BOOST_LIB_VERSION}};
}

}  // namespace orbitlaw::simulator
