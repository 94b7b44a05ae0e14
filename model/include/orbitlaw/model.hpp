#pragma once
// Public interface of orbitlaw_model.
#include "orbitlaw/config.hpp"

namespace orbitlaw::model {

// LibTorch version and whether CUDA is compiled in and available, for provenance records.
Json library_versions();

}  // namespace orbitlaw::model
