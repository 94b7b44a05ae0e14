#include "orbitlaw/probe/predictions.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "hdf5_writer.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/crash_guard.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::probe {

namespace {

std::string read_string_attribute(hid_t where, const std::string& name, const std::string& path) {
  Handle attr(H5Aopen(where, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) throw Error(path + ": not an orbitlaw predictions file (attribute '" + name + "' missing)");
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw Error(path + ": attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memtype.get(), H5T_VARIABLE);
    H5Tset_cset(memtype.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    check(H5Aread(attr.get(), memtype.get(), &text), "reading attribute " + name);
    std::string value = text ? text : "";
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');
  check(H5Aread(attr.get(), type.get(), value.data()), "reading attribute " + name);
  return value.substr(0, value.find('\0'));
}

long long read_int_attribute(hid_t where, const std::string& name, const std::string& path) {
  Handle attr(H5Aopen(where, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) throw Error(path + ": not an orbitlaw predictions file (attribute '" + name + "' missing)");
  long long value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_LLONG, &value), "reading attribute " + name);
  return value;
}

// Dataset `name` as doubles; returns its shape in `rows`/`cols` (cols = 0 for 1-D).
std::vector<double> read_doubles(hid_t where, const std::string& name, const std::string& path, hsize_t& rows,
                                 hsize_t& cols) {
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) throw Error(path + ": dataset '" + name + "' is missing");
  Handle space(H5Dget_space(set.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1 || rank > 2) throw Error(path + ": dataset '" + name + "' has rank " + std::to_string(rank));
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  rows = dims[0];
  cols = rank == 2 ? dims[1] : 0;
  std::vector<double> data(rows * std::max<hsize_t>(1, cols));
  if (!data.empty()) {
    check(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
          "reading " + name);
  }
  return data;
}

Eigen::VectorXd read_vector(hid_t where, const std::string& name, const std::string& path, hsize_t expected) {
  hsize_t rows = 0, cols = 0;
  auto data = read_doubles(where, name, path, rows, cols);
  if (cols != 0 || rows != expected) {
    throw Error(path + ": dataset '" + name + "' has " + std::to_string(rows) + " rows, expected " +
                std::to_string(expected));
  }
  return Eigen::Map<Eigen::VectorXd>(data.data(), static_cast<Eigen::Index>(rows));
}

Eigen::MatrixXd read_matrix(hid_t where, const std::string& name, const std::string& path, hsize_t expected) {
  hsize_t rows = 0, cols = 0;
  auto data = read_doubles(where, name, path, rows, cols);
  if (cols == 0 || rows != expected) throw Error(path + ": dataset '" + name + "' has the wrong shape");
  return Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      data.data(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
}

std::vector<std::int64_t> read_int64(hid_t where, const std::string& name, const std::string& path,
                                     hsize_t expected) {
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) throw Error(path + ": dataset '" + name + "' is missing");
  Handle space(H5Dget_space(set.get()), H5Sclose);
  hsize_t dims[1] = {0};
  if (H5Sget_simple_extent_ndims(space.get()) != 1) throw Error(path + ": dataset '" + name + "' is not 1-D");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (dims[0] != expected) throw Error(path + ": dataset '" + name + "' has the wrong length");
  std::vector<std::int64_t> data(dims[0]);
  if (!data.empty()) {
    check(H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
          "reading " + name);
  }
  return data;
}

// The root attributes both layouts share: what made the file and in which order its probes were written.
void write_run_attributes(hid_t root, const char* format, const std::string& model, const Json& provenance,
                          const Json& config, const Json& details, const std::vector<std::string>& order) {
  write_string_attribute(root, "format", format);
  write_int_attribute(root, "schema_version", kPredictionsSchemaVersion);
  write_string_attribute(root, "model", model);
  write_string_attribute(root, "provenance", provenance.dump());
  write_string_attribute(root, "config", config.dump());
  write_string_attribute(root, "probes", details.dump());
  write_string_attribute(root, "probe_order", Json(order).dump());
}

template <class Probes>
std::vector<std::string> names_of(const Probes& probes) {
  std::vector<std::string> names;
  for (const auto& p : probes) names.push_back(p.first);
  return names;
}

}  // namespace

const Eigen::VectorXd& Predictions::prediction(const std::string& probe) const {
  for (const auto& [name, values] : probes) {
    if (name == probe) return values;
  }
  std::string known;
  for (const auto& [name, values] : probes) known += (known.empty() ? "" : ", ") + name;
  throw Error("predictions: no probe named '" + probe + "' (present: " + (known.empty() ? "none" : known) +
              ")");
}

double Predictions::observable_fraction() const {
  if (rows.size() == 0) return std::numeric_limits<double>::quiet_NaN();
  std::int64_t count = 0;
  for (Eigen::Index i = 0; i < rows.size(); ++i) count += observable(i);
  return static_cast<double>(count) / static_cast<double>(rows.size());
}

bool Predictions::has(const std::string& probe) const {
  return std::any_of(probes.begin(), probes.end(), [&](const auto& p) { return p.first == probe; });
}

std::vector<std::string> Predictions::probe_names() const { return names_of(probes); }

void write_predictions(const std::string& path, const Predictions& predictions) {
  const auto& rows = predictions.rows;
  const auto n = rows.size();
  if (predictions.nearest_train_distance.size() != n) {
    throw Error("predictions: nearest_train_distance has the wrong length");
  }
  if (rows.deviation.size() != n) throw Error("predictions: deviation has the wrong length");
  if (!(predictions.observable_bin_width >= 0) || !std::isfinite(predictions.observable_bin_width))
    throw Error("predictions: observable_bin_width must be a finite number >= 0");
  for (const auto& [name, values] : predictions.probes) {
    if (values.size() != n) throw Error("predictions: probe '" + name + "' has the wrong length");
  }
  write_file_atomically(path, [&](hid_t root) {
    write_run_attributes(root, kPredictionsFormat, predictions.model, predictions.provenance,
                         predictions.config, predictions.probe_details, predictions.probe_names());
    write_vector(root, "r", rows.r);
    write_vector(root, "m1", rows.m1);
    write_vector(root, "m2", rows.m2);
    write_vector(root, "force_true", rows.force);
    write_vector(root, "nearest_train_distance", predictions.nearest_train_distance);
    write_vector(root, "deviation", rows.deviation);
    write_string_attribute(root, "observable_bin_width", Json(predictions.observable_bin_width).dump());
    write_string_attribute(root, "target", to_string(predictions.target));
    write_matrix(root, "position", rows.position);
    write_matrix(root, "velocity", rows.velocity);
    write_matrix(root, "star_position", rows.star_position);
    write_matrix(root, "star_velocity", rows.star_velocity);
    write_int64(root, "system", rows.system);
    write_int64(root, "row", std::vector<std::int64_t>(rows.row.begin(), rows.row.end()));
    Handle group(H5Gcreate2(root, "predictions", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.ok()) throw Error("predictions file: cannot create group 'predictions'");
    for (const auto& [name, values] : predictions.probes) write_vector(group.get(), name, values);
  });
}

void write_vector_predictions(const std::string& path, const VectorPredictions& predictions) {
  const auto& rows = predictions.rows;
  for (const auto& [name, values] : predictions.probes) {
    if (values.rows() != rows.size() || values.cols() != rows.dim())
      throw Error("predictions: probe '" + name + "' has the wrong shape");
  }
  write_file_atomically(path, [&](hid_t root) {
    write_run_attributes(root, kVectorPredictionsFormat, predictions.model, predictions.provenance,
                         predictions.config, predictions.probe_details, names_of(predictions.probes));
    write_string_attribute(root, "task", "vector");
    write_matrix(root, "position", rows.position);
    write_matrix(root, "star_position", rows.star_position);
    write_matrix(root, "force_true_vec", rows.force);
    write_vector(root, "scale", rows.scale);
    write_vector(root, "mass", rows.mass);
    write_int64(root, "body", std::vector<std::int64_t>(rows.body.begin(), rows.body.end()));
    write_int64(root, "system", rows.system);
    write_int64(root, "row", std::vector<std::int64_t>(rows.row.begin(), rows.row.end()));
    Handle group(H5Gcreate2(root, "predictions_vec", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.ok()) throw Error("predictions file: cannot create group 'predictions_vec'");
    for (const auto& [name, values] : predictions.probes) write_matrix(group.get(), name, values);
  });
}

namespace {

Predictions read_predictions_file(const std::string& path) {
  QuietHdf5 quiet;
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error(path + ": not a readable HDF5 file");
  const hid_t root = file.get();
  const std::string format = read_string_attribute(root, "format", path);
  if (format == kVectorPredictionsFormat) {
    throw Error(path +
                ": holds force-vector predictions; only force-magnitude predictions have laws to compare");
  }
  if (format != kPredictionsFormat) {
    throw Error(path + ": not an orbitlaw predictions file (format attribute differs)");
  }
  const auto version = read_int_attribute(root, "schema_version", path);
  if (version != kPredictionsSchemaVersion && version != 2) {
    throw Error(path + ": predictions schema version " + std::to_string(version) +
                ", this build reads 2 and " + std::to_string(kPredictionsSchemaVersion));
  }
  Predictions out;
  out.model = read_string_attribute(root, "model", path);
  try {
    out.provenance = Json::parse(read_string_attribute(root, "provenance", path));
    out.config = Json::parse(read_string_attribute(root, "config", path));
    out.probe_details = Json::parse(read_string_attribute(root, "probes", path));
  } catch (const Json::parse_error&) {
    throw Error(path + ": a JSON attribute is corrupt");
  }
  hsize_t n = 0, cols = 0;
  Eigen::VectorXd force;
  {
    auto data = read_doubles(root, "force_true", path, n, cols);
    if (cols != 0) throw Error(path + ": dataset 'force_true' is not 1-D");
    force = Eigen::Map<Eigen::VectorXd>(data.data(), static_cast<Eigen::Index>(n));
  }
  auto& rows = out.rows;
  rows.force = force;
  rows.r = read_vector(root, "r", path, n);
  rows.m1 = read_vector(root, "m1", path, n);
  rows.m2 = read_vector(root, "m2", path, n);
  out.nearest_train_distance = read_vector(root, "nearest_train_distance", path, n);
  rows.deviation = read_vector(root, "deviation", path, n);
  try {
    out.observable_bin_width =
        Json::parse(read_string_attribute(root, "observable_bin_width", path)).get<double>();
  } catch (const Json::exception&) {
    throw Error(path + ": attribute 'observable_bin_width' is corrupt");
  }
  if (version >= 3) {
    const std::string target = read_string_attribute(root, "target", path);
    if (target != "force" && target != "acceleration")
      throw Error(path + ": attribute 'target' is '" + target + "', neither force nor acceleration");
    out.target = parse_probe_target(target);
  }
  rows.position = read_matrix(root, "position", path, n);
  rows.velocity = read_matrix(root, "velocity", path, n);
  rows.star_position = read_matrix(root, "star_position", path, n);
  rows.star_velocity = read_matrix(root, "star_velocity", path, n);
  rows.system = read_int64(root, "system", path, n);
  for (auto v : read_int64(root, "row", path, n)) rows.row.push_back(static_cast<int>(v));
  Json order;
  try {
    order = Json::parse(read_string_attribute(root, "probe_order", path));
  } catch (const Json::parse_error&) {
    throw Error(path + ": attribute 'probe_order' is corrupt");
  }
  Handle group(H5Gopen2(root, "predictions", H5P_DEFAULT), H5Gclose);
  if (!group.ok()) throw Error(path + ": group 'predictions' is missing");
  for (const auto& name : order) {
    out.probes.emplace_back(name.get<std::string>(),
                            read_vector(group.get(), name.get<std::string>(), path, n));
  }
  return out;
}

}  // namespace

Predictions read_predictions(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error("predictions file " + path + " does not exist");
  // A damaged file can kill the process inside libhdf5; the child reads it first (common/crash_guard.hpp).
  crash_guard(path, "libhdf5", [&] { read_predictions_file(path); });
  return read_predictions_file(path);
}

}  // namespace orbitlaw::probe
