"""Evaluates the expression trees of `orbitlaw sr`'s front JSON on NumPy columns.

The tree (`{"op": ..., "args": [...]}`, `{"var": name}`, `{"const": value}`) carries the constants at full
precision, where the printed text rounds them to 6 digits, so predictions match the engine's own. No string is
ever parsed or eval'd. The arithmetic is the engine's (probe/sr/src/evaluator.cpp): unprotected, so sqrt and log
of a negative number and a division by zero give NaN or inf, as they do in the search.
"""
import numpy as np

UNARY = {
    "neg": np.negative,
    "inv": lambda a: 1.0 / a,
    "abs": np.abs,
    "square": np.square,
    "cube": lambda a: a * a * a,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
}
BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.divide,
    "pow": np.power,
}


def evaluate(tree, columns):
    """The tree's value on every row; columns maps each variable name to a 1-D float array."""
    rows = len(next(iter(columns.values()))) if columns else 1
    with np.errstate(all="ignore"):
        return np.broadcast_to(_node(tree, columns), (rows,)).astype(float)


def _node(tree, columns):
    if "const" in tree:
        return np.float64(tree["const"])
    if "var" in tree:
        if tree["var"] not in columns:
            raise ValueError(f"the expression uses '{tree['var']}', which is not one of the fitted features")
        return columns[tree["var"]]
    op, args = tree.get("op"), tree.get("args", [])
    if op in UNARY and len(args) == 1:
        return UNARY[op](_node(args[0], columns))
    if op in BINARY and len(args) == 2:
        return BINARY[op](_node(args[0], columns), _node(args[1], columns))
    raise ValueError(f"unknown operator '{op}' with {len(args)} arguments in orbitlaw's front JSON")
