// Writing, reading, sharding and merging datasets; thread-count independence; bad files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator.hpp"

using namespace orbitlaw::simulator;
using orbitlaw::Json;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("orbitlaw_test_simulator_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

SimulationConfig small_config(std::int64_t systems) {
  auto config = preset_defaults("vafa-paper");
  config.systems = systems;
  config.seed = 11;
  config.sequence_rows = 200;  // short sequences keep the test fast; the format is the same
  return config;
}

WriteOptions fixed_options(int threads) {
  WriteOptions options;
  options.threads = threads;
  options.provenance = Json{{"fixed", "for byte comparison"}};
  return options;
}

void expect_same_system(const System& a, const System& b) {
  ASSERT_EQ(a.n_bodies, b.n_bodies);
  ASSERT_EQ(a.n_steps, b.n_steps);
  EXPECT_EQ(a.cadence, b.cadence);
  EXPECT_EQ(a.mass, b.mass);
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.velocity, b.velocity);
  EXPECT_EQ(a.acceleration, b.acceleration);
  EXPECT_EQ(a.star_acceleration, b.star_acceleration);
  EXPECT_EQ(a.energy_error, b.energy_error);
  EXPECT_EQ(a.angular_momentum_error, b.angular_momentum_error);
}

}  // namespace

TEST(Dataset, RoundTripThroughReader) {
  const auto config = small_config(12);
  const auto path = scratch("round_trip.h5");
  auto summary = write_dataset(config, path.string(), fixed_options(2));
  EXPECT_EQ(summary.systems, 12);
  DatasetReader reader(path.string());
  EXPECT_EQ(reader.num_systems(), 12);
  EXPECT_EQ(reader.dim(), 2);
  const Json& a = reader.attributes();
  EXPECT_EQ(a["format"], "orbitlaw-trajectories");
  EXPECT_EQ(a["schema_version"], 1);
  EXPECT_EQ(a["seed"], 11u);
  EXPECT_EQ(a["integrator"], "rkf78");
  EXPECT_NEAR(a["G"].get<double>(), 39.47841760435743, 1e-12);
  EXPECT_EQ(a["config"]["seed"], 11u);
  EXPECT_EQ(a["provenance"]["fixed"], "for byte comparison");
  std::int64_t rows = 0;
  for (int k = 0; k < 12; ++k) {
    const auto expected = simulate_system(config, k);
    const auto got = reader.read_system(k);
    expect_same_system(got, expected.system);
    EXPECT_EQ(got.rows(), got.n_bodies * ((200 - 1) / got.n_bodies));
    EXPECT_LE(got.rows() + 1, 200);
    EXPECT_EQ(got.time[1] - got.time[0], got.cadence);
    EXPECT_LT(got.energy_error, config.max_energy_error);
    rows += got.rows();
  }
  EXPECT_EQ(reader.num_rows(), rows);
  EXPECT_THROW(reader.read_system(12), orbitlaw::Error);
  EXPECT_FALSE(fs::exists(path.string() + ".partial-" + std::to_string(::getpid())));
}

TEST(Dataset, SameBytesWithOneAndTwoThreads) {
  const auto config = small_config(24);
  const auto one = scratch("threads1.h5"), two = scratch("threads2.h5");
  write_dataset(config, one.string(), fixed_options(1));
  write_dataset(config, two.string(), fixed_options(2));
  const auto a = bytes_of(one), b = bytes_of(two);
  EXPECT_GT(a.size(), 10000u);
  EXPECT_TRUE(a == b) << "files differ: " << a.size() << " vs " << b.size() << " bytes";
}

TEST(Dataset, ShardsMergeIntoTheSameDataset) {
  const auto config = small_config(10);
  const auto whole = scratch("whole.h5");
  write_dataset(config, whole.string(), fixed_options(1));
  std::vector<std::string> shards;
  for (int i = 0; i < 3; ++i) {
    auto options = fixed_options(1);
    options.shard_index = i;
    options.shard_count = 3;
    shards.push_back(scratch("shard" + std::to_string(i) + ".h5").string());
    write_dataset(config, shards.back(), options);
  }
  EXPECT_EQ(DatasetReader(shards[1]).attributes()["first_system"], 3);  // 10 * 1 / 3
  const auto merged = scratch("merged.h5");
  merge_datasets({shards[2], shards[0], shards[1]}, merged.string());  // order does not matter
  DatasetReader a(whole.string()), b(merged.string());
  ASSERT_EQ(b.num_systems(), 10);
  EXPECT_EQ(b.attributes()["merged_from"].size(), 3u);
  for (int k = 0; k < 10; ++k) expect_same_system(b.read_system(k), a.read_system(k));
  // Missing a shard is an error and leaves no file.
  const auto partial = scratch("partial_merge.h5");
  EXPECT_THROW(merge_datasets({shards[0], shards[1]}, partial.string()), orbitlaw::Error);
  EXPECT_FALSE(fs::exists(partial));
}

TEST(Dataset, ReadableSliceBySliceFromH5py) {
  const std::string python = ORBITLAW_PYTHON;
  if (!fs::exists(python)) GTEST_SKIP() << "no " << python;
  const auto path = scratch("h5py.h5");
  write_dataset(small_config(3), path.string(), fixed_options(1));
  DatasetReader reader(path.string());
  const auto s = reader.read_system(1);
  // h5py reads system 1's star position at its last step through the offsets alone.
  const std::string script =
      "import h5py, json; f = h5py.File('" + path.string() +
      "', 'r'); k = 1; "
      "o = int(f['system/row_offset'][k]); n = int(f['system/n_bodies'][k]); s = "
      "int(f['system/n_steps'][k]); "
      "rows = f['row/position'][o:o + n * s]; c = json.loads(f.attrs['config']); "
      "print(repr(float(rows[-1, 0])), repr(float(rows[-1, 1])), f.attrs['format'], c['seed'])";
  const std::string command = python + " -c \"" + script + "\" 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096] = {0};
  std::string output;
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  ASSERT_EQ(pclose(pipe), 0) << output;
  char expected[256];
  std::snprintf(expected, sizeof expected, "%.17g %.17g orbitlaw-trajectories 11",
                s.position(s.rows() - 1, 0), s.position(s.rows() - 1, 1));
  double x = 0, y = 0;
  ASSERT_EQ(std::sscanf(output.c_str(), "%lf %lf", &x, &y), 2) << output;
  EXPECT_EQ(x, s.position(s.rows() - 1, 0));
  EXPECT_EQ(y, s.position(s.rows() - 1, 1));
  EXPECT_NE(output.find("orbitlaw-trajectories 11"), std::string::npos) << output << " vs " << expected;
}

TEST(Dataset, CorruptTruncatedAndForeignFilesAreClearErrors) {
  const auto good = scratch("good.h5");
  write_dataset(small_config(4), good.string(), fixed_options(1));
  const auto content = bytes_of(good);
  auto expect_error = [](const fs::path& path, const std::string& fragment) {
    try {
      DatasetReader reader(path.string());
      ADD_FAILURE() << "no error for " << path;
    } catch (const orbitlaw::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  const auto truncated = scratch("truncated.h5");
  std::ofstream(truncated, std::ios::binary) << content.substr(0, content.size() / 2);
  expect_error(truncated, "truncated");
  const auto garbage = scratch("garbage.h5");
  std::ofstream(garbage, std::ios::binary) << std::string(4096, 'x');
  expect_error(garbage, "not an HDF5 file");
  expect_error(scratch("missing.h5"), "does not exist");
}

// A fuzzed file (tests/fuzz/findings/hdf5-dtype-size) whose /system/n_steps declares a 65,540-byte integer:
// libhdf5 crashed converting it; the reader must refuse the stored type in one line before reading.
TEST(Dataset, AStoredTypeTheFormatDoesNotUseIsRefusedBeforeReading) {
  const std::string path = std::string(ORBITLAW_SOURCE_DIR) + "/tests/fuzz/findings/hdf5-dtype-size/input.h5";
  try {
    DatasetReader reader(path);
    reader.read_system_table();
    ADD_FAILURE() << "no error for " << path;
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/system/n_steps is stored as a 65540-byte integer"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

// 8 bytes of a B-tree address set to 0xff (a fuzzing finding): libhdf5 itself dies by SIGSEGV in
// H5Dopen2, so no check can see it; the reader's crash guard (a forked child opens the file first) turns it
// into one line. Without the guard this test's own process dies.
TEST(Dataset, AFileThatCrashesLibhdf5IsAOneLineError) {
  const std::string path = std::string(ORBITLAW_SOURCE_DIR) + "/tests/fuzz/findings/hdf5-52b3aa1f4a/input.h5";
  try {
    DatasetReader reader(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const orbitlaw::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "'" + path + "': libhdf5 crashed reading it (signal 11); the file is damaged");
  }
  // The guard lets a sound file through, and its child leaves the parent's reading intact.
  const auto sound = scratch("sound.h5");
  const auto config = small_config(3);
  write_dataset(config, sound.string(), fixed_options(1));
  DatasetReader reader(sound.string());
  EXPECT_EQ(reader.num_systems(), 3);
  expect_same_system(reader.read_system(2), simulate_system(config, 2).system);
}

TEST(Dataset, WrongSchemaVersionIsRejected) {
  const std::string python = ORBITLAW_PYTHON;
  if (!fs::exists(python)) GTEST_SKIP() << "no " << python;
  const auto path = scratch("v2.h5");
  write_dataset(small_config(2), path.string(), fixed_options(1));
  const std::string command = python + " -c \"import h5py; f = h5py.File('" + path.string() +
                              "', 'r+'); f.attrs['schema_version'] = 2; f.close()\"";
  ASSERT_EQ(std::system(command.c_str()), 0);
  try {
    DatasetReader reader(path.string());
    ADD_FAILURE() << "no error";
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema_version 2"), std::string::npos) << e.what();
  }
}

TEST(Dataset, RejectionRuleIsCountedAndRecorded) {
  // Crowded, massive planets: many draws meet closely or scatter, and every rejection is counted.
  auto config = small_config(6);
  config.planets_min = 6;
  config.planets_max = 8;
  config.a_max = 5.0;
  config.planet_mass_min = 1e-3;
  config.planet_mass_max = 3e-3;
  const auto path = scratch("rejections.h5");
  auto summary = write_dataset(config, path.string(), fixed_options(2));
  std::int64_t total = 0;
  for (auto count : summary.rejections) total += count;
  EXPECT_GT(total, 0);
  DatasetReader reader(path.string());
  EXPECT_EQ(reader.attributes()["rejected_total"], total);
  EXPECT_EQ(reader.attributes()["rejected_close_encounter"],
            summary.rejections[static_cast<int>(Rejection::kCloseEncounter)]);
}

TEST(Dataset, ThreeDimensionalRoundTrip) {
  auto config = small_config(3);
  config.dim = 3;
  const auto path = scratch("three_d.h5");
  write_dataset(config, path.string(), fixed_options(1));
  DatasetReader reader(path.string());
  EXPECT_EQ(reader.dim(), 3);
  for (int k = 0; k < 3; ++k) {
    const auto s = reader.read_system(k);
    ASSERT_EQ(s.position.cols(), 3);
    EXPECT_GT(s.position.col(2).cwiseAbs().maxCoeff(), 0.0);  // inclined orbits leave the plane
    expect_same_system(s, simulate_system(config, k).system);
  }
}

TEST(Dataset, FailedRunLeavesNoFile) {
  // Every draw is a close encounter (planets in the same 0.1 AU ring) and only one attempt is allowed.
  auto config = small_config(4);
  config.planets_min = config.planets_max = 3;
  config.a_min = 1.0;
  config.a_max = 1.1;
  config.planet_mass_min = config.planet_mass_max = 1e-3;
  config.max_attempts = 1;
  const auto path = scratch("failed.h5");
  try {
    write_dataset(config, path.string(), fixed_options(2));
    ADD_FAILURE() << "no error";
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_attempts"), std::string::npos) << e.what();
  }
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find("failed.h5"), std::string::npos) << entry.path();
  }
}
