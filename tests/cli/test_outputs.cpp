// The output discipline, by class. Destroyed outputs: a command whose output is one of its inputs (by another
// name too), or lies inside an input folder, or is a report folder holding files no report wrote, is refused
// with one line and exit 1, and the input is left byte for byte as it was; a refused probe leaves a finished
// probe folder complete. Shared outputs: two real processes on one --out, the second refused with one line
// that names the first's pid, and the first's run whole.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli_runner.hpp"
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/stage_record.hpp"

using orbitlaw::file_checksum;
using orbitlaw::Json;
using orbitlaw::test::CommandResult;
using orbitlaw::test::run_orbitlaw;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

fs::path scratch() {
  static const fs::path dir = orbitlaw::test::fresh_scratch_dir("orbitlaw_outputs");
  return dir;
}

std::string path_of(const std::string& name) { return (scratch() / name).string(); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A refusal: exit 1, one line holding `phrase`.
void expect_refused(const CommandResult& r, const std::string& phrase, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.output;
  EXPECT_EQ(r.lines(), 1) << what << "\n" << r.output;
  EXPECT_NE(r.output.find(phrase), std::string::npos) << what << ": expected '" << phrase << "' in\n"
                                                      << r.output;
}

const std::string& dataset() {
  static const std::string path = [] {
    const std::string p = path_of("data.h5");
    const auto r = run_orbitlaw(
        "simulate --preset two-body --systems 40 --seed 5 -j 2 -q --set sequence_rows=61 --out " + p);
    if (r.exit_code != 0) ADD_FAILURE() << r.output;
    return p;
  }();
  return path;
}

const std::string kTiny =
    " --preset tiny --set model.n_layer=1 --set model.n_embd=32 --set model.block_size=32"
    " --set train.batch_size=4 --set train.eval_interval=20 --set train.eval_batches=2"
    " --set train.threads=1 --set train.device=cpu";

const std::string& checkpoint() {
  static const std::string path = [] {
    const std::string run = path_of("model");
    const auto r =
        run_orbitlaw("train" + kTiny + " --set train.max_steps=2 --data " + dataset() + " --out " + run);
    if (r.exit_code != 0) ADD_FAILURE() << r.output;
    return run + "/checkpoint.pt";
  }();
  return path;
}

const std::string kOracleProbe =
    " --set sr.galaxies=1 --set sr.iterations=2 --set 'sr.protocols=[\"published\"]'";

// A finished oracle probe folder.
std::string finished_probe(const std::string& name) {
  const std::string out = path_of(name);
  const auto r = run_orbitlaw("probe --oracle-only --data " + dataset() + " --out " + out + kOracleProbe);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

// Starts `orbitlaw args` in the background; returns its pid (the binary's own: exec'd by the shell).
pid_t start_orbitlaw(const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    const std::string command = std::string("exec ") + ORBITLAW_BINARY + " " + args;
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits until the lock record at `path` names `pid` as its holder, or the process ends; true when it does.
bool wait_for_holder(const std::string& path, pid_t pid) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    const Json record = Json::parse(read_text(path), nullptr, false);
    if (!record.is_discarded() && record.is_object() && record.value("pid", -1LL) == pid) return true;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(DestroyedOutputs, ACommandNeverWritesOntoItsInputs) {
  const std::string data = dataset(), model = checkpoint();
  const std::string data_sum = file_checksum(data), model_sum = file_checksum(model);
  // The same files under other names: identity, not the name, decides.
  const std::string data_link = path_of("data_link.h5"), model_link = path_of("model_link.pt");
  fs::create_symlink(data, data_link);
  fs::create_hard_link(model, model_link);
  const std::string config = path_of("simulate.json");
  std::ofstream(config) << R"({"preset": "two-body", "systems": 2})";
  const std::string config_sum = file_checksum(config);
  const std::string eval = "eval --set sequences=4 --checkpoint " + model + " --data " + data + " --out ";
  int cases = 0;
  for (const auto& [args, phrase] : std::vector<std::pair<std::string, std::string>>{
           {eval + model, "is the input"},
           {eval + data, "is the input"},
           {eval + data_link, "is the input"},
           {eval + model_link, "is the input"},
           {"train" + kTiny + " --data " + data + " --pretokenize " + data, "is the input"},
           {"train" + kTiny + " --data " + data + " --pretokenize " + data_link, "is the input"},
           {"simulate -q --config " + config + " --out " + config, "is the input"},
       }) {
    expect_refused(run_orbitlaw(args), phrase, args);
    ++cases;
  }
  EXPECT_EQ(file_checksum(data), data_sum) << "the dataset was overwritten";
  EXPECT_EQ(file_checksum(model), model_sum) << "the checkpoint was overwritten";
  EXPECT_EQ(file_checksum(config), config_sum) << "the config was overwritten";
  // The refusals took no lock that outlives them, and the same commands with another output work.
  EXPECT_EQ(run_orbitlaw(eval + path_of("eval.json")).exit_code, 0);
  EXPECT_FALSE(fs::exists(path_of("eval.json.lock")));
  std::printf("[ outputs ] onto inputs: %d cases\n", cases);
}

TEST(DestroyedOutputs, AFolderOfTheUsersIsNotOverwritten) {
  // Folders that hold a file of the user's under a name a command writes, and none of the tool's records.
  int cases = 0;
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::string>>{
           {"metrics.jsonl", "train" + kTiny + " --set train.max_steps=2 --data " + dataset() + " --out "},
           {"sr.json", "probe --oracle-only --data " + dataset() + kOracleProbe + " --out "},
           {"compare.json", "compare " + finished_probe("probe_for_users_folder") + " --out "},
       }) {
    const std::string folder = path_of("users_" + std::to_string(cases++));
    fs::create_directories(folder);
    std::ofstream(folder + "/" + name) << "the user's file";
    expect_refused(run_orbitlaw(args + folder + "/"), "which no orbitlaw run wrote there", args + folder);
    EXPECT_EQ(read_text(folder + "/" + name), "the user's file") << args;
  }
  // The same command into a folder a run of it wrote is fine: a rerun's outputs replace the first run's.
  const std::string probe = finished_probe("probe_rerun");
  EXPECT_EQ(
      run_orbitlaw("probe --oracle-only --data " + dataset() + kOracleProbe + " --out " + probe).exit_code,
      0);
  std::printf("[ outputs ] folders of the user's: %d cases\n", cases);
}

TEST(DestroyedOutputs, CompareWritesNothingIntoTheProbeFoldersItReads) {
  const std::string probe = finished_probe("probe_compared");
  const std::string sr_before = read_text(probe + "/sr.json");
  // P/sr would be P/sr.json and P/sr.md: the first is the probe's own law file.
  expect_refused(run_orbitlaw("compare " + probe + " --out " + probe + "/sr"), "inside the input folder",
                 "compare P --out P/sr");
  expect_refused(run_orbitlaw("compare " + probe + " --out " + probe + "/"), "is the input",
                 "compare P --out P/");
  EXPECT_EQ(read_text(probe + "/sr.json"), sr_before);
  EXPECT_FALSE(fs::exists(probe + "/sr.md"));
  EXPECT_FALSE(fs::exists(probe + "/compare.json"));
  EXPECT_EQ(run_orbitlaw("compare " + probe + " --out " + path_of("cmp/")).exit_code, 0);
}

TEST(DestroyedOutputs, ReportRemovesOnlyThePlotsAReportWrote) {
  const std::string run = path_of("experiment_run");
  fs::create_directories(run);
  std::ofstream(run + "/experiment.json") << R"({"experiment": "x", "stages": []})";
  // A folder of the user's: refused, every file kept.
  const std::string foreign = path_of("my_plots");
  fs::create_directories(foreign);
  std::ofstream(foreign + "/figure.png") << "the user's plot";
  expect_refused(run_orbitlaw("report " + run + " --out " + foreign), "holds files that no report wrote",
                 "report into a folder of the user's");
  EXPECT_EQ(read_text(foreign + "/figure.png"), "the user's plot");
  // A report folder: rewritten; a plot the user added to it stays, a plot the earlier report listed goes.
  const std::string report = path_of("report");
  const auto first = run_orbitlaw("report " + run + " --out " + report);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::ofstream(report + "/added.png") << "the user's plot";
  Json record = orbitlaw::load_json_file(report + "/report.json");
  record["plots"] = Json::array({"old_plot.png"});  // as if the earlier report had drawn one
  std::ofstream(report + "/report.json") << record.dump();
  std::ofstream(report + "/old_plot.png") << "a plot of the earlier report";
  const auto second = run_orbitlaw("report " + run + " --out " + report);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(read_text(report + "/added.png"), "the user's plot");
  EXPECT_FALSE(fs::exists(report + "/old_plot.png"));
  // Inside the run folder's stage folders, never.
  fs::create_directories(run + "/models");
  expect_refused(run_orbitlaw("report " + run + " --out " + run + "/models"), "is the input",
                 "report into the run's models folder");
}

TEST(DestroyedOutputs, ARefusedProbeLeavesAFinishedProbeFolderComplete) {
  const std::string probe = finished_probe("probe_finished");
  const std::string record = read_text(probe + "/probe.complete.json");
  const std::string args = "probe --oracle-only --data " + dataset() + " --out " + probe + kOracleProbe;
  // Bad input found only once the stage has begun: more systems than the data holds, too few to split.
  for (const auto& [set, phrase] : std::vector<std::pair<std::string, std::string>>{
           {" --set split.systems=1000", "but the dataset holds"}, {" --set split.systems=2", "too few"}}) {
    expect_refused(run_orbitlaw(args + set), phrase, "probe" + set);
    EXPECT_EQ(read_text(probe + "/probe.complete.json"), record) << set;
    EXPECT_FALSE(fs::exists(probe + "/probe.progress.json")) << "the refused run's progress record was left";
  }
  const auto compared = run_orbitlaw("compare " + probe + " --out " + path_of("cmp_finished/"));
  EXPECT_EQ(compared.exit_code, 0) << compared.output;
  // A folder that a refused run created (to lock it) and wrote nothing into is gone with it.
  const std::string fresh = path_of("probe_refused");
  expect_refused(run_orbitlaw("probe --oracle-only --data " + path_of("missing.h5") + " --out " + fresh),
                 "does not exist", "probe of missing data into a new folder");
  EXPECT_FALSE(fs::exists(fresh));
}

TEST(SharedOutputs, TwoTrainingsIntoOneFolder) {
  const std::string out = path_of("shared_train");
  const std::string args =
      "train" + kTiny + " --set train.max_steps=400 --data " + dataset() + " --out " + out;
  const pid_t first = start_orbitlaw(args + " --set train.seed=1");
  ASSERT_TRUE(wait_for_holder(out + "/.orbitlaw.lock", first))
      << "the first training did not take the folder's lock";
  const auto second = run_orbitlaw(args + " --set train.seed=2");
  ASSERT_EQ(wait_exit(first), 0);
  expect_refused(second, "pid " + std::to_string(first), "a second training into the same folder");
  EXPECT_NE(second.output.find("in use by another run"), std::string::npos) << second.output;
  // The folder is the first run's alone; its lock, released, stays as the record of that run.
  const Json provenance = orbitlaw::load_json_file(out + "/train.provenance.json");
  EXPECT_EQ(provenance["seed"], 1) << provenance.dump();
  const Json lock = orbitlaw::load_json_file(out + "/.orbitlaw.lock");
  EXPECT_EQ(lock["pid"], first) << lock.dump();
  // A record left by a run that ended holds nothing: the next run takes the folder.
  const auto resumed = run_orbitlaw(args + " --set train.seed=1 --set train.max_steps=402 --resume");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(orbitlaw::load_json_file(out + "/.orbitlaw.lock")["pid"], first);
}

TEST(SharedOutputs, TwoProbesIntoOneFolder) {
  const std::string out = path_of("shared_probe");
  const std::string args = "probe --checkpoint " + checkpoint() + " --data " + dataset() + " --out " + out +
                           " --set threads=1 --set device=cpu --set finetune.steps=400 --set "
                           "finetune.batch_size=4 --set 'probes=[\"finetune\",\"knn\"]'" +
                           kOracleProbe;
  const pid_t first = start_orbitlaw(args + " --set label=first");
  ASSERT_TRUE(wait_for_holder(out + "/.orbitlaw.lock", first))
      << "the first probe did not take the folder's lock";
  const auto second = run_orbitlaw(args + " --set label=second");
  ASSERT_EQ(wait_exit(first), 0);
  expect_refused(second, "pid " + std::to_string(first), "a second probe into the same folder");
  const Json summary = orbitlaw::load_json_file(out + "/probe.json");
  EXPECT_EQ(summary["model"], "first") << summary.dump();
  EXPECT_EQ(run_orbitlaw("compare " + out + " --out " + path_of("cmp_shared/")).exit_code, 0);
}
