"""The per-kind plot of a run folder: for each training set (a regime of the experiment), every model kind's
mean over seeds with its 95% interval, and each seed's value, for the quantities the answer sentences use
(experiments/lib/kind_sentences.py): the 1-step error against constant acceleration's, a_impl's exponents in r
and in the star's mass, the transplant slope s and the Kepler probe's held-out R² for a. The intervals are the
results pages' (experiments/lib/seedstats.py chooses the method by the quantity's range), so the plot and the
tables beside it say the same thing.

points(run) gives the numbers (tested); draw(run, path) plots them, marked as this module's in the PNG's text
(is_drawn_here(path)), so that a later page replaces only a plot it drew.
"""
import os

import atomic_file
import behaviour_table
import kepler_table
import seedstats
from expconfig import is_control
from seedstats import NONNEGATIVE, R2, UNBOUNDED

# (key, axis label, range of the quantity, reference lines as (value, what it marks))
QUANTITIES = (
    ("ratio", "1-step error / constant accel.'s (log)", NONNEGATIVE, ((1.0, "const. accel."),)),
    ("r_exponent", "a_impl exponent in r", UNBOUNDED, ((-2.0, "Newton"),)),
    ("mass_exponent", "a_impl exponent in star mass", UNBOUNDED, ((1.0, "Newton"),)),
    ("s", "transplant slope s", UNBOUNDED, ((0.0, "Newton step"), (1.0, "const. accel."))),
    ("kepler_a", "Kepler probe R² of a", R2, ()),
)


# The PNG text chunk (keyword, text) that marks a plot draw() wrote.
MARK = ("Comment", "orbitlaw results-page kind plot")


def is_drawn_here(path):
    """True where `path` is a PNG whose text chunks, before its image data, include MARK."""
    try:
        with open(path, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                return False
            while True:
                head = f.read(8)
                if len(head) < 8:
                    return False
                length, kind = int.from_bytes(head[:4], "big"), head[4:]
                if kind in (b"IDAT", b"IEND") or length > 1 << 20:
                    return False
                data = f.read(length)
                f.read(4)  # CRC
                if kind == b"tEXt" and data.split(b"\0", 1) == [s.encode("latin-1") for s in MARK]:
                    return True
    except OSError:
        return False


def seed_values(bs, kepler):
    """{quantity: [each seed's value]} of one model kind (bs: each seed's eval.json "behaviour"; kepler: each
    seed's Kepler R² for a). s is the mass transplant's where the star's mass varies (the regime's test), else
    the full transplant's."""
    cells = behaviour_table.kind_cells(bs)
    slopes = [((b.get("mass_transplant") or {}).get("slope") if b.get("mass_transplant") else None)
              for b in bs]
    if not any(s is not None for s in slopes):
        slopes = [b["transplant"]["slope"] for b in bs]
    return {
        "ratio": cells["ratios"],
        "r_exponent": [b["implied_acceleration"]["power_law"]["r_exponent"] for b in bs],
        "mass_exponent": cells["mass_exponents"],
        "s": [s for s in slopes if s is not None],
        "kepler_a": list(kepler or []),
    }


def points(run, config, data):
    """[(training set, [(kind, label, control, {quantity: (seed values, Interval or None)})])] in the
    experiment's order (config: its experiment.json): one group per training set (data: {kind: training set}),
    the kinds trained on it in config order."""
    kinds, labels = behaviour_table.by_kind(run)
    kepler = kepler_table.per_seed(run)
    groups = {}
    for kind, bs in kinds.items():
        values = seed_values(bs, kepler.get(kind))
        stats = {key: (values[key], seedstats.mean_ci(values[key], bounds))
                 for key, _, bounds, _ in QUANTITIES if values[key]}
        groups.setdefault(data.get(kind, "train"), []).append(
            (kind, labels.get(kind, kind), is_control(config, kind), stats))
    return list(groups.items())


def plotted(groups):
    """The QUANTITIES that some kind of points(...) has a value for."""
    return [q for q in QUANTITIES if any(q[0] in stats for _, kinds in groups for *_, stats in kinds)]


def draw(run, config, data, path):
    """Writes the plot of points(run, config, data) to path (PNG): a row per training set, a column per quantity that some
    kind has; each kind's seeds as dots, its mean as a diamond with the 95% interval as a bar. Returns False
    (writing nothing) where no kind has a value."""
    groups = points(run, config, data)
    keys = plotted(groups)
    if not keys:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = max(len(kinds) for _, kinds in groups)
    fig, axes = plt.subplots(len(groups), len(keys), squeeze=False, sharey="row",
                             figsize=(3.1 * len(keys) + 1.5, (0.32 * rows + 1.2) * len(groups)))
    for g, (data, kinds) in enumerate(groups):
        names = [f"{label} (untrained)" if control else label for _, label, control, _ in kinds]
        for c, (key, title, _, references) in enumerate(keys):
            ax = axes[g][c]
            for y, (_, _, control, stats) in enumerate(kinds):
                if key not in stats:
                    continue
                values, interval = stats[key]
                colour = "0.5" if control else "C0"
                ax.plot(values, [y] * len(values), "o", ms=3, color=colour, alpha=0.5)
                if interval is not None:
                    ax.errorbar([interval.estimate], [y], xerr=[[interval.estimate - interval.low],
                                                                [interval.high - interval.estimate]],
                                fmt="D", ms=5, color=colour, capsize=3)
            for value, what in references:
                ax.axvline(value, color="C3", lw=0.8, ls="--")
                ax.annotate(what, (value, 0.0), xycoords=("data", "axes fraction"), xytext=(2, 2),
                            textcoords="offset points", fontsize=7, color="C3")
            if key == "ratio":  # the untrained control's errors are thousands of times the trained kinds'
                ax.set_xscale("log")
            ax.set_yticks(range(len(kinds)))
            ax.set_yticklabels(names, fontsize=8)
            ax.set_ylim(len(kinds) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=8)
            ax.set_title(title if g == 0 else "", fontsize=9)
        axes[g][0].set_ylabel(f"trained on {data}", fontsize=9)
    fig.suptitle("Each kind over its seeds: dots, seeds; diamond and bar, mean and 95% interval", fontsize=10)
    fig.tight_layout()
    try:
        atomic_file.write_with(path, lambda f: fig.savefig(f, format="png", dpi=100,
                                                           metadata={"Software": None, MARK[0]: MARK[1]}),
                               binary=True)
    finally:
        plt.close(fig)
    return True
