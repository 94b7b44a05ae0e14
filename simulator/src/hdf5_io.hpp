#pragma once
// Thin RAII and helper layer over the HDF5 C API, shared by the dataset writer, reader and merger. The C API
// is used (not H5Cpp) because it exposes what the format needs: switching off object timestamps (so equal
// data gives equal bytes) and virtual datasets.
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/library_teardown.hpp"

namespace orbitlaw::simulator::h5 {

// The system HDF5 library is built without thread safety, so every HDF5 call in orbitlaw_simulator holds this
// lock: readers and writers in different threads then work (serialised) instead of corrupting state.
std::recursive_mutex& library_mutex();
using Lock = std::lock_guard<std::recursive_mutex>;

// Turns off HDF5's printing of its error stack; our errors say what failed in one line instead.
void silence_errors();

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_ && closer_(id_) < 0) skip_library_teardown_at_exit();  // a full disk
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Each wraps an id that must be valid, throwing orbitlaw::Error("<what>") otherwise.
Handle file(hid_t id, const std::string& what);
Handle group(hid_t id, const std::string& what);
Handle dataset(hid_t id, const std::string& what);
Handle dataspace(hid_t id, const std::string& what);
Handle plist(hid_t id, const std::string& what);
Handle datatype(hid_t id, const std::string& what);
Handle attribute(hid_t id, const std::string& what);
void check(herr_t status, const std::string& what);
// Runs a call that writes to a file (H5Dwrite, H5Fflush, ...) and throws Error("<what>: <reason>") when it
// fails, the reason read from errno, which libhdf5 leaves as the failed system call set it (a full disk).
void check_written(const std::function<herr_t()>& call, const std::string& what);

// Root (or any object's) attributes.
void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_attribute(hid_t object, const std::string& name, std::uint64_t value);
void write_attribute(hid_t object, const std::string& name, double value);
// Each key of a JSON object as an attribute: strings and numbers as themselves, booleans as 0/1 integers,
// anything else as its JSON text.
void write_attributes(hid_t object, const Json& attributes);
bool has_attribute(hid_t object, const std::string& name);
std::string read_string_attribute(hid_t object, const std::string& name);
std::int64_t read_int_attribute(hid_t object, const std::string& name);
// All attributes of an object as JSON: strings (JSON-valued ones parsed when `json_keys` names them),
// integers and floats.
Json read_attributes(hid_t object, const std::vector<std::string>& json_keys);

// orbitlaw::crash_guard (common/crash_guard.hpp) for libhdf5: `probe` opens, in a forked child, what a
// reader is about to open. Call with the library lock held.
void crash_guard(const std::string& path, const std::function<void()>& probe);

// The name of the file an object is in.
std::string file_name(hid_t object);

// Number of rows (first dimension) of a dataset.
std::int64_t rows(hid_t dset);
// Reads rows [start, start + count) of a [N] or [N, cols] dataset into `out` (row-major).
void read_rows(hid_t dset, hid_t memory_type, std::int64_t start, std::int64_t count, int cols, void* out,
               const std::string& what);

// Creates a group whose object header carries no timestamps.
Handle create_group(hid_t parent, const std::string& name);

}  // namespace orbitlaw::simulator::h5
