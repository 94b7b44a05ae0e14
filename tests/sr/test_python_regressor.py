#!/usr/bin/env python3
"""Tests of the Python entry point (python/orbitlaw_sr): fit on NumPy arrays runs the real `orbitlaw sr`; the law it
returns is judged by the binary's own equivalence check (not by string equality), its predictions against the
law computed here; bad input and a missing binary give one clear error.

usage: test_python_regressor.py ORBITLAW   (exit 0 when every test passes; ORBITLAW defaults to $ORBITLAW_BIN)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import orbitlaw_sr  # noqa: E402

ORBITLAW = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("ORBITLAW_BIN", "")


def law(X):
    return 3.7 * X[:, 0] * X[:, 1] / X[:, 2] ** 2


def equivalence(found, target, names, X):
    """`orbitlaw sr --check`: is `found` the target up to a constant factor or offset, and which constant."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(",".join(names) + ",out\n")
        for row in X:
            f.write(",".join(repr(float(v)) for v in row) + ",1\n")
    try:
        r = subprocess.run([ORBITLAW, "sr", "--data", f.name, "--x", ",".join(names), "--y", "out", "--check", found,
                            "--target", target, "--significant-digits", "17"], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    m = re.search(r"equivalence: (\{.*\})", r.stdout)
    if not m:
        raise AssertionError(f"no equivalence from orbitlaw: {r.stdout} {r.stderr}")
    return json.loads(m.group(1))


class Fit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(3)
        cls.X = rng.uniform(1, 5, (300, 3))
        cls.y = law(cls.X)
        cls.model = orbitlaw_sr.SymbolicRegressor(binary=ORBITLAW, seed=1, time_limit=30, threads=1).fit(cls.X, cls.y)

    def test_recovers_the_law_exactly(self):
        # Same law up to a factor (SRBench's rule), and the factor is 1 at full precision: the law itself.
        eq = equivalence(self.model.best_, "3.7*x0*x1/x2^2", ["x0", "x1", "x2"], self.X[:50])
        self.assertTrue(eq["equivalent"], (self.model.best_, eq))
        self.assertEqual(eq["relation"], "ratio", eq)
        self.assertAlmostEqual(eq["constant"], 1.0, places=9)

    def test_predictions_match_the_law_on_new_rows(self):
        np.testing.assert_allclose(self.model.predict(self.X), self.y, rtol=1e-12)
        fresh = np.random.default_rng(4).uniform(1, 5, (100, 3))
        np.testing.assert_allclose(self.model.predict(fresh), law(fresh), rtol=1e-12)

    def test_front_is_a_table_from_simple_to_accurate_with_the_best_in_it(self):
        front = self.model.front_
        self.assertGreaterEqual(len(front), 2)
        for row in front:
            self.assertEqual(set(row), {"complexity", "loss", "holdout_loss", "score", "expression", "latex"})
        complexities = [r["complexity"] for r in front]
        losses = [r["loss"] for r in front]
        self.assertEqual(complexities, sorted(set(complexities)))
        self.assertTrue(all(a > b for a, b in zip(losses, losses[1:])), losses)
        self.assertEqual(front[self.model.best_index_]["expression"], self.model.best_)
        self.assertEqual(self.model.result_["stop_reason"], "exact fit")


class Options(unittest.TestCase):
    def test_feature_names_reach_the_law_and_a_taken_y_is_not_the_target(self):
        rng = np.random.default_rng(5)
        X = rng.uniform(1, 5, (200, 2))
        model = orbitlaw_sr.SymbolicRegressor(binary=ORBITLAW, seed=2, time_limit=20).fit(
            X, X[:, 0] / X[:, 1], feature_names=["y", "r"])
        self.assertTrue(equivalence(model.best_, "y/r", ["y", "r"], X[:20])["equivalent"], model.best_)

    def test_options_map_to_the_engine_keys(self):
        rng = np.random.default_rng(6)
        X = rng.uniform(1, 5, (200, 3))
        args = dict(binary=ORBITLAW, seed=7, max_size=5, iterations=5, operators=["+", "*"],
                    settings={"holdout_fraction": 0})
        a = orbitlaw_sr.SymbolicRegressor(**args).fit(X, law(X))
        self.assertTrue(all(r["complexity"] <= 5 for r in a.front_), a.front_)
        self.assertTrue(all(not re.search(r"[/^]|sqrt", r["expression"]) for r in a.front_), a.front_)
        self.assertTrue(all(r["holdout_loss"] is None for r in a.front_), a.front_)
        b = orbitlaw_sr.SymbolicRegressor(**args).fit(X, law(X))
        self.assertEqual(a.front_, b.front_)  # the seed decides the search

    def test_an_unknown_setting_is_the_engines_one_line_error(self):
        X = np.ones((10, 1)) + np.arange(10)[:, None]
        with self.assertRaisesRegex(RuntimeError, r"orbitlaw sr failed .*no_such_key"):
            orbitlaw_sr.SymbolicRegressor(binary=ORBITLAW, settings={"no_such_key": 1}).fit(X, X[:, 0])


class BadInput(unittest.TestCase):
    def setUp(self):
        self.model = orbitlaw_sr.SymbolicRegressor(binary=ORBITLAW, iterations=1)
        self.X = np.arange(30.0).reshape(10, 3) + 1
        self.y = self.X.sum(axis=1)

    def test_nan_or_inf_is_refused_with_where_it_is(self):
        X = self.X.copy()
        X[4, 2] = np.nan
        with self.assertRaisesRegex(ValueError, r"X has 1 NaN or infinite values \(the first at index \(4, 2\)\)"):
            self.model.fit(X, self.y)
        y = self.y.copy()
        y[0] = np.inf
        with self.assertRaisesRegex(ValueError, r"^y has 1 NaN"):
            self.model.fit(self.X, y)

    def test_lengths_and_dimensions(self):
        with self.assertRaisesRegex(ValueError, "X has 10 rows but y has 9"):
            self.model.fit(self.X, self.y[:9])
        with self.assertRaisesRegex(ValueError, r"X must be 2-D \(rows, features\), got shape \(10,\)"):
            self.model.fit(self.y, self.y)
        with self.assertRaisesRegex(ValueError, r"y must be 1-D \(rows,\), got shape \(10, 1\)"):
            self.model.fit(self.X, self.y[:, None])
        with self.assertRaisesRegex(ValueError, "X is empty"):
            self.model.fit(np.empty((0, 3)), np.empty(0))
        with self.assertRaisesRegex(ValueError, "X must be numeric"):
            self.model.fit([["a", "b"]], [1.0])
        with self.assertRaisesRegex(ValueError, "2 feature names for 3 columns"):
            self.model.fit(self.X, self.y, feature_names=["a", "b"])
        with self.assertRaisesRegex(ValueError, "feature name '2x' is not usable"):
            self.model.fit(self.X, self.y, feature_names=["a", "b", "2x"])

    def test_predict_before_fit_and_on_other_columns(self):
        with self.assertRaisesRegex(RuntimeError, "not fitted yet"):
            self.model.predict(self.X)
        self.model.fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "X has 2 columns but the model was fitted on 3"):
            self.model.predict(self.X[:, :2])

    def test_a_missing_binary_says_where_it_looked_and_how_to_fix_it(self):
        missing = os.path.join(tempfile.gettempdir(), "no_such_dir", "orbitlaw")
        old = os.environ.get("ORBITLAW_BIN")
        os.environ["ORBITLAW_BIN"] = missing
        try:
            with self.assertRaises(FileNotFoundError) as e:
                orbitlaw_sr.SymbolicRegressor().fit(self.X, self.y)
        finally:
            if old is None:
                del os.environ["ORBITLAW_BIN"]
            else:
                os.environ["ORBITLAW_BIN"] = old
        self.assertIsInstance(e.exception, orbitlaw_sr.OrbitlawNotFoundError)
        self.assertIn(missing, str(e.exception))
        self.assertIn("ORBITLAW_BIN", str(e.exception))


class Evaluator(unittest.TestCase):
    def test_every_operator_against_numpy_by_hand(self):
        a = np.array([0.5, 2.0, 3.0])
        b = np.array([1.5, 0.25, 2.0])
        cols = {"a": a, "b": b}
        var = {"var": "a"}
        cases = {"neg": -a, "inv": 1 / a, "abs": a, "square": a * a, "cube": a ** 3, "sqrt": a ** 0.5,
                 "exp": np.exp(a), "log": np.log(a), "sin": np.sin(a), "cos": np.cos(a)}
        for op, expected in cases.items():
            np.testing.assert_allclose(orbitlaw_sr.evaluate({"op": op, "args": [var]}, cols), expected, err_msg=op)
        for op, expected in {"+": a + b, "-": a - b, "*": a * b, "/": a / b, "pow": a ** b}.items():
            tree = {"op": op, "args": [var, {"var": "b"}]}
            np.testing.assert_allclose(orbitlaw_sr.evaluate(tree, cols), expected, err_msg=op)
        np.testing.assert_array_equal(orbitlaw_sr.evaluate({"const": 2.5}, cols), [2.5] * 3)

    def test_an_unknown_node_is_refused_not_guessed(self):
        with self.assertRaisesRegex(ValueError, "unknown operator 'tanh'"):
            orbitlaw_sr.evaluate({"op": "tanh", "args": [{"var": "a"}]}, {"a": np.ones(2)})
        with self.assertRaisesRegex(ValueError, "uses 'z'"):
            orbitlaw_sr.evaluate({"var": "z"}, {"a": np.ones(2)})


class Documentation(unittest.TestCase):
    def test_the_readme_example_runs(self):
        # The ```python block of probe/README.md's section on the Python entry point, run as written.
        text = open(os.path.join(ROOT, "probe", "README.md")).read()
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertEqual(len(blocks), 1)
        r = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, ORBITLAW_BIN=ORBITLAW,
                                    PYTHONPATH=os.path.join(ROOT, "python")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("m1*m2/r^2", r.stdout)
        # Its last line: the largest relative error of predict() on G m1 m2 / r^2, whose G = 39.4784176... the
        # printed law rounds to 6 digits; predict() must use the constant at full precision.
        self.assertLess(float(r.stdout.strip().splitlines()[-1]), 1e-12, r.stdout)


if __name__ == "__main__":
    unittest.main()
