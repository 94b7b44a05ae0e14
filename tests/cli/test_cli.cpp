#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "orbitlaw/common/config.hpp"

using orbitlaw::test::run_orbitlaw;

TEST(Cli, HelpListsEverySubcommand) {
  auto r = run_orbitlaw("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"simulate", "inspect", "train", "eval", "probe", "sr", "compare", "report"}) {
    EXPECT_NE(r.output.find(name), std::string::npos) << name << " missing from:\n" << r.output;
  }
}

// --show-config prints every key a subcommand reads with the value it would use (the --set overrides applied,
// defaults filled in) as JSON, and runs nothing; bad keys are refused as in a run.
TEST(Cli, ShowConfigPrintsTheResolvedKeysAndRunsNothing) {
  const struct {
    const char* command;
    const char* set;
    std::vector<std::string> path;  // where the overridden value shows
    orbitlaw::Json value;
    std::vector<std::string> default_key;  // a key given nowhere but resolved anyway
  } cases[] = {
      {"simulate", "--set systems=7", {"systems"}, 7, {"integrator"}},
      {"train", "--set train.lr=0.002", {"train", "lr"}, 0.002, {"model", "n_layer"}},
      {"eval", "--set sequences=5", {"sequences"}, 5, {"rollout_steps"}},
      {"probe", "--set sr.galaxies=3", {"sr", "galaxies"}, 3, {"split", "test_fraction"}},
  };
  for (const auto& c : cases) {
    const auto r = run_orbitlaw(std::string(c.command) + " --show-config " + c.set);
    ASSERT_EQ(r.exit_code, 0) << c.command << ": " << r.output;
    const auto resolved = orbitlaw::Json::parse(r.output);
    const orbitlaw::Json* node = &resolved;
    for (const auto& key : c.path) node = &node->at(key);
    EXPECT_EQ(*node, c.value) << c.command << ": " << r.output;
    node = &resolved;
    for (const auto& key : c.default_key) {
      ASSERT_TRUE(node->contains(key)) << c.command << " lacks " << key << ": " << r.output;
      node = &node->at(key);
    }
    const auto bad = run_orbitlaw(std::string(c.command) + " --show-config --set no_such_key=1");
    EXPECT_EQ(bad.exit_code, 1) << c.command << ": " << bad.output;
    EXPECT_NE(bad.output.find("no_such_key"), std::string::npos) << bad.output;
  }
}

TEST(Cli, UnknownSubcommandIsOneLineError) {
  auto r = run_orbitlaw("frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_NE(r.output.find("unknown subcommand 'frobnicate'"), std::string::npos) << r.output;
}

TEST(Cli, MissingConfigFileIsOneLineError) {
  auto r = run_orbitlaw("simulate --config /nonexistent/sim.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/sim.json"), std::string::npos) << r.output;
}

TEST(Cli, UnknownConfigKeyIsOneLineErrorNamingTheKey) {
  auto path = std::filesystem::temp_directory_path() / "orbitlaw_cli_unknown_key.json";
  std::ofstream(path) << R"({"no_such_setting": 1})";
  for (const char* sub : {"simulate", "train", "sr"}) {
    auto r = run_orbitlaw(std::string(sub) + " --config " + path.string());
    EXPECT_NE(r.exit_code, 0) << sub;
    EXPECT_EQ(r.lines(), 1) << sub << ": " << r.output;
    EXPECT_NE(r.output.find("unknown key 'no_such_setting'"), std::string::npos) << sub << ": " << r.output;
  }
  auto r = run_orbitlaw("simulate --set no_such_setting=3");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unknown key 'no_such_setting'"), std::string::npos) << r.output;
  std::filesystem::remove(path);
}

TEST(Cli, ReportNeedsARunFolder) {
  auto r = run_orbitlaw("report /nonexistent/run");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_NE(r.output.find("run folder '/nonexistent/run' does not exist"), std::string::npos) << r.output;
  auto dir = std::filesystem::temp_directory_path() / "orbitlaw_cli_not_a_run";
  std::filesystem::create_directories(dir);
  r = run_orbitlaw("report " + dir.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not an experiment run folder"), std::string::npos) << r.output;
  std::filesystem::remove_all(dir);
}
