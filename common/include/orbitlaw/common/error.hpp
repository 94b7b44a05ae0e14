#pragma once
#include <stdexcept>
#include <string>

namespace orbitlaw {

// An error caused by the user's input (config, file, physics out of range). The command-line tool prints
// its message as one line and exits non-zero; messages therefore name the offending thing and value.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace orbitlaw
