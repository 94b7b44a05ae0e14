#include "orbitlaw/common/atomic_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "orbitlaw/common/checked_file.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

namespace {

// A run killed with SIGKILL cannot remove its temporary file; the next writer of the same output does,
// once the process that owned it is gone. A live owner's file (a concurrent writer) is left alone.
void remove_stale_partials(const std::filesystem::path& final_path) {
  const auto parent =
      final_path.parent_path().empty() ? std::filesystem::path(".") : final_path.parent_path();
  const std::string prefix = final_path.filename().string() + ".partial-";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t owner = static_cast<pid_t>(std::stol(digits));
    if (owner == ::getpid() || owner <= 0) continue;
    if (::kill(owner, 0) != 0 && errno == ESRCH) {
      std::error_code remove_error;
      std::filesystem::remove_all(entry.path(), remove_error);
    }
  }
}

}  // namespace

AtomicOutput::AtomicOutput(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(final_path_ + ".partial-" + std::to_string(::getpid())) {
  auto parent = std::filesystem::path(final_path_).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw Error("cannot create directory '" + parent.string() + "': " + ec.message());
  }
  remove_stale_partials(final_path_);
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
  CheckedFile file(out.temp_path(), CheckedFile::Mode::kTruncate, path);
  file.write(content);
  file.close();
  out.commit();
}

}  // namespace orbitlaw
