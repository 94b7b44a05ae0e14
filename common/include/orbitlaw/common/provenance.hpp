#pragma once
// Every run records what produced it next to its outputs: the resolved config, the seed, the versions of
// orbitlaw and its libraries, the git revision, the command line, the time, and the compute it ran on.
#include <cstdint>
#include <string>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw {

// The command line of this process, set once by main() so records can quote it.
void set_command_line(int argc, char** argv);
const std::string& command_line();

// What a CPU run's bits depend on beyond its config (the thread count in use, which splits reductions, and
// the vector unit the kernels were chosen for), recorded as "compute" in every later record of this process.
// Set where the threads are set (orbitlaw::model::configure_threads); a process that never sets them has
// none.
void record_compute(const Json& compute);

// Writes `<dir>/<stage>.provenance.json` atomically and returns its path. `versions` maps library names to
// version strings; orbitlaw's own version, revision, compiler and build type are added here.
std::string write_provenance(const std::string& dir, const std::string& stage, const Json& resolved_config,
                             std::uint64_t seed, const Json& versions);

// The same record as a JSON object, for embedding into another file (an HDF5 attribute, a checkpoint).
Json provenance_record(const std::string& stage, const Json& resolved_config, std::uint64_t seed,
                       const Json& versions);

}  // namespace orbitlaw
