// SRBench's equivalence rule: round the found expression's constants to 3 significant digits, simplify, and
// ask whether found/target or found-target is a constant; symbolically first, then numerically on points.
#include <algorithm>
#include <cmath>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

// The numeric tolerance (default 1e-8) sits far above evaluation rounding (~1e-15) and far below any term the
// rounding of constants kept (e.g. + 1e-6*r), which must still break the relation.

bool constant_of(const Expr& e, double& value) {
  if (e.complexity() != 1 || e.nodes()[0].op != Op::kConst) return false;
  value = e.nodes()[0].value;
  return std::isfinite(value);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

Expr zero_small_constants(Expr e, double zero_below) {
  for (Node& n : e.nodes()) {
    if (n.op == Op::kConst && std::abs(n.value) < zero_below) n.value = 0;
  }
  return e;
}

}  // namespace

Equivalence check_equivalence(const Expr& found, const Expr& target, const Eigen::MatrixXd& points,
                              const EquivalenceRule& rule) {
  const Expr f = simplify(
      round_constants(zero_small_constants(simplify(found), rule.zero_below), rule.significant_digits));
  const Expr t = simplify(target);
  double c;
  if (constant_of(simplify(Expr::binary(Op::kDiv, f, t)), c) && c != 0) return {true, "ratio", c, "symbolic"};
  if (constant_of(simplify(Expr::binary(Op::kSub, f, t)), c)) return {true, "difference", c, "symbolic"};

  if (points.rows() == 0) return {};
  const Eigen::ArrayXd fv = f.evaluate(points), tv = t.evaluate(points);
  std::vector<double> ratios, differences;
  double target_scale = 0;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    if (!std::isfinite(fv[i]) || !std::isfinite(tv[i])) continue;
    differences.push_back(fv[i] - tv[i]);
    target_scale = std::max(target_scale, std::abs(tv[i]));
    if (tv[i] != 0) ratios.push_back(fv[i] / tv[i]);
  }
  if (ratios.size() >= 2) {
    double m = median(ratios);
    double spread = 0;
    for (double q : ratios) spread = std::max(spread, std::abs(q - m));
    if (m != 0 && spread <= rule.tolerance * std::abs(m)) return {true, "ratio", m, "numeric"};
  }
  if (differences.size() >= 2) {
    double m = median(differences);
    double spread = 0;
    for (double d : differences) spread = std::max(spread, std::abs(d - m));
    if (spread <= rule.tolerance * std::max(target_scale, std::abs(m)))
      return {true, "difference", m, "numeric"};
  }
  return {};
}

Equivalence check_equivalence(const std::string& found, const std::string& target,
                              const std::vector<std::string>& names, const Eigen::MatrixXd& points,
                              const EquivalenceRule& rule) {
  return check_equivalence(parse(found, names), parse(target, names), points, rule);
}

}  // namespace orbitlaw::sr
