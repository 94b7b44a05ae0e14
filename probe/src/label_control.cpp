#include "orbitlaw/probe/label_control.hpp"

#include <cmath>
#include <numeric>
#include <vector>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/common/units.hpp"

namespace orbitlaw::probe {

Json LabelControl::to_json() const {
  return Json{{"law_exponent", law_exponent ? Json(*law_exponent) : Json(nullptr)}, {"shuffle", shuffle}};
}

namespace {

void relabel_with_law(ForceRows& rows, ProbeTarget target, double exponent) {
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    const double acceleration = kGravitationalConstant * rows.m2[i] / std::pow(rows.r[i], exponent);
    rows.force[i] = target == ProbeTarget::kForce ? rows.m1[i] * acceleration : acceleration;
  }
}

}  // namespace

void apply_label_control(ForceDataset& dataset, const LabelControl& control) {
  if (control.law_exponent) {
    const double k = *control.law_exponent;
    if (!std::isfinite(k) || k <= 0 || k > 10)
      throw Error("probe config: 'labels.law_exponent' must be a number in (0, 10]");
    for (ForceRows* rows : {&dataset.train, &dataset.validation, &dataset.test})
      relabel_with_law(*rows, dataset.target, k);
  }
  if (control.shuffle) {
    std::vector<double> labels;
    for (const ForceRows* rows : {&dataset.train, &dataset.validation, &dataset.test})
      labels.insert(labels.end(), rows->force.data(), rows->force.data() + rows->force.size());
    SplitMix64 rng(derive_seed(control.seed, 9100));
    shuffle(labels, rng);
    std::size_t next = 0;
    for (ForceRows* rows : {&dataset.train, &dataset.validation, &dataset.test})
      for (Eigen::Index i = 0; i < rows->force.size(); ++i) rows->force[i] = labels[next++];
  }
}

}  // namespace orbitlaw::probe
