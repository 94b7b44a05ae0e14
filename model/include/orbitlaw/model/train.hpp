#pragma once
// Training (orbitlaw train): AdamW with weight decay on matrices only, linear warm-up then cosine decay,
// gradient clipping and accumulation, bf16 autocast and TF32 on CUDA, explicit CPU threads, periodic
// validation, metrics as JSON lines, atomic checkpoints, exact resume and a wall-clock budget.
//
// Data parallel: launched like torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK in the
// environment; see orbitlaw/model/data_parallel.hpp), every rank draws the same global batch of
// world_size x batch_size sequences and trains on its own slice, so N ranks follow one process with batch
// N x batch_size. Only rank 0 writes the checkpoint, metrics and provenance; without those variables (or with
// WORLD_SIZE=1) training is the single-process path.
#include <limits>
#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/model/config.hpp"

namespace orbitlaw::model {

struct TrainConfig {
  int batch_size = 8;    // sequences per micro-batch (per rank when data parallel)
  int grad_accum = 1;    // micro-batches per optimizer step
  double lr = 6e-4;      // peak learning rate
  double min_lr = 6e-5;  // floor of the cosine decay
  int warmup_steps = 100;
  int max_steps = 1000;
  double weight_decay = 0.1;  // on matrices (and embedding tables) only
  double beta1 = 0.9;
  double beta2 = 0.95;
  double grad_clip = 1.0;   // global norm; 0 disables
  int eval_interval = 100;  // steps between validations (and at the end)
  int eval_batches = 8;
  int checkpoint_interval = 200;  // steps between checkpoints (and at the end)
  int log_interval = 1;           // steps between metrics.jsonl lines
  double val_fraction = 0.05;     // held-out share of --data when no --val is given
  std::uint64_t seed = 1;
  int threads = 0;              // CPU threads for LibTorch; 0: OMP_NUM_THREADS, else all hardware threads
  std::string device = "auto";  // auto (CUDA if available), cpu, cuda, cuda:N
  bool bf16 = true;             // bf16 autocast on CUDA
  int prefetch = 4;             // batches prepared ahead on the background thread
  double max_minutes = 0;       // wall-clock budget; 0: none. The run stops cleanly with a checkpoint.
  double max_seconds = 0;       // the same in seconds (the experiments' budget key); the smaller one applies
  // Regression head: standard deviation (AU) of Gaussian noise added to every input coordinate during
  // training (never to targets or validation), Liu et al.'s context noise; drawn from (seed, batch index),
  // so a resumed run adds the same noise.
  double context_noise = 0;
  double budget_seconds() const;  // 0: no budget

  // The "train" section's keys: types, defaults (these members' initial values; a preset changes the first
  // six), ranges, descriptions.
  static const ConfigSchema<TrainConfig>& schema();
  static TrainConfig from_config(ConfigReader& section, const TrainDefaults& defaults);
  // The defaults with a preset's six training settings.
  static TrainConfig with_preset(const TrainDefaults& defaults);
};

// Every key of the train config (preset, seed, tokenizer.*, model.*, train.*) with its type, the tiny
// preset's default, range and description, for `orbitlaw config keys train` and docs/config.md.
std::vector<KeyDoc> train_config_keys();

// Learning rate at optimizer step `step` (0-based): linear warm-up to lr over warmup_steps, then cosine decay
// to min_lr at max_steps.
double learning_rate(const TrainConfig& config, int step);

struct TrainRequest {
  std::string data;  // HDF5 trajectory dataset or pre-tokenized file
  std::string val;   // optional; otherwise the last val_fraction of `data`
  std::string out;   // run directory: checkpoint.pt, metrics.jsonl, train.provenance.json
  bool resume = false;
  // A resume whose data or learning settings differ from the checkpoint's run is refused unless this is set;
  // either way train.provenance.json's "segments" record what changed where.
  bool resume_changed = false;
  bool quiet = false;  // no progress line (tests)
  TokenizerConfig tokenizer;
  ModelConfig model;
  TrainConfig train;
  Json resolved_config;  // what provenance records
};

struct TrainResult {
  int steps = 0;  // optimizer steps completed (in total, across resumes)
  double final_train_loss = 0;
  double final_val_loss = std::numeric_limits<double>::quiet_NaN();  // NaN if never evaluated
  bool stopped_by_time_limit = false;
  std::string checkpoint;
  int rank = 0;  // this process's rank in a data-parallel job (0 alone)
  int world_size = 1;
};

TrainResult train(const TrainRequest& request);

// Settings of a train command line or config file: `config` holds optional "preset" (default tiny), "seed"
// (the default of train.seed), and "tokenizer", "model" and "train" sections; unknown keys are rejected.
// Fills tokenizer, model, train and resolved_config.
void resolve_train_config(const Json& config, const std::string& preset_name, TrainRequest& request);

}  // namespace orbitlaw::model
