#!/usr/bin/env python3
"""Tests of the report's answer (experiments/lib/answer.py): the verdicts its sentences draw from 95% intervals
over seeds, on hand-made seed tables whose intervals are computed by hand below (Welch's t interval between two
models' losses, the paired t interval of a model against its baseline, the seed bootstrap's interval of a
bounded quantity: a count, an error, R²), and the control that does as well as the trained models.

usage: test_answer.py   (exit 0 when every test passes)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "lib"))
import answer  # noqa: E402
import expconfig  # noqa: E402

# Student's t 0.975 quantiles, from a printed table: the test's own numbers, not the code's.
T2, T4 = 4.3027, 2.7764


def fmt(value):
    return "–" if value is None else f"{value:.4g}"


def model(name, seeds, step1, previous, val_loss=None, newton=None, control=False):
    m = answer.ModelSeeds(name, seeds, control)
    m.step1 = dict(zip(seeds, step1))
    m.step1_previous = dict(zip(seeds, previous))
    m.val_loss = dict(zip(seeds, val_loss or [None] * len(seeds)))
    if newton is not None:
        m.law_search = True
        m.newton[("linear", "published", 5)] = dict(zip(seeds, newton))
    return m


class Sentences(unittest.TestCase):
    def test_a_clear_difference_between_models_carries_its_welch_interval(self):
        # A: 1.0, 1.1, 1.2 (mean 1.1, variance 0.01); B: 1.5, 1.6, 1.7 (mean 1.6, variance 0.01). Welch: standard
        # error sqrt(0.01/3 + 0.01/3) = 0.08165, df = 4 (equal variances and sizes), half-width 2.7764 * 0.08165
        # = 0.2267: the difference -0.5 has the interval [-0.7267, -0.2733], which excludes 0.
        a = model("A", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.0, 1.1, 1.2])
        b = model("B", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.5, 1.6, 1.7])
        half = T4 * (0.02 / 3) ** 0.5
        self.assertEqual(fmt(-0.5 - half), "-0.7267")
        self.assertIn(f"against A's 1.1: higher by 0.5, 95% interval [{fmt(0.5 - half)}, {fmt(0.5 + half)}]",
                      answer.sentence(b, [a, b], fmt))
        self.assertIn(f"against B's 1.6: lower by 0.5, 95% interval [{fmt(-0.5 - half)}, {fmt(-0.5 + half)}]",
                      answer.sentence(a, [a, b], fmt))

    def test_a_null_difference_between_models_is_not_called_one(self):
        # C = A + 0.05 per seed: the difference -0.05 with the same half-width 0.2267 gives [-0.2767, 0.1767].
        a = model("A", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.0, 1.1, 1.2])
        c = model("C", [1, 2, 3], [0.1] * 3, [0.1] * 3, val_loss=[1.05, 1.15, 1.25])
        text = answer.sentence(a, [a, c], fmt)
        self.assertIn("against C's 1.15: no difference established at this number of seeds (lower by 0.05; 95% "
                      "interval [-0.2767, 0.1767] includes 0)", text)

    def test_a_model_against_its_baseline_uses_the_paired_interval(self):
        # per-seed differences -0.05, -0.04, -0.03: mean -0.04, SD 0.01, standard error 0.01/sqrt(3), df 2:
        # half-width 4.3027 * 0.005774 = 0.02484, interval [-0.06484, -0.01516]. The error itself is at least 0: its
        # bootstrap interval at 3 seeds is the seeds' span [0.05, 0.07].
        m = model("A", [1, 2, 3], [0.05, 0.06, 0.07], [0.10, 0.10, 0.10])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("(3 seeds: 1, 2, 3)", text)
        self.assertIn("1-step error 0.06 [0.05, 0.07] AU against 0.1 AU for the previous position: lower by "
                      "0.04 AU, 95% interval [-0.06484, -0.01516] AU", text)
        # -0.02, 0.0, -0.04: mean -0.02, SD 0.02, half-width 4.3027 * 0.01155 = 0.04968: [-0.06968, 0.02968].
        m = model("A", [1, 2, 3], [0.08, 0.10, 0.06], [0.10, 0.10, 0.10])
        self.assertIn("previous position: no difference established at this number of seeds (lower by 0.02 AU; 95% "
                      "interval [-0.06968, 0.02968] AU includes 0)", answer.sentence(m, [m], fmt))

    def test_one_seed_says_one_seed_and_claims_nothing(self):
        m = model("A", [7], [0.05], [0.10], val_loss=[1.0])
        other = model("B", [7], [0.05], [0.10], val_loss=[2.0])
        text = answer.sentence(m, [m, other], fmt)
        self.assertTrue(text.startswith("**A** rests on one seed (seed 7), so it claims no difference"), text)
        self.assertIn("lower by 0.05 AU (one seed: no interval, no difference claimed)", text)
        self.assertIn("against B's 2: lower by 1 (one seed: no interval, no difference claimed)", text)
        self.assertNotIn("95% interval", text)
        m = model("A", [7], [0.05], [0.10], newton=[3])
        self.assertIn("Newton's law in 3 of 5 galaxies at best (linear, published; srbench).", answer.sentence(m, [m], fmt))

    def test_missing_seeds_are_said(self):
        m = model("A", [1, 2, 3], [0.05, None, None], [0.10, None, None])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("1-step error 0.05 AU (1 of 3 seeds)", text)
        self.assertIn("(one seed has a value: no interval, no difference claimed)", text)
        rows = answer.detail_rows([m], fmt)
        self.assertEqual(rows[0], ["A", "final validation loss (nats)", "missing", "0 of 3", "–"])
        self.assertEqual(rows[1], ["A", "1-step error (AU)", "0.05 (one seed)", "1 of 3",
                                   "seed 1: 0.05; seed 2: –; seed 3: –"])

    def test_quantities_of_stages_not_run_are_left_out(self):
        m = answer.ModelSeeds("A", [1, 2])  # an experiment without eval and compare (e.g. solar-system)
        m.val_loss = {1: 1.0, 2: 1.2}
        # A loss is at least 0: the bootstrap at 2 seeds gives their span [1, 1.2] (the t interval, 1.1 +- 12.706 *
        # 0.1, would be [-0.1706, 2.371], below 0).
        self.assertEqual(answer.sentence(m, [m], fmt), "**A** (2 seeds: 1, 2): validation loss 1.1 [1, 1.2] nats.")
        self.assertEqual([row[1] for row in answer.detail_rows([m], fmt)], ["final validation loss (nats)"])
        self.assertEqual(answer.summary_rows([m], fmt),
                         (["model", "seeds", "final validation loss (nats)"], [["A", "2", "1.1 [1, 1.2]"]]))

    def test_the_summary_has_one_row_per_model(self):
        a = model("A", [1, 2, 3], [0.05, 0.06, 0.07], [0.1] * 3, val_loss=[1.0, 1.1, 1.2], newton=[0, 1, 2])
        a.r2 = {"linear": {1: 0.5, 2: 0.5, 3: 0.5}, "finetune": {1: 0.9, 2: 0.9, 3: 0.9}}
        b = model("B", [1], [0.05], [0.1], val_loss=[1.0], newton=[3], control=True)
        header, rows = answer.summary_rows([a, b], fmt)
        self.assertEqual(len(rows), 2)
        self.assertEqual(header[2:], ["final validation loss (nats)", "1-step error (AU)",
                                      "1-step error − previous position's (AU)", "best probe R² (probe)",
                                      "most Newton galaxies, srbench (probe, protocol)"])
        # Newton galaxies 0, 1, 2 of 5: the t interval 1 +- 4.3027 * 1 / sqrt(3) = [-1.484, 3.484] leaves [0, 5]; the
        # bootstrap's at 3 seeds is their span [0, 2]. The paired difference has no bound: t, as above.
        self.assertEqual(rows[0][:2] + rows[0][4:], ["A", "3", "-0.04 [-0.06484, -0.01516]", "0.9 [0.9, 0.9] (finetune)",
                                                     "1 [0, 2] of 5 (linear, published)"])
        self.assertEqual(rows[1][0:3], ["B (control)", "1", "1 (one seed)"])

    def test_newton_counts(self):
        m = model("A", [1, 2], [0.1, 0.1], [0.1, 0.1], newton=[4, 0])
        # mean 2; the t interval (SD 2.828, standard error 2, df 1: half-width 25.41) would be [-23.41, 27.41],
        # far outside [0, 5]; the bootstrap's at 2 seeds is their span [0, 4].
        self.assertIn("Newton's law in 2 [0, 4] of 5 galaxies at best (linear, published; srbench",
                      answer.sentence(m, [m], fmt))

    def test_a_count_never_gets_the_t_interval(self):
        # 5, 0, 4 Newton galaxies of 5: mean 3, SD 2.646, standard error 1.528, t interval 3 +- 4.3027 * 1.528 =
        # [-3.572, 9.572], outside [0, 5] on both sides. Whatever the method, the count's interval stays in [0, 5];
        # the bootstrap's at 3 seeds is the span [0, 5].
        m = model("A", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[5, 0, 4])
        self.assertIn("Newton's law in 3 [0, 5] of 5 galaxies", answer.sentence(m, [m], fmt))
        self.assertEqual(answer.summary_rows([m], fmt)[1][0][-1], "3 [0, 5] of 5 (linear, published)")
        self.assertNotIn("-3.572", answer.sentence(m, [m], fmt))
        m = model("A", [1, 2], [0.1, 0.1], [0.1, 0.1], newton=[0, 0])
        text = answer.sentence(m, [m], fmt)
        self.assertIn("Newton's law recovered in no galaxy", text)
        self.assertIn("previous position: no difference established at this number of seeds (the same", text)


def control_finding(trained, control):
    """The one control finding of a trained model T and a control U, 3 seeds each, from their Newton counts."""
    t = model("T", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=trained)
    u = model("U", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=control, control=True)
    (finding,) = answer.control_findings([t, u], fmt)
    return finding


class Controls(unittest.TestCase):
    def test_a_control_that_beats_every_trained_model_is_said(self):
        # control 5, 4, 5 and trained 0, 0, 1 Newton galaxies: counts, so the bootstrap of the difference of means,
        # at 3 seeds against 3 the span [min 4 - max 1, max 5 - min 0] = [3, 5], which excludes 0 (Welch's would be
        # [3.025, 5.642], beyond the largest possible difference, 5).
        trained = model("T", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[0, 0, 1])
        weaker = model("W", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[0, 0, 0])
        control = model("U", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[5, 4, 5], control=True)
        (finding,) = answer.control_findings([trained, weaker, control], fmt)
        self.assertIn("**A control does as well as the trained models** — U: its linear probe (published protocol) "
                      "recovers Newton's law (srbench) in 4.667 of 5 galaxies on average over 3 seeds, more than any "
                      "trained model (at best T: 0.3333; difference 4.333, 95% interval [3, 5])", finding)

    def test_a_control_level_with_the_trained_models_is_said_without_more(self):
        # 1, 0, 0 against 0, 0, 0: the bootstrap's span [0 - 0, 1 - 0] = [0, 1], which includes 0 (Welch's: [-1.101,
        # 1.768], below the smallest possible difference, -1).
        finding = control_finding(trained=[0, 0, 0], control=[1, 0, 0])
        self.assertIn("at least as many as any trained model (at best T: 0; difference 0.3333, 95% interval "
                      "[0, 1] includes 0)", finding)
        self.assertNotIn("more than", finding)

    def test_the_locality_runs_counts_stay_within_the_possible_difference(self):
        # The 3-seed locality run: the untrained control's linear probe 5, 0, 4 of 5 against window 2's 0, 4, 1.
        # Welch's interval of the difference 1.333 was [-4.183, 6.85], past the largest possible difference, 5;
        # the bootstrap's is [min 0 - max 4, max 5 - min 0] = [-4, 5].
        finding = control_finding(trained=[0, 4, 1], control=[5, 0, 4])
        self.assertIn("in 3 of 5 galaxies on average over 3 seeds, at least as many as any trained model (at best T: "
                      "1.667; difference 1.333, 95% interval [-4, 5] includes 0)", finding)

    def test_a_control_below_a_trained_model_or_at_zero_is_not_a_finding(self):
        trained = model("T", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[3, 4, 3])
        control = model("U", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[2, 3, 3], control=True)
        self.assertEqual(answer.control_findings([trained, control], fmt), [])
        zero = model("Z", [1, 2, 3], [0.1] * 3, [0.1] * 3, newton=[0, 0, 0], control=True)
        self.assertEqual(answer.control_findings([model("T", [1], [0.1], [0.1], newton=[0]), zero], fmt), [])

    def test_one_seed_control(self):
        trained = model("T", [1], [0.1], [0.1], newton=[2])
        control = model("U", [1], [0.1], [0.1], newton=[5], control=True)
        (finding,) = answer.control_findings([trained, control], fmt)
        self.assertIn("in 5 of 5 galaxies on its one seed, more than any trained model on this seed (at best T: 2); "
                      "one seed, no interval", finding)

    def test_the_behavioural_verdict_is_a_test_too(self):
        trained = model("T", [1, 2, 3], [0.1] * 3, [0.1] * 3)
        trained.learned = {1: 0, 2: 0, 3: 0}
        control = model("U", [1, 2, 3], [0.1] * 3, [0.1] * 3, control=True)
        control.learned = {1: 1, 2: 0, 3: 0}
        (finding,) = answer.control_findings([trained, control], fmt)
        self.assertIn("— U: its own predictions pass the behavioural verdict in 1 of 3 seeds, at least as many", finding)

    def test_which_models_are_controls(self):
        config = {"models": {"untrained": {}, "untrained-step-change": {"label": "x"}, "a": {"label": "control: b"},
                             "b": {"label": "Negative control: c"}, "window-2": {"label": "window 2, a control"}}}
        self.assertEqual([k for k in config["models"] if expconfig.is_control(config, k)],
                         ["untrained", "untrained-step-change", "a", "b"])


if __name__ == "__main__":
    unittest.main()
