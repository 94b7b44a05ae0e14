#!/usr/bin/env python3
"""Checks that two run folders of one experiment hold the same results: that a run made another way (stages side
by side with --jobs, or shards merged by experiments/merge.py) equals the plain single run.

usage: same_results.py RUN_A RUN_B [--bytes]

Compared exactly:
  - the report's Markdown, except the sections that describe the run rather than its results ("This run": the
    folder and the time the report was written; "Stages": durations and times; "Provenance": host, command,
    shards) and the training table's speed columns (tokens/s, MFU), and laws.md;
  - every model's losses per step (metrics.jsonl: step, train_loss, val_loss), its eval.json and
    compare/compare.json, each without what describes the run rather than its results: provenance records,
    times and durations, the data files' checksums (which cover the files' provenance), and with paths inside
    the run folder written relative to it (for a merged run, also those inside the shard folders where its
    stages ran);
  - with --bytes, every file below models/ and probe/ byte for byte (the test double writes no times or paths).
Prints the first difference and exits 1, or prints what it compared and exits 0.
"""
import glob
import json
import os
import sys

# The report sections that describe the run rather than its results.
RUN_SECTIONS = ("## This run", "## Stages", "## Provenance")
# Table columns that measure the machine's speed, not the results (the training table's).
SPEED_COLUMNS = ("tokens/s", "MFU")
# Keys of eval.json and compare.json that describe the run rather than its results, wherever they are: the
# record of the command, host and time, and durations.
RUN_KEYS = {"provenance", "time_utc", "elapsed_s", "seconds"}
# The checksums of the data files, which cover the files' provenance (command line, time), by path of keys.
DATA_CHECKSUMS = ("train_state", "fingerprint", "inputs")
# Files the tools write for the machine, not the results.
NOT_RESULTS = (".orbitlaw.lock",)


def report_results(run):
    """report.md without the run's own sections and its speed columns, as a list of lines."""
    kept, skipping, speed = [], False, []
    with open(os.path.join(run, "report", "report.md")) as f:
        for line in f.read().splitlines():
            if line.startswith("## "):
                skipping = line.strip() in RUN_SECTIONS
            if skipping:
                continue
            cells = line.split("|")
            if not line.startswith("|"):
                speed = []
            elif not speed:  # a table's header line
                speed = [i for i, cell in enumerate(cells) if cell.strip() in SPEED_COLUMNS]
            kept.append("|".join("…" if i in speed else cell for i, cell in enumerate(cells)))
    return kept


def folders(run):
    """The run folder, and for a merged run the shards' folders, where its stages ran and which their records
    name (experiments/merge.py)."""
    with open(os.path.join(run, "provenance.json")) as f:
        shards = json.load(f).get("shards") or []
    return [os.path.abspath(run)] + [s["folder"] for s in shards]


def results(value, roots):
    """A JSON value without RUN_KEYS, its paths inside the run's folders (`roots`) written relative to them."""
    if isinstance(value, dict):
        return {k: results(v, roots) for k, v in value.items() if k not in RUN_KEYS}
    if isinstance(value, list):
        return [results(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root + os.sep, "RUN/")
    return value


def without_data_checksums(value):
    node = value
    for key in DATA_CHECKSUMS[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(DATA_CHECKSUMS[-1], None)
    return value


def numbers(run):
    out, roots = {}, folders(run)
    for path in sorted(glob.glob(os.path.join(run, "models", "**", "metrics.jsonl"), recursive=True)):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        out[os.path.relpath(path, run)] = [(r["step"], r.get("train_loss"), r.get("val_loss")) for r in rows]
    for path in sorted(glob.glob(os.path.join(run, "models", "**", "eval.json"), recursive=True)):
        with open(path) as f:
            out[os.path.relpath(path, run)] = without_data_checksums(results(json.load(f), roots))
    compare = os.path.join(run, "compare", "compare.json")
    if os.path.exists(compare):
        with open(compare) as f:
            out["compare/compare.json"] = results(json.load(f), roots)
    return out


def files(run):
    found = {}
    for top in ("models", "probe"):
        for path in glob.glob(os.path.join(run, top, "**", "*"), recursive=True):
            if os.path.isfile(path) and os.path.basename(path) not in NOT_RESULTS:
                with open(path, "rb") as f:
                    found[os.path.relpath(path, run)] = f.read()
    return found


def first_difference(a, b):
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            return f"{key}: only in {'the first' if key in a else 'the second'} run"
        if a[key] != b[key]:
            return f"{key} differs"
    return None


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--bytes"):
        print("usage: same_results.py RUN_A RUN_B [--bytes]", file=sys.stderr)
        return 2
    a, b = argv[0], argv[1]
    ra, rb = report_results(a), report_results(b)
    if ra != rb:
        line = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
        print(f"the reports differ at result line {line + 1}:\n  {(ra + [''])[line]}\n  {(rb + [''])[line]}")
        return 1
    laws = [open(os.path.join(run, "report", "laws.md")).read() for run in (a, b)]
    if laws[0] != laws[1]:
        print("report/laws.md differs")
        return 1
    na, nb = numbers(a), numbers(b)
    if not any(k.endswith("metrics.jsonl") for k in na):
        print(f"{a} has no models/*/metrics.jsonl to compare")
        return 1
    compared = [f"{len(ra)} report lines", f"{len(na)} result files' numbers"]
    difference = first_difference(na, nb)
    if difference is None and len(argv) == 3:
        fa = files(a)
        difference = first_difference(fa, files(b))
        compared.append(f"{len(fa)} files byte for byte")
    if difference:
        print(difference)
        return 1
    print(f"same results: {', '.join(compared)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
