// Whole-model parity with the PyTorch reference, in the style of llm.c's test_gpt2: for every attention kind,
// bench/model/gpt_parity.py (run here through the project's .venv python) builds the same tiny GPT in
// float64 from a fixed seed and writes its weights, one token batch, the logits, the training loss and the
// gradient of every parameter. The LibTorch GPT gets those weights by name, runs the same batch forward,
// next_token_loss and backward, and must match everything to float64 rounding. The same check must then fail
// once one weight is moved slightly, so a passing check means something. The regression head is checked the
// same way: coordinates for logits, next_position_loss for next_token_loss.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;

// gpt_parity.py writes little-endian bytes, which this reader takes as native.
static_assert(std::endian::native == std::endian::little, "the parity files are little-endian");

// Largest difference allowed, relative to the largest magnitude of the reference tensor. Two float64
// implementations of the same function agree to ~1e-15 here (a few hundred roundings of 1.1e-16); 1e-10
// leaves room for reordered sums and is still five orders of magnitude below a float32 computation.
constexpr double kTolerance = 1e-10;

struct Reference {
  Json meta;
  std::map<std::string, torch::Tensor> tensors;  // "tokens", "logits_x", "param:NAME", "grad:NAME", ...

  const torch::Tensor& at(const std::string& name) const {
    auto it = tensors.find(name);
    if (it == tensors.end()) throw std::runtime_error("parity file has no tensor " + name);
    return it->second;
  }
};

// Runs the reference for one case into a fresh folder and reads CASE.json / CASE.bin back.
Reference generate_reference(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("orbitlaw_gpt_parity_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string command = std::string("\"") + ORBITLAW_PYTHON + "\" \"" + ORBITLAW_SOURCE_DIR +
                              "/bench/model/gpt_parity.py\" --out \"" + dir.string() + "\" --case " + name;
  if (std::system(command.c_str()) != 0) throw std::runtime_error("reference failed: " + command);

  Reference ref;
  ref.meta = load_json_file((dir / (name + ".json")).string());
  std::ifstream in(dir / (name + ".bin"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& entry : ref.meta.at("tensors")) {
    const auto dtype = entry.at("dtype").get<std::string>() == "int64" ? torch::kInt64 : torch::kFloat64;
    const auto shape = entry.at("shape").get<std::vector<std::int64_t>>();
    const auto offset = entry.at("offset").get<std::size_t>();
    auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
    const auto size = static_cast<std::size_t>(t.numel()) * t.element_size();
    if (offset + size > bytes.size()) throw std::runtime_error("parity file too short for " + name);
    std::copy_n(bytes.data() + offset, size, static_cast<char*>(t.data_ptr()));
    ref.tensors.emplace(entry.at("name").get<std::string>(), t);
  }
  fs::remove_all(dir);
  return ref;
}

// max |a - b| / max |b| (the absolute difference where b is all zeros).
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  const double diff = (a - b).abs().max().item<double>();
  const double scale = b.numel() == 0 ? 0.0 : b.abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

struct Comparison {
  double logits = 0;
  double loss = 0;
  double gradients = 0;  // the largest over all parameters
  std::string worst_gradient;
  bool within(double tolerance) const {
    return logits <= tolerance && loss <= tolerance && gradients <= tolerance;
  }
};

std::ostream& operator<<(std::ostream& os, const Comparison& c) {
  return os << "logits " << c.logits << ", loss " << c.loss << ", gradients " << c.gradients << " (worst "
            << c.worst_gradient << ")";
}

// Forward, the training loss (next_token_loss, or next_position_loss for the regression head) and backward
// of `model` on the reference's batch, compared with the reference.
Comparison run_and_compare(Gpt& model, const Reference& ref) {
  const auto& tokens = ref.at("tokens");
  const auto t = tokens.size(1) - 1;
  const bool regression = model->config().head == Head::kRegression;
  model->zero_grad();
  auto out = model->forward(tokens.narrow(1, 0, t));
  auto loss = regression
                  ? next_position_loss(out, tokens.narrow(1, 1, t), model->config().coordinate_scale)
                  : next_token_loss(out, tokens.narrow(1, 1, t), ref.meta.at("pad").get<std::int64_t>());
  // A float32 step anywhere (the loss used to be taken in float32) would cap the agreement at ~1e-7.
  EXPECT_EQ((regression ? out.coordinates : out.x_logits).scalar_type(), torch::kFloat64);
  EXPECT_EQ(loss.scalar_type(), torch::kFloat64);
  loss.backward();

  Comparison c;
  c.logits = regression ? relative_difference(out.coordinates, ref.at("coordinates"))
                        : std::max(relative_difference(out.x_logits, ref.at("logits_x")),
                                   relative_difference(out.y_logits, ref.at("logits_y")));
  c.loss = relative_difference(loss.detach(), ref.at("loss"));
  for (const auto& item : model->named_parameters()) {
    EXPECT_TRUE(item.value().grad().defined()) << item.key() << " got no gradient";
    if (!item.value().grad().defined()) continue;
    const double d = relative_difference(item.value().grad(), ref.at("grad:" + item.key()));
    if (d >= c.gradients) {
      c.gradients = d;
      c.worst_gradient = item.key();
    }
  }
  return c;
}

std::set<std::string> names_with_prefix(const Reference& ref, const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& [name, tensor] : ref.tensors) {
    if (name.starts_with(prefix)) names.insert(name.substr(prefix.size()));
  }
  return names;
}

class GptParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GptParity, MatchesFloat64PyTorchReferenceAndFailsWithOnePerturbedWeight) {
  const auto ref = generate_reference(GetParam());
  const auto config = ModelConfig::from_json(ref.meta.at("model"));
  Gpt model(config);
  model->to(torch::kFloat64);

  // Every parameter is covered: the LibTorch model, the reference's weights and its gradients name the
  // same set, and each weight is copied in by name.
  std::set<std::string> names;
  for (const auto& item : model->named_parameters()) names.insert(item.key());
  ASSERT_EQ(names, names_with_prefix(ref, "param:"));
  ASSERT_EQ(names, names_with_prefix(ref, "grad:"));
  {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters()) {
      const auto& weight = ref.at("param:" + item.key());
      ASSERT_EQ(item.value().sizes(), weight.sizes()) << item.key();
      item.value().copy_(weight);
    }
  }

  const auto parity = run_and_compare(model, ref);
  std::cout << "[gpt parity] " << GetParam() << ": " << parity << "; tolerance " << kTolerance << "\n";
  EXPECT_TRUE(parity.within(kTolerance)) << parity;

  // LSSAR: the rows the reference cut off as near-uniform (a body at rest in the batch) are cut here too,
  // i.e. their attention weights are all zero.
  if (!ref.meta.at("lssar").is_null()) {
    torch::NoGradGuard no_grad;
    const auto& tokens = ref.at("tokens");
    std::int64_t zero_rows = 0;
    for (const auto& map : model->attention_maps(tokens.narrow(1, 0, tokens.size(1) - 1))) {
      zero_rows += (map.sum(-1) == 0).sum().item<std::int64_t>();
    }
    EXPECT_EQ(zero_rows, ref.meta.at("lssar").at("cut").get<std::int64_t>());
    EXPECT_GT(zero_rows, 0);
  }

  // The same check must fail when a single weight is off by 1e-6: one query weight of layer 0, head 0.
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["blocks.0.attn.c_attn.weight"][0][0].add_(1e-6);
  }
  const auto perturbed = run_and_compare(model, ref);
  std::cout << "[gpt parity] " << GetParam()
            << " with blocks.0.attn.c_attn.weight[0][0] += 1e-6: " << perturbed << "\n";
  EXPECT_FALSE(perturbed.within(kTolerance)) << perturbed;
  EXPECT_GT(perturbed.logits, 10 * kTolerance) << "a moved weight must show in the outputs";
}

// gpt_parity.py's CASES: every AttentionKind, LSSAR also at p = 3, LSSA also with RoPE, and the regression
// head (coordinates in and out, NaN rows read as the learned start vector) with full and windowed softmax.
INSTANTIATE_TEST_SUITE_P(Cases, GptParity,
                         ::testing::Values("softmax", "lssa", "lssar", "lssar_p3", "ssmax", "window",
                                           "lssa_rope", "regression", "regression_window"),
                         [](const auto& case_info) { return case_info.param; });

}  // namespace
}  // namespace orbitlaw::model
