// Fine-tuning and linear probes on a trained Gpt. Includes LibTorch: no fmt or spdlog here.
#include "orbitlaw/probe/model_probes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/probe/statistics.hpp"

namespace orbitlaw::probe {

EncodedSystems::EncodedSystems(const simulator::DatasetReader& reader,
                               const std::vector<std::int64_t>& systems,
                               const model::TokenizerConfig& tokenizer, bool coordinates) {
  systems_ = systems;
  std::sort(systems_.begin(), systems_.end());
  systems_.erase(std::unique(systems_.begin(), systems_.end()), systems_.end());
  for (auto index : systems_) {
    const simulator::System system = reader.read_system(index);
    model::TokenizedSequence sequence = model::encode(system, tokenizer);
    // The model is trained on inputs tokens[0 .. rows - 2] (the last token is only ever a target), so its
    // context holds rows - 1 positions: the probe feeds exactly those.
    const auto length = std::min<std::int64_t>(sequence.tokens.size(0), tokenizer.rows - 1);
    sequence.tokens = sequence.tokens.slice(0, 0, length);
    sequence.row.resize(static_cast<std::size_t>(length));
    if (length_ == 0) length_ = length;
    if (length != length_) {
      throw Error("force probe: system " + std::to_string(index) + " encodes to " + std::to_string(length) +
                  " positions, others to " + std::to_string(length_) +
                  "; probe systems must have equal lengths");
    }
    // Tokens stored compactly (vocab <= 65535 fits uint16 but torch lacks it; int32 is enough and exact).
    tokens_.push_back(coordinates ? sequence.coordinates.slice(0, 0, length).contiguous()
                                  : sequence.tokens.to(torch::kInt32).contiguous());
    std::vector<std::int64_t> positions(static_cast<std::size_t>(system.rows()), -1);
    for (std::size_t p = 0; p < sequence.row.size(); ++p) {
      if (sequence.row[p] >= 0)
        positions[static_cast<std::size_t>(sequence.row[p])] = static_cast<std::int64_t>(p);
    }
    positions_.push_back(std::move(positions));
  }
}

EncodedSystems::EncodedSystems(const simulator::DatasetReader& reader,
                               const std::vector<std::int64_t>& systems, const model::LoadedModel& model)
    : EncodedSystems(reader, systems, model.tokenizer, model.config.head == model::Head::kRegression) {}

std::int64_t EncodedSystems::slot(std::int64_t system) const {
  auto it = std::lower_bound(systems_.begin(), systems_.end(), system);
  if (it == systems_.end() || *it != system) {
    throw Error("force probe: system " + std::to_string(system) + " was not encoded");
  }
  return it - systems_.begin();
}

const torch::Tensor& EncodedSystems::tokens(std::int64_t system) const { return tokens_[slot(system)]; }

bool EncodedSystems::visible(std::int64_t system, int row) const {
  const auto& positions = positions_[slot(system)];
  return row >= 0 && row < static_cast<int>(positions.size()) && positions[row] >= 0;
}

std::int64_t EncodedSystems::position_of(std::int64_t system, int row) const {
  const auto& positions = positions_[slot(system)];
  if (row < 0 || row >= static_cast<int>(positions.size()) || positions[row] < 0) {
    throw Error("force probe: row " + std::to_string(row) + " of system " + std::to_string(system) +
                " is not visible to the model");
  }
  return positions[row];
}

namespace {

// Labelled rows grouped by system: the unit of a batch.
struct SystemRows {
  std::int64_t system = 0;
  std::vector<std::int64_t> positions;  // sequence positions
  std::vector<std::int64_t> indices;    // indices into the ForceRows
};

// `systems` and `rows` of the labelled rows (of ForceRows and ForceVectorRows alike).
std::vector<SystemRows> group_by_system(const std::vector<std::int64_t>& systems,
                                        const std::vector<int>& rows, const EncodedSystems& encoded) {
  std::map<std::int64_t, SystemRows> groups;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    auto& g = groups[systems[i]];
    g.system = systems[i];
    g.positions.push_back(encoded.position_of(systems[i], rows[i]));
    g.indices.push_back(static_cast<std::int64_t>(i));
  }
  std::vector<SystemRows> out;
  for (auto& [system, g] : groups) out.push_back(std::move(g));
  return out;
}

// The device the model's weights are on: every tensor a probe feeds it goes there.
torch::Device device_of(const model::Gpt& net) { return net->parameters().front().device(); }

// Tokens [B, L, 2] int64 of a batch of systems, and the flat indices (b * L + position) of their labelled
// rows, on `device`.
struct Batch {
  torch::Tensor tokens;
  torch::Tensor flat_positions;
  std::vector<std::int64_t> row_indices;
};

Batch make_batch(const std::vector<const SystemRows*>& groups, const EncodedSystems& encoded,
                 torch::Device device) {
  std::vector<torch::Tensor> tokens;
  std::vector<std::int64_t> flat;
  Batch batch;
  const auto L = encoded.length();
  for (std::size_t b = 0; b < groups.size(); ++b) {
    tokens.push_back(encoded.tokens(groups[b]->system));
    for (std::size_t k = 0; k < groups[b]->positions.size(); ++k) {
      flat.push_back(static_cast<std::int64_t>(b) * L + groups[b]->positions[k]);
      batch.row_indices.push_back(groups[b]->indices[k]);
    }
  }
  batch.tokens = torch::stack(tokens);
  batch.tokens = batch.tokens.to(device, batch.tokens.is_floating_point() ? torch::kFloat64 : torch::kInt64);
  batch.flat_positions = torch::tensor(flat, torch::kInt64).to(device);
  return batch;
}

// Rows `indices` of the targets as a [n, outputs] tensor on `device`.
torch::Tensor to_tensor(const Eigen::MatrixXd& targets, const std::vector<std::int64_t>& indices,
                        torch::Device device) {
  std::vector<float> values;
  values.reserve(indices.size() * static_cast<std::size_t>(targets.cols()));
  for (auto i : indices)
    for (Eigen::Index j = 0; j < targets.cols(); ++j) values.push_back(static_cast<float>(targets(i, j)));
  return torch::tensor(values, torch::kFloat32)
      .reshape({static_cast<std::int64_t>(indices.size()), static_cast<std::int64_t>(targets.cols())})
      .to(device);
}

Eigen::MatrixXd to_eigen(const torch::Tensor& t) {  // [n, k], on any device
  const auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      c.data_ptr<double>(), c.size(0), c.size(1));
}

// A fresh model with the same weights as `source`, on its device (LibTorch modules here are not Cloneable).
model::Gpt copy_model(const model::LoadedModel& loaded) {
  model::Gpt copy(loaded.config);
  copy->to(device_of(loaded.module));
  torch::NoGradGuard no_grad;
  auto target = copy->named_parameters(true);
  for (const auto& item : loaded.module->named_parameters(true)) target[item.key()].copy_(item.value());
  auto target_buffers = copy->named_buffers(true);
  for (const auto& item : loaded.module->named_buffers(true)) target_buffers[item.key()].copy_(item.value());
  return copy;
}

// The model's output [rows, outputs] for the labelled rows of `groups`, in chunks of `batch_size` systems.
Eigen::MatrixXd predict_scaled(model::Gpt& net, torch::nn::Linear& head,
                               const std::vector<SystemRows>& groups, const EncodedSystems& encoded,
                               std::int64_t rows, int batch_size) {
  torch::NoGradGuard no_grad;
  Eigen::MatrixXd out =
      Eigen::MatrixXd::Constant(rows, head->options.out_features(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t start = 0; start < groups.size(); start += static_cast<std::size_t>(batch_size)) {
    std::vector<const SystemRows*> chunk;
    for (std::size_t k = start; k < std::min(groups.size(), start + batch_size); ++k)
      chunk.push_back(&groups[k]);
    Batch batch = make_batch(chunk, encoded, device_of(net));
    auto hidden = net->hidden_states(batch.tokens).back();
    auto flat = hidden.reshape({-1, hidden.size(2)}).index_select(0, batch.flat_positions);
    const Eigen::MatrixXd values = to_eigen(head->forward(flat));
    for (std::size_t k = 0; k < batch.row_indices.size(); ++k)
      out.row(batch.row_indices[k]) = values.row(static_cast<Eigen::Index>(k));
  }
  return out;
}

double mse(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).squaredNorm() / a.size(); }

void set_threads(int threads) {
  if (threads > 0) torch::set_num_threads(threads);
}

Json curve_json(const std::vector<std::pair<int, double>>& curve) {
  Json out = Json::array();
  for (const auto& [step, value] : curve) out.push_back({step, value});
  return out;
}

}  // namespace

Json FineTuneOptions::to_json() const {
  return Json{{"steps", steps},
              {"batch_size", batch_size},
              {"lr", lr},
              {"head_lr", head_lr},
              {"weight_decay", weight_decay},
              {"grad_clip", grad_clip},
              {"eval_interval", eval_interval},
              {"target", TargetScaler::to_string(target)},
              {"seed", seed},
              {"threads", threads},
              {"time_limit_seconds", time_limit_seconds}};
}

Json FineTuneResult::json() const {
  return Json{{"selected_step", selected_step},
              {"steps_run", steps_run},
              {"selected_validation_mse", selected_validation_mse},
              {"validation_curve", curve_json(validation_curve)},
              {"final_train_loss", train_loss.empty() ? 0.0 : train_loss.back()},
              {"target_scaling", scaler.json()},
              {"selection", "lowest validation MSE (validation systems carved from the train split)"},
              {"seconds", seconds}};
}

namespace {

// What fitting a fresh head (and all model weights) to scaled targets gives, in scaled units.
struct HeadFit {
  Eigen::MatrixXd validation, test;  // predictions of the selected state [rows, outputs]
  int selected_step = 0;
  double selected_validation_mse = 0;
  std::vector<double> train_loss;
  std::vector<std::pair<int, double>> validation_curve;
  int steps_run = 0;
};

// Fine-tunes a copy of the model with a fresh Linear(n_embd -> outputs) head: masked MSE on the train rows'
// targets, the state with the lowest validation MSE kept; the test groups supply positions only.
HeadFit fit_head(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                 const std::vector<SystemRows>& train_groups, const Eigen::MatrixXd& train_target,
                 const std::vector<SystemRows>& validation_groups, const Eigen::MatrixXd& validation_target,
                 const std::vector<SystemRows>& test_groups, std::int64_t test_rows,
                 const FineTuneOptions& options) {
  if (options.steps < 0 || options.batch_size < 1 || options.eval_interval < 1) {
    throw Error("fine-tune: steps must be >= 0, batch_size and eval_interval >= 1");
  }
  if (train_groups.empty() || validation_groups.empty())
    throw Error("fine-tune: no train or validation rows");
  set_threads(options.threads);
  HeadFit result;
  torch::manual_seed(options.seed);
  model::Gpt net = copy_model(loaded);
  torch::nn::Linear head(torch::nn::LinearOptions(loaded.config.n_embd, train_target.cols()));
  const torch::Device device = device_of(net);
  head->to(device);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(net->parameters(),
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(options.lr).weight_decay(options.weight_decay)));
  groups.emplace_back(head->parameters(), std::make_unique<torch::optim::AdamWOptions>(
                                              torch::optim::AdamWOptions(options.head_lr).weight_decay(0)));
  torch::optim::AdamW optimizer(std::move(groups), torch::optim::AdamWOptions(options.lr));

  std::vector<torch::Tensor> best_state;
  auto snapshot = [&] {
    best_state.clear();
    torch::NoGradGuard no_grad;
    for (const auto& p : net->parameters()) best_state.push_back(p.detach().clone());
    for (const auto& p : head->parameters()) best_state.push_back(p.detach().clone());
  };
  auto evaluate = [&](int step) {
    net->eval();
    const Eigen::MatrixXd predicted =
        predict_scaled(net, head, validation_groups, encoded, validation_target.rows(), options.batch_size);
    const double value = mse(predicted, validation_target);
    result.validation_curve.emplace_back(step, value);
    if (result.validation_curve.size() == 1 || value < result.selected_validation_mse) {
      result.selected_validation_mse = value;
      result.selected_step = step;
      snapshot();
    }
  };

  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return options.time_limit_seconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
               options.time_limit_seconds;
  };
  evaluate(0);
  SplitMix64 rng(derive_seed(options.seed, 7));
  for (int step = 1; step <= options.steps; ++step) {
    net->train();
    std::vector<const SystemRows*> chunk;
    for (int b = 0; b < options.batch_size; ++b)
      chunk.push_back(&train_groups[rng.below(train_groups.size())]);
    Batch batch = make_batch(chunk, encoded, device);
    auto hidden = net->hidden_states(batch.tokens).back();
    auto flat = hidden.reshape({-1, hidden.size(2)}).index_select(0, batch.flat_positions);
    auto predicted = head->forward(flat);
    auto loss = torch::mse_loss(predicted, to_tensor(train_target, batch.row_indices, device));
    optimizer.zero_grad();
    loss.backward();
    if (options.grad_clip > 0) {
      std::vector<torch::Tensor> all = net->parameters();
      for (const auto& p : head->parameters()) all.push_back(p);
      torch::nn::utils::clip_grad_norm_(all, options.grad_clip);
    }
    optimizer.step();
    result.train_loss.push_back(loss.item<double>());
    if (!std::isfinite(result.train_loss.back())) {
      throw Error("fine-tune: the training loss became non-finite at step " + std::to_string(step) +
                  " (lower probe.finetune.lr)");
    }
    result.steps_run = step;
    const bool stop = out_of_time();
    if (step % options.eval_interval == 0 || step == options.steps || stop) evaluate(step);
    if (stop) break;
  }

  {  // Restore the selected state.
    torch::NoGradGuard no_grad;
    std::size_t k = 0;
    for (auto& p : net->parameters()) p.copy_(best_state[k++]);
    for (auto& p : head->parameters()) p.copy_(best_state[k++]);
  }
  net->eval();
  result.validation =
      predict_scaled(net, head, validation_groups, encoded, validation_target.rows(), options.batch_size);
  result.test = predict_scaled(net, head, test_groups, encoded, test_rows, options.batch_size);
  return result;
}

}  // namespace

FineTuneResult fine_tune(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                         const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                         const FineTuneOptions& options) {
  if (train.size() == 0 || validation.size() == 0) throw Error("fine-tune: no train or validation rows");
  const auto start_time = std::chrono::steady_clock::now();
  FineTuneResult result;
  result.scaler = TargetScaler::fit(options.target, train.force);
  // test.force is never read: the test rows supply positions only.
  const HeadFit fit = fit_head(
      loaded, encoded, group_by_system(train.system, train.row, encoded), result.scaler.forward(train.force),
      group_by_system(validation.system, validation.row, encoded), result.scaler.forward(validation.force),
      group_by_system(test.system, test.row, encoded), test.size(), options);
  result.selected_step = fit.selected_step;
  result.selected_validation_mse = fit.selected_validation_mse;
  result.train_loss = fit.train_loss;
  result.validation_curve = fit.validation_curve;
  result.steps_run = fit.steps_run;
  result.validation_prediction = result.scaler.inverse(fit.validation.col(0));
  result.test_prediction = result.scaler.inverse(fit.test.col(0));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return result;
}

Json VectorFineTuneResult::json() const {
  return Json{{"selected_step", selected_step},
              {"steps_run", steps_run},
              {"selected_validation_mse", selected_validation_mse},
              {"validation_curve", curve_json(validation_curve)},
              {"final_train_loss", train_loss.empty() ? 0.0 : train_loss.back()},
              {"head", "Linear(n_embd -> dim) on the final hidden state; targets normalised per sequence"},
              {"selection", "lowest validation MSE (validation rows of each sequence, never test rows)"},
              {"seconds", seconds}};
}

VectorFineTuneResult fine_tune_vectors(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                                       const ForceVectorRows& train, const ForceVectorRows& validation,
                                       const ForceVectorRows& test, const FineTuneOptions& options) {
  if (train.size() == 0 || validation.size() == 0) throw Error("fine-tune: no train or validation rows");
  const auto start_time = std::chrono::steady_clock::now();
  // The per-sequence normalisation already makes the targets O(1): no further scaling.
  const HeadFit fit =
      fit_head(loaded, encoded, group_by_system(train.system, train.row, encoded), train.force,
               group_by_system(validation.system, validation.row, encoded), validation.force,
               group_by_system(test.system, test.row, encoded), test.size(), options);
  VectorFineTuneResult result;
  result.selected_step = fit.selected_step;
  result.selected_validation_mse = fit.selected_validation_mse;
  result.train_loss = fit.train_loss;
  result.validation_curve = fit.validation_curve;
  result.steps_run = fit.steps_run;
  result.validation_prediction = fit.validation;
  result.test_prediction = fit.test;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return result;
}

Json LinearProbeOptions::to_json() const {
  return Json{{"lambdas", lambdas},
              {"target", TargetScaler::to_string(target)},
              {"batch_size", batch_size},
              {"threads", threads}};
}

void LinearProbeResult::score_layers(const Eigen::VectorXd& test_force) {
  test_r2_unused_for_selection.clear();
  for (const auto& prediction : test_prediction_by_layer)
    test_r2_unused_for_selection.push_back(r_squared(test_force, prediction));
}

Json LinearProbeResult::json() const {
  return Json{
      {"selected_layer", selected_layer},
      {"validation_r2", validation_r2},
      {"test_r2_unused_for_selection", test_r2_unused_for_selection},
      {"lambdas", lambdas},
      {"layers", "0 = embedding output, 1..n_layer = after each block, n_layer + 1 = final LayerNorm"},
      {"target_scaling", scaler.json()},
      {"selection", "per layer lambda, then layer, by validation MSE"},
      {"seconds", seconds}};
}

namespace {

// Per-layer ridge fits of the columns of a target matrix from frozen hidden states: each column gets its own
// lambda (chosen on the validation rows), the layer is the one with the smallest validation MSE summed over
// the columns, and every layer's test prediction is returned for the per-layer picture.
struct LayerRidges {
  std::vector<double> validation_r2;         // per layer: 1 - sum of column MSEs / sum of column variances
  std::vector<std::vector<double>> lambdas;  // per layer, per column
  int selected_layer = 0;
  std::vector<Eigen::MatrixXd> test_prediction;  // per layer [test rows, columns], in target units
};

LayerRidges fit_layer_ridges(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                             const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                             const Eigen::MatrixXd& train_target, const Eigen::MatrixXd& validation_target,
                             const LinearProbeOptions& options) {
  if (train.size() == 0 || validation.size() == 0) throw Error("linear probe: no train or validation rows");
  if (options.batch_size < 1) throw Error("linear probe: batch_size must be >= 1");
  set_threads(options.threads);
  const int layers = loaded.config.n_layer + 2;
  const int width = loaded.config.n_embd;
  const auto columns = train_target.cols();
  using Equations = std::vector<std::vector<NormalEquations>>;  // [layer][column]
  Equations train_eq(layers, std::vector<NormalEquations>(columns, NormalEquations(width)));
  Equations validation_eq = train_eq;

  auto model = loaded.module;
  model->eval();
  const torch::Device device = device_of(model);
  torch::NoGradGuard no_grad;
  // Streams hidden states of one split through `consume(layer, features [rows, width] on the model's device,
  // row_indices)`.
  auto stream = [&](const ForceRows& rows, auto consume) {
    const auto groups = group_by_system(rows.system, rows.row, encoded);
    for (std::size_t start = 0; start < groups.size();
         start += static_cast<std::size_t>(options.batch_size)) {
      std::vector<const SystemRows*> chunk;
      for (std::size_t k = start; k < std::min(groups.size(), start + options.batch_size); ++k) {
        chunk.push_back(&groups[k]);
      }
      Batch batch = make_batch(chunk, encoded, device);
      auto states = model->hidden_states(batch.tokens);
      for (int layer = 0; layer < layers; ++layer) {
        consume(layer, states[layer].reshape({-1, width}).index_select(0, batch.flat_positions),
                batch.row_indices);
      }
    }
  };
  // The sums of the normal equations are formed where the model runs, in float64, and handed to
  // NormalEquations once per split: on a GPU a matrix product replaces a single-core rank update on the host
  // (measured here at ~1.7e10 row x feature^2 per second: ~140 s for gpu-study's 27M model, 900k rows x
  // 10 layers x 512 features).
  auto accumulate = [&](const ForceRows& rows, const Eigen::MatrixXd& all_targets, Equations& equations) {
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
    std::vector<torch::Tensor> sx, sxy, sxx;
    for (int layer = 0; layer < layers; ++layer) {
      sx.push_back(torch::zeros({width}, f64));
      sxy.push_back(torch::zeros({width, columns}, f64));
      sxx.push_back(torch::zeros({width, width}, f64));
    }
    std::int64_t n = 0;
    Eigen::VectorXd sy = Eigen::VectorXd::Zero(columns), syy = Eigen::VectorXd::Zero(columns);
    torch::Tensor y_device;
    stream(rows, [&](int layer, const torch::Tensor& features, const std::vector<std::int64_t>& idx) {
      if (layer == 0) {
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> y(
            static_cast<Eigen::Index>(idx.size()), columns);
        for (std::size_t k = 0; k < idx.size(); ++k)
          y.row(static_cast<Eigen::Index>(k)) = all_targets.row(idx[k]);
        n += y.rows();
        sy += y.colwise().sum().transpose();
        syy += y.array().square().matrix().colwise().sum().transpose();
        y_device = torch::from_blob(y.data(), {y.rows(), columns}, torch::kFloat64).clone().to(device);
      }
      // No per-batch finiteness check (a device sync each time): a non-finite feature or target makes the
      // sums non-finite, which add_sums rejects.
      const auto x = features.to(torch::kFloat64);
      sx[layer] += x.sum(0);
      sxy[layer].addmm_(x.t(), y_device);
      sxx[layer].addmm_(x.t(), x);
    });
    for (int layer = 0; layer < layers; ++layer) {
      const Eigen::MatrixXd gram = to_eigen(sxx[layer]);
      const Eigen::VectorXd sum_x = to_eigen(sx[layer].unsqueeze(1)).col(0);
      const Eigen::MatrixXd sum_xy = to_eigen(sxy[layer]);
      for (Eigen::Index c = 0; c < columns; ++c)
        equations[layer][c].add_sums(n, sum_x, sum_xy.col(c), gram, sy[c], syy[c]);
    }
  };
  accumulate(train, train_target, train_eq);
  accumulate(validation, validation_target, validation_eq);

  LayerRidges out;
  double best_mse = std::numeric_limits<double>::infinity();
  std::vector<std::vector<NormalEquations::Solution>> solutions(layers);
  for (int layer = 0; layer < layers; ++layer) {
    double mse = 0, variance = 0;
    out.lambdas.emplace_back();
    for (Eigen::Index c = 0; c < columns; ++c) {
      const RidgeSelection selection =
          select_ridge(train_eq[layer][c], validation_eq[layer][c], options.lambdas);
      solutions[layer].push_back(selection.solution);
      out.lambdas.back().push_back(selection.solution.lambda);
      mse += selection.validation_mse;
      variance += validation_eq[layer][c].y_variance();
    }
    out.validation_r2.push_back(variance > 0 ? 1 - mse / variance : std::numeric_limits<double>::quiet_NaN());
    if (mse < best_mse) {
      best_mse = mse;
      out.selected_layer = layer;
    }
  }
  // Every choice is made; the test rows are predicted (and, for the per-layer picture only, scored). They are
  // streamed like the others: holding their features (rows x width x layers) would not fit for the paper's
  // half a million test rows.
  out.test_prediction.assign(layers, Eigen::MatrixXd(test.size(), columns));
  stream(test, [&](int layer, const torch::Tensor& features, const std::vector<std::int64_t>& idx) {
    const Eigen::MatrixXd x = to_eigen(features);
    for (Eigen::Index c = 0; c < columns; ++c) {
      const Eigen::VectorXd y = solutions[layer][c].predict(x);
      for (std::size_t k = 0; k < idx.size(); ++k)
        out.test_prediction[layer](idx[k], c) = y[static_cast<Eigen::Index>(k)];
    }
  });
  return out;
}

}  // namespace

LinearProbeResult linear_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                               const ForceRows& train, const ForceRows& validation, const ForceRows& test,
                               const LinearProbeOptions& options) {
  if (train.size() == 0 || validation.size() == 0) throw Error("linear probe: no train or validation rows");
  const auto start_time = std::chrono::steady_clock::now();
  LinearProbeResult result;
  result.scaler = TargetScaler::fit(options.target, train.force);
  const LayerRidges fit =
      fit_layer_ridges(loaded, encoded, train, validation, test, result.scaler.forward(train.force),
                       result.scaler.forward(validation.force), options);
  result.validation_r2 = fit.validation_r2;
  result.selected_layer = fit.selected_layer;
  for (const auto& per_column : fit.lambdas) result.lambdas.push_back(per_column.front());
  for (std::size_t layer = 0; layer < fit.test_prediction.size(); ++layer) {
    const Eigen::VectorXd force = result.scaler.inverse(fit.test_prediction[layer].col(0));
    if (static_cast<int>(layer) == result.selected_layer) result.test_prediction = force;
    result.test_prediction_by_layer.push_back(force);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return result;
}

void LinearVectorProbeResult::score_layers(const Eigen::MatrixXd& test_vectors) {
  test_r2_unused_for_selection.clear();
  for (const auto& prediction : test_vector_by_layer)
    test_r2_unused_for_selection.push_back(vector_r_squared(test_vectors, prediction));
  test_component_r2.clear();
  for (Eigen::Index c = 0; c < test_vectors.cols(); ++c)
    test_component_r2.push_back(r_squared(test_vectors.col(c), test_vector.col(c)));
}

Json LinearVectorProbeResult::json() const {
  return Json{
      {"selected_layer", selected_layer},
      {"validation_r2", validation_r2},
      {"test_r2_unused_for_selection", test_r2_unused_for_selection},
      {"test_component_r2_unused_for_selection", test_component_r2},
      {"lambdas", lambdas},
      {"layers", "0 = embedding output, 1..n_layer = after each block, n_layer + 1 = final LayerNorm"},
      {"scale", scale},
      {"target",
       "the target's vector (one ridge per component) divided by the train rows' RMS length; "
       "the magnitude prediction is the length of the predicted vector"},
      {"selection", "per layer and component lambda, then layer, by the summed validation MSE"},
      {"seconds", seconds}};
}

LinearVectorProbeResult linear_vector_probe(const model::LoadedModel& loaded, const EncodedSystems& encoded,
                                            const ForceRows& train, const ForceRows& validation,
                                            const ForceRows& test, const Eigen::MatrixXd& train_vectors,
                                            const Eigen::MatrixXd& validation_vectors,
                                            const LinearProbeOptions& options) {
  if (train_vectors.rows() != train.size() || validation_vectors.rows() != validation.size() ||
      train_vectors.cols() != validation_vectors.cols() || train_vectors.cols() < 1) {
    throw Error("linear vector probe: the target vectors do not match the train and validation rows");
  }
  if (!train_vectors.allFinite() || !validation_vectors.allFinite())
    throw Error("linear vector probe: a target vector is not finite");
  const auto start_time = std::chrono::steady_clock::now();
  LinearVectorProbeResult result;
  // One scale for every component and row, so that the ridge fits the vectors' directions and lengths alike.
  result.scale = std::sqrt(train_vectors.squaredNorm() / static_cast<double>(train_vectors.rows()));
  if (!(result.scale > 0)) throw Error("linear vector probe: every train vector is zero");
  const LayerRidges fit =
      fit_layer_ridges(loaded, encoded, train, validation, test, train_vectors / result.scale,
                       validation_vectors / result.scale, options);
  result.validation_r2 = fit.validation_r2;
  result.selected_layer = fit.selected_layer;
  result.lambdas = fit.lambdas;
  for (const auto& prediction : fit.test_prediction)
    result.test_vector_by_layer.push_back(prediction * result.scale);
  result.test_vector = result.test_vector_by_layer[static_cast<std::size_t>(result.selected_layer)];
  result.test_prediction = result.test_vector.rowwise().norm();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return result;
}

}  // namespace orbitlaw::probe
