#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "orbitlaw/common/config.hpp"

using orbitlaw::test::run_orbitlaw;

TEST(Cli, HelpListsEverySubcommand) {
  auto r = run_orbitlaw("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name :
       {"simulate", "inspect", "train", "eval", "probe", "sr", "compare", "report", "config"}) {
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

namespace {

// The dotted keys of a resolved config ("model.p"), sections descended into.
void flatten(const orbitlaw::Json& node, const std::string& prefix, std::set<std::string>& keys) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = prefix + it.key();
    if (it.value().is_object() && !it.value().empty() && key != "law_search") {
      flatten(it.value(), key + ".", keys);
    } else {
      keys.insert(key);
    }
  }
}

// The first word of each key line of `orbitlaw config keys` (description lines are indented).
std::set<std::string> listed_keys(const std::string& listing) {
  std::set<std::string> keys;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != ' ') keys.insert(line.substr(0, line.find(' ')));
  return keys;
}

}  // namespace

// The key listing and the config a subcommand actually resolves are two independent paths through the schema
// (documentation and reading): every key resolved is listed, and every key listed is resolved.
TEST(Cli, ConfigKeysListExactlyTheKeysASubcommandResolves) {
  for (const std::string sub : {"simulate", "train", "eval", "probe"}) {
    const auto listing = run_orbitlaw("config keys " + sub);
    ASSERT_EQ(listing.exit_code, 0) << sub << ": " << listing.output;
    const auto shown = run_orbitlaw(sub + " --show-config");
    ASSERT_EQ(shown.exit_code, 0) << sub << ": " << shown.output;
    std::set<std::string> resolved;
    flatten(orbitlaw::Json::parse(shown.output), "", resolved);
    std::set<std::string> listed = listed_keys(listing.output);
    // A probe protocol's section holds the sr keys again, for that protocol alone (listed once, as sr.*).
    std::erase_if(resolved, [](const std::string& k) {
      return k.starts_with("sr.published.") || k.starts_with("sr.extended.");
    });
    if (sub == "probe") listed.erase("sr.published"), listed.erase("sr.extended");
    // Keys only a custom preset reads.
    if (sub == "simulate") listed.erase("star_mass"), listed.erase("planets");
    EXPECT_EQ(listed, resolved) << sub << "\nlisted:\n" << listing.output << "\nresolved:\n" << shown.output;
  }
  const auto train = run_orbitlaw("config keys train");
  EXPECT_NE(train.output.find("model.p "), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("integer, default 2, at least 1"), std::string::npos)
      << train.output;  // n_layer
  const auto bad = run_orbitlaw("config keys frobnicate");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.lines(), 1) << bad.output;
}

TEST(Cli, ConfigReferenceIsGenerated) {
  const auto generated = run_orbitlaw("config keys all --markdown");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  std::ifstream in(std::string(ORBITLAW_SOURCE_DIR) + "/docs/config.md");
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), generated.output)
      << "docs/config.md differs from the schemas: run  orbitlaw config keys all --markdown > docs/config.md";
}

TEST(Cli, ConfigShowIsShowConfigAndHelpPointsToTheKeys) {
  const auto show = run_orbitlaw("config show train --set model.p=3 --set model.attention=lssar");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(show.output,
            run_orbitlaw("train --show-config --set model.p=3 --set model.attention=lssar").output);
  EXPECT_EQ(orbitlaw::Json::parse(show.output)["model"]["p"], 3.0);
  const auto missing = run_orbitlaw("config show");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.lines(), 1) << missing.output;
  for (const std::string sub : {"train", "probe"}) {
    const auto help = run_orbitlaw(sub + " --help");
    EXPECT_NE(help.output.find("orbitlaw config keys " + sub), std::string::npos) << help.output;
  }
  // The registry's kinds, each with the keys it reads.
  const auto kinds = run_orbitlaw("config kinds");
  for (const char* kind : {"softmax", "lssa", "lssar", "ssmax", "window", "sigmoid"})
    EXPECT_NE(("\n" + kinds.output).find(std::string("\n") + kind + " "), std::string::npos) << kinds.output;
  EXPECT_NE(kinds.output.find("model.p, model.offset_rows"), std::string::npos) << kinds.output;
  const auto unknown = run_orbitlaw("train --show-config --set model.attention=linear");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(
      unknown.output.find("model.attention must be one of: softmax, lssa, lssar, ssmax, window, sigmoid"),
      std::string::npos)
      << unknown.output;
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
