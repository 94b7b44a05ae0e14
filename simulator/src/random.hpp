#pragma once
// A small, fully specified random number generator. The standard library's distributions are
// implementation-defined, so datasets would differ between compilers; these are the same everywhere.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace orbitlaw::simulator {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna), seeded through splitmix64 from (seed, stream, substream): every system
// index and attempt gets its own independent stream, whatever thread draws it.
class Random {
 public:
  Random(std::uint64_t seed, std::uint64_t stream, std::uint64_t substream) {
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

  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double open_uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  int uniform_int(int lo, int hi) {                                                        // inclusive
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    return lo + static_cast<int>(next() % span);  // span <= 100: modulo bias below 1e-17
  }
  double log_uniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }

  double normal() {  // Marsaglia's polar method
    for (;;) {
      const double u = 2.0 * uniform() - 1.0, v = 2.0 * uniform() - 1.0;
      const double s = u * u + v * v;
      if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * std::log(s) / s);
    }
  }

  double gamma(double shape) {  // Marsaglia and Tsang; shape < 1 through Gamma(shape + 1) * U^(1/shape)
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

}  // namespace orbitlaw::simulator
