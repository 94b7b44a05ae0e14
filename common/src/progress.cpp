#include "orbitlaw/common/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace orbitlaw {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Mode Progress::detect_mode() {
  const char* ci = std::getenv("CI");
  if (ci && *ci && std::string(ci) != "0" && std::string(ci) != "false") return Mode::kQuiet;
  return ::isatty(STDERR_FILENO) ? Mode::kTerminal : Mode::kPlain;
}

Progress::Progress(std::string label, std::int64_t total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      mode_(detect_mode()),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

Progress::~Progress() {
  if (!finished_ && mode_ == Mode::kTerminal) std::fputs("\n", stderr);
}

std::string Progress::render(double elapsed) const {
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  std::string line = fmt::format("{}: {}", label_, done_);
  if (total_ > 0) {
    line += fmt::format("/{} ({:.0f}%)", total_, 100.0 * static_cast<double>(done_) / static_cast<double>(total_));
  }
  line += fmt::format(" {:.3g} {}/s elapsed {}", rate, unit_, format_duration(elapsed));
  if (total_ > 0 && rate > 0 && done_ < total_) {
    line += " ETA " + format_duration(static_cast<double>(total_ - done_) / rate);
  }
  if (!note_.empty()) line += " " + note_;
  return line;
}

void Progress::set(std::int64_t done) {
  done_ = done;
  auto now = std::chrono::steady_clock::now();
  double since_last = std::chrono::duration<double>(now - last_print_).count();
  if ((mode_ == Mode::kTerminal && since_last >= 0.2) || (mode_ == Mode::kPlain && since_last >= 30.0)) {
    last_print_ = now;
    print(false);
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  print(true);
}

void Progress::print(bool final_line) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = render(elapsed);
  if (mode_ == Mode::kTerminal) {
    std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), final_line ? "\n" : "");
  } else if (final_line || mode_ == Mode::kPlain) {
    std::fprintf(stderr, "%s%s\n", line.c_str(), final_line ? " done" : "");
  }
  std::fflush(stderr);
}

}  // namespace orbitlaw
