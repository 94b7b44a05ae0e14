#!/usr/bin/env python3
"""The report of one experiment run folder: Markdown plus a self-contained HTML page (PNGs inlined).

Usage: report.py --run RUN_DIR [--out DIR]   (default DIR: RUN_DIR/report)
       report.py --results-page PAGE.md [--check] --run RUN_DIR [--run RUN_DIR ...]
         (the results page of one or more run folders of an experiment, experiments/lib/results_page.py; it
         writes PAGE.md only, nothing into the run folders)

Everything in the report is read from the run folder's own outputs (docs/experiments.md lists the files and
keys): the compare tables, the training metrics, eval results, probe predictions and symbolic-regression
fronts. A plot or table whose input is missing or unreadable is listed under "Missing" with the reason; it is
never replaced by anything else. Outputs: report.md, report.html, laws.md (the side-by-side table of
recovered laws against Newton that the experiment scripts print at the end), and one PNG per plot.

report.html is report.md rendered by Python-Markdown (experiments/lib/report_html.py). Newton's law and G are
quoted from compare/compare.json, as the run's compare judged the probes; the report has no G of its own.

The report opens with its answer: the per-model lines the experiment prints at its end (laws.md,
experiments/lib/behaviour_table.py), any control that does as well as the trained models on a pass/fail test,
the report's first figure, one sentence per model whose differences carry 95% intervals over seeds
(experiments/lib/answer.py, experiments/lib/seedstats.py), and a summary of one row per model; then the
tables and plots it rests on, every quantity per seed, what is missing, and provenance last.
"""
import argparse
import datetime
import difflib
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import answer  # noqa: E402  the answer section's statistics and sentences
import atomic_file  # noqa: E402  files written whole or not at all
import behaviour_table  # noqa: E402  the behavioural test's tables (docs/design.md section 6c)
import kepler_table  # noqa: E402  the Kepler probes' table (docs/design.md section 6b)
import kind_plot  # noqa: E402  the per-kind plot beside a results page
import report_html  # noqa: E402  the HTML page of the report's Markdown
import results_page  # noqa: E402  docs/results/<experiment>.md from run folders
from expconfig import is_control, model_seeds, seed_count  # noqa: E402  the driver's own rules

# The plotting stack is installed by scripts/setup.sh. On a machine without it (the bare GPU machine of
# gpu-study) the report still arrives, with its tables, and lists every plot as missing with the reason.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    PLOTTING = None
except ImportError as e:  # pragma: no cover - exercised only where matplotlib/numpy are absent
    PLOTTING = f"cannot plot on this machine ({e})"


def fmt(value, digits=4):
    """The one number format of the report (tests recompute it from the run's JSON)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}g}"
    return str(value)


class Report:
    """The report's blocks, rendered as Markdown; the HTML page is that Markdown rendered."""

    def __init__(self, run, out):
        self.run = run
        self.out = out
        self.blocks = []
        self.missing = []  # (what, why)
        self.plots = []

    def heading(self, text, level=2):
        self.blocks.append(("heading", level, text))

    def para(self, text):
        self.blocks.append(("para", text))

    def table(self, header, rows):
        self.blocks.append(("table", header, rows))

    def markdown(self, text):
        """Markdown written by another stage (orbitlaw compare), embedded as it is."""
        self.blocks.append(("markdown", text))

    def image(self, name, caption):
        self.blocks.append(("image", name, caption))
        self.plots.append(name)

    def figure_slot(self):
        """Where place_first_figure() puts the report's first figure, once the sections have made it."""
        self.blocks.append(("slot",))

    def place_first_figure(self, names):
        """Moves the first plot of `names` that this report made (in that order of preference) to the slot, so
        that the answer shows it; its tables stay where they were. Nothing moves where none was made."""
        images = {block[1]: i for i, block in enumerate(self.blocks) if block[0] == "image"}
        slot = next((i for i, block in enumerate(self.blocks) if block[0] == "slot"), None)
        name = next((n for n in names if n in images), None)
        if slot is None or name is None:
            return
        block = self.blocks.pop(images[name])
        self.blocks[slot] = block

    def lack(self, what, why):
        self.missing.append((what, why))
        self.blocks.append(("missing", what, why))

    def rel(self, path):
        return os.path.relpath(path, self.run)

    # --- rendering ---

    def to_markdown(self):
        lines = []
        for block in self.blocks:
            kind = block[0]
            if kind == "heading":
                lines += ["#" * block[1] + " " + block[2], ""]
            elif kind == "para":
                lines += [block[1], ""]
            elif kind == "table":
                lines += markdown_table(block[1], block[2]) + [""]
            elif kind == "markdown":
                lines += [block[1].rstrip(), ""]
            elif kind == "image":
                lines += [f"![{block[2]}]({block[1]})", "", f"*{block[2]}*", ""]
            elif kind == "missing":
                lines += [f"> **missing: {block[1]}** — {block[2]}", ""]
        return "\n".join(lines)

    def to_html(self, title):
        """The page of to_markdown()'s text (experiments/lib/report_html.py), its PNGs inlined."""
        return report_html.page(self.to_markdown(), title, self.out)


def markdown_table(header, rows, literal=True):
    """A pipe table. literal: every cell reads as the text it is (a law's '*' is not emphasis in the HTML page);
    laws.md, printed on a terminal, keeps its cells unescaped (literal=False)."""
    def cell(value):
        text = fmt(value).replace("|", "\\|")
        return text.replace("*", "\\*") if literal else text

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


# --- reading the run's outputs ------------------------------------------------------------------------------


class ReportError(Exception):
    """A run folder the report cannot read: printed as one line, never as a traceback."""


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ReportError(f"'{path}' is not valid JSON (line {e.lineno}: {e.msg})") from None
    except OSError as e:
        raise ReportError(f"cannot read '{path}': {e.strerror}") from None


LOSS_KEYS = ("loss", "train_loss", "val_loss")


def checked_losses(record, where):
    """`record` (a metrics line, an eval.json) with its losses checked: a loss that is not a number (or null)
    would be printed as if it were one."""
    if isinstance(record, dict):
        for key in LOSS_KEYS:
            value = record.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ReportError(f"{where}: '{key}' is not a number ({json.dumps(value)})")
    return record


def read_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if line:
                    rows.append(checked_losses(json.loads(line), f"'{path}' line {number}"))
    except json.JSONDecodeError as e:
        raise ReportError(f"'{path}' line {number} is not valid JSON ({e.msg})") from None
    except OSError as e:
        raise ReportError(f"cannot read '{path}': {e.strerror}") from None
    return rows


def model_kinds(run, config):
    kinds = list((config.get("models") or {}).keys())
    return kinds


def label(config, kind):
    return ((config.get("models") or {}).get(kind) or {}).get("label", kind)


class Replicate:
    """One trained model: a model kind at one training seed, and where the driver put its outputs."""

    def __init__(self, run, config, kind, seed, several):
        self.kind, self.seed = kind, seed
        # The folder below models/ and probe/, also the label the probe (and so compare) names the model by.
        self.tag = f"{kind}/seed-{seed}" if several else kind
        self.stage = self.tag.replace("/", "-")  # stage, configs/ and plot file names
        self.name = f"{label(config, kind)}, seed {seed}" if several else label(config, kind)
        self.model_dir = os.path.join(run, "models", self.tag)
        self.probe_dir = os.path.join(run, "probe", self.tag)


def replicates(run, config):
    """Every model at every training seed, in the driver's order (experiments/lib/stages.py)."""
    several = seed_count(config) > 1
    out = []
    for kind in model_kinds(run, config):
        try:
            seeds = model_seeds(config, kind)
        except ValueError:
            if several:
                raise
            seeds = [None]  # one seed: the folders do not depend on it, so the report does not need it
        out += [Replicate(run, config, kind, seed, several) for seed in seeds]
    return out


def first_key(row, *names):
    for name in names:
        if name in row and row[name] is not None:
            return name
    return None


# --- sections -----------------------------------------------------------------------------------------------


def section_title(rep, config):
    name = config.get("experiment", "?")
    rep.heading(f"orbitlaw experiment: {name}{' (smoke)' if config.get('smoke') else ''}", 1)


def section_answer(rep, config, reps):
    """The report's opening: the same per-model lines the experiment prints at its end (behaviour_table), any
    control that does as well as the trained models, the first figure (placed by place_first_figure), one
    sentence per model whose differences carry 95% intervals over seeds, and a summary of one row per model.
    Returns the models' values per seed, for the detail table further down."""
    models = seed_values(rep, config, reps)
    rep.heading("Answer")
    behaviour = behaviour_table.terminal_text(rep.run)
    if behaviour:
        rep.markdown(behaviour)
    for finding in answer.control_findings(models, fmt):
        rep.para(finding)
    rep.figure_slot()
    rep.heading("Differences over seeds", 3)
    for model in models:
        rep.para(answer.sentence(model, models, fmt))
    rep.para(answer.METHOD)
    rep.heading("Summary: one row per model", 3)
    rep.para("Mean over seeds and its 95% interval [low, high], by the quantity's range as the method says (\"one "
             "seed\": no interval): final "
             "validation loss from each seed's metrics.jsonl, 1-step errors from its eval.json (the difference to "
             "the previous position is per seed, paired), probe R² and Newton galaxies from compare/compare.json "
             "(model probes only, the best probe and protocol by mean; the oracles and controls are in the compare "
             "tables below). Every quantity, per seed: \"Every quantity over seeds\" further down.")
    header, rows = answer.summary_rows(models, fmt)
    rep.table(header, rows)
    return models


def section_detail(rep, models):
    """Every quantity of the answer, per model and seed: what the one-row summary condenses."""
    rep.heading("Every quantity over seeds")
    rep.para("Final validation loss, 1-step errors, every model probe's R² and Newton galaxies under each protocol. "
             "Mean and sample standard deviation (SD) over the seeds, then every seed's value.")
    rep.table(["model", "quantity", "mean (SD)", "seeds", "value per seed"], answer.detail_rows(models, fmt))


# The figure the answer shows, the first of these that the report made: the rollout errors against the
# baselines (the behavioural ladder's rungs), else the training curves of an experiment without eval.
FIRST_FIGURES = ("trajectory_error.png", "training_curves.png")

# Probes that do not read the model (oracles and the random-feature control): not part of a model's answer.
CONTROL_PROBES = {"knn", "knn_log", "newton", "random", "raw_input", "raw_input_vector"}


def seed_values(rep, config, reps):
    """Per model, the answer's values of each seed, read from the files the rest of the report reads."""
    stages = config.get("stages", [])
    compare_path = os.path.join(rep.run, "compare", "compare.json")
    compare_rows = read_json(compare_path).get("rows", []) if os.path.exists(compare_path) else []
    models = {}
    for r in reps:
        model = models.setdefault(r.kind, answer.ModelSeeds(label(config, r.kind), [], is_control(config, r.kind)))
        model.seeds.append(r.seed)
        model.law_search = "compare" in stages
        if "train" in stages:
            metrics = os.path.join(r.model_dir, "metrics.jsonl")
            rows = read_jsonl(metrics) if os.path.exists(metrics) else []
            model.val_loss[r.seed] = next((m["val_loss"] for m in reversed(rows) if m.get("val_loss") is not None), None)
        if "eval" in stages:
            evaluation = os.path.join(r.model_dir, "eval.json")
            record = read_json(evaluation) if os.path.exists(evaluation) else {}
            one_step = (record.get("trajectory_error") or {}).get("1") or {}
            model.step1[r.seed] = one_step.get("model")
            model.step1_previous[r.seed] = one_step.get("previous_position")
            behaviour = record.get("behaviour") or {}
            if behaviour.get("available"):
                model.learned[r.seed] = int(bool((behaviour.get("verdict") or {}).get("learned")))
        for row in compare_rows:
            if row.get("model") != r.tag or row.get("probe") in CONTROL_PROBES:
                continue
            model.r2.setdefault(row.get("probe"), {}).setdefault(r.seed, row.get("r2"))
            galaxies = row.get("galaxies") or []
            if row.get("protocol") and galaxies:
                newton = (row.get("tiers") or {}).get("srbench", sum(bool(g.get("newton")) for g in galaxies))
                model.newton.setdefault((row.get("probe"), row.get("protocol"), len(galaxies)), {})[r.seed] = newton
    return list(models.values())


def section_behaviour(rep):
    """The label-free verdict from each model's own predictions (orbitlaw eval's "behaviour"), per seed: the
    tables behind the answer's lines."""
    rows, summary = behaviour_table.tables(rep.run)
    if not rows:
        return
    rep.heading("Learned gravity, read from each model's own predictions")
    rep.para("No probe is fitted here (docs/design.md section 6c): each model's next-position predictions are "
             "placed on the ladder of baselines, read as an implied acceleration, and put through the curvature "
             "transplant (s = 0: the force is computed from the position; s = 1: the history's curvature is "
             "extrapolated). A model learned the law only if every seed passes every condition.")
    rep.table(behaviour_table.SUMMARY_HEADER, summary)
    rep.table(behaviour_table.HEADER, rows)
    laws = behaviour_table.law_rows(rep.run)
    if laws:
        rep.para("Laws found by symbolic regression on each model's implied accelerations |a_impl|(r) (eval's law "
                 "search; Newton: G·M/r², G·M = 39.48 AU³/yr² for one solar mass).")
        rep.table(behaviour_table.LAWS_HEADER, laws)


def section_kepler(rep):
    """The Kepler probes' table (orbitlaw probe's "kepler" probe), where the run's probes ran them."""
    kepler = kepler_table.rows(rep.run, list(behaviour_table.labels_in_order(rep.run)))
    if kepler:
        rep.heading("Kepler probes: the orbit's elements in the hidden states")
        rep.para("Held-out R² of linear probes for a, e and the phase (the mean of cos and sin of the true "
                 "anomaly) from the hidden states, and selectivity, the model's R² minus the raw-input control's "
                 "(a ridge on the model's input window, no network); mean [95% interval] over seeds "
                 "(docs/design.md section 6b). A model is Keplerian in this sense only where selectivity is "
                 "above 0.")
        rep.table(kepler_table.HEADER, kepler)


def section_about(rep, config):
    rep.heading("This run")
    if config.get("description"):
        rep.para(config["description"])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    compare = os.path.join(rep.run, "compare", "compare.json")
    if os.path.exists(compare):
        target, law, _ = newton_law(read_json(compare))
        target = f" Target law: the {target} {law}."
    else:
        target = ""
    rep.para(f"Run folder `{rep.run}`; report written {now}.{target}")


def newton_law(comparison):
    """(target, Newton's law as text, its exponents (a, b, e) as text), as this run's compare judged the probes:
    compare.json's "newton" section (target, law, G, exponents) is the one source of G the report quotes."""
    newton = comparison.get("newton") or {}
    target = newton.get("target", "force")
    g = newton.get("G")
    constant = f"C = G ≈ {fmt(g, 5)}" if isinstance(g, (int, float)) else "C = G (compare.json does not record G)"
    exponents = newton.get("exponents")
    triple = f"({', '.join(fmt(e) for e in exponents)})" if isinstance(exponents, list) else "(Newton's)"
    return target, f"`{newton.get('law', '?')}`, {constant}", triple


def section_provenance(rep, config, provenance):
    rep.heading("Provenance")
    if provenance is None:
        rep.lack("provenance", "RUN/provenance.json does not exist")
    else:
        rows = [
            ["seed", provenance.get("seed")],
            ["git revision", f"{provenance.get('git_revision')}{' (uncommitted changes)' if provenance.get('git_dirty') else ''}"],
            ["orbitlaw", provenance.get("orbitlaw")],
            ["host / CPUs", f"{provenance.get('host')} / {provenance.get('cpus')}"],
            ["created", provenance.get("created_utc")],
            ["command", provenance.get("command_line")],
        ]
        for pkg, version in (provenance.get("python_packages") or {}).items():
            rows.append([pkg, version])
        rep.table(["provenance", "value"], rows)
        section_shards(rep, provenance.get("shards"))
        seeds = seed_count(config)
        if seeds > 1:
            rep.para(f"Seeds: {seeds} per model; the provenance seed is the experiment's, each model's training "
                     "seeds are in its configs/train-<kind>-seed-<s>.json and in the summary above.")


def section_shards(rep, shards):
    """A run merged from shards (experiments/merge.py): the provenance above is the merge's; each shard ran its
    own stages on its own machine, listed here."""
    if not shards:
        return
    rep.para(f"Merged from {len(shards)} shards (experiments/merge.py, docs/sweeps.md); the provenance above is "
             "the merge's, which ran compare and the report. Each shard ran its own (model, seed) stages:")
    rows = [[f"{s.get('index')}/{s.get('count')}", s.get("folder"), f"{s.get('host')} / {s.get('cpus')}",
             f"{s.get('git_revision')}{' (uncommitted changes)' if s.get('git_dirty') else ''}", s.get("orbitlaw"),
             s.get("created_utc"), s.get("command_line")] for s in shards]
    rep.table(["shard", "run folder", "host / CPUs", "git revision", "orbitlaw", "created", "command"], rows)


def section_stages(rep):
    rows = []
    done = [read_json(m) for m in glob.glob(os.path.join(rep.run, "stages", "*.done"))]
    for record in sorted(done, key=lambda r: (r.get("started_utc") or "", r.get("finished_utc") or "")):
        rows.append([record.get("stage"), "done", record.get("seconds"), record.get("finished_utc")])
    for marker in sorted(glob.glob(os.path.join(rep.run, "stages", "*.cut"))):
        record = read_json(marker)
        rows.append([record.get("stage"), f"CUT at its {record.get('limit_s')} s limit", record.get("seconds"), "–"])
    for marker in sorted(glob.glob(os.path.join(rep.run, "stages", "*.failed"))):
        record = read_json(marker)
        rows.append([record.get("stage"), f"FAILED (exit {record.get('exit')})", record.get("seconds"), "–"])
    rep.heading("Stages")
    budget_path = os.path.join(rep.run, "budget.json")
    if os.path.exists(budget_path):
        plan = read_json(budget_path)
        limits = ", ".join(f"{k} {v} s" for k, v in plan.get("per_stage_limit_s", {}).items())
        rep.para(
            f"Time budget: {plan.get('total_s')} s in all; the build took {plan.get('build_s')} s; "
            f"{plan.get('available_s')} s were shared among the stages (limit per stage: {limits}). "
            "A stage marked CUT was stopped at its limit; its outputs, if any, are partial."
        )
    if rows:
        total = sum(r[2] for r in rows if isinstance(r[2], (int, float)))
        rep.table(["stage", "status", "seconds", "finished (UTC)"], rows + [["total", "", total, ""]])
    else:
        rep.lack("stage records", "no RUN/stages/*.done markers")


def section_compare(rep):
    rep.heading("Probes and recovered laws against Newton (orbitlaw compare)")
    md = os.path.join(rep.run, "compare", "compare.md")
    if os.path.exists(md):
        with open(md) as f:
            rep.markdown(nested(f.read()))
    else:
        rep.lack("compare tables", f"{rep.rel(md)} does not exist (stage compare did not run)")


def nested(text):
    """compare.md as a part of this report: without its title, which repeats the section's heading, and with
    its headings one level below the section's."""
    lines = text.splitlines()
    if lines and re.match(r"# ", lines[0]):
        lines = lines[1:]
        while lines and not lines[0].strip():
            lines = lines[1:]
    out, in_code = [], False
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        out.append("#" + line if not in_code and re.match(r"#{1,5} ", line) else line)
    return "\n".join(out) + "\n"


def laws_table(run, config):
    """The side-by-side table of recovered laws per model and galaxy, from compare/compare.json."""
    path = os.path.join(run, "compare", "compare.json")
    if not os.path.exists(path):
        return None, f"{os.path.relpath(path, run)} does not exist"
    data = read_json(path)
    rows = []
    for entry in data.get("rows", []):
        galaxies = entry.get("galaxies") or []
        if not galaxies:
            continue  # a probe without a law search (its R² is in the compare tables)
        tiers = entry.get("tiers") or {}
        n = len(galaxies)
        counts = [f"{tiers.get(k, 0)}/{n}" for k in ("srbench", "strict", "exponents")]
        exponents = entry.get("exponents") or {}
        e = exponents.get("e")
        e_text = f"{e[0]:.3f} [{e[1]:.3f}, {e[2]:.3f}]" if isinstance(e, list) and len(e) == 3 else "n/a"
        observable = entry.get("observable_fraction")
        laws = "; ".join(str(g.get("law")) for g in galaxies)
        rows.append([entry.get("model"), entry.get("probe"), entry.get("protocol"),
                     f"{observable:.2f}" if isinstance(observable, (int, float)) else "n/a", entry.get("r2"),
                     e_text, *counts, laws])
    if not rows:
        return None, f"{os.path.relpath(path, run)} has no 'rows' with galaxies"
    # The probe target decides Newton's form: the force G·m1·m2/r² or the planet's acceleration G·m2/r².
    target, newton, triple = newton_law(data)
    form = f"`{(data.get('newton') or {}).get('law', '?')}`"
    lines = [f"Recovered {target} laws against Newton ({newton})", "",
             f"Galaxies recovering Newton per verdict tier: srbench ({form} after rounding constants to 3 "
             "digits, any C > 0), strict (srbench and C within 5% of G), exponents (95% intervals of the "
             f"galaxy's power-law fit contain {triple}). observable: share of test rows whose visible track "
             "bends by more than one bin; r exponent e: power-law fit of the probe on all test rows, 95% interval.",
             ""]
    lines += markdown_table(["model", "probe", "protocol", "observable", "probe R²", "r exponent e",
                             "srbench", "strict", "exponents", "law per galaxy"], rows, literal=False)
    return "\n".join(lines) + "\n", None


def section_training(rep, config, reps):
    rep.heading("Training")
    curves = {}
    rows = []
    for r in reps:
        path = os.path.join(r.model_dir, "metrics.jsonl")
        if not os.path.exists(path):
            rep.lack(f"training metrics of {r.tag}", f"{rep.rel(path)} does not exist")
            continue
        metrics = read_jsonl(path)
        if not metrics:
            rep.lack(f"training metrics of {r.tag}", f"{rep.rel(path)} is empty")
            continue
        curves[r.name] = metrics
        last_train = next((m for m in reversed(metrics) if first_key(m, "train_loss", "loss")), {})
        last_val = next((m for m in reversed(metrics) if m.get("val_loss") is not None), {})
        rows.append(
            [
                r.name,
                last_train.get("step"),
                last_train.get("tokens"),
                last_train.get(first_key(last_train, "train_loss", "loss") or "train_loss"),
                last_val.get("val_loss"),
                last_train.get("tokens_per_s"),
                last_train.get("mfu"),
            ]
        )
    if rows:
        rep.table(["model", "final step", "tokens", "final train loss", "final val loss", "tokens/s", "MFU"], rows)
    settings = []
    for r in reps:
        path = os.path.join(rep.run, "configs", f"train-{r.stage}.json")
        if os.path.exists(path):
            settings.append([r.name, json.dumps(read_json(path), separators=(", ", ": "))])
    if settings:
        rep.table(["model", "train config (RUN/configs/train-<stage>.json)"], settings)
    if curves and can_plot(rep, "training curves"):
        fig, ax = plt.subplots(figsize=(7, 4))
        for name, metrics in curves.items():
            xkey = "tokens" if all("tokens" in m for m in metrics) else "step"
            train = [(m[xkey], m[first_key(m, "train_loss", "loss")]) for m in metrics if first_key(m, "train_loss", "loss")]
            val = [(m[xkey], m["val_loss"]) for m in metrics if m.get("val_loss") is not None]
            if train:
                line = ax.plot(*zip(*train), label=f"{name} train", alpha=0.7)[0]
                if val:
                    ax.plot(*zip(*val), "o--", color=line.get_color(), label=f"{name} validation")
        ax.set_xlabel(xkey)
        ax.set_ylabel("cross-entropy (nats)")
        ax.set_title("Training curves")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        save(rep, fig, "training_curves.png", "Training and validation loss per model")


def section_eval(rep, config, reps):
    rep.heading("Evaluation")
    evals = {}  # by the model's name in the report (model, and seed when there are several)
    for r in reps:
        path = os.path.join(r.model_dir, "eval.json")
        if os.path.exists(path):
            evals[r.name] = checked_losses(read_json(path), f"'{path}'")
        else:
            rep.lack(f"evaluation of {r.tag}", f"{rep.rel(path)} does not exist")
    if not evals:
        return
    # Token-head models report a cross-entropy and an accuracy; regression-head models (next_position) a mean
    # squared error in units of their coordinate scale and the RMS error of the next position in AU.
    rep.table(
        ["model", "loss", "head", "accuracy", "next-position RMS error (AU)"],
        [[name, e.get("loss"), "regression" if "next_position" in e else "tokens", e.get("accuracy"),
          (e.get("next_position") or {}).get("rmse_au")] for name, e in evals.items()],
    )
    plot_trajectory_error(rep, config, evals)
    plot_length_extrapolation(rep, config, evals)
    plot_attention(rep, config, evals)


# The baselines of eval.json's trajectory_error entries (its other keys are counts and the medians).
BASELINES = ["previous_position", "per_orbit_mean", "constant_velocity", "token_oracle"]


def plot_trajectory_error(rep, config, evals):
    have = {k: e["trajectory_error"] for k, e in evals.items() if isinstance(e.get("trajectory_error"), dict)}
    if not have:
        rep.lack("trajectory error plot", "no eval.json has a 'trajectory_error' object")
        return
    horizons = sorted({h for t in have.values() for h in t}, key=lambda h: int(h))
    # Every model is evaluated on the same data, so the baselines are taken once, from the first model's eval.
    series = {name: {h: (table.get(h) or {}).get("model") for h in horizons} for name, table in have.items()}
    first = next(iter(have.values()))
    for h in horizons:
        for name in BASELINES:
            series.setdefault(f"baseline: {name.replace('_', ' ')}", {})[h] = (first.get(h) or {}).get(name)
    rows = [[name] + [values.get(h) for h in horizons] for name, values in series.items()]
    rep.table(["mean trajectory error (AU)"] + [f"{h}-step" for h in horizons], rows)
    # Medians (eval.json "median"): what a typical prediction does when a few far-off ones dominate the mean.
    medians = {name: {h: ((table.get(h) or {}).get("median") or {}).get("model") for h in horizons}
               for name, table in have.items()}
    for name in BASELINES:
        medians[f"baseline: {name.replace('_', ' ')}"] = {
            h: ((first.get(h) or {}).get("median") or {}).get(name) for h in horizons}
    if any(v is not None for values in medians.values() for v in values.values()):
        rows = [[name] + [values.get(h) for h in horizons] for name, values in medians.items()]
        rep.table(["median trajectory error (AU)"] + [f"{h}-step" for h in horizons], rows)
    if not can_plot(rep, "trajectory error plot"):
        return
    # The answer's figure (FIRST_FIGURES): with a model per seed there are 15-20 series, so the legend stands
    # beside the axes rather than over the bars, its labels shortened, and the colours do not repeat below 20.
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [j + i * width for j in range(len(horizons))]
        short = name if len(name) <= 60 else name[:40] + "…" + name[-19:]
        ax.bar(xs, [np.nan if values.get(h) is None else values[h] for h in horizons], width, label=short,
               color=plt.cm.tab20(i % 20))
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(horizons))])
    ax.set_xticklabels([f"{h}-step" for h in horizons])
    ax.set_yscale("log")
    ax.set_ylabel("mean position error (AU)")
    ax.set_title("Rollout error against baselines")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(rep, fig, "trajectory_error.png", "1/5/100-step trajectory error of each model and the baselines")


def plot_length_extrapolation(rep, config, evals):
    have = {k: e["length_extrapolation"] for k, e in evals.items() if e.get("length_extrapolation")}
    if not have:
        rep.lack("length-extrapolation curves", "no eval.json has a 'length_extrapolation' list")
        return
    factors = sorted({p["factor"] for points in have.values() for p in points})
    rows = []
    for name, points in have.items():
        by_factor = {p["factor"]: p["loss"] for p in points}
        rows.append([name] + [by_factor.get(f) for f in factors])
    rep.table(["validation loss at context ×"] + [f"{fmt(f)}×" for f in factors], rows)
    if not can_plot(rep, "length-extrapolation curves"):
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, points in have.items():
        points = sorted(points, key=lambda p: p["factor"])
        ax.plot([p["factor"] for p in points], [p["loss"] for p in points], "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("evaluation length / training context")
    ax.set_ylabel("validation loss (nats)")
    ax.set_title("Length extrapolation")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(rep, fig, "length_extrapolation.png", "Validation loss against evaluation length")


def plot_attention(rep, config, evals):
    have = {k: e["attention"] for k, e in evals.items() if e.get("attention")}
    if not have:
        rep.lack("attention locality per head", "no eval.json has an 'attention' list")
        return
    if not can_plot(rep, "attention locality per head"):
        return
    fig, axes = plt.subplots(1, len(have), figsize=(4 * len(have), 3.5), squeeze=False)
    for ax, (name, heads) in zip(axes[0], have.items()):
        layers = 1 + max(h["layer"] for h in heads)
        n_heads = 1 + max(h["head"] for h in heads)
        grid = np.full((layers, n_heads), np.nan)
        for h in heads:
            grid[h["layer"], h["head"]] = h["mean_distance"]
        image = ax.imshow(grid, cmap="viridis", aspect="auto")
        ax.set_title(f"{name}: mean attention distance")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        fig.colorbar(image, ax=ax, label="positions")
    save(rep, fig, "attention_locality.png", "Mean attention distance per layer and head (smaller = more local)")


def file_checksum(path):
    """The checksum completion records hold (common/src/stage_record.cpp): 64-bit FNV-1a of the bytes, hex."""
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            for byte in chunk:
                h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# The probe outputs the report reads, checked against the checksums of the stage's completion record.
PROBE_OUTPUTS_READ = ("predictions.h5", "probe.json", "sr.json")


def probe_completed(rep, r):
    """orbitlaw probe writes probe.complete.json last, with its outputs' checksums: without it the folder is a
    killed run's, and an output that no longer matches it was edited or replaced after the run; neither is
    reported."""
    record = os.path.join(r.probe_dir, "probe.complete.json")
    if not os.path.exists(record):
        rep.lack(f"force probes of {r.tag}", f"the probe stage did not complete ({rep.rel(record)} does not exist)")
        return False
    outputs = (read_json(record) or {}).get("outputs") or {}
    for name in PROBE_OUTPUTS_READ:
        expected = (outputs.get(name) or {}).get("checksum")
        path = os.path.join(r.probe_dir, name)
        if expected and os.path.exists(path) and file_checksum(path) != expected:
            rep.lack(f"force probes of {r.tag}", f"{rep.rel(path)} does not match the checksum in {rep.rel(record)} "
                     "(changed after the probe run)")
            return False
    return True


def section_probe(rep, config, reps):
    rep.heading("Force probes")
    scatter_done = False
    vector_tags = set()
    incomplete = set()
    for r in reps:
        path = os.path.join(r.probe_dir, "predictions.h5")
        if not os.path.exists(path):
            rep.lack(f"force predictions of {r.tag}", f"{rep.rel(path)} does not exist")
            continue
        if not probe_completed(rep, r):
            incomplete.add(r.tag)
            continue
        scatter_done |= plot_force_scatter(rep, r, path)
        if plot_force_arrows(rep, config, r, path):
            vector_tags.add(r.tag)
    for r in reps:
        if r.tag not in vector_tags and r.tag not in incomplete:  # the vector task has no law search
            plot_pareto(rep, r)
    return scatter_done


def plot_force_scatter(rep, r, path):
    if not can_plot(rep, f"force scatter of {r.tag}"):
        return False
    try:
        import h5py
    except ImportError as e:
        rep.lack(f"force scatter of {r.tag}", f"cannot read HDF5 here ({e})")
        return False

    with h5py.File(path, "r") as f:
        if "force_true_vec" in f:
            return False  # the force-vector task: its figure is the arrows (plot_force_arrows)
        if "force_true" not in f or "predictions" not in f:
            rep.lack(f"force scatter of {r.tag}", f"{rep.rel(path)} lacks 'force_true' or the 'predictions' group")
            return False
        true = np.asarray(f["force_true"][...], dtype=float)
        preds = {name: np.asarray(f["predictions"][name][...], dtype=float) for name in f["predictions"]}
    if true.ndim != 1:
        return False
    fig, ax = plt.subplots(figsize=(5, 5))
    rows = []
    for name, pred in preds.items():
        if pred.shape != true.shape:
            continue
        ax.scatter(true, pred, s=4, alpha=0.5, label=name)
        ss_res = float(np.sum((pred - true) ** 2))
        ss_tot = float(np.sum((true - true.mean()) ** 2))
        rows.append([r.name, name, len(true), 1 - ss_res / ss_tot if ss_tot > 0 else None])
    positive = true[true > 0]
    if len(positive) == len(true) and len(true):
        ax.set_xscale("log")
        ax.set_yscale("log")
    lo, hi = float(np.min(true)), float(np.max(true))
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="prediction = truth")
    ax.set_xlabel("true force")
    ax.set_ylabel("predicted force")
    ax.set_title(f"{r.name}: predicted vs true force")
    ax.legend(fontsize=8)
    rep.table(["model", "probe", "test rows", "R² (recomputed from predictions.h5)"], rows)
    save(rep, fig, f"force_scatter_{r.stage}.png", f"Predicted against true force magnitude, {r.name}")
    return True


# Arrow colours of the force-vector figure: the model's probe stands out; the oracles are references.
PROBE_COLOURS = {"finetune": "tab:red", "knn": "tab:blue", "newton": "tab:green"}


def plot_force_arrows(rep, config, r, path):
    """The force-vector figure; True when the file holds force vectors (drawn or not)."""
    if PLOTTING:
        return False  # already listed by the force scatter of this model
    try:
        import h5py
    except ImportError:
        return False

    with h5py.File(path, "r") as f:
        if "force_true_vec" not in f:
            if "force_arrows" in (config.get("report") or {}).get("expect", []):
                rep.lack(f"force-arrow figure of {r.tag}", f"{rep.rel(path)} has no 'force_true_vec'")
            return False  # a force-magnitude probe has no vectors to draw
        pos = np.asarray(f["position"][...], dtype=float)
        true = np.asarray(f["force_true_vec"][...], dtype=float)
        group = f.get("predictions_vec")
        preds = {name: np.asarray(group[name][...], dtype=float) for name in group} if group else {}
        body = np.asarray(f["body"][...]) if "body" in f else np.zeros(len(pos), dtype=int)
    # Vector R^2 (1 - sum |F - P|^2 / sum |F - mean F|^2), recomputed from the file.
    ss_tot = float(np.sum((true - true.mean(axis=0)) ** 2))
    rep.table(
        ["model", "probe", "test rows", "R² of the force vectors (recomputed from predictions.h5)"],
        [
            [r.name, name, len(true), 1 - float(np.sum((p - true) ** 2)) / ss_tot if ss_tot else None]
            for name, p in preds.items()
        ],
    )
    radius = np.hypot(pos[:, 0], pos[:, 1])
    # Our solar system spans 0.4 to 30 AU: a second panel zooms on the inner orbits so they stay visible.
    zoom = float(np.percentile(radius, 40)) * 1.3 if radius.max() > 10 * max(radius.min(), 1e-9) else None
    panels = [None, zoom] if zoom else [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 7), squeeze=False)
    for ax, limit in zip(axes[0], panels):
        sel_panel = np.ones(len(pos), bool) if limit is None else radius <= limit
        for b in np.unique(body):
            sel = sel_panel & (body == b)
            ax.plot(pos[sel, 0], pos[sel, 1], ".", ms=1.5, color="0.7")
        p = pos[sel_panel]
        # One arrow scale for every probe in a panel (quiver would scale each call on its own): the 90th
        # percentile of the true arrows' lengths spans 8% of the panel's width.
        extent = float(np.ptp(p[:, 0])) if len(p) > 1 else 1.0
        typical = float(np.percentile(np.hypot(true[sel_panel, 0], true[sel_panel, 1]), 90)) if len(p) else 1.0
        scale = typical / (0.08 * extent) if typical > 0 and extent > 0 else None
        arrows = dict(angles="xy", scale_units="xy", scale=scale, width=0.003)
        ax.quiver(p[:, 0], p[:, 1], true[sel_panel, 0], true[sel_panel, 1], color="black", label="true force", **arrows)
        for name, pred in preds.items():
            ax.quiver(p[:, 0], p[:, 1], pred[sel_panel, 0], pred[sel_panel, 1], color=PROBE_COLOURS.get(name, "tab:red"),
                      alpha=0.7, label=f"predicted ({name})", **arrows)
        ax.set_aspect("equal")
        ax.set_xlabel("x (AU)")
        ax.set_ylabel("y (AU)")
        ax.set_title(f"{r.name}: force vectors" + ("" if limit is None else f" (r ≤ {limit:.2g} AU)"))
        ax.legend(fontsize=8)
    save(rep, fig, f"force_arrows_{r.stage}.png",
         f"True (black) and predicted force arrows (fine-tuned model red, KNN oracle blue, Newton green), {r.name}")
    return True


def plot_pareto(rep, r):
    path = os.path.join(r.probe_dir, "sr.json")
    if not os.path.exists(path):
        rep.lack(f"Pareto fronts of {r.tag}", f"{rep.rel(path)} does not exist")
        return
    sr = read_json(path)
    galaxies = sr.get("galaxies") or []
    search = (sr.get("searches") or [{}])[0]
    which = ", ".join(f"{k} {search[k]}" for k in ("probe", "protocol") if search.get(k))
    if not galaxies:
        rep.lack(f"Pareto fronts of {r.tag}", f"{rep.rel(path)} has no 'galaxies'")
        return
    rows = []
    for g in galaxies:
        best = g.get("best") or {}
        rows.append([g.get("galaxy"), best.get("expression"), best.get("complexity"), best.get("loss"), g.get("newton")])
    if not can_plot(rep, f"Pareto fronts of {r.tag}"):
        rep.table(["galaxy", f"selected law ({r.name})", "complexity", "loss", "Newton"], rows)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for g in galaxies:
        front = sorted(g.get("front") or [], key=lambda p: p["complexity"])
        if front:
            ax.plot([p["complexity"] for p in front], [p["loss"] for p in front], "o-", label=f"galaxy {g.get('galaxy')}")
    ax.set_yscale("log")
    ax.set_xlabel("complexity")
    ax.set_ylabel("loss")
    ax.set_title(f"{r.name}: Pareto front per galaxy" + (f" ({which})" if which else ""))
    ax.legend(fontsize=8)
    rep.table(["galaxy", f"selected law ({r.name}{', ' + which if which else ''})", "complexity",
               "loss", "Newton"], rows)
    save(rep, fig, f"pareto_{r.stage}.png",
         f"Symbolic-regression Pareto front of each galaxy, {r.name}" + (f" ({which})" if which else ""))


def can_plot(rep, what):
    if PLOTTING:
        rep.lack(what, PLOTTING)
        return False
    return True


def save(rep, fig, name, caption):
    fig.tight_layout()
    claim_plot(rep.out, name)
    fig.savefig(os.path.join(rep.out, name), dpi=110)
    plt.close(fig)
    rep.image(name, caption)


# report.json says which files of the report folder a report wrote; only those are ever removed or replaced.
REPORT_FORMAT = "orbitlaw-report"
# The lock file orbitlaw report holds in the folder while the script runs (common/src/output_guard.cpp).
LOCK_NAME = ".orbitlaw.lock"


def earlier_plots(out):
    """The plots an earlier report listed in out/report.json, or None when the folder holds no report record
    (a record written before the format key existed has only "plots" and "missing" lists)."""
    try:
        with open(os.path.join(out, "report.json")) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("plots"), list):
        return None
    if record.get("format") != REPORT_FORMAT and not isinstance(record.get("missing"), list):
        return None
    return [p for p in record["plots"] if isinstance(p, str) and p.endswith(".png") and os.sep not in p]


def prepare_out(out):
    """The report folder: new, empty, or one a report wrote. The plots the earlier report listed are removed,
    so that none of them passes for one of this report; any other file is left alone."""
    os.makedirs(out, exist_ok=True)
    if [n for n in os.listdir(out) if n != LOCK_NAME]:
        plots = earlier_plots(out)
        if plots is None:
            raise ReportError(f"'{out}' holds files that no report wrote (it has no report record, "
                              "report.json); choose another --out")
        for name in plots:
            if os.path.isfile(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
    write_atomic(os.path.join(out, "report.json"),
                 json.dumps({"format": REPORT_FORMAT, "complete": False, "plots": []}) + "\n")


def claim_plot(out, name):
    """Lists a plot in the report record before it is written, so that a report killed mid-way leaves a
    record of every plot it wrote, and the next one removes them."""
    path = os.path.join(out, "report.json")
    with open(path) as f:
        record = json.load(f)
    record["plots"] = record["plots"] + [name]
    write_atomic(path, json.dumps(record) + "\n")


def write_atomic(path, text):
    atomic_file.write_text(path, text)


def main():
    try:
        return write_report()
    except ReportError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        # A file of the run folder that parses but does not have the shape this report reads.
        print(f"report: error: the run folder's files do not have the expected shape ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 1


def write_report():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, action="append", help="experiment run folder (several with "
                        "--results-page)")
    parser.add_argument("--out", help="report folder (default RUN/report)")
    parser.add_argument("--results-page", metavar="PAGE", help="write the results page of the run folders to PAGE "
                        "instead of a report")
    parser.add_argument("--check", action="store_true", help="with --results-page: write nothing; exit 1 where PAGE "
                        "differs from the page these run folders give")
    args = parser.parse_args()
    if args.results_page:
        return write_results_page(args.results_page, args.run, args.check)
    if args.check:
        print("report: error: --check goes with --results-page", file=sys.stderr)
        return 1
    if len(args.run) != 1:
        print("report: error: one --run per report (several only with --results-page)", file=sys.stderr)
        return 1
    run = os.path.abspath(args.run[0])
    config_path = os.path.join(run, "experiment.json")
    if not os.path.exists(config_path):
        print(f"report: error: '{run}' is not a run folder (no experiment.json)", file=sys.stderr)
        return 1
    config = read_json(config_path)
    if not isinstance(config, dict):
        raise ReportError(f"'{config_path}' must hold a JSON object")
    provenance_path = os.path.join(run, "provenance.json")
    provenance = read_json(provenance_path) if os.path.exists(provenance_path) else None
    out = os.path.abspath(args.out or os.path.join(run, "report"))
    prepare_out(out)

    rep = Report(run, out)
    reps = replicates(run, config)
    stages = config.get("stages", [])
    # The answer first, then what it rests on; what is missing, then provenance at the end.
    section_title(rep, config)
    models = section_answer(rep, config, reps) if reps else []
    section_behaviour(rep)
    section_kepler(rep)
    section_about(rep, config)
    if "compare" in stages:
        section_compare(rep)
    laws, why = laws_table(run, config)
    section_training(rep, config, reps) if "train" in stages else None
    section_eval(rep, config, reps) if "eval" in stages else None
    section_probe(rep, config, reps) if "probe" in stages else None
    if models:
        section_detail(rep, models)
    if report_html.RENDERING:
        rep.lack("HTML rendering of the report", report_html.RENDERING)
    # Stages and provenance are written before the list of what is missing (they can lack files too), and
    # then moved behind it, so that provenance closes the report.
    tail = len(rep.blocks)
    section_stages(rep)
    section_provenance(rep, config, provenance)
    provenance_blocks, rep.blocks = rep.blocks[tail:], rep.blocks[:tail]
    rep.heading("Missing")
    if rep.missing:
        rep.table(["what", "why"], rep.missing)
    else:
        rep.para("Nothing: every table and plot of this experiment was produced from this run's outputs.")
    rep.blocks += provenance_blocks
    rep.place_first_figure(FIRST_FIGURES)

    # What the experiment prints at its end: the same per-model lines the report opens with, any control that
    # does as well as the trained models (as plain text: the terminal shows no Markdown), then the laws.
    behaviour = behaviour_table.terminal_text(run)
    findings = [f.replace("**", "") for f in answer.control_findings(models, fmt)]
    if findings:
        behaviour = (behaviour + "\n" if behaviour else "") + "\n\n".join(findings) + "\n"
    if laws is None:
        laws = behaviour or f"Recovered force laws against Newton: not available ({why}).\n"
    elif behaviour:
        laws = behaviour + "\n" + laws
    write_atomic(os.path.join(out, "laws.md"), laws)
    write_atomic(os.path.join(out, "report.md"), rep.to_markdown())
    write_atomic(os.path.join(out, "report.html"), rep.to_html(f"orbitlaw: {config.get('experiment')}"))
    summary = {"format": REPORT_FORMAT, "complete": True, "plots": rep.plots, "missing": [{"what": w, "why": y} for w, y in rep.missing]}
    write_atomic(os.path.join(out, "report.json"), json.dumps(summary, indent=2) + "\n")
    print(f"report: {len(rep.plots)} plots, {len(rep.missing)} missing items -> {out}")
    return 0


def write_results_page(page, runs, check=False):
    """The results page of `runs` (run folders of one experiment), written to `page`, or with `check` compared
    with it; the runs are only read."""
    folders = [os.path.abspath(r) for r in runs]
    experiments = set()
    for run in folders:
        config_path = os.path.join(run, "experiment.json")
        if not os.path.exists(config_path):
            raise ReportError(f"'{run}' is not a run folder (no experiment.json)")
        experiments.add(read_json(config_path).get("experiment", "?"))
        if os.path.commonpath([run, os.path.abspath(page)]) == run:
            raise ReportError(f"the results page '{page}' would be written inside the run folder '{run}'")
    if len(experiments) != 1:
        raise ReportError(f"the run folders are of different experiments ({', '.join(sorted(experiments))}); "
                          "one results page per experiment")
    command = " ".join(["python3 experiments/report.py", "--results-page", page] + [f"--run {r}" for r in runs])
    # Each run's per-kind plot beside the page: PAGE-without-.md-RUN-kinds.png (drawn unless checking).
    stem, folder = os.path.splitext(os.path.basename(page))[0], os.path.dirname(os.path.abspath(page))
    plots = {run: f"{stem}-{os.path.basename(os.path.normpath(run))}-kinds.png" for run in folders}
    if len(set(plots.values())) < len(folders):
        raise ReportError("two run folders have the same name, so their plots would have one file name; "
                          "give each run folder its own name")
    if not check:
        # Everything is checked before anything is written: only a page and plots that this step wrote are
        # replaced (docs/experiments.md, Results pages).
        if os.path.lexists(page) and not results_page.is_page(page):
            raise ReportError(f"'{page}' exists and is not a results page (it does not begin with "
                              f"'{results_page.TITLE}...' and the generated-from-run-folders line); not replacing it")
        for name in plots.values():
            path = os.path.join(folder, name)
            if os.path.lexists(path) and not kind_plot.is_drawn_here(path):
                raise ReportError(f"'{path}' exists and is not a plot a results page drew; not replacing it")

    missing = []

    def figure(run, config):
        name = plots[run]
        found = results_page.kind_figure(run, config, name, folder, write=not check)
        if found and check and not os.path.exists(os.path.join(folder, name)):
            missing.append(name)
        return found

    text = results_page.page(experiments.pop(), folders, command, figure)
    if check:
        try:
            with open(page) as f:
                current = f.read()
        except OSError as e:
            raise ReportError(f"cannot read '{page}': {e.strerror}") from None
        if current != text:
            print("\n".join(difflib.unified_diff(current.splitlines(), text.splitlines(), page, "from the run folders",
                                                 lineterm="")))
            print(f"report: error: '{page}' differs from the page its run folders give", file=sys.stderr)
            return 1
        if missing:
            print(f"report: error: the page's plot{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                  f"{'are' if len(missing) > 1 else 'is'} missing beside it", file=sys.stderr)
            return 1
        print(f"report: '{page}' is the page its run folders give")
        return 0
    write_atomic(os.path.abspath(page), text)
    print(f"report: results page of {len(folders)} run folder{'s' if len(folders) != 1 else ''} -> {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
