#pragma once
// Reading orbitlaw trajectory datasets (HDF5, schema "orbitlaw-trajectories" version 1;
// docs/dataset-format.md). This is the contract between the simulator, which writes the files, and the model
// and probe stages, which read them.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::simulator {

inline constexpr const char* kDatasetFormat = "orbitlaw-trajectories";
inline constexpr int kDatasetSchemaVersion = 1;

// One simulated system, fully loaded. Bodies are ordered planet_1 .. planet_N, star (star last), which is
// also the interleaving order of a sequence. Row r = step * n_bodies + body.
struct System {
  int n_bodies = 0;                             // planets + star
  int n_steps = 0;                              // observation times
  int dim = 2;                                  // 2 (planar) or 3
  double cadence = 0;                           // years between observations
  std::vector<double> mass;                     // [n_bodies], solar masses
  std::vector<std::array<double, 6>> elements;  // [n_bodies] a, e, i, Omega, omega, M0 (star: zeros)
  std::vector<double> time;                     // [n_steps], years
  Eigen::MatrixXd position;                     // [n_steps * n_bodies, dim], AU, barycentric
  Eigen::MatrixXd velocity;                     // AU / yr
  Eigen::MatrixXd acceleration;                 // total N-body acceleration, AU / yr^2
  Eigen::MatrixXd star_acceleration;            // acceleration due to the star alone (zero for the star)
  double energy_error = 0;                      // relative, over the whole integration
  double angular_momentum_error = 0;
  int star_index() const { return n_bodies - 1; }
  int rows() const { return n_steps * n_bodies; }
};

// Opens a dataset for reading; validates the format name and schema version and throws orbitlaw::Error with
// a one-line message for a missing, corrupt, truncated or wrong-version file. Readers may be used from
// several threads (calls are serialised internally: the system HDF5 library is not thread-safe).
class DatasetReader {
 public:
  explicit DatasetReader(const std::string& path);
  ~DatasetReader();
  DatasetReader(const DatasetReader&) = delete;
  DatasetReader& operator=(const DatasetReader&) = delete;

  std::int64_t num_systems() const;
  int dim() const;
  const Json& attributes() const;  // root attributes (config, seed, integrator, G, ...) as JSON
  // The exponent k of the force law F = G m1 m2 / r^k that generated the data (attribute
  // force_law_exponent); 2 (Newton) for files written before the attribute existed.
  double force_law_exponent() const;
  System read_system(std::int64_t index) const;

  // Additions beyond the original contract, for whole-file statistics (orbitlaw inspect) and bulk readers.
  struct SystemTable {  // the /system group, one entry per system
    std::vector<int> n_bodies, n_steps;
    std::vector<double> cadence, energy_error, angular_momentum_error;
    std::vector<std::int64_t> row_offset, body_offset;
  };
  SystemTable read_system_table() const;
  std::int64_t num_rows() const;
  // Rows [first, first + count) of a /row field ("time", "position", "velocity", "acceleration",
  // "star_acceleration"), flat and row-major ([count] for time, [count * dim] otherwise).
  std::vector<double> read_row_block(const std::string& field, std::int64_t first, std::int64_t count) const;
  const std::string& path() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace orbitlaw::simulator
