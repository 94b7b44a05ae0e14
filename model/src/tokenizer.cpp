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

const ConfigSchema<TokenizerConfig>& TokenizerConfig::schema() {
  static const auto schema =
      ConfigSchema<TokenizerConfig>()
          .key("bins", &TokenizerConfig::bins, "coordinate bins per channel (tokens fit uint16)",
               Range::between(2, 65532))
          .key("lo", &TokenizerConfig::lo, "AU, lower edge of bin 0")
          .key("hi", &TokenizerConfig::hi, "AU, upper edge of the last bin (above lo)")
          .key("rows", &TokenizerConfig::rows,
               "sequence length in rows, cadence row included (follows model.block_size + 1 unless set)",
               Range::at_least(2))
          .key("week_cadence", &TokenizerConfig::week_cadence, "years; the cadence written as token bins + 0",
               Range::greater_than(0))
          .key("half_year_cadence", &TokenizerConfig::half_year_cadence,
               "years; the cadence written as token bins + 1", Range::greater_than(0))
          .choice("frame", &TokenizerConfig::frame,
                  std::vector<std::pair<Frame, std::string>>{{Frame::kBarycentric, "barycentric"},
                                                             {Frame::kHeliocentric, "heliocentric"}},
                  "coordinates as simulated, or relative to the star (which is then not shown)");
  return schema;
}

void TokenizerConfig::validate() const {
  schema().check(*this, "tokenizer.");
  if (!(hi > lo)) throw Error("tokenizer.hi must exceed tokenizer.lo");
}

Json TokenizerConfig::to_json() const { return schema().to_json(*this); }

TokenizerConfig TokenizerConfig::from_config(ConfigReader& section, const TokenizerConfig& d) {
  TokenizerConfig c = schema().read(section, d);
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
