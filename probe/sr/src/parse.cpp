// Recursive-descent parser for formulas written like Expr::text():
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | power
//   power   := primary ('^' unary)?          (right-associative: a^b^c = a^(b^c))
//   primary := number | name | name '(' sum (',' sum)? ')' | '(' sum ')'
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "operators.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::vector<std::string>& names) : text_(text), names_(names) {}

  Expr parse() {
    skip_space();
    if (pos_ >= text_.size()) fail("empty expression");
    std::vector<Node> out = sum();
    skip_space();
    if (pos_ < text_.size()) fail(std::string("unexpected '") + text_[pos_] + "'");
    return Expr(std::move(out));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("cannot parse expression '" + text_ + "' at position " + std::to_string(pos_ + 1) + ": " +
                what);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static std::vector<Node> combine(Op op, std::vector<Node> a, const std::vector<Node>& b) {
    std::vector<Node> out;
    out.reserve(a.size() + b.size() + 1);
    out.push_back(Node{op, 0, 0});
    out.insert(out.end(), a.begin(), a.end());
    out.insert(out.end(), b.begin(), b.end());
    return out;
  }
  static std::vector<Node> wrap(Op op, const std::vector<Node>& a) {
    std::vector<Node> out{Node{op, 0, 0}};
    out.insert(out.end(), a.begin(), a.end());
    return out;
  }

  std::vector<Node> sum() {
    std::vector<Node> left = product();
    while (true) {
      if (accept('+')) {
        left = combine(Op::kAdd, std::move(left), product());
      } else if (accept('-')) {
        left = combine(Op::kSub, std::move(left), product());
      } else {
        return left;
      }
    }
  }
  std::vector<Node> product() {
    std::vector<Node> left = unary();
    while (true) {
      if (accept('*')) {
        left = combine(Op::kMul, std::move(left), unary());
      } else if (accept('/')) {
        left = combine(Op::kDiv, std::move(left), unary());
      } else {
        return left;
      }
    }
  }
  std::vector<Node> unary() {
    if (accept('-')) {
      std::vector<Node> operand = unary();
      if (operand.size() == 1 && operand[0].op == Op::kConst) {
        operand[0].value = -operand[0].value;  // "-2.5" is a constant, not neg(2.5)
        return operand;
      }
      return wrap(Op::kNeg, operand);
    }
    if (accept('+')) return unary();
    return power();
  }
  std::vector<Node> power() {
    std::vector<Node> base = primary();
    if (accept('^')) return combine(Op::kPow, std::move(base), unary());
    return base;
  }
  std::vector<Node> primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end of expression");
    char c = text_[pos_];
    if (accept('(')) {
      std::vector<Node> inner = sum();
      if (!accept(')')) fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* start = text_.c_str() + pos_;
      char* end = nullptr;
      double value = std::strtod(start, &end);
      if (end == start) fail("bad number");
      pos_ += static_cast<std::size_t>(end - start);
      return {Node{Op::kConst, 0, value}};
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name = text_.substr(start, pos_ - start);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == '(') {
        auto op = op_from_name(name);
        if (!op || arity(*op) == 0 || name == "+") fail("unknown function '" + name + "'");
        ++pos_;
        std::vector<Node> first = sum();
        if (arity(*op) == 2) {
          if (!accept(',')) fail("expected ',' in " + name + "(a, b)");
          std::vector<Node> second = sum();
          if (!accept(')')) fail("expected ')'");
          return combine(*op, std::move(first), second);
        }
        if (!accept(')')) fail("expected ')'");
        return wrap(*op, first);
      }
      for (std::size_t k = 0; k < names_.size(); ++k) {
        if (names_[k] == name) return {Node{Op::kVar, static_cast<int>(k), 0}};
      }
      if (name == "pi") return {Node{Op::kConst, 0, std::numbers::pi}};
      pos_ = start;
      fail("unknown variable '" + name + "'");
    }
    fail(std::string("unexpected '") + c + "'");
  }

  const std::string& text_;
  const std::vector<std::string>& names_;
  std::size_t pos_ = 0;
};

}  // namespace

Expr parse(const std::string& text, const std::vector<std::string>& names) {
  return Parser(text, names).parse();
}

void check_variable_names(const std::vector<std::string>& names) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  for (const auto& name : names) {
    bool ok = !name.empty() && letter(name[0]);
    for (char c : name) ok = ok && (letter(c) || (c >= '0' && c <= '9'));
    if (!ok) {
      throw Error("the column name '" + name +
                  "' cannot be written in a law; rename it to letters, digits and _ (starting with a letter "
                  "or _)");
    }
  }
}

}  // namespace orbitlaw::sr
