// Which attention path training uses: the fused LSSA/LSSAR kernel only after its parity check against the
// unfused reference passed on the device, the unfused path otherwise, and the choice recorded. The check
// itself needs a GPU (tests/model_cuda); here it is replaced by stand-ins with known answers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

#include "dataset_fixture.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/model/attention_path.hpp"
#include "orbitlaw/model/train.hpp"

namespace orbitlaw::model {
namespace {

ModelConfig model_with(AttentionKind kind) {
  ModelConfig model;
  model.n_head = 2;
  model.n_embd = 32;
  model.block_size = 64;
  model.attention.kind = kind;
  return model;
}

// A parity check that returns `difference` and counts its calls.
ParityCheck stand_in(double difference, int& calls) {
  return [difference, &calls](const AttentionSpec&, const torch::Device&, std::int64_t heads,
                              std::int64_t length, std::int64_t head_dim) {
    ++calls;
    EXPECT_EQ(heads, 2);
    EXPECT_EQ(length, 64);
    EXPECT_EQ(head_dim, 16);
    return difference;
  };
}

TEST(AttentionPath, FusedOnlyAfterAPassedParityCheck) {
  // A CUDA device needs no GPU to name; the stand-in check does not run on it.
  const torch::Device device(torch::kCUDA);
  int calls = 0;
  const AttentionPath passed =
      choose_attention_path(model_with(AttentionKind::kLssar), device, true, stand_in(3e-6, calls));
  EXPECT_TRUE(passed.fused) << passed.reason;
  EXPECT_EQ(passed.difference, 3e-6);
  EXPECT_EQ(passed.json().at("path"), "fused");
  EXPECT_EQ(calls, 1);

  for (const double bad : {1e-2, std::numeric_limits<double>::infinity(), std::nan("")}) {
    const AttentionPath failed =
        choose_attention_path(model_with(AttentionKind::kLssa), device, true, stand_in(bad, calls));
    EXPECT_FALSE(failed.fused) << bad;
    EXPECT_NE(failed.reason.find("differs from the unfused reference"), std::string::npos) << failed.reason;
    EXPECT_EQ(failed.json().at("path"), "unfused");
  }
  EXPECT_EQ(calls, 4);

  // A check that throws (say, a head size the kernel does not take) is a failed check, not a failed run.
  const ParityCheck throwing = [](const AttentionSpec&, const torch::Device&, std::int64_t, std::int64_t,
                                  std::int64_t) -> double { throw Error("head size 24 is not supported"); };
  const AttentionPath thrown =
      choose_attention_path(model_with(AttentionKind::kLssar), device, true, throwing);
  EXPECT_FALSE(thrown.fused);
  EXPECT_NE(thrown.reason.find("head size 24 is not supported"), std::string::npos) << thrown.reason;
}

TEST(AttentionPath, NoCheckWhereNoFusedKernelWouldRun) {
  const torch::Device device(torch::kCUDA);
  int calls = 0;
  auto lssar_without_fused = model_with(AttentionKind::kLssar);
  lssar_without_fused.attention.allow_fused = false;
  auto lssar_offset = model_with(AttentionKind::kLssar);
  lssar_offset.attention.offset_rows = 1;
  const std::pair<ModelConfig, bool> cases[] = {{model_with(AttentionKind::kSoftmax), true},
                                                {lssar_without_fused, true},
                                                {lssar_offset, true},
                                                {model_with(AttentionKind::kLssar), false}};
  for (const auto& [model, available] : cases) {
    const AttentionPath path = choose_attention_path(model, device, available, stand_in(0, calls));
    EXPECT_FALSE(path.fused) << path.reason;
    EXPECT_EQ(path.difference, -1);
    EXPECT_FALSE(path.json().contains("parity_difference"));
  }
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(fused_kernel_available(torch::Device(torch::kCPU)));
}

// On the CPU, LSSA and LSSAR train with their CPU kernel (no parity check: tests/model/test_attention.cpp
// checks it against the naive float64 reference), unless allow_fused is off.
TEST(AttentionPath, CpuKernelOnTheCpu) {
  const torch::Device cpu(torch::kCPU);
  int calls = 0;
  for (const AttentionKind kind : {AttentionKind::kLssa, AttentionKind::kLssar}) {
    for (const bool available : {false, true}) {
      const AttentionPath path = choose_attention_path(model_with(kind), cpu, available, stand_in(0, calls));
      EXPECT_TRUE(path.cpu_kernel) << path.reason;
      EXPECT_FALSE(path.fused);
      EXPECT_EQ(path.json().at("path"), "cpu_kernel");
    }
    auto reference = model_with(kind);
    reference.attention.allow_fused = false;
    const AttentionPath off = choose_attention_path(reference, cpu, false, stand_in(0, calls));
    EXPECT_FALSE(off.cpu_kernel);
    EXPECT_EQ(off.json().at("path"), "unfused");
  }
  EXPECT_FALSE(choose_attention_path(model_with(AttentionKind::parse("sigmoid")), cpu, false).cpu_kernel);
  EXPECT_EQ(calls, 0);
}

// A CPU training run records its path and why.
TEST(AttentionPath, TrainingRecordsThePath) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("orbitlaw_attention_path_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TrainRequest r;
  resolve_train_config(
      Json{{"model", {{"n_layer", 1}, {"n_embd", 32}, {"block_size", 32}, {"attention", "lssar"}}},
           {"train", {{"batch_size", 4}, {"max_steps", 2}, {"threads", 1}, {"device", "cpu"}}}},
      "tiny", r);
  r.data = testing::two_body_dataset();
  r.out = dir.string();
  r.quiet = true;
  ASSERT_EQ(train(r).steps, 2);
  std::ifstream in(dir / "train.provenance.json");
  const Json path = Json::parse(in).at("attention_path");
  EXPECT_EQ(path.at("path"), "cpu_kernel");
  EXPECT_NE(path.at("reason").get<std::string>().find("CPU kernel"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orbitlaw::model
