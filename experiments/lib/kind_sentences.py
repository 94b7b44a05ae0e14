"""One sentence per model kind of a run, each claim in it one that its 95% interval over seeds supports: the
behavioural verdict over the seeds, the 1-step error (as a ratio to constant acceleration's) against the
reference kind trained on the same data (the first kind of that data in the config, e.g. window 2) and against
that data's untrained control, the star-mass exponent against Newton's 1 where the star's mass varies, and the
Kepler probe's held-out R² for the semi-major axis a against the untrained control's, where the probes ran. (Not
against the raw input: an untrained network's random features read a better than a ridge on the raw window
does, so selectivity over the raw input is passed by the control and is no evidence of training.)

"higher"/"lower" is said only where the interval of the difference excludes 0; otherwise "not separated from",
with the interval. Differences are Welch's t intervals (experiments/lib/seedstats.py, as difference_rows uses
them), a mean's interval as seedstats chooses by the quantity's range.
"""
import seedstats
from seedstats import NONNEGATIVE, R2, UNBOUNDED


def fmt(v):
    return f"{v:.3g}"


def interval(i):
    return f"[{fmt(i.low)}, {fmt(i.high)}]"


def mean_text(values, bounds):
    i = seedstats.mean_ci(values, bounds)
    if i is None:
        return f"{fmt(sum(values) / len(values))} (one seed)"
    return f"{fmt(i.estimate)} {interval(i)}"


def against(values, other, other_name, bounds):
    """'lower than X's (difference d [a, b])' where the Welch interval excludes 0, else 'not separated from X's
    (difference d [a, b])'; None where either side has fewer than 2 seeds (no interval, no claim)."""
    d = seedstats.difference_ci(values, other, bounds)
    if d is None:
        return None
    if seedstats.excludes_zero((d.estimate, d.low, d.high)):
        word = "lower" if d.estimate < 0 else "higher"
        return f"{word} than {other_name}'s (difference {fmt(d.estimate)} {interval(d)})"
    return f"not separated from {other_name}'s (difference {fmt(d.estimate)} {interval(d)})"


def regimes(config, kinds):
    """{kind: the dataset it trained on} for the kinds present (a model's own inputs.train, else the
    experiment's)."""
    default = (config.get("inputs") or {}).get("train", "train")
    models = config.get("models") or {}
    return {k: (((models.get(k) or {}).get("inputs") or {}).get("train", default)) for k in kinds}


def sentences(config, cells, labels, controls, kepler_a=None):
    """One sentence per kind in cells' order. cells: {kind: behaviour_table.kind_cells(...)}; labels: {kind:
    label}; controls: the set of control kinds; kepler_a: {kind: [each seed's Kepler R² for a]} or None."""
    data = regimes(config, cells)
    reference, control = {}, {}
    for kind in cells:  # the first trained kind and the first control of each training dataset
        target = control if kind in controls else reference
        target.setdefault(data[kind], kind)
    out = []
    for kind, c in cells.items():
        n = c["seeds"]
        if n >= 3:
            verdict = ("learned Newton in every seed" if c["learned"] == n
                       else f"did not learn Newton (passes in {c['learned']} of {n} seeds)")
        else:
            verdict = f"no verdict ({n} seed{'s' if n != 1 else ''}; passes in {c['learned']})"
        parts = [f"1-step error {mean_text(c['ratios'], NONNEGATIVE)} of constant acceleration's"]
        ref = reference.get(data[kind])
        if ref and ref != kind:
            clause = against(c["ratios"], cells[ref]["ratios"], labels.get(ref, ref), NONNEGATIVE)
            if clause:
                parts.append(clause)
        ctl = control.get(data[kind])
        if ctl and ctl != kind:
            clause = against(c["ratios"], cells[ctl]["ratios"], "the untrained control", NONNEGATIVE)
            if clause:
                parts.append(clause)
        masses = c.get("mass_exponents") or []
        if masses:
            text = f"star-mass exponent {mean_text(masses, UNBOUNDED)}"
            i = seedstats.mean_ci([m - 1 for m in masses], UNBOUNDED)
            if i is not None:
                text += (", below Newton's 1" if i.high < 0 else ", above Newton's 1" if i.low > 0
                         else ", not separated from Newton's 1")
            parts.append(text)
        r2 = (kepler_a or {}).get(kind)
        if r2:
            text = f"Kepler probe R² for a {mean_text(r2, R2)}"
            if ctl and ctl != kind and (kepler_a or {}).get(ctl):
                clause = against(r2, kepler_a[ctl], "the untrained control", R2)
                if clause:
                    text += ", " + clause
            parts.append(text)
        out.append(f"- **{labels.get(kind, kind)}** [{kind}]: {verdict}; " + "; ".join(parts) + ".")
    return out
