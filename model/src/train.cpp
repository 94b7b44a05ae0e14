#include "orbitlaw/model/train.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Version.h>
#include <ATen/autocast_mode.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <numbers>
#include <optional>
#include <thread>
#include <utility>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/budget.hpp"
#include "orbitlaw/common/checked_file.hpp"
#include "orbitlaw/common/progress.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/model.hpp"
#include "orbitlaw/model/attention_path.hpp"
#include "orbitlaw/model/checkpoint.hpp"
#include "orbitlaw/model/data.hpp"
#include "orbitlaw/model/data_parallel.hpp"
#include "orbitlaw/model/device.hpp"
#include "orbitlaw/model/gpt.hpp"
#include "orbitlaw/simulator.hpp"
#include "resume_check.hpp"

namespace orbitlaw::model {

namespace fs = std::filesystem;

const ConfigSchema<TrainConfig>& TrainConfig::schema() {
  using T = TrainConfig;
  static const auto schema =
      ConfigSchema<T>()
          .key("batch_size", &T::batch_size, "sequences per micro-batch (per rank when data parallel)",
               Range::at_least(1))
          .key("grad_accum", &T::grad_accum, "micro-batches per optimizer step", Range::at_least(1))
          .key("lr", &T::lr, "peak learning rate", Range::greater_than(0))
          .key("min_lr", &T::min_lr, "floor of the cosine decay, at most lr", Range::at_least(0))
          .key("warmup_steps", &T::warmup_steps, "steps of linear warm-up", Range::at_least(0))
          .key("max_steps", &T::max_steps, "optimizer steps", Range::at_least(1))
          .key("weight_decay", &T::weight_decay, "AdamW weight decay on matrices and embedding tables")
          .key("beta1", &T::beta1, "AdamW beta1")
          .key("beta2", &T::beta2, "AdamW beta2")
          .key("grad_clip", &T::grad_clip, "global gradient-norm clip; 0 disables")
          .key("eval_interval", &T::eval_interval, "steps between validations (and at the end)",
               Range::at_least(1))
          .key("eval_batches", &T::eval_batches, "validation batches per evaluation", Range::at_least(1))
          .key("checkpoint_interval", &T::checkpoint_interval, "steps between checkpoints (and at the end)",
               Range::at_least(1))
          .key("log_interval", &T::log_interval, "steps between metrics.jsonl lines", Range::at_least(1))
          .key("val_fraction", &T::val_fraction, "held-out share of --data when no --val is given",
               Range::open(0, 1))
          .key("seed", &T::seed, "initialisation, batch order and noise (the top-level seed when absent)")
          .key("threads", &T::threads, "LibTorch CPU threads; 0: OMP_NUM_THREADS, else every core",
               Range::between(0, kMaxThreads))
          .key("device", &T::device, "auto (CUDA if available), cpu, cuda or cuda:N")
          .key("bf16", &T::bf16, "bf16 autocast on CUDA")
          .key("prefetch", &T::prefetch, "batches prepared ahead on a background thread", Range::at_least(0))
          .key("max_minutes", &T::max_minutes,
               "wall-clock budget in minutes; 0: none (stops with a checkpoint)", Range::at_least(0))
          .key("max_seconds", &T::max_seconds, "the same in seconds; the smaller budget applies",
               Range::at_least(0))
          .key("context_noise", &T::context_noise,
               "regression: s.d. (AU) of Gaussian noise on every training input coordinate",
               Range::at_least(0));
  return schema;
}

TrainConfig TrainConfig::with_preset(const TrainDefaults& d) {
  TrainConfig c;
  c.batch_size = d.batch_size;
  c.grad_accum = d.grad_accum;
  c.lr = d.lr;
  c.min_lr = d.min_lr;
  c.warmup_steps = d.warmup_steps;
  c.max_steps = d.max_steps;
  return c;
}

TrainConfig TrainConfig::from_config(ConfigReader& s, const TrainDefaults& d) {
  TrainConfig c = schema().read(s, TrainConfig::with_preset(d));
  if (c.min_lr > c.lr)
    throw Error(s.name_of("min_lr") + " must be at most lr (" + std::to_string(c.lr) + ")");
  return c;
}

double TrainConfig::budget_seconds() const {
  const double a = max_minutes * 60, b = max_seconds;
  if (a > 0 && b > 0) return std::min(a, b);
  return std::max(a, b);
}

double learning_rate(const TrainConfig& c, int step) {
  if (step < c.warmup_steps) return c.lr * (step + 1) / c.warmup_steps;
  if (step >= c.max_steps) return c.min_lr;
  const double progress =
      static_cast<double>(step - c.warmup_steps) / std::max(1, c.max_steps - c.warmup_steps);
  return c.min_lr + 0.5 * (1 + std::cos(std::numbers::pi * progress)) * (c.lr - c.min_lr);
}

std::vector<KeyDoc> train_config_keys() {
  const Preset p = preset("tiny");
  std::vector<KeyDoc> docs = {
      {"preset", "string", "\"tiny\"", "one of: " + schema_detail::join_choices(preset_names()),
       "the preset whose values are the defaults below (here tiny's); --preset wins"},
      {"seed", "integer", "1", "", "the run's seed, used where train.seed is not given"}};
  auto append = [&docs](std::vector<KeyDoc> more) {
    for (auto& d : more) docs.push_back(std::move(d));
  };
  append(TokenizerConfig::schema().keys(p.tokenizer, "tokenizer."));
  ModelConfig model = p.model;
  model.vocab = p.tokenizer.vocab();
  append(ModelConfig::schema().keys(model, "model."));
  append(TrainConfig::schema().keys(TrainConfig::with_preset(p.train), "train."));
  return docs;
}

void resolve_train_config(const Json& config, const std::string& preset_name, TrainRequest& request) {
  ConfigReader reader(config, "train config");
  std::string name = reader.get<std::string>("preset", "tiny");
  if (!preset_name.empty()) name = preset_name;
  reader.set_resolved("preset", name);
  const Preset p = preset(name);

  auto tokenizer_section = reader.section("tokenizer");
  const bool rows_given = tokenizer_section.has("rows");
  request.tokenizer = TokenizerConfig::from_config(tokenizer_section, p.tokenizer);

  ModelConfig model_defaults = p.model;
  model_defaults.vocab = request.tokenizer.vocab();  // follows tokenizer.bins unless set explicitly
  auto model_section = reader.section("model");
  request.model = ModelConfig::from_config(model_section, model_defaults);
  if (request.model.vocab != request.tokenizer.vocab())
    throw Error("model.vocab " + std::to_string(request.model.vocab) +
                " differs from the tokenizer's vocabulary " + std::to_string(request.tokenizer.vocab()) +
                " (bins + 3)");
  if (request.model.head == Head::kRegression && request.model.coordinate_scale == 0)
    request.model.coordinate_scale = request.tokenizer.coordinate_scale();
  // Sequences are cut to the context unless tokenizer.rows is set explicitly.
  if (!rows_given) request.tokenizer.rows = request.model.block_size + 1;

  TrainDefaults train_defaults = p.train;
  const auto seed = reader.get<std::uint64_t>("seed", 1);
  auto train_section = reader.section("train");
  request.train = TrainConfig::from_config(train_section, train_defaults);
  if (!train_section.has("seed")) request.train.seed = seed;
  if (request.train.context_noise > 0 && request.model.head != Head::kRegression)
    throw Error("train.context_noise needs the regression head (model.head = regression)");
  reader.set_resolved("tokenizer", request.tokenizer.to_json());
  reader.set_resolved("model", request.model.to_json());
  Json train_resolved = train_section.resolved();
  train_resolved["seed"] = request.train.seed;
  reader.set_resolved("train", train_resolved);
  reader.finish();
  request.resolved_config = reader.resolved();
}

namespace {

// bf16 autocast for the forward pass on CUDA (a no-op elsewhere).
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
  }
  ~AutocastScope() {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(at::kCUDA, false);
    at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

// Drops metrics lines past `step` (a resumed run rewrites the steps after its checkpoint).
void truncate_metrics(const std::string& path, int step) {
  std::ifstream in(path);
  if (!in) return;
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      if (Json::parse(line).value("step", 0) > step) continue;
    } catch (const Json::parse_error&) {
      continue;  // a torn last line of an interrupted run
    }
    kept += line + "\n";
  }
  in.close();
  write_text_atomic(path, kept);
}

// What a batch's loss needs besides the batch: the head, the token head's ignore index, the regression
// head's unit of length.
struct LossSettings {
  Head head = Head::kTokens;
  std::int64_t pad = 0;
  double coordinate_scale = 1;
};

LossSettings loss_settings(const TrainRequest& request) {
  return {request.model.head, request.tokenizer.pad_token(), request.model.coordinate_scale};
}

// The training loss of a whole batch (next_token_loss, or next_position_loss for the regression head).
torch::Tensor batch_loss(const GptOutput& output, const torch::Tensor& targets, const LossSettings& s) {
  if (s.head == Head::kRegression) return next_position_loss(output, targets, s.coordinate_scale);
  return next_token_loss(output, targets, s.pad);
}

// The loss of one rank's slice of a global batch, scaled so that its mean over the ranks is exactly
// batch_loss of the whole global batch: summed over the slice's targets, divided by the global batch's
// count of (non-padding) targets, times the world size. A per-slice mean would overweight slices with more
// padding, and a slice of padding only would give 0/0.
torch::Tensor slice_loss(const GptOutput& output, const torch::Tensor& slice_targets,
                         const torch::Tensor& global_targets, int world_size, const LossSettings& s) {
  if (s.head == Head::kRegression) {
    const double counted = torch::isfinite(global_targets).all(-1).sum().item<double>();
    return position_squared_error(output, slice_targets, s.coordinate_scale).first / (2.0 * counted) *
           world_size;
  }
  const std::int64_t pad = s.pad;
  auto options = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(pad).reduction(torch::kSum);
  const auto v = output.x_logits.size(-1);
  auto channel = [&](const torch::Tensor& logits, int c) {
    const double counted = (global_targets.select(-1, c) != pad).sum().item<double>();
    // At least float32, as in next_token_loss: float64 models keep a float64 loss.
    const auto dtype = torch::promote_types(logits.scalar_type(), torch::kFloat32);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, v}).to(dtype),
                                                slice_targets.select(-1, c).reshape({-1}), options) /
           counted;
  };
  return 0.5 * (channel(output.x_logits, 0) + channel(output.y_logits, 1)) * world_size;
}

// This rank's part of the training loss of `global_batch` ([world_size x b, length, 2] on the CPU, the same
// on every rank: int64 tokens, or float64 coordinates for the regression head): the mean over the ranks of
// what this returns is the whole batch's loss, so averaged gradients are those of one process with the whole
// batch. Alone (world_size 1) it is batch_loss. `input_noise`, when defined, is added to the inputs.
torch::Tensor rank_loss(Gpt& model, const torch::Tensor& global_batch, distributed::DataParallel& dp,
                        const torch::Device& device, bool autocast, const LossSettings& s,
                        const torch::Tensor& input_noise = {}) {
  const auto t = global_batch.size(1) - 1;
  auto inputs = global_batch.narrow(1, 0, t);
  auto targets = global_batch.narrow(1, 1, t);
  if (s.head == Head::kRegression) targets = predictable_targets(inputs, targets);
  if (input_noise.defined()) inputs = inputs + input_noise;
  if (dp.world_size() == 1) {
    AutocastScope scope(autocast);
    return batch_loss(model->forward(inputs.to(device)), targets.to(device), s);
  }
  const auto per_rank = global_batch.size(0) / dp.world_size();
  auto mine = [&](const torch::Tensor& x) { return x.narrow(0, dp.rank() * per_rank, per_rank).to(device); };
  AutocastScope scope(autocast);
  return slice_loss(model->forward(mine(inputs)), mine(targets), targets, dp.world_size(), s);
}

// Liu et al.'s context noise for batch `index`: N(0, sigma^2) AU per input coordinate, from a generator
// seeded by (seed, index) alone so that a resumed run draws what the uninterrupted one did.
torch::Tensor context_noise(const TrainConfig& tc, std::uint64_t index, const torch::Tensor& batch) {
  if (!(tc.context_noise > 0)) return {};
  auto generator =
      at::detail::createCPUGenerator(splitmix64_mix(tc.seed ^ 0x6e015eULL ^ splitmix64_mix(index)));
  auto shape = batch.sizes().vec();
  shape[1] -= 1;
  return torch::randn(shape, generator, torch::TensorOptions().dtype(batch.scalar_type())) * tc.context_noise;
}

// Mean loss over the fixed validation batches (global batches; each rank evaluates its slice).
double validation_loss(Gpt& model, const std::vector<torch::Tensor>& batches, const LossSettings& settings,
                       const torch::Device& device, bool autocast, distributed::DataParallel& dp) {
  torch::NoGradGuard no_grad;
  model->eval();
  double total = 0;
  for (const auto& batch : batches)
    total += rank_loss(model, batch, dp, device, autocast, settings).item<double>();
  model->train();
  return dp.average(total / static_cast<double>(batches.size()));
}

// Ranks started with different settings, or resuming from different checkpoints, would silently train
// different things or wait forever at a collective: all compare a fingerprint and fail together if any
// differs. (A 40-bit hash is exact in a double, and the mean of equal values is that value.)
void check_ranks_agree(distributed::DataParallel& dp, const std::string& settings) {
  if (dp.world_size() == 1) return;
  const double mine =
      static_cast<double>(std::hash<std::string>{}(settings) & ((std::uint64_t{1} << 40) - 1));
  if (dp.any(dp.average(mine) != mine)) {
    throw Error("data parallel: the " + std::to_string(dp.world_size()) +
                " ranks differ in their training settings or in the checkpoint they resume from");
  }
}

// Training settings every rank must share (the wall-clock budget, device, threads and prefetch depth may
// differ).
std::string shared_settings(const Json& resolved_config, int step, std::uint64_t next_batch) {
  Json shared = resolved_config;
  if (shared.contains("train")) {
    for (const char* key : {"max_minutes", "max_seconds", "device", "threads", "prefetch"})
      shared["train"].erase(key);
  }
  return shared.dump() + " step " + std::to_string(step) + " batch " + std::to_string(next_batch);
}

// The device this rank trains on, with its CPU threads set: data parallel when launched like torchrun, where
// ranks on one machine share its cores unless threads is set, and each takes the GPU of its LOCAL_RANK.
torch::Device training_device(const TrainConfig& tc, const distributed::LaunchEnvironment& launch) {
  int threads = tc.threads;
  if (threads == 0 && launch.local_world_size > 1)
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / launch.local_world_size);
  configure_threads(threads);
  torch::Device device = resolve_device(tc.device);
  if (launch.distributed() && device.is_cuda() && (tc.device == "auto" || tc.device == "cuda")) {
    // An explicit cuda:N is taken as given.
    if (launch.local_rank >= static_cast<int>(torch::cuda::device_count()))
      throw Error("data parallel: LOCAL_RANK=" + std::to_string(launch.local_rank) + " but only " +
                  std::to_string(torch::cuda::device_count()) + " CUDA devices are visible");
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(launch.local_rank));
  }
  if (device.is_cuda()) enable_tf32();
  return device;
}

// A new training must not overwrite a checkpoint, and a resumed one needs one.
void check_output_folder(const TrainRequest& request, const std::string& checkpoint_path) {
  fs::create_directories(request.out);
  if (!request.resume && fs::exists(checkpoint_path))
    throw Error("'" + checkpoint_path +
                "' already exists; pass --resume to continue it or choose another --out");
  if (request.resume && !fs::exists(checkpoint_path))
    throw Error("--resume: no checkpoint at '" + checkpoint_path + "'");
}

// The model this run trains on `device`: the fused kernel switched off where it failed its parity check there
// (said on stderr, whatever the verbosity), with the path and why.
std::pair<ModelConfig, AttentionPath> model_for_device(const TrainRequest& request,
                                                       const torch::Device& device) {
  AttentionPath path = choose_attention_path(request.model, device, fused_kernel_available(device));
  ModelConfig model = request.model;
  if (!path.fused && path.difference >= 0) {
    model.attention.allow_fused = false;
    std::cerr << "warning: " << path.reason << "\n";
  }
  return {model, path};
}

Json training_provenance(const TrainRequest& request, distributed::DataParallel& dp,
                         const AttentionPath& attention_path) {
  Json versions = simulator::library_versions();
  versions.update(library_versions());
  Json record = provenance_record("train", request.resolved_config, request.train.seed, versions);
  record["data_parallel"] = Json{{"world_size", dp.world_size()},
                                 {"backend", dp.backend_name()},
                                 {"global_batch_size", dp.world_size() * request.train.batch_size}};
  // What a CPU run's bits depend on beyond the config: the thread count in use (not the config's 0, "all
  // cores" or OMP_NUM_THREADS), which splits LibTorch's reductions, and the vector unit its kernels were
  // chosen for (AVX2, AVX512, ...). A rerun matches bit for bit only where both match.
  record["cpu_threads"] = torch::get_num_threads();
  record["cpu_capability"] = at::get_cpu_capability();
  record["attention_path"] = attention_path.json();
  return record;
}

// Data: the whole of --data for training when --val is given, else its last val_fraction held out.
std::pair<TokenStore, TokenStore> open_train_and_validation(const TrainRequest& request) {
  TokenStore data = TokenStore::open_any(request.data, request.tokenizer);
  if (request.model.head == Head::kRegression && !data.has_coordinates())
    throw Error("the regression head trains on coordinates: '" + request.data +
                "' is a pre-tokenized file; give the HDF5 dataset");
  if (!request.val.empty()) {
    TokenStore val = TokenStore::open_any(request.val, request.tokenizer);
    if (request.model.head == Head::kRegression && !val.has_coordinates())
      throw Error("the regression head validates on coordinates: '" + request.val +
                  "' is a pre-tokenized file; give the HDF5 dataset");
    return {data, val};
  }
  if (data.size() < 2)
    throw Error("'" + request.data + "' holds too few systems to hold out validation ones");
  const auto n_val =
      std::clamp<std::int64_t>(std::llround(request.train.val_fraction * data.size()), 1, data.size() - 1);
  return {data.slice(0, data.size() - n_val), data.slice(data.size() - n_val, n_val)};
}

// AdamW's parameter groups: weight decay on matrices (and embedding tables) only.
std::vector<torch::optim::OptimizerParamGroup> parameter_groups(Gpt& model, const TrainConfig& tc,
                                                                const torch::optim::AdamWOptions& options) {
  std::vector<torch::Tensor> decay, no_decay;
  for (auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(
                                 torch::optim::AdamWOptions(options).weight_decay(tc.weight_decay)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(
                                    torch::optim::AdamWOptions(options).weight_decay(0)));
  return groups;
}

// Where a training run starts: from scratch, or where its checkpoint says a resumed one stopped.
struct StartPoint {
  int step = 0;
  std::int64_t tokens = 0;
  std::uint64_t next_batch = 0;
  double elapsed_before = 0;  // seconds spent in earlier runs of a resumed training
  // The run's segments, one per start ({from_step, changed}): what a resumed run changed, if anything.
  Json segments = Json::array();
};

// A resume that would mix two runs (other data, or settings that decide what is learned) is refused unless
// request.resume_changed allows it; either way the segment records what changed (resume_check.hpp).
StartPoint start_point(const TrainRequest& request, const std::string& checkpoint_path,
                       CheckpointContent& content, Gpt& model, torch::optim::AdamW& optimizer,
                       const Json& fingerprint) {
  if (!request.resume) return {.segments = Json::array({Json{{"from_step", 0}, {"changed", nullptr}}})};
  const auto state = load_checkpoint(checkpoint_path, content, model, &optimizer).train_state;
  StartPoint start{state.value("step", 0), state.value("tokens", std::int64_t{0}),
                   state.value("next_batch", std::uint64_t{0}), state.value("elapsed_s", 0.0),
                   state.value("segments", Json::array())};
  Json changed = nullptr;
  if (!state.contains("fingerprint")) {
    changed = "not checked: the checkpoint records no fingerprint of its inputs";
  } else if (const std::string difference = detail::resume_difference(state["fingerprint"], fingerprint);
             !difference.empty()) {
    if (!request.resume_changed)
      throw Error("--resume: " + difference + " differs from the run that wrote '" + checkpoint_path +
                  "'; resume with its data and settings, or pass --resume-changed to continue it anyway "
                  "(recorded in train.provenance.json)");
    changed = difference;
  }
  start.segments.push_back(Json{{"from_step", start.step}, {"changed", changed}});
  return start;
}

// Fixed validation batches (their own seed), so every evaluation measures the same sequences. Batches are
// global: each rank takes its slice of world x batch_size sequences.
std::vector<torch::Tensor> validation_batches(const TokenStore& store, const TrainConfig& tc,
                                              int global_batch, int length, bool coordinates) {
  std::vector<torch::Tensor> batches;
  for (int i = 0; i < tc.eval_batches; ++i) {
    batches.push_back(coordinates
                          ? sample_coordinate_batch(store, tc.seed ^ 0x5a17ULL, i, global_batch, length)
                          : sample_batch(store, tc.seed ^ 0x5a17ULL, i, global_batch, length));
  }
  return batches;
}

// What one optimizer step reports: its mean loss over every rank, and the global gradient norm before
// clipping (NaN when clipping is off, as the norm is then not computed).
struct StepReport {
  double loss = 0;
  double grad_norm = std::numeric_limits<double>::quiet_NaN();
};

// What a metrics line reports about the steps since the previous line: tokens per second, and the largest
// gradient norm (a spike between two lines is what a diverging run shows first).
class MetricsInterval {
 public:
  void add_step(std::int64_t tokens, double grad_norm) {
    tokens_ += tokens;
    if (!(grad_norm <= grad_norm_max_)) grad_norm_max_ = grad_norm;
  }
  // Adds the interval's figures to `line` and starts the next interval.
  void close(Json& line) {
    const double seconds = clock_.elapsed();
    line["tokens_per_s"] = seconds > 0 ? static_cast<double>(tokens_) / seconds : 0.0;
    if (line.contains("grad_norm")) line["grad_norm_max"] = grad_norm_max_;
    *this = MetricsInterval();
  }

 private:
  Budget clock_;
  std::int64_t tokens_ = 0;
  double grad_norm_max_ = 0;
};

// One optimizer step of grad_accum micro-batches at learning rate `lr`.
StepReport optimizer_step(Gpt& model, torch::optim::AdamW& optimizer, Prefetcher& prefetch,
                          distributed::DataParallel& dp, const torch::Device& device, bool autocast,
                          const LossSettings& settings, const TrainConfig& tc, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  optimizer.zero_grad();
  double step_loss = 0;
  for (int micro = 0; micro < tc.grad_accum; ++micro) {
    const std::uint64_t index = prefetch.next_index();
    const torch::Tensor batch = prefetch.next();
    const torch::Tensor loss =
        rank_loss(model, batch, dp, device, autocast, settings, context_noise(tc, index, batch));
    (loss / tc.grad_accum).backward();
    step_loss += loss.item<double>() / tc.grad_accum;
  }
  // Mean gradients over the ranks before clipping, so every rank clips and steps the same global gradient.
  dp.average_gradients(*model);
  StepReport report{dp.average(step_loss)};
  if (tc.grad_clip > 0)
    report.grad_norm = torch::nn::utils::clip_grad_norm_(model->parameters(), tc.grad_clip);
  optimizer.step();
  return report;
}

// A resumed run keeps the metrics of the steps its checkpoint holds; a fresh run starts the file anew.
void start_metrics(const TrainRequest& request, const std::string& metrics_path, int step) {
  if (request.resume) {
    truncate_metrics(metrics_path, step);
  } else {
    fs::remove(metrics_path);
  }
}

void show_progress(Progress& progress, int step, double loss, double val_loss) {
  char note[128];
  // Significant digits: a regression model's loss is ~1e-6, which %.3f would print as 0.000.
  std::snprintf(note, sizeof note, "loss %.3g val %.3g", loss, val_loss);
  progress.set_note(note);
  progress.set(step);
}

}  // namespace

TrainResult train(const TrainRequest& request) {
  const TrainConfig& tc = request.train;
  const Budget budget(tc.budget_seconds());  // this session's wall clock, and its limit if any
  const auto launch = distributed::LaunchEnvironment::from_environment();
  const torch::Device device = training_device(tc, launch);
  const bool autocast = device.is_cuda() && tc.bf16;
  distributed::DataParallel dp(launch, device);  // rendezvous first: a rank failing later fails its peers
  const bool writer = dp.is_checkpoint_writer();
  const int world = dp.world_size();

  const std::string checkpoint_path = (fs::path(request.out) / "checkpoint.pt").string();
  const std::string metrics_path = (fs::path(request.out) / "metrics.jsonl").string();
  check_output_folder(request, checkpoint_path);

  const auto [train_store, val_store] = open_train_and_validation(request);
  const int length = request.model.block_size + 1;   // inputs are the first block_size positions
  const Json train_summary = train_store.summary();  // recorded in every checkpoint (what a probe may ask)

  const auto [model_config, attention_path] = model_for_device(request, device);
  torch::manual_seed(tc.seed);
  Gpt model(model_config);
  model->to(device);
  model->train();
  // Ranks draw their own dropout masks (the same stream would drop the same units in every slice).
  if (world > 1) torch::manual_seed(tc.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(dp.rank()));
  const auto options = torch::optim::AdamWOptions(tc.lr).betas({tc.beta1, tc.beta2});
  torch::optim::AdamW optimizer(parameter_groups(model, tc, options), options);

  CheckpointContent content{model_config, request.tokenizer, Json::object(), Json::object()};
  const Json fingerprint = detail::resume_fingerprint(request);
  const StartPoint start = start_point(request, checkpoint_path, content, model, optimizer, fingerprint);
  if (writer) start_metrics(request, metrics_path, start.step);
  int step = start.step;
  std::int64_t tokens = start.tokens;
  check_ranks_agree(dp, shared_settings(request.resolved_config, step, start.next_batch));
  dp.broadcast_parameters(*model);  // no-op alone; with equal seeds and checkpoints a safeguard
  content.provenance = training_provenance(request, dp, attention_path);
  content.provenance["segments"] = start.segments;
  if (writer)
    write_text_atomic((fs::path(request.out) / "train.provenance.json").string(),
                      content.provenance.dump(2) + "\n");

  const int global_batch = world * tc.batch_size;
  const bool coordinates = request.model.head == Head::kRegression;
  const LossSettings settings = loss_settings(request);
  const std::vector<torch::Tensor> val_batches =
      validation_batches(val_store, tc, global_batch, length, coordinates);

  std::optional<CheckedFile> metrics;  // rank 0 alone writes the metrics; a full disk is an error
  if (writer) metrics.emplace(metrics_path, CheckedFile::Mode::kAppend);
  Prefetcher prefetch(train_store, tc.seed, start.next_batch, global_batch, length, tc.prefetch, coordinates);
  std::unique_ptr<Progress> progress;  // rank 0's, on a terminal
  if (!request.quiet && writer) progress = std::make_unique<Progress>("train", tc.max_steps, "steps");
  if (progress) progress->set(step);

  TrainResult result;
  const std::int64_t tokens_per_step = static_cast<std::int64_t>(global_batch) * tc.grad_accum * (length - 1);
  MetricsInterval interval;
  auto save = [&](bool stopped) {
    content.train_state =
        Json{{"step", step},
             {"tokens", tokens},
             {"next_batch", prefetch.next_index()},
             {"elapsed_s", start.elapsed_before + budget.elapsed()},
             {"train_loss", result.final_train_loss},
             {"val_loss", std::isnan(result.final_val_loss) ? Json(nullptr) : Json(result.final_val_loss)},
             {"stopped_by_time_limit", stopped},
             {"world_size", world},
             {"data", train_summary},
             {"fingerprint", fingerprint},
             {"segments", start.segments}};
    save_checkpoint(checkpoint_path, content, model, &optimizer);
  };

  while (step < tc.max_steps) {
    const double lr = learning_rate(tc, step);
    const StepReport report =
        optimizer_step(model, optimizer, prefetch, dp, device, autocast, settings, tc, lr);
    const double step_loss = report.loss;
    ++step;
    tokens += tokens_per_step;
    interval.add_step(tokens_per_step, report.grad_norm);
    result.final_train_loss = step_loss;

    // Any rank out of time stops them all at the same step (one alone would leave the others waiting).
    const bool out_of_time = budget.limited() && dp.any(budget.exhausted());
    const bool last = step == tc.max_steps || out_of_time;
    Json line{{"step", step}, {"tokens", tokens}, {"train_loss", step_loss}, {"lr", lr}};
    if (std::isfinite(report.grad_norm)) line["grad_norm"] = report.grad_norm;
    if (step % tc.eval_interval == 0 || last) {
      result.final_val_loss = validation_loss(model, val_batches, settings, device, autocast, dp);
      line["val_loss"] = result.final_val_loss;
    }
    if (writer && (step % tc.log_interval == 0 || last || line.contains("val_loss"))) {
      interval.close(line);
      line["elapsed_s"] = start.elapsed_before + budget.elapsed();
      metrics->write(line.dump() + "\n");
    }
    if (progress) show_progress(*progress, step, step_loss, result.final_val_loss);
    if (writer && (step % tc.checkpoint_interval == 0 || last)) save(out_of_time && step < tc.max_steps);
    if (out_of_time) {
      result.stopped_by_time_limit = step < tc.max_steps;
      break;
    }
  }
  if (progress) progress->finish();
  if (metrics) metrics->close();
  dp.barrier();  // every rank returns once rank 0's final checkpoint is in place
  result.steps = step;
  result.checkpoint = checkpoint_path;
  result.rank = dp.rank();
  result.world_size = world;
  return result;
}

}  // namespace orbitlaw::model
