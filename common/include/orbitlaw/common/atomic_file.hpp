#pragma once
// Interrupted work must never leave a file that looks complete. Outputs are written under a temporary name
// beside the final one and renamed into place only when complete (rename is atomic on POSIX filesystems).
#include <string>

namespace orbitlaw {

class AtomicOutput {
 public:
  explicit AtomicOutput(std::string final_path);
  ~AtomicOutput();  // removes the temporary file unless commit() was called
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }
  void commit();  // renames the temporary file to the final name

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

// Writes `content` to `path` through an AtomicOutput.
void write_text_atomic(const std::string& path, const std::string& content);

}  // namespace orbitlaw
