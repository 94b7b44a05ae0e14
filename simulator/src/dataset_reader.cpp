// DatasetReader: validates a file's format and schema version, then loads systems one at a time by
// hyperslab reads of the flat arrays.
#include <cmath>
#include <filesystem>

#include "hdf5_io.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/simulator/dataset.hpp"
#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::simulator {

namespace {

// A merged dataset maps its shards' arrays; HDF5 reads a missing shard's rows as the fill value (zeros)
// without a word. Every shard must be where the merge found it, with the size and checksum it had then
// (datasets merged before checksums were recorded are checked by size only).
void check_shards(const std::string& path, const Json& attributes) {
  if (!attributes.contains("merged_from") || !attributes["merged_from"].is_array()) return;
  const auto folder = std::filesystem::absolute(path).parent_path();
  const Json& shards = attributes["merged_from"];
  const Json bytes = attributes.value("merged_shard_bytes", Json::array());
  const Json checksums = attributes.value("merged_shard_checksums", Json::array());
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const std::string name = shards[k].is_string() ? shards[k].get<std::string>() : std::string();
    const auto shard = folder / name;
    if (name.empty() || !std::filesystem::is_regular_file(shard))
      throw Error("merged dataset '" + path + "' maps shard '" + name + "', which is missing");
    if (k < bytes.size() && bytes[k].is_number_unsigned() &&
        std::filesystem::file_size(shard) != bytes[k].get<std::uint64_t>())
      throw Error("merged dataset '" + path + "': shard '" + name + "' has changed since the merge (" +
                  std::to_string(std::filesystem::file_size(shard)) + " bytes, merged at " +
                  std::to_string(bytes[k].get<std::uint64_t>()) + ")");
    if (k < checksums.size() && checksums[k].is_string() && file_checksum(shard.string()) != checksums[k])
      throw Error("merged dataset '" + path + "': shard '" + name +
                  "' has changed since the merge (same size, different checksum)");
  }
}

// An index entry must describe rows and bodies that exist; a corrupt one would otherwise read past the
// arrays (HDF5 error) or, worse, another system's rows.
void check_index_entry(const std::string& path, std::int64_t index, std::int64_t n_bodies,
                       std::int64_t n_steps, std::int64_t row_offset, std::int64_t body_offset,
                       std::int64_t num_rows, std::int64_t num_bodies) {
  std::string problem;
  if (n_bodies < 2) {
    problem = "n_bodies " + std::to_string(n_bodies) + " < 2";
  } else if (n_steps < 0) {
    problem = "n_steps " + std::to_string(n_steps) + " < 0";
  } else if (row_offset < 0 || row_offset > num_rows || n_bodies * n_steps > num_rows - row_offset) {
    problem = "rows " + std::to_string(row_offset) + " + " + std::to_string(n_bodies) + " x " +
              std::to_string(n_steps) + " past the " + std::to_string(num_rows) + " rows held";
  } else if (body_offset < 0 || body_offset > num_bodies || n_bodies > num_bodies - body_offset) {
    problem = "bodies " + std::to_string(body_offset) + " + " + std::to_string(n_bodies) + " past the " +
              std::to_string(num_bodies) + " bodies held";
  }
  if (!problem.empty()) {
    throw Error("'" + path + "': system " + std::to_string(index) + " has an invalid index entry (" +
                problem + "; corrupt file)");
  }
}

// NaN or inf in a trajectory would train and evaluate to NaN without a word; the first one is named.
void check_finite(const std::string& path, std::int64_t index, const char* what, const double* values,
                  std::size_t count, int per_row) {
  for (std::size_t k = 0; k < count; ++k) {
    if (!std::isfinite(values[k])) {
      throw Error("'" + path + "': system " + std::to_string(index) + " has a non-finite " + what + " (" +
                  (std::isnan(values[k]) ? "NaN" : "inf") + " at row " + std::to_string(k / per_row) +
                  " of the system)");
    }
  }
}

}  // namespace

struct DatasetReader::Impl {
  std::string path;
  h5::Handle file;
  Json attributes;
  std::int64_t systems = 0;
  int dim = 2;
  std::int64_t num_rows = 0, num_bodies = 0;
  double force_law_exponent = kNewtonExponent;
  h5::Handle n_bodies, n_steps, cadence, row_offset, body_offset, energy_error, angular_momentum_error;
  h5::Handle mass, elements, time, position, velocity, acceleration, star_acceleration;

  h5::Handle open(const std::string& name) const {
    return h5::dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT),
                       "'" + path + "' has no dataset " + name + " (corrupt or truncated file?)");
  }
};

DatasetReader::DatasetReader(const std::string& path) : impl_(new Impl) {
  h5::Lock lock(h5::library_mutex());
  h5::silence_errors();
  // The child opens the file as below (every dataset this reader reads) and reads its first system.
  h5::crash_guard(path, [&] {
    DatasetReader probe(path);
    if (probe.num_systems() > 0) probe.read_system(0);
  });
  auto& m = *impl_;
  m.path = path;
  try {
    if (!std::filesystem::exists(path)) throw Error("dataset '" + path + "' does not exist");
    if (H5Fis_hdf5(path.c_str()) <= 0) {
      throw Error("'" + path + "' is not an HDF5 file (corrupt or truncated?)");
    }
    m.file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                      "cannot open '" + path + "' (corrupt or truncated HDF5 file?)");
    const hid_t root = m.file.get();
    if (!h5::has_attribute(root, "format") || h5::read_string_attribute(root, "format") != kDatasetFormat) {
      throw Error("'" + path + "' is not an orbitlaw trajectory dataset (attribute format != '" +
                  std::string(kDatasetFormat) + "')");
    }
    const std::int64_t version =
        h5::has_attribute(root, "schema_version") ? h5::read_int_attribute(root, "schema_version") : -1;
    if (version != kDatasetSchemaVersion) {
      throw Error("'" + path + "' has schema_version " + std::to_string(version) +
                  "; this orbitlaw reads version " + std::to_string(kDatasetSchemaVersion));
    }
    m.attributes = h5::read_attributes(
        root, {"config", "provenance", "merged_from", "merged_shard_bytes", "merged_shard_checksums"});
    check_shards(path, m.attributes);
    m.dim = static_cast<int>(h5::read_int_attribute(root, "dim"));
    if (m.dim != 2 && m.dim != 3) throw Error("'" + path + "' has dim " + std::to_string(m.dim));
    if (m.attributes.contains("force_law_exponent")) {
      const Json& k = m.attributes["force_law_exponent"];
      if (!k.is_number()) throw Error("'" + path + "': attribute force_law_exponent is not a number");
      m.force_law_exponent = k.get<double>();
      require_force_exponent(m.force_law_exponent, "'" + path + "': attribute force_law_exponent");
    }
    m.n_bodies = m.open("/system/n_bodies");
    m.n_steps = m.open("/system/n_steps");
    m.cadence = m.open("/system/cadence");
    m.row_offset = m.open("/system/row_offset");
    m.body_offset = m.open("/system/body_offset");
    m.energy_error = m.open("/system/energy_error");
    m.angular_momentum_error = m.open("/system/angular_momentum_error");
    m.mass = m.open("/body/mass");
    m.elements = m.open("/body/elements");
    m.time = m.open("/row/time");
    m.position = m.open("/row/position");
    m.velocity = m.open("/row/velocity");
    m.acceleration = m.open("/row/acceleration");
    m.star_acceleration = m.open("/row/star_acceleration");
    m.systems = h5::rows(m.n_bodies.get());
    m.num_rows = h5::rows(m.position.get());
    m.num_bodies = h5::rows(m.mass.get());
    if (h5::has_attribute(root, "n_systems") && h5::read_int_attribute(root, "n_systems") != m.systems) {
      throw Error("'" + path + "' holds " + std::to_string(m.systems) + " systems but says n_systems = " +
                  std::to_string(h5::read_int_attribute(root, "n_systems")) + " (truncated?)");
    }
  } catch (...) {
    delete impl_;
    throw;
  }
}

DatasetReader::~DatasetReader() {
  h5::Lock lock(h5::library_mutex());
  delete impl_;
}

std::int64_t DatasetReader::num_systems() const { return impl_->systems; }
int DatasetReader::dim() const { return impl_->dim; }
const Json& DatasetReader::attributes() const { return impl_->attributes; }
double DatasetReader::force_law_exponent() const { return impl_->force_law_exponent; }

System DatasetReader::read_system(std::int64_t index) const {
  h5::Lock lock(h5::library_mutex());
  auto& m = *impl_;
  if (index < 0 || index >= m.systems) {
    throw Error("system " + std::to_string(index) + " is out of range: '" + m.path + "' holds " +
                std::to_string(m.systems) + " systems");
  }
  System s;
  s.dim = m.dim;
  std::int64_t row_offset = 0, body_offset = 0;
  std::int32_t n_bodies = 0, n_steps = 0;
  h5::read_rows(m.n_bodies.get(), H5T_NATIVE_INT32, index, 1, 1, &n_bodies, "/system/n_bodies");
  h5::read_rows(m.n_steps.get(), H5T_NATIVE_INT32, index, 1, 1, &n_steps, "/system/n_steps");
  h5::read_rows(m.row_offset.get(), H5T_NATIVE_INT64, index, 1, 1, &row_offset, "/system/row_offset");
  h5::read_rows(m.body_offset.get(), H5T_NATIVE_INT64, index, 1, 1, &body_offset, "/system/body_offset");
  h5::read_rows(m.cadence.get(), H5T_NATIVE_DOUBLE, index, 1, 1, &s.cadence, "/system/cadence");
  h5::read_rows(m.energy_error.get(), H5T_NATIVE_DOUBLE, index, 1, 1, &s.energy_error,
                "/system/energy_error");
  h5::read_rows(m.angular_momentum_error.get(), H5T_NATIVE_DOUBLE, index, 1, 1, &s.angular_momentum_error,
                "/system/angular_momentum_error");
  check_index_entry(m.path, index, n_bodies, n_steps, row_offset, body_offset, m.num_rows, m.num_bodies);
  if (!(s.cadence > 0) || !std::isfinite(s.cadence)) {
    throw Error("'" + m.path + "': system " + std::to_string(index) + " has cadence " +
                std::to_string(s.cadence) + " (must be positive and finite; corrupt file)");
  }
  s.n_bodies = n_bodies;
  s.n_steps = n_steps;
  const std::int64_t rows = static_cast<std::int64_t>(n_bodies) * n_steps;
  s.mass.resize(n_bodies);
  s.elements.resize(n_bodies);
  h5::read_rows(m.mass.get(), H5T_NATIVE_DOUBLE, body_offset, n_bodies, 1, s.mass.data(), "/body/mass");
  h5::read_rows(m.elements.get(), H5T_NATIVE_DOUBLE, body_offset, n_bodies, 6, s.elements.data(),
                "/body/elements");
  check_finite(m.path, index, "mass", s.mass.data(), s.mass.size(), 1);
  std::vector<double> buffer(static_cast<std::size_t>(rows) * m.dim);
  h5::read_rows(m.time.get(), H5T_NATIVE_DOUBLE, row_offset, rows, 1, buffer.data(), "/row/time");
  check_finite(m.path, index, "time", buffer.data(), static_cast<std::size_t>(rows), 1);
  s.time.resize(n_steps);
  for (int k = 0; k < n_steps; ++k) s.time[k] = buffer[static_cast<std::size_t>(k) * n_bodies];
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto load = [&](const h5::Handle& dset, const char* field) {
    h5::read_rows(dset.get(), H5T_NATIVE_DOUBLE, row_offset, rows, m.dim, buffer.data(),
                  std::string("/row/") + field);
    check_finite(m.path, index, field, buffer.data(), buffer.size(), m.dim);
    return Eigen::MatrixXd(Eigen::Map<const RowMajor>(buffer.data(), rows, m.dim));
  };
  s.position = load(m.position, "position");
  s.velocity = load(m.velocity, "velocity");
  s.acceleration = load(m.acceleration, "acceleration");
  s.star_acceleration = load(m.star_acceleration, "star_acceleration");
  return s;
}

DatasetReader::SystemTable DatasetReader::read_system_table() const {
  h5::Lock lock(h5::library_mutex());
  auto& m = *impl_;
  SystemTable t;
  const auto n = static_cast<std::size_t>(m.systems);
  t.n_bodies.resize(n);
  t.n_steps.resize(n);
  t.cadence.resize(n);
  t.energy_error.resize(n);
  t.angular_momentum_error.resize(n);
  t.row_offset.resize(n);
  t.body_offset.resize(n);
  static_assert(sizeof(int) == 4);
  h5::read_rows(m.n_bodies.get(), H5T_NATIVE_INT, 0, m.systems, 1, t.n_bodies.data(), "/system/n_bodies");
  h5::read_rows(m.n_steps.get(), H5T_NATIVE_INT, 0, m.systems, 1, t.n_steps.data(), "/system/n_steps");
  h5::read_rows(m.cadence.get(), H5T_NATIVE_DOUBLE, 0, m.systems, 1, t.cadence.data(), "/system/cadence");
  h5::read_rows(m.energy_error.get(), H5T_NATIVE_DOUBLE, 0, m.systems, 1, t.energy_error.data(),
                "/system/energy_error");
  h5::read_rows(m.angular_momentum_error.get(), H5T_NATIVE_DOUBLE, 0, m.systems, 1,
                t.angular_momentum_error.data(), "/system/angular_momentum_error");
  h5::read_rows(m.row_offset.get(), H5T_NATIVE_INT64, 0, m.systems, 1, t.row_offset.data(),
                "/system/row_offset");
  h5::read_rows(m.body_offset.get(), H5T_NATIVE_INT64, 0, m.systems, 1, t.body_offset.data(),
                "/system/body_offset");
  for (std::size_t k = 0; k < n; ++k) {
    check_index_entry(m.path, static_cast<std::int64_t>(k), t.n_bodies[k], t.n_steps[k], t.row_offset[k],
                      t.body_offset[k], m.num_rows, m.num_bodies);
    if (!(t.cadence[k] > 0) || !std::isfinite(t.cadence[k])) {
      throw Error("'" + m.path + "': system " + std::to_string(k) + " has cadence " +
                  std::to_string(t.cadence[k]) + " (must be positive and finite; corrupt file)");
    }
  }
  return t;
}

std::int64_t DatasetReader::num_rows() const { return impl_->num_rows; }

const std::string& DatasetReader::path() const { return impl_->path; }

std::vector<double> DatasetReader::read_row_block(const std::string& field, std::int64_t first,
                                                  std::int64_t count) const {
  h5::Lock lock(h5::library_mutex());
  auto& m = *impl_;
  const h5::Handle* dset = nullptr;
  int cols = m.dim;
  if (field == "time") {
    dset = &m.time;
    cols = 1;
  } else if (field == "position") {
    dset = &m.position;
  } else if (field == "velocity") {
    dset = &m.velocity;
  } else if (field == "acceleration") {
    dset = &m.acceleration;
  } else if (field == "star_acceleration") {
    dset = &m.star_acceleration;
  } else {
    throw Error("unknown row field '" + field + "'");
  }
  if (first < 0 || count < 0 || first + count > num_rows()) throw Error("rows out of range in /row/" + field);
  std::vector<double> out(static_cast<std::size_t>(count) * cols);
  h5::read_rows(dset->get(), H5T_NATIVE_DOUBLE, first, count, cols, out.data(), "/row/" + field);
  return out;
}

}  // namespace orbitlaw::simulator
