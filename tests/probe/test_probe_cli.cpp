// `orbitlaw probe` and `orbitlaw compare` as a user runs them: outputs, provenance, and one-line errors.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../cli/cli_runner.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/units.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "tiny_checkpoint.hpp"

namespace fs = std::filesystem;
using orbitlaw::test::run_orbitlaw;

namespace {

// A small law-search budget: the CLI tests check plumbing, not discovery. The two-body preset's tiny masses
// barely bend a track within 30 steps, so every row counts as observable here (bin width 0).
const std::string kQuick =
    " --set threads=2 --set finetune.steps=6 --set finetune.batch_size=4 --set finetune.eval_interval=3"
    " --set observable_bin_width=0"
    " --set sr.galaxies=2 --set sr.galaxy_rows=20 --set sr.nearest_rows=30 --set sr.iterations=3"
    " --set sr.restarts=1 --set sr.populations=2 --set sr.population_size=12";

// `orbitlaw probe` of the tiny checkpoint with the quick budget and `settings` (" --set k=v ...").
orbitlaw::test::CommandResult probe_model(const std::string& data, const fs::path& out,
                                          const std::string& settings) {
  return run_orbitlaw("probe --checkpoint " + orbitlaw::test::tiny_checkpoint(41) + " --data " + data +
                      " --out " + out.string() + kQuick + settings);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(ProbeCli, ProbeThenCompareWritesEveryOutput) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-run";
  auto result = probe_model(data, out, " --set label=tiny-softmax --set threads=2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* name : {"predictions.h5", "sr.json", "probe.json", "probe.provenance.json"}) {
    EXPECT_TRUE(fs::exists(out / name)) << name;
  }
  std::ifstream provenance(out / "probe.provenance.json");
  EXPECT_EQ(orbitlaw::Json::parse(provenance).at("compute").at("cpu_threads"), 2);  // the threads it used
  const auto predictions = orbitlaw::probe::read_predictions((out / "predictions.h5").string());
  EXPECT_EQ(predictions.probe_names(),
            (std::vector<std::string>{"finetune", "linear", "knn", "knn_log", "newton", "random"}));
  EXPECT_EQ(predictions.model, "tiny-softmax");
  EXPECT_EQ(predictions.rows.size(), 120);  // 6 test systems x 20 visible planet rows (rows 0, 2, ..., 38)
  EXPECT_TRUE(predictions.provenance.contains("git_revision") ||
              predictions.provenance.contains("revision") || !predictions.provenance.empty());
  EXPECT_EQ(predictions.config["split"]["observed_rows"], 39);  // 41 token rows: 40 inputs, cadence first

  const fs::path oracle = orbitlaw::test::probe_temp_dir() / "cli-oracle";
  result = run_orbitlaw("probe --oracle-only --data " + data + " --out " + oracle.string() + kQuick);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(orbitlaw::probe::read_predictions((oracle / "predictions.h5").string()).probe_names(),
            (std::vector<std::string>{"knn", "knn_log", "newton", "random"}));
  // The linear probe's per-layer test R^2 is computed (it was NaN while the probe held no test labels).
  const auto summary = orbitlaw::Json::parse(read_file(out / "probe.json"));
  const auto& layers = summary["probes"]["linear"]["test_r2_unused_for_selection"];
  ASSERT_EQ(layers.size(), 4u);  // embedding, 2 blocks, final LayerNorm
  for (const auto& r2 : layers) EXPECT_TRUE(r2.is_number()) << layers;
  EXPECT_EQ(summary["observable"]["bin_width"], 0.0);
  EXPECT_TRUE(summary["distribution"]["in_distribution"].get<bool>()) << summary["distribution"];

  const fs::path compare = orbitlaw::test::probe_temp_dir() / "cli-compare";
  fs::create_directories(compare);
  result = run_orbitlaw("compare " + out.string() + " " + oracle.string() + " --out " + compare.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string md = read_file(compare / "compare.md");
  EXPECT_NE(md.find("| tiny-softmax | finetune | published |"), std::string::npos) << md;
  EXPECT_NE(md.find("| oracle | knn | extended |"), std::string::npos) << md;
  const auto json = orbitlaw::Json::parse(read_file(compare / "compare.json"));
  EXPECT_EQ(json["rows"].size(), 20u);  // (6 + 4 probes) x 2 protocols
  EXPECT_NE(md.find("| srbench | strict | exponents |"), std::string::npos) << md;
  EXPECT_TRUE(json.contains("provenance"));
  // Two runs under one label would share the accuracy table's rows, one silently dropped: refused.
  const auto twice =
      run_orbitlaw("compare " + out.string() + " " + out.string() + " --out " + (compare / "twice").string());
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_EQ(twice.lines(), 1) << twice.output;
  EXPECT_NE(twice.output.find("are both labelled 'tiny-softmax'"), std::string::npos) << twice.output;
}

TEST(ProbeCli, BadInputGivesOneLineErrors) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-bad";
  auto result = run_orbitlaw("probe --data /nonexistent.h5 --out " + out.string());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.lines(), 1) << result.output;
  result = run_orbitlaw("probe --oracle-only --data " + data + " --out " + out.string() + " --set knn.kk=3");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("unknown key 'kk'"), std::string::npos) << result.output;
  result = run_orbitlaw("probe --data " + data + " --out " + out.string() + " --set 'probes=[\"finetune\"]'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("needs a model"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(out / "predictions.h5"));
  result = run_orbitlaw("compare /nonexistent-run --out " + out.string() + "/x");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.lines(), 1) << result.output;
  // The controls are checked like any key: the raw-input probes need the model's input, a law needs an
  // exponent.
  result = run_orbitlaw("probe --oracle-only --data " + data + " --out " + out.string() +
                        " --set 'probes=[\"raw_input\"]'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("needs a model"), std::string::npos) << result.output;
  for (const char* bad : {"-1", "\"two\"", "11"}) {
    result = probe_model(data, out, std::string(" --set labels.law_exponent=") + bad);
    EXPECT_EQ(result.exit_code, 1) << bad;
    EXPECT_EQ(result.lines(), 1) << result.output;
    EXPECT_NE(result.output.find("labels.law_exponent"), std::string::npos) << result.output;
  }
}

TEST(ProbeCli, ControlsRunBesideTheProbesAndAreRecorded) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-controls";
  const auto result =
      probe_model(data, out,
                  " --set 'probes=[\"linear\", \"raw_input\", \"raw_input_vector\", \"knn_log\"]'"
                  " --set 'sr.probes=[\"raw_input_vector\"]' --set 'sr.protocols=[\"published\"]'"
                  " --set labels.law_exponent=2.5 --set target=acceleration");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto predictions = orbitlaw::probe::read_predictions((out / "predictions.h5").string());
  EXPECT_EQ(predictions.probe_names(),
            (std::vector<std::string>{"linear", "raw_input", "raw_input_vector", "knn_log"}));
  const auto summary = orbitlaw::Json::parse(read_file(out / "probe.json"));
  EXPECT_EQ(summary["config"]["labels"]["law_exponent"], 2.5) << summary["config"];
  EXPECT_EQ(summary["probes"]["raw_input"]["options"]["window"], 3);
  // The labels the probes were fitted to and scored on follow G m2 / r^2.5, not the data's 1/r^2.
  const auto& rows = predictions.rows;
  ASSERT_GT(rows.size(), 0);
  for (std::int64_t i = 0; i < rows.size(); ++i)
    EXPECT_NEAR(rows.force[i] * std::pow(rows.r[i], 2.5) / (orbitlaw::kGravitationalConstant * rows.m2[i]),
                1.0, 1e-9);
}

TEST(ProbeCli, RunTimeLimitCutsLawSearchesButWritesEveryOutput) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-time-limit";
  // 10^6 iterations per restart would run for hours; a 6 s budget must end the run with complete outputs.
  const auto start = std::chrono::steady_clock::now();
  auto result = run_orbitlaw("probe --oracle-only --data " + data + " --out " + out.string() + kQuick +
                             " --set sr.iterations=1000000 --set time_limit_seconds=6 --set device=cpu"
                             " --set sr.time_limit_seconds=100");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_LT(seconds, 60) << "the time limit did not stop the law searches";
  const auto sr = orbitlaw::Json::parse(read_file(out / "sr.json"));
  ASSERT_EQ(sr["searches"].size(), 8u);  // knn, knn_log, newton, random x published, extended
  for (const auto& search : sr["searches"]) {
    const double per_galaxy = search["options"]["time_limit_seconds_per_galaxy"];
    EXPECT_GT(per_galaxy, 0);
    EXPECT_LE(per_galaxy, 6.0 / 2);  // 2 galaxies share at most the whole budget
    // The shared sr key is the per-galaxy limit of every protocol; what was asked and what applied are both
    // recorded, and the lowering is said on stderr.
    EXPECT_EQ(search["options"]["time_limit_seconds_requested"], 100.0);
    for (const auto& galaxy : search["galaxies"]) {
      EXPECT_LT(galaxy["iterations_run"].get<int>(), 1000000);
      EXPECT_FALSE(galaxy["front"].empty());
    }
  }
  EXPECT_NE(result.output.find("(requested 100 s; lowered to this search's share of time_limit_seconds)"),
            std::string::npos)
      << result.output;
  EXPECT_TRUE(fs::exists(out / "predictions.h5"));
  EXPECT_TRUE(fs::exists(out / "probe.json"));
}

TEST(ProbeCli, DeviceSettingIsCheckedAndRecorded) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-device";
  auto result = probe_model(data, out, " --set device=quantum");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.lines(), 1) << result.output;
  EXPECT_NE(result.output.find("quantum"), std::string::npos) << result.output;
  if (!torch::cuda::is_available()) {
    result = probe_model(data, out, " --set device=cuda");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.lines(), 1) << result.output;
  }
  // Time limits must be finite and non-negative.
  for (const char* bad :
       {"time_limit_seconds=-1", "time_limit_seconds=1e999", "finetune.time_limit_seconds=-2"}) {
    result = probe_model(data, out, std::string(" --set ") + bad);
    EXPECT_EQ(result.exit_code, 1) << bad;
    EXPECT_EQ(result.lines(), 1) << result.output;
    EXPECT_NE(result.output.find("time_limit_seconds"), std::string::npos) << result.output;
  }
  EXPECT_FALSE(fs::exists(out / "predictions.h5"));
  result = probe_model(data, out, " --set device=cpu");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("on cpu"), std::string::npos) << result.output;
  const auto predictions = orbitlaw::probe::read_predictions((out / "predictions.h5").string());
  EXPECT_EQ(predictions.config["device"], "cpu");
}

TEST(ProbeCli, ForceVectorTaskWritesTheArrowsOfEveryProbe) {
  const auto data = orbitlaw::test::solar_dataset(1, 400);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-vector";
  auto result = probe_model(data, out, " --set task=vector --set vector.label_fraction=0.1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto summary = orbitlaw::Json::parse(read_file(out / "probe.json"));
  EXPECT_EQ(summary["task"], "vector");
  // 39 visible rows hold 35 planet rows: ceil(0.1 x 35) = 4 train, ceil(0.01 x 35) = 1 validation, 30 test.
  EXPECT_EQ(summary["split"]["train_rows"], 4);
  EXPECT_EQ(summary["split"]["validation_rows"], 1);
  EXPECT_EQ(summary["split"]["test_rows"], 30);
  EXPECT_GT(summary["accuracy"]["newton"]["r2"].get<double>(), 1 - 1e-9);
  EXPECT_TRUE(summary["accuracy"].contains("finetune"));
  EXPECT_TRUE(summary["accuracy"].contains("knn"));
  EXPECT_TRUE(fs::exists(out / "predictions.h5"));
  // The vector file is not a magnitude predictions file: compare says so in one line.
  EXPECT_THROW(orbitlaw::probe::read_predictions((out / "predictions.h5").string()), orbitlaw::Error);
  result = probe_model(data, out, " --set task=vector --set 'probes=[\"linear\"]'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.lines(), 1) << result.output;
}

TEST(ProbeCli, ProbeDataFromAnUnseenCadenceIsRefused) {
  // The two-body preset draws both cadences; a model trained on weekly data alone never saw the other.
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const auto weekly = orbitlaw::test::tiny_checkpoint(41, 1, {7.0 / 365.25});
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-unseen-cadence";
  auto result =
      run_orbitlaw("probe --checkpoint " + weekly + " --data " + data + " --out " + out.string() + kQuick);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.lines(), 1) << result.output;
  EXPECT_NE(result.output.find("never seen in training"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(out / "predictions.h5"));
  // Told to allow it, the run goes on and records what was out of distribution.
  result =
      run_orbitlaw("probe --checkpoint " + weekly + " --data " + data + " --out " + out.string() + kQuick +
                   " --set allow_distribution_shift=true --set 'probes=[\"linear\",\"newton\"]'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto summary = orbitlaw::Json::parse(read_file(out / "probe.json"));
  EXPECT_FALSE(summary["distribution"]["in_distribution"].get<bool>());
  EXPECT_EQ(summary["distribution"]["unseen_cadences"].size(), 1u);
}

TEST(ProbeCli, ObservableRowsDefaultToOneTokenizerBin) {
  // Without an override the bin width is the checkpoint tokenizer's (tiny preset: 500 bins over 100 AU).
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const fs::path out = orbitlaw::test::probe_temp_dir() / "cli-observable";
  auto result = run_orbitlaw("probe --checkpoint " + orbitlaw::test::tiny_checkpoint(41) + " --data " + data +
                             " --out " + out.string() +
                             " --set 'probes=[\"newton\"]' --set 'sr.protocols=[]' --set threads=2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto predictions = orbitlaw::probe::read_predictions((out / "predictions.h5").string());
  EXPECT_DOUBLE_EQ(predictions.observable_bin_width, 0.2);
  std::int64_t observable = 0;
  for (Eigen::Index i = 0; i < predictions.rows.size(); ++i)
    observable += predictions.rows.deviation[i] > 0.2;
  const auto summary = orbitlaw::Json::parse(read_file(out / "probe.json"));
  EXPECT_DOUBLE_EQ(summary["observable"]["fraction"].get<double>(),
                   static_cast<double>(observable) / static_cast<double>(predictions.rows.size()));
}

// threads = 0 (the default) is this process's share of the machine, OMP_NUM_THREADS when set, and the
// provenance records the count in use: under a test runner's OMP_NUM_THREADS=1 a probe that took every core
// would oversubscribe the machine beside the other tests.
TEST(ProbeCli, ThreadsFollowOmpNumThreadsByDefaultAndTheCountIsRecorded) {
  const auto data = orbitlaw::test::two_body_dataset(60, 30);
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string saved_value = saved ? saved : "";
  ::setenv("OMP_NUM_THREADS", "3", 1);
  for (const std::string threads : {"", " --set threads=0", " --set threads=1"}) {
    SCOPED_TRACE(threads);
    const fs::path out = orbitlaw::test::probe_temp_dir() / ("cli-threads" + std::to_string(threads.size()));
    auto result = run_orbitlaw("probe --checkpoint " + orbitlaw::test::tiny_checkpoint(41) + " --data " +
                               data + " --out " + out.string() +
                               " --set 'probes=[\"newton\"]' --set 'sr.protocols=[]'" + threads);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const auto provenance = orbitlaw::Json::parse(read_file(out / "probe.provenance.json"));
    EXPECT_EQ(provenance["config"]["threads"].get<int>(), threads.ends_with("1") ? 1 : 3);
  }
  if (saved)
    ::setenv("OMP_NUM_THREADS", saved_value.c_str(), 1);
  else
    ::unsetenv("OMP_NUM_THREADS");
}
