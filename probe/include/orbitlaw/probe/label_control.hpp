#pragma once
// Control tasks for the supervised probes (docs/design.md section 6c): the same probes fitted to labels that
// are not the data's own. A probe that recovers whatever law its labels follow is no evidence of what a model
// computes, so each probe result is read beside its control:
//   law_exponent k  labels G·m2/r^k (times m1 for the force target), a law the trajectories do not obey: on a
//                   model trained in a 1/r^2 universe, a probe whose law search returns r^-k fits any law;
//   shuffle         the labels permuted across all rows of every split (seeded): no probe can predict the
//   test
//                   rows' labels, so a test R^2 above 0 means that test rows leak into the fit.
#include <cstdint>
#include <optional>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/probe/force_dataset.hpp"

namespace orbitlaw::probe {

struct LabelControl {
  std::optional<double> law_exponent;  // unset: the data's own labels
  bool shuffle = false;
  std::uint64_t seed = 0;
  bool active() const { return law_exponent.has_value() || shuffle; }
  Json to_json() const;  // {"law_exponent": k or null, "shuffle": bool}
};

// Replaces the labels (ForceRows::force) of every split of `dataset` as `control` says; first the law, then
// the permutation. Does nothing for an inactive control.
void apply_label_control(ForceDataset& dataset, const LabelControl& control);

}  // namespace orbitlaw::probe
