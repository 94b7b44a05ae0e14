#pragma once
// Is a probe dataset drawn from the distribution the probed model was trained on? A model probed on a cadence
// it never saw, or on coordinates its tokenizer clamps, is asked about inputs outside its world, and whatever
// law its probe yields says nothing about what it learned (docs/design.md section 6).
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::probe {

// What the checkpoint says about its training data (LibTorch-free, filled by the caller).
struct TrainingDistribution {
  double lo = 0, hi = 0;         // the tokenizer's coordinate range, AU
  std::vector<double> cadences;  // cadences (years) seen in training; empty: not recorded
  int observed_rows = 0;         // system rows the model sees
};

struct DistributionCheck {
  std::vector<double> probe_cadences;     // distinct cadences of the probe systems used
  std::vector<double> unseen_cadences;    // of those, the ones training never saw
  std::vector<double> training_cadences;  // as recorded in the checkpoint
  std::int64_t systems = 0, coordinates = 0;
  std::int64_t outside_range = 0;         // visible coordinates outside [lo, hi): clamped by the tokenizer
  std::int64_t shorter_than_context = 0;  // systems with fewer rows than the model sees
  bool cadences_known = false;            // the checkpoint recorded its training cadences
  // Coordinates a tokenizer clamps are tolerated up to this share: training data clamp some too (the
  // quickstart's slice, a <= 5 AU in +-6 AU, clamps 0.3% of its coordinates at eccentric apocentres).
  double max_outside_fraction = 0.01;
  // One line naming what is out of distribution; empty when nothing is.
  std::string problem() const;
  Json json() const;
};

// Reads systems [0, systems) (0: all) of the dataset.
DistributionCheck check_probe_distribution(const simulator::DatasetReader& data, std::int64_t systems,
                                           const TrainingDistribution& training);

}  // namespace orbitlaw::probe
