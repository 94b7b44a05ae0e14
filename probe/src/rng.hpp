#pragma once
// A small deterministic generator (SplitMix64) so splits and galaxy draws are the same on every platform and
// standard library (std::uniform_int_distribution and std::shuffle are implementation-defined).
#include <cstdint>
#include <utility>
#include <vector>

namespace orbitlaw::probe::detail {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); the modulo bias (below n / 2^64) is negligible for the sizes used here.
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

template <class T>
void shuffle(std::vector<T>& values, SplitMix64& rng) {
  for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[rng.below(i)]);
}

// Seed of a sub-stream, so that adding draws to one purpose never shifts another's.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose) {
  SplitMix64 mix(seed ^ (purpose * 0xD1B54A32D192ED03ull));
  return mix.next();
}

}  // namespace orbitlaw::probe::detail
