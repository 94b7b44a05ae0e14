#pragma once
// A file written by plain write(2) calls whose every failure (a full disk, a quota, an I/O error) is an
// orbitlaw::Error naming the file and the reason, including the failure that only close(2) reports. iostreams
// and LibTorch's writer either drop such failures or throw them from a destructor (std::terminate).
#include <cstddef>
#include <string>
#include <string_view>

namespace orbitlaw {

// Writes all `size` bytes to `fd`, retrying short writes (a nearly full disk writes part of a buffer) and
// EINTR; throws Error("cannot write <what>: <reason>") on failure.
void write_all(int fd, const void* data, std::size_t size, const std::string& what);

class CheckedFile {
 public:
  enum class Mode { kTruncate, kAppend };
  // Opens `path` for writing; errors name `shown_name` (the name the user gave, not a temporary one; default
  // `path`).
  explicit CheckedFile(const std::string& path, Mode mode = Mode::kTruncate, std::string shown_name = "");
  ~CheckedFile();  // closes without checking: an error is already on its way
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Closes the file, throwing on failure; nothing may be written after.
  void close();

 private:
  [[noreturn]] void fail(const char* action, int error) const;
  std::string quoted_name() const { return "'" + name_ + "'"; }
  std::string name_;
  int fd_ = -1;
};

}  // namespace orbitlaw
