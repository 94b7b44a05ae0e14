#pragma once
// Synthetic data sets for the search tests: a formula sampled on given variable ranges, with optional noise;
// and small search budgets.
#include <Eigen/Core>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr::test {

struct Range {
  std::string name;
  double lo, hi;
  bool log_uniform = false;
};

struct Dataset {
  std::vector<std::string> names;
  Eigen::MatrixXd X;
  Eigen::VectorXd y;
};

// Samples `rows` points of `formula` (parsed by orbitlaw's parser) and multiplies y by (1 + noise * N(0,1)).
inline Dataset sample(const std::string& formula, const std::vector<Range>& ranges, int rows,
                      std::uint64_t seed, double noise = 0) {
  Dataset d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> normal(0, 1);
  d.X.resize(rows, static_cast<Eigen::Index>(ranges.size()));
  for (std::size_t j = 0; j < ranges.size(); ++j) {
    d.names.push_back(ranges[j].name);
    for (int i = 0; i < rows; ++i) {
      const Range& r = ranges[j];
      d.X(i, j) = r.log_uniform ? std::exp(std::log(r.lo) + u(rng) * (std::log(r.hi) - std::log(r.lo)))
                                : r.lo + u(rng) * (r.hi - r.lo);
    }
  }
  d.y = parse(formula, d.names).evaluate(d.X).matrix();
  if (noise > 0) {
    for (int i = 0; i < rows; ++i) d.y[i] *= 1 + noise * normal(rng);
  }
  return d;
}

// The default options with a small budget: 4 populations of 30, `iterations` iterations, sizes up to 15.
inline Options small_budget(std::uint64_t seed, int iterations) {
  Options o;
  o.populations = 4;
  o.population_size = 30;
  o.iterations = iterations;
  o.max_size = 15;
  o.seed = seed;
  return o;
}

}  // namespace orbitlaw::sr::test
