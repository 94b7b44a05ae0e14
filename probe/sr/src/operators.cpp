// Operator and loss names: the vocabulary shared by options, text output and the parser.
#include <array>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {

int arity(Op op) {
  switch (op) {
    case Op::kConst:
    case Op::kVar:
      return 0;
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kPow:
      return 2;
    default:
      return 1;
  }
}

std::string op_name(Op op) {
  switch (op) {
    case Op::kConst:
      return "const";
    case Op::kVar:
      return "var";
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kPow:
      return "pow";
    case Op::kNeg:
      return "neg";
    case Op::kInv:
      return "inv";
    case Op::kAbs:
      return "abs";
    case Op::kSquare:
      return "square";
    case Op::kCube:
      return "cube";
    case Op::kSqrt:
      return "sqrt";
    case Op::kExp:
      return "exp";
    case Op::kLog:
      return "log";
    case Op::kSin:
      return "sin";
    case Op::kCos:
      return "cos";
  }
  return "?";
}

std::vector<std::string> all_operator_names() {
  return {"+",      "-",    "*",    "/",   "pow", "neg", "inv", "abs",
          "square", "cube", "sqrt", "exp", "log", "sin", "cos"};
}

LossKind parse_loss_kind(const std::string& name) {
  if (name == "l2") return LossKind::kL2;
  if (name == "l1") return LossKind::kL1;
  if (name == "relative") return LossKind::kRelative;
  if (name == "log") return LossKind::kLog;
  if (name == "thresholded_l1") return LossKind::kThresholdedL1;
  if (name == "auto") return LossKind::kAuto;
  throw Error("unknown loss '" + name + "' (expected auto, l2, l1, relative, log or thresholded_l1)");
}

std::string to_string(LossKind kind) {
  switch (kind) {
    case LossKind::kL2:
      return "l2";
    case LossKind::kL1:
      return "l1";
    case LossKind::kRelative:
      return "relative";
    case LossKind::kLog:
      return "log";
    case LossKind::kThresholdedL1:
      return "thresholded_l1";
    case LossKind::kAuto:
      return "auto";
  }
  return "?";
}

}  // namespace orbitlaw::sr

#include "operators.hpp"

namespace orbitlaw::sr {

std::optional<Op> op_from_name(const std::string& name) {
  if (name == "^") return Op::kPow;
  for (int i = static_cast<int>(Op::kAdd); i <= static_cast<int>(Op::kCos); ++i) {
    auto op = static_cast<Op>(i);
    if (op_name(op) == name) return op;
  }
  return std::nullopt;
}

}  // namespace orbitlaw::sr
