// Bad input as a hostile new user gives it, by kind. Every case must end with the exact exit status (1: input
// the tool read and refused; 2: a command line it could not parse) and exactly one line that names the
// problem: never a signal, a traceback, a hang or exit 0. Each test prints how many cases its kind holds.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using orbitlaw::test::run_orbitlaw;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string args;     // the orbitlaw command line
  int exit_code;        // 1 or 2
  std::string message;  // a phrase the one line must hold
};

fs::path scratch() {
  static const fs::path dir = orbitlaw::test::fresh_scratch_dir("orbitlaw_bad_inputs");
  return dir;
}

std::string path_of(const std::string& name) { return (scratch() / name).string(); }

void write_file(const std::string& name, const std::string& text) { std::ofstream(path_of(name)) << text; }

void expect_refused(const std::string& kind, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    const auto r = run_orbitlaw(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << "orbitlaw " << c.args << "\n" << r.output;
    EXPECT_EQ(r.lines(), 1) << "orbitlaw " << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos)
        << "orbitlaw " << c.args << "\nexpected '" << c.message << "' in: " << r.output;
    EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  }
  std::printf("[ bad inputs ] %-22s %zu cases\n", kind.c_str(), cases.size());
}

// A small clean two-body dataset, simulated once.
const std::string& clean_dataset() {
  static const std::string path = [] {
    const std::string p = path_of("clean.h5");
    const auto r = run_orbitlaw(
        "simulate --preset two-body --systems 40 --seed 5 -j 2 -q --set sequence_rows=61 --out " + p);
    if (r.exit_code != 0) ADD_FAILURE() << r.output;
    return p;
  }();
  return path;
}

// A copy of the clean dataset with one value of `dataset` (row, column) overwritten.
template <typename T>
std::string corrupted(const std::string& name, const char* dataset, hsize_t row, hsize_t column, T value) {
  const std::string path = path_of(name);
  fs::copy_file(clean_dataset(), path, fs::copy_options::overwrite_existing);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t set = H5Dopen2(file, dataset, H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  const int rank = H5Sget_simple_extent_ndims(space);
  const hsize_t start[2] = {row, column}, count[2] = {1, 1};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hsize_t one = 1;
  const hid_t memory = H5Screate_simple(1, &one, nullptr);
  const hid_t type = std::is_floating_point_v<T> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  const herr_t status = H5Dwrite(set, type, memory, space, H5P_DEFAULT, &value);
  H5Sclose(memory);
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  EXPECT_GE(status, 0) << "could not corrupt " << dataset << " (rank " << rank << ")";
  return path;
}

// The commands that read a dataset, each of which must refuse a bad one: the summary of inspect (it scans
// the index and every row field, not the masses), inspect of the bad system, train, and a probe.
std::vector<Case> readers_refuse(const std::string& data, int bad_system, const std::string& message,
                                 bool summary_reads_it = true) {
  const std::string out = path_of("out_" + fs::path(data).stem().string());
  std::vector<Case> cases;
  if (summary_reads_it) cases.push_back({"inspect " + data, 1, message});
  cases.push_back({"inspect " + data + " --system " + std::to_string(bad_system), 1, message});
  cases.push_back({"train --preset tiny --data " + data + " --out " + out + "/train --set train.max_steps=1",
                   1, message});
  cases.push_back({"probe --oracle-only --data " + data + " --out " + out + "/probe", 1, message});
  return cases;
}

void append(std::vector<Case>& to, const std::vector<Case>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

TEST(BadInputs, OutOfRangeNumbers) {
  const std::string data = clean_dataset();
  write_file("newton.csv", [] {
    std::string csv = "r,m1,m2,F\n";
    for (int i = 1; i <= 20; ++i)
      csv += std::to_string(0.5 + 0.1 * i) + ",1,2," + std::to_string(2 / std::pow(0.5 + 0.1 * i, 2)) + "\n";
    return csv;
  }());
  const std::string sr = "sr --data " + path_of("newton.csv") + " --x r,m1,m2 --y F --iterations 1 ";
  expect_refused(
      "out-of-range numbers",
      {{"simulate --systems -5 --out " + path_of("n.h5"), 2, "--systems"},
       {"simulate --systems 99999999999999999999 --out " + path_of("n.h5"), 2, "--systems"},
       {"simulate --systems 99999999999999 --out " + path_of("n.h5"), 1, "GB free"},
       {"simulate --systems 1.5 --out " + path_of("n.h5"), 2, "--systems"},
       {"inspect " + data + " --system 1e3", 2, "--system"},
       {sr + "--seed -1", 2, "--seed"},
       {"simulate --seed -7 --out " + path_of("n.h5"), 2, "--seed"},
       {"simulate --set seed=-7 --out " + path_of("n.h5"), 1, "'seed'"},
       {"simulate -j 3000000 --out " + path_of("n.h5"), 2, "--threads"},
       {"simulate -j 0 --out " + path_of("n.h5"), 2, "--threads"},
       {"inspect " + data + " --system -1", 1, "system -1 is out of range"},
       {"inspect " + data + " --system 40", 1, "system 40 is out of range"},
       {"inspect " + data + " --token-range 5 1", 1, "--token-range"},
       {sr + "--zero-below -1", 1, "zero_below"},
       {sr + "--significant-digits 0", 1, "sr config: significant_digits must be in [1, 17]"},
       {sr + "--significant-digits 18", 1, "sr config: significant_digits must be in [1, 17]"},
       {sr + "--time-limit nan", 1, "time_limit"},
       {sr + "--time-limit -3", 1, "time_limit"},
       {sr + "--max-size -3", 1, "max_size"},
       {sr + "--set parsimony=-1", 1, "parsimony"},
       {"train --preset tiny --data " + data + " --out " + path_of("t") + " --max-minutes -1", 1,
        "max_minutes"},
       {"train --preset tiny --data " + data + " --out " + path_of("t") + " --set train.lr=-1", 1, "lr"},
       {"train --preset tiny --data " + data + " --out " + path_of("t") + " --set train.threads=99999", 1,
        "[0, 1024]"},
       {sr + "--threads 3000000", 1, "[1, 1024]"},
       {sr + "--set threads=0", 1, "[1, 1024]"}});
}

TEST(BadInputs, NonFiniteData) {
  // 40 systems of 2 bodies x 30 steps (60 rows each): file row 200 is system 3's, row 7 system 0's, and
  // body 7 is system 3's planet.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<Case> cases;
  append(cases, readers_refuse(corrupted("nan_position.h5", "/row/position", 200, 1, nan), 3,
                               "system 3 has a non-finite position"));
  append(cases, readers_refuse(corrupted("inf_velocity.h5", "/row/velocity", 7, 0, inf), 0,
                               "system 0 has a non-finite velocity"));
  append(cases, readers_refuse(corrupted("nan_acceleration.h5", "/row/acceleration", 7, 1, nan), 0,
                               "system 0 has a non-finite acceleration"));
  append(cases, readers_refuse(corrupted("nan_mass.h5", "/body/mass", 7, 0, nan), 3,
                               "system 3 has a non-finite mass", /*summary_reads_it=*/false));
  expect_refused("non-finite data", cases);
}

TEST(BadInputs, CorruptIndexAndFiles) {
  std::vector<Case> cases;
  append(cases, readers_refuse(corrupted("far_rows.h5", "/system/row_offset", 2, 0, std::int64_t{1} << 40), 2,
                               "system 2 has an invalid index entry"));
  append(cases, readers_refuse(corrupted("negative_bodies.h5", "/system/n_bodies", 3, 0, std::int64_t{-3}), 3,
                               "system 3 has an invalid index entry"));
  append(cases, readers_refuse(corrupted("zero_cadence.h5", "/system/cadence", 4, 0, 0.0), 4, "cadence"));
  write_file("not_hdf5.h5", "this is not an HDF5 file\n");
  const std::string half = path_of("truncated.h5");
  fs::copy_file(clean_dataset(), half, fs::copy_options::overwrite_existing);
  fs::resize_file(half, fs::file_size(half) / 2);
  cases.push_back({"inspect " + path_of("not_hdf5.h5"), 1, "not an HDF5 file"});
  cases.push_back({"inspect " + half, 1, half});
  cases.push_back({"train --preset tiny --data " + half + " --out " + path_of("t2"), 1, half});
  cases.push_back({"inspect " + path_of("absent.h5"), 1, "does not exist"});
  expect_refused("corrupt index or file", cases);
}

TEST(BadInputs, MissingFields) {
  const std::vector<std::pair<std::string, std::string>> planet{
      {"mass", "1e-3"}, {"a", "1.0"}, {"e", "0.1"}, {"i", "0"}, {"Omega", "0"}, {"omega", "0"}, {"M0", "0"}};
  std::vector<Case> cases;
  for (const char* key : {"mass", "a", "e", "i", "Omega", "omega", "M0"}) {
    std::string fields;
    for (const auto& [name, value] : planet)
      if (name != key) fields += (fields.empty() ? "\"" : ", \"") + name + "\": " + value;
    const std::string file = std::string("custom_") + key + ".json";
    write_file(file, R"({"preset": "custom", "systems": 1, "planets": [{)" + fields + "}]}");
    cases.push_back({"simulate --config " + path_of(file) + " --out " + path_of("custom.h5"), 1,
                     std::string("planets[0] is missing '") + key + "'"});
  }
  write_file("empty_planets.json", R"({"preset": "custom", "planets": []})");
  cases.push_back({"simulate --config " + path_of("empty_planets.json") + " --out " + path_of("custom.h5"), 1,
                   "needs 'planets'"});
  expect_refused("missing fields", cases);
  EXPECT_FALSE(fs::exists(path_of("custom.h5")));
}

TEST(BadInputs, DuplicateColumnsAndTablesTooSmall) {
  write_file("duplicate.csv", "r,m1,r,F\n1,2,3,4\n");
  write_file("one_row.csv", "r,m1,m2,F\n1,2,3,6\n");
  std::string seven = "r,m1,m2,F\n";
  for (int i = 1; i <= 7; ++i) seven += std::to_string(i) + ",1,1," + std::to_string(1.0 / (i * i)) + "\n";
  write_file("seven_rows.csv", seven);
  const std::string search = " --x r,m1,m2 --y F --iterations 1";
  expect_refused("duplicate columns, small tables",
                 {{"sr --data " + path_of("duplicate.csv") + " --x r,m1 --y F", 1,
                   "the header names 'r' again (first in column 1)"},
                  {"sr --data " + path_of("one_row.csv") + search, 1, "at least 8 data rows, got 1"},
                  {"sr --data " + path_of("seven_rows.csv") + search, 1, "at least 8 data rows, got 7"},
                  {"sr --data " + path_of("seven_rows.csv") + " --x r,r --y F", 1, "requested twice"}});
}

TEST(BadInputs, MergedDatasets) {
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string shard = path_of("shard" + std::to_string(i) + ".h5");
    const auto r = run_orbitlaw("simulate --preset two-body --systems 6 -q --set sequence_rows=21 --shard " +
                                std::to_string(i) + "/2 --out " + shard);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    shards += " " + shard;
  }
  const std::string merged = path_of("merged.h5");
  ASSERT_EQ(run_orbitlaw("simulate --merge" + shards + " --out " + merged).exit_code, 0);
  const auto before = fs::file_size(path_of("shard0.h5"));
  std::vector<Case> cases{{"simulate --merge" + shards + " --out " + path_of("shard0.h5"), 1, "shard0.h5"}};
  fs::rename(path_of("shard1.h5"), path_of("shard1.moved"));
  append(cases, readers_refuse(merged, 0, "shard1.h5', which is missing"));
  expect_refused("merged datasets", cases);
  EXPECT_EQ(fs::file_size(path_of("shard0.h5")), before);  // the refused merge left its shard alone
}

TEST(BadInputs, PartialResultsAndReports) {
  const std::string data = clean_dataset();
  const std::string run = path_of("probe_run");
  const auto probe =
      run_orbitlaw("probe --oracle-only --data " + data + " --out " + run +
                   " --set sr.galaxies=1 --set sr.iterations=2 --set 'sr.protocols=[\"published\"]'");
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  ASSERT_EQ(run_orbitlaw("compare " + run + " --out " + path_of("cmp/")).exit_code, 0);
  // A killed run leaves no completion record; a rerun's new predictions beside old laws no longer match it.
  const std::string killed = path_of("killed_run"), mixed = path_of("mixed_run");
  fs::copy(run, killed);
  fs::remove(fs::path(killed) / "probe.complete.json");
  fs::copy(run, mixed);
  std::ofstream(fs::path(mixed) / "sr.json", std::ios::app) << " ";
  const std::string experiment = path_of("experiment_run");
  fs::create_directories(experiment);
  write_file("experiment_run/experiment.json", "{\"experiment\": \"x\", \"stages\": [");
  const std::string not_object = path_of("experiment_list");
  fs::create_directories(not_object);
  write_file("experiment_list/experiment.json", "[1, 2]");
  expect_refused("partial results, reports",
                 {{"compare " + killed + " --out " + path_of("cmp2/"), 1, "did not complete"},
                  {"compare " + mixed + " --out " + path_of("cmp3/"), 1, "sr.json has changed"},
                  {"compare " + run + " " + killed + " --out " + path_of("cmp4/"), 1, "did not complete"},
                  {"report " + experiment, 1, "not valid JSON"},
                  {"report " + not_object, 1, "must hold a JSON object"}});
  EXPECT_FALSE(fs::exists(path_of("cmp2/compare.json")));
}

TEST(BadInputs, MalformedTargetFailsBeforeTheSearch) {
  std::string csv = "r,m1,m2,F\n";
  for (int i = 1; i <= 40; ++i) csv += std::to_string(i) + ",1,1," + std::to_string(1.0 / (i * i)) + "\n";
  write_file("law.csv", csv);
  // A budget that would run for minutes: the error must come first.
  const auto r = run_orbitlaw("sr --data " + path_of("law.csv") +
                              " --x r,m1,m2 --y F --iterations 100000 --target 'm1*m2/(r^2'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_NE(r.output.find("cannot parse expression"), std::string::npos) << r.output;
  std::printf("[ bad inputs ] %-22s %d cases\n", "parse before search", 1);
}
