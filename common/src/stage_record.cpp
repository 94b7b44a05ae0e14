#include "orbitlaw/common/stage_record.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/build_info.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

namespace fs = std::filesystem;

std::string file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "' to checksum it");
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    for (std::streamsize k = 0; k < got; ++k) {
      hash ^= static_cast<unsigned char>(buffer[static_cast<std::size_t>(k)]);
      hash *= 0x100000001b3ULL;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string stage_record_path(const std::string& dir, const std::string& stage) {
  return (fs::path(dir) / (stage + ".complete.json")).string();
}

void begin_stage(const std::string& dir, const std::string& stage) {
  std::error_code ec;
  fs::remove(stage_record_path(dir, stage), ec);
  if (ec) throw Error("cannot remove '" + stage_record_path(dir, stage) + "': " + ec.message());
}

void complete_stage(const std::string& dir, const std::string& stage, const std::vector<std::string>& outputs,
                    const Json& inputs) {
  Json files = Json::object();
  for (const auto& name : outputs) {
    const std::string path = (fs::path(dir) / name).string();
    if (!fs::is_regular_file(path)) throw Error("stage " + stage + ": output '" + path + "' was not written");
    files[name] = Json{{"bytes", fs::file_size(path)}, {"checksum", file_checksum(path)}};
  }
  const Json record{{"format", "orbitlaw-stage-complete"},
                    {"version", 1},
                    {"stage", stage},
                    {"outputs", files},
                    {"inputs", inputs},
                    {"git_revision", build_git_revision()}};
  write_text_atomic(stage_record_path(dir, stage), record.dump(2) + "\n");
}

Json require_complete_stage(const std::string& dir, const std::string& stage) {
  const std::string path = stage_record_path(dir, stage);
  if (!fs::is_regular_file(path)) {
    throw Error("'" + dir + "' has no " + stage + ".complete.json: its " + stage +
                " stage did not complete (killed or still running?); rerun it");
  }
  Json record;
  try {
    record = load_json_file(path);
  } catch (const Error&) {
    throw Error("'" + path + "' is not a readable completion record (corrupt?); rerun the " + stage +
                " stage");
  }
  if (!record.is_object() || record.value("format", "") != "orbitlaw-stage-complete" ||
      !record.contains("outputs") || !record["outputs"].is_object()) {
    throw Error("'" + path + "' is not an orbitlaw completion record");
  }
  for (const auto& [name, expected] : record["outputs"].items()) {
    const std::string file = (fs::path(dir) / name).string();
    if (!fs::is_regular_file(file))
      throw Error("'" + dir + "': " + name + " is missing although the " + stage + " stage completed");
    if (!expected.is_object() || file_checksum(file) != expected.value("checksum", "")) {
      throw Error("'" + dir + "': " + name + " has changed since the " + stage +
                  " stage completed (outputs of two runs mixed?); rerun it");
    }
  }
  return record;
}

}  // namespace orbitlaw
