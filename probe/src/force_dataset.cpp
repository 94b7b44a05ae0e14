#include "orbitlaw/probe/force_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/probe/force_vectors.hpp"  // visible_planet_rows
#include "row_tables.hpp"

namespace orbitlaw::probe {

namespace {

void check_two_body(const simulator::System& system, std::int64_t index) {
  if (system.n_bodies != 2) {
    throw Error(
        "force probe: system " + std::to_string(index) + " has " + std::to_string(system.n_bodies) +
        " bodies; the force-magnitude task needs a two-body dataset (orbitlaw simulate --preset two-body)");
  }
}

std::vector<int> draw_rows(std::vector<int> rows, int count, SplitMix64& rng) {
  if (count <= 0 || count >= static_cast<int>(rows.size())) return rows;
  shuffle(rows, rng);
  rows.resize(count);
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

ProbeTarget parse_probe_target(const std::string& name) {
  if (name == "force") return ProbeTarget::kForce;
  if (name == "acceleration") return ProbeTarget::kAcceleration;
  throw Error("probe config: unknown target '" + name + "' (known: force, acceleration)");
}

std::string to_string(ProbeTarget target) { return target == ProbeTarget::kForce ? "force" : "acceleration"; }

NewtonLaw newton_law(ProbeTarget target) {
  if (target == ProbeTarget::kAcceleration) return NewtonLaw{"m2/r^2", 0, 1, -2};
  return NewtonLaw{"m1*m2/r^2", 1, 1, -2};
}

ForceRows ForceRows::select(const std::vector<std::int64_t>& indices) const {
  return detail::select_rows(*this, indices);
}

ForceRows ForceRows::concat(const std::vector<ForceRows>& parts) { return detail::concat_rows(parts); }

double straight_line_deviation(const simulator::System& system, int row) {
  const int n = system.n_bodies;
  const int body = row % n, steps = row / n;
  if (steps < 2) return 0;
  const auto first = system.position.row(body);
  const auto last = system.position.row(row);
  double deviation = 0;
  for (int k = 1; k < steps; ++k) {
    const double t = static_cast<double>(k) / steps;
    const auto on_chord = first + t * (last - first);
    deviation = std::max(deviation, (system.position.row(k * n + body) - on_chord).norm());
  }
  return deviation;
}

ForceRows force_rows(const simulator::System& system, std::int64_t index, const std::vector<int>& rows,
                     ProbeTarget target) {
  check_two_body(system, index);
  const int star = system.star_index();
  const auto n = static_cast<Eigen::Index>(rows.size());
  const int d = system.dim;
  ForceRows out;
  out.r.resize(n);
  out.m1.resize(n);
  out.m2.resize(n);
  out.force.resize(n);
  out.position.resize(n, d);
  out.velocity.resize(n, d);
  out.star_position.resize(n, d);
  out.star_velocity.resize(n, d);
  out.deviation.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int row = rows[i];
    if (row < 0 || row >= system.rows() || row % system.n_bodies == star) {
      throw Error("force probe: row " + std::to_string(row) + " of system " + std::to_string(index) +
                  " is not a planet row");
    }
    const int star_row = row - row % system.n_bodies + star;
    out.system.push_back(index);
    out.row.push_back(row);
    out.position.row(i) = system.position.row(row);
    out.velocity.row(i) = system.velocity.row(row);
    out.star_position.row(i) = system.position.row(star_row);
    out.star_velocity.row(i) = system.velocity.row(star_row);
    out.r[i] = (system.position.row(row) - system.position.row(star_row)).norm();
    out.m1[i] = system.mass[0];
    out.m2[i] = system.mass[star];
    const double acceleration = system.star_acceleration.row(row).norm();
    out.force[i] = target == ProbeTarget::kForce ? system.mass[0] * acceleration : acceleration;
    out.deviation[i] = straight_line_deviation(system, row);
  }
  return out;
}

void ForceSplitConfig::validate() const {
  auto fraction = [](const char* key, double value) {
    if (!(value > 0 && value < 1)) {
      throw Error(std::string("probe config: '") + key + "' must lie in (0, 1), got " +
                  std::to_string(value));
    }
  };
  fraction("test_fraction", test_fraction);
  fraction("validation_fraction", validation_fraction);
  if (systems < 0) throw Error("probe config: 'systems' must be >= 0 (0 = all)");
  if (test_rows_per_system < 0) throw Error("probe config: 'test_rows_per_system' must be >= 0 (0 = all)");
  if (train_rows_per_system < 0) throw Error("probe config: 'train_rows_per_system' must be >= 0 (0 = all)");
  if (observed_rows < 1) throw Error("probe config: 'observed_rows' must be >= 1");
}

Json ForceSplitConfig::to_json() const {
  return Json{{"systems", systems},
              {"test_fraction", test_fraction},
              {"validation_fraction", validation_fraction},
              {"test_rows_per_system", test_rows_per_system},
              {"train_rows_per_system", train_rows_per_system},
              {"observed_rows", observed_rows},
              {"seed", seed},
              {"target", to_string(target)}};
}

ForceDataset build_force_dataset(const simulator::DatasetReader& reader, const ForceSplitConfig& config) {
  config.validate();
  const std::int64_t available = reader.num_systems();
  if (config.systems > available) {
    throw Error("probe config: 'systems' = " + std::to_string(config.systems) + " but the dataset holds " +
                std::to_string(available));
  }
  const std::int64_t n = config.systems > 0 ? config.systems : available;
  const auto n_test = std::max<std::int64_t>(1, std::llround(static_cast<double>(n) * config.test_fraction));
  const auto n_validation =
      std::max<std::int64_t>(1, std::llround(static_cast<double>(n - n_test) * config.validation_fraction));
  if (n - n_test - n_validation < 1) {
    throw Error("force probe: " + std::to_string(n) +
                " systems are too few for a train, validation and test split");
  }

  std::vector<std::int64_t> order(n);
  for (std::int64_t i = 0; i < n; ++i) order[i] = i;
  SplitMix64 split_rng(derive_seed(config.seed, 1));
  shuffle(order, split_rng);

  ForceDataset dataset;
  dataset.dim = reader.dim();
  dataset.target = config.target;
  dataset.test_systems.assign(order.begin(), order.begin() + n_test);
  dataset.validation_systems.assign(order.begin() + n_test, order.begin() + n_test + n_validation);
  dataset.train_systems.assign(order.begin() + n_test + n_validation, order.end());
  for (auto* systems : {&dataset.test_systems, &dataset.validation_systems, &dataset.train_systems}) {
    std::sort(systems->begin(), systems->end());
  }

  // Each system's rows come from its own stream, so a system's labels do not depend on the split sizes.
  auto rows_of = [&](std::int64_t index, int count) {
    simulator::System system = reader.read_system(index);
    check_two_body(system, index);
    SplitMix64 rng(derive_seed(config.seed, 1000 + static_cast<std::uint64_t>(index)));
    return force_rows(system, index, draw_rows(visible_planet_rows(system, config.observed_rows), count, rng),
                      config.target);
  };
  auto build = [&](const std::vector<std::int64_t>& systems, int count) {
    std::vector<ForceRows> parts;
    parts.reserve(systems.size());
    for (auto index : systems) parts.push_back(rows_of(index, count));
    return ForceRows::concat(parts);
  };
  dataset.train = build(dataset.train_systems, config.train_rows_per_system);
  dataset.validation = build(dataset.validation_systems, config.train_rows_per_system);
  dataset.test = build(dataset.test_systems, config.test_rows_per_system);
  return dataset;
}

Eigen::MatrixXd target_vectors(const simulator::DatasetReader& reader, const ForceRows& rows,
                               ProbeTarget target) {
  Eigen::MatrixXd out(rows.size(), rows.dim());
  std::int64_t loaded = -1;
  simulator::System system;
  for (Eigen::Index i = 0; i < rows.size(); ++i) {
    const std::int64_t index = rows.system[static_cast<std::size_t>(i)];
    if (index != loaded) {  // rows come grouped by system: each is read once
      system = reader.read_system(index);
      check_two_body(system, index);
      loaded = index;
    }
    const int row = rows.row[static_cast<std::size_t>(i)];
    if (row < 0 || row >= system.rows() || row % system.n_bodies == system.star_index()) {
      throw Error("force probe: row " + std::to_string(row) + " of system " + std::to_string(index) +
                  " is not a planet row");
    }
    const double factor = target == ProbeTarget::kForce ? system.mass[0] : 1.0;
    out.row(i) = factor * system.star_acceleration.row(row);
  }
  return out;
}

}  // namespace orbitlaw::probe
