// Canonical simplification through a normal form: a sum of terms, each a coefficient times a product of atoms
// raised to real exponents. Atoms are variables, function applications of canonical arguments (sin, cos, exp,
// log, abs, non-constant powers), and sums that could not be expanded (e.g. denominators). Like terms merge,
// so x - x = 0, (2*x)/(4*x) = 0.5 and m1*m2/r^2 written in any order gives one tree.
//
// Assumption (documented in sr.hpp's users): exponents of a product distribute, (a*b)^p = a^p * b^p, and
// (a^p)^q = a^(p*q), which holds for positive variables such as masses and distances, as SRBench's Feynman
// variables are. Numbers print back in full precision; round_constants() is separate.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

constexpr std::size_t kMaxTerms = 32;  // expansion beyond this keeps a product of sums as atoms

std::string number_key(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// A key that identifies a canonical tree independently of variable names.
std::string structural_key(const Expr& e) {
  std::string key;
  for (const Node& n : e.nodes()) {
    if (n.op == Op::kConst) {
      key.append("c").append(number_key(n.value)).append(" ");
    } else if (n.op == Op::kVar) {
      key.append("v").append(std::to_string(n.var)).append(" ");
    } else {
      key.append(op_name(n.op)).append(" ");
    }
  }
  return key;
}

struct Factor {
  std::string key;
  Expr atom;
  double exponent;
};

struct Term {
  double coef = 1;
  std::vector<Factor> factors;  // sorted by key, exponents non-zero
  std::string key() const {
    std::string k;
    for (const auto& f : factors) k.append(f.key).append("^").append(number_key(f.exponent)).append(";");
    return k;
  }
};

using Poly = std::vector<Term>;  // normalised: sorted by term key, like terms merged, no zero coefficients

Poly normalise(Poly p) {
  std::map<std::string, Term> merged;
  for (auto& t : p) {
    auto key = t.key();
    auto it = merged.find(key);
    if (it == merged.end()) {
      merged.emplace(key, std::move(t));
    } else {
      it->second.coef += t.coef;
    }
  }
  Poly out;
  for (auto& [key, t] : merged) {
    if (t.coef != 0) out.push_back(std::move(t));
  }
  // Constant term last: "x + 1" reads better than "1 + x".
  std::stable_partition(out.begin(), out.end(), [](const Term& t) { return !t.factors.empty(); });
  return out;
}

Poly constant(double v) { return v == 0 ? Poly{} : Poly{Term{v, {}}}; }

bool is_constant(const Poly& p) { return p.empty() || (p.size() == 1 && p[0].factors.empty()); }
double constant_value(const Poly& p) { return p.empty() ? 0.0 : p[0].coef; }

Term multiply_terms(const Term& a, const Term& b) {
  Term out;
  out.coef = a.coef * b.coef;
  std::size_t i = 0, j = 0;
  while (i < a.factors.size() || j < b.factors.size()) {
    if (j == b.factors.size() || (i < a.factors.size() && a.factors[i].key < b.factors[j].key)) {
      out.factors.push_back(a.factors[i++]);
    } else if (i == a.factors.size() || b.factors[j].key < a.factors[i].key) {
      out.factors.push_back(b.factors[j++]);
    } else {
      Factor f = a.factors[i++];
      f.exponent += b.factors[j++].exponent;
      if (f.exponent != 0) out.factors.push_back(std::move(f));
    }
  }
  return out;
}

Expr to_expr(const Poly& p);
Poly power(const Poly& a, double e);

// A sum kept whole as an atom raised to `exponent`; its leading coefficient moves out so that 2x+2y and x+y
// share an atom.
Poly sum_atom(const Poly& sum, double exponent) {
  double lead = sum[0].coef;
  bool can_factor = lead > 0 || std::floor(exponent) == exponent;
  Poly inner = sum;
  double coef = 1;
  if (can_factor) {
    for (auto& t : inner) t.coef /= lead;
    coef = std::pow(lead, exponent);
  }
  Expr atom = to_expr(inner);
  return {Term{coef, {Factor{std::string("(").append(structural_key(atom)).append(")"), atom, exponent}}}};
}

Poly multiply(const Poly& a, const Poly& b) {
  if (a.size() * b.size() > kMaxTerms) return multiply(sum_atom(a, 1), sum_atom(b, 1));
  Poly out;
  for (const auto& x : a) {
    for (const auto& y : b) out.push_back(multiply_terms(x, y));
  }
  return normalise(std::move(out));
}

Poly scale(Poly p, double k) {
  if (k == 0) return {};
  for (auto& t : p) t.coef *= k;
  return p;
}

Poly add(Poly a, const Poly& b) {
  a.insert(a.end(), b.begin(), b.end());
  return normalise(std::move(a));
}

// If a == k * b term by term, returns k.
bool scalar_multiple(const Poly& a, const Poly& b, double& k) {
  if (a.size() != b.size() || a.empty()) return false;
  k = a[0].coef / b[0].coef;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].key() != b[i].key()) return false;
    if (std::abs(a[i].coef - k * b[i].coef) > 1e-14 * std::abs(a[i].coef)) return false;
  }
  return true;
}

Poly divide(const Poly& a, const Poly& b) {
  double k;
  if (b.size() > 1 && scalar_multiple(a, b, k)) return constant(k);
  return multiply(a, power(b, -1));
}

Poly power(const Poly& a, double e) {
  if (e == 1) return a;
  if (e == 0) return constant(1);
  if (a.empty()) return constant(std::pow(0.0, e));
  bool integer = std::floor(e) == e;
  if (a.size() == 1) {
    const Term& t = a[0];
    if (t.coef < 0 && !integer) return sum_atom(a, e);
    Term out{std::pow(t.coef, e), {}};
    for (auto f : t.factors) {
      f.exponent *= e;
      out.factors.push_back(std::move(f));
    }
    return {out};
  }
  if (integer && e > 0 && e <= 4 && std::pow(static_cast<double>(a.size()), e) <= kMaxTerms) {
    Poly out = a;
    for (int k = 1; k < static_cast<int>(e); ++k) out = multiply(out, a);
    return out;
  }
  return sum_atom(a, e);
}

double apply_function(Op op, double v) {
  switch (op) {
    case Op::kAbs:
      return std::abs(v);
    case Op::kExp:
      return std::exp(v);
    case Op::kLog:
      return std::log(v);
    case Op::kSin:
      return std::sin(v);
    case Op::kCos:
      return std::cos(v);
    default:
      return std::nan("");
  }
}

Poly function_atom(Op op, const Poly& argument) {
  if (is_constant(argument)) return constant(apply_function(op, constant_value(argument)));
  Expr inner = to_expr(argument);
  std::vector<Node> nodes{Node{op, 0, 0}};
  nodes.insert(nodes.end(), inner.nodes().begin(), inner.nodes().end());
  Expr atom(std::move(nodes));
  return {Term{1, {Factor{structural_key(atom), atom, 1}}}};
}

Poly to_poly(const Expr& e, int& i) {
  const Node& n = e.nodes()[i++];
  switch (n.op) {
    case Op::kConst:
      return constant(n.value);
    case Op::kVar: {
      Expr atom = Expr::variable(n.var);
      return {Term{1, {Factor{structural_key(atom), atom, 1}}}};
    }
    case Op::kAdd: {
      Poly a = to_poly(e, i);
      return add(std::move(a), to_poly(e, i));
    }
    case Op::kSub: {
      Poly a = to_poly(e, i);
      return add(std::move(a), scale(to_poly(e, i), -1));
    }
    case Op::kMul: {
      Poly a = to_poly(e, i);
      return multiply(a, to_poly(e, i));
    }
    case Op::kDiv: {
      Poly a = to_poly(e, i);
      return divide(a, to_poly(e, i));
    }
    case Op::kPow: {
      Poly a = to_poly(e, i);
      Poly b = to_poly(e, i);
      if (is_constant(b)) return power(a, constant_value(b));
      Expr base = to_expr(a), exponent = to_expr(b);
      std::vector<Node> nodes{Node{Op::kPow, 0, 0}};
      nodes.insert(nodes.end(), base.nodes().begin(), base.nodes().end());
      nodes.insert(nodes.end(), exponent.nodes().begin(), exponent.nodes().end());
      Expr atom(std::move(nodes));
      return {Term{1, {Factor{structural_key(atom), atom, 1}}}};
    }
    case Op::kNeg:
      return scale(to_poly(e, i), -1);
    case Op::kInv:
      return power(to_poly(e, i), -1);
    case Op::kSquare:
      return power(to_poly(e, i), 2);
    case Op::kCube:
      return power(to_poly(e, i), 3);
    case Op::kSqrt:
      return power(to_poly(e, i), 0.5);
    default:
      return function_atom(n.op, to_poly(e, i));
  }
}

void append(std::vector<Node>& out, const Expr& e) {
  out.insert(out.end(), e.nodes().begin(), e.nodes().end());
}

Expr factor_expr(const Factor& f, double exponent) {
  if (exponent == 1) return f.atom;
  return Expr::binary(Op::kPow, f.atom, Expr::constant(exponent));
}

Expr product(const std::vector<Expr>& parts) {
  Expr out = parts.front();
  for (std::size_t k = 1; k < parts.size(); ++k) out = Expr::binary(Op::kMul, out, parts[k]);
  return out;
}

// coef * numerator / denominator, with |coef| printed only when it is not 1.
Expr term_expr(const Term& t, bool absolute) {
  double coef = absolute ? std::abs(t.coef) : t.coef;
  // A coefficient one rounding step away from +-1 (e.g. from (2x + 2y)/2) prints as +-1, not as "1*x".
  if (std::abs(std::abs(coef) - 1) <= 1e-12) coef = coef > 0 ? 1 : -1;
  std::vector<Expr> numerator, denominator;
  for (const auto& f : t.factors) {
    if (f.exponent > 0) {
      numerator.push_back(factor_expr(f, f.exponent));
    } else {
      denominator.push_back(factor_expr(f, -f.exponent));
    }
  }
  bool negate = false;
  if (coef == -1 && !numerator.empty()) {
    negate = true;
  } else if (coef != 1 || numerator.empty()) {
    numerator.insert(numerator.begin(), Expr::constant(coef));
  }
  Expr out = product(numerator);
  if (!denominator.empty()) out = Expr::binary(Op::kDiv, out, product(denominator));
  if (negate) {
    std::vector<Node> nodes{Node{Op::kNeg, 0, 0}};
    append(nodes, out);
    out = Expr(std::move(nodes));
  }
  return out;
}

Expr to_expr(const Poly& p) {
  if (p.empty()) return Expr::constant(0);
  Expr out = term_expr(p[0], false);
  for (std::size_t k = 1; k < p.size(); ++k) {
    bool negative = p[k].coef < 0;
    out = Expr::binary(negative ? Op::kSub : Op::kAdd, out, term_expr(p[k], negative));
  }
  return out;
}

}  // namespace

Expr simplify(const Expr& expr) {
  if (expr.empty()) return expr;
  int i = 0;
  return to_expr(to_poly(expr, i));
}

Expr round_constants(const Expr& expr, int significant_digits) {
  Expr out = expr;
  for (Node& n : out.nodes()) {
    if (n.op != Op::kConst || n.value == 0 || !std::isfinite(n.value)) continue;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*e", significant_digits - 1, n.value);
    n.value = std::strtod(buffer, nullptr);
  }
  return out;
}

}  // namespace orbitlaw::sr
