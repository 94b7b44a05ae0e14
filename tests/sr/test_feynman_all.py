#!/usr/bin/env python3
"""Tests of the whole-database Feynman bench (bench/sr/feynman_all.py and bench/sr/feynman_equations.tsv): the
table's formulas equal the published ones, the summary's arithmetic on a hand-made JSONL, and a real run of two
equations that is killed and resumed without redoing or losing a fit.

usage: test_feynman_all.py ORBITLAW   (exit 0 when every test passes; ORBITLAW defaults to $ORBITLAW_BIN)
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BENCH = os.path.join(ROOT, "bench", "sr", "feynman_all.py")
sys.path.insert(0, os.path.join(ROOT, "bench", "sr"))
import feynman_all  # noqa: E402

ORBITLAW = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("ORBITLAW_BIN", "")


def run_bench(*args, **kw):
    return subprocess.run([sys.executable, BENCH, "--orbitlaw", ORBITLAW, *args], capture_output=True, text=True,
                          **kw)


class Table(unittest.TestCase):
    def test_the_database_as_srbench_counts_it(self):
        everything = feynman_all.load_table(include_unexpressible=True)
        srbench = feynman_all.load_table()
        self.assertEqual(len(everything), 119)  # 99 of the 100 equations (as PMLB has them) + 20 bonus
        self.assertEqual(len(srbench), 116)
        self.assertEqual({e[0] for e in everything} - {e[0] for e in srbench}, {"I.26.2", "I.30.5", "bonus.10"})
        self.assertEqual(len({e[0] for e in everything}), 119)

    def test_every_formula_equals_the_published_one_on_points_in_its_ranges(self):
        # The published column (Python syntax) evaluated with NumPy here, the translated one by the bench's
        # evaluator: two renderings of the same law.
        scope = {"sqrt": np.sqrt, "exp": np.exp, "ln": np.log, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
                 "pi": math.pi}
        rng = np.random.default_rng(0)
        rows = 0
        with open(feynman_all.TABLE) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                eq_id, _, srbench, formula, variables, published = line.rstrip("\n").split("\t")
                if srbench != "1":
                    continue
                cols = {}
                for item in variables.split():
                    name, bounds = item.split("=")
                    lo, hi = map(float, bounds.split(":"))
                    cols[name] = rng.uniform(lo, hi, 20)
                expected = eval(published, {"__builtins__": {}}, dict(scope, **cols))
                got = feynman_all.fb.evaluate(formula, cols)
                np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=eq_id)
                rows += 1
        self.assertEqual(rows, 116)


def lines(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return f.read().count("\n")


def record(eq, noise, seed, tool, solved, seconds):
    return {"equation": eq, "noise": noise, "seed": seed, "tool": tool, "time_limit": 10.0, "rows": 500,
            "solved": solved, "seconds": seconds, "expression": None, "error": "", "formula": ""}


class Summary(unittest.TestCase):
    def setUp(self):
        # Two equations, two tools, seeds 1-3 at noise 0 and seed 1 only at noise 0.01.
        # orbitlaw noise 0: seed 1 solves both (100%), seed 2 one (50%), seed 3 none (0%): mean 50, sample s.d.
        #   sqrt(((50)^2 + 0 + (50)^2) / 2) = 50; times 1, 2, 3, 4, 5, 6 s -> median 3.5.
        # pyoperon noise 0: 50%, 50%, 50%: mean 50, s.d. 0; times all 10 -> median 10.
        # orbitlaw noise 0.01, seed 1: one of two -> 50, s.d. 0 (one seed); times 7, 9 -> median 8.
        self.records = []
        solved = {1: (True, True), 2: (True, False), 3: (False, False)}
        t = iter([1, 2, 3, 4, 5, 6])
        for seed in (1, 2, 3):
            for eq, ok in zip(("I.12.1", "I.14.3"), solved[seed]):
                self.records.append(record(eq, 0.0, seed, "orbitlaw", ok, float(next(t))))
                self.records.append(record(eq, 0.0, seed, "pyoperon", eq == "I.12.1", 10.0))
        self.records.append(record("I.12.1", 0.01, 1, "orbitlaw", False, 7.0))
        self.records.append(record("I.14.3", 0.01, 1, "orbitlaw", True, 9.0))

    def test_rates_spread_and_median_by_hand(self):
        s = feynman_all.summarise(self.records, ["orbitlaw", "pyoperon"], [0.0, 0.01])
        o = s["orbitlaw"][0.0]
        self.assertEqual(o["rate_per_seed"], {1: 100.0, 2: 50.0, 3: 0.0})
        self.assertAlmostEqual(o["rate_mean"], 50.0)
        self.assertAlmostEqual(o["rate_sd"], 50.0)
        self.assertEqual((o["rate_min"], o["rate_max"], o["median_seconds"]), (0.0, 100.0, 3.5))
        self.assertEqual(o["misses"], {"I.14.3": [2, 3], "I.12.1": [3]})
        p = s["pyoperon"][0.0]
        self.assertEqual((p["rate_mean"], p["rate_sd"], p["median_seconds"]), (50.0, 0.0, 10.0))
        self.assertEqual(p["misses"], {"I.14.3": [1, 2, 3]})
        n = s["orbitlaw"][0.01]
        self.assertEqual((n["rate_mean"], n["rate_sd"], n["median_seconds"], n["fits"]), (50.0, 0.0, 8.0, 2))
        self.assertNotIn(0.01, s["pyoperon"])

    def test_the_printed_table_from_a_jsonl_with_published_rates_beside(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fits.jsonl")
            with open(path, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in self.records)
            r = run_bench("--jsonl", path, "--report-only", "--only", "I.12.1,I.14.3", "--noise", "0,0.01",
                          "--seeds", "1,2,3", "--tools", "orbitlaw,pyoperon")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| 0 | 50.0 ± 50.0 [0.0-100.0] (2 eq, 3 seeds), 3.50 s | 50.0 ± 0.0 [50.0-50.0] (2 eq, 3 seeds), "
                      "10.00 s | 55.8 | 27.0 | 26.8 | 19.7 | 16.6 | 16.3 |", r.stdout)
        self.assertIn("| 0.01 | 50.0 ± 0.0 [50.0-50.0] (2 eq, 1 seeds), 8.00 s | - | 0.0 | 6.1 | 0.0 | 8.4 | 0.1 | 13.2 |",
                      r.stdout)
        self.assertIn("(published)", r.stdout)
        self.assertIn("orbitlaw noise 0 (2 of 2): I.12.1 [3], I.14.3 [2, 3]", r.stdout)
        self.assertIn("pyoperon noise 0 (1 of 2): I.14.3 [1, 2, 3]", r.stdout)
        self.assertIn("\n14 fits of 24 planned", r.stdout)  # 2 eq x 2 levels x 3 seeds x 2 tools


class EndToEnd(unittest.TestCase):
    def test_a_killed_run_resumes_without_redoing_or_losing_a_fit(self):
        args = ["--only", "I.12.1,I.14.3", "--noise", "0,0.1", "--seeds", "1", "--tools", "orbitlaw", "--time", "5"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fits.jsonl")
            first = subprocess.Popen([sys.executable, BENCH, "--orbitlaw", ORBITLAW, "--jsonl", path, *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while time.time() < deadline and lines(path) < 1:
                time.sleep(0.05)
            first.send_signal(signal.SIGKILL)
            first.wait()
            with open(path) as f:
                before = f.read()
            kept = before.count("\n")
            self.assertGreaterEqual(kept, 1)
            self.assertLess(kept, 4, "the run ended before it was killed: nothing left to resume")
            with open(path, "a") as f:
                f.write('{"equation": "I.1')  # a line cut short by the kill
            second = run_bench("--jsonl", path, *args, timeout=240)
            self.assertEqual(second.returncode, 0, second.stderr)
            self.assertIn(f"4 fits, {kept} already in", second.stdout)
            self.assertIn("dropping an incomplete last line", second.stderr)
            with open(path) as f:
                after = f.read()
        self.assertTrue(after.startswith(before), "the fits of the first run were rewritten")
        fits = [json.loads(line) for line in after.splitlines()]
        self.assertEqual(len(fits), 4)
        self.assertEqual({(r["equation"], r["noise"]) for r in fits},
                         {("I.12.1", 0.0), ("I.14.3", 0.0), ("I.12.1", 0.1), ("I.14.3", 0.1)})
        # Products of two and three inputs, noise-free: the engine finds them within 5 s (real behaviour; wall
        # times are not asserted, as a loaded machine stretches them).
        self.assertTrue(all(r["solved"] for r in fits if r["noise"] == 0.0), fits)
        self.assertRegex(second.stdout, r"\| 0 \| 100\.0 ± 0\.0 \[100\.0-100\.0\] \(2 eq, 1 seeds\)")

    def test_an_ablation_is_a_fit_of_its_own_and_records_its_settings(self):
        args = ["--only", "I.12.1", "--noise", "0", "--seeds", "1", "--tools", "orbitlaw", "--time", "5"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fits.jsonl")
            default = run_bench("--jsonl", path, *args, timeout=120)
            self.assertEqual(default.returncode, 0, default.stderr)
            # The same fit with other settings is not the default's fit: it runs, and is kept beside it.
            ablation = run_bench("--jsonl", path, *args, "--orbitlaw-set", "max_size=7",
                                 "--orbitlaw-set", "operators=+,-", timeout=120)
            self.assertEqual(ablation.returncode, 0, ablation.stderr)
            self.assertIn("1 fits, 0 already in", ablation.stdout)
            self.assertIn("orbitlaw with max_size=7 operators=+,-", ablation.stdout)
            again = run_bench("--jsonl", path, *args, "--orbitlaw-set", "max_size=7", "--orbitlaw-set",
                              "operators=+,-", "--report-only", timeout=60)
            self.assertIn("\n1 fits of 1 planned", again.stdout)
            with open(path) as f:
                fits = [json.loads(line) for line in f]
            bad = run_bench("--jsonl", path, *args, "--orbitlaw-set", "max_size")
        self.assertEqual([r["orbitlaw_settings"] for r in fits], [[], ["max_size=7", "operators=+,-"]])
        self.assertEqual([r["operators"] for r in fits], [feynman_all.fb.OPERATORS, ["+", "-"]])
        # The search's own record of why it stopped is kept with each fit.
        for r in fits:
            self.assertIn(r["stop_reason"], ("exact fit", "held-out plateau", "time limit", "iterations"), r)
            self.assertGreaterEqual(r["restarts_run"], 1)
        # mu*Nn is found with the bench's operators, and cannot be written with + and - alone: the settings
        # reached the search.
        self.assertEqual([r["solved"] for r in fits], [True, False], fits)
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(bad.stderr.strip(), "feynman_all: error: --orbitlaw-set needs KEY=VALUE, got 'max_size'")

    def test_the_data_depend_on_seed_equation_and_level_only(self):
        eq_id, formula, ranges = feynman_all.load_table()[0]
        X1, y1, c1 = feynman_all.draw(eq_id, ranges, formula, 50, 1, 0.01)
        X2, y2, c2 = feynman_all.draw(eq_id, ranges, formula, 50, 1, 0.01)
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)
        _, y0, c0 = feynman_all.draw(eq_id, ranges, formula, 50, 1, 0.0)
        np.testing.assert_array_equal(c0, c1)  # the same rows at every level
        np.testing.assert_array_equal(y0, c0)
        # SRBench's noise: s.d. level * RMS(y); with 50 rows the sample s.d. is within a factor 1.5 of it.
        ratio = np.std(y1 - c1) / (0.01 * math.sqrt(np.mean(c1 ** 2)))
        self.assertTrue(0.67 < ratio < 1.5, ratio)
        for (lo, hi), column in zip(ranges.values(), X1.T):
            self.assertTrue(np.all((column >= lo) & (column <= hi)))

    def test_an_unknown_equation_is_one_line(self):
        r = run_bench("--jsonl", os.devnull, "--only", "I.99.9", "--report-only")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(), f"feynman_all: error: no equation I.99.9 in {feynman_all.TABLE}")


if __name__ == "__main__":
    unittest.main()
