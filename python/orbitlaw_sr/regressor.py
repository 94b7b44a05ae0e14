"""SymbolicRegressor: `orbitlaw sr` behind a fit(X, y) / predict(X) estimator, in the style of PySR and pyoperon.

fit() writes X and y as CSV to the binary's standard input (`--data -`), runs one search and reads the front it
writes (PREFIX.front.json). Every option is one of `orbitlaw sr`'s config keys (`orbitlaw config keys sr`): the
common ones are named arguments, any other goes through `settings` as `--set key=value`.
"""
import json
import os
import re
import subprocess
import tempfile

import numpy as np

from .expression import evaluate

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OrbitlawNotFoundError(FileNotFoundError):
    """The orbitlaw binary is not where ORBITLAW_BIN or the project's build folder says."""


def find_binary(binary=None):
    """The orbitlaw binary: `binary`, else $ORBITLAW_BIN, else $ORBITLAW_BUILD_DIR/app/orbitlaw, else the project's
    build/app/orbitlaw next to this package's folder (python/ in the repository)."""
    if binary is None:
        binary = os.environ.get("ORBITLAW_BIN")
    if not binary:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        build = os.environ.get("ORBITLAW_BUILD_DIR") or os.path.join(root, "build")
        binary = os.path.join(build, "app", "orbitlaw")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise OrbitlawNotFoundError(
            f"orbitlaw binary not found at {binary}: build it (cmake --build build --target orbitlaw) "
            "or set ORBITLAW_BIN to its path")
    return binary


def _finite_array(name, values, ndim):
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be numeric: {e}") from None
    if array.ndim != ndim:
        shape = "(rows, features)" if ndim == 2 else "(rows,)"
        raise ValueError(f"{name} must be {ndim}-D {shape}, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty, shape {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(f"{name} has {int(bad.sum())} NaN or infinite values (the first at index "
                         f"{tuple(int(i) for i in where)}); drop or impute those rows first")
    return array


class SymbolicRegressor:
    """Finds formulas y = f(X) with orbitlaw's engine.

    Arguments (each maps to an `orbitlaw sr` option; None keeps the engine's default):
      operators: list such as ["+", "-", "*", "/", "sqrt", "exp", "log", "sin", "cos"] (`operators`)
      time_limit: seconds per search (`time_limit_seconds`; 0 none)
      seed: random seed (`seed`); results depend on it only, also with threads > 1
      threads: worker threads (`threads`)
      max_size: most nodes in an expression (`max_size`)
      iterations: iterations (`iterations`)
      loss: auto, l2, l1, relative, log or thresholded_l1 (`loss`)
      settings: any other config key, {key: value}, e.g. {"restarts": 3, "holdout_fraction": 0}
      binary: path of the orbitlaw binary (default: find_binary())

    After fit(): front_ (a list of dicts: complexity, loss, holdout_loss, score, expression, latex), best_ (the
    selected expression as text, constants to 6 digits), best_index_ (its row in front_), result_ (the whole
    front JSON: loss used, stop reason, ...), feature_names_in_, n_features_in_.
    """

    def __init__(self, operators=None, time_limit=None, seed=0, threads=None, max_size=None, iterations=None,
                 loss=None, settings=None, binary=None):
        self.operators = operators
        self.time_limit = time_limit
        self.seed = seed
        self.threads = threads
        self.max_size = max_size
        self.iterations = iterations
        self.loss = loss
        self.settings = settings
        self.binary = binary

    def _command(self, binary, names, target, prefix):
        cmd = [binary, "sr", "--data", "-", "--x", ",".join(names), "--y", target, "--out", prefix]
        keys = {"operators": self.operators, "time_limit_seconds": self.time_limit, "seed": self.seed,
                "threads": self.threads, "max_size": self.max_size, "iterations": self.iterations,
                "loss": self.loss}
        keys.update(self.settings or {})
        for key, value in keys.items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            elif isinstance(value, bool):
                value = "true" if value else "false"
            cmd += ["--set", f"{key}={value}"]
        return cmd

    def fit(self, X, y, feature_names=None):
        X = _finite_array("X", X, 2)
        y = _finite_array("y", y, 1)
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        names = [f"x{i}" for i in range(X.shape[1])] if feature_names is None else [str(n) for n in feature_names]
        if len(names) != X.shape[1]:
            raise ValueError(f"{len(names)} feature names for {X.shape[1]} columns of X")
        for n in names:
            if not _IDENTIFIER.fullmatch(n) or n == "pi":
                raise ValueError(f"feature name '{n}' is not usable in a formula: letters, digits and _ only, "
                                 "not starting with a digit, and not pi")
        if len(set(names)) != len(names):
            raise ValueError(f"feature names repeat: {names}")
        target = next(t for t in ("y", "target", "y_") if t not in names)
        binary = find_binary(self.binary)
        # %.17g round-trips every double, so the engine sees exactly these numbers.
        rows = np.column_stack([X, y])
        text = ",".join(names + [target]) + "\n" + "\n".join(",".join("%.17g" % v for v in row) for row in rows) + "\n"
        with tempfile.TemporaryDirectory(prefix="orbitlaw_sr_") as tmp:
            prefix = os.path.join(tmp, "fit")
            cmd = self._command(binary, names, target, prefix)
            # CI=1: no progress line (it is drawn on stderr, which is read here only for errors).
            run = subprocess.run(cmd, input=text, capture_output=True, text=True, env=dict(os.environ, CI="1"))
            if run.returncode != 0:
                lines = [l for l in run.stderr.strip().splitlines() if l.strip()]
                raise RuntimeError(f"orbitlaw sr failed (exit {run.returncode}): "
                                   f"{lines[-1] if lines else 'no message'}")
            with open(prefix + ".front.json") as f:
                self.result_ = json.load(f)
        self.feature_names_in_ = names
        self.n_features_in_ = len(names)
        self.front_ = [{"complexity": e["complexity"], "loss": e["loss"], "holdout_loss": e.get("holdout_loss"),
                        "score": e.get("score"), "expression": e["text"], "latex": e.get("latex")}
                       for e in self.result_["front"]]
        self.best_index_ = self.result_["best"]
        self.best_ = self.front_[self.best_index_]["expression"]
        return self

    def predict(self, X, index=None):
        """The selected expression (or front_[index]) on every row of X, with the constants at full precision."""
        if not hasattr(self, "result_"):
            raise RuntimeError("this SymbolicRegressor is not fitted yet: call fit(X, y) first")
        X = _finite_array("X", X, 2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}")
        entry = self.result_["front"][self.best_index_ if index is None else index]
        return evaluate(entry["expression"], {n: X[:, i] for i, n in enumerate(self.feature_names_in_)})
