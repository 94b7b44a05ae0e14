#include "orbitlaw/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "orbitlaw/error.hpp"

namespace orbitlaw {

AtomicOutput::AtomicOutput(std::string final_path)
    : final_path_(std::move(final_path)),
      temp_path_(final_path_ + ".partial-" + std::to_string(::getpid())) {
  auto parent = std::filesystem::path(final_path_).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw Error("cannot create directory '" + parent.string() + "': " + ec.message());
  }
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_path_, ec);
  }
}

void AtomicOutput::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_path_, final_path_, ec);
  if (ec) throw Error("cannot move '" + temp_path_ + "' to '" + final_path_ + "': " + ec.message());
  committed_ = true;
}

void write_text_atomic(const std::string& path, const std::string& content) {
  AtomicOutput out(path);
  {
    std::ofstream file(out.temp_path(), std::ios::binary);
    if (!file) throw Error("cannot write '" + out.temp_path() + "'");
    file << content;
    file.flush();
    if (!file) throw Error("failed writing '" + out.temp_path() + "'");
  }
  out.commit();
}

}  // namespace orbitlaw
