#include "probe_progress.hpp"

#include <filesystem>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/stage_record.hpp"

namespace orbitlaw::probe::detail {

namespace fs = std::filesystem;

namespace {
// The first top-level key whose value differs, to name in the error.
std::string first_difference(const Json& a, const Json& b) {
  for (const auto& [key, value] : a.items()) {
    if (!b.contains(key) || b[key] != value) return key;
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key)) return key;
  }
  return "?";
}
}  // namespace

ProbeProgress::ProbeProgress(std::string dir, Json fingerprint, bool resume)
    : path_((fs::path(dir) / "probe.progress.json").string()) {
  const Json fresh{{"format", "orbitlaw-probe-progress"},
                   {"version", 1},
                   {"fingerprint", fingerprint},
                   {"predictions", nullptr},
                   {"searches", Json::array()}};
  record_ = fresh;
  if (!resume || !fs::exists(path_)) {
    save();
    return;
  }
  Json earlier;
  try {
    earlier = load_json_file(path_);
  } catch (const Error&) {
    throw Error("cannot resume: '" + path_ + "' is corrupt; rerun without --resume");
  }
  if (!earlier.is_object() || earlier.value("format", "") != "orbitlaw-probe-progress" ||
      !earlier.contains("fingerprint") || !earlier["searches"].is_array()) {
    throw Error("cannot resume: '" + path_ + "' is not a probe progress record; rerun without --resume");
  }
  if (earlier["fingerprint"] != fingerprint) {
    throw Error("cannot resume: the interrupted run had another " +
                first_difference(earlier["fingerprint"], fingerprint) +
                " (resume with the same config, checkpoint and data, or rerun without --resume)");
  }
  record_ = earlier;
}

bool ProbeProgress::predictions_finished(const std::string& predictions_path) const {
  const Json& p = record_["predictions"];
  return p.is_object() && fs::is_regular_file(predictions_path) &&
         file_checksum(predictions_path) == p.value("checksum", "");
}

void ProbeProgress::predictions_written(const std::string& predictions_path) {
  record_["predictions"] = Json{{"checksum", file_checksum(predictions_path)}};
  record_["searches"] = Json::array();  // searches of other predictions are void
  save();
}

std::optional<Json> ProbeProgress::finished_search(const std::string& probe,
                                                   const std::string& protocol) const {
  for (const auto& s : record_["searches"]) {
    if (s.value("probe", "") == probe && s.value("protocol", "") == protocol) return s;
  }
  return std::nullopt;
}

void ProbeProgress::search_finished(const std::string& probe, const std::string& protocol,
                                    const Json& search) {
  Json entry = search;
  entry["probe"] = probe;
  entry["protocol"] = protocol;
  record_["searches"].push_back(entry);
  save();
}

void ProbeProgress::remove() const {
  std::error_code ec;
  fs::remove(path_, ec);
}

void ProbeProgress::save() const { write_text_atomic(path_, record_.dump(1) + "\n"); }

}  // namespace orbitlaw::probe::detail
