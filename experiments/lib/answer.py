"""The report's answer: each model's numbers over its training seeds, and one sentence per model that says only
what the seed-to-seed spread allows.

experiments/report.py reads the values from the run folder into one ModelSeeds per model and calls
summary_rows() and sentence() with its own number format, so that the answer quotes the numbers exactly as
the rest of the report (and the tests) print them.

The rule the sentences follow: the spread is the sample standard deviation over seeds (n - 1). A difference,
between a model and its baseline or between two models, is called a difference only when it is larger than
the spread (for two models, the larger of their two spreads; for a model and its baseline, the spread of the
per-seed differences); otherwise the sentence says "no difference at this number of seeds". With one seed
there is no spread at all, and the sentence says that it rests on one seed.
"""
import statistics

RULE = ("Spread: the sample standard deviation over seeds (n − 1). A difference no larger than the "
        "seed-to-seed spread — for a model against its previous-position baseline, the spread of the per-seed "
        "differences; between two models, the larger of their two spreads — is reported as no difference at "
        "this number of seeds; with one seed there is no spread, and the sentence says that it rests on one seed.")


class ModelSeeds:
    """One model's values per training seed: {seed: value}, a value None where its file was missing. A
    quantity whose stage the experiment does not run stays an empty dict and is left out of the answer."""

    def __init__(self, name, seeds):
        self.name = name
        self.seeds = list(seeds)
        self.val_loss = {}
        self.step1 = {}
        self.step1_previous = {}
        self.r2 = {}  # probe -> {seed: R²}
        self.newton = {}  # (probe, protocol, galaxies) -> {seed: galaxies recovering Newton (srbench)}
        self.law_search = False  # whether the experiment compares probes with Newton at all

    def quantities(self):
        """(name of the quantity, {seed: value}) in the order of the summary table."""
        rows = [("final validation loss (nats)", self.val_loss), ("1-step error (AU)", self.step1),
                ("1-step error of the previous position (AU)", self.step1_previous)]
        rows = [(quantity, values) for quantity, values in rows if values]
        rows += [(f"probe R², {probe}", values) for probe, values in self.r2.items()]
        rows += [(f"Newton galaxies (srbench) of {n}, {probe} / {protocol}", values)
                 for (probe, protocol, n), values in self.newton.items()]
        return rows


def stats(values):
    """(mean, spread or None, number of seeds with a value), or None when no seed has one."""
    xs = [v for v in values.values() if v is not None]
    if not xs:
        return None
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else None), len(xs)


def summary_rows(models, fmt):
    """Rows of the summary table: model, quantity, mean ± spread, seeds with a value, every seed's value."""
    rows = []
    for model in models:
        for quantity, values in model.quantities():
            s = stats(values)
            if s is None:
                rows.append([model.name, quantity, "missing", f"0 of {len(model.seeds)}", "–"])
                continue
            mean, spread, n = s
            centre = f"{fmt(mean)} ± {fmt(spread)}" if spread is not None else f"{fmt(mean)} (one seed)"
            per_seed = "; ".join(f"seed {seed}: {fmt(values.get(seed))}" for seed in model.seeds)
            rows.append([model.name, quantity, centre, f"{n} of {len(model.seeds)}", per_seed])
    return rows


def compared(difference, spread, fmt, unit="", several=False):
    """'lower by X' / 'higher by X', then whether it exceeds the spread (None: one value, no spread; several:
    the model has more seeds than values, so the missing ones are the reason)."""
    if difference == 0:
        return "no difference at this number of seeds (the same)" if spread is not None else "the same"
    direction = "lower" if difference < 0 else "higher"
    size = f"{fmt(abs(difference))}{unit}"
    if spread is None:
        return f"{direction} by {size}" + (" (one seed has a value: no spread is known)" if several else "")
    if abs(difference) > spread:
        return f"{direction} by {size}, more than the seed-to-seed spread ({fmt(spread)}{unit})"
    return f"no difference at this number of seeds ({direction} by {size}, within the spread of {fmt(spread)}{unit})"


def centre(s, fmt, unit="", seeds=None):
    """mean ± spread, and how many seeds had a value when some did not."""
    mean, spread, n = s
    text = f"{fmt(mean)}{unit}" if spread is None else f"{fmt(mean)} ± {fmt(spread)}{unit}"
    return text + (f" ({n} of {seeds} seeds)" if seeds and n < seeds else "")


def step_clause(model, fmt):
    if not model.step1:
        return None  # no evaluation in this experiment
    model_s, base_s = stats(model.step1), stats(model.step1_previous)
    if model_s is None or base_s is None:
        return "no 1-step error to weigh against the previous position (eval.json missing)"
    differences = {seed: model.step1[seed] - model.step1_previous[seed] for seed in model.seeds
                   if model.step1.get(seed) is not None and model.step1_previous.get(seed) is not None}
    d = stats(differences)
    if d is None:
        return "no seed has both a 1-step error and its previous-position baseline"
    n = len(model.seeds)
    verdict = compared(d[0], d[1], fmt, " AU", several=n > 1)
    return (f"1-step error {centre(model_s, fmt, ' AU', n)} against {fmt(base_s[0])} AU for the previous position: "
            f"{verdict}")


def loss_clause(model, models, fmt):
    """The model's validation loss against the best other model's (the model with the lowest mean loss)."""
    if not model.val_loss:
        return None  # no training in this experiment
    own = stats(model.val_loss)
    if own is None:
        return "no validation loss (metrics.jsonl missing)"
    others = [(stats(m.val_loss), m) for m in models if m is not model]
    others = [(s, m) for s, m in others if s is not None]
    if not others:
        return f"validation loss {centre(own, fmt, ' nats', len(model.seeds))}"
    other_s, other = min(others, key=lambda pair: pair[0][0])
    spread = None if own[1] is None or other_s[1] is None else max(own[1], other_s[1])
    several = len(model.seeds) > 1 or len(other.seeds) > 1
    return (f"validation loss {centre(own, fmt, ' nats', len(model.seeds))} against {other.name}'s "
            f"{fmt(other_s[0])}: {compared(own[0] - other_s[0], spread, fmt, several=several)}")


def newton_clause(model, fmt):
    if not model.law_search:
        return None
    found = [(stats(values), key) for key, values in model.newton.items()]
    found = [(s, key) for s, key in found if s is not None]
    if not found:
        return "no law search of a model probe to count Newton galaxies in"
    best, (probe, protocol, n) = max(found, key=lambda pair: pair[0][0])
    if best[0] == 0:
        return "Newton's law recovered in no galaxy of any model probe and protocol (srbench)"
    return (f"Newton's law in {centre(best, fmt, seeds=len(model.seeds))} of {n} galaxies at best "
            f"({probe}, {protocol}; srbench)")


def sentence(model, models, fmt):
    """The model's sentence of the answer, generated from its values and their spread."""
    seeds = ", ".join(str(s) for s in model.seeds)
    if len(model.seeds) == 1:
        head = (f"**{model.name}** rests on one seed (seed {seeds}), so no difference below is known to exceed the "
                "seed-to-seed spread")
    else:
        head = f"**{model.name}** ({len(model.seeds)} seeds: {seeds})"
    clauses = [step_clause(model, fmt), loss_clause(model, models, fmt), newton_clause(model, fmt)]
    clauses = [c for c in clauses if c] or ["this experiment's stages give nothing to weigh"]
    return f"{head}: " + "; ".join(clauses) + "."
