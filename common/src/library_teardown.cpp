#include "orbitlaw/common/library_teardown.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace orbitlaw {

void skip_library_teardown_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::on_exit(
        [](int status, void*) {
          std::fflush(nullptr);
          std::_Exit(status);
        },
        nullptr);
  });
}

}  // namespace orbitlaw
