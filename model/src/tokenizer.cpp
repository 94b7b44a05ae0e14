#include "orbitlaw/model/tokenizer.hpp"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace orbitlaw::model {

std::int64_t TokenizerConfig::bin_of(double au) const {
  // Clamping keeps a far-flung planet representable; encode() counts how often it happens.
  double scaled = std::floor((au - lo) / bin_width());
  if (!(scaled >= 0)) return 0;  // also catches NaN
  if (scaled >= bins - 1) return bins - 1;
  return static_cast<std::int64_t>(scaled);
}

double TokenizerConfig::decode(std::int64_t token) const {
  if (token < 0 || token >= bins)
    throw Error("token " + std::to_string(token) + " is not a coordinate bin (0.." +
                std::to_string(bins - 1) + ")");
  return lo + (static_cast<double>(token) + 0.5) * bin_width();
}

std::int64_t TokenizerConfig::cadence_token(double cadence_years) const {
  auto close = [](double a, double b) { return std::abs(a - b) <= 1e-3 * std::abs(b); };
  if (close(cadence_years, week_cadence)) return week_token();
  if (close(cadence_years, half_year_cadence)) return half_year_token();
  throw Error("cadence " + std::to_string(cadence_years) + " yr is neither of the tokenizer's cadences (" +
              std::to_string(week_cadence) + " yr, " + std::to_string(half_year_cadence) + " yr)");
}

void TokenizerConfig::validate() const {
  if (bins < 2) throw Error("tokenizer.bins must be at least 2 (got " + std::to_string(bins) + ")");
  if (vocab() > 65535)
    throw Error("tokenizer.bins " + std::to_string(bins) +
                " too large: tokens must fit uint16 (bins <= 65532)");
  if (!(hi > lo)) throw Error("tokenizer.hi must exceed tokenizer.lo");
  if (rows < 2) throw Error("tokenizer.rows must be at least 2 (got " + std::to_string(rows) + ")");
  if (!(week_cadence > 0) || !(half_year_cadence > 0)) throw Error("tokenizer cadences must be positive");
}

Json TokenizerConfig::to_json() const {
  return Json{{"bins", bins},
              {"lo", lo},
              {"hi", hi},
              {"rows", rows},
              {"week_cadence", week_cadence},
              {"half_year_cadence", half_year_cadence},
              {"frame", frame == Frame::kHeliocentric ? "heliocentric" : "barycentric"}};
}

TokenizerConfig TokenizerConfig::from_config(ConfigReader& section, const TokenizerConfig& d) {
  TokenizerConfig c;
  c.bins = section.get<int>("bins", d.bins);
  c.lo = section.get<double>("lo", d.lo);
  c.hi = section.get<double>("hi", d.hi);
  c.rows = section.get<int>("rows", d.rows);
  c.week_cadence = section.get<double>("week_cadence", d.week_cadence);
  c.half_year_cadence = section.get<double>("half_year_cadence", d.half_year_cadence);
  const std::string frame =
      section.get<std::string>("frame", d.frame == Frame::kHeliocentric ? "heliocentric" : "barycentric");
  if (frame == "heliocentric") {
    c.frame = Frame::kHeliocentric;
  } else if (frame == "barycentric") {
    c.frame = Frame::kBarycentric;
  } else {
    throw Error("tokenizer.frame must be 'barycentric' or 'heliocentric' (got '" + frame + "')");
  }
  section.finish();
  c.validate();
  return c;
}

TokenizerConfig TokenizerConfig::from_json(const Json& json) {
  ConfigReader reader(json, "tokenizer");
  return from_config(reader, TokenizerConfig{});
}

TokenizedSequence encode(const simulator::System& system, const TokenizerConfig& config) {
  if (system.dim != 2)
    throw Error("the tokenizer encodes planar (x, y) systems; this system has dim " +
                std::to_string(system.dim));
  if (system.position.rows() != system.rows() || system.position.cols() != 2)
    throw Error("system position array has shape [" + std::to_string(system.position.rows()) + ", " +
                std::to_string(system.position.cols()) + "], expected [" + std::to_string(system.rows()) +
                ", 2]");
  // The positions a sequence holds, in order: (system row, star row or -1 for an absolute coordinate).
  const bool helio = config.frame == Frame::kHeliocentric;
  if (helio && system.n_bodies < 2)
    throw Error("the heliocentric frame needs a star and at least one planet; this system has " +
                std::to_string(system.n_bodies) + " bodies");
  std::vector<std::pair<int, int>> shown;
  for (int r = 0; r < system.rows() && static_cast<int>(shown.size()) < config.rows - 1; ++r) {
    const int body = r % system.n_bodies;
    if (helio && body == system.star_index()) continue;
    shown.emplace_back(r, helio ? r - body + system.star_index() : -1);
  }
  const int observations = static_cast<int>(shown.size());
  TokenizedSequence out;
  out.n_bodies = helio ? system.n_bodies - 1 : system.n_bodies;
  out.tokens = torch::empty({observations + 1, 2}, torch::kInt64);
  out.coordinates = torch::empty({observations + 1, 2}, torch::kFloat64);
  auto t = out.tokens.accessor<std::int64_t, 2>();
  auto xy = out.coordinates.accessor<double, 2>();
  out.row.resize(observations + 1);
  const std::int64_t cadence = config.cadence_token(system.cadence);
  t[0][0] = cadence;
  t[0][1] = cadence;
  xy[0][0] = xy[0][1] = std::numeric_limits<double>::quiet_NaN();
  out.row[0] = -1;
  for (int p = 0; p < observations; ++p) {
    const auto [r, star] = shown[p];
    for (int c = 0; c < 2; ++c) {
      const double au = system.position(r, c) - (star >= 0 ? system.position(star, c) : 0.0);
      if (!(au >= config.lo && au < config.hi)) ++out.clamped;
      t[p + 1][c] = config.bin_of(au);
      xy[p + 1][c] = au;
    }
    out.row[p + 1] = r;
  }
  return out;
}

torch::Tensor decode_tokens(const torch::Tensor& tokens, const TokenizerConfig& config) {
  auto t = tokens.to(torch::kFloat64);
  auto centres = config.lo + (t + 0.5) * config.bin_width();
  auto valid = (tokens >= 0) & (tokens < config.bins);
  return torch::where(valid, centres, torch::full_like(centres, std::numeric_limits<double>::quiet_NaN()));
}

}  // namespace orbitlaw::model
