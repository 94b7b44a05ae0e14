#pragma once
// Progress of long loops: a live line with rate and ETA on a terminal; a plain line every 30 s when stderr
// is not a terminal; nothing but the closing line under CI (environment variable CI set).
#include <chrono>
#include <cstdint>
#include <string>

namespace orbitlaw {

class Progress {
 public:
  Progress(std::string label, std::int64_t total, std::string unit = "it");
  ~Progress();
  void advance(std::int64_t n = 1) { set(done_ + n); }
  void set(std::int64_t done);
  void set_note(std::string note) { note_ = std::move(note); }  // e.g. "loss 2.31"
  void finish();                                                // prints the closing line once

  enum class Mode { kTerminal, kPlain, kQuiet };
  static Mode detect_mode();
  // The line as it would be printed now (exposed for tests).
  std::string render(double elapsed_seconds) const;

 private:
  void print(bool final_line);
  std::string label_;
  std::int64_t total_;
  std::string unit_;
  std::string note_;
  std::int64_t done_ = 0;
  Mode mode_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

std::string format_duration(double seconds);  // "1:02:03" or "2:03"

}  // namespace orbitlaw
