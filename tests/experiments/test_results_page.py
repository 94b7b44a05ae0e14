#!/usr/bin/env python3
"""Tests of the results pages (experiments/report.py --results-page, experiments/lib/results_page.py) on a
hand-made run folder whose numbers are known: the answer table's intervals, the Welch interval of a
difference, the provenance read from the records or said to be missing, and that the run folder is only read;
and of the intervals themselves (experiments/lib/seedstats.py): the t quantiles, Welch's interval, and the seed
bootstrap of bounded quantities, checked against an independent numpy enumeration of every resample.

usage: test_results_page.py PYTHON   (exit 0 when every test passes)
"""
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import atomic_file  # noqa: E402  how the pages, plots and run records are written
import results_page  # noqa: E402
import seedstats  # noqa: E402  the intervals the results pages use

PYTHON = sys.argv[1] if len(sys.argv) > 1 else sys.executable


def behaviour(ratio, exponent, slope, learned):
    """An eval.json "behaviour" whose 1-step median is `ratio` times constant acceleration's."""
    return {
        "available": True, "ladder_position": "between constant acceleration and the Newton step",
        "verdict": {"learned": learned, "failed": [] if learned else ["r exponent interval does not contain -2.00"]},
        "one_step_error_au": {"model": {"median": ratio * 0.001}, "constant_acceleration": {"median": 0.001},
                              "newton_step": {"median": 1e-6}},
        "implied_acceleration": {"power_law": {"r_exponent": exponent, "r_exponent_ci95": [exponent - 0.01,
                                                                                            exponent + 0.01]},
                                 "constant_ratio": 1.0, "median_angle_deg": 1.0},
        "transplant": {"slope": slope},
    }


def write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f)


def make_run(folder, seeds=3, provenance=True):
    config = {"experiment": "demo", "seed": 1, "seeds": seeds, "stages": ["simulate", "train", "eval"],
              "train": {"seed": 1}, "models": {"a": {"label": "model A"}, "b": {"label": "model B"}}}
    write(os.path.join(folder, "experiment.json"), config)
    # a: ratios 0.4, 0.5, 0.6 (mean 0.5, SD 0.1); b: 0.8, 0.9, 1.0 (mean 0.9, SD 0.1)
    for kind, ratios in (("a", [0.4, 0.5, 0.6]), ("b", [0.8, 0.9, 1.0])):
        for i, ratio in enumerate(ratios[:seeds]):
            tag = f"{kind}/seed-{i + 1}" if seeds > 1 else kind
            write(os.path.join(folder, "models", tag, "eval.json"),
                  {"behaviour": behaviour(ratio, -2.0 + 0.01 * i, 0.01, kind == "a" and i == 0)})
            if provenance:
                write(os.path.join(folder, "models", tag, "train.provenance.json"),
                      {"stage": "train", "git_revision": "b" * 40, "cpu_capability": "AVX2", "cpu_threads": 1})
                write(os.path.join(folder, "models", tag, "eval.provenance.json"),
                      {"stage": "eval", "git_revision": "b" * 40, "config": {"threads": 0},
                       "compute": {"cpu_threads": 2, "cpu_capability": "AVX2"}})
    if provenance:
        write(os.path.join(folder, "provenance.json"),
              {"git_revision": "a" * 40, "git_dirty": False, "command_line": "bash experiments/demo.sh --seeds 3",
               "host": "box", "cpus": 4, "created_utc": "2026-01-01T00:00:00Z"})
        write(os.path.join(folder, "stages", "train-a.done"),
              {"started_utc": "2026-01-01T00:00:00Z", "finished_utc": "2026-01-01T00:01:00Z", "seconds": 60})
        write(os.path.join(folder, "stages", "eval-a.done"),
              {"started_utc": "2026-01-01T00:02:00Z", "finished_utc": "2026-01-01T00:02:30Z", "seconds": 30})


def add_models(run, models):
    """Adds model kinds ({kind: spec}) to the run's experiment.json."""
    with open(os.path.join(run, "experiment.json")) as f:
        config = json.load(f)
    config["models"].update(models)
    write(os.path.join(run, "experiment.json"), config)


def listing(folder):
    out = []
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out.append((path, f.read()))
    return sorted(out)


class Statistics(unittest.TestCase):
    def test_t_quantiles_are_the_tabled_ones(self):
        for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (1000, 1.962)):
            self.assertAlmostEqual(seedstats.t_quantile(0.975, df), t, places=3)

    def test_welch_interval_of_two_known_samples(self):
        # difference -0.4; each mean's variance 0.01/3, Welch df = 4, t = 2.776: half-width 2.776 * sqrt(0.02/3)
        d, lo, hi = seedstats.welch([0.4, 0.5, 0.6], [0.8, 0.9, 1.0])
        half = 2.7764 * (0.02 / 3) ** 0.5
        self.assertAlmostEqual(d, -0.4)
        self.assertAlmostEqual(lo, -0.4 - half, places=3)
        self.assertAlmostEqual(hi, -0.4 + half, places=3)
        self.assertIsNone(seedstats.welch([1.0], [1.0, 2.0]))

    def test_a_count_gets_the_bootstrap_and_stays_in_its_range(self):
        # 5, 0, 4 Newton galaxies of 5 (the locality run's untrained linear probe): mean 3, standard error
        # sqrt(7/3) / sqrt(3) = 1.528, t interval 3 +- 4.303 * 1.528 = [-3.572, 9.572], outside [0, 5].
        _, lo, hi = seedstats.mean_interval([5, 0, 4])
        self.assertAlmostEqual(lo, -3.572, places=3)
        self.assertAlmostEqual(hi, 9.572, places=3)
        # The bootstrap at 3 seeds: each tail 6.8e-8 of 27 equally likely resamples, so the span [0, 5].
        self.assertEqual(seedstats.mean_ci([5, 0, 4], seedstats.out_of(5)), (3.0, 0.0, 5.0, "bootstrap"))
        # The difference to window 2's 0, 4, 1: Welch [-4.183, 6.85] passes 5; the bootstrap [0 - 4, 5 - 0].
        self.assertAlmostEqual(seedstats.welch([5, 0, 4], [0, 4, 1])[2], 6.850, places=3)
        d = seedstats.difference_ci([5, 0, 4], [0, 4, 1], seedstats.out_of(5))
        self.assertEqual((d.low, d.high, d.method), (-4.0, 5.0, "bootstrap"))
        self.assertAlmostEqual(d.estimate, 4 / 3)

    def test_the_method_follows_the_range(self):
        xs, ys = [0.9, 0.95, 0.99], [0.5, 0.6, 0.7]
        self.assertEqual(seedstats.mean_ci(xs).method, "t")
        for bounds in (seedstats.out_of(5), seedstats.PASS, seedstats.R2, seedstats.NONNEGATIVE):
            self.assertEqual(seedstats.mean_ci(xs, bounds).method, "bootstrap")
        # a difference is bounded on both sides only where the quantity is: counts and passes
        self.assertEqual(seedstats.difference_ci(xs, ys, seedstats.out_of(5)).method, "bootstrap")
        self.assertEqual(seedstats.difference_ci(xs, ys, seedstats.PASS).method, "bootstrap")
        for bounds in (seedstats.UNBOUNDED, seedstats.R2, seedstats.NONNEGATIVE):
            self.assertEqual(seedstats.difference_ci(xs, ys, bounds).method, "Welch")
        # R² 0.9, 0.95, 0.99: the t interval's upper end passes 1, the bootstrap's is the largest seed's
        self.assertGreater(seedstats.mean_interval(xs)[2], 1)
        r2 = seedstats.mean_ci(xs, seedstats.R2)
        self.assertAlmostEqual(r2.low, 0.9)
        self.assertAlmostEqual(r2.high, 0.99)

    def test_the_bootstrap_agrees_with_numpy_over_every_resample(self):
        # 5 seeds against 5: every one of the 5^5 resamples of each, and each of the 5^10 pairs, enumerated by
        # numpy here; the interval is numpy's inverted-CDF quantile at the expanded tail Phi(-sqrt(5/4) t_4), t_4 =
        # 2.7764 from a printed table (Hesterberg 2015). This test's tail is its own computation.
        import numpy as np
        a, b = [3, 1, 4, 1, 5], [2, 0, 0, 1, 3]
        tail = statistics.NormalDist().cdf(-(5 / 4) ** 0.5 * 2.7764)
        self.assertAlmostEqual(tail, 0.000954, places=6)
        index = np.array(list(itertools.product(range(5), repeat=5)))
        means_a, means_b = np.array(a, float)[index].mean(axis=1), np.array(b, float)[index].mean(axis=1)
        expected = np.quantile(means_a, [tail, 1 - tail], method="inverted_cdf")
        got = seedstats.bootstrap_mean(a)
        self.assertAlmostEqual(got[0], 2.8)
        self.assertAlmostEqual(got[1], expected[0], places=12)
        self.assertAlmostEqual(got[2], expected[1], places=12)
        self.assertEqual((round(got[1], 9), round(got[2], 9)), (1.0, 4.8))  # by numpy, written down
        differences = np.subtract.outer(means_a, means_b).ravel()
        expected = np.quantile(differences, [tail, 1 - tail], method="inverted_cdf")
        got = seedstats.bootstrap_difference(a, b)
        self.assertAlmostEqual(got[0], 1.6)
        self.assertAlmostEqual(got[1], expected[0], places=12)
        self.assertAlmostEqual(got[2], expected[1], places=12)

    def test_many_seeds_are_resampled_the_same_way_every_time(self):
        # 12 seeds: more multisets than EXACT_LIMIT, so MONTE_CARLO resamples from a fixed seed.
        xs = [0, 1, 1, 2, 3, 5, 0, 0, 4, 5, 2, 1]
        self.assertGreater(seedstats._multisets(len(xs)), seedstats.EXACT_LIMIT)
        first, second = seedstats.mean_ci(xs, seedstats.out_of(5)), seedstats.mean_ci(xs, seedstats.out_of(5))
        self.assertEqual(first, second)
        self.assertTrue(0 <= first.low < first.estimate < first.high <= 5, first)


class Page(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def generate(self, *runs, page=None):
        page = page or os.path.join(self.tmp, "page.md")
        args = [PYTHON, os.path.join(ROOT, "experiments", "report.py"), "--results-page", page]
        for run in runs:
            args += ["--run", run]
        result = subprocess.run(args, capture_output=True, text=True)
        if result.returncode != 0:
            return result, None
        with open(page) as f:
            return result, f.read()

    def test_answer_table_and_provenance_from_the_records(self):
        run = os.path.join(self.tmp, "run-3")
        make_run(run)
        before = listing(run)
        result, text = self.generate(run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(listing(run), before, "the run folder was written to")
        self.assertIn("<!-- answer-table run-3 seeds=3 -->", text)
        # the 1-step ratio is at least 0: the bootstrap, at 3 seeds the span of the seeds
        self.assertIn("| model A [a] | 3 | 1 of 3 | 0.5 [0.4, 0.6] |", text)
        self.assertIn("| model B [b] | 3 | 0 of 3 | 0.9 [0.8, 1] |", text)
        # the exponents -2, -1.99, -1.98 have no bound: Student's t, -1.99 +- 4.303 * 0.01 / sqrt(3) = 0.0248
        self.assertIn("| -1.99 [-2.01, -1.97] over seeds |", text)
        self.assertIn("| a − b | 1-step ratio | -0.4 | [-0.627, -0.173] | yes |", text)
        self.assertIn("| command | `bash experiments/demo.sh --seeds 3` |", text)
        self.assertIn("| commit (driver and configs) | aaaaaaa |", text)
        self.assertIn("| commit (orbitlaw binary, from the stages' provenance) | bbbbbbb |", text)
        self.assertIn("| CPU capability (LibTorch) | AVX2 |", text)
        self.assertIn("| threads: train | 1 |", text)
        self.assertIn("| threads: eval | 2 |", text)  # the number used, not the setting 0
        self.assertIn("| training seeds | 3 per model: 1, 2, 3 |", text)
        self.assertIn("2 min 30 s from the first stage's start to the last stage's end (2 stages; their own times "
                      "add up to 1 min 30 s)", text)
        self.assertNotIn("anecdote", text)

    def test_check_finds_a_hand_edited_page(self):
        run = os.path.join(self.tmp, "run-3")
        make_run(run)
        page = os.path.join(self.tmp, "page.md")
        self.assertEqual(self.generate(run, page=page)[0].returncode, 0)
        check = [PYTHON, os.path.join(ROOT, "experiments", "report.py"), "--results-page", page, "--check", "--run", run]
        self.assertEqual(subprocess.run(check, capture_output=True).returncode, 0)
        with open(page) as f:
            text = f.read()
        with open(page, "w") as f:
            f.write(text.replace("| 1 of 3 |", "| 3 of 3 |"))
        result = subprocess.run(check, capture_output=True, text=True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("+| model A [a] | 3 | 1 of 3 |", result.stdout)

    def test_one_seed_and_missing_records_are_said(self):
        run = os.path.join(self.tmp, "run-1")
        make_run(run, seeds=1, provenance=False)
        result, text = self.generate(run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("an anecdote, not a verdict", text)
        self.assertIn("| model A [a] | 1 | 1 of 1 | 0.4 (one seed) |", text)
        for record in ("command", "commit (driver and configs)", "CPU capability (LibTorch)", "threads: train",
                       "wall time"):
            self.assertIn(f"| {record} | not recorded |", text)
        self.assertNotIn("Differences between model kinds", text)

    def test_differences_only_between_kinds_trained_on_the_same_data(self):
        run = os.path.join(self.tmp, "run-data")
        make_run(run)
        add_models(run, {"c": {"label": "model C", "inputs": {"train": "train-mass"}}})
        for i, ratio in enumerate([0.1, 0.2, 0.3]):
            write(os.path.join(run, "models", f"c/seed-{i + 1}", "eval.json"),
                  {"behaviour": behaviour(ratio, -2.0, 0.01, False)})
        result, text = self.generate(run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("| a − b | 1-step ratio |", text)  # both on the experiment's own training data
        self.assertIn("| model C [c] | 3 |", text)  # c is in the answer table...
        self.assertNotIn("| a − c |", text)  # ...but not compared with kinds trained on other data
        self.assertNotIn("| b − c |", text)

    def test_one_sentence_per_kind_claims_only_what_its_interval_supports(self):
        run = os.path.join(self.tmp, "run-sentences")
        make_run(run)
        add_models(run, {"untrained": {"label": "control: untrained"}, "c": {"label": "model C"}})
        for kind, ratios, masses in (("untrained", [100, 110, 120], None), ("c", [0.3, 0.5, 0.7], [0.4, 0.5, 0.6])):
            for i, ratio in enumerate(ratios):
                b = behaviour(ratio, -2.0, 0.01, False)
                if masses:
                    b["implied_acceleration"]["power_law"].update(mass_varies=True, mass_exponent=masses[i])
                write(os.path.join(run, "models", f"{kind}/seed-{i + 1}", "eval.json"), {"behaviour": b})
        # Kepler R² for a: a 0.8, 0.9, 1.0 against the control's 0.5, 0.6, 0.7 (Welch: 0.3 +- 0.227); b's equal
        # to the control's. The raw input's is lower for all, which is why the control is the comparison.
        for kind, r2s in (("a", [0.8, 0.9, 1.0]), ("b", [0.5, 0.6, 0.7]), ("untrained", [0.5, 0.6, 0.7])):
            for i, r2 in enumerate(r2s):
                write(os.path.join(run, "probe", f"{kind}/seed-{i + 1}", "probe.json"),
                      {"probes": {"kepler": {"test_r2": {"a": r2, "e": 0, "cos_anomaly": 0, "sin_anomaly": 0},
                                             "raw_input_test_r2": {"a": 0.1}}}})
        result, text = self.generate(run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Kepler probe R² for a 0.9 [0.8, 1], higher than the untrained control's (difference 0.3 "
                      "[0.0733, 0.527]).", text)
        self.assertIn("Kepler probe R² for a 0.6 [0.5, 0.7], not separated from the untrained control's "
                      "(difference 0 [-0.227, 0.227]).", text)
        # b - a: 0.4, Welch [0.173, 0.627] (the difference table's a - b negated); c - a: 0, SDs 0.2 and 0.1
        self.assertIn("- **model B** [b]: did not learn Newton (passes in 0 of 3 seeds); 1-step error 0.9 [0.8, 1] "
                      "of constant acceleration's; higher than model A's (difference 0.4 [0.173, 0.627]); lower "
                      "than the untrained control's (difference -109 [-134, -84.3]);", text)
        self.assertIn("- **model A** [a]: did not learn Newton (passes in 1 of 3 seeds); 1-step error 0.5 [0.4, 0.6] "
                      "of constant acceleration's; lower than the untrained control's (difference -110 [-134, "
                      "-84.7]);", text)
        self.assertIn("[c]: did not learn Newton (passes in 0 of 3 seeds); 1-step error 0.5 [0.3, 0.7] of constant "
                      "acceleration's; not separated from model A's (difference 0 [", text)
        # 0.4, 0.5, 0.6 against 1: Student's t, 0.5 +- 0.248, entirely below 1
        self.assertIn("star-mass exponent 0.5 [0.252, 0.748], below Newton's 1.", text)
        self.assertIn("- **control: untrained** [untrained]: did not learn Newton (passes in 0 of 3 seeds); 1-step "
                      "error 110 [100, 120] of constant acceleration's; higher than model A's (difference 110 [84.7, "
                      "134]);", text)

    def test_kepler_probe_table_over_seeds(self):
        run = os.path.join(self.tmp, "run-kepler")
        make_run(run)
        # a's R² of a: 0.7, 0.8, 0.9 (the bootstrap at 3 seeds: the span); the raw input's 0.5 each time, so the
        # selectivity of a is 0.2, 0.3, 0.4: Student's t, 0.3 +- 4.303 * 0.1 / sqrt(3) = 0.248
        for i, r2 in enumerate([0.7, 0.8, 0.9]):
            raw = {"a": 0.5, "e": 0.1, "cos_anomaly": 0.0, "sin_anomaly": 0.2}
            test = {"a": r2, "e": 0.3, "cos_anomaly": 0.6, "sin_anomaly": 0.8}
            write(os.path.join(run, "probe", f"a/seed-{i + 1}", "probe.json"),
                  {"probes": {"kepler": {"test_r2": test, "raw_input_test_r2": raw,
                                         "selectivity": {k: test[k] - raw[k] for k in test}}}})
        result, text = self.generate(run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("| a | 3 | 0.8 [0.7, 0.9] | 0.3 [0.3, 0.3] | 0.7 [0.7, 0.7] | 0.3 [0.0516, 0.548] | "
                      "0.2 [0.2, 0.2] | 0.6 [0.6, 0.6] | 0.5 / 0.1 / 0.1 |", text)
        self.assertNotIn("| b | 3 | 0.", text)  # b's probes did not run the Kepler probes

    def test_per_kind_plot_beside_the_page_with_the_tables_intervals(self):
        run = os.path.join(self.tmp, "run-plot")
        make_run(run)
        add_models(run, {"c": {"label": "model C", "inputs": {"train": "train-mass"}}})
        for i, (ratio, mass) in enumerate(zip([0.3, 0.5, 0.7], [0.4, 0.5, 0.6])):
            b = behaviour(ratio, -2.0, 0.01, False)
            b["implied_acceleration"]["power_law"].update(mass_varies=True, mass_exponent=mass)
            b["mass_transplant"] = {"slope": 0.9}
            write(os.path.join(run, "models", f"c/seed-{i + 1}", "eval.json"), {"behaviour": b})
        for i, r2 in enumerate([0.7, 0.8, 0.9]):
            write(os.path.join(run, "probe", f"a/seed-{i + 1}", "probe.json"),
                  {"probes": {"kepler": {"test_r2": {"a": r2}}}})
        page = os.path.join(self.tmp, "page.md")
        result, text = self.generate(run, page=page)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("](page-run-plot-kinds.png)", text)
        with open(os.path.join(self.tmp, "page-run-plot-kinds.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

        import kind_plot
        with open(os.path.join(run, "experiment.json")) as f:
            config = json.load(f)
        groups = dict(kind_plot.points(run, config, results_page.training_data(config)))
        self.assertEqual(sorted(groups), ["train", "train-mass"])  # one row of panels per training set
        kinds = {kind: stats for kind, _, _, stats in groups["train"]}
        self.assertEqual(kinds["a"]["ratio"][0], [0.4, 0.5, 0.6])
        for got, want in zip(kinds["a"]["ratio"][1][:3], (0.5, 0.4, 0.6)):  # bounded: the bootstrap, the span
            self.assertAlmostEqual(got, want, places=12)
        estimate, low, high = kinds["a"]["r_exponent"][1][:3]  # Student's t: -1.99 +- 0.0248, as the table
        self.assertAlmostEqual(estimate, -1.99, places=12)
        self.assertAlmostEqual(high - estimate, 4.302653 * 0.01 / 3 ** 0.5, places=5)
        self.assertEqual(kinds["a"]["kepler_a"][0], [0.7, 0.8, 0.9])
        self.assertNotIn("kepler_a", kinds["b"])  # b's probes did not run the Kepler probes
        self.assertNotIn("mass_exponent", kinds["a"])  # the star's mass does not vary in a's data
        (kind, _, _, c), = groups["train-mass"]
        self.assertEqual(kind, "c")
        estimate, low, high = c["mass_exponent"][1][:3]  # 0.5 +- 4.303 * 0.1 / sqrt(3)
        self.assertAlmostEqual(high - estimate, 4.302653 * 0.1 / 3 ** 0.5, places=5)
        self.assertEqual(c["s"][0], [0.9, 0.9, 0.9])  # the mass transplant's slope where the mass varies

        # --check wants the plot beside the page, as the page links it
        os.remove(os.path.join(self.tmp, "page-run-plot-kinds.png"))
        check = [PYTHON, os.path.join(ROOT, "experiments", "report.py"), "--results-page", page, "--check", "--run", run]
        result = subprocess.run(check, capture_output=True, text=True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("page-run-plot-kinds.png is missing", result.stderr)

    def test_the_same_kind_in_two_runs_with_what_differs_in_their_configs(self):
        runs = []
        for name, steps, ratios in (("run-3000", 3000, None), ("run-6000", 6000, [0.1, 0.2, 0.3])):
            run = os.path.join(self.tmp, name)
            make_run(run)
            for kind in ("a", "b"):
                write(os.path.join(run, "configs", f"train-{kind}-seed-1.json"),
                      {"seed": 1, "train": {"max_steps": steps, "lr": 0.003}})
            write(os.path.join(run, "configs", "simulate-train.json"), {"systems": 100})
            write(os.path.join(run, "models", "b", "seed-1", "train.provenance.json"),
                  {"attention_path": {"path": "unfused" if steps == 3000 else "cpu_kernel"},
                   "git_revision": "1234567abc" if steps == 3000 else "89abcdef01"})
            for i, ratio in enumerate(ratios or []):  # a trained longer: 0.1, 0.2, 0.3 against 0.4, 0.5, 0.6
                write(os.path.join(run, "models", f"a/seed-{i + 1}", "eval.json"),
                      {"behaviour": behaviour(ratio, -2.0, 0.01, False)})
            runs.append(run)
        result, text = self.generate(*runs)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("## Between runs", text)
        # Welch: -0.3 +- t(0.975, 4) * sqrt(0.01 / 3 + 0.01 / 3) = 2.776 * 0.0816 = 0.227
        self.assertIn("| a | run-6000 − run-3000 | train.train.max_steps 3000 → 6000 | 1-step ratio | -0.3 | "
                      "[-0.527, -0.0733] | yes |", text)
        self.assertIn("| b | run-6000 − run-3000 | attention path \"unfused\" → \"cpu_kernel\"; orbitlaw binary "
                      "\"1234567\" → \"89abcde\"; train.train.max_steps 3000 → 6000 | 1-step ratio | 0 |", text)
        self.assertNotIn("| data.", text)  # the same training data in both runs
        self.assertNotIn("train.seed", text)  # the seed is not a difference of the runs

        result, text = self.generate(runs[0])
        self.assertNotIn("## Between runs", text)  # one run: nothing to compare

    def test_replaces_only_a_page_and_plots_that_it_wrote(self):
        run = os.path.join(self.tmp, "run")
        make_run(run)
        page, plot = os.path.join(self.tmp, "page.md"), os.path.join(self.tmp, "page-run-kinds.png")
        result, _ = self.generate(run, page=page)
        self.assertEqual(result.returncode, 0, result.stderr)
        result, _ = self.generate(run, page=page)  # its own page and plot: replaced
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(plot, "rb") as f:
            drawn = f.read()

        # A user's file where the page would go: refused, and nothing written, the plot included.
        os.remove(plot)
        write(page, {"notes": "mine"})
        with open(page) as f:
            mine = f.read()
        result, _ = self.generate(run, page=page)
        self.assertEqual(result.returncode, 1)
        self.assertIn("is not a results page", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        with open(page) as f:
            self.assertEqual(f.read(), mine)
        self.assertFalse(os.path.exists(plot))

        # A PNG of the plot's name that the page did not draw (another tool's image, the mark removed): refused,
        # and the page is not written either.
        os.remove(page)
        foreign = drawn.replace(b"orbitlaw results-page kind plot", b"orbitlaw results-page kind plo_")
        with open(plot, "wb") as f:
            f.write(foreign)
        result, _ = self.generate(run, page=page)
        self.assertEqual(result.returncode, 1)
        self.assertIn("is not a plot a results page drew", result.stderr)
        with open(plot, "rb") as f:
            self.assertEqual(f.read(), foreign)
        self.assertFalse(os.path.exists(page))

        # Two run folders of one name would share a plot file: refused.
        twin = os.path.join(self.tmp, "elsewhere", "run")
        make_run(twin)
        os.remove(plot)
        result, _ = self.generate(run, twin, page=page)
        self.assertEqual(result.returncode, 1)
        self.assertIn("same name", result.stderr)
        self.assertEqual(sorted(n for n in os.listdir(self.tmp) if not os.path.isdir(os.path.join(self.tmp, n))), [])

    def test_refuses_a_page_inside_a_run_folder_and_mixed_experiments(self):
        run = os.path.join(self.tmp, "run")
        make_run(run)
        result, _ = self.generate(run, page=os.path.join(run, "page.md"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("inside the run folder", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(run, "page.md")))
        other = os.path.join(self.tmp, "other")
        make_run(other)
        with open(os.path.join(other, "experiment.json")) as f:
            config = json.load(f)
        config["experiment"] = "another"
        write(os.path.join(other, "experiment.json"), config)
        result, _ = self.generate(run, other)
        self.assertEqual(result.returncode, 1)
        self.assertIn("different experiments", result.stderr)


class AtomicFile(unittest.TestCase):
    def test_whole_or_not_at_all_and_no_users_file_touched(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        path = os.path.join(folder, "page.md")
        with open(path + ".tmp", "w") as f:  # a user's file of the name a naive writer would use
            f.write("mine")
        atomic_file.write_text(path, "first\n")
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o666 & ~umask)

        def interrupted(f):
            f.write("half")
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            atomic_file.write_with(path, interrupted)
        with open(path) as f:
            self.assertEqual(f.read(), "first\n")  # the earlier file, whole
        with open(path + ".tmp") as f:
            self.assertEqual(f.read(), "mine")
        self.assertEqual(sorted(os.listdir(folder)), ["page.md", "page.md.tmp"])  # no temporary file left


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
