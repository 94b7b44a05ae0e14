"""A results page (docs/results/<experiment>.md): the answer of one or more run folders of an experiment, each
with the command, commits, machine, threads, seeds and wall time that its own records hold.

Written by `experiments/report.py --results-page PATH --run RUN [--run RUN ...]`, which reads the run folders
and writes nothing into them. Every number is read from the run folder: the behaviour from each model's
eval.json (the tables of experiments/lib/behaviour_table.py), the probes from compare/compare.json, the command
and commit from provenance.json, the machine and threads from the stages' *.provenance.json, the wall time from
stages/*.done. What a run folder does not record is printed as "not recorded".

The README's answer table is generated from these pages (scripts/readme_answer.py), so the marker lines
(`<!-- answer-table RUN -->`) and the answer table's header are an interface: change them together.
"""
import datetime
import glob
import itertools
import os

import behaviour_table
import kepler_table
import kind_plot
import kind_sentences
import run_differences
from run_differences import read_json  # None where the file is missing or not JSON
from seedstats import NONNEGATIVE, R2, UNBOUNDED, difference_ci
from expconfig import is_control, model_seeds, seed_count

NOT_RECORDED = "not recorded"
ANSWER_MARKER = "<!-- answer-table {run} seeds={seeds} -->"
ANSWER_HEADER = ["model", "seeds", "learned in", "1-step median / constant acceleration's", "ladder",
                 "a_impl r exponent", "s", "star-mass exponent"]


# --- what the run folder records ---------------------------------------------------------------------------


def duration(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def utc(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def wall_time(run):
    """The span from the first stage's start to the last stage's end, the sum of the stages' own times, and how
    often the driver was invoked on the folder."""
    done = [d for d in (read_json(p) for p in sorted(glob.glob(os.path.join(run, "stages", "*.done")))) if d]
    done = [d for d in done if d.get("started_utc") and d.get("finished_utc")]
    if not done:
        return NOT_RECORDED
    span = (max(utc(d["finished_utc"]) for d in done) - min(utc(d["started_utc"]) for d in done)).total_seconds()
    total = sum(d.get("seconds") or 0 for d in done)
    try:
        with open(os.path.join(run, "logs", "invocations.log")) as f:
            invocations = sum(1 for line in f if line.strip())
    except OSError:
        invocations = None
    text = (f"{duration(span)} from the first stage's start to the last stage's end ({len(done)} stages; their "
            f"own times add up to {duration(total)})")
    if invocations == 1:
        text += "; one invocation of the driver"
    elif invocations:
        text += f"; {invocations} invocations of the driver (the span includes the time between them)"
    return text


def stage_provenances(run):
    found = []
    for path in sorted(glob.glob(os.path.join(run, "**", "*.provenance.json"), recursive=True)):
        record = read_json(path)
        if isinstance(record, dict):
            found.append(record)
    return found


def joined(values):
    values = sorted({str(v) for v in values if v is not None})
    return ", ".join(values) if values else NOT_RECORDED


def provenance_items(run, config):
    """(what, value) pairs of the run's provenance, each read from its records or NOT_RECORDED."""
    top = read_json(os.path.join(run, "provenance.json")) or {}
    stages = stage_provenances(run)
    trains = [p for p in stages if p.get("stage") == "train"]
    evals = [p for p in stages if p.get("stage") == "eval"]
    revision = top.get("git_revision")
    driver = NOT_RECORDED if not revision else (revision[:7] + (" with uncommitted changes" if top.get("git_dirty")
                                                                  else ""))
    binaries = joined(p.get("git_revision", "")[:7] or None for p in stages)
    # Evaluations record the threads they used under "compute" (since fbf93bc); older ones only their setting.
    eval_threads = joined((p.get("compute") or {}).get("cpu_threads") for p in evals)
    if eval_threads == NOT_RECORDED:
        eval_threads = joined((p.get("config") or {}).get("threads") for p in evals)
        if eval_threads != NOT_RECORDED:
            eval_threads = f"setting {eval_threads} (0: LibTorch's default); the number used is {NOT_RECORDED}"
    seeds = {}
    for kind in (config.get("models") or {}):
        try:
            seeds[kind] = model_seeds(config, kind)
        except ValueError:
            seeds[kind] = None
    seed_text = joined(", ".join(map(str, s)) for s in seeds.values() if s) if seeds else NOT_RECORDED
    if len({tuple(s) for s in seeds.values() if s}) == 1:
        seed_text = f"{seed_count(config)} per model: " + seed_text
    cpus = top.get("cpus")
    return [
        ("command", f"`{top['command_line'].strip()}`" if top.get("command_line") else NOT_RECORDED),
        ("commit (driver and configs)", driver),
        ("commit (orbitlaw binary, from the stages' provenance)", binaries),
        ("machine", f"host {top.get('host', NOT_RECORDED)}, {cpus if cpus else NOT_RECORDED} CPUs"),
        ("CPU capability (LibTorch)", joined(p.get("cpu_capability") for p in trains)),
        ("threads: train", joined(p.get("cpu_threads") for p in trains)),
        ("threads: eval", eval_threads),
        ("training seeds", seed_text),
        ("wall time", wall_time(run)),
        ("started", top.get("created_utc", NOT_RECORDED)),
        ("smoke size", "yes" if config.get("smoke") else "no"),
    ]


# --- tables ------------------------------------------------------------------------------------------------


def cell(text):
    return str(text).replace("|", "\\|")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]


def answer_rows(run):
    kinds, labels = behaviour_table.by_kind(run)
    rows = []
    for kind, bs in kinds.items():
        c = behaviour_table.kind_cells(bs)
        s = c["s"] or "–"
        if c["mass_s"]:
            s = f"{c['mass_s']} (mass transplant); {s} (full)"
        rows.append([f"{labels.get(kind, kind)} [{kind}]", str(c["seeds"]), f"{c['learned']} of {c['seeds']}",
                     c["ratio"], c["ladder"], c["exponent"], s, c["mass_exponent"] or "–"])
    return rows


def training_data(config):
    """{kind: the name of the dataset it was trained on} from experiment.json (a model's own inputs.train, else
    the experiment's)."""
    default = (config.get("inputs") or {}).get("train", "train")
    return {kind: ((spec or {}).get("inputs") or {}).get("train", default)
            for kind, spec in (config.get("models") or {}).items()}


def difference_rows(run):
    """Every pair of model kinds with at least 2 seeds each that were trained on the same data (a difference
    between kinds trained on different data is not a difference the kinds make): the difference of their
    1-step ratios (and of their star-mass exponents where both have one), with its 95% interval
    (experiments/lib/seedstats.py: Welch, as neither difference has a bound)."""
    kinds, _ = behaviour_table.by_kind(run)
    cells = {k: behaviour_table.kind_cells(bs) for k, bs in kinds.items()}
    data = training_data(read_json(os.path.join(run, "experiment.json")) or {})
    rows = []
    for a, b in itertools.combinations(cells, 2):
        if data.get(a) != data.get(b):
            continue
        for what, key, bounds in (("1-step ratio", "ratios", NONNEGATIVE),
                                  ("star-mass exponent", "mass_exponents", UNBOUNDED)):
            d = difference_ci(cells[a][key], cells[b][key], bounds)
            if d is None:
                continue
            excludes = "yes" if d.low > 0 or d.high < 0 else "no"
            rows.append([f"{a} − {b}", what, behaviour_table.fmt(d.estimate),
                         f"[{behaviour_table.fmt(d.low)}, {behaviour_table.fmt(d.high)}]", excludes])
    return rows


# The probes of a model, and the raw-input control (a ridge on the last 3 positions, no network), whose rows are
# per model kind as well: its labels and data are the kind's.
MODEL_PROBES = ("linear", "finetune", "linear_vector", "raw_input_vector")


def probe_rows(run, config):
    """Per model kind and probe: R² over seeds, Newton galaxies per seed (srbench / strict tier) under each
    protocol, and the power-law exponent of the probe's output in r per seed."""
    compare = read_json(os.path.join(run, "compare", "compare.json"))
    if not compare:
        return []
    several = seed_count(config) > 1
    values = {}  # (kind, probe) -> {"r2": {seed: r2}, protocol: {seed: (srbench, strict, n)}, "e": {seed: e}}
    for row in compare.get("rows") or []:
        tag, probe = row.get("model", ""), row.get("probe")
        kind, _, seed = tag.partition("/seed-") if several else (tag, "", "1")
        if probe not in MODEL_PROBES:
            continue
        v = values.setdefault((kind, probe), {"r2": {}, "e": {}})
        v["r2"][seed] = row.get("r2")
        e = (row.get("exponents") or {}).get("e") or [None]
        v["e"][seed] = e[0]
        if row.get("protocol"):
            tiers = row.get("tiers") or {}
            v.setdefault(row["protocol"], {})[seed] = (tiers.get("srbench"), tiers.get("strict"),
                                                      len(row.get("galaxies") or []))
    rows = []
    for (kind, probe), v in values.items():
        r2 = [x for x in v["r2"].values() if x is not None]
        r2_text = behaviour_table.spread(r2, R2) if r2 else "–"  # R² <= 1: the bootstrap interval

        def galaxies(protocol):
            per_seed = v.get(protocol) or {}
            return ", ".join(f"{s} / {t} of {n}" for s, t, n in per_seed.values()) or "–"

        exponents = ", ".join(behaviour_table.fmt(x, 3) for x in v["e"].values() if x is not None) or "–"
        name = f"{probe} (no network)" if probe == "raw_input_vector" else probe
        rows.append([kind, name, str(len(v["r2"])), r2_text, galaxies("published"), galaxies("extended"), exponents])
    return rows


def kind_figure(run, config, name, folder, write):
    """The per-kind plot of `run` (experiments/lib/kind_plot.py) as `name` in `folder`, drawn where `write` is
    set; its name, or None where no kind has a value to plot."""
    data = training_data(config)
    if not kind_plot.plotted(kind_plot.points(run, config, data)):
        return None
    if write:
        kind_plot.draw(run, config, data, os.path.join(folder, name))
    return name


def run_section(run, figure=None):
    """The page's section of one run folder; figure(run, config): the file name of its per-kind plot, or
    None."""
    config = read_json(os.path.join(run, "experiment.json")) or {}
    name = os.path.basename(os.path.normpath(run))
    seeds = seed_count(config)
    lines = [f"## Run `{name}`: {seeds} seed{'s' if seeds != 1 else ''} per model", ""]
    if seeds < 3:
        lines += [f"{seeds} seed{'s' if seeds != 1 else ''} per model: an anecdote, not a verdict (the verdict "
                  "needs every one of at least 3 seeds to pass).", ""]
    lines += table(["record", "value"], provenance_items(run, config)) + [""]
    answers = answer_rows(run)
    if answers:
        lines += ["Each model's own predictions (docs/design.md section 6c). Over seeds: mean [95% interval], the "
                  "1-step ratio's (at least 0) by the seed bootstrap, the exponents' and s's by Student's t "
                  "(docs/experiments.md, Intervals over seeds); with one seed, the exponent's bootstrap interval "
                  "over systems.", "",
                  ANSWER_MARKER.format(run=name, seeds=seeds)]
        lines += table(ANSWER_HEADER, answers) + [""]
        kinds, labels = behaviour_table.by_kind(run)
        cells = {k: behaviour_table.kind_cells(bs) for k, bs in kinds.items()}
        controls = {k for k in kinds if is_control(config, k)}
        lines += ["One sentence per model kind, each comparison within the kind's training data: against the first "
                  "trained kind and the untrained control of that data (the Kepler R² against the control's, since "
                  "the control's random features already beat a ridge on the raw input), \"higher\"/\"lower\" "
                  "only where the Welch 95% interval of the difference excludes 0.", ""]
        lines += kind_sentences.sentences(config, cells, labels, controls, kepler_table.per_seed(run)) + [""]
        plot = figure(run, config) if figure else None
        if plot:
            lines += [f"![Each model kind over its seeds: the quantities of the sentences, with 95% intervals]({plot})",
                      ""]
        differences = difference_rows(run)
        if differences:
            lines += ["Differences between model kinds trained on the same data (first minus second), Welch 95% "
                      "intervals over seeds; every such pair is listed, with no correction for the number of "
                      "comparisons.", ""]
            lines += table(["kinds", "quantity", "difference", "95% interval", "excludes 0"], differences) + [""]
        rows, _ = behaviour_table.tables(run)
        lines += ["Per seed:", ""] + table(behaviour_table.HEADER, rows) + [""]
    else:
        lines += ["No model's eval measured the behaviour in this run.", ""]
    kepler = kepler_table.rows(run, list((config.get("models") or {})))
    if kepler:
        lines += ["Kepler probes (docs/design.md section 6b): held-out R² of linear probes for the orbit's "
                  "elements from the hidden states (the phase: the mean of cos and sin of the true anomaly), and "
                  "selectivity, the model's R² minus the raw-input control's (a ridge on the model's input window, "
                  "no network). Over seeds: mean [95% interval], R² by the seed bootstrap (at most 1), selectivity "
                  "by Student's t.", ""]
        lines += table(kepler_table.HEADER, kepler) + [""]
    probes = probe_rows(run, config)
    if probes:
        lines += ["Supervised probes of the acceleration (compare/compare.json). A probe is fitted to its labels, so "
                  "its law is the labels' law; the controls show what it reads without a trained network. R²: mean "
                  "[95% seed-bootstrap interval] (R² is at most 1). Newton "
                  "galaxies per seed as srbench / strict tier of the galaxies searched; exponent: the power law "
                  "of the probe's output in r, per seed.", ""]
        lines += table(["model", "probe", "seeds", "R²", "Newton galaxies (published protocol)",
                        "Newton galaxies (extended protocol)", "exponent per seed"], probes) + [""]
    return lines


# The first lines of every page page() writes: an existing file is replaced only where it begins so.
TITLE = "# Results: "
GENERATED = "Generated from run folders by the report step; do not edit by hand, regenerate:"


def is_page(path):
    """True where the file at `path` begins as page() writes a page (its title, then GENERATED)."""
    try:
        with open(path, encoding="utf-8") as f:
            head = [f.readline().rstrip("\n") for _ in range(3)]
    except (OSError, UnicodeDecodeError):
        return False
    return head[0].startswith(TITLE) and head[1:] == ["", GENERATED]


def page(experiment, runs, command, figure=None):
    lines = [f"{TITLE}{experiment}", "", GENERATED, "",
             "```", command, "```", "",
             "The run folders are not in the repository; each section names the command and commits that made its "
             "folder. How to read these tables: docs/experiments.md (Reading the report); the test and the verdict: "
             "docs/design.md section 6c.", ""]
    for run in runs:
        lines += run_section(run, figure)
    between = run_differences.rows(runs, training_data) if len(runs) > 1 else []
    if between:
        lines += ["## Between runs", "",
                  "The same model kind in two run folders of this page (the later folder minus the earlier), with "
                  "every key of its train config and of its training data's simulate config that differs between "
                  "the two (experiments/lib/run_differences.py). Welch 95% intervals over seeds; a difference is "
                  "one the configs make only where the configs list what differs.", ""]
        lines += table(["kind", "runs", "what differs", "quantity", "difference", "95% interval", "excludes 0"],
                       between) + [""]
    return "\n".join(lines).rstrip() + "\n"
