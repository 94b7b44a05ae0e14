#include "dataset_writer.hpp"

#include <vector>

#include "hdf5_io.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::simulator {

namespace {

constexpr int kCompressionLevel = 4;   // deflate; with shuffle, a good size/speed balance for doubles
constexpr hsize_t kRowChunk = 16384;   // rows per chunk in /row (about 256 KiB for 2D doubles)
constexpr hsize_t kSmallChunk = 4096;  // entries per chunk in /system and /body

// One extendible column: values are buffered and written in large appends.
template <class T>
class Column {
 public:
  Column(hid_t parent, const std::string& name, hid_t memory_type, hid_t file_type, int cols, hsize_t chunk)
      : memory_type_(memory_type), cols_(cols), name_(name), file_(h5::file_name(parent)) {
    const int rank = cols > 1 ? 2 : 1;
    hsize_t dims[2] = {0, static_cast<hsize_t>(cols)};
    hsize_t max_dims[2] = {H5S_UNLIMITED, static_cast<hsize_t>(cols)};
    hsize_t chunk_dims[2] = {chunk, static_cast<hsize_t>(cols)};
    auto space = h5::dataspace(H5Screate_simple(rank, dims, max_dims), "cannot create dataspace for " + name);
    auto dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "cannot create property list");
    h5::check(H5Pset_chunk(dcpl.get(), rank, chunk_dims), "cannot chunk " + name);
    h5::check(H5Pset_shuffle(dcpl.get()), "cannot set shuffle");
    h5::check(H5Pset_deflate(dcpl.get(), kCompressionLevel), "cannot set deflate");
    h5::check(H5Pset_obj_track_times(dcpl.get(), false), "cannot switch off timestamps");
    dset_ = h5::dataset(
        H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
        "cannot create dataset " + name);
    flush_at_ = chunk * static_cast<hsize_t>(cols) * 4;
  }

  void push(T value) { buffer_.push_back(value); }
  template <class It>
  void push(It first, It last) {
    buffer_.insert(buffer_.end(), first, last);
  }
  void maybe_flush() {
    if (buffer_.size() >= flush_at_) flush();
  }
  void flush() {
    if (buffer_.empty()) return;
    const hsize_t added = buffer_.size() / static_cast<hsize_t>(cols_);
    const int rank = cols_ > 1 ? 2 : 1;
    hsize_t new_dims[2] = {written_ + added, static_cast<hsize_t>(cols_)};
    h5::check(H5Dset_extent(dset_.get(), new_dims), "cannot extend " + name_);
    auto file_space = h5::dataspace(H5Dget_space(dset_.get()), "cannot get dataspace of " + name_);
    hsize_t offset[2] = {written_, 0};
    hsize_t count[2] = {added, static_cast<hsize_t>(cols_)};
    h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset, nullptr, count, nullptr),
              "cannot select in " + name_);
    auto memory_space = h5::dataspace(H5Screate_simple(rank, count, nullptr), "cannot create dataspace");
    h5::check_written(
        [&] {
          return H5Dwrite(dset_.get(), memory_type_, memory_space.get(), file_space.get(), H5P_DEFAULT,
                          buffer_.data());
        },
        "cannot write '" + file_ + "' (" + name_ + ")");
    written_ += added;
    buffer_.clear();
  }
  void close() {
    flush();
    dset_.reset();
  }

 private:
  h5::Handle dset_;
  hid_t memory_type_;
  int cols_;
  std::string name_;
  std::string file_;  // the file's name, for errors
  std::vector<T> buffer_;
  hsize_t written_ = 0;
  hsize_t flush_at_ = 0;
};

}  // namespace

struct DatasetFileWriter::Impl {
  std::string path;
  int dim;
  h5::Handle file, system_group, body_group, row_group;
  std::unique_ptr<Column<std::int32_t>> n_bodies, n_steps, attempts;
  std::unique_ptr<Column<std::int64_t>> row_offset, body_offset, index;
  std::unique_ptr<Column<double>> cadence, energy_error, angular_momentum_error;
  std::unique_ptr<Column<double>> mass, elements;
  std::unique_ptr<Column<double>> time, position, velocity, acceleration, star_acceleration;
  std::int64_t systems = 0, rows = 0, bodies = 0;
  std::vector<double> scratch;
};

DatasetFileWriter::DatasetFileWriter(const std::string& path, int dim) : impl_(std::make_unique<Impl>()) {
  h5::Lock lock(h5::library_mutex());
  h5::silence_errors();
  auto& m = *impl_;
  m.path = path;
  m.dim = dim;
  auto fcpl = h5::plist(H5Pcreate(H5P_FILE_CREATE), "cannot create file property list");
  h5::check(H5Pset_obj_track_times(fcpl.get(), false), "cannot switch off timestamps");
  m.file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT),
                    "cannot create '" + path + "'");
  m.system_group = h5::create_group(m.file.get(), "system");
  m.body_group = h5::create_group(m.file.get(), "body");
  m.row_group = h5::create_group(m.file.get(), "row");
  const hid_t sg = m.system_group.get(), bg = m.body_group.get(), rg = m.row_group.get();
  auto i32 = [&](hid_t g, const char* name) {
    return std::make_unique<Column<std::int32_t>>(g, name, H5T_NATIVE_INT32, H5T_STD_I32LE, 1, kSmallChunk);
  };
  auto i64 = [&](hid_t g, const char* name) {
    return std::make_unique<Column<std::int64_t>>(g, name, H5T_NATIVE_INT64, H5T_STD_I64LE, 1, kSmallChunk);
  };
  auto f64 = [&](hid_t g, const char* name, int cols, hsize_t chunk) {
    return std::make_unique<Column<double>>(g, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, cols, chunk);
  };
  m.n_bodies = i32(sg, "n_bodies");
  m.n_steps = i32(sg, "n_steps");
  m.cadence = f64(sg, "cadence", 1, kSmallChunk);
  m.row_offset = i64(sg, "row_offset");
  m.body_offset = i64(sg, "body_offset");
  m.energy_error = f64(sg, "energy_error", 1, kSmallChunk);
  m.angular_momentum_error = f64(sg, "angular_momentum_error", 1, kSmallChunk);
  m.index = i64(sg, "index");
  m.attempts = i32(sg, "attempts");
  m.mass = f64(bg, "mass", 1, kSmallChunk);
  m.elements = f64(bg, "elements", 6, kSmallChunk);
  m.time = f64(rg, "time", 1, kRowChunk);
  m.position = f64(rg, "position", dim, kRowChunk);
  m.velocity = f64(rg, "velocity", dim, kRowChunk);
  m.acceleration = f64(rg, "acceleration", dim, kRowChunk);
  m.star_acceleration = f64(rg, "star_acceleration", dim, kRowChunk);
}

DatasetFileWriter::~DatasetFileWriter() {
  h5::Lock lock(h5::library_mutex());
  impl_.reset();
}

std::int64_t DatasetFileWriter::systems() const { return impl_->systems; }

void DatasetFileWriter::append(const System& s, std::int64_t index, int attempts) {
  h5::Lock lock(h5::library_mutex());
  auto& m = *impl_;
  if (s.dim != m.dim) throw Error("system dimension differs from the dataset's");
  m.n_bodies->push(s.n_bodies);
  m.n_steps->push(s.n_steps);
  m.cadence->push(s.cadence);
  m.row_offset->push(m.rows);
  m.body_offset->push(m.bodies);
  m.energy_error->push(s.energy_error);
  m.angular_momentum_error->push(s.angular_momentum_error);
  m.index->push(index);
  m.attempts->push(attempts);
  m.mass->push(s.mass.begin(), s.mass.end());
  for (const auto& el : s.elements) m.elements->push(el.begin(), el.end());
  for (int step = 0; step < s.n_steps; ++step) {
    for (int b = 0; b < s.n_bodies; ++b) m.time->push(s.time[step]);
  }
  const int rows = s.rows();
  auto push_matrix = [&](Column<double>& column, const Eigen::MatrixXd& matrix) {
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < m.dim; ++c) column.push(matrix(r, c));
    }
    column.maybe_flush();
  };
  push_matrix(*m.position, s.position);
  push_matrix(*m.velocity, s.velocity);
  push_matrix(*m.acceleration, s.acceleration);
  push_matrix(*m.star_acceleration, s.star_acceleration);
  m.time->maybe_flush();
  for (auto* column : {m.cadence.get(), m.energy_error.get(), m.angular_momentum_error.get(), m.mass.get(),
                       m.elements.get()}) {
    column->maybe_flush();
  }
  for (auto* column : {m.n_bodies.get(), m.n_steps.get(), m.attempts.get()}) column->maybe_flush();
  for (auto* column : {m.row_offset.get(), m.body_offset.get(), m.index.get()}) column->maybe_flush();
  m.rows += rows;
  m.bodies += s.n_bodies;
  ++m.systems;
}

void DatasetFileWriter::finish(const Json& attributes) {
  h5::Lock lock(h5::library_mutex());
  auto& m = *impl_;
  for (auto* column : {m.n_bodies.get(), m.n_steps.get(), m.attempts.get()}) column->close();
  for (auto* column : {m.row_offset.get(), m.body_offset.get(), m.index.get()}) column->close();
  for (auto* column :
       {m.cadence.get(), m.energy_error.get(), m.angular_momentum_error.get(), m.mass.get(), m.elements.get(),
        m.time.get(), m.position.get(), m.velocity.get(), m.acceleration.get(), m.star_acceleration.get()}) {
    column->close();
  }
  h5::write_attributes(m.file.get(), attributes);
  m.system_group.reset();
  m.body_group.reset();
  m.row_group.reset();
  h5::check_written([&] { return H5Fflush(m.file.get(), H5F_SCOPE_GLOBAL); },
                    "cannot write '" + m.path + "'");
  m.file.reset();
}

}  // namespace orbitlaw::simulator
