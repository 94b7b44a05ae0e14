#pragma once
// A wall-clock budget for one run (training, a probe run): how much of it is spent, and how much is left
// until a given share of it is. Stages split a budget by shares rather than absolute times so that one
// `time_limit_seconds` sizes a whole run on any machine.
#include <chrono>

namespace orbitlaw {

class Budget {
 public:
  using Clock = std::chrono::steady_clock;
  // `seconds` <= 0: no budget (limited() is false, nothing is ever exhausted). The clock starts at `start`.
  explicit Budget(double seconds = 0, Clock::time_point start = Clock::now());

  bool limited() const { return seconds_ > 0; }
  double seconds() const { return seconds_; }
  double elapsed() const;
  // True once the whole budget is spent (never when unlimited).
  bool exhausted() const;
  // Seconds left until `share` (in (0, 1]) of the budget is spent, never less than `at_least` (a stage given
  // no time at all would do nothing useful); +infinity when unlimited.
  double left_until(double share, double at_least = 1.0) const;
  // A stage's own limit (0: none) capped by left_until(share, at_least): the smaller of the two when both are
  // set, whichever is set otherwise, 0 when neither is.
  double cap(double own_limit, double share, double at_least = 1.0) const;

 private:
  double seconds_;
  Clock::time_point start_;
};

}  // namespace orbitlaw
