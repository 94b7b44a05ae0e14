#include "hdf5_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "orbitlaw/common/crash_guard.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::simulator::h5 {

std::recursive_mutex& library_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

void silence_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {
Handle wrap(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw Error(what);
  return Handle(id, closer);
}
}  // namespace

Handle file(hid_t id, const std::string& what) { return wrap(id, H5Fclose, what); }
Handle group(hid_t id, const std::string& what) { return wrap(id, H5Gclose, what); }
Handle dataset(hid_t id, const std::string& what) { return wrap(id, H5Dclose, what); }
Handle dataspace(hid_t id, const std::string& what) { return wrap(id, H5Sclose, what); }
Handle plist(hid_t id, const std::string& what) { return wrap(id, H5Pclose, what); }
Handle datatype(hid_t id, const std::string& what) { return wrap(id, H5Tclose, what); }
Handle attribute(hid_t id, const std::string& what) { return wrap(id, H5Aclose, what); }

void check(herr_t status, const std::string& what) {
  if (status < 0) throw Error(what);
}

void check_written(const std::function<herr_t()>& call, const std::string& what) {
  errno = 0;
  if (call() >= 0) return;
  const int error = errno;
  throw Error(what + ": " + (error != 0 ? std::strerror(error) : "libhdf5 could not write it"));
}

void crash_guard(const std::string& path, const std::function<void()>& probe) {
  orbitlaw::crash_guard(path, "libhdf5", probe, [] {
    // The parent's thread held the library lock at the fork; in the child, where that thread does not
    // exist, it could never be taken again.
    new (&library_mutex()) std::recursive_mutex;
  });
}

namespace {

Handle utf8_string_type() {
  auto type = datatype(H5Tcopy(H5T_C_S1), "cannot create a string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "cannot size a string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "cannot set a string type's character set");
  return type;
}

void write_scalar(hid_t object, const std::string& name, hid_t type, const void* value) {
  auto space = dataspace(H5Screate(H5S_SCALAR), "cannot create a scalar dataspace");
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  auto attr = attribute(H5Acreate2(object, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        "cannot create attribute '" + name + "'");
  check(H5Awrite(attr.get(), type, value), "cannot write attribute '" + name + "'");
}

}  // namespace

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
  auto type = utf8_string_type();
  const char* text = value.c_str();
  write_scalar(object, name, type.get(), &text);
}
void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
  write_scalar(object, name, H5T_NATIVE_INT64, &value);
}
void write_attribute(hid_t object, const std::string& name, std::uint64_t value) {
  write_scalar(object, name, H5T_NATIVE_UINT64, &value);
}
void write_attribute(hid_t object, const std::string& name, double value) {
  write_scalar(object, name, H5T_NATIVE_DOUBLE, &value);
}

void write_attributes(hid_t object, const Json& attributes) {
  for (const auto& [key, value] : attributes.items()) {
    if (value.is_string()) {
      write_attribute(object, key, value.get<std::string>());
    } else if (value.is_number_unsigned()) {
      write_attribute(object, key, value.get<std::uint64_t>());
    } else if (value.is_number_integer()) {
      write_attribute(object, key, value.get<std::int64_t>());
    } else if (value.is_number_float()) {
      write_attribute(object, key, value.get<double>());
    } else if (value.is_boolean()) {
      write_attribute(object, key, static_cast<std::int64_t>(value.get<bool>()));
    } else {
      write_attribute(object, key, value.dump());
    }
  }
}

bool has_attribute(hid_t object, const std::string& name) { return H5Aexists(object, name.c_str()) > 0; }

std::string read_string_attribute(hid_t object, const std::string& name) {
  auto attr = attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), "missing attribute '" + name + "'");
  auto file_type = datatype(H5Aget_type(attr.get()), "cannot read the type of attribute '" + name + "'");
  if (H5Tget_class(file_type.get()) != H5T_STRING) throw Error("attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(file_type.get()) > 0) {
    auto type = utf8_string_type();
    char* text = nullptr;
    check(H5Aread(attr.get(), type.get(), &text), "cannot read attribute '" + name + "'");
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(file_type.get());
  std::string value(size, '\0');
  check(H5Aread(attr.get(), file_type.get(), value.data()), "cannot read attribute '" + name + "'");
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

std::int64_t read_int_attribute(hid_t object, const std::string& name) {
  auto attr = attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), "missing attribute '" + name + "'");
  auto file_type = datatype(H5Aget_type(attr.get()), "cannot read the type of attribute '" + name + "'");
  if (H5Tget_class(file_type.get()) != H5T_INTEGER) throw Error("attribute '" + name + "' is not an integer");
  std::int64_t value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), "cannot read attribute '" + name + "'");
  return value;
}

Json read_attributes(hid_t object, const std::vector<std::string>& json_keys) {
  Json out = Json::object();
  H5O_info_t info;
  check(H5Oget_info2(object, &info, H5O_INFO_NUM_ATTRS), "cannot list attributes");
  for (hsize_t k = 0; k < info.num_attrs; ++k) {
    auto attr =
        attribute(H5Aopen_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, k, H5P_DEFAULT, H5P_DEFAULT),
                  "cannot open an attribute");
    const ssize_t length = H5Aget_name(attr.get(), 0, nullptr);
    std::string name(static_cast<std::size_t>(length), '\0');
    H5Aget_name(attr.get(), name.size() + 1, name.data());
    auto type = datatype(H5Aget_type(attr.get()), "cannot read the type of attribute '" + name + "'");
    switch (H5Tget_class(type.get())) {
      case H5T_STRING: {
        std::string text = read_string_attribute(object, name);
        bool parse = false;
        for (const auto& key : json_keys) parse = parse || key == name;
        if (parse) {
          try {
            out[name] = Json::parse(text);
          } catch (const std::exception&) {
            throw Error("attribute '" + name + "' is not valid JSON");
          }
        } else {
          out[name] = text;
        }
        break;
      }
      case H5T_INTEGER:
        if (H5Tget_sign(type.get()) == H5T_SGN_NONE) {
          std::uint64_t value = 0;
          check(H5Aread(attr.get(), H5T_NATIVE_UINT64, &value), "cannot read attribute '" + name + "'");
          out[name] = value;
        } else {
          std::int64_t value = 0;
          check(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), "cannot read attribute '" + name + "'");
          out[name] = value;
        }
        break;
      case H5T_FLOAT: {
        double value = 0;
        check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), "cannot read attribute '" + name + "'");
        out[name] = value;
        break;
      }
      default:
        break;  // no other types are written by this format
    }
  }
  return out;
}

std::string file_name(hid_t object) {
  const ssize_t length = H5Fget_name(object, nullptr, 0);
  if (length <= 0) return "(unnamed file)";
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  H5Fget_name(object, name.data(), name.size());
  name.resize(static_cast<std::size_t>(length));
  return name;
}

std::int64_t rows(hid_t dset) {
  auto space = dataspace(H5Dget_space(dset), "cannot read a dataspace");
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 1) throw Error("unexpected dataset shape");
  return static_cast<std::int64_t>(dims[0]);
}

namespace {

// A corrupt file can declare any datatype and shape, and libhdf5 converts what it is told: a 65,540-byte
// "integer" crashed it inside H5Dread (tests/fuzz/findings/hdf5-dtype-size). So the stored type must be a
// number of the kind read (integer or floating point) and of a size this format writes (at most 8 bytes),
// and the rank the one the reader expects, before any data is converted.
void check_stored_layout(hid_t dset, hid_t memory_type, int rank, int cols, const std::string& what) {
  auto type = datatype(H5Dget_type(dset), "cannot read the datatype of " + what);
  const H5T_class_t stored = H5Tget_class(type.get());
  const std::size_t size = H5Tget_size(type.get());
  if (stored != H5Tget_class(memory_type) || size == 0 || size > 8)
    throw Error(what + " is stored as a " + std::to_string(size) + "-byte " +
                (stored == H5T_INTEGER ? "integer"
                 : stored == H5T_FLOAT ? "float"
                                       : "non-number") +
                ", not the format's " + (H5Tget_class(memory_type) == H5T_INTEGER ? "integer" : "float") +
                " (corrupt file?)");
  if (rank != (cols > 1 ? 2 : 1))
    throw Error(what + " has " + std::to_string(rank) + " dimensions, expected " + (cols > 1 ? "2" : "1") +
                " (corrupt file?)");
}

}  // namespace

void read_rows(hid_t dset, hid_t memory_type, std::int64_t start, std::int64_t count, int cols, void* out,
               const std::string& what) {
  if (count == 0) return;
  auto file_space = dataspace(H5Dget_space(dset), "cannot read the dataspace of " + what);
  const int rank = H5Sget_simple_extent_ndims(file_space.get());
  check_stored_layout(dset, memory_type, rank, cols, what);
  hsize_t offset[2] = {static_cast<hsize_t>(start), 0};
  hsize_t extent[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(cols)};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset, nullptr, extent, nullptr),
        "rows out of range in " + what);
  auto memory_space = dataspace(H5Screate_simple(rank, extent, nullptr), "cannot create a dataspace");
  check(H5Dread(dset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out),
        "cannot read " + what + " (corrupt or truncated file?)");
}

Handle create_group(hid_t parent, const std::string& name) {
  auto gcpl = plist(H5Pcreate(H5P_GROUP_CREATE), "cannot create a group property list");
  check(H5Pset_obj_track_times(gcpl.get(), false), "cannot switch off timestamps");
  return group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
               "cannot create group '" + name + "'");
}

}  // namespace orbitlaw::simulator::h5
