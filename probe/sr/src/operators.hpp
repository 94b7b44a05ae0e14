#pragma once
// Looking operators up by name (options, parser).
#include <optional>
#include <string>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

// "+", "-", "*", "/", "pow" (or "^"), "neg", "inv", ...; nullopt for unknown names.
std::optional<Op> op_from_name(const std::string& name);

}  // namespace orbitlaw::sr
