#include "orbitlaw/model/eval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "orbitlaw/model/device.hpp"
#include "orbitlaw/model/gpt.hpp"
#include "orbitlaw/model/tokenizer.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::model {

namespace {

// A list whose every element lies in `range` (the schema checks single numbers).
template <class T>
auto list_in(Range range, const char* what) {
  return [range, what](const Json& value, const std::string& where) {
    std::vector<T> out;
    bool ok = value.is_array();
    if (ok) {
      for (const auto& v : value) {
        ok = ok && v.is_number() && range.contains(v.get<double>()) &&
             (!std::is_integral_v<T> || v.get<double>() == std::trunc(v.get<double>()));
        if (ok) out.push_back(v.get<T>());
      }
    }
    if (!ok)
      throw Error(where + " must be a list of " + what + " " + range.text() + " (got " + value.dump() + ")");
    return out;
  };
}

template <class T>
Json as_json(const std::vector<T>& values) {
  return Json(values);
}

}  // namespace

const ConfigSchema<EvalConfig>& EvalConfig::schema() {
  using E = EvalConfig;
  static const auto schema =
      ConfigSchema<E>()
          .key("sequences", &E::sequences, "systems of the dataset evaluated (the first ones)",
               Range::at_least(1))
          .key("batch_size", &E::batch_size, "sequences per forward pass", Range::at_least(1))
          .custom("rollout_steps", &E::rollout_steps, list_in<int>(Range::at_least(1), "whole numbers"),
                  as_json<int>, "list of integers", "each at least 1", "steps of the autoregressive rollouts")
          .custom("length_factors", &E::length_factors, list_in<int>(Range::at_least(1), "whole numbers"),
                  as_json<int>, "list of integers", "each at least 1",
                  "length extrapolation: multiples of the training context")
          .key("max_length_factor", &E::max_length_factor, "length factors above this are skipped",
               Range::at_least(1))
          .key("length_sequences", &E::length_sequences, "systems per extrapolation length",
               Range::at_least(1))
          .key("attention_sequences", &E::attention_sequences, "systems for the attention diagnostics",
               Range::at_least(0))
          .key("threads", &E::threads, "CPU threads; 0: OMP_NUM_THREADS, else every core",
               Range::between(0, kMaxThreads))
          .key("device", &E::device, "auto (CUDA if available), cpu, cuda or cuda:N")
          .key("behaviour", &E::behaviour, "run the behavioural test where the model and data allow it")
          .custom("transplant_lambdas", &E::transplant_lambdas,
                  list_in<double>(Range::between(0, 4), "numbers"), as_json<double>, "list of numbers",
                  "at least two, each in [0, 4]",
                  "behaviour: the curvature transplant's multiples of the law")
          .key("transplant_history", &E::transplant_history, "behaviour: positions per transplanted history",
               Range::at_least(3))
          .key("transplant_rows", &E::transplant_rows, "behaviour: rows transplanted", Range::at_least(1))
          .key("bootstrap", &E::bootstrap, "behaviour: resamples of systems for the power-law intervals",
               Range::at_least(0))
          .custom(
              "law_search", &E::law_search,
              [](const Json& value, const std::string& where) {
                if (!value.is_null() && !value.is_object())
                  throw Error(where + " must be an object of law-search settings or null (got " +
                              value.dump() + ")");
                return value;
              },
              [](const Json& value) { return value; }, "object or null", "",
              "behaviour: the law search on a_impl ({\"protocol\": \"published\" or \"extended\", and the "
              "probe's sr.* keys}); null: not run");
  return schema;
}

EvalConfig EvalConfig::from_config(ConfigReader& r) {
  EvalConfig c = schema().read(r, EvalConfig{});
  if (c.transplant_lambdas.size() < 2)
    throw Error(r.name_of("transplant_lambdas") + " needs at least two values");
  return c;
}

namespace {

struct Sample {
  simulator::System system;
  TokenizedSequence seq;
};

// Greedy choice among coordinate bins only (a cadence or pad token is never a position).
torch::Tensor greedy(const GptOutput& out, int bins) {
  auto x = out.x_logits.narrow(-1, 0, bins).argmax(-1);
  auto y = out.y_logits.narrow(-1, 0, bins).argmax(-1);
  return torch::stack({x, y}, -1);
}

// Keeps every error: the mean is the headline figure, the median shows what a typical prediction does when a
// few far-off ones dominate the mean.
struct Accumulator {
  std::vector<double> values;
  std::int64_t n = 0;
  void add(double v) {
    values.push_back(v);
    ++n;
  }
  Json mean() const {
    if (!n) return Json(nullptr);
    double sum = 0;
    for (double v : values) sum += v;
    return Json(sum / static_cast<double>(n));
  }
  Json median() const {
    if (!n) return Json(nullptr);
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const auto h = sorted.size() / 2;
    return Json(sorted.size() % 2 ? sorted[h] : 0.5 * (sorted[h - 1] + sorted[h]));
  }
};

// Errors of one predicted position against the truth and the baselines, all from the observations before
// position `start` (what the model saw): decoded to bin centres like a token model's own output, or the exact
// coordinates a regression-head model reads (`exact`; it has no quantisation floor, so no token oracle).
struct RolloutErrors {
  Accumulator model, previous, mean, velocity, oracle;
  void add(const Sample& s, const TokenizerConfig& tok, bool exact, int start, int position, double pred_x,
           double pred_y) {
    const int nb = s.seq.n_bodies;
    const int slot = (position - 1) % nb;  // the body's place among the sequence's bodies
    const int step = (position - 1) / nb;
    const auto* tokens = s.seq.tokens.data_ptr<std::int64_t>();
    const auto* xy = s.seq.coordinates.data_ptr<double>();
    const double tx = xy[2 * position], ty = xy[2 * position + 1];
    auto seen = [&](int p, int c) { return exact ? xy[2 * p + c] : tok.decode(tokens[2 * p + c]); };
    auto observed = [&](int obs_step, int c) { return seen(1 + obs_step * nb + slot, c); };
    const int last = (start - 2 - slot) / nb;  // last observed step of this body (rows 0..start-2 are seen)
    auto dist = [&](double x, double y) { return std::hypot(x - tx, y - ty); };
    model.add(dist(pred_x, pred_y));
    if (!exact) oracle.add(dist(seen(position, 0), seen(position, 1)));
    previous.add(dist(observed(last, 0), observed(last, 1)));
    double mx = 0, my = 0;
    for (int k = 0; k <= last; ++k) {
      mx += observed(k, 0);
      my += observed(k, 1);
    }
    mean.add(dist(mx / (last + 1), my / (last + 1)));
    const double ahead = step - last;
    velocity.add(dist(observed(last, 0) + ahead * (observed(last, 0) - observed(last - 1, 0)),
                      observed(last, 1) + ahead * (observed(last, 1) - observed(last - 1, 1))));
  }
  Json to_json(std::int64_t rollouts) const {
    return Json{{"model", model.mean()},
                {"previous_position", previous.mean()},
                {"per_orbit_mean", mean.mean()},
                {"constant_velocity", velocity.mean()},
                {"token_oracle", oracle.mean()},
                {"rollouts", rollouts},
                {"positions", model.n},
                {"median", Json{{"model", model.median()},
                                {"previous_position", previous.median()},
                                {"per_orbit_mean", mean.median()},
                                {"constant_velocity", velocity.median()},
                                {"token_oracle", oracle.median()}}}};
  }
};

// What every evaluation below reads: the model in eval mode on its device, and the sequences encoded at the
// training context.
struct EvalInputs {
  mutable Gpt model;  // forward() is not const in LibTorch; evaluation does not change it
  torch::Device device;
  TokenizerConfig tok;
  int context;
  std::int64_t pad;
  bool regression;  // the model reads and predicts coordinates
  double coordinate_scale;
  std::vector<Sample> samples;
};

// The first `length` positions of each sample as the model reads them, [B, length, 2]: int64 tokens padded
// with the pad token, or (regression head) float64 coordinates padded with NaN.
torch::Tensor stack_inputs(const EvalInputs& in, const std::vector<const Sample*>& samples, int length) {
  std::vector<torch::Tensor> rows;
  for (const auto* s : samples) {
    const auto& source = in.regression ? s->seq.coordinates : s->seq.tokens;
    auto t = in.regression
                 ? torch::full({length, 2}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64)
                 : torch::full({length, 2}, in.pad, torch::kInt64);
    const auto n = std::min<std::int64_t>(length, source.size(0));
    t.narrow(0, 0, n).copy_(source.narrow(0, 0, n));
    rows.push_back(t);
  }
  return torch::stack(rows);
}

// The model's prediction of the position after each input, [B, T, 2]: greedy bins (int64) for the token
// head, coordinates in AU (float64) for the regression head.
torch::Tensor predict_next(const EvalInputs& in, const torch::Tensor& inputs) {
  auto out = in.model->forward(inputs);
  if (in.regression) return out.coordinates.to(torch::kFloat64);
  return greedy(out, in.tok.bins);
}

// A predicted position in AU: the bin centres of a token prediction, or the regression head's coordinates.
std::pair<double, double> in_au(const EvalInputs& in, const torch::Tensor& prediction) {
  if (in.regression) return {prediction[0].item<double>(), prediction[1].item<double>()};
  return {in.tok.decode(prediction[0].item<std::int64_t>()),
          in.tok.decode(prediction[1].item<std::int64_t>())};
}

// Next-token loss and accuracy at the training context, and the unigram baseline of the same targets.
Json next_token_metrics(const EvalInputs& in, int batch_size) {
  const auto& tok = in.tok;
  double sum_x = 0, sum_y = 0, right_x = 0, right_y = 0, right_both = 0;
  std::int64_t positions = 0;
  std::vector<double> counts_x(tok.vocab(), 0), counts_y(tok.vocab(), 0);
  for (size_t first = 0; first < in.samples.size(); first += batch_size) {
    std::vector<const Sample*> batch;
    for (size_t i = first; i < std::min(in.samples.size(), first + batch_size); ++i)
      batch.push_back(&in.samples[i]);
    auto tokens = stack_inputs(in, batch, in.context + 1).to(in.device);
    auto inputs = tokens.narrow(1, 0, in.context), targets = tokens.narrow(1, 1, in.context);
    auto out = in.model->forward(inputs);
    auto valid = (targets.select(-1, 0) != in.pad);
    auto ce = [&](const torch::Tensor& logits, int c) {
      return torch::nn::functional::cross_entropy(
          logits.reshape({-1, tok.vocab()}).to(torch::kFloat32), targets.select(-1, c).reshape({-1}),
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone).ignore_index(in.pad));
    };
    auto vflat = valid.reshape({-1}).to(torch::kFloat64);
    sum_x += (ce(out.x_logits, 0).to(torch::kFloat64) * vflat).sum().item<double>();
    sum_y += (ce(out.y_logits, 1).to(torch::kFloat64) * vflat).sum().item<double>();
    auto ok_x = (out.x_logits.argmax(-1) == targets.select(-1, 0)) & valid;
    auto ok_y = (out.y_logits.argmax(-1) == targets.select(-1, 1)) & valid;
    right_x += ok_x.sum().item<double>();
    right_y += ok_y.sum().item<double>();
    right_both += (ok_x & ok_y).sum().item<double>();
    positions += valid.sum().item<std::int64_t>();
    auto cpu_targets = targets.cpu();
    auto t = cpu_targets.accessor<std::int64_t, 3>();
    for (std::int64_t b = 0; b < t.size(0); ++b)
      for (std::int64_t i = 0; i < t.size(1); ++i)
        if (t[b][i][0] != in.pad) {
          counts_x[t[b][i][0]] += 1;
          counts_y[t[b][i][1]] += 1;
        }
  }
  auto entropy = [](const std::vector<double>& counts) {
    double total = 0, h = 0;
    for (double c : counts) total += c;
    for (double c : counts)
      if (c > 0) h -= c / total * std::log(c / total);
    return h;
  };
  const double n = static_cast<double>(std::max<std::int64_t>(positions, 1));
  return Json{{"loss", 0.5 * (sum_x + sum_y) / n},
              {"loss_x", sum_x / n},
              {"loss_y", sum_y / n},
              {"accuracy", right_both / n},
              {"accuracy_x", right_x / n},
              {"accuracy_y", right_y / n},
              {"positions", positions},
              {"sequences", in.samples.size()},
              {"unigram_loss", 0.5 * (entropy(counts_x) + entropy(counts_y))},
              {"uniform_loss", std::log(static_cast<double>(tok.vocab()))}};
}

// Regression head: the training loss (mean squared error in units of coordinate_scale, over x and y) at the
// training context, and the root-mean-square error of the predicted position in AU.
Json next_position_metrics(const EvalInputs& in, int batch_size) {
  double sum = 0;
  std::int64_t positions = 0;
  for (size_t first = 0; first < in.samples.size(); first += batch_size) {
    std::vector<const Sample*> batch;
    for (size_t i = first; i < std::min(in.samples.size(), first + batch_size); ++i)
      batch.push_back(&in.samples[i]);
    auto coordinates = stack_inputs(in, batch, in.context + 1).to(in.device);
    auto inputs = coordinates.narrow(1, 0, in.context);
    auto out = in.model->forward(inputs);
    auto [squared, count] = position_squared_error(
        out, predictable_targets(inputs, coordinates.narrow(1, 1, in.context)), in.coordinate_scale);
    sum += squared.to(torch::kFloat64).item<double>();
    positions += count;
  }
  const double n = static_cast<double>(std::max<std::int64_t>(positions, 1));
  return Json{{"loss", sum / (2 * n)},
              {"rmse_au", std::sqrt(sum / n) * in.coordinate_scale},
              {"positions", positions},
              {"sequences", in.samples.size()}};
}

// k = 1: teacher-forced at every position whose body has two earlier observations.
void one_step_errors(const EvalInputs& in, RolloutErrors& errors, std::int64_t& rollouts) {
  for (const auto& s : in.samples) {
    const int length = static_cast<int>(s.seq.tokens.size(0));
    const int first = 2 * s.seq.n_bodies + 1;
    if (length <= first) continue;
    auto inputs = (in.regression ? s.seq.coordinates : s.seq.tokens).narrow(0, 0, length - 1);
    auto pred = predict_next(in, inputs.unsqueeze(0).to(in.device)).squeeze(0).cpu();
    for (int position = first; position < length; ++position) {
      const auto [x, y] = in_au(in, pred[position - 1]);
      errors.add(s, in.tok, in.regression, position, position, x, y);
      ++rollouts;
    }
  }
}

// k > 1: each sequence starts as late as the context allows and feeds back its own predictions.
void rollout_errors(const EvalInputs& in, int k, RolloutErrors& errors, std::int64_t& rollouts) {
  std::map<int, std::vector<const Sample*>> by_start;
  for (const auto& s : in.samples) {
    const int length = static_cast<int>(s.seq.tokens.size(0));
    const int start = std::min(length - k, in.context - k + 1);
    if (start >= 2 * s.seq.n_bodies + 1) by_start[start].push_back(&s);
  }
  for (const auto& [start, group] : by_start) {
    auto inputs = stack_inputs(in, group, start).to(in.device);
    for (int i = 0; i < k; ++i)
      inputs = torch::cat({inputs, predict_next(in, inputs).narrow(1, -1, 1).to(inputs.scalar_type())}, 1);
    auto generated = inputs.cpu();
    for (size_t b = 0; b < group.size(); ++b) {
      for (int position = start; position < start + k; ++position) {
        const auto [x, y] = in_au(in, generated[static_cast<std::int64_t>(b)][position]);
        errors.add(*group[b], in.tok, in.regression, start, position, x, y);
      }
      ++rollouts;
    }
  }
}

// Trajectory error of greedy rollouts of each length in `steps`.
Json trajectory_errors(const EvalInputs& in, const std::vector<int>& steps) {
  Json trajectory = Json::object();
  for (int k : steps) {
    RolloutErrors errors;
    std::int64_t rollouts = 0;
    if (k == 1) {
      one_step_errors(in, errors, rollouts);
    } else {
      rollout_errors(in, k, errors, rollouts);
    }
    trajectory[std::to_string(k)] = errors.to_json(rollouts);
  }
  return trajectory;
}

// Length extrapolation: loss on the first factor x context positions of sequences that long. Returns the
// measured factors and, separately, the skipped ones with their reasons.
std::pair<Json, Json> length_extrapolation(const EvalInputs& in, const ModelConfig& mc,
                                           simulator::DatasetReader& reader, const EvalConfig& config) {
  Json extrapolation = Json::array();
  Json skipped = Json::array();
  for (int factor : config.length_factors) {
    const int length = factor * in.context;
    if (factor > config.max_length_factor) {
      skipped.push_back(Json{{"factor", factor}, {"reason", "above max_length_factor"}});
      continue;
    }
    if (factor > 1 && mc.positional == Positional::kLearned) {
      skipped.push_back(
          Json{{"factor", factor}, {"reason", "learned positions do not extend past the context"}});
      continue;
    }
    TokenizerConfig long_tok = in.tok;
    long_tok.rows = length + 1;
    double sum = 0;
    int used = 0;
    for (std::int64_t i = 0; i < reader.num_systems() && used < config.length_sequences; ++i) {
      auto system = reader.read_system(i);
      if (system.rows() < length) continue;
      const auto encoded = encode(system, long_tok);
      if (encoded.tokens.size(0) < length + 1) continue;  // the heliocentric frame drops the star's rows
      auto seq = (in.regression ? encoded.coordinates : encoded.tokens).unsqueeze(0).to(in.device);
      auto out = in.model->forward(seq.narrow(1, 0, length));
      auto loss = in.regression
                      ? next_position_loss(
                            out, predictable_targets(seq.narrow(1, 0, length), seq.narrow(1, 1, length)),
                            in.coordinate_scale)
                      : next_token_loss(out, seq.narrow(1, 1, length), in.pad);
      sum += loss.item<double>();
      ++used;
    }
    if (used == 0) {
      skipped.push_back(
          Json{{"factor", factor}, {"reason", "no system has " + std::to_string(length + 1) + " rows"}});
      continue;
    }
    extrapolation.push_back(
        Json{{"factor", factor}, {"length", length}, {"sequences", used}, {"loss", sum / used}});
  }
  return {extrapolation, skipped};
}

// Attention diagnostics per layer and head: row entropy, mean attended distance, share of all-zero rows.
Json attention_diagnostics(const EvalInputs& in, int n_head, int max_sequences) {
  Json attention = Json::array();
  std::vector<const Sample*> group;
  for (size_t i = 0; i < in.samples.size() && static_cast<int>(group.size()) < max_sequences; ++i)
    if (in.samples[i].seq.tokens.size(0) == in.context + 1) group.push_back(&in.samples[i]);
  if (group.empty()) return attention;
  auto inputs = stack_inputs(in, group, in.context).to(in.device);
  auto maps = in.model->attention_maps(inputs);
  auto distance = (torch::arange(in.context).unsqueeze(1) - torch::arange(in.context).unsqueeze(0))
                      .clamp_min(0)
                      .to(torch::kFloat64)
                      .to(in.device);
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    auto w = maps[layer].to(torch::kFloat64);  // [B, H, T, T]
    auto plogp = torch::where(w > 0, w * torch::log(w.clamp_min(1e-300)), torch::zeros_like(w));
    auto row_entropy = -plogp.sum(-1);                 // [B, H, T]
    auto row_distance = (w * distance).sum(-1);        // [B, H, T]
    auto zero = (w.sum(-1) == 0).to(torch::kFloat64);  // [B, H, T]
    for (int h = 0; h < n_head; ++h) {
      attention.push_back(Json{{"layer", layer},
                               {"head", h},
                               {"entropy", row_entropy.select(1, h).mean().item<double>()},
                               {"mean_distance", row_distance.select(1, h).mean().item<double>()},
                               {"zero_rows", zero.select(1, h).mean().item<double>()}});
    }
  }
  return attention;
}

}  // namespace

Json evaluate(const LoadedModel& loaded, const std::string& checkpoint_path, const std::string& data_path,
              const EvalConfig& config) {
  configure_threads(config.threads);
  const ModelConfig& mc = loaded.config;
  EvalInputs in{loaded.module,
                resolve_device(config.device),
                loaded.tokenizer,
                mc.block_size,
                loaded.tokenizer.pad_token(),
                mc.head == Head::kRegression,
                mc.coordinate_scale,
                {}};
  in.model->to(in.device);
  in.model->eval();
  torch::NoGradGuard no_grad;

  simulator::DatasetReader reader(data_path);
  if (reader.num_systems() == 0) throw Error("dataset '" + data_path + "' holds no systems");
  TokenizerConfig at_context = in.tok;
  at_context.rows = in.context + 1;
  std::int64_t clamped = 0, coordinates = 0;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(config.sequences, reader.num_systems()); ++i) {
    Sample s{reader.read_system(i), {}};
    s.seq = encode(s.system, at_context);
    clamped += s.seq.clamped;
    coordinates += 2 * (s.seq.tokens.size(0) - 1);  // row 0 is the cadence token
    in.samples.push_back(std::move(s));
  }

  // The token head's loss is next-token cross-entropy; the regression head's the mean squared error of the
  // next position in units of coordinate_scale (its training loss).
  const Json next = in.regression ? next_position_metrics(in, config.batch_size)
                                  : next_token_metrics(in, config.batch_size);
  const Json trajectory = trajectory_errors(in, config.rollout_steps);
  const auto [extrapolation, skipped] = length_extrapolation(in, mc, reader, config);
  const Json attention = attention_diagnostics(in, mc.n_head, config.attention_sequences);
  Json result{{"format", "orbitlaw-eval"},
              {"version", 1},
              {"checkpoint", checkpoint_path},
              {"data", data_path},
              {"model", mc.to_json()},
              {"tokenizer", in.tok.to_json()},
              {"train_state", loaded.train_state},
              {"settings", Json{{"sequences", config.sequences},
                                {"batch_size", config.batch_size},
                                {"rollout_steps", config.rollout_steps},
                                {"length_factors", config.length_factors},
                                {"max_length_factor", config.max_length_factor},
                                {"length_sequences", config.length_sequences},
                                {"attention_sequences", config.attention_sequences},
                                {"device", in.device.str()}}},
              {"loss", next["loss"]},
              {"clamped_coordinates",
               Json{{"count", clamped},
                    {"coordinates", coordinates},
                    {"fraction", coordinates > 0 ? static_cast<double>(clamped) / coordinates : 0.0}}},
              {"trajectory_error", trajectory},
              {"length_extrapolation", extrapolation},
              {"length_extrapolation_skipped", skipped},
              {"attention", attention}};
  if (in.regression) {
    result["next_position"] = next;
  } else {
    result["accuracy"] = next["accuracy"];
    result["next_token"] = next;
  }
  return result;
}

}  // namespace orbitlaw::model
