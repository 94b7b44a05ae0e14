#include "orbitlaw/probe/force_vectors.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/probe/oracles.hpp"
#include "row_tables.hpp"

namespace orbitlaw::probe {

namespace {

void check_planet_row(const simulator::System& system, std::int64_t index, int row) {
  if (row < 0 || row >= system.rows() || row % system.n_bodies == system.star_index()) {
    throw Error("force-vector probe: row " + std::to_string(row) + " of system " + std::to_string(index) +
                " is not a planet row");
  }
}

}  // namespace

std::vector<int> visible_planet_rows(const simulator::System& system, int observed_rows) {
  std::vector<int> rows;
  const int limit = std::min(system.rows(), observed_rows);
  for (int row = 0; row < limit; ++row) {
    if (row % system.n_bodies != system.star_index()) rows.push_back(row);
  }
  return rows;
}

double force_scale(const simulator::System& system, const std::vector<int>& rows) {
  if (rows.empty()) throw Error("force-vector probe: no planet rows to normalise by");
  double sum = 0;
  for (int row : rows) {
    const double m = system.mass[static_cast<std::size_t>(row % system.n_bodies)];
    sum += (m * system.acceleration.row(row)).squaredNorm();
  }
  return std::sqrt(sum / static_cast<double>(rows.size()));
}

ForceVectorRows force_vector_rows(const simulator::System& system, std::int64_t index,
                                  const std::vector<int>& rows, double scale) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  const int d = system.dim;
  ForceVectorRows out;
  out.mass.resize(n);
  out.position.resize(n, d);
  out.star_position.resize(n, d);
  out.force.resize(n, d);
  out.scale = Eigen::VectorXd::Constant(n, scale);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int row = rows[static_cast<std::size_t>(i)];
    check_planet_row(system, index, row);
    const int body = row % system.n_bodies;
    const int star_row = row - body + system.star_index();
    out.system.push_back(index);
    out.row.push_back(row);
    out.body.push_back(body);
    out.mass[i] = system.mass[static_cast<std::size_t>(body)];
    out.position.row(i) = system.position.row(row);
    out.star_position.row(i) = system.position.row(star_row);
    out.force.row(i) = out.mass[i] * system.acceleration.row(row) / scale;
  }
  return out;
}

Eigen::MatrixXd newton_force_vectors(const simulator::System& system, const std::vector<int>& rows,
                                     double scale) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), system.dim);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int row = rows[i];
    check_planet_row(system, -1, row);
    const int body = row % system.n_bodies;
    const int first = row - body;  // the row of body 0 at this step
    Eigen::RowVectorXd force = Eigen::RowVectorXd::Zero(system.dim);
    for (int j = 0; j < system.n_bodies; ++j) {
      if (j == body) continue;
      const Eigen::RowVectorXd delta = system.position.row(first + j) - system.position.row(row);
      const double distance = delta.norm();
      force += kGravitationalConstant * system.mass[static_cast<std::size_t>(body)] *
               system.mass[static_cast<std::size_t>(j)] * delta / (distance * distance * distance);
    }
    out.row(static_cast<Eigen::Index>(i)) = force / scale;
  }
  return out;
}

ForceVectorRows ForceVectorRows::concat(const std::vector<ForceVectorRows>& parts) {
  return detail::concat_rows(parts);
}

void ForceVectorConfig::validate() const {
  auto fraction = [](const char* key, double value) {
    if (!(value > 0 && value < 1)) {
      throw Error(std::string("probe config: 'vector.") + key + "' must lie in (0, 1), got " +
                  std::to_string(value));
    }
  };
  fraction("label_fraction", label_fraction);
  fraction("validation_fraction", validation_fraction);
  if (label_fraction + validation_fraction >= 1) {
    throw Error("probe config: 'vector.label_fraction' + 'vector.validation_fraction' must be below 1");
  }
  if (systems < 0) throw Error("probe config: 'split.systems' must be >= 0 (0 = all)");
  if (test_rows_per_system < 0) throw Error("probe config: 'vector.test_rows_per_system' must be >= 0");
  if (observed_rows < 1) throw Error("probe config: 'split.observed_rows' must be >= 1");
}

Json ForceVectorConfig::to_json() const {
  return Json{{"systems", systems},
              {"label_fraction", label_fraction},
              {"validation_fraction", validation_fraction},
              {"test_rows_per_system", test_rows_per_system},
              {"observed_rows", observed_rows},
              {"seed", seed},
              {"normalisation", "per sequence: RMS of |F| over its train-label rows"}};
}

ForceVectorSplit split_force_vector_system(const simulator::System& system, std::int64_t index,
                                           const ForceVectorConfig& config) {
  if (system.n_bodies < 2) {
    throw Error("force-vector probe: system " + std::to_string(index) + " has no planets");
  }
  std::vector<int> rows = visible_planet_rows(system, config.observed_rows);
  const auto count = [&](double fraction) {
    return static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(rows.size())));
  };
  const std::size_t n_train = count(config.label_fraction), n_validation = count(config.validation_fraction);
  if (n_train + n_validation >= rows.size()) {
    throw Error("force-vector probe: system " + std::to_string(index) + " shows the model only " +
                std::to_string(rows.size()) + " planet rows, too few for train, validation and test rows");
  }
  // Each system's draw comes from its own stream, so it does not depend on the other systems.
  SplitMix64 rng(derive_seed(config.seed, 5000 + static_cast<std::uint64_t>(index)));
  shuffle(rows, rng);
  auto part = [&](std::size_t begin, std::size_t end) {
    std::vector<int> chosen(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                            rows.begin() + static_cast<std::ptrdiff_t>(end));
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  };
  std::size_t test_end = rows.size();
  if (config.test_rows_per_system > 0)
    test_end = std::min(test_end, n_train + n_validation + config.test_rows_per_system);
  const auto train_rows = part(0, n_train);
  const auto test_rows = part(n_train + n_validation, test_end);
  // The normaliser comes from the train labels alone: test vectors must not shape what the probes are scored
  // against.
  const double scale = force_scale(system, train_rows);
  ForceVectorSplit out;
  out.train = force_vector_rows(system, index, train_rows, scale);
  out.validation = force_vector_rows(system, index, part(n_train, n_train + n_validation), scale);
  out.test = force_vector_rows(system, index, test_rows, scale);
  out.test_newton = newton_force_vectors(system, test_rows, scale);
  return out;
}

ForceVectorDataset build_force_vector_dataset(const simulator::DatasetReader& reader,
                                              const ForceVectorConfig& config) {
  config.validate();
  const std::int64_t available = reader.num_systems();
  if (config.systems > available) {
    throw Error("probe config: 'split.systems' = " + std::to_string(config.systems) +
                " but the dataset holds " + std::to_string(available));
  }
  const std::int64_t n_systems = config.systems > 0 ? config.systems : available;
  ForceVectorDataset dataset;
  dataset.dim = reader.dim();
  std::vector<ForceVectorRows> train, validation, test;
  std::vector<Eigen::MatrixXd> newton;
  for (std::int64_t index = 0; index < n_systems; ++index) {
    ForceVectorSplit split = split_force_vector_system(reader.read_system(index), index, config);
    train.push_back(std::move(split.train));
    validation.push_back(std::move(split.validation));
    test.push_back(std::move(split.test));
    newton.push_back(std::move(split.test_newton));
    dataset.systems.push_back(index);
  }
  dataset.train = ForceVectorRows::concat(train);
  dataset.validation = ForceVectorRows::concat(validation);
  dataset.test = ForceVectorRows::concat(test);
  dataset.test_newton.resize(dataset.test.size(), dataset.dim);
  Eigen::Index at = 0;
  for (const auto& block : newton) {
    dataset.test_newton.middleRows(at, block.rows()) = block;
    at += block.rows();
  }
  return dataset;
}

namespace {

Eigen::MatrixXd vector_state(const ForceVectorRows& rows) {
  Eigen::MatrixXd state(rows.size(), rows.dim() + 1);
  state.leftCols(rows.dim()) = rows.position - rows.star_position;
  state.col(rows.dim()) = rows.mass.array().log().matrix();
  return state;
}

}  // namespace

Eigen::MatrixXd knn_force_vectors(const ForceVectorRows& train, const ForceVectorRows& rows, int k) {
  if (train.size() == 0) throw Error("knn: no training rows");
  if (k < 1) throw Error("knn: k must be >= 1, got " + std::to_string(k));
  const Eigen::MatrixXd state = vector_state(train);
  const Eigen::RowVectorXd mean = state.colwise().mean();
  Eigen::RowVectorXd scale =
      ((state.rowwise() - mean).array().square().colwise().sum() / static_cast<double>(state.rows())).sqrt();
  for (Eigen::Index j = 0; j < scale.size(); ++j) {
    if (!(scale[j] > 0)) scale[j] = 1;  // e.g. one planet's mass: no spread, left unscaled
  }
  const NearestNeighbours neighbours(((state.rowwise() - mean).array().rowwise() / scale.array()).matrix());
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> query =
      ((vector_state(rows).rowwise() - mean).array().rowwise() / scale.array()).matrix();
  Eigen::MatrixXd out(rows.size(), rows.dim());
  std::vector<std::int64_t> indices;
  std::vector<double> distances;
  for (Eigen::Index i = 0; i < query.rows(); ++i) {
    neighbours.query(query.row(i).data(), k, indices, distances);
    Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(rows.dim());
    for (auto j : indices) sum += train.force.row(j);
    out.row(i) = sum / static_cast<double>(indices.size());
  }
  return out;
}

double vector_r_squared(const Eigen::MatrixXd& truth, const Eigen::MatrixXd& predicted) {
  if (truth.rows() != predicted.rows() || truth.cols() != predicted.cols() || truth.rows() == 0) {
    throw Error("vector R^2: the true and predicted vectors differ in shape or are empty");
  }
  const Eigen::RowVectorXd mean = truth.colwise().mean();
  const double total = (truth.rowwise() - mean).squaredNorm();
  return 1 - (truth - predicted).squaredNorm() / total;
}

}  // namespace orbitlaw::probe
