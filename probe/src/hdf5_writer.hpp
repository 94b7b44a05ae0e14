#pragma once
// The HDF5 writing helpers of the probe library's output files (the probe's predictions and eval's behaviour
// predictions): RAII handles, plain datasets and attributes that h5py reads as arrays and str, and atomic
// creation (temporary file, renamed when complete). Errors become one-line orbitlaw::Error messages.
#include <hdf5.h>

#include <Eigen/Core>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/library_teardown.hpp"

namespace orbitlaw::probe {
namespace {

// Owns an HDF5 identifier and closes it with the matching function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    // A close that failed (a full disk) would crash libhdf5's teardown at exit.
    if (id_ >= 0 && close_(id_) < 0) skip_library_teardown_at_exit();
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// Silences HDF5's own error stack printing while alive; errors become orbitlaw::Error messages instead.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

inline void check(herr_t status, const std::string& what) {
  if (status < 0) throw Error("predictions file: " + what + " failed");
}

inline void write_array(hid_t where, const std::string& name, const double* data, hsize_t rows,
                        hsize_t cols) {
  hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(cols ? 2 : 1, dims, nullptr), H5Sclose);
  Handle set(
      H5Dcreate2(where, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!set.ok()) throw Error("predictions file: cannot create dataset '" + name + "'");
  if (rows > 0)
    check(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing " + name);
}

inline void write_vector(hid_t where, const std::string& name, const Eigen::VectorXd& v) {
  write_array(where, name, v.data(), static_cast<hsize_t>(v.size()), 0);
}

inline void write_matrix(hid_t where, const std::string& name, const Eigen::MatrixXd& m) {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = m;
  write_array(where, name, row_major.data(), static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols()));
}

inline void write_int64(hid_t where, const std::string& name, const std::vector<std::int64_t>& v) {
  hsize_t dims[1] = {v.size()};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle set(
      H5Dcreate2(where, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!set.ok()) throw Error("predictions file: cannot create dataset '" + name + "'");
  if (!v.empty()) check(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), name);
}

// Variable-length UTF-8 string attribute (h5py reads it as str).
inline void write_string_attribute(hid_t where, const std::string& name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(where, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) throw Error("predictions file: cannot create attribute '" + name + "'");
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), "writing attribute " + name);
}

inline void write_int_attribute(hid_t where, const std::string& name, long long value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(where, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  if (!attr.ok()) throw Error("predictions file: cannot create attribute '" + name + "'");
  check(H5Awrite(attr.get(), H5T_NATIVE_LLONG, &value), "writing attribute " + name);
}

// Creates `path` atomically: `body(root)` writes the contents into a temporary file renamed when complete.
template <class Body>
void write_file_atomically(const std::string& path, Body body) {
  QuietHdf5 quiet;
  AtomicOutput output(path);
  {
    Handle file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file.ok()) throw Error("cannot create predictions file " + path);
    body(file.get());
    errno = 0;
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) {
      // libhdf5 leaves errno as the failed write set it.
      throw Error("cannot write predictions file '" + path +
                  "': " + (errno != 0 ? std::strerror(errno) : "libhdf5 could not write it"));
    }
  }
  output.commit();
}

}  // namespace
}  // namespace orbitlaw::probe
