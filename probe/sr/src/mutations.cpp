// Variation operators. Trees are prefix vectors, so a subtree is the contiguous range [i, subtree_end(i)) and
// every edit is a splice.
#include "mutations.hpp"

#include <algorithm>
#include <cmath>

#include "evaluator.hpp"
#include "operators.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw::sr {
namespace {

// The project's portable generator (orbitlaw/common/random.hpp), so a seed gives the same search on every
// standard library (std's distributions are implementation-defined).
int uniform_int(Xoshiro256& rng, int lo, int hi) { return rng.uniform_int(lo, hi); }
double uniform01(Xoshiro256& rng) { return rng.uniform(); }

std::vector<Node> splice(const std::vector<Node>& nodes, int begin, int end,
                         const std::vector<Node>& insert) {
  std::vector<Node> out(nodes.begin(), nodes.begin() + begin);
  out.insert(out.end(), insert.begin(), insert.end());
  out.insert(out.end(), nodes.begin() + end, nodes.end());
  return out;
}

}  // namespace

OperatorSet make_operator_set(const std::vector<std::string>& names, int variables) {
  OperatorSet set;
  set.variables = variables;
  for (const auto& name : names) {
    auto op = op_from_name(name);
    if (!op) {
      std::string known;
      for (const auto& n : all_operator_names()) known.append(known.empty() ? "" : " ").append(n);
      throw Error("unknown operator '" + name + "' (known: " + known + ")");
    }
    auto& list = arity(*op) == 2 ? set.binary : set.unary;
    if (std::find(list.begin(), list.end(), *op) == list.end()) list.push_back(*op);
  }
  return set;
}

Expr fold_constants(const Expr& expr) {
  const auto& nodes = expr.nodes();
  std::vector<Node> out;
  out.reserve(nodes.size());
  Eigen::MatrixXd one_row(1, 0);
  int i = 0;
  while (i < static_cast<int>(nodes.size())) {
    int end = expr.subtree_end(i);
    bool has_variable = false;
    for (int k = i; k < end; ++k) has_variable = has_variable || nodes[k].op == Op::kVar;
    if (!has_variable && end - i > 1) {
      Expr sub(std::vector<Node>(nodes.begin() + i, nodes.begin() + end));
      Evaluator evaluator(one_row);
      double value = evaluator.values(sub)[0];
      out.push_back(Node{Op::kConst, 0, value});
      i = end;
    } else {
      out.push_back(nodes[i]);
      ++i;
    }
  }
  return Expr(std::move(out));
}

Node Mutator::random_leaf(Xoshiro256& rng) const {
  if (ops_.variables > 0 && uniform01(rng) < 0.7)
    return Node{Op::kVar, uniform_int(rng, 0, ops_.variables - 1), 0};
  double magnitude = std::exp(rng.normal());
  return Node{Op::kConst, 0, uniform01(rng) < 0.8 ? magnitude : -magnitude};
}

Expr Mutator::random_tree(int size, Xoshiro256& rng) const {
  // Grow top-down: a node of budget s is a leaf (s = 1), a unary operator (budget s-1 below) or a binary one
  // (budget split between its operands).
  std::vector<Node> out;
  std::vector<int> budgets{std::max(1, size)};
  while (!budgets.empty()) {
    int s = budgets.back();
    budgets.pop_back();
    bool can_unary = !ops_.unary.empty() && s >= 2;
    bool can_binary = !ops_.binary.empty() && s >= 3;
    if (!can_unary && !can_binary) {
      out.push_back(random_leaf(rng));
      continue;
    }
    bool binary = can_binary && (!can_unary || uniform01(rng) < 0.7);
    if (binary) {
      out.push_back(Node{ops_.binary[uniform_int(rng, 0, static_cast<int>(ops_.binary.size()) - 1)], 0, 0});
      int left = uniform_int(rng, 1, s - 2);
      budgets.push_back(s - 1 - left);  // right operand, built after the left
      budgets.push_back(left);
    } else {
      out.push_back(Node{ops_.unary[uniform_int(rng, 0, static_cast<int>(ops_.unary.size()) - 1)], 0, 0});
      budgets.push_back(s - 1);
    }
  }
  return Expr(std::move(out));
}

Expr Mutator::mutate(const Expr& parent, Xoshiro256& rng) const {
  for (int attempt = 0; attempt < 10; ++attempt) {
    Expr child = mutate_once(parent, rng);
    if (fits(child)) return child;
  }
  return parent;
}

Expr Mutator::mutate_once(const Expr& parent, Xoshiro256& rng) const {
  const auto& nodes = parent.nodes();
  const int n = static_cast<int>(nodes.size());
  // Weights loosely follow PySR's defaults: structure edits dominate, constants are fitted anyway.
  enum Kind { kConstant, kOperator, kInsert, kDelete, kReplace, kRandomize };
  const double weights[] = {0.10, 0.30, 0.30, 0.20, 0.08, 0.02};
  switch (rng.pick(weights)) {
    case kConstant: {
      std::vector<int> constants;
      for (int i = 0; i < n; ++i) {
        if (nodes[i].op == Op::kConst) constants.push_back(i);
      }
      if (constants.empty()) break;
      std::vector<Node> out = nodes;
      Node& c = out[constants[uniform_int(rng, 0, static_cast<int>(constants.size()) - 1)]];
      c.value *= std::exp(rng.normal(0.0, 0.5));
      if (uniform01(rng) < 0.05) c.value = -c.value;
      return Expr(std::move(out));
    }
    case kOperator: {
      std::vector<Node> out = nodes;
      Node& node = out[uniform_int(rng, 0, n - 1)];
      int a = arity(node.op);
      if (a == 0) {
        node = random_leaf(rng);
      } else {
        const auto& list = a == 1 ? ops_.unary : ops_.binary;
        node.op = list[uniform_int(rng, 0, static_cast<int>(list.size()) - 1)];
      }
      return Expr(std::move(out));
    }
    case kInsert: {
      // Wrap the subtree at i in a new operator whose other operand (if any) is a new leaf.
      int i = uniform_int(rng, 0, n - 1);
      int end = parent.subtree_end(i);
      std::vector<Node> sub(nodes.begin() + i, nodes.begin() + end);
      std::vector<Node> wrapped;
      bool unary = !ops_.unary.empty() && (ops_.binary.empty() || uniform01(rng) < 0.3);
      if (unary) {
        wrapped.push_back(
            Node{ops_.unary[uniform_int(rng, 0, static_cast<int>(ops_.unary.size()) - 1)], 0, 0});
        wrapped.insert(wrapped.end(), sub.begin(), sub.end());
      } else {
        wrapped.push_back(
            Node{ops_.binary[uniform_int(rng, 0, static_cast<int>(ops_.binary.size()) - 1)], 0, 0});
        Node leaf = random_leaf(rng);
        if (uniform01(rng) < 0.5) {
          wrapped.insert(wrapped.end(), sub.begin(), sub.end());
          wrapped.push_back(leaf);
        } else {
          wrapped.push_back(leaf);
          wrapped.insert(wrapped.end(), sub.begin(), sub.end());
        }
      }
      return Expr(splice(nodes, i, end, wrapped));
    }
    case kDelete: {
      // Replace an operator by one of its operands.
      std::vector<int> operators;
      for (int i = 0; i < n; ++i) {
        if (arity(nodes[i].op) > 0) operators.push_back(i);
      }
      if (operators.empty()) break;
      int i = operators[uniform_int(rng, 0, static_cast<int>(operators.size()) - 1)];
      int child = i + 1;
      if (arity(nodes[i].op) == 2 && uniform01(rng) < 0.5) child = parent.subtree_end(i + 1);
      std::vector<Node> sub(nodes.begin() + child, nodes.begin() + parent.subtree_end(child));
      return Expr(splice(nodes, i, parent.subtree_end(i), sub));
    }
    case kReplace: {
      int i = uniform_int(rng, 0, n - 1);
      Expr fresh = random_tree(uniform_int(rng, 1, 5), rng);
      return Expr(splice(nodes, i, parent.subtree_end(i), fresh.nodes()));
    }
    case kRandomize:
      return random_tree(uniform_int(rng, 1, max_size_), rng);
  }
  // The chosen edit did not apply (no constant, no operator): replace a leaf instead.
  std::vector<Node> out = nodes;
  int i = uniform_int(rng, 0, n - 1);
  if (arity(out[i].op) == 0) out[i] = random_leaf(rng);
  return Expr(std::move(out));
}

Expr Mutator::crossover(const Expr& a, const Expr& b, Xoshiro256& rng) const {
  for (int attempt = 0; attempt < 10; ++attempt) {
    int i = uniform_int(rng, 0, a.complexity() - 1);
    int j = uniform_int(rng, 0, b.complexity() - 1);
    std::vector<Node> donor(b.nodes().begin() + j, b.nodes().begin() + b.subtree_end(j));
    Expr child(splice(a.nodes(), i, a.subtree_end(i), donor));
    if (fits(child)) return child;
  }
  return a;
}

}  // namespace orbitlaw::sr
