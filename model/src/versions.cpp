#include <torch/torch.h>
#include <torch/version.h>

#include "orbitlaw/model.hpp"

namespace orbitlaw::model {

Json library_versions() {
  return Json{{"libtorch", TORCH_VERSION}, {"cuda_available", torch::cuda::is_available()}};
}

}  // namespace orbitlaw::model
