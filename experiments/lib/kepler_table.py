"""The Kepler probes' table for a run folder: per model kind, the held-out R² of linear probes for the orbit's
elements (a, e and the phase as cos and sin of the true anomaly) from the hidden states, and their selectivity
(the model's R² minus the raw-input control's, a ridge on the model's input window with no network), each as
the mean over seeds with its 95% interval (docs/design.md section 6b; orbitlaw probe's "kepler" probe).

A model is not called Keplerian from its 1-step error: only these probes say whether the hidden state holds
the orbit's elements, and only their selectivity says whether it holds more than its input does.
"""
import json
import os

import seedstats
from seedstats import R2, UNBOUNDED

ELEMENTS = ("a", "e", "phase")


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


def spread(values, bounds):
    """"mean [low, high]" over seeds (experiments/lib/seedstats.py chooses the method by the range), or the one
    seed's value; "-" without values."""
    if not values:
        return "-"
    i = seedstats.mean_ci(values, bounds)
    if i is None:
        return f"{fmt(sum(values) / len(values))} (one seed)"
    return f"{fmt(i.estimate)} [{fmt(i.low)}, {fmt(i.high)}]"


def element_values(scores):
    """{a, e, phase} from a per-element dict of R² (or selectivity): the phase is the mean of its cos and sin
    components, which are one angle."""
    if not scores:
        return {}
    out = {k: scores.get(k) for k in ("a", "e")}
    phase = [scores.get(k) for k in ("cos_anomaly", "sin_anomaly")]
    out["phase"] = None if None in phase else sum(phase) / 2
    return out


def kepler_results(run):
    """{kind: [each seed's kepler probe result]} from probe/<kind>[/seed-N]/probe.json, in folder order."""
    root = os.path.join(run, "probe")
    found = {}
    for dirpath, _, files in sorted(os.walk(root)):
        if "probe.json" not in files:
            continue
        with open(os.path.join(dirpath, "probe.json")) as f:
            kepler = (json.load(f).get("probes") or {}).get("kepler")
        if not kepler or "test_r2" not in kepler:
            continue
        kind = os.path.relpath(dirpath, root).split("/")[0]
        found.setdefault(kind, []).append(kepler)
    return found


HEADER = ["model", "seeds", "R² a", "R² e", "R² phase", "selectivity a", "selectivity e", "selectivity phase",
          "raw input R² a / e / phase"]


def rows(run, order=None):
    """One row per model kind (in `order`, then any other kind found): R² and selectivity per element over
    seeds; the raw-input control's R² as its mean over seeds. [] where no probe ran the Kepler probes."""
    found = kepler_results(run)
    kinds = [k for k in (order or []) if k in found] + [k for k in found if k not in (order or [])]
    out = []
    for kind in kinds:
        results = found[kind]
        r2 = [element_values(r["test_r2"]) for r in results]
        sel = [element_values(r.get("selectivity")) for r in results]
        raw = [element_values(r.get("raw_input_test_r2")) for r in results]
        row = [kind, str(len(results))]
        row += [spread([v[e] for v in r2 if v.get(e) is not None], R2) for e in ELEMENTS]
        # a difference of two R²s has no useful bound: Student's t
        row += [spread([v[e] for v in sel if v.get(e) is not None], UNBOUNDED) for e in ELEMENTS]
        means = []
        for e in ELEMENTS:
            values = [v[e] for v in raw if v.get(e) is not None]
            means.append(fmt(sum(values) / len(values)) if values else "-")
        row.append(" / ".join(means))
        out.append(row)
    return out


def per_seed(run, element="a", what="test_r2"):
    """{kind: [each seed's held-out R² (what="test_r2") or selectivity (what="selectivity") for the element]}
    ({} where no probe ran the Kepler probes)."""
    out = {}
    for kind, results in kepler_results(run).items():
        values = [element_values(r.get(what)).get(element) for r in results]
        out[kind] = [v for v in values if v is not None]
    return out
