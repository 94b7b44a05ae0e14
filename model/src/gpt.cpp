#include "orbitlaw/model/gpt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "orbitlaw/model/attention.hpp"
#include "orbitlaw/model/attention_kinds.hpp"

namespace orbitlaw::model {

namespace {

namespace nn = torch::nn;

// Beyond this length the reference attention processes query rows in chunks (memory O(chunk * T)).
constexpr std::int64_t kChunkAbove = 2048;
constexpr std::int64_t kQueryChunk = 1024;

nn::Linear linear(int in, int out, bool bias) { return nn::Linear(nn::LinearOptions(in, out).bias(bias)); }

// LayerNorm always has its weight and bias (LibTorch's LayerNorm has no bias-free form); `bias` in the config
// concerns the linear layers.
nn::LayerNorm layer_norm(int width) {
  return nn::LayerNorm(nn::LayerNormOptions({width}).elementwise_affine(true));
}

}  // namespace

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& config) : config_(config) {
  c_attn_ = register_module("c_attn", linear(config.n_embd, 3 * config.n_embd, config.bias));
  c_proj_ = register_module("c_proj", linear(config.n_embd, config.n_embd, config.bias));
  if (attention_kind_info(config.attention.kind).learned_scale) {
    ssmax_scale_ =
        register_parameter("ssmax_scale", torch::full({config.n_head}, config.attention.ssmax_init));
  }
}

std::vector<torch::Tensor> CausalSelfAttentionImpl::project_qkv(const torch::Tensor& x) {
  const auto b = x.size(0);
  const auto t = x.size(1);
  auto qkv = c_attn_->forward(x).split(config_.n_embd, -1);
  std::vector<torch::Tensor> heads;
  for (auto& part : qkv) {
    heads.push_back(part.view({b, t, config_.n_head, config_.head_dim()}).transpose(1, 2));  // [B, H, T, d]
  }
  if (config_.positional == Positional::kRope) {
    heads[0] = apply_rope(heads[0], config_.rope_theta);
    heads[1] = apply_rope(heads[1], config_.rope_theta);
  }
  return heads;
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  const auto b = x.size(0);
  const auto t = x.size(1);
  auto qkv = project_qkv(x);
  auto y =
      attention(qkv[0], qkv[1], qkv[2], config_.attention, ssmax_scale_, t > kChunkAbove ? kQueryChunk : 0);
  return c_proj_->forward(y.transpose(1, 2).contiguous().view({b, t, config_.n_embd}));
}

torch::Tensor CausalSelfAttentionImpl::attention_weights(const torch::Tensor& x) {
  auto qkv = project_qkv(x);
  return model::attention_weights(qkv[0], qkv[1], config_.attention, ssmax_scale_);
}

BlockImpl::BlockImpl(const ModelConfig& config) {
  ln_1_ = register_module("ln_1", layer_norm(config.n_embd));
  attn_ = register_module("attn", CausalSelfAttention(config));
  ln_2_ = register_module("ln_2", layer_norm(config.n_embd));
  fc_ = register_module("c_fc", linear(config.n_embd, 4 * config.n_embd, config.bias));
  fc_proj_ = register_module("c_proj", linear(4 * config.n_embd, config.n_embd, config.bias));
  dropout_ = register_module("dropout", nn::Dropout(config.dropout));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  auto h = x + dropout_->forward(attn_->forward(ln_1_->forward(x)));
  return h + dropout_->forward(fc_proj_->forward(torch::gelu(fc_->forward(ln_2_->forward(h)))));
}

GptImpl::GptImpl(const ModelConfig& config) : config_(config) {
  config_.validate();
  const bool regression = config.head == Head::kRegression;
  if (regression && !(config.coordinate_scale > 0))
    throw Error("model config: the regression head needs a positive coordinate_scale");
  if (regression) {
    coord_in_ = register_module("coord_in", linear(2, config.n_embd, config.bias));
    start_ = register_parameter("start", torch::zeros({config.n_embd}));
  } else {
    wte_x_ = register_module("wte_x", nn::Embedding(config.vocab, config.n_embd));
    wte_y_ = register_module("wte_y", nn::Embedding(config.vocab, config.n_embd));
    in_proj_ = register_module("in_proj", linear(2 * config.n_embd, config.n_embd, config.bias));
  }
  if (config.positional == Positional::kLearned) {
    wpe_ = register_module("wpe", nn::Embedding(config.block_size, config.n_embd));
  }
  blocks_ = register_module("blocks", nn::ModuleList());
  for (int i = 0; i < config.n_layer; ++i) blocks_->push_back(Block(config));
  ln_f_ = register_module("ln_f", layer_norm(config.n_embd));
  if (regression) {
    coord_head_ = register_module("coord_head", linear(config.n_embd, 2, config.bias));
  } else {
    head_ = register_module("head", linear(config.n_embd, 2 * config.vocab, config.bias));
  }

  // nanoGPT initialisation: N(0, 0.02) weights, zero biases, residual projections scaled by 1/sqrt(2
  // n_layer).
  torch::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    const auto& name = item.key();
    auto& p = item.value();
    const bool is_norm = name.find("ln_") != std::string::npos;
    if (is_norm || name.find("ssmax_scale") != std::string::npos) continue;  // keep their defaults
    if (name.ends_with(".bias")) {
      p.zero_();
    } else if (name.ends_with("c_proj.weight")) {
      p.normal_(0, 0.02 / std::sqrt(2.0 * config.n_layer));
    } else {
      p.normal_(0, 0.02);
    }
  }
}

torch::Tensor GptImpl::embed(const torch::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 3 && tokens.size(2) == 2, "Gpt expects inputs [B, T, 2]");
  const auto t = tokens.size(1);
  if (config_.positional == Positional::kLearned && t > config_.block_size) {
    throw Error("input of " + std::to_string(t) + " positions exceeds the learned-position context of " +
                std::to_string(config_.block_size) + " (use positional=rope for longer inputs)");
  }
  const bool floating = tokens.is_floating_point();
  torch::Tensor x;
  if (config_.head == Head::kRegression) {
    if (!floating) throw Error("the regression-head model reads coordinates (float), not tokens");
    auto scaled = tokens.to(start_.scalar_type()) / config_.coordinate_scale;
    auto is_coordinate = torch::isfinite(scaled).all(-1, /*keepdim=*/true);  // [B, T, 1]
    x = torch::where(is_coordinate, coord_in_->forward(torch::nan_to_num(scaled, 0.0, 0.0, 0.0)), start_);
  } else {
    if (floating) throw Error("the token-head model reads tokens (integers), not coordinates");
    x = torch::cat({wte_x_->forward(tokens.select(2, 0)), wte_y_->forward(tokens.select(2, 1))}, -1);
    x = in_proj_->forward(x);
  }
  if (wpe_) x = x + wpe_->forward(torch::arange(t, tokens.options().dtype(torch::kInt64)));
  return x;
}

namespace {

// What a residual target adds to the head's output (ModelConfig::target): x_t, or 2 x_t - x_{t-1}. A
// non-coordinate input (the cadence row, padding) counts as 0, and a position whose previous input is not a
// coordinate has no velocity.
torch::Tensor residual_base(const torch::Tensor& inputs, Target target) {
  auto finite = torch::isfinite(inputs).all(-1, /*keepdim=*/true);
  auto x = torch::where(finite, inputs, torch::zeros_like(inputs));
  if (target == Target::kStep) return x;
  const auto T = inputs.size(1);
  auto before =
      torch::cat({torch::full_like(inputs.narrow(1, 0, 1), std::numeric_limits<double>::quiet_NaN()),
                  inputs.narrow(1, 0, T - 1)},
                 1);
  auto previous = torch::where(torch::isfinite(before).all(-1, true) & finite, before, x);
  return 2 * x - previous;
}

}  // namespace

GptOutput GptImpl::forward(const torch::Tensor& tokens) {
  auto x = embed(tokens);
  for (auto& block : *blocks_) x = block->as<Block>()->forward(x);
  if (config_.head == Head::kRegression) {
    auto out = coord_head_->forward(ln_f_->forward(x)) * config_.coordinate_scale;
    if (config_.target == Target::kPosition) return {{}, {}, out};
    return {{}, {}, out + residual_base(tokens.to(out.scalar_type()), config_.target)};
  }
  auto logits = head_->forward(ln_f_->forward(x)).split(config_.vocab, -1);
  return {logits[0], logits[1], {}};
}

std::vector<torch::Tensor> GptImpl::hidden_states(const torch::Tensor& tokens) {
  std::vector<torch::Tensor> states;
  auto x = embed(tokens);
  states.push_back(x);
  for (auto& block : *blocks_) {
    x = block->as<Block>()->forward(x);
    states.push_back(x);
  }
  states.push_back(ln_f_->forward(x));
  return states;
}

std::vector<torch::Tensor> GptImpl::attention_maps(const torch::Tensor& tokens) {
  std::vector<torch::Tensor> maps;
  auto x = embed(tokens);
  for (auto& module : *blocks_) {
    auto* block = module->as<Block>();
    maps.push_back(block->attn()->attention_weights(block->ln_1()->forward(x)));
    x = block->forward(x);
  }
  return maps;
}

std::int64_t GptImpl::parameter_count() const {
  std::int64_t total = 0;
  for (const auto& p : parameters()) total += p.numel();
  return total;
}

torch::Tensor next_token_loss(const GptOutput& output, const torch::Tensor& targets,
                              std::int64_t ignore_index) {
  auto options = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(ignore_index);
  const auto v = output.x_logits.size(-1);
  // At least float32: reduced-precision (autocast) logits are widened for the log-softmax, while float64
  // logits stay float64 so a float64 model has a float64 loss and gradients
  // (tests/model/test_gpt_parity.cpp).
  const auto dtype = torch::promote_types(output.x_logits.scalar_type(), torch::kFloat32);
  auto loss_x = torch::nn::functional::cross_entropy(output.x_logits.reshape({-1, v}).to(dtype),
                                                     targets.select(-1, 0).reshape({-1}), options);
  auto loss_y = torch::nn::functional::cross_entropy(output.y_logits.reshape({-1, v}).to(dtype),
                                                     targets.select(-1, 1).reshape({-1}), options);
  return 0.5 * (loss_x + loss_y);
}

}  // namespace orbitlaw::model

namespace orbitlaw::model {

std::pair<torch::Tensor, std::int64_t> position_squared_error(const GptOutput& output,
                                                              const torch::Tensor& targets,
                                                              double coordinate_scale) {
  TORCH_CHECK(output.coordinates.defined(), "position_squared_error needs the regression head's output");
  // At least float32, as for the token loss; float64 models keep float64.
  const auto dtype = torch::promote_types(output.coordinates.scalar_type(), torch::kFloat32);
  auto target = targets.to(output.coordinates.device(), dtype) / coordinate_scale;
  auto valid = torch::isfinite(target).all(-1, /*keepdim=*/true);  // [B, T, 1]
  auto diff = output.coordinates.to(dtype) / coordinate_scale - torch::nan_to_num(target, 0.0, 0.0, 0.0);
  auto squared = torch::where(valid, diff * diff, torch::zeros_like(diff));
  return {squared.sum(), valid.sum().item<std::int64_t>()};
}

torch::Tensor predictable_targets(const torch::Tensor& inputs, const torch::Tensor& targets) {
  auto is_position = torch::isfinite(inputs).all(-1, /*keepdim=*/true).to(targets.device());
  return torch::where(is_position, targets,
                      torch::full_like(targets, std::numeric_limits<double>::quiet_NaN()));
}

torch::Tensor next_position_loss(const GptOutput& output, const torch::Tensor& targets,
                                 double coordinate_scale) {
  auto [sum, count] = position_squared_error(output, targets, coordinate_scale);
  return sum / (2.0 * static_cast<double>(std::max<std::int64_t>(count, 1)));
}

}  // namespace orbitlaw::model
