#pragma once
// Random expressions and the variation operators of the evolutionary search: perturb a constant, swap an
// operator, insert or delete a node, replace a subtree, fold constants, and subtree crossover.
#include <vector>

#include "orbitlaw/common/random.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

// The operators a run may use, split by arity, and how many variables there are.
struct OperatorSet {
  std::vector<Op> unary;
  std::vector<Op> binary;
  int variables = 0;
};
// Throws orbitlaw::Error naming an unknown operator.
OperatorSet make_operator_set(const std::vector<std::string>& names, int variables);

// Replaces every subtree without variables by one constant (its value); keeps the tree otherwise.
Expr fold_constants(const Expr& expr);

class Mutator {
 public:
  Mutator(const OperatorSet& ops, int max_size, int max_depth)
      : ops_(ops), max_size_(max_size), max_depth_(max_depth) {}

  Expr random_tree(int size, Xoshiro256& rng) const;
  // One random variation of `parent` within the size and depth limits (the parent itself if none was found).
  Expr mutate(const Expr& parent, Xoshiro256& rng) const;
  // A child of `a` whose random subtree is replaced by a random subtree of `b`, within the limits.
  Expr crossover(const Expr& a, const Expr& b, Xoshiro256& rng) const;
  bool fits(const Expr& e) const { return e.complexity() <= max_size_ && e.depth() <= max_depth_; }

 private:
  Node random_leaf(Xoshiro256& rng) const;
  Expr mutate_once(const Expr& parent, Xoshiro256& rng) const;

  const OperatorSet& ops_;
  int max_size_;
  int max_depth_;
};

}  // namespace orbitlaw::sr
