#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

using orbitlaw::test::run_orbitlaw;

TEST(Cli, HelpListsEverySubcommand) {
  auto r = run_orbitlaw("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"simulate", "inspect", "train", "eval", "probe", "sr", "compare", "report"}) {
    EXPECT_NE(r.output.find(name), std::string::npos) << name << " missing from:\n" << r.output;
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
