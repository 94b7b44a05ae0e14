// Checkpoints: round trip of weights, optimizer and RNG; mismatched configs, corrupt files and files whose
// records disagree with the config they record give one-line errors; nothing but the final file is left
// behind.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>

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

// The records save_checkpoint writes, written here one by one so that a test can leave one out (`skip`) or
// store another value in its place (`replace`, which may also add a record): the malformed files a reader
// must refuse. `weights` supplies the "model" record and `optimizer` the "optimizer" record (when given).
void write_records(const std::string& path, const CheckpointContent& c, Gpt& weights,
                   torch::optim::Optimizer* optimizer, const std::string& skip = "",
                   std::map<std::string, c10::IValue> replace = {}) {
  std::map<std::string, c10::IValue> records{
      {"format", c10::IValue(std::string(kCheckpointFormat))},
      {"version", c10::IValue(static_cast<std::int64_t>(kCheckpointVersion))},
      {"model_config", c10::IValue(c.model.to_json().dump())},
      {"tokenizer_config", c10::IValue(c.tokenizer.to_json().dump())},
      {"train_state", c10::IValue(c.train_state.dump())},
      {"provenance", c10::IValue(Json::object().dump())}};
  for (auto& [key, value] : replace) records[key] = value;
  torch::serialize::OutputArchive archive;
  for (const auto& [key, value] : records) {
    if (key == skip) continue;
    if (value.isTensor()) {
      archive.write(key, value.toTensor());  // as save_checkpoint writes rng_state
    } else {
      archive.write(key, value);
    }
  }
  if (skip != "model") {
    torch::serialize::OutputArchive model_archive;
    weights->save(model_archive);
    archive.write("model", model_archive);
  }
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.save_to(path);
}

// A model of `c`'s config under a fixed seed.
Gpt model_of(const CheckpointContent& c) {
  torch::manual_seed(3);
  return Gpt(c.model);
}

TEST(Checkpoint, EveryRequiredRecordIsNamedWhenMissing) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  auto model = model_of(c);
  for (const std::string record :
       {"format", "model_config", "tokenizer_config", "train_state", "provenance"}) {
    write_records(path, c, model, nullptr, record);
    EXPECT_EQ(error_of([&] { load_model(path); }),
              "checkpoint '" + path + "' is not an orbitlaw checkpoint (no '" + record + "' record)");
  }
  write_records(path, c, model, nullptr, "model");
  EXPECT_EQ(error_of([&] { load_model(path); }), "checkpoint '" + path + "' has no 'model' record");
  write_records(path, c, model, nullptr);  // the control: every record present
  EXPECT_EQ(error_of([&] { load_model(path); }), "(no error)");
}

TEST(Checkpoint, ATensorOfAnotherShapeOrDtypeThanItsConfigIsRefused) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();  // vocab 23, n_embd 16
  auto wider = c;
  wider.model.n_embd = 32;
  auto wide_model = model_of(wider);
  write_records(path, c, wide_model, nullptr);
  // LibTorch alone would load the [23, 32] embedding into the [23, 16] model without a word.
  const std::string expected_shape =
      "checkpoint '" + path +
      "': model tensor 'wte_x.weight' has shape [23, 32], but the model config it records needs [23, 16]";
  EXPECT_EQ(error_of([&] { load_model(path); }), expected_shape);
  auto model = model_of(c);
  EXPECT_EQ(error_of([&] { load_checkpoint(path, c, model, nullptr); }), expected_shape);

  auto double_model = model_of(c);
  double_model->to(torch::kFloat64);
  write_records(path, c, double_model, nullptr);
  EXPECT_EQ(
      error_of([&] { load_model(path); }),
      "checkpoint '" + path +
          "': model tensor 'wte_x.weight' has dtype Double, but the model config it records needs Float");
}

TEST(Checkpoint, TensorsMissingFromOrBeyondItsConfigAreRefused) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto one = content();
  auto two = one;
  two.model.n_layer = 2;
  auto two_layers = model_of(two);
  write_records(path, one, two_layers, nullptr);
  EXPECT_EQ(error_of([&] { load_model(path); }),
            "checkpoint '" + path +
                "': its model record holds 'blocks.1', which the model config it records has not");
  auto one_layer = model_of(one);
  write_records(path, two, one_layer, nullptr);
  EXPECT_EQ(error_of([&] { load_model(path); }),
            "checkpoint '" + path + "': its model record has no module 'blocks.1'");
}

TEST(Checkpoint, OptimizerMomentsOfAnotherShapeAreRefused) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  auto wider = c;
  wider.model.n_embd = 32;
  auto wide_model = model_of(wider);
  torch::optim::AdamW wide_optimizer(wide_model->parameters(), torch::optim::AdamWOptions(1e-2));
  auto tokens = torch::randint(0, 20, {2, 12, 2}, torch::kInt64);
  next_token_loss(wide_model->forward(tokens), tokens, -100).backward();
  wide_optimizer.step();  // moments of the wider model's shapes
  auto model = model_of(c);
  write_records(path, c, model, &wide_optimizer);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  EXPECT_EQ(error_of([&] { load_checkpoint(path, c, model, &optimizer); }),
            "checkpoint '" + path +
                "': optimizer state 'exp_avg' of parameter 0 has shape [23, 32], but the model config it "
                "records needs [23, 16]");
}

TEST(Checkpoint, JsonRecordsOfTheWrongKindAreRefused) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  auto model = model_of(c);
  const std::map<std::string, std::pair<std::string, std::string>> cases{
      {"not an object", {"train_state", "[7]"}},
      {"a step that is text", {"train_state", R"({"step": "seven"})"}},
      {"a negative next batch", {"train_state", R"({"next_batch": -1})"}},
      {"cadences that are text", {"train_state", R"({"data": {"cadences": ["week"]}})"}},
      {"a fingerprint that is a list", {"train_state", R"({"fingerprint": []})"}},
      {"provenance that is a number", {"provenance", "3"}}};
  const std::map<std::string, std::string> expected{
      {"not an object", "its 'train_state' record is not a JSON object"},
      {"a step that is text", "its train_state 'step' is not a non-negative integer"},
      {"a negative next batch", "its train_state 'next_batch' is not a non-negative integer"},
      {"cadences that are text", "its train_state 'data' is not an object whose 'cadences' are numbers"},
      {"a fingerprint that is a list",
       "its train_state 'fingerprint' is not an object of 'inputs' and 'settings' objects"},
      {"provenance that is a number", "its 'provenance' record is not a JSON object"}};
  for (const auto& [name, record] : cases) {
    write_records(path, c, model, nullptr, "", {{record.first, c10::IValue(record.second)}});
    EXPECT_EQ(error_of([&] { read_checkpoint_header(path); }),
              "checkpoint '" + path + "': " + expected.at(name))
        << name;
  }
  auto other_vocab = c.model;
  other_vocab.vocab = 24;
  write_records(path, c, model, nullptr, "", {{"model_config", c10::IValue(other_vocab.to_json().dump())}});
  EXPECT_EQ(error_of([&] { read_checkpoint_header(path); }),
            "checkpoint '" + path + "': its model vocabulary (24) is not its tokenizer's (bins + 3 = 23)");
}

TEST(Checkpoint, ARandomStateOfAnotherSizeIsRefused) {
  TempDir dir;
  const auto path = (dir.path / "checkpoint.pt").string();
  auto c = content();
  auto model = model_of(c);
  write_records(path, c, model, nullptr, "", {{"rng_state", c10::IValue(torch::zeros({5}, torch::kUInt8))}});
  EXPECT_EQ(error_of([&] { load_checkpoint(path, c, model, nullptr, /*restore_rng=*/true); }),
            "checkpoint '" + path + "': its 'rng_state' record is not a CPU generator state");
}

}  // namespace
}  // namespace orbitlaw::model
