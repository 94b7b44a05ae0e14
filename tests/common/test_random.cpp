// The random library against published reference outputs and distribution moments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "orbitlaw/common/random.hpp"
#include "orbitlaw/common/units.hpp"

namespace {

// orbitlaw::shuffle with this generator moves 0..49 out of order and keeps every value once.
template <class Generator>
void expect_shuffle_permutes(Generator& rng) {
  std::vector<int> values(50);
  std::iota(values.begin(), values.end(), 0);
  orbitlaw::shuffle(values, rng);
  EXPECT_FALSE(std::is_sorted(values.begin(), values.end()));
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(values[i], i);
}

// SplitMix64 from state 0: the first outputs of Vigna's reference implementation (splitmix64.c).
TEST(Random, SplitMix64MatchesTheReference) {
  orbitlaw::SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(rng.next(), 0x06C45D188009454FULL);
  EXPECT_EQ(orbitlaw::splitmix64_mix(0), 0xE220A8397B1DCDAFULL);
}

// xoshiro256** by its definition: the first output is rotl(s1 * 5, 7) * 9 of the seeded state.
TEST(Random, XoshiroFirstOutputFollowsTheDefinition) {
  std::uint64_t mix = 42;
  mix = orbitlaw::splitmix64(mix) ^ 3;
  mix = orbitlaw::splitmix64(mix) ^ 4;
  orbitlaw::splitmix64(mix);
  const std::uint64_t s1 = orbitlaw::splitmix64(mix);
  const std::uint64_t x = s1 * 5;
  EXPECT_EQ(orbitlaw::Xoshiro256(42, 3, 4).next(), ((x << 7) | (x >> 57)) * 9);
}

TEST(Random, DistributionsHaveTheirMoments) {
  orbitlaw::Xoshiro256 rng(7, 0, 0);
  const int n = 200000;
  double sum = 0, sum2 = 0, usum = 0, gsum = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal();
    sum += z;
    sum2 += z * z;
    usum += rng.uniform();
    gsum += rng.gamma(2.5);
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);    // standard error 0.0022
  EXPECT_NEAR(sum2 / n, 1.0, 0.015);  // standard error 0.0032
  EXPECT_NEAR(usum / n, 0.5, 0.003);  // standard error 0.00065
  EXPECT_NEAR(gsum / n, 2.5, 0.02);   // mean of Gamma(k) is k; standard error 0.0035
}

TEST(Random, BelowIsUniformAndShuffleIsAPermutation) {
  orbitlaw::SplitMix64 rng(11);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) ++counts[rng.below(10)];
  double chi2 = 0;
  for (int c : counts) chi2 += (c - 10000.0) * (c - 10000.0) / 10000.0;
  EXPECT_LT(chi2, 27.9);  // 9 degrees of freedom, p = 0.001
  expect_shuffle_permutes(rng);
}

// The symbolic-regression engine's draws: a weighted pick follows its weights (never a zero weight), and the
// xoshiro stream's below() and shuffle behave like SplitMix64's.
TEST(Random, WeightedPickFollowsItsWeights) {
  orbitlaw::Xoshiro256 rng(5, 0, 0);
  const double weights[] = {0.10, 0.30, 0.0, 0.60};
  std::vector<int> counts(4, 0);
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) ++counts[rng.pick(weights)];
  EXPECT_EQ(counts[2], 0);
  double chi2 = 0;
  for (int k : {0, 1, 3}) {
    const double expected = weights[k] * draws;
    chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
  }
  EXPECT_LT(chi2, 13.8);                     // 2 degrees of freedom, p = 0.001
  const double unnormalised[] = {2.0, 6.0};  // the weights need not sum to one
  int second = 0;
  for (int i = 0; i < draws; ++i) second += rng.pick(unnormalised);
  EXPECT_NEAR(second / static_cast<double>(draws), 0.75, 0.01);

  expect_shuffle_permutes(rng);
  double mean = 0;
  for (int i = 0; i < draws; ++i) mean += static_cast<double>(rng.below(7));
  EXPECT_NEAR(mean / draws, 3.0, 0.03);
}

TEST(Units, GravitationalConstantIsFourPiSquared) {
  // One solar mass, 1 AU: a circular orbit of period one year, v = 2 pi AU/yr = sqrt(G M / r).
  EXPECT_NEAR(std::sqrt(orbitlaw::kGravitationalConstant), 2 * 3.14159265358979323846, 1e-14);
}

}  // namespace
