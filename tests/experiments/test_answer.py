#!/usr/bin/env python3
"""Tests of the report's answer (experiments/lib/answer.py): the verdicts its sentences draw from the
seed-to-seed spread, on hand-made numbers whose means and spreads are known exactly.

usage: test_answer.py   (exit 0 when every test passes)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "lib"))
import answer  # noqa: E402


def fmt(value):
    return "–" if value is None else f"{value:.4g}"


def model(name, seeds, step1, previous, val_loss=None, newton=None):
    m = answer.ModelSeeds(name, seeds)
    m.step1 = dict(zip(seeds, step1))
    m.step1_previous = dict(zip(seeds, previous))
    m.val_loss = dict(zip(seeds, val_loss or [None] * len(seeds)))
    if newton is not None:
        m.law_search = True
        m.newton[("finetune", "published", 5)] = dict(zip(seeds, newton))
    return m


class Sentences(unittest.TestCase):
    def test_a_difference_within_the_spread_is_no_difference(self):
        # per-seed differences -0.02, 0.0, -0.04: mean -0.02, SD 0.02; |mean| is not larger than the SD
        m = model("A", [1, 2, 3], [0.08, 0.10, 0.06], [0.10, 0.10, 0.10])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("(3 seeds: 1, 2, 3)", text)
        self.assertIn("no difference at this number of seeds (lower by 0.02 AU, within the spread of 0.02 AU)", text)

    def test_a_difference_beyond_the_spread_is_reported(self):
        m = model("A", [1, 2, 3], [0.05, 0.06, 0.07], [0.10, 0.10, 0.10])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("lower by 0.04 AU, more than the seed-to-seed spread (0.01 AU)", text)
        self.assertNotIn("no difference", text)

    def test_one_seed_says_it_rests_on_one_seed(self):
        m = model("A", [7], [0.05], [0.10])
        text = answer.sentence(m, [m], fmt)
        self.assertTrue(text.startswith("**A** rests on one seed (seed 7)"), text)
        self.assertIn("lower by 0.05 AU", text)
        self.assertNotIn("more than the seed-to-seed spread", text)

    def test_two_models_are_compared_against_the_larger_spread(self):
        a = model("A", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.0, 1.1, 1.2])  # mean 1.1, SD 0.1
        b = model("B", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.12, 1.17, 1.22])  # mean 1.17, SD 0.05
        self.assertIn("against B's 1.17: no difference at this number of seeds (lower by 0.07, within the spread of 0.1)",
                      answer.sentence(a, [a, b], fmt))
        c = model("C", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.5, 1.55, 1.6])
        self.assertIn("against A's 1.1: higher by 0.45, more than the seed-to-seed spread (0.1)",
                      answer.sentence(c, [a, b, c], fmt))

    def test_missing_seeds_are_said(self):
        m = model("A", [1, 2, 3], [0.05, None, None], [0.10, None, None])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("1-step error 0.05 AU (1 of 3 seeds)", text)
        self.assertIn("one seed has a value: no spread is known", text)
        rows = answer.summary_rows([m], fmt)
        self.assertEqual(rows[0], ["A", "final validation loss (nats)", "missing", "0 of 3", "–"])
        self.assertEqual(rows[1], ["A", "1-step error (AU)", "0.05 (one seed)", "1 of 3",
                                   "seed 1: 0.05; seed 2: –; seed 3: –"])

    def test_quantities_of_stages_not_run_are_left_out(self):
        m = answer.ModelSeeds("A", [1, 2])  # an experiment without eval and compare (e.g. solar-system)
        m.val_loss = {1: 1.0, 2: 1.2}
        self.assertEqual(answer.sentence(m, [m], fmt), "**A** (2 seeds: 1, 2): validation loss 1.1 ± 0.1414 nats.")
        self.assertEqual([row[1] for row in answer.summary_rows([m], fmt)], ["final validation loss (nats)"])

    def test_newton_counts(self):
        m = model("A", [1, 2], [0.1, 0.1], [0.1, 0.1], newton=[4, 0])
        self.assertIn("Newton's law in 2 ± 2.828 of 5 galaxies at best (finetune, published; srbench)",
                      answer.sentence(m, [m], fmt))
        m = model("A", [1, 2], [0.1, 0.1], [0.1, 0.1], newton=[0, 0])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("Newton's law recovered in no galaxy", text)
        self.assertIn("previous position: no difference at this number of seeds (the same)", text)


if __name__ == "__main__":
    unittest.main()
