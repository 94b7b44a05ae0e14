// Checkpoints: round trip of weights, optimizer and RNG; mismatched configs and corrupt files give one-line
// errors; nothing but the final file is left behind.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "orbitlaw/model/checkpoint.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("orbitlaw_ckpt_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

CheckpointContent content() {
  CheckpointContent c;
  c.tokenizer.bins = 20;
  c.model.n_layer = 1;
  c.model.n_head = 2;
  c.model.n_embd = 16;
  c.model.vocab = c.tokenizer.vocab();
  c.model.block_size = 12;
  c.model.attention.kind = AttentionKind::kLssar;
  c.train_state = Json{{"step", 7}, {"next_batch", 7}};
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Checkpoint, RoundTripRestoresWeightsOptimizerAndRng) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  torch::manual_seed(21);
  Gpt model(c.model);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  auto tokens = torch::randint(0, 20, {2, 12, 2}, torch::kInt64);
  for (int i = 0; i < 3; ++i) {  // give the optimizer some state
    optimizer.zero_grad();
    next_token_loss(model->forward(tokens), tokens, -100).backward();
    optimizer.step();
  }
  save_checkpoint(path, c, model, &optimizer);
  auto draw_after_save = torch::rand({4});
  // Only the checkpoint itself is left in the directory (the temporary file was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1);

  torch::manual_seed(99);
  Gpt restored(c.model);
  torch::optim::AdamW restored_optimizer(restored->parameters(), torch::optim::AdamWOptions(1e-2));
  auto loaded = load_checkpoint(path, c, restored, &restored_optimizer);
  EXPECT_EQ(loaded.train_state.at("step"), 7);
  EXPECT_TRUE(torch::equal(torch::rand({4}), draw_after_save));  // RNG state restored
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(model->forward(tokens).x_logits, restored->forward(tokens).x_logits));
  // One more optimizer step from both gives identical weights only if the Adam moments came back too.
  {
    torch::AutoGradMode grad(true);
    for (auto* pair : {&optimizer, &restored_optimizer}) {
      auto& m = pair == &optimizer ? model : restored;
      pair->zero_grad();
      next_token_loss(m->forward(tokens), tokens, -100).backward();
      pair->step();
    }
  }
  auto a = model->parameters(), b = restored->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i]));

  auto via_loader = load_model(path);
  EXPECT_EQ(via_loader.config, c.model);
  EXPECT_EQ(via_loader.tokenizer, c.tokenizer);
  EXPECT_EQ(via_loader.train_state.at("next_batch"), 7);
}

TEST(Checkpoint, MismatchedConfigIsAOneLineError) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  Gpt model(c.model);
  save_checkpoint(path, c, model, nullptr);
  auto other = c;
  other.model.n_layer = 2;
  Gpt other_model(other.model);
  auto message = error_of([&] { load_checkpoint(path, other, other_model, nullptr); });
  EXPECT_NE(message.find("does not match the model config: n_layer = 1 in the checkpoint, 2 in the config"),
            std::string::npos)
      << message;
  auto tok = c;
  tok.tokenizer.hi = 40;
  message = error_of([&] { load_checkpoint(path, tok, model, nullptr); });
  EXPECT_NE(message.find("tokenizer.hi"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Checkpoint, CorruptTruncatedAndMissingFilesAreOneLineErrors) {
  TempDir dir;
  const auto good = (dir.path / "checkpoint.pt").string();
  auto c = content();
  Gpt model(c.model);
  save_checkpoint(good, c, model, nullptr);

  const auto truncated = (dir.path / "truncated.pt").string();
  fs::copy_file(good, truncated);
  fs::resize_file(truncated, fs::file_size(good) / 2);
  const auto garbage = (dir.path / "garbage.pt").string();
  std::ofstream(garbage) << "this is not a checkpoint";
  const auto missing = (dir.path / "missing.pt").string();

  for (const auto& path : {truncated, garbage, missing}) {
    auto message = error_of([&] { load_model(path); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_TRUE(message.find("corrupt") != std::string::npos ||
                message.find("does not exist") != std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // A LibTorch archive that is not an orbitlaw checkpoint.
  const auto foreign = (dir.path / "foreign.pt").string();
  torch::serialize::OutputArchive archive;
  archive.write("weights", torch::ones({2}));
  archive.save_to(foreign);
  auto message = error_of([&] { load_model(foreign); });
  EXPECT_NE(message.find("not an orbitlaw checkpoint"), std::string::npos) << message;
}

}  // namespace
}  // namespace orbitlaw::model
