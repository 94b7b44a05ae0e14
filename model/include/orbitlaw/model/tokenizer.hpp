#pragma once
// Trajectory tokenizer (docs/design.md section 3; Vafa et al. exactly by default): each coordinate is
// binned uniformly over [lo, hi] AU; a sequence position is one body's (x_bin, y_bin) pair; row 0 holds the
// cadence token in both channels; then, per time step, the bodies interleaved planet_1 .. planet_N, star.
// The heliocentric frame (Liu et al.'s two-body setting, docs/design.md section 6b) instead holds only the
// planets, each relative to the star, so a one-planet sequence is the planet's orbit alone.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::model {

// Which coordinates a sequence holds: every body in the simulation's (barycentric) frame, or the planets
// relative to the star (the star itself omitted).
enum class Frame { kBarycentric, kHeliocentric };

struct TokenizerConfig {
  int bins = 7000;  // bins per coordinate
  double lo = -50;  // AU, lower edge of bin 0
  double hi = 50;   // AU, upper edge of the last bin
  int rows = 1000;  // sequence length in rows, cadence row included (the model sees rows - 1 positions)
  double week_cadence = 7.0 / 365.25;  // years; encoded as token bins + 0
  double half_year_cadence = 0.5;      // years; encoded as token bins + 1
  Frame frame = Frame::kBarycentric;

  // Token layout per channel: [0, bins) coordinate bins, bins / bins + 1 cadence tokens, bins + 2 padding
  // (the spare token; also the ignore index of the loss).
  int vocab() const { return bins + 3; }
  std::int64_t week_token() const { return bins; }
  std::int64_t half_year_token() const { return bins + 1; }
  std::int64_t pad_token() const { return bins + 2; }
  double bin_width() const { return (hi - lo) / bins; }
  // The largest |coordinate| the bins cover: the regression head's unit of length (inputs and outputs are
  // coordinates divided by it).
  double coordinate_scale() const { return std::max(std::abs(lo), std::abs(hi)); }

  // Bin of one coordinate; values outside [lo, hi) are clamped to the edge bins.
  std::int64_t bin_of(double au) const;
  // Centre of bin `token` in AU; throws Error for a token that is not a coordinate bin.
  double decode(std::int64_t token) const;
  // Token of a cadence in years; throws Error if it is neither cadence (0.1% tolerance).
  std::int64_t cadence_token(double cadence_years) const;

  // The "tokenizer" section's keys: types, defaults (these members' initial values), ranges, descriptions.
  static const ConfigSchema<TokenizerConfig>& schema();
  void validate() const;  // throws Error on an unusable setting (bins outside [2, 65532], hi <= lo, rows < 2)
  Json to_json() const;
  // Reads the keys of a "tokenizer" section, `defaults` supplying what is absent; unknown keys are rejected.
  static TokenizerConfig from_config(ConfigReader& section, const TokenizerConfig& defaults);
  static TokenizerConfig from_json(const Json& json);  // the exact inverse of to_json (checkpoints)
  bool operator==(const TokenizerConfig&) const = default;
};

// Share of coordinates outside [lo, hi) above which eval and inspect warn: the tokenizer clamps them to the
// edge bins, so the model sees a planet pinned to the border (the quickstart's own data clamp 0.3%).
inline constexpr double kClampedWarningFraction = 0.01;

struct TokenizedSequence {
  torch::Tensor tokens;  // [L, 2] int64 (x bin, y bin); L <= rows; row 0 is the cadence token
  // [L, 2] float64: the same positions' exact coordinates in AU (what the regression head reads); NaN on
  // the cadence row.
  torch::Tensor coordinates;
  std::vector<int> row;  // per position: the system's row (step * n_bodies + body), or -1 for the cadence
  int n_bodies = 0;
  int clamped = 0;  // coordinates that fell outside [lo, hi) and were clamped to an edge bin
};

// Encodes the first rows - 1 observations of a planar system (dim 2; throws Error otherwise).
TokenizedSequence encode(const simulator::System& system, const TokenizerConfig& config);

// Decodes a [..., 2] tensor of coordinate tokens to AU (bin centres), as a float64 tensor of the same shape.
// Tokens that are not coordinate bins decode to NaN.
torch::Tensor decode_tokens(const torch::Tensor& tokens, const TokenizerConfig& config);

}  // namespace orbitlaw::model
