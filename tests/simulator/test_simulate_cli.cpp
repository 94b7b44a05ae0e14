// The simulate and inspect subcommands as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../cli/cli_runner.hpp"

using orbitlaw::test::run_orbitlaw;
namespace fs = std::filesystem;

namespace {
fs::path scratch_dir() {
  auto dir = fs::temp_directory_path() / ("orbitlaw_test_simulate_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
bool folder_has_only(const fs::path& dir, std::size_t n) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{})) == n;
}
}  // namespace

TEST(SimulateCli, WritesDatasetProvenanceAndInspects) {
  const auto out = scratch_dir() / "run" / "data.h5";
  auto r = run_orbitlaw("simulate --preset two-body --systems 20 --seed 3 --threads 2 --quiet --out " +
                        out.string() + " --set sequence_rows=101");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote 20 systems"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(fs::exists(out.string() + ".provenance.json"));
  auto info = run_orbitlaw("inspect " + out.string());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("systems         20"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("bodies/system   2:20"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("force law       F = G m1 m2 / r^2 (Newton)\n"), std::string::npos)
      << info.output;
  auto one = run_orbitlaw("inspect " + out.string() + " --system 4");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("system 4: 2 bodies"), std::string::npos) << one.output;
  EXPECT_EQ(one.lines(), 1 + 1 + 2 + 1 + 100);  // header, body header, 2 bodies, row header, 50 steps x 2
  auto bad = run_orbitlaw("inspect " + out.string() + " --system 20");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.lines(), 1) << bad.output;
}

TEST(SimulateCli, ShardsAndMerge) {
  const auto dir = scratch_dir() / "shards";
  std::string files;
  for (int i = 0; i < 2; ++i) {
    const auto shard = dir / ("part" + std::to_string(i) + ".h5");
    auto r = run_orbitlaw("simulate --preset vafa-code --systems 6 -q --set sequence_rows=60 --shard " +
                          std::to_string(i) + "/2 --out " + shard.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    files.append(" ").append(shard.string());  // (operator+ on a literal trips GCC 12's -Wrestrict here)
  }
  auto merged = run_orbitlaw("simulate --merge" + files + " --out " + (dir / "all.h5").string());
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  auto info = run_orbitlaw("inspect " + (dir / "all.h5").string());
  EXPECT_NE(info.output.find("merged          2 shards"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("systems         6"), std::string::npos) << info.output;

  // A merge into one of its own shards is refused and leaves the shard as it was.
  const auto shard0 = dir / "part0.h5";
  const auto bytes = fs::file_size(shard0);
  auto self = run_orbitlaw("simulate --merge" + files + " --out " + shard0.string());
  EXPECT_EQ(self.exit_code, 1) << self.output;
  EXPECT_EQ(self.lines(), 1) << self.output;
  EXPECT_NE(self.output.find("is the input"), std::string::npos) << self.output;
  EXPECT_EQ(fs::file_size(shard0), bytes);
  EXPECT_EQ(run_orbitlaw("inspect " + shard0.string()).exit_code, 0);

  // A merged dataset whose shard is missing, or changed since the merge, is refused on reading (HDF5 would
  // read the missing rows as zeros).
  const auto shard1 = dir / "part1.h5";
  fs::rename(shard1, dir / "moved.h5");
  info = run_orbitlaw("inspect " + (dir / "all.h5").string());
  EXPECT_EQ(info.exit_code, 1) << info.output;
  EXPECT_EQ(info.lines(), 1) << info.output;
  EXPECT_NE(info.output.find("maps shard 'part1.h5', which is missing"), std::string::npos) << info.output;
  // Same size, one byte different (in the last byte, past HDF5's superblock): caught by the checksum.
  fs::rename(dir / "moved.h5", shard1);
  {
    std::fstream edit(shard1, std::ios::in | std::ios::out | std::ios::binary);
    edit.seekg(-1, std::ios::end);
    const char last = static_cast<char>(edit.get());
    edit.seekp(-1, std::ios::end);
    edit.put(static_cast<char>(last ^ 0x5a));
  }
  info = run_orbitlaw("inspect " + (dir / "all.h5").string());
  EXPECT_EQ(info.exit_code, 1) << info.output;
  EXPECT_NE(info.output.find("same size, different checksum"), std::string::npos) << info.output;
  auto other =
      run_orbitlaw("simulate --preset vafa-code --systems 6 -q --set sequence_rows=40 --shard 1/2 --out " +
                   shard1.string());
  ASSERT_EQ(other.exit_code, 0) << other.output;
  info = run_orbitlaw("inspect " + (dir / "all.h5").string());
  EXPECT_EQ(info.exit_code, 1) << info.output;
  EXPECT_NE(info.output.find("has changed since the merge"), std::string::npos) << info.output;
}

// A counterfactual law set on the command line reaches the data: the root attribute holds k, inspect names
// the law, and the merged dataset of two k = 2.5 shards still says k = 2.5.
TEST(SimulateCli, CounterfactualForceLawIsRecordedAndShown) {
  const auto dir = scratch_dir() / "law";
  std::string files;
  for (int i = 0; i < 2; ++i) {
    const auto shard = dir / ("part" + std::to_string(i) + ".h5");
    const std::string law = "--set sequence_rows=41 --set force_law.exponent=2.5";
    auto r = run_orbitlaw("simulate --preset two-body --systems 4 -q " + law + " --shard " +
                          std::to_string(i) + "/2 --out " + shard.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    files.append(" ").append(shard.string());
  }
  const std::string shard0 = (dir / "part0.h5").string();
  auto info = run_orbitlaw("inspect " + shard0);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("force law       F = G m1 m2 / r^2.5 (counterfactual, not Newton)\n"),
            std::string::npos)
      << info.output;
  auto attributes = run_orbitlaw("inspect " + shard0 + " --attributes");
  ASSERT_EQ(attributes.exit_code, 0) << attributes.output;
  EXPECT_NE(attributes.output.find("\"force_law_exponent\": 2.5"), std::string::npos) << attributes.output;
  auto merged = run_orbitlaw("simulate --merge" + files + " --out " + (dir / "all.h5").string());
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  info = run_orbitlaw("inspect " + (dir / "all.h5").string());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("r^2.5 (counterfactual"), std::string::npos) << info.output;
}

// Numbers that used to be reinterpreted silently: a negative count fell back to the default, a negative seed
// wrapped to 2^64 - 7, a fraction was truncated, and work beyond the disk ran until killed.
TEST(SimulateCli, OutOfRangeNumbersAreRefused) {
  const auto dir = scratch_dir() / "numbers";
  fs::create_directories(dir);
  const std::string out = (dir / "x.h5").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--systems -5", "--systems"},
      {"--systems 0", "--systems"},
      {"--seed -7", "--seed"},
      {"--set seed=-7", "key 'seed' = -7 must be a whole number"},
      {"--set systems=2.5", "key 'systems' = 2.5 must be a whole number"},
      {"--set sequence_rows=99999999999", "key 'sequence_rows' = 99999999999 must be a whole number"},
      {"-j 3000000", "--threads"},
      {"--systems 99999999999999", "GB free"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_orbitlaw("simulate -q " + args + " --out " + out);
    EXPECT_NE(r.exit_code, 0) << args << ": " << r.output;
    EXPECT_EQ(r.lines(), 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
    EXPECT_TRUE(folder_has_only(dir, 0)) << args;
  }
}

TEST(SimulateCli, BadInputIsOneLineErrorAndNoOutput) {
  const auto dir = scratch_dir() / "bad";
  fs::create_directories(dir);
  const std::string out = (dir / "x.h5").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--preset nowhere", "unknown preset 'nowhere'"},
      {"--set cadences=[0]", "cadences must be a non-empty list of positive numbers"},
      {"--set planet_mass_min=-1", "planet_mass_min must be greater than 0 (got -1)"},
      {"--preset custom --set "
       "planets=[{\\\"mass\\\":1e-3,\\\"a\\\":1,\\\"e\\\":1.2,\\\"i\\\":0,\\\"Omega\\\":0,"
       "\\\"omega\\\":0,\\\"M0\\\":0}]",
       "eccentricity"},
      {"--shard 2/2", "--shard must be i/n"},
      {"--integrator leapfrog", "integrator must be one of: rkf78, bulirsch-stoer, symplectic, kepler"},
      {"--set force_law.exponent=3.5", "force_law.exponent must be a finite number with 1 < k < 3"},
      {"--set force_law.exponent=1", "force_law.exponent must be a finite number with 1 < k < 3"},
      {"--set force_law.exponant=2.5", "unknown key 'exponant'"},
      {"--integrator kepler --set force_law.exponent=2.5", "'kepler' follows analytic Newtonian orbits"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_orbitlaw("simulate -q --systems 2 " + args + " --out " + out);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_EQ(r.lines(), 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
    EXPECT_TRUE(folder_has_only(dir, 0)) << args;
  }
  auto r = run_orbitlaw("inspect " + (dir / "nothing.h5").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.lines(), 1) << r.output;
}
