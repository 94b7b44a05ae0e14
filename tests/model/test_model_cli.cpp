// orbitlaw train and orbitlaw eval as a user runs them: outputs, resume, the pre-tokenized form, the eval
// JSON shape, and one-line errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include "../cli/cli_runner.hpp"
#include "dataset_fixture.hpp"
#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/model/checkpoint.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;
using orbitlaw::test::run_orbitlaw;

class ModelCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("orbitlaw_model_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static std::string small_run() {
    return " --preset tiny --set model.n_layer=1 --set model.n_embd=32 --set model.block_size=32"
           " --set train.max_steps=12 --set train.batch_size=4 --set train.eval_interval=6"
           " --set train.eval_batches=2 --set train.threads=1 --set train.device=cpu";
  }
  static inline fs::path dir_;
};

Json read_json(const std::string& file) {
  std::ifstream in(file);
  return Json::parse(in);
}

TEST_F(ModelCli, TrainThenEvalWritesTheDocumentedOutputs) {
  const auto& data = testing::two_body_dataset();
  auto trained = run_orbitlaw("train --data " + data + " --out " + path("run") + small_run());
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  for (const char* file : {"checkpoint.pt", "metrics.jsonl", "train.provenance.json"})
    EXPECT_TRUE(fs::exists(path("run") + "/" + file)) << file;
  auto provenance = read_json(path("run/train.provenance.json"));
  EXPECT_EQ(provenance.dump().find("\"block_size\":32") != std::string::npos, true) << provenance.dump();

  // Resume with a larger step budget continues from step 12.
  auto resumed = run_orbitlaw("train --resume --data " + data + " --out " + path("run") + small_run() +
                              " --set train.max_steps=15");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("trained 15 steps"), std::string::npos) << resumed.output;

  auto evaluated = run_orbitlaw("eval --checkpoint " + path("run/checkpoint.pt") + " --data " + data +
                                " --out " + path("run/eval.json") +
                                " --set sequences=6 --set length_factors=[1] --set rollout_steps=[1,5,20]"
                                " --set threads=2");
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  auto eval = read_json(path("run/eval.json"));
  EXPECT_EQ(eval.at("format"), "orbitlaw-eval");
  EXPECT_TRUE(eval.at("loss").is_number());
  EXPECT_TRUE(eval.at("accuracy").is_number());
  EXPECT_GT(eval.at("next_token").at("unigram_loss").get<double>(), 0);
  for (const char* k : {"1", "5", "20"}) {
    const auto& t = eval.at("trajectory_error").at(k);
    for (const char* key :
         {"model", "previous_position", "per_orbit_mean", "constant_velocity", "token_oracle"})
      EXPECT_TRUE(t.at(key).is_number() && t.at("median").at(key).is_number()) << k << " " << key;
    EXPECT_GT(t.at("rollouts").get<int>(), 0);
  }
  // Medians: the token oracle's is within half a bin diagonal like each of its values; bodies move, so the
  // previous position's is not zero.
  const auto& one = eval["trajectory_error"]["1"];
  EXPECT_LT(one["median"]["token_oracle"].get<double>(), 0.1 * std::sqrt(2.0));
  EXPECT_GT(one["median"]["previous_position"].get<double>(), 0);
  // Bins are 0.2 AU wide (tiny preset): the bin-centre floor is at most half a bin diagonal.
  EXPECT_LT(eval["trajectory_error"]["1"]["token_oracle"].get<double>(), 0.1 * std::sqrt(2.0));
  ASSERT_EQ(eval.at("length_extrapolation").size(), 1u);
  EXPECT_EQ(eval["length_extrapolation"][0]["factor"], 1);
  ASSERT_EQ(eval.at("attention").size(), 2u);  // 1 layer x 2 heads
  for (const auto& head : eval["attention"]) {
    EXPECT_GE(head.at("entropy").get<double>(), 0);
    EXPECT_GE(head.at("mean_distance").get<double>(), 0);
  }
  // The thread count it used and the CPU capability, on which its bits depend.
  const auto compute = read_json(path("run/eval.provenance.json")).at("compute");
  EXPECT_EQ(compute.at("cpu_threads"), 2);
  EXPECT_FALSE(compute.at("cpu_capability").get<std::string>().empty());
}

TEST_F(ModelCli, ResumeRefusesOtherDataOrSettingsUnlessTold) {
  const auto& data = testing::two_body_dataset();
  const std::string out = path("resume-check");
  ASSERT_EQ(run_orbitlaw("train --data " + data + " --out " + out + small_run()).exit_code, 0);
  const std::string checkpoint_before = orbitlaw::file_checksum(out + "/checkpoint.pt");
  // Another learning rate, another seed, other data (the same bytes under another name are the same data).
  const std::string other = path("other-data.h5");
  simulator::write_dataset(
      simulator::simulation_config_from_json(
          Json{{"preset", "two-body"}, {"systems", 200}, {"seed", 8}, {"sequence_rows", 129}}),
      other, simulator::WriteOptions{});
  const std::string renamed = path("same-data.h5");
  fs::copy_file(data, renamed);
  for (const auto& [change, what] :
       std::vector<std::pair<std::string, std::string>>{{" --set train.lr=0.01", "train.lr"},
                                                        {" --set train.seed=9", "train.seed"},
                                                        {" --set model.n_embd=64", "n_embd"}}) {
    const auto refused = run_orbitlaw("train --resume --data " + data + " --out " + out + small_run() +
                                      change + " --set train.max_steps=15");
    EXPECT_EQ(refused.exit_code, 1) << change << refused.output;
    const auto error = refused.output.find("orbitlaw: error: ");
    ASSERT_NE(error, std::string::npos) << refused.output;
    EXPECT_EQ(refused.output.find('\n', error), refused.output.size() - 1) << "one error line, the last";
    EXPECT_NE(refused.output.find(what, error), std::string::npos) << refused.output;
  }
  const auto other_data = run_orbitlaw("train --resume --data " + other + " --out " + out + small_run() +
                                       " --set train.max_steps=15");
  EXPECT_EQ(other_data.exit_code, 1) << other_data.output;
  EXPECT_NE(other_data.output.find("the contents of --data"), std::string::npos) << other_data.output;
  // Refused resumes leave the run as it was.
  EXPECT_EQ(orbitlaw::file_checksum(out + "/checkpoint.pt"), checkpoint_before);
  EXPECT_EQ(read_json(out + "/train.provenance.json")["segments"].size(), 1u);

  // The same data under another name, and a longer run: resumed, one segment more, nothing changed.
  auto resumed = run_orbitlaw("train --resume --data " + renamed + " --out " + out + small_run() +
                              " --set train.max_steps=15");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  auto segments = read_json(out + "/train.provenance.json")["segments"];
  ASSERT_EQ(segments.size(), 2u) << segments;
  EXPECT_EQ(segments[1]["from_step"], 12);
  EXPECT_TRUE(segments[1]["changed"].is_null()) << segments;
  // Told to, it continues with another learning rate and records the change.
  resumed = run_orbitlaw("train --resume-changed --data " + data + " --out " + out + small_run() +
                         " --set train.lr=0.01 --set train.max_steps=18");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  segments = read_json(out + "/train.provenance.json")["segments"];
  ASSERT_EQ(segments.size(), 3u) << segments;
  EXPECT_EQ(segments[2]["from_step"], 15);
  EXPECT_NE(segments[2]["changed"].get<std::string>().find("train.lr"), std::string::npos) << segments;
}

TEST_F(ModelCli, PretokenizedDataTrainsLikeTheDataset) {
  const auto& data = testing::two_body_dataset();
  auto made = run_orbitlaw("train --data " + data + " --pretokenize " + path("train.tok") + small_run());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto a = run_orbitlaw("train --data " + data + " --out " + path("from_h5") + small_run());
  auto b = run_orbitlaw("train --data " + path("train.tok") + " --out " + path("from_tok") + small_run());
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  std::ifstream ma(path("from_h5/metrics.jsonl")), mb(path("from_tok/metrics.jsonl"));
  std::string la, lb;
  int compared = 0;
  while (std::getline(ma, la) && std::getline(mb, lb)) {
    EXPECT_EQ(Json::parse(la).at("train_loss"), Json::parse(lb).at("train_loss"));
    ++compared;
  }
  EXPECT_EQ(compared, 12);
}

TEST_F(ModelCli, BadInputGivesOneLineErrors) {
  const auto& data = testing::two_body_dataset();
  auto typo = run_orbitlaw("train --data " + data + " --out " + path("typo") + " --set model.n_layers=2");
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.output.find("unknown key 'n_layers'"), std::string::npos) << typo.output;
  EXPECT_EQ(typo.lines(), 1) << typo.output;
  // A refused value names the key the user set (model.p), not an internal field.
  auto bad_p = run_orbitlaw("train --data " + data + " --out " + path("bad-p") + " --set model.p=-3");
  EXPECT_EQ(bad_p.exit_code, 1);
  EXPECT_NE(bad_p.output.find("train config: model.p must be at least 1 (got -3)"), std::string::npos)
      << bad_p.output;
  EXPECT_EQ(bad_p.lines(), 1) << bad_p.output;

  std::ofstream(path("corrupt.pt")) << "not a checkpoint";
  auto corrupt = run_orbitlaw("eval --checkpoint " + path("corrupt.pt") + " --data " + data + " --out " +
                              path("corrupt.json"));
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.output.find("corrupt"), std::string::npos) << corrupt.output;
  EXPECT_EQ(corrupt.lines(), 1) << corrupt.output;
  EXPECT_FALSE(fs::exists(path("corrupt.json")));

  auto missing = run_orbitlaw("train --data " + path("nope.h5") + " --out " + path("nope") + small_run());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.lines(), 1) << missing.output;
}

// A checkpoint whose weights disagree with its config, and a token file holding a token beyond the
// vocabulary, as every command that reads them sees them: one line naming the file and the problem, exit 1
// (LibTorch alone loads the one and ends in a C++ backtrace on the other).
TEST_F(ModelCli, AMalformedCheckpointOrTokenFileIsAOneLineError) {
  const auto& data = testing::two_body_dataset();
  CheckpointContent c;
  c.tokenizer.bins = 500;
  c.tokenizer.rows = 33;
  c.model.n_layer = 1;
  c.model.n_head = 2;
  c.model.n_embd = 32;
  c.model.vocab = c.tokenizer.vocab();
  c.model.block_size = 32;
  auto wide = c.model;
  wide.n_embd = 64;
  Gpt wide_model(wide);
  const auto checkpoint = path("wide.pt");
  save_checkpoint(checkpoint, c, wide_model, nullptr);  // the weights of an n_embd 64 model under n_embd 32
  const std::string shape_error =
      "orbitlaw: error: checkpoint '" + checkpoint +
      "': model tensor 'wte_x.weight' has shape [503, 64], but the model config it "
      "records needs [503, 32]\n";
  for (const std::string& args :
       {"eval --checkpoint " + checkpoint + " --data " + data + " --out " + path("wide.json"),
        "probe --checkpoint " + checkpoint + " --data " + data + " --out " + path("wide-probe")}) {
    const auto r = run_orbitlaw(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_EQ(r.output, shape_error) << args;
  }

  const auto tokens = path("beyond.tok");
  ASSERT_EQ(run_orbitlaw("train --data " + data + " --pretokenize " + tokens + small_run()).exit_code, 0);
  std::string bytes;
  {
    std::ifstream in(tokens, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data() + 8, 8);
  const std::uint64_t sequences = 200;
  const std::uint16_t beyond = 60000;  // sequence 0, row 1, x: after the magic, header and lengths
  std::memcpy(bytes.data() + 16 + header_length + 4 * sequences + 2 * 2, &beyond, 2);
  std::ofstream(tokens, std::ios::binary | std::ios::trunc) << bytes;
  const auto r = run_orbitlaw("train --data " + tokens + " --out " + path("beyond") + small_run());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "orbitlaw: error: pre-tokenized file '" + tokens +
                          "' holds token 60000 at sequence 0 row 1 x, beyond the vocabulary (503 tokens)\n");
}

}  // namespace
}  // namespace orbitlaw::model
