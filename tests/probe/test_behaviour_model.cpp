// A model wrapped as a next-position predictor, and `orbitlaw eval`'s behavioural section: a window's
// prediction equals the model's teacher-forced prediction at that position of the whole track (a causal model
// sees only the prefix); the token head's x_hat is the expected bin centre; an untrained model fails the
// verdict; eval writes the predictions file and refuses nothing it can measure.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../cli/cli_runner.hpp"
#include "orbitlaw/probe/behaviour_eval.hpp"
#include "tiny_checkpoint.hpp"

namespace fs = std::filesystem;
using namespace orbitlaw;
using namespace orbitlaw::probe;

namespace {

// The locality experiment's regime in small: one planet, a in 0.5-2 AU, e < 0.8, star of 1 Msun, weekly.
std::string locality_dataset(int systems, int steps) {
  const auto path =
      test::probe_temp_dir() / ("locality_" + std::to_string(systems) + "_" + std::to_string(steps) + ".h5");
  if (fs::exists(path)) return path.string();
  auto config = simulator::preset_defaults("vafa-paper");
  config.systems = systems;
  config.seed = 5;
  config.planets_min = config.planets_max = 1;
  config.a_min = 0.5;
  config.a_max = 2.0;
  config.e_max = 0.8;
  config.star_mass_min = config.star_mass_max = 1.0;
  config.cadences = {7.0 / 365.25};
  config.sequence_rows = 1 + 2 * steps;
  simulator::write_dataset(config, path.string(), simulator::WriteOptions{});
  return path.string();
}

// An untrained tiny model reading the heliocentric frame, with the regression or the token head.
model::CheckpointContent heliocentric_content(bool regression) {
  const model::Preset preset = model::preset("tiny");
  model::CheckpointContent content;
  content.tokenizer = preset.tokenizer;
  content.tokenizer.lo = -4;
  content.tokenizer.hi = 4;
  content.tokenizer.bins = 160;
  content.tokenizer.rows = 33;
  content.tokenizer.frame = model::Frame::kHeliocentric;
  content.model = preset.model;
  content.model.vocab = content.tokenizer.vocab();
  content.model.block_size = 32;
  content.model.positional = model::Positional::kRope;
  if (regression) {
    content.model.head = model::Head::kRegression;
    content.model.coordinate_scale = content.tokenizer.coordinate_scale();
  }
  return content;
}

model::LoadedModel untrained(bool regression, std::uint64_t seed) {
  torch::manual_seed(seed);
  const auto content = heliocentric_content(regression);
  model::LoadedModel loaded{content.model, content.tokenizer, model::Gpt(content.model), {}, {}};
  loaded.module->eval();
  return loaded;
}

std::string saved(bool regression, std::uint64_t seed) {
  const auto path =
      test::probe_temp_dir() / ("helio_" + std::to_string(regression) + "_" + std::to_string(seed) + ".pt");
  if (!fs::exists(path)) {
    torch::manual_seed(seed);
    const auto content = heliocentric_content(regression);
    model::Gpt gpt(content.model);
    model::save_checkpoint(path.string(), content, gpt, nullptr);
  }
  return path.string();
}

}  // namespace

TEST(BehaviourModel, AWindowIsPredictedAsThePrefixOfItsTrack) {
  torch::set_num_threads(1);
  const simulator::DatasetReader reader(locality_dataset(4, 40));
  for (bool regression : {true, false}) {
    const auto loaded = untrained(regression, 3);
    const auto rows = read_behaviour_rows(reader, 2, loaded.config.block_size, loaded.config.block_size - 1);
    ASSERT_EQ(rows.size(), 2u * 29);  // t = 2 .. 30 of 32 observations, per system
    std::vector<TrackWindow> windows;
    for (const auto& r : rows) windows.push_back(r.window);
    const auto predicted = model_predictor(loaded, 7)(windows);
    // The independent path: the whole encoded sequence through the model once, read at each position.
    torch::NoGradGuard no_grad;
    auto tok = loaded.tokenizer;
    const auto seq = model::encode(reader.read_system(1), tok);
    auto input =
        (regression ? seq.coordinates : seq.tokens).narrow(0, 0, loaded.config.block_size).unsqueeze(0);
    auto out = const_cast<model::Gpt&>(loaded.module)->forward(input);
    const auto centres = model::decode_tokens(torch::arange(tok.bins), tok);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].system != 1) continue;
      const int position = rows[i].step + 1;  // the cadence row comes first
      Vec2 expected;
      if (regression) {
        expected = Vec2(out.coordinates[0][position][0].item<double>(),
                        out.coordinates[0][position][1].item<double>());
      } else {
        for (int c = 0; c < 2; ++c) {
          const auto& logits = c == 0 ? out.x_logits : out.y_logits;
          auto p = torch::softmax(logits[0][position].narrow(0, 0, tok.bins).to(torch::kFloat64), 0);
          expected(c) = (p * centres).sum().item<double>();
        }
      }
      EXPECT_LT((predicted[i] - expected).norm(), 1e-5) << regression << " step " << rows[i].step;
      // x_t itself, as the model saw it: the track relative to the star.
      EXPECT_NEAR(rows[i].window.positions.back()(0), seq.coordinates[position][0].item<double>(), 1e-12);
    }
  }
}

TEST(BehaviourModel, AnUntrainedModelFailsTheVerdict) {
  torch::set_num_threads(1);
  const simulator::DatasetReader reader(locality_dataset(4, 40));
  BehaviourSettings settings;
  settings.transplant_rows = 32;
  settings.bootstrap = 50;
  for (bool regression : {true, false}) {
    const auto loaded = untrained(regression, 9);
    const auto rows = read_behaviour_rows(reader, 4, loaded.config.block_size, loaded.config.block_size - 1);
    const auto report = evaluate_behaviour(model_predictor(loaded, 64), rows, settings);
    EXPECT_FALSE(report.verdict.learned) << report.json().dump();
    EXPECT_GT(report.implied.median_angle_deg, 2.0);
    EXPECT_EQ(report.ladder_position, "worse than the previous position");
  }
}

TEST(BehaviourModel, EvalWritesTheBehaviourAndItsPredictionsFile) {
  const auto data = locality_dataset(4, 40);
  const fs::path dir = test::probe_temp_dir() / "eval-behaviour";
  const auto result = test::run_orbitlaw("eval --checkpoint " + saved(true, 4) + " --data " + data +
                                         " --out " + (dir / "eval.json").string() +
                                         " --set sequences=3 --set transplant_rows=16 --set bootstrap=20"
                                         " --set length_factors=[1] --set rollout_steps=[1] --set threads=1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("verdict: has NOT learned Newton's law"), std::string::npos) << result.output;
  std::ifstream in(dir / "eval.json");
  const auto eval = Json::parse(in);
  const auto& b = eval["behaviour"];
  ASSERT_TRUE(b["available"].get<bool>()) << b.dump();
  EXPECT_FALSE(b["verdict"]["learned"].get<bool>());
  EXPECT_EQ(b["one_step_error_au"]["model"]["rows"], 3 * 29);
  EXPECT_EQ(b["transplant"]["rows"], 16);
  // The predictions file, as h5py would read it.
  const auto path = dir / "eval.predictions.h5";
  ASSERT_TRUE(fs::exists(path));
  hid_t file = H5Fopen(path.string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t set = H5Dopen2(file, "implied_acceleration", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  hid_t space = H5Dget_space(set);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 3u * 29);
  EXPECT_EQ(dims[1], 2u);
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  // The predictions file is an output like --out: it may not be one of the inputs.
  const auto copy = dir / "copy.pt";
  fs::copy_file(saved(true, 4), copy, fs::copy_options::overwrite_existing);
  const auto before = fs::file_size(copy);
  const auto onto = test::run_orbitlaw("eval --checkpoint " + copy.string() + " --data " + data + " --out " +
                                       (dir / "again.json").string() + " --predictions " + copy.string() +
                                       " --set sequences=2 --set length_factors=[1] --set rollout_steps=[1]");
  EXPECT_EQ(onto.exit_code, 1) << onto.output;
  EXPECT_EQ(fs::file_size(copy), before);
  EXPECT_NO_THROW(model::load_model(copy.string()));
  // A model of the barycentric frame is told why it is not measured, and eval still succeeds.
  const auto bary = test::run_orbitlaw("eval --checkpoint " + test::tiny_checkpoint(33) + " --data " + data +
                                       " --out " + (dir / "bary.json").string() +
                                       " --set sequences=2 --set length_factors=[1] --set rollout_steps=[1]");
  ASSERT_EQ(bary.exit_code, 0) << bary.output;
  EXPECT_NE(bary.output.find("behaviour: not measured (the model reads the barycentric frame"),
            std::string::npos)
      << bary.output;
  EXPECT_FALSE(fs::exists(dir / "bary.predictions.h5"));
}
