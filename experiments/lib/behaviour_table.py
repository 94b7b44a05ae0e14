"""The behavioural test's table for a run folder: one row per trained model (and seed) from its eval.json,
verdict first, then the numbers behind it (docs/design.md section 6c), and per model kind the mean over seeds
with its 95% interval, "mean [low, high]", where there are at least 2 seeds (experiments/lib/seedstats.py
chooses the method by the quantity's range: the bootstrap for the 1-step ratio, which is at least 0, Student's t
for the exponents and the slope s).

Usage: python experiments/lib/behaviour_table.py RUN_FOLDER   (prints Markdown; exit 1 on a folder without
any eval.json that measured the behaviour).
"""
import json
import os
import sys

import seedstats
from seedstats import NONNEGATIVE, UNBOUNDED


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


def spread(values, bounds=UNBOUNDED):
    """A mean over seeds as "mean [low, high]", its 95% interval by the quantity's range (bounds: (low, high),
    None where unbounded; experiments/lib/seedstats.py), or "mean (one seed)"."""
    i = seedstats.mean_ci(values, bounds)
    if i is None:
        return f"{fmt(sum(values) / len(values))} (one seed)"
    return f"{fmt(i.estimate)} [{fmt(i.low)}, {fmt(i.high)}]"


def rows_of(run):
    models = os.path.join(run, "models")
    found = []
    for dirpath, _, files in sorted(os.walk(models)):
        if "eval.json" not in files:
            continue
        with open(os.path.join(dirpath, "eval.json")) as f:
            b = json.load(f).get("behaviour") or {}
        if not b.get("available"):
            continue
        tag = os.path.relpath(dirpath, models)
        found.append((tag, tag.split("/")[0], b))
    return found


HEADER = ["model", "verdict", "1-step median AU (const. acc., Newton step)", "ladder", "s",
          "a_impl r exponent [95%]", "constant ratio", "median angle (deg)", "failed conditions"]
SUMMARY_HEADER = ["model kind", "seeds", "learned in",
                  "1-step median / constant acceleration's (mean [95% interval])", "s (mean [95% interval])"]


def tables(run):
    """The per-model rows and the per-kind summary rows (lists of strings) of the run's measured behaviour."""
    rows, kinds = [], {}
    for tag, kind, b in rows_of(run):
        one, a = b["one_step_error_au"], b["implied_acceleration"]
        law = a["power_law"]
        lo, hi = law["r_exponent_ci95"]
        v = b["verdict"]
        rows.append([tag, "learned" if v["learned"] else "not learned",
                     f"{fmt(one['model']['median'])} ({fmt(one['constant_acceleration']['median'])}, "
                     f"{fmt(one['newton_step']['median'])})",
                     b["ladder_position"], fmt(b["transplant"]["slope"]),
                     f"{fmt(law['r_exponent'], 4)} [{fmt(lo, 4)}, {fmt(hi, 4)}]", fmt(a["constant_ratio"]),
                     fmt(a["median_angle_deg"]), str(len(v["failed"]))])
        kinds.setdefault(kind, []).append(b)
    summary = []
    for kind, bs in kinds.items():
        ratio = [b["one_step_error_au"]["model"]["median"] / b["one_step_error_au"]["constant_acceleration"]["median"]
                 for b in bs]
        slope = [b["transplant"]["slope"] for b in bs if b["transplant"]["slope"] is not None]
        learned = sum(1 for b in bs if b["verdict"]["learned"])
        summary.append([kind, str(len(bs)), f"{learned} of {len(bs)}", spread(ratio, NONNEGATIVE),
                        spread(slope) if slope else "-"])
    return rows, summary


LAWS_HEADER = ["model", "Newton galaxies (srbench / strict / exponents)", "law per galaxy"]


def law_rows(run):
    """Per trained model whose eval ran the law search on a_impl: the Newton galaxies per tier and each
    galaxy's law."""
    rows = []
    for tag, _, b in rows_of(run):
        search = b.get("law_search") or {}
        galaxies = search.get("galaxies") or []
        if not galaxies:
            continue
        newton = search.get("newton_galaxies") or {}
        n = len(galaxies)
        rows.append([tag, " / ".join(f"{newton.get(k, 0)} of {n}" for k in ("srbench", "strict", "exponents")),
                     "; ".join(str(g.get("law")) for g in galaxies)])
    return rows


def labels_in_order(run):
    """The experiment's model kinds in its config's order, with their labels ({} without experiment.json)."""
    try:
        with open(os.path.join(run, "experiment.json")) as f:
            models = json.load(f).get("models") or {}
    except (OSError, ValueError):
        return {}
    return {kind: (spec or {}).get("label", kind) for kind, spec in models.items()}


def kind_cells(bs):
    """One model kind's answer over its seeds (bs: each seed's eval.json "behaviour"), as text: verdict, the
    1-step ratio to constant acceleration with its interval (or "one seed"), ladder places, r exponent, s and,
    where the star's mass varies, the mass exponent. The terminal's answer line and the results pages
    (experiments/lib/results_page.py) both print these."""
    ratio = [b["one_step_error_au"]["model"]["median"] / b["one_step_error_au"]["constant_acceleration"]["median"]
             for b in bs]
    slope = [b["transplant"]["slope"] for b in bs if b["transplant"]["slope"] is not None]
    learned = sum(1 for b in bs if b["verdict"]["learned"])
    n = len(bs)
    failed = sorted({f for b in bs for f in b["verdict"]["failed"]})
    if n >= 3 and learned == n:
        verdict = f"LEARNED Newton (all {n} seeds)"
    elif n >= 3:
        verdict = f"not learned (passes in {learned} of {n} seeds)"
    else:
        passes = f"passes in {learned} of {n} seed{'s' if n != 1 else ''}"
        shown = [f"{len(failed)} conditions"] if len(failed) > 2 else failed
        verdict = f"no verdict, {passes}" + (f" (fails: {'; '.join(shown)})" if shown else "")

    laws = [b["implied_acceleration"]["power_law"] for b in bs]
    if n == 1:
        lo, hi = laws[0]["r_exponent_ci95"]
        exponent = f"{fmt(laws[0]['r_exponent'], 4)} [{fmt(lo, 4)}, {fmt(hi, 4)}]"
    else:
        exponent = f"{spread([law['r_exponent'] for law in laws])} over seeds"
    masses = [law["mass_exponent"] for law in laws if law.get("mass_varies") and law.get("mass_exponent") is not None]
    mass_slope = [b["mass_transplant"]["slope"] for b in bs
                  if (b.get("mass_transplant") or {}).get("slope") is not None]
    return {"seeds": n, "learned": learned, "verdict": verdict, "ratio": spread(ratio, NONNEGATIVE), "ratios": ratio,
            "ladder": " / ".join(sorted({b["ladder_position"] for b in bs})), "exponent": exponent,
            "s": spread(slope) if slope else None, "mass_exponent": spread(masses) if masses else None,
            "mass_exponents": masses, "mass_s": spread(mass_slope) if mass_slope else None, "failed": failed}


def answer_line(kind, label, bs):
    """One model kind's answer in one line: verdict over its seeds, the 1-step ratio to constant acceleration
    with its interval (or "one seed"), where it sits on the ladder, and s."""
    c = kind_cells(bs)
    line = (f"- {label} [{kind}]: {c['verdict']}. 1-step median error {c['ratio']} of constant acceleration's; "
            f"{c['ladder']}; a_impl r exponent {c['exponent']}")
    if c["s"]:
        line += f"; transplant slope s = {c['s']}"
    return line + "."


def by_kind(run):
    """{kind: [each seed's behaviour]} in the experiment's config order, and {kind: label}."""
    kinds = {}
    for _, kind, b in rows_of(run):
        kinds.setdefault(kind, []).append(b)
    labels = labels_in_order(run)
    order = [k for k in labels if k in kinds] + [k for k in kinds if k not in labels]
    return {k: kinds[k] for k in order}, labels


def terminal_text(run):
    """What an experiment prints at its end (the report's laws.md) where eval measured the behaviour: one line
    per model kind (the law searches stay in the report); None where nothing was measured."""
    kinds, labels = by_kind(run)
    if not kinds:
        return None
    order = list(kinds)
    seeds = max(len(bs) for bs in kinds.values())
    lines = ["Learned gravity, read from each model's own next-position predictions (docs/design.md section 6c; no "
             "probe is fitted). A model learned Newton only if every seed (at least 3) passes every condition: "
             "|s| < 0.1, the a_impl r exponent's 95% interval within -2 +- 0.05, constant ratio within 5%, median "
             "angle < 2 deg, 1-step median below constant acceleration's."]
    if seeds >= 2:
        lines.append("Over seeds: mean [95% interval]; the 1-step ratio's by the seed bootstrap (it cannot be "
                     "below 0), the exponent's and s's by Student's t (docs/experiments.md, Intervals over seeds).")
    if seeds < 3:
        lines.append(f"{seeds} seed{'s' if seeds != 1 else ''} per model: an anecdote, not a verdict; rerun with "
                     "--seeds 3 for one.")
    lines.append("")
    lines += [answer_line(kind, labels.get(kind, kind), kinds[kind]) for kind in order]
    if law_rows(run):
        lines += ["", "The laws found by symbolic regression on each model's implied accelerations are in the report."]
    return "\n".join(lines) + "\n"


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def main(argv):
    if len(argv) != 2:
        print("usage: behaviour_table.py RUN_FOLDER", file=sys.stderr)
        return 2
    rows, summary = tables(argv[1])
    if not rows:
        print(f"behaviour_table: error: no eval.json with a measured behaviour under {argv[1]}/models",
              file=sys.stderr)
        return 1
    print(markdown(HEADER, rows))
    print()
    print(markdown(SUMMARY_HEADER, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
