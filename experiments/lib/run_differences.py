"""Differences between the run folders of one results page: a model kind that two runs both trained (say, at
two budgets) compared with itself, run against run, with what differs between the two runs' configs for it.

A difference between runs is a difference the configs make only where the configs say what differs, so each
row lists the keys of the kind's resolved train config (RUN/configs/train-KIND[-seed-1].json, the seed left
out) and of its training data's simulate config (RUN/configs/simulate-DATA.json) whose values differ, and the
attention path that trained it and the commit of the orbitlaw binary where those differ (train.provenance.json:
the same formula, but other arithmetic, or another build's rounding).
The intervals are the results pages' (experiments/lib/seedstats.py): Welch's t for the 1-step ratio and the
star-mass exponent (no bound on their difference) and for the Kepler R² of a.
"""
import json
import os

import behaviour_table
import kepler_table
from seedstats import NONNEGATIVE, R2, UNBOUNDED, difference_ci


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def flat(value, prefix=""):
    """{dotted key: leaf value} of a JSON object."""
    if not isinstance(value, dict):
        return {prefix: value}
    out = {}
    for key, item in value.items():
        out.update(flat(item, f"{prefix}.{key}" if prefix else key))
    return out


def kind_configs(run, kind, data):
    """The kind's resolved train config (its first seed's, without the seed) and its training data's simulate
    config, flattened under "train." and "data."; {} where the run folder does not hold them."""
    configs = os.path.join(run, "configs")
    train = read_json(os.path.join(configs, f"train-{kind}-seed-1.json")) or read_json(
        os.path.join(configs, f"train-{kind}.json")) or {}
    train.pop("seed", None)
    simulate = read_json(os.path.join(configs, f"simulate-{data}.json")) or {}
    out = {f"train.{k}": v for k, v in flat(train).items()}
    out.update({f"data.{k}": v for k, v in flat(simulate).items()})
    # The attention path that trained it (train.provenance.json): the same formula, but another arithmetic.
    models = os.path.join(run, "models", kind)
    provenance = read_json(os.path.join(models, "seed-1", "train.provenance.json")) or read_json(
        os.path.join(models, "train.provenance.json")) or {}
    path = (provenance.get("attention_path") or {}).get("path")
    if path is not None:
        out["attention path"] = path
    revision = provenance.get("git_revision")
    if isinstance(revision, str) and revision:
        out["orbitlaw binary"] = revision[:7]
    return out


def config_changes(before, after):
    """"key a → b" for every key whose value differs between two flattened configs (absent: "–")."""
    def text(v):
        return "–" if v is None else json.dumps(v)

    return [f"{key} {text(before.get(key))} → {text(after.get(key))}"
            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]


# (name, the per-seed values of one kind in one run, range of the quantity)
QUANTITIES = (
    ("1-step ratio", lambda cells, kepler: cells["ratios"], NONNEGATIVE),
    ("star-mass exponent", lambda cells, kepler: cells["mass_exponents"], UNBOUNDED),
    ("Kepler R² of a", lambda cells, kepler: kepler, R2),
)


def rows(runs, training_data):
    """[kind, "later − earlier" run names, config changes, quantity, difference, "[low, high]", excludes 0] for
    every kind with at least 2 seeds in two of the runs (in page order), and every quantity both runs have for
    it. training_data(config) gives {kind: training set} of a run's experiment.json."""
    per_run = []
    for run in runs:
        config = read_json(os.path.join(run, "experiment.json")) or {}
        kinds, _ = behaviour_table.by_kind(run)
        per_run.append((os.path.basename(os.path.normpath(run)), run, training_data(config),
                        {k: behaviour_table.kind_cells(bs) for k, bs in kinds.items()}, kepler_table.per_seed(run)))
    out = []
    for i, (name_a, run_a, data_a, cells_a, kepler_a) in enumerate(per_run):
        for name_b, run_b, data_b, cells_b, kepler_b in per_run[i + 1:]:
            for kind in cells_a:
                if kind not in cells_b:
                    continue
                changes = config_changes(kind_configs(run_a, kind, data_a.get(kind, "train")),
                                         kind_configs(run_b, kind, data_b.get(kind, "train")))
                said = "; ".join(changes) if changes else "nothing in the configs"
                for quantity, values, bounds in QUANTITIES:
                    d = difference_ci(values(cells_b[kind], kepler_b.get(kind, [])),
                                      values(cells_a[kind], kepler_a.get(kind, [])), bounds)
                    if d is None:
                        continue
                    fmt = behaviour_table.fmt
                    out.append([kind, f"{name_b} − {name_a}", said, quantity, fmt(d.estimate),
                                f"[{fmt(d.low)}, {fmt(d.high)}]", "yes" if d.low > 0 or d.high < 0 else "no"])
    return out
