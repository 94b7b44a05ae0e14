#pragma once
// Vafa et al.'s GPT (docs/design.md section 4) in LibTorch: two embedding tables (x and y) concatenated and
// projected to n_embd, learned absolute positions or RoPE, pre-LayerNorm blocks with a GELU MLP (4x), and a
// head producing logits for x and y. With the regression head (ModelConfig::head) the input is the
// coordinates themselves, float [B, T, 2] in AU with NaN on non-coordinate rows (the cadence row, padding),
// embedded by one linear map (non-coordinate rows get a learned vector), and a linear head predicts the next
// position's coordinates.
#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "orbitlaw/model/config.hpp"

namespace orbitlaw::model {

struct GptOutput {
  torch::Tensor x_logits;     // [B, T, vocab] (token head)
  torch::Tensor y_logits;     // [B, T, vocab] (token head)
  torch::Tensor coordinates;  // [B, T, 2] predicted next coordinates in AU (regression head)
};

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor attention_weights(const torch::Tensor& x);  // [B, H, T, T]

 private:
  std::vector<torch::Tensor> project_qkv(const torch::Tensor& x);  // q, k, v as [B, H, T, d]
  ModelConfig config_;
  torch::nn::Linear c_attn_{nullptr};
  torch::nn::Linear c_proj_{nullptr};
  torch::Tensor ssmax_scale_;  // [H], only for ssmax
};
TORCH_MODULE(CausalSelfAttention);

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);
  CausalSelfAttention& attn() { return attn_; }
  torch::nn::LayerNorm& ln_1() { return ln_1_; }

 private:
  torch::nn::LayerNorm ln_1_{nullptr}, ln_2_{nullptr};
  CausalSelfAttention attn_{nullptr};
  torch::nn::Linear fc_{nullptr}, fc_proj_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Block);

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const ModelConfig& config);

  // tokens [B, T, 2] int64 (T <= block_size for learned positions) -> logits for the next x and y token;
  // with the regression head, coordinates [B, T, 2] float (AU, NaN off coordinates) -> next coordinates.
  GptOutput forward(const torch::Tensor& tokens);
  // n_layer + 2 tensors [B, T, n_embd]: embedding output, after each block, final post-LayerNorm.
  std::vector<torch::Tensor> hidden_states(const torch::Tensor& tokens);
  // n_layer tensors [B, H, T, T]: each layer's attention weights (diagnostics; O(T^2) memory).
  std::vector<torch::Tensor> attention_maps(const torch::Tensor& tokens);

  std::int64_t n_embd() const { return config_.n_embd; }
  const ModelConfig& config() const { return config_; }
  std::int64_t parameter_count() const;

 private:
  torch::Tensor embed(const torch::Tensor& tokens);
  ModelConfig config_;
  torch::nn::Embedding wte_x_{nullptr}, wte_y_{nullptr}, wpe_{nullptr};
  torch::nn::Linear in_proj_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::nn::Linear head_{nullptr};  // n_embd -> 2 * vocab (x logits, then y logits)
  // Regression head: coordinates (divided by coordinate_scale) -> n_embd, the vector of non-coordinate rows,
  // and n_embd -> next coordinates.
  torch::nn::Linear coord_in_{nullptr}, coord_head_{nullptr};
  torch::Tensor start_;
};
TORCH_MODULE(Gpt);

// Mean cross-entropy over the x and y channels against targets [B, T, 2]; positions whose target is
// `ignore_index` (the tokenizer's pad token) do not count.
torch::Tensor next_token_loss(const GptOutput& output, const torch::Tensor& targets,
                              std::int64_t ignore_index);

// Regression head: the summed squared error, in units of coordinate_scale, over the x and y channels of the
// targets [B, T, 2] (AU) that are finite, and how many such target positions there are.
std::pair<torch::Tensor, std::int64_t> position_squared_error(const GptOutput& output,
                                                              const torch::Tensor& targets,
                                                              double coordinate_scale);
// The targets [B, T, 2] with NaN where the input before them [B, T, 2] is not a position (the cadence row,
// padding): the first position of a sequence follows no position and cannot be predicted from one, and its
// error (the size of the orbit) would dominate the loss. The regression head trains and is scored on these.
torch::Tensor predictable_targets(const torch::Tensor& inputs, const torch::Tensor& targets);
// Mean over the finite target positions and the two channels of the squared error in units of
// coordinate_scale (the regression head's training loss).
torch::Tensor next_position_loss(const GptOutput& output, const torch::Tensor& targets,
                                 double coordinate_scale);

}  // namespace orbitlaw::model
