"""The report's answer: each model's numbers over its training seeds, and one sentence per model that calls a
difference a difference only where its 95% interval over seeds excludes 0.

experiments/report.py reads the values from the run folder into one ModelSeeds per model and calls
summary_rows(), detail_rows(), sentence() and control_findings() with its own number format, so that the
answer quotes the numbers exactly as the rest of the report (and the tests) print them.

The intervals (experiments/lib/seedstats.py, shared with the results pages) are stated in METHOD, which the
report prints beside the sentences. Each quantity names its possible range (BOUNDS, and out_of(n) for a count),
from which seedstats chooses the method: the seed bootstrap where the range has a bound, Student's t or Welch
where it has none.
"""
import statistics

from seedstats import NONNEGATIVE, PASS, R2, UNBOUNDED, difference_ci, excludes_zero, mean_ci, out_of

METHOD = ("Method: 95% intervals over training seeds, chosen by the quantity's possible range "
          "(docs/experiments.md, Intervals over seeds). A mean of a quantity with a bound (a loss or an error, at "
          "least 0; R², at most 1; a count of galaxies or of passing seeds) has the seed bootstrap's interval, "
          "which cannot leave the range; at 3 seeds it is the seeds' own span [min, max]. Between two models, "
          "Welch's t interval of the difference of their means (unequal variances, Welch–Satterthwaite degrees of "
          "freedom), except for counts, whose difference has the bootstrap's interval (at 3 seeds against 3, "
          "[min of one − max of the other, max − min]: it excludes 0 only when every seed of one model is above "
          "every seed of the other); a model against its previous-position baseline, evaluated on the same data, "
          "the Student-t interval of the per-seed differences (paired). A sentence calls a difference a difference "
          "only when its interval excludes 0; an interval that includes 0 is \"not established at this number of "
          "seeds\", which is not evidence that the two are equal. With one seed there is no interval, and the "
          "sentence says \"one seed\" and claims no difference. No correction is made for the number of "
          "comparisons.")

# The possible range of each quantity of a model (seedstats.mean_ci): its interval's method follows from it.
BOUNDS = {"val_loss": NONNEGATIVE,  # cross-entropy or squared error
          "step1": NONNEGATIVE, "paired": UNBOUNDED, "r2": R2}


class ModelSeeds:
    """One model's values per training seed: {seed: value}, a value None where its file was missing. A
    quantity whose stage the experiment does not run stays an empty dict and is left out of the answer.
    control: the experiment marks the model as a control (expconfig.is_control), not a trained model."""

    def __init__(self, name, seeds, control=False):
        self.name = name
        self.seeds = list(seeds)
        self.control = control
        self.val_loss = {}
        self.step1 = {}
        self.step1_previous = {}
        self.learned = {}  # {seed: 1 where the behavioural verdict (docs/design.md section 6c) passed, else 0}
        self.r2 = {}  # probe -> {seed: R²}
        self.newton = {}  # (probe, protocol, galaxies) -> {seed: galaxies recovering Newton (srbench)}
        self.law_search = False  # whether the experiment compares probes with Newton at all

    def quantities(self):
        """(name of the quantity, {seed: value}) in the order of the detail table."""
        rows = [("final validation loss (nats)", self.val_loss), ("1-step error (AU)", self.step1),
                ("1-step error of the previous position (AU)", self.step1_previous)]
        rows = [(quantity, values) for quantity, values in rows if values]
        rows += [(f"probe R², {probe}", values) for probe, values in self.r2.items()]
        rows += [(f"Newton galaxies (srbench) of {n}, {probe} / {protocol}", values)
                 for (probe, protocol, n), values in self.newton.items()]
        return rows

    def tests(self):
        """{test: (what passing means, out of how many, {seed: count passed})}: the pass/fail tests whose counts
        control_findings() weighs between controls and trained models (more is a pass)."""
        found = {}
        if self.learned:
            found["verdict"] = ("own predictions pass the behavioural verdict", None, self.learned)
        for (probe, protocol, n), values in self.newton.items():
            found[("newton", probe, protocol, n)] = (f"{probe} probe ({protocol} protocol) recovers Newton's law "
                                                     f"(srbench)", n, values)
        return found


def present(values):
    return [v for v in values.values() if v is not None]


def stats(values):
    """(mean, SD or None, number of seeds with a value), or None when no seed has one."""
    xs = present(values)
    if not xs:
        return None
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else None), len(xs)


def interval_text(values, fmt, bounds):
    """A summary cell: centre()'s text, '(one seed)' marked; '–' without a value."""
    xs = present(values)
    if not xs:
        return "–"
    return centre(values, fmt, bounds) + (" (one seed)" if len(xs) == 1 else "")


def paired_differences(model):
    """{seed: 1-step error − the previous position's} for the seeds that have both."""
    return {seed: model.step1[seed] - model.step1_previous[seed] for seed in model.seeds
            if model.step1.get(seed) is not None and model.step1_previous.get(seed) is not None}


def best_probe(model, table):
    """(key, {seed: value}) of the probe (or probe, protocol) with the highest mean, or None."""
    found = [(stats(values), key, values) for key, values in table.items()]
    found = [(s, key, values) for s, key, values in found if s is not None]
    if not found:
        return None
    _, key, values = max(found, key=lambda item: item[0][0])
    return key, values


def summary_rows(models, fmt):
    """The summary: one row per model, each quantity as its mean and 95% interval over seeds. Columns that no
    model has (stages the experiment does not run) are left out. Returns (header, rows)."""
    columns = [
        ("final validation loss (nats)",
         lambda m: interval_text(m.val_loss, fmt, BOUNDS["val_loss"]) if m.val_loss else None),
        ("1-step error (AU)", lambda m: interval_text(m.step1, fmt, BOUNDS["step1"]) if m.step1 else None),
        ("1-step error − previous position's (AU)",
         lambda m: interval_text(paired_differences(m), fmt, BOUNDS["paired"]) if m.step1 else None),
        ("best probe R² (probe)", lambda m: probe_cell(best_probe(m, m.r2), fmt)),
        ("most Newton galaxies, srbench (probe, protocol)", lambda m: newton_cell(best_probe(m, m.newton), fmt)),
    ]
    header = ["model", "seeds"]
    cells = [[m.name + (" (control)" if m.control else ""), str(len(m.seeds))] for m in models]
    for title, cell in columns:
        values = [cell(m) for m in models]
        if all(v is None for v in values):
            continue
        header.append(title)
        for row, value in zip(cells, values):
            row.append("–" if value is None else value)
    return header, cells


def probe_cell(best, fmt):
    if best is None:
        return None
    probe, values = best
    return f"{interval_text(values, fmt, BOUNDS['r2'])} ({probe})"


def newton_cell(best, fmt):
    if best is None:
        return None
    (probe, protocol, n), values = best
    return f"{interval_text(values, fmt, out_of(n))} of {n} ({probe}, {protocol})"


def detail_rows(models, fmt):
    """Rows of the detail table: model, quantity, mean (SD), seeds with a value, every seed's value. The SD is
    written in words, not as "±", so that it is not read as an interval."""
    rows = []
    for model in models:
        for quantity, values in model.quantities():
            s = stats(values)
            if s is None:
                rows.append([model.name, quantity, "missing", f"0 of {len(model.seeds)}", "–"])
                continue
            mean, spread, n = s
            centre = f"{fmt(mean)} (SD {fmt(spread)})" if spread is not None else f"{fmt(mean)} (one seed)"
            per_seed = "; ".join(f"seed {seed}: {fmt(values.get(seed))}" for seed in model.seeds)
            rows.append([model.name, quantity, centre, f"{n} of {len(model.seeds)}", per_seed])
    return rows


def compared(interval, difference, fmt, unit="", several=False):
    """The verdict on a difference: 'lower by X, 95% interval [a, b]' only when the interval excludes 0. interval:
    (difference, low, high) or None when a side has one value (several: the model has more seeds than values,
    so the missing ones are the reason)."""
    direction = "lower" if difference < 0 else "higher"
    size = f"{fmt(abs(difference))}{unit}"
    if interval is None:
        why = "one seed has a value" if several else "one seed"
        return (f"{direction} by {size} ({why}: no interval, no difference claimed)" if difference
                else f"the same ({why}: no interval)")
    bounds = f"95% interval [{fmt(interval[1])}, {fmt(interval[2])}]{unit}"
    if excludes_zero(interval):
        return f"{direction} by {size}, {bounds}"
    if difference == 0:
        return f"no difference established at this number of seeds (the same, {bounds})"
    return f"no difference established at this number of seeds ({direction} by {size}; {bounds} includes 0)"


def centre(values, fmt, bounds, unit="", seeds=None):
    """The mean with its 95% interval over seeds ('one seed' without one), by the quantity's range (bounds,
    seedstats.mean_ci), and how many seeds had a value when some did not."""
    xs = present(values)
    i = mean_ci(xs, bounds)
    text = f"{fmt(xs[0])}{unit}" if i is None else f"{fmt(i.estimate)} [{fmt(i.low)}, {fmt(i.high)}]{unit}"
    return text + (f" ({len(xs)} of {seeds} seeds)" if seeds and len(xs) < seeds else "")


def step_clause(model, fmt):
    if not model.step1:
        return None  # no evaluation in this experiment
    model_s, base_s = stats(model.step1), stats(model.step1_previous)
    if model_s is None or base_s is None:
        return "no 1-step error to weigh against the previous position (eval.json missing)"
    differences = present(paired_differences(model))
    if not differences:
        return "no seed has both a 1-step error and its previous-position baseline"
    n = len(model.seeds)
    verdict = compared(mean_ci(differences, BOUNDS["paired"]), statistics.fmean(differences), fmt, " AU",
                       several=n > 1)
    return (f"1-step error {centre(model.step1, fmt, BOUNDS['step1'], ' AU', n)} against {fmt(base_s[0])} AU for "
            f"the previous position: {verdict}")


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
        return f"validation loss {centre(model.val_loss, fmt, BOUNDS['val_loss'], ' nats', len(model.seeds))}"
    other_s, other = min(others, key=lambda pair: pair[0][0])
    interval = difference_ci(present(model.val_loss), present(other.val_loss), BOUNDS["val_loss"])
    several = len(model.seeds) > 1 or len(other.seeds) > 1
    own_text = centre(model.val_loss, fmt, BOUNDS["val_loss"], " nats", len(model.seeds))
    return (f"validation loss {own_text} against {other.name}'s {fmt(other_s[0])}: "
            f"{compared(interval, own[0] - other_s[0], fmt, several=several)}")


def newton_clause(model, fmt):
    if not model.law_search:
        return None
    best = best_probe(model, model.newton)
    if best is None:
        return "no law search of a model probe to count Newton galaxies in"
    (probe, protocol, n), values = best
    if stats(values)[0] == 0:
        return "Newton's law recovered in no galaxy of any model probe and protocol (srbench)"
    how = "; mean over seeds [95% interval]" if len(present(values)) > 1 else ""
    return (f"Newton's law in {centre(values, fmt, out_of(n), seeds=len(model.seeds))} of {n} galaxies at best "
            f"({probe}, {protocol}; srbench{how})")


def sentence(model, models, fmt):
    """The model's sentence of the answer, generated from its values and their intervals over seeds."""
    seeds = ", ".join(str(s) for s in model.seeds)
    if len(model.seeds) == 1:
        head = f"**{model.name}** rests on one seed (seed {seeds}), so it claims no difference"
    else:
        head = f"**{model.name}** ({len(model.seeds)} seeds: {seeds})"
    clauses = [step_clause(model, fmt), loss_clause(model, models, fmt), newton_clause(model, fmt)]
    clauses = [c for c in clauses if c] or ["this experiment's stages give nothing to weigh"]
    return f"{head}: " + "; ".join(clauses) + "."


def control_findings(models, fmt):
    """A sentence for every control that does at least as well as the best trained model on a pass/fail test
    (ModelSeeds.tests) and passes it at all: such a test cannot credit training with what the trained models do
    on it, so the answer must say so rather than leave it in a table. The difference to the best trained model
    comes with its 95% interval, the bootstrap's (a count: seedstats.difference_ci); it is called 'more' only when
    the interval excludes 0."""
    trained = [m for m in models if not m.control]
    found = []
    for control in (m for m in models if m.control):
        for test, (what, galaxies, values) in control.tests().items():
            own = stats(values)
            rivals = [(stats(m.tests()[test][2]), m) for m in trained if test in m.tests()]
            rivals = [(s, m) for s, m in rivals if s is not None]
            if own is None or own[0] <= 0 or not rivals:
                continue
            best_s, best = max(rivals, key=lambda pair: pair[0][0])
            if own[0] < best_s[0]:
                continue
            seeds = len(present(values))
            if galaxies is None:  # the verdict: 1 per seed that passes
                rate = f"in {fmt(sum(present(values)))} of {seeds} seed{'s' if seeds != 1 else ''}"
            else:
                rate = (f"in {fmt(own[0])} of {galaxies} galaxies"
                        + (" on its one seed" if seeds == 1 else f" on average over {seeds} seeds"))
            bounds = PASS if galaxies is None else out_of(galaxies)
            interval = difference_ci(present(values), present(best.tests()[test][2]), bounds)
            d = own[0] - best_s[0]
            if interval is None:
                verdict = (f"{'more than' if d > 0 else 'as many as'} any trained model on this seed "
                           f"(at best {best.name}: {fmt(best_s[0])}); one seed, no interval")
            elif excludes_zero(interval):
                verdict = (f"more than any trained model (at best {best.name}: {fmt(best_s[0])}; difference "
                           f"{fmt(d)}, 95% interval [{fmt(interval[1])}, {fmt(interval[2])}])")
            else:
                verdict = (f"at least as many as any trained model (at best {best.name}: {fmt(best_s[0])}; "
                           f"difference {fmt(d)}, 95% interval [{fmt(interval[1])}, {fmt(interval[2])}] includes 0)")
            # The control's label may hold parentheses of its own: it ends the lead-in after a dash, not inside ().
            found.append(f"**A control does as well as the trained models** — {control.name}: its {what} {rate}, "
                         f"{verdict}. On this run, this test gives no evidence that training taught the trained "
                         "models the law.")
    return found
