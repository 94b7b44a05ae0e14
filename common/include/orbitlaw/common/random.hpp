#pragma once
// The project's one random library: fully specified generators and distributions, the same on every compiler
// and standard library (std::uniform_int_distribution, std::normal_distribution and std::shuffle are
// implementation-defined, so datasets, splits and training batches drawn with them would differ between
// machines). Two generators: SplitMix64 (one word of state; seeding, splits, batch draws) and xoshiro256**
// (Blackman and Vigna; long streams such as a simulated system's sampling), seeded through SplitMix64.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace orbitlaw {

// Advances `state` and returns its SplitMix64 output (Steele, Lea and Flood's finaliser).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The SplitMix64 output of `x` as a state, without keeping it: a hash of one word.
inline std::uint64_t splitmix64_mix(std::uint64_t x) { return splitmix64(x); }

// A uniform double in [0, 1) from the top 53 bits of a 64-bit draw.
inline double unit_interval(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64(state_); }
  // Uniform in [0, n); the modulo bias (below n / 2^64) is negligible for the sizes used here.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  double uniform() { return unit_interval(next()); }  // [0, 1)

 private:
  std::uint64_t state_;
};

// Fisher-Yates with the generator's below(n) (SplitMix64 or Xoshiro256).
template <class T, class Generator>
void shuffle(std::vector<T>& values, Generator& rng) {
  for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[rng.below(i)]);
}

// Seed of a sub-stream, so that adding draws to one purpose never shifts another's.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose) {
  return splitmix64_mix(seed ^ (purpose * 0xD1B54A32D192ED03ULL));
}

// xoshiro256**, seeded through SplitMix64 from (seed, stream, substream): every system index and attempt gets
// its own independent stream, whatever thread draws it. Distributions: uniform, log-uniform, normal
// (Marsaglia's polar method), gamma (Marsaglia and Tsang) and beta.
class Xoshiro256 {
 public:
  Xoshiro256(std::uint64_t seed, std::uint64_t stream, std::uint64_t substream) {
    std::uint64_t mix = seed;
    mix = splitmix64(mix) ^ stream;
    mix = splitmix64(mix) ^ substream;
    for (auto& word : s_) word = splitmix64(mix);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  double uniform() { return unit_interval(next()); }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double open_uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // [0, n), bias < n / 2^64
  int uniform_int(int lo, int hi) {                            // inclusive
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    return lo + static_cast<int>(next() % span);  // small spans: modulo bias below span / 2^64
  }
  double log_uniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }

  double normal() {
    for (;;) {
      const double u = 2.0 * uniform() - 1.0, v = 2.0 * uniform() - 1.0;
      const double s = u * u + v * v;
      if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * std::log(s) / s);
    }
  }

  double normal(double mean, double sd) { return mean + sd * normal(); }

  // An index drawn with probability weights[i] / sum(weights); the weights are non-negative, their sum
  // positive.
  template <std::size_t N>
  int pick(const double (&weights)[N]) {
    double total = 0;
    for (double w : weights) total += w;
    double u = uniform() * total;
    for (std::size_t i = 0; i + 1 < N; ++i) {
      if (u < weights[i]) return static_cast<int>(i);
      u -= weights[i];
    }
    return static_cast<int>(N - 1);
  }

  double gamma(double shape) {  // shape < 1 through Gamma(shape + 1) * U^(1/shape)
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(open_uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = open_uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

  double beta(double alpha, double beta_) {
    const double x = gamma(alpha), y = gamma(beta_);
    return x / (x + y);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace orbitlaw
