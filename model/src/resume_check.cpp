#include "resume_check.hpp"

#include <array>
#include <string_view>

#include "orbitlaw/common/stage_record.hpp"

namespace orbitlaw::model::detail {

namespace {

// The train keys a resumed run may change: how long it runs (max_steps also stretches the cosine schedule
// from where it stands, so the segments are recorded), where, and what it logs or checks.
constexpr std::array<std::string_view, 10> kMayChangeOnResume = {
    "max_steps",    "max_minutes",   "max_seconds",         "threads",     "device", "prefetch",
    "log_interval", "eval_interval", "checkpoint_interval", "eval_batches"};

std::string first_difference(const Json& before, const Json& now, const std::string& where) {
  if (before == now) return "";
  if (before.is_object() && now.is_object()) {
    for (const auto& [key, value] : before.items()) {
      const std::string path = where.empty() ? key : where + "." + key;
      if (!now.contains(key)) return path + ": " + value.dump() + " -> (absent)";
      if (auto d = first_difference(value, now.at(key), path); !d.empty()) return d;
    }
    for (const auto& [key, value] : now.items()) {
      if (!before.contains(key))
        return (where.empty() ? key : where + "." + key) + ": (absent) -> " + value.dump();
    }
    return "";
  }
  return where + ": " + before.dump() + " -> " + now.dump();
}

}  // namespace

Json resume_fingerprint(const TrainRequest& request) {
  Json settings = request.resolved_config;
  if (settings.contains("train") && settings["train"].is_object()) {
    for (const auto key : kMayChangeOnResume) settings["train"].erase(std::string(key));
  }
  return Json{{"inputs",
               {{"data", file_checksum(request.data)},
                {"val", request.val.empty() ? Json(nullptr) : Json(file_checksum(request.val))}}},
              {"settings", settings}};
}

std::string resume_difference(const Json& stored, const Json& current) {
  const Json& a = stored.value("inputs", Json::object());
  const Json& b = current.value("inputs", Json::object());
  if (a.value("data", Json()) != b.value("data", Json())) return "the contents of --data";
  if (a.value("val", Json()) != b.value("val", Json())) return "the contents of --val";
  return first_difference(stored.value("settings", Json::object()), current.value("settings", Json::object()),
                          "");
}

}  // namespace orbitlaw::model::detail
