#include "orbitlaw/common/checked_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

void write_all(int fd, const void* data, std::size_t size, const std::string& what) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    // No byte written and no error: nothing more fits.
    if (written <= 0)
      throw Error("cannot write " + what + ": " + std::strerror(written < 0 ? errno : ENOSPC));
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

CheckedFile::CheckedFile(const std::string& path, Mode mode, std::string shown_name)
    : name_(shown_name.empty() ? path : std::move(shown_name)) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::kAppend ? O_APPEND : O_TRUNC);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) fail("open", errno);
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) ::close(fd_);
}

void CheckedFile::fail(const char* action, int error) const {
  throw Error("cannot " + std::string(action) + " '" + name_ + "': " + std::strerror(error));
}

void CheckedFile::write(const void* data, std::size_t size) {
  if (fd_ < 0) throw Error("'" + name_ + "' is written after it was closed");
  write_all(fd_, data, size, quoted_name());
}

void CheckedFile::close() {
  const int fd = fd_;
  fd_ = -1;
  // close(2) is not retried on EINTR: on Linux the descriptor is gone either way.
  if (fd >= 0 && ::close(fd) != 0) fail("close", errno);
}

}  // namespace orbitlaw
