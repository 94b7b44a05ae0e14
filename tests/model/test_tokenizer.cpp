// Tokenizer encode/decode against hand-computed bins (docs/design.md section 3).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "orbitlaw/model/tokenizer.hpp"

namespace orbitlaw::model {
namespace {

// Two bodies (planet, star), three steps, weekly cadence, positions chosen so the bins are easy by hand.
simulator::System hand_built_system() {
  simulator::System s;
  s.n_bodies = 2;
  s.n_steps = 3;
  s.dim = 2;
  s.cadence = 7.0 / 365.25;
  s.position.resize(6, 2);
  // Bin width 1/70 AU; bin = floor((x + 50) * 70).
  s.position << 0.01, -0.01,      // step 0 planet: 3500, 3499
      12.3456, -12.3456,          // step 0 star: floor(62.3456*70)=4364, floor(37.6544*70)=2635
      -50.0, 49.999,              // step 1 planet: 0, floor(99.999*70)=6999
      50.0, -60.0,                // step 1 star: clamped to 6999 and 0
      1.0 / 140, 0.02,            // step 2 planet: floor(50.00714*70)=3500, floor(50.02*70)=3501
      -1.0 / 140 + 1e-9, -49.99;  // step 2 star: floor(49.99286*70 + ~0)=3499, floor(0.01*70)=0
  return s;
}

TEST(Tokenizer, EncodesHandComputedBins) {
  TokenizerConfig config;
  auto seq = encode(hand_built_system(), config);
  ASSERT_EQ(seq.tokens.size(0), 7);
  ASSERT_EQ(seq.tokens.size(1), 2);
  const std::int64_t want[7][2] = {{7000, 7000}, {3500, 3499}, {4364, 2635}, {0, 6999},
                                   {6999, 0},    {3500, 3501}, {3499, 0}};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(seq.tokens[i][0].item<std::int64_t>(), want[i][0]) << "position " << i;
    EXPECT_EQ(seq.tokens[i][1].item<std::int64_t>(), want[i][1]) << "position " << i;
  }
  EXPECT_EQ(seq.row, (std::vector<int>{-1, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(seq.clamped, 2);  // x = 50 (the upper edge is exclusive) and y = -60
  EXPECT_EQ(seq.n_bodies, 2);
  EXPECT_EQ(config.vocab(), 7003);
}

TEST(Tokenizer, CoordinatesAreTheExactPositionsBesideTheTokens) {
  TokenizerConfig config;
  auto system = hand_built_system();
  auto seq = encode(system, config);
  ASSERT_EQ(seq.coordinates.sizes(), (std::vector<std::int64_t>{7, 2}));
  EXPECT_EQ(seq.coordinates.scalar_type(), torch::kFloat64);
  EXPECT_TRUE(std::isnan(seq.coordinates[0][0].item<double>()));  // the cadence row is not a position
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 2; ++c) EXPECT_EQ(seq.coordinates[r + 1][c].item<double>(), system.position(r, c));
  }
  EXPECT_EQ(config.coordinate_scale(), 50.0);
}

TEST(Tokenizer, HeliocentricFrameHoldsThePlanetsRelativeToTheStar) {
  // The star is the last body of each step (rows 1, 3, 5); the planet's rows relative to it, by hand:
  // step 0 (0.01 - 12.3456, -0.01 + 12.3456), step 1 (-50 - 50, 49.999 + 60), step 2 (1/70 - 1e-9, 50.01).
  TokenizerConfig config;
  config.frame = Frame::kHeliocentric;
  auto seq = encode(hand_built_system(), config);
  ASSERT_EQ(seq.tokens.size(0), 4);
  EXPECT_EQ(seq.n_bodies, 1);
  EXPECT_EQ(seq.row, (std::vector<int>{-1, 0, 2, 4}));
  const double want[3][2] = {{0.01 - 12.3456, -0.01 + 12.3456}, {-100.0, 109.999}, {1.0 / 70 - 1e-9, 50.01}};
  for (int p = 0; p < 3; ++p) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_NEAR(seq.coordinates[p + 1][c].item<double>(), want[p][c], 1e-12) << p << " " << c;
      EXPECT_EQ(seq.tokens[p + 1][c].item<std::int64_t>(), config.bin_of(want[p][c]));
    }
  }
  EXPECT_EQ(seq.clamped, 3);  // -100, 109.999 and 50.01 are outside [-50, 50)
  // Truncation counts shown positions: rows 2 keeps one planet position.
  config.rows = 2;
  EXPECT_EQ(encode(hand_built_system(), config).row, (std::vector<int>{-1, 0}));
  // A lone body has no star to be relative to.
  auto lone = hand_built_system();
  lone.n_bodies = 1;
  lone.n_steps = 6;
  EXPECT_THROW(encode(lone, config), Error);
}

TEST(Tokenizer, HalfYearCadenceAndTruncationToRows) {
  TokenizerConfig config;
  config.rows = 4;  // cadence + 3 observations
  auto system = hand_built_system();
  system.cadence = 0.5;
  auto seq = encode(system, config);
  ASSERT_EQ(seq.tokens.size(0), 4);
  EXPECT_EQ(seq.tokens[0][0].item<std::int64_t>(), 7001);
  EXPECT_EQ(seq.tokens[3][0].item<std::int64_t>(), 0);
  EXPECT_EQ(seq.row.back(), 2);
}

TEST(Tokenizer, DecodesToBinCentres) {
  TokenizerConfig config;
  EXPECT_NEAR(config.decode(0), -50 + 0.5 / 70, 1e-12);
  EXPECT_NEAR(config.decode(3500), 0.5 / 70, 1e-12);
  EXPECT_NEAR(config.decode(6999), 50 - 0.5 / 70, 1e-12);
  EXPECT_THROW(config.decode(7000), Error);  // a cadence token is not a position
  auto decoded = decode_tokens(torch::tensor({3500, 7000}, torch::kInt64), config);
  EXPECT_NEAR(decoded[0].item<double>(), 0.5 / 70, 1e-12);
  EXPECT_TRUE(std::isnan(decoded[1].item<double>()));
  // Round trip: decoding then encoding a bin centre gives the bin back, for every bin of a coarse tokenizer.
  TokenizerConfig coarse;
  coarse.bins = 500;
  for (std::int64_t b = 0; b < 500; ++b) ASSERT_EQ(coarse.bin_of(coarse.decode(b)), b);
  EXPECT_NEAR(coarse.bin_width(), 0.2, 1e-15);
}

TEST(Tokenizer, RejectsWhatItCannotEncode) {
  TokenizerConfig config;
  auto system = hand_built_system();
  system.cadence = 1.0;
  EXPECT_THROW(encode(system, config), Error);
  auto spatial = hand_built_system();
  spatial.dim = 3;
  spatial.position.resize(6, 3);
  EXPECT_THROW(encode(spatial, config), Error);
  TokenizerConfig too_many;
  too_many.bins = 70000;
  EXPECT_THROW(too_many.validate(), Error);
}

}  // namespace
}  // namespace orbitlaw::model
