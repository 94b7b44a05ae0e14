#include "orbitlaw/probe/behaviour_eval.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "hdf5_writer.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/units.hpp"
#include "orbitlaw/model/gpt.hpp"

namespace orbitlaw::probe {

std::optional<std::string> behaviour_unavailable(const model::LoadedModel& model,
                                                 const simulator::DatasetReader& data, int sequences) {
  if (model.tokenizer.frame != model::Frame::kHeliocentric)
    return "the model reads the barycentric frame; the behavioural test needs one body's track relative to "
           "its star (tokenizer.frame = heliocentric)";
  const auto table = data.read_system_table();
  const auto n = std::min<std::size_t>(table.n_bodies.size(), static_cast<std::size_t>(sequences));
  for (std::size_t i = 0; i < n; ++i)
    if (table.n_bodies[i] != 2)
      return "system " + std::to_string(i) + " has " + std::to_string(table.n_bodies[i] - 1) +
             " planets; the behavioural test needs one-planet systems";
  return std::nullopt;
}

std::vector<BehaviourRow> read_behaviour_rows(const simulator::DatasetReader& data, int sequences,
                                              int positions, int context) {
  std::vector<BehaviourRow> rows;
  const double k = data.force_law_exponent();
  for (std::int64_t i = 0; i < std::min<std::int64_t>(sequences, data.num_systems()); ++i) {
    const auto system = data.read_system(i);
    if (system.n_bodies != 2 || system.dim != 2)
      throw Error("behaviour: system " + std::to_string(i) + " of " + data.path() +
                  " is not a planar one-planet system");
    TwoBodyTrack track;
    track.dt = system.cadence;
    track.k = k;
    track.star_mass = system.mass[1];
    track.planet_mass = system.mass[0];
    track.mu = kGravitationalConstant * (system.mass[0] + system.mass[1]);
    track.system = i;
    const int steps = std::min(system.n_steps, positions);
    for (int t = 0; t < steps; ++t) {
      const int planet = 2 * t, star = 2 * t + 1;
      auto rel = [&](const Eigen::MatrixXd& m) {
        return Vec2(m(planet, 0) - m(star, 0), m(planet, 1) - m(star, 1));
      };
      track.position.push_back(rel(system.position));
      track.velocity.push_back(rel(system.velocity));
      track.acceleration.push_back(rel(system.acceleration));
    }
    auto more = rows_of_track(track, context);
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return rows;
}

std::string prediction_kind(const model::LoadedModel& model) {
  return model.config.head == model::Head::kRegression
             ? "the regression head's predicted coordinates"
             : "the expected position under the token head's predicted distribution over coordinate bins";
}

namespace {

// The model's x_hat for windows of one length, [B, 2] in AU.
torch::Tensor predict_windows(const model::LoadedModel& loaded,
                              const std::vector<const TrackWindow*>& windows) {
  const auto& tok = loaded.tokenizer;
  const bool regression = loaded.config.head == model::Head::kRegression;
  const auto B = static_cast<std::int64_t>(windows.size());
  const auto T = static_cast<std::int64_t>(windows.front()->positions.size()) + 1;
  auto coordinates = torch::empty({B, T, 2}, torch::kFloat64);
  auto tokens = torch::empty({B, T, 2}, torch::kInt64);
  auto c = coordinates.accessor<double, 3>();
  auto t = tokens.accessor<std::int64_t, 3>();
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& w = *windows[static_cast<std::size_t>(b)];
    c[b][0][0] = c[b][0][1] = std::numeric_limits<double>::quiet_NaN();
    t[b][0][0] = t[b][0][1] = tok.cadence_token(w.dt);
    for (std::int64_t p = 1; p < T; ++p)
      for (int d = 0; d < 2; ++d) {
        c[b][p][d] = w.positions[static_cast<std::size_t>(p - 1)](d);
        t[b][p][d] = tok.bin_of(c[b][p][d]);
      }
  }
  auto& module = const_cast<model::Gpt&>(loaded.module);
  const auto device = module->parameters().front().device();
  auto out = module->forward((regression ? coordinates : tokens).to(device));
  if (regression) return out.coordinates.select(1, T - 1).to(torch::kCPU, torch::kFloat64);
  auto centres = model::decode_tokens(torch::arange(tok.bins, torch::kInt64), tok).to(device);
  auto expected = [&](const torch::Tensor& logits) {
    auto p = torch::softmax(logits.select(1, T - 1).narrow(-1, 0, tok.bins).to(torch::kFloat64), -1);
    return (p * centres).sum(-1);
  };
  return torch::stack({expected(out.x_logits), expected(out.y_logits)}, -1).to(torch::kCPU);
}

}  // namespace

NextPositionPredictor model_predictor(const model::LoadedModel& loaded, int batch_size) {
  return [&loaded, batch_size](const std::vector<TrackWindow>& windows) {
    torch::NoGradGuard no_grad;
    std::vector<Vec2> out(windows.size());
    std::map<std::size_t, std::vector<std::size_t>> by_length;  // equal lengths batch without padding
    for (std::size_t i = 0; i < windows.size(); ++i) by_length[windows[i].positions.size()].push_back(i);
    for (const auto& [length, members] : by_length) {
      for (std::size_t first = 0; first < members.size(); first += static_cast<std::size_t>(batch_size)) {
        const auto last = std::min(members.size(), first + static_cast<std::size_t>(batch_size));
        std::vector<const TrackWindow*> batch;
        for (std::size_t j = first; j < last; ++j) batch.push_back(&windows[members[j]]);
        const auto predicted = predict_windows(loaded, batch);
        auto a = predicted.accessor<double, 2>();
        for (std::size_t j = first; j < last; ++j)
          out[members[j]] =
              Vec2(a[static_cast<std::int64_t>(j - first)][0], a[static_cast<std::int64_t>(j - first)][1]);
      }
    }
    return out;
  };
}

void write_behaviour_predictions(const std::string& path, const std::vector<BehaviourRow>& rows,
                                 const BehaviourReport& report, const std::string& prediction) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  if (report.predicted.size() != rows.size() || report.implied_acceleration.size() != rows.size())
    throw Error("behaviour predictions: the report does not match the rows");
  std::vector<std::int64_t> system(rows.size()), step(rows.size());
  Eigen::VectorXd r(n), star_mass(n), dt(n);
  Eigen::MatrixXd position(n, 2), velocity(n, 2), acceleration(n, 2), next(n, 2), predicted(n, 2),
      implied(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    system[static_cast<std::size_t>(i)] = row.system;
    step[static_cast<std::size_t>(i)] = row.step;
    r(i) = row.window.positions.back().norm();
    star_mass(i) = row.star_mass;
    dt(i) = row.window.dt;
    position.row(i) = row.window.positions.back();
    velocity.row(i) = row.velocity;
    acceleration.row(i) = row.acceleration;
    next.row(i) = row.next;
    predicted.row(i) = report.predicted[static_cast<std::size_t>(i)];
    implied.row(i) = report.implied_acceleration[static_cast<std::size_t>(i)];
  }
  write_file_atomically(path, [&](hid_t root) {
    write_string_attribute(root, "format", kBehaviourPredictionsFormat);
    write_int_attribute(root, "schema_version", kBehaviourPredictionsSchemaVersion);
    write_string_attribute(root, "prediction", prediction);
    write_string_attribute(root, "law_exponent", std::to_string(report.law_exponent));
    write_string_attribute(root, "report", report.json().dump());
    write_int64(root, "system", system);
    write_int64(root, "step", step);
    write_vector(root, "r", r);
    write_vector(root, "star_mass", star_mass);
    write_vector(root, "dt", dt);
    write_matrix(root, "position", position);
    write_matrix(root, "velocity", velocity);
    write_matrix(root, "acceleration", acceleration);
    write_matrix(root, "next", next);
    write_matrix(root, "predicted", predicted);
    write_matrix(root, "implied_acceleration", implied);
  });
}

}  // namespace orbitlaw::probe
