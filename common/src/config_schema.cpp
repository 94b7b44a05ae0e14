#include "orbitlaw/common/config_schema.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace orbitlaw {

bool Range::contains(double v) const {
  if (!std::isfinite(v)) return false;
  if (min && (min_open ? !(v > *min) : !(v >= *min))) return false;
  if (max && (max_open ? !(v < *max) : !(v <= *max))) return false;
  return true;
}

std::string Range::text() const {
  if (min && max)
    return "in " + std::string(min_open ? "(" : "[") + schema_detail::number_text(*min) + ", " +
           schema_detail::number_text(*max) + (max_open ? ")" : "]");
  if (min) return (min_open ? "greater than " : "at least ") + schema_detail::number_text(*min);
  if (max) return (max_open ? "less than " : "at most ") + schema_detail::number_text(*max);
  return "";
}

namespace schema_detail {

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string join_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (const auto& c : choices) out += (out.empty() ? "" : ", ") + c;
  return out;
}

void fail_value(const std::string& where, const std::string& value, const std::string& allowed) {
  throw Error(where + " must be " + (allowed.empty() ? std::string("a finite number") : allowed) + " (got " +
              value + ")");
}

}  // namespace schema_detail

std::string format_key_table(const std::vector<KeyDoc>& keys) {
  std::size_t width = 0;
  for (const auto& k : keys) width = std::max(width, k.key.size());
  std::ostringstream out;
  for (const auto& k : keys) {
    out << k.key << std::string(width + 2 - k.key.size(), ' ') << k.type << ", default " << k.default_value;
    if (!k.allowed.empty()) out << ", " << k.allowed;
    out << "\n" << std::string(width + 2, ' ') << k.description << "\n";
  }
  return out.str();
}

std::string format_key_markdown(const std::vector<KeyDoc>& keys) {
  // A | inside a cell would end it.
  auto cell = [](std::string text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::ostringstream out;
  out << "| key | type | default | allowed | description |\n|---|---|---|---|---|\n";
  for (const auto& k : keys)
    out << "| `" << k.key << "` | " << k.type << " | `" << cell(k.default_value) << "` | " << cell(k.allowed)
        << " | " << cell(k.description) << " |\n";
  return out.str();
}

}  // namespace orbitlaw
