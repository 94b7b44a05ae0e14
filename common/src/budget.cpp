#include "orbitlaw/common/budget.hpp"

#include <algorithm>
#include <limits>

namespace orbitlaw {

Budget::Budget(double seconds, Clock::time_point start)
    : seconds_(seconds > 0 ? seconds : 0), start_(start) {}

double Budget::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

bool Budget::exhausted() const { return limited() && elapsed() >= seconds_; }

double Budget::left_until(double share, double at_least) const {
  if (!limited()) return std::numeric_limits<double>::infinity();
  return std::max(at_least, share * seconds_ - elapsed());
}

double Budget::cap(double own_limit, double share, double at_least) const {
  if (!limited()) return own_limit;
  const double left = left_until(share, at_least);
  return own_limit > 0 ? std::min(own_limit, left) : left;
}

}  // namespace orbitlaw
