// Training: the learning-rate schedule, config resolution, the token store and its deterministic sampling,
// exact resume (an interrupted and resumed run reproduces an uninterrupted one's losses bit for bit), and
// same-seed runs that are bit-identical.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dataset_fixture.hpp"
#include "orbitlaw/model/checkpoint.hpp"
#include "orbitlaw/model/data.hpp"
#include "orbitlaw/model/device.hpp"
#include "orbitlaw/model/train.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("orbitlaw_train_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(LearningRate, WarmupThenCosineToTheFloor) {
  TrainConfig c;
  c.lr = 1e-3;
  c.min_lr = 1e-4;
  c.warmup_steps = 10;
  c.max_steps = 110;
  EXPECT_DOUBLE_EQ(learning_rate(c, 0), 1e-4);       // (0 + 1) / 10 of the peak
  EXPECT_DOUBLE_EQ(learning_rate(c, 9), 1e-3);       // end of warm-up
  EXPECT_DOUBLE_EQ(learning_rate(c, 10), 1e-3);      // cosine starts at the peak
  EXPECT_NEAR(learning_rate(c, 60), 5.5e-4, 1e-15);  // half way: the mean of peak and floor
  EXPECT_DOUBLE_EQ(learning_rate(c, 110), 1e-4);
}

TEST(TrainConfigResolution, PresetSectionsAndErrors) {
  TrainRequest r;
  resolve_train_config(Json{{"seed", 5}, {"tokenizer", {{"bins", 100}}}, {"model", {{"attention", "lssar"}}}},
                       "small", r);
  EXPECT_EQ(r.model.n_layer, 4);
  EXPECT_EQ(r.model.vocab, 103);  // follows the tokenizer
  EXPECT_EQ(r.tokenizer.rows, 257);
  EXPECT_EQ(r.train.seed, 5u);
  EXPECT_EQ(r.model.attention.kind, AttentionKind::kLssar);
  EXPECT_EQ(r.resolved_config.at("preset"), "small");
  EXPECT_EQ(r.resolved_config.at("train").at("seed"), 5);
  EXPECT_THROW(resolve_train_config(Json{{"model", {{"n_layers", 3}}}}, "", r), Error);  // typo
  EXPECT_THROW(resolve_train_config(Json{{"model", {{"vocab", 50}}}}, "tiny", r), Error);
  EXPECT_THROW(resolve_train_config(Json{{"model", {{"attention", "flash"}}}}, "tiny", r), Error);
  EXPECT_THROW(resolve_train_config(Json::object(), "medium", r), Error);
}

TEST(TokenStore, PretokenizedFileMatchesTokenizingTheDataset) {
  auto dir = temp_dir("store");
  TokenizerConfig tok;
  tok.bins = 500;
  tok.rows = 129;
  auto store = TokenStore::from_dataset(testing::two_body_dataset(), tok);
  ASSERT_EQ(store.size(), 200);
  EXPECT_EQ(store.length(0), 129);
  const auto path = (dir / "train.tok").string();
  store.save(path);
  EXPECT_TRUE(TokenStore::is_token_file(path));
  auto mapped = TokenStore::open_any(path, tok);
  ASSERT_EQ(mapped.size(), 200);
  for (std::int64_t i = 0; i < 200; ++i)
    EXPECT_TRUE(torch::equal(store.sequence(i, 129), mapped.sequence(i, 129)));
  // A sequence padded past its end.
  auto padded = store.sequence(3, 140);
  EXPECT_EQ(padded[139][0].item<std::int64_t>(), tok.pad_token());
  // The cadence row of a two-body system is one of the two cadence tokens.
  const auto cadence = store.sequence(0, 1)[0][0].item<std::int64_t>();
  EXPECT_TRUE(cadence == tok.week_token() || cadence == tok.half_year_token());

  auto other = tok;
  other.bins = 400;
  EXPECT_THROW(TokenStore::open_any(path, other), Error);
  fs::resize_file(path, fs::file_size(path) - 10);
  EXPECT_THROW(TokenStore::open(path), Error);
  fs::remove_all(dir);
}

TEST(TokenStore, BatchesDependOnSeedAndIndexOnlyAndThePrefetcherKeepsOrder) {
  TokenizerConfig tok;
  tok.bins = 500;
  tok.rows = 129;
  auto store = TokenStore::from_dataset(testing::two_body_dataset(), tok);
  auto a = sample_batch(store, 3, 17, 4, 33);
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{4, 33, 2}));
  EXPECT_TRUE(torch::equal(a, sample_batch(store, 3, 17, 4, 33)));
  EXPECT_FALSE(torch::equal(a, sample_batch(store, 3, 18, 4, 33)));
  Prefetcher prefetch(store, 3, 15, 4, 33, 2);
  for (std::uint64_t i = 15; i < 20; ++i)
    EXPECT_TRUE(torch::equal(prefetch.next(), sample_batch(store, 3, i, 4, 33)));
  EXPECT_EQ(prefetch.next_index(), 20u);
}

std::vector<Json> read_metrics(const fs::path& dir) {
  std::vector<Json> lines;
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) lines.push_back(Json::parse(line));
  return lines;
}

TrainRequest tiny_request(const fs::path& out, const std::string& attention = "softmax") {
  TrainRequest r;
  const Json model{{"n_layer", 1}, {"n_embd", 32}, {"block_size", 32}, {"attention", attention}};
  resolve_train_config(Json{{"tokenizer", {{"bins", 100}}},
                            {"model", model},
                            {"train",
                             {{"batch_size", 4},
                              {"max_steps", 10},
                              {"warmup_steps", 3},
                              {"eval_interval", 4},
                              {"eval_batches", 2},
                              {"checkpoint_interval", 100},
                              {"threads", 1},
                              {"device", "cpu"},
                              {"seed", 3}}}},
                       "tiny", r);
  r.data = testing::two_body_dataset();
  r.out = out.string();
  r.quiet = true;
  return r;
}

// Each metrics line carries the step's gradient norm before clipping and the largest since the previous line
// (what a diverging run shows first); logged every step the two agree, logged every few steps the maximum is
// that of the same run's per-step norms since the last line. Without clipping no norm is computed or logged.
TEST(Train, MetricsCarryTheGradientNormAndItsMaximumSinceTheLastLine) {
  auto dir = temp_dir("grad_norm");
  auto every = tiny_request(dir / "every");
  every.train.log_interval = 1;
  ASSERT_EQ(train(every).steps, 10);
  const auto steps = read_metrics(dir / "every");
  ASSERT_EQ(steps.size(), 10u);
  for (const auto& line : steps) {
    ASSERT_TRUE(line.contains("grad_norm")) << line.dump();
    EXPECT_GT(line.at("grad_norm").get<double>(), 0);
    EXPECT_EQ(line.at("grad_norm_max"), line.at("grad_norm"));
  }

  auto sparse = tiny_request(dir / "sparse");
  sparse.train.log_interval = 5;  // lines at steps 4 and 8 (validation), 5 and 10
  ASSERT_EQ(train(sparse).steps, 10);
  int previous = 0;
  for (const auto& line : read_metrics(dir / "sparse")) {
    const int step = line.at("step").get<int>();
    double most = 0;
    for (int s = previous + 1; s <= step; ++s)
      most = std::max(most, steps[s - 1].at("grad_norm").get<double>());
    EXPECT_EQ(line.at("grad_norm").get<double>(), steps[step - 1].at("grad_norm").get<double>()) << step;
    EXPECT_EQ(line.at("grad_norm_max").get<double>(), most) << "step " << step << " since " << previous;
    previous = step;
  }
  EXPECT_EQ(previous, 10);

  auto unclipped = tiny_request(dir / "unclipped");
  unclipped.train.grad_clip = 0;
  ASSERT_EQ(train(unclipped).steps, 10);
  for (const auto& line : read_metrics(dir / "unclipped"))
    EXPECT_FALSE(line.contains("grad_norm")) << line.dump();
}

TEST(Train, InterruptedAndResumedRunReproducesTheUninterruptedOne) {
  auto dir = temp_dir("resume");
  auto whole = tiny_request(dir / "whole");
  auto result = train(whole);
  EXPECT_EQ(result.steps, 10);
  EXPECT_FALSE(result.stopped_by_time_limit);
  const auto reference = read_metrics(dir / "whole");
  ASSERT_EQ(reference.size(), 10u);
  EXPECT_TRUE(reference[3].contains("val_loss"));
  for (const char* key : {"step", "tokens", "train_loss", "lr", "tokens_per_s", "elapsed_s"})
    EXPECT_TRUE(reference[0].contains(key)) << key;
  EXPECT_EQ(reference[0].at("tokens"), 4 * 32);
  EXPECT_TRUE(fs::exists(dir / "whole" / "train.provenance.json"));

  // A zero-length budget stops after each step with a checkpoint; every resume continues from it.
  auto part = tiny_request(dir / "parts");
  part.train.max_seconds = 1e-9;
  auto first = train(part);
  EXPECT_EQ(first.steps, 1);
  EXPECT_TRUE(first.stopped_by_time_limit);
  EXPECT_TRUE(read_checkpoint_header(first.checkpoint).train_state.at("stopped_by_time_limit").get<bool>());
  part.resume = true;
  EXPECT_EQ(train(part).steps, 2);
  part.train.max_seconds = 0;
  EXPECT_EQ(train(part).steps, 10);
  const auto resumed = read_metrics(dir / "parts");
  ASSERT_EQ(resumed.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(resumed[i].at("step"), reference[i].at("step"));
    EXPECT_EQ(resumed[i].at("train_loss").get<double>(), reference[i].at("train_loss").get<double>())
        << "step " << i + 1;
  }
  // Validation of the resumed run at the steps both evaluated.
  EXPECT_EQ(resumed[7].at("val_loss").get<double>(), reference[7].at("val_loss").get<double>());
  EXPECT_EQ(resumed[9].at("val_loss").get<double>(), reference[9].at("val_loss").get<double>());

  // A fresh run refuses to overwrite; a resume with another architecture is a clear error.
  EXPECT_THROW(train(tiny_request(dir / "whole")), Error);
  auto mismatched = tiny_request(dir / "whole");
  mismatched.resume = true;
  mismatched.model.n_embd = 64;
  try {
    train(mismatched);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("n_embd"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// The regression head with Liu et al.'s context noise, in the heliocentric frame: interrupted and resumed, it
// reproduces the uninterrupted run's losses bit for bit (the noise of batch i depends on seed and i alone),
// and the noise is really applied (the same run without it has another first training loss).
TEST(Train, RegressionHeadWithContextNoiseResumesExactly) {
  auto dir = temp_dir("regression");
  auto request = [&](const std::string& name, double noise) {
    auto r = tiny_request(dir / name);
    Json config{{"tokenizer", {{"bins", 100}, {"frame", "heliocentric"}}},
                {"model", {{"n_layer", 1}, {"n_embd", 32}, {"block_size", 32}, {"head", "regression"}}},
                {"train", r.resolved_config.at("train")}};
    config["train"]["context_noise"] = noise;
    resolve_train_config(config, "tiny", r);
    return r;
  };
  auto whole = request("whole", 0.01);
  EXPECT_EQ(whole.model.head, Head::kRegression);
  EXPECT_EQ(whole.model.coordinate_scale, whole.tokenizer.coordinate_scale());
  EXPECT_EQ(train(whole).steps, 10);
  const auto reference = read_metrics(dir / "whole");
  ASSERT_EQ(reference.size(), 10u);

  auto part = request("parts", 0.01);
  part.train.max_seconds = 1e-9;
  EXPECT_EQ(train(part).steps, 1);
  part.resume = true;
  part.train.max_seconds = 0;
  EXPECT_EQ(train(part).steps, 10);
  const auto resumed = read_metrics(dir / "parts");
  ASSERT_EQ(resumed.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(resumed[i].at("train_loss").get<double>(), reference[i].at("train_loss").get<double>())
        << "step " << i + 1;
  }
  EXPECT_EQ(resumed[9].at("val_loss").get<double>(), reference[9].at("val_loss").get<double>());

  // Without noise the first step's training loss differs: the noise reaches the inputs.
  auto quiet = request("quiet", 0.0);
  EXPECT_EQ(train(quiet).steps, 10);
  EXPECT_NE(read_metrics(dir / "quiet").at(0).at("train_loss").get<double>(),
            reference[0].at("train_loss").get<double>());
  // The checkpoint carries the head and the frame, and the loaded model reads coordinates.
  const LoadedModel loaded = load_model((dir / "whole" / "checkpoint.pt").string());
  EXPECT_EQ(loaded.config.head, Head::kRegression);
  EXPECT_EQ(loaded.tokenizer.frame, Frame::kHeliocentric);

  // Context noise needs the regression head.
  auto tokens = tiny_request(dir / "tokens");
  Json bad{{"model", {{"n_layer", 1}}}, {"train", {{"context_noise", 0.01}}}};
  EXPECT_THROW(resolve_train_config(bad, "tiny", tokens), Error);
  fs::remove_all(dir);
}

// Every tensor of a trained model (parameters and buffers), by name.
std::map<std::string, torch::Tensor> saved_tensors(const fs::path& run) {
  const LoadedModel loaded = load_model((run / "checkpoint.pt").string());
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : loaded.module->named_parameters()) tensors[item.key()] = item.value();
  for (const auto& item : loaded.module->named_buffers()) tensors["buffer " + item.key()] = item.value();
  return tensors;
}

// Names of the tensors that are not bit-identical (or not in both).
std::vector<std::string> differing_tensors(const std::map<std::string, torch::Tensor>& a,
                                           const std::map<std::string, torch::Tensor>& b) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : a) {
    const auto other = b.find(name);
    if (other == b.end() || !torch::equal(tensor, other->second)) names.push_back(name);
  }
  for (const auto& entry : b)
    if (!a.contains(entry.first)) names.push_back(entry.first);
  return names;
}

// Two CPU runs with the same seed and the same thread count are bit-identical: every saved weight and every
// logged loss (training and validation). A run with another seed differs, which shows the comparison can
// tell. Across thread counts (or CPUs with other vector units) runs differ in the last bits: LibTorch splits
// reductions by thread and picks kernels by CPU, so bit-identity is promised only for one machine and one
// thread count (docs/experiments.md).
TEST(Train, SameSeedRunsAreBitIdenticalForSoftmaxAndLssar) {
  auto dir = temp_dir("same_seed");
  for (const std::string attention : {"softmax", "lssar"}) {
    SCOPED_TRACE(attention);
    auto run = [&](const std::string& name, std::uint64_t seed) {
      auto r = tiny_request(dir / (attention + "_" + name), attention);
      r.train.seed = seed;
      EXPECT_EQ(train(r).steps, 10);
      return dir / (attention + "_" + name);
    };
    const fs::path first = run("first", 3), second = run("second", 3), other = run("other_seed", 4);
    EXPECT_EQ(load_model((first / "checkpoint.pt").string()).config.attention.kind,
              attention == "lssar" ? AttentionKind::kLssar : AttentionKind::kSoftmax);

    const auto weights = saved_tensors(first);
    ASSERT_FALSE(weights.empty());
    EXPECT_EQ(differing_tensors(weights, saved_tensors(second)), std::vector<std::string>{});
    EXPECT_FALSE(differing_tensors(weights, saved_tensors(other)).empty());

    const auto metrics = read_metrics(first), again = read_metrics(second),
               other_metrics = read_metrics(other);
    ASSERT_EQ(metrics.size(), 10u);
    ASSERT_EQ(again.size(), 10u);
    int val_losses = 0;
    for (size_t i = 0; i < metrics.size(); ++i) {
      EXPECT_EQ(again[i].at("train_loss").get<double>(), metrics[i].at("train_loss").get<double>())
          << "step " << i + 1;
      ASSERT_EQ(again[i].contains("val_loss"), metrics[i].contains("val_loss"));
      if (!metrics[i].contains("val_loss")) continue;
      EXPECT_EQ(again[i].at("val_loss").get<double>(), metrics[i].at("val_loss").get<double>())
          << "step " << i + 1;
      ++val_losses;
    }
    EXPECT_EQ(val_losses, 3);  // steps 4, 8 and 10
    EXPECT_NE(other_metrics.at(0).at("train_loss").get<double>(), metrics[0].at("train_loss").get<double>());
  }
  fs::remove_all(dir);
}

TEST(Train, LearnsTwoBodyOrbitsWellBelowTheUnigramLoss) {
  // The unigram baseline: the entropy of the held-out systems' own per-channel token frequencies (the best
  // any predictor blind to the context can do on them). A tiny model must get well below it.
  auto dir = temp_dir("learn");
  auto r = tiny_request(dir / "run");
  r.train.max_steps = 600;
  r.train.batch_size = 8;
  r.train.eval_interval = 600;
  r.train.eval_batches = 8;
  r.train.lr = 3e-3;
  r.train.min_lr = 3e-3;  // constant after warm-up
  r.train.warmup_steps = 10;
  r.train.val_fraction = 0.1;
  auto result = train(r);
  auto store = TokenStore::from_dataset(testing::two_body_dataset(), r.tokenizer, 180, 20);
  std::vector<double> counts(2 * r.tokenizer.vocab(), 0);
  double total = 0;
  for (std::int64_t i = 0; i < store.size(); ++i) {
    for (int p = 1; p < r.model.block_size + 1; ++p) {  // the targets the validation loss scores
      counts[store.tokens(i)[2 * p]] += 1;
      counts[r.tokenizer.vocab() + store.tokens(i)[2 * p + 1]] += 1;
      total += 1;
    }
  }
  double unigram = 0;
  for (double c : counts)
    if (c > 0) unigram -= c / (2 * total) * std::log(c / total);
  EXPECT_LT(result.final_val_loss, 0.75 * unigram) << "unigram " << unigram;
  fs::remove_all(dir);
}

// threads = 0 follows OMP_NUM_THREADS (a test runner's one thread per process) before taking every core; an
// explicit count wins over the environment; a malformed variable is ignored.
TEST(Threads, ZeroFollowsOmpNumThreadsAndAnExplicitCountWins) {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string saved_value = saved ? saved : "";
  const int saved_threads = torch::get_num_threads();
  ::setenv("OMP_NUM_THREADS", "1", 1);
  configure_threads(3);
  EXPECT_EQ(torch::get_num_threads(), 3);
  configure_threads(0);
  EXPECT_EQ(torch::get_num_threads(), 1);
  ::setenv("OMP_NUM_THREADS", "3", 1);
  configure_threads(0);
  EXPECT_EQ(torch::get_num_threads(), 3);
  ::setenv("OMP_NUM_THREADS", "two", 1);
  configure_threads(0);
  EXPECT_EQ(torch::get_num_threads(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  if (saved)
    ::setenv("OMP_NUM_THREADS", saved_value.c_str(), 1);
  else
    ::unsetenv("OMP_NUM_THREADS");
  torch::set_num_threads(saved_threads);
}

// The provenance records the thread count the run used (not the config's 0) and the CPU capability LibTorch
// chose kernels for: bit-identity holds only where both match, so a rerun has to be able to match them.
TEST(Threads, TrainingRecordsTheThreadCountItUsed) {
  const int saved_threads = torch::get_num_threads();
  auto dir = temp_dir("threads_record");
  for (int threads : {1, 3}) {
    auto r = tiny_request(dir / std::to_string(threads));
    r.train.threads = threads;
    ASSERT_EQ(train(r).steps, 10);
    std::ifstream in(dir / std::to_string(threads) / "train.provenance.json");
    const Json record = Json::parse(in);
    EXPECT_EQ(record.at("cpu_threads").get<int>(), threads);
    EXPECT_FALSE(record.at("cpu_capability").get<std::string>().empty());
  }
  torch::set_num_threads(saved_threads);
}

}  // namespace
}  // namespace orbitlaw::model
