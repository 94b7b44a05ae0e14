// Merging shards into one logical dataset. The bulky /row and /body arrays become HDF5 virtual datasets that
// map each shard's array into consecutive ranges (no data copied); the small /system index is copied with
// row and body offsets made global.
#include <algorithm>
#include <filesystem>

#include "hdf5_io.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

namespace {

struct Shard {
  std::string path;
  std::string relative_path;  // from the merged file's folder
  Json attributes;
  std::int64_t systems = 0, rows = 0, bodies = 0;
  DatasetReader::SystemTable table;
};

// A [total, cols] virtual dataset stitched from the same-named dataset of every shard.
void create_virtual(hid_t parent, const std::string& name, const std::vector<Shard>& shards,
                    std::int64_t Shard::*length, int cols) {
  std::int64_t total = 0;
  for (const auto& s : shards) total += s.*length;
  const int rank = cols > 1 ? 2 : 1;
  hsize_t dims[2] = {static_cast<hsize_t>(total), static_cast<hsize_t>(cols)};
  auto virtual_space = h5::dataspace(H5Screate_simple(rank, dims, nullptr), "cannot create dataspace");
  auto dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "cannot create property list");
  h5::check(H5Pset_obj_track_times(dcpl.get(), false), "cannot switch off timestamps");
  double fill = 0.0;
  h5::check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_DOUBLE, &fill), "cannot set fill value");
  hsize_t offset = 0;
  for (const auto& s : shards) {
    const hsize_t count[2] = {static_cast<hsize_t>(s.*length), static_cast<hsize_t>(cols)};
    if (count[0] == 0) continue;
    auto source_space = h5::dataspace(H5Screate_simple(rank, count, nullptr), "cannot create dataspace");
    hsize_t start[2] = {offset, 0};
    h5::check(H5Sselect_hyperslab(virtual_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
              "cannot select virtual range");
    h5::check(H5Pset_virtual(dcpl.get(), virtual_space.get(), s.relative_path.c_str(), name.c_str(),
                             source_space.get()),
              "cannot map " + name + " of '" + s.path + "'");
    offset += count[0];
  }
  H5Sselect_none(virtual_space.get());
  auto dset = h5::dataset(H5Dcreate2(parent, name.c_str(), H5T_IEEE_F64LE, virtual_space.get(), H5P_DEFAULT,
                                     dcpl.get(), H5P_DEFAULT),
                          "cannot create virtual dataset " + name);
}

template <class T>
void write_copy(hid_t parent, const std::string& name, hid_t memory_type, hid_t file_type,
                const std::vector<T>& data) {
  hsize_t dims[1] = {data.size()};
  hsize_t chunk[1] = {std::max<hsize_t>(1, std::min<hsize_t>(4096, data.size()))};
  auto space = h5::dataspace(H5Screate_simple(1, dims, nullptr), "cannot create dataspace");
  auto dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "cannot create property list");
  h5::check(H5Pset_chunk(dcpl.get(), 1, chunk), "cannot chunk " + name);
  h5::check(H5Pset_shuffle(dcpl.get()), "cannot set shuffle");
  h5::check(H5Pset_deflate(dcpl.get(), 4), "cannot set deflate");
  h5::check(H5Pset_obj_track_times(dcpl.get(), false), "cannot switch off timestamps");
  auto dset = h5::dataset(
      H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      "cannot create " + name);
  h5::check(H5Dwrite(dset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
            "cannot write " + name);
}

std::vector<std::int64_t> read_int64_column(const std::string& path, const std::string& name,
                                            std::int64_t n) {
  auto file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open '" + path + "'");
  auto dset = h5::dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), "'" + path + "' has no " + name);
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  h5::read_rows(dset.get(), H5T_NATIVE_INT64, 0, n, 1, out.data(), name);
  return out;
}

std::vector<std::int32_t> read_int32_column(const std::string& path, const std::string& name,
                                            std::int64_t n) {
  auto file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open '" + path + "'");
  auto dset = h5::dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), "'" + path + "' has no " + name);
  std::vector<std::int32_t> out(static_cast<std::size_t>(n));
  h5::read_rows(dset.get(), H5T_NATIVE_INT32, 0, n, 1, out.data(), name);
  return out;
}

}  // namespace

namespace {

// Each shard's attributes and system table, in system order. Refuses an output that is one of the shards.
std::vector<Shard> read_shards(const std::vector<std::string>& shard_paths, const std::string& path) {
  const auto out_dir = std::filesystem::absolute(std::filesystem::path(path)).parent_path();
  std::vector<Shard> shards;
  for (const auto& shard_path : shard_paths) {
    // Writing the merged file over one of its own shards would leave a virtual dataset mapping itself.
    std::error_code ec;
    if (std::filesystem::weakly_canonical(shard_path) == std::filesystem::weakly_canonical(path) ||
        (std::filesystem::exists(path) && std::filesystem::equivalent(shard_path, path, ec)))
      throw Error("merge: the output '" + path + "' is one of its shards ('" + shard_path +
                  "'); choose another --out");
    DatasetReader reader(shard_path);
    Shard s;
    s.path = shard_path;
    s.relative_path =
        std::filesystem::relative(std::filesystem::absolute(shard_path), out_dir).generic_string();
    s.attributes = reader.attributes();
    if (s.attributes.contains("merged_from")) throw Error("'" + shard_path + "' is already a merged dataset");
    s.systems = reader.num_systems();
    s.rows = reader.num_rows();
    s.table = reader.read_system_table();
    for (int b : s.table.n_bodies) s.bodies += b;
    shards.push_back(std::move(s));
  }
  std::sort(shards.begin(), shards.end(), [](const Shard& x, const Shard& y) {
    return x.attributes.value("first_system", std::int64_t{0}) <
           y.attributes.value("first_system", std::int64_t{0});
  });
  return shards;
}

// Checks that the shards are one config's shards 0..n-1 covering every system once; returns the systems.
std::int64_t check_shards_cover_the_dataset(const std::vector<Shard>& shards) {
  const Json& first = shards.front().attributes;
  const auto shard_count = first.value("shard_count", std::int64_t{1});
  if (static_cast<std::int64_t>(shards.size()) != shard_count) {
    throw Error("merge got " + std::to_string(shards.size()) +
                " files but the shards say shard_count = " + std::to_string(shard_count));
  }
  std::int64_t expected_first = 0;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto& a = shards[k].attributes;
    if (a.value("config", Json()) != first.value("config", Json()) ||
        a.value("dim", 0) != first.value("dim", 0)) {
      throw Error("'" + shards[k].path + "' was written with a different config than '" +
                  shards.front().path + "'");
    }
    if (a.value("shard_index", std::int64_t{-1}) != static_cast<std::int64_t>(k) ||
        a.value("first_system", std::int64_t{-1}) != expected_first) {
      throw Error("shards do not cover the systems contiguously: '" + shards[k].path + "' is shard " +
                  std::to_string(a.value("shard_index", std::int64_t{-1})) + " starting at system " +
                  std::to_string(a.value("first_system", std::int64_t{-1})));
    }
    expected_first += shards[k].systems;
  }
  if (expected_first != first.value("n_systems_total", std::int64_t{-1})) {
    throw Error("shards hold " + std::to_string(expected_first) + " systems, the config asks for " +
                std::to_string(first.value("n_systems_total", std::int64_t{-1})));
  }
  return expected_first;
}

// The merged /system index: global offsets, everything else concatenated.
void write_system_index(hid_t file, const std::vector<Shard>& shards) {
  DatasetReader::SystemTable all;
  std::vector<std::int64_t> index;
  std::vector<std::int32_t> attempts;
  std::int64_t row_base = 0, body_base = 0;
  for (const auto& s : shards) {
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(all.n_bodies, s.table.n_bodies);
    append(all.n_steps, s.table.n_steps);
    append(all.cadence, s.table.cadence);
    append(all.energy_error, s.table.energy_error);
    append(all.angular_momentum_error, s.table.angular_momentum_error);
    for (auto offset : s.table.row_offset) all.row_offset.push_back(offset + row_base);
    for (auto offset : s.table.body_offset) all.body_offset.push_back(offset + body_base);
    append(index, read_int64_column(s.path, "/system/index", s.systems));
    append(attempts, read_int32_column(s.path, "/system/attempts", s.systems));
    row_base += s.rows;
    body_base += s.bodies;
  }
  auto system_group = h5::create_group(file, "system");
  const hid_t sg = system_group.get();
  write_copy(sg, "n_bodies", H5T_NATIVE_INT, H5T_STD_I32LE, all.n_bodies);
  write_copy(sg, "n_steps", H5T_NATIVE_INT, H5T_STD_I32LE, all.n_steps);
  write_copy(sg, "cadence", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, all.cadence);
  write_copy(sg, "row_offset", H5T_NATIVE_INT64, H5T_STD_I64LE, all.row_offset);
  write_copy(sg, "body_offset", H5T_NATIVE_INT64, H5T_STD_I64LE, all.body_offset);
  write_copy(sg, "energy_error", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, all.energy_error);
  write_copy(sg, "angular_momentum_error", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, all.angular_momentum_error);
  write_copy(sg, "index", H5T_NATIVE_INT64, H5T_STD_I64LE, index);
  write_copy(sg, "attempts", H5T_NATIVE_INT32, H5T_STD_I32LE, attempts);
}

// Root attributes: the shards' own, with counts summed and the shard bookkeeping replaced.
void write_merged_attributes(hid_t file, const std::vector<Shard>& shards, std::int64_t systems) {
  Json attributes = shards.front().attributes;
  Json merged_from = Json::array();
  Json shard_bytes = Json::array();
  Json shard_checksums = Json::array();
  for (const auto& s : shards) {
    merged_from.push_back(s.relative_path);
    shard_bytes.push_back(static_cast<std::uint64_t>(std::filesystem::file_size(s.path)));
    shard_checksums.push_back(file_checksum(s.path));
  }
  for (auto& [key, value] : attributes.items()) {
    if (key.rfind("rejected_", 0) != 0) continue;
    std::int64_t sum = 0;
    for (const auto& s : shards) sum += s.attributes.value(key, std::int64_t{0});
    value = sum;
  }
  attributes["n_systems"] = systems;
  attributes["first_system"] = std::int64_t{0};
  attributes["shard_index"] = std::int64_t{0};
  attributes["shard_count"] = std::int64_t{1};
  attributes["merged_from"] = merged_from.dump();
  // Checked by every reader: a shard must not change (size first, as it is free; then the checksum).
  attributes["merged_shard_bytes"] = shard_bytes.dump();
  attributes["merged_shard_checksums"] = shard_checksums.dump();
  for (const char* key : {"config", "provenance"}) attributes[key] = attributes[key].dump();
  h5::write_attributes(file, attributes);
}

}  // namespace

void merge_datasets(const std::vector<std::string>& shard_paths, const std::string& path) {
  h5::Lock lock(h5::library_mutex());
  h5::silence_errors();
  if (shard_paths.empty()) throw Error("merge needs at least one shard");
  const std::vector<Shard> shards = read_shards(shard_paths, path);
  const std::int64_t systems = check_shards_cover_the_dataset(shards);
  AtomicOutput output(path);
  {
    auto fcpl = h5::plist(H5Pcreate(H5P_FILE_CREATE), "cannot create file property list");
    h5::check(H5Pset_obj_track_times(fcpl.get(), false), "cannot switch off timestamps");
    auto file = h5::file(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT),
                         "cannot create '" + output.temp_path() + "'");
    write_system_index(file.get(), shards);
    {
      auto body_group = h5::create_group(file.get(), "body");
      auto row_group = h5::create_group(file.get(), "row");
      const int dim = static_cast<int>(shards.front().attributes.value("dim", std::int64_t{2}));
      create_virtual(file.get(), "/body/mass", shards, &Shard::bodies, 1);
      create_virtual(file.get(), "/body/elements", shards, &Shard::bodies, 6);
      create_virtual(file.get(), "/row/time", shards, &Shard::rows, 1);
      for (const char* field : {"position", "velocity", "acceleration", "star_acceleration"}) {
        create_virtual(file.get(), std::string("/row/") + field, shards, &Shard::rows, dim);
      }
    }
    write_merged_attributes(file.get(), shards, systems);
    h5::check_written([&] { return H5Fflush(file.get(), H5F_SCOPE_GLOBAL); },
                      "cannot write '" + output.temp_path() + "'");
  }
  output.commit();
  DatasetReader check(path);  // fails loudly now rather than at training time if a mapping is wrong
  if (check.num_systems() != systems) throw Error("merged dataset lost systems");
}

}  // namespace orbitlaw::simulator
