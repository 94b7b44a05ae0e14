#include "orbitlaw/probe/distribution_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace orbitlaw::probe {

namespace {

bool same_cadence(double a, double b) { return std::abs(a - b) <= 1e-3 * std::max(a, b); }

std::string list(const std::vector<double>& values) {
  std::string out;
  for (double v : values) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    out += (out.empty() ? "" : ", ") + std::string(buffer) + " yr";
  }
  return out;
}

}  // namespace

std::string DistributionCheck::problem() const {
  std::string out;
  if (!unseen_cadences.empty())
    out += "cadence " + list(unseen_cadences) + " never seen in training (trained on " +
           list(training_cadences) + ")";
  if (coordinates > 0 &&
      static_cast<double>(outside_range) > max_outside_fraction * static_cast<double>(coordinates)) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "%lld of %lld visible coordinates lie outside the tokenizer's range (more than %g%%)",
                  static_cast<long long>(outside_range), static_cast<long long>(coordinates),
                  100 * max_outside_fraction);
    out += (out.empty() ? "" : "; ") + std::string(buffer);
  }
  return out;
}

Json DistributionCheck::json() const {
  return Json{{"probe_cadences", probe_cadences},
              {"unseen_cadences", unseen_cadences},
              {"training_cadences", training_cadences},
              {"training_cadences_recorded", cadences_known},
              {"systems", systems},
              {"coordinates", coordinates},
              {"outside_tokenizer_range", outside_range},
              {"max_outside_fraction", max_outside_fraction},
              {"shorter_than_context", shorter_than_context},
              {"in_distribution", problem().empty()}};
}

DistributionCheck check_probe_distribution(const simulator::DatasetReader& data, std::int64_t systems,
                                           const TrainingDistribution& training) {
  DistributionCheck out;
  const std::int64_t n = systems > 0 ? std::min(systems, data.num_systems()) : data.num_systems();
  out.systems = n;
  out.cadences_known = !training.cadences.empty();
  out.training_cadences = training.cadences;
  const auto table = data.read_system_table();
  for (std::int64_t i = 0; i < n; ++i) {
    const double cadence = table.cadence[static_cast<std::size_t>(i)];
    if (std::none_of(out.probe_cadences.begin(), out.probe_cadences.end(),
                     [&](double c) { return same_cadence(c, cadence); }))
      out.probe_cadences.push_back(cadence);
  }
  std::sort(out.probe_cadences.begin(), out.probe_cadences.end());
  if (out.cadences_known) {
    for (double c : out.probe_cadences) {
      if (std::none_of(training.cadences.begin(), training.cadences.end(),
                       [&](double t) { return same_cadence(t, c); }))
        out.unseen_cadences.push_back(c);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const simulator::System system = data.read_system(i);
    const int visible = std::min(system.rows(), training.observed_rows);
    out.shorter_than_context += system.rows() < training.observed_rows;
    for (int row = 0; row < visible; ++row) {
      for (int d = 0; d < system.dim; ++d) {
        const double x = system.position(row, d);
        out.outside_range += !(x >= training.lo && x < training.hi);
        ++out.coordinates;
      }
    }
  }
  return out;
}

}  // namespace orbitlaw::probe
