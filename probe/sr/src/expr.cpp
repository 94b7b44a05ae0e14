// Expression trees: structure queries, evaluation, and printing as text, LaTeX and JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string_view>

#include "evaluator.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

// Concatenation through append: GCC 12 reports a false -Wrestrict on `"(" + std::string` chains.
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto part : parts) out.append(part);
  return out;
}

std::string format_number(double value, int significant_digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant_digits, value);
  return buffer;
}

// Binding strength of a printed subexpression: sums 1, products 2, negation 3, powers 4, atoms 5.
struct Printed {
  std::string text;
  int precedence;
};

class TextPrinter {
 public:
  TextPrinter(const Expr& expr, const std::vector<std::string>& names, int digits)
      : nodes_(expr.nodes()), names_(names), digits_(digits) {}
  Printed print(int& i) const {
    const Node& node = nodes_[i++];
    switch (node.op) {
      case Op::kConst: {
        std::string s = format_number(node.value, digits_);
        return {s, node.value < 0 ? 3 : 5};
      }
      case Op::kVar:
        return {names_.at(node.var), 5};
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kPow: {
        Printed a = print(i);
        Printed b = print(i);
        return binary(node.op, a, b);
      }
      case Op::kNeg: {
        Printed a = print(i);
        return {join({"-", wrap(a, 4)}), 3};
      }
      case Op::kInv: {
        Printed a = print(i);
        return {join({"1/", wrap(a, 5)}), 2};
      }
      case Op::kSquare:
      case Op::kCube: {
        Printed a = print(i);
        return {join({wrap(a, 5), node.op == Op::kSquare ? "^2" : "^3"}), 4};
      }
      default: {
        Printed a = print(i);
        return {join({op_name(node.op), "(", a.text, ")"}), 5};
      }
    }
  }

 private:
  static std::string wrap(const Printed& p, int min_precedence) {
    return p.precedence >= min_precedence ? p.text : join({"(", p.text, ")"});
  }
  static Printed binary(Op op, const Printed& a, const Printed& b) {
    switch (op) {
      case Op::kAdd:
        return {join({a.text, " + ", wrap(b, b.precedence == 3 ? 4 : 1)}), 1};
      case Op::kSub:
        return {join({a.text, " - ", wrap(b, b.precedence == 3 ? 4 : 2)}), 1};
      case Op::kMul:
        return {join({wrap(a, 2), "*", wrap(b, b.precedence == 3 ? 4 : 2)}), 2};
      case Op::kDiv:
        return {join({wrap(a, 2), "/", wrap(b, 4)}), 2};
      default:
        return {join({wrap(a, 5), "^", wrap(b, 5)}), 4};
    }
  }
  const std::vector<Node>& nodes_;
  const std::vector<std::string>& names_;
  int digits_;
};

std::string latex_number(double value, int significant_digits) {
  std::string s = format_number(value, significant_digits);
  auto e = s.find('e');
  if (e == std::string::npos) return s;
  int exponent = std::stoi(s.substr(e + 1));
  return join({s.substr(0, e), " \\cdot 10^{", std::to_string(exponent), "}"});
}

std::string latex_name(const std::string& name) {
  // m1 -> m_{1}: trailing digits become a subscript.
  auto digits = name.find_last_not_of("0123456789");
  if (digits == std::string::npos || digits + 1 == name.size()) return name;
  return join({name.substr(0, digits + 1), "_{", name.substr(digits + 1), "}"});
}

class LatexPrinter {
 public:
  LatexPrinter(const Expr& expr, const std::vector<std::string>& names, int digits)
      : nodes_(expr.nodes()), names_(names), digits_(digits) {}
  Printed print(int& i) const {
    const Node& node = nodes_[i++];
    auto paren = [](const Printed& p, int min) {
      return p.precedence >= min ? p.text : join({"\\left(", p.text, "\\right)"});
    };
    switch (node.op) {
      case Op::kConst:
        return {latex_number(node.value, digits_), node.value < 0 ? 3 : 5};
      case Op::kVar:
        return {latex_name(names_.at(node.var)), 5};
      case Op::kAdd: {
        Printed a = print(i), b = print(i);
        return {join({a.text, " + ", paren(b, b.precedence == 3 ? 4 : 1)}), 1};
      }
      case Op::kSub: {
        Printed a = print(i), b = print(i);
        return {join({a.text, " - ", paren(b, b.precedence == 3 ? 4 : 2)}), 1};
      }
      case Op::kMul: {
        Printed a = print(i), b = print(i);
        return {join({paren(a, 2), " \\cdot ", paren(b, b.precedence == 3 ? 4 : 2)}), 2};
      }
      case Op::kDiv: {
        Printed a = print(i), b = print(i);
        return {join({"\\frac{", a.text, "}{", b.text, "}"}), 5};
      }
      case Op::kPow: {
        Printed a = print(i), b = print(i);
        return {join({paren(a, 5), "^{", b.text, "}"}), 4};
      }
      case Op::kNeg: {
        Printed a = print(i);
        return {join({"-", paren(a, 4)}), 3};
      }
      case Op::kInv: {
        Printed a = print(i);
        return {join({"\\frac{1}{", a.text, "}"}), 5};
      }
      case Op::kSquare: {
        Printed a = print(i);
        return {join({paren(a, 5), "^{2}"}), 4};
      }
      case Op::kCube: {
        Printed a = print(i);
        return {join({paren(a, 5), "^{3}"}), 4};
      }
      case Op::kSqrt: {
        Printed a = print(i);
        return {join({"\\sqrt{", a.text, "}"}), 5};
      }
      case Op::kAbs: {
        Printed a = print(i);
        return {join({"\\left|", a.text, "\\right|"}), 5};
      }
      default: {
        Printed a = print(i);
        return {join({"\\", op_name(node.op), "\\left(", a.text, "\\right)"}), 5};
      }
    }
  }

 private:
  const std::vector<Node>& nodes_;
  const std::vector<std::string>& names_;
  int digits_;
};

Json json_at(const std::vector<Node>& nodes, const std::vector<std::string>& names, int& i) {
  const Node& node = nodes[i++];
  if (node.op == Op::kConst) return Json{{"const", node.value}};
  if (node.op == Op::kVar) return Json{{"var", names.at(node.var)}};
  Json args = Json::array();
  for (int k = 0; k < arity(node.op); ++k) args.push_back(json_at(nodes, names, i));
  return Json{{"op", op_name(node.op)}, {"args", args}};
}

}  // namespace

Expr Expr::binary(Op op, const Expr& a, const Expr& b) {
  std::vector<Node> nodes{Node{op, 0, 0}};
  nodes.insert(nodes.end(), a.nodes_.begin(), a.nodes_.end());
  nodes.insert(nodes.end(), b.nodes_.begin(), b.nodes_.end());
  return Expr(std::move(nodes));
}

int Expr::subtree_end(int start) const {
  int need = 1;
  int i = start;
  while (need > 0 && i < static_cast<int>(nodes_.size())) {
    need += arity(nodes_[i].op) - 1;
    ++i;
  }
  return i;
}

int Expr::depth() const {
  // Walk the prefix order keeping, for each open operator, how many operands it still expects.
  int deepest = 0;
  std::vector<int> pending;
  for (const Node& node : nodes_) {
    int level = static_cast<int>(pending.size()) + 1;
    deepest = std::max(deepest, level);
    if (!pending.empty()) --pending.back();
    if (arity(node.op) > 0) {
      pending.push_back(arity(node.op));
    }
    while (!pending.empty() && pending.back() == 0) pending.pop_back();
  }
  return deepest;
}

int Expr::constant_count() const {
  return static_cast<int>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.op == Op::kConst; }));
}

Eigen::ArrayXd Expr::evaluate(const Eigen::MatrixXd& X) const {
  Evaluator evaluator(X);
  return evaluator.values(*this);
}

std::string Expr::text(const std::vector<std::string>& names, int significant_digits) const {
  if (nodes_.empty()) return "";
  int i = 0;
  return TextPrinter(*this, names, significant_digits).print(i).text;
}

std::string Expr::latex(const std::vector<std::string>& names, int significant_digits) const {
  if (nodes_.empty()) return "";
  int i = 0;
  return LatexPrinter(*this, names, significant_digits).print(i).text;
}

Json Expr::json(const std::vector<std::string>& names) const {
  if (nodes_.empty()) return Json();
  int i = 0;
  return json_at(nodes_, names, i);
}

}  // namespace orbitlaw::sr
