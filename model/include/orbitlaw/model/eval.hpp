#pragma once
// Evaluation (orbitlaw eval) of a trained model on a trajectory dataset. The result is one JSON object:
//
// {"format": "orbitlaw-eval", "version": 1, "checkpoint", "data", "model", "tokenizer", "settings",
//  "loss": nats (mean over x and y), "accuracy": fraction of positions with both tokens right,
//  "next_token": {"loss", "loss_x", "loss_y", "accuracy", "accuracy_x", "accuracy_y", "positions",
//                 "sequences", "unigram_loss" (entropy of the data's own per-channel token frequencies: the
//                 best any position-blind predictor can do), "uniform_loss" (ln vocab)},
//  "trajectory_error": {"<k>": {"model", "previous_position", "per_orbit_mean", "constant_velocity",
//                              "token_oracle", "rollouts", "positions", "median": {the same five}}},
//       mean (and median) error in AU over every predicted position of greedy k-step rollouts (k = 1: every
//       position of every sequence, teacher-forced); baselines see the same decoded (bin-centre) observations
//       as the model; token_oracle is the error of the true next token's bin centre (the quantisation floor),
//  "length_extrapolation": [{"factor", "length", "sequences", "loss"}],   factor x block_size positions
//       (RoPE models; learned positions only have factor 1),
//  "attention": [{"layer", "head", "entropy", "mean_distance", "zero_rows"}],   per row, averaged: entropy
//       of the attention weights in nats and mean distance sum_j w_ij (i - j) in positions; zero_rows is the
//       share of all-zero rows (LSSAR rows at or below uniform),
//  "provenance": {...}}
//
// A regression-head model (ModelConfig::head) has "next_position": {"loss" (its training loss: mean squared
// error in units of coordinate_scale), "rmse_au", "positions", "sequences"} instead of "next_token" and
// "accuracy"; its rollouts feed back the predicted coordinates, its baselines see the exact coordinates it
// reads, and token_oracle is null (it has no quantisation floor).
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/model/checkpoint.hpp"

namespace orbitlaw::model {

struct EvalConfig {
  int sequences = 64;  // systems of the dataset used (the first ones)
  int batch_size = 8;
  std::vector<int> rollout_steps = {1, 5, 100};
  std::vector<int> length_factors = {1, 2, 4, 8, 16};
  int max_length_factor = 16;   // factors above this are skipped
  int length_sequences = 8;     // systems per extrapolation length
  int attention_sequences = 4;  // systems for the attention diagnostics
  int threads = 0;
  std::string device = "auto";
  // The behavioural test (orbitlaw/probe/behaviour.hpp), run by orbitlaw eval where the model and data allow
  // it: the transplant's values of lambda, positions per transplanted history, rows transplanted, and
  // resamples of systems for the power-law intervals.
  bool behaviour = true;
  std::vector<double> transplant_lambdas = {0, 0.5, 1, 1.5};
  int transplant_history = 16;
  int transplant_rows = 256;
  int bootstrap = 400;
  // The law search on the implied accelerations ({"protocol": "published" | "extended", and the probe
  // protocol keys}; orbitlaw/probe/behaviour_eval.hpp); null: not run.
  Json law_search = nullptr;

  // The eval config's keys: types, defaults (these members' initial values), ranges, descriptions.
  static const ConfigSchema<EvalConfig>& schema();
  static EvalConfig from_config(ConfigReader& reader);
};

Json evaluate(const LoadedModel& model, const std::string& checkpoint_path, const std::string& data_path,
              const EvalConfig& config);

}  // namespace orbitlaw::model
