#!/usr/bin/env python3
"""Checks that a run folder's report exists and was made from this run's outputs.

Usage: check_report.py RUN --since EPOCH_SECONDS [--require PLOT.png]... [--no-missing]

- report.md, report.html, laws.md exist and were written after EPOCH (the test's start), as were every PNG
  the report shows and every stage marker;
- every image in report.md exists, and report.html inlines exactly that many PNGs (self-contained page);
- the Training table quotes each model's (each seed's) final train loss as found in its metrics.jsonl, the
  compare tables of compare/compare.md appear verbatim, and each eval.json's loss (next-token, or next-position MSE) appears in the
  Evaluation table;
- the report opens with its Answer section (the first heading after the title), whose first lines are
  laws.md's per-model lines followed by the report's first figure; Provenance is the last section;
- each --require'd plot is in the report; with --no-missing nothing at all is listed as missing.
Prints each failure and exits 1 if any.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "experiments"))
from report import FIRST_FIGURES, fmt, replicates  # noqa: E402  the report's number format, folders, figures

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--since", type=float, required=True)
    parser.add_argument("--require", action="append", default=[])
    parser.add_argument("--no-missing", action="store_true")
    args = parser.parse_args()
    run, since = args.run, args.since - 1  # file times have 1 s granularity on some filesystems
    report_dir = os.path.join(run, "report")
    paths = {name: os.path.join(report_dir, name) for name in ("report.md", "report.html", "laws.md", "report.json")}
    for name, path in paths.items():
        if check(os.path.exists(path), f"{name} missing"):
            check(os.path.getmtime(path) >= since, f"{name} is older than this run")
    if failures:
        return report()
    md = open(paths["report.md"]).read()
    page = open(paths["report.html"]).read()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    for image in images:
        path = os.path.join(report_dir, image)
        if check(os.path.exists(path), f"plot {image} referenced by report.md does not exist"):
            check(os.path.getmtime(path) >= since, f"plot {image} is older than this run")
            check(open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"plot {image} is not a PNG")
    check(page.count("data:image/png;base64,") == len(images),
          f"report.html inlines {page.count('data:image/png;base64,')} PNGs, report.md shows {len(images)}")
    check("src='http" not in page and 'src="http' not in page, "report.html loads something from the network")
    for plot in args.require:
        check(plot in images, f"required plot {plot} is not in the report (has: {', '.join(images)})")

    headings = re.findall(r"^(#+) (.*)$", md, re.M)
    check(headings[:2] == [("#", headings[0][1]), ("##", "Answer")] if headings else False,
          f"the report does not open with its Answer section (headings: {headings[:3]})")
    check(sum(1 for level, _ in headings if level == "#") == 1, "the report has more than one title (# heading)")
    # The answer opens with what the experiment prints at its end (laws.md's per-model lines), then its first
    # figure, before the sentences; provenance closes the report.
    opening = md.split("\n## Answer\n", 1)[-1].split("\n### Differences over seeds", 1)[0]
    laws = open(paths["laws.md"]).read()
    lines = [line for line in laws.splitlines() if line.startswith("- ")]
    opens = check(all(line in opening for line in lines), "the answer does not open with laws.md's per-model lines")
    first = next((name for name in FIRST_FIGURES if name in images), None)
    if first and opens:
        check(opening.find(f"]({first})") > max([opening.index(line) for line in lines] or [0]),
              f"the answer does not show {first} after its per-model lines")
    check(headings[-1] == ("##", "Provenance"), f"the report does not end with its provenance ({headings[-3:]})")
    config = json.load(open(os.path.join(run, "experiment.json")))
    for r in replicates(run, config):
        kind, name = r.tag, r.name
        metrics_path = os.path.join(r.model_dir, "metrics.jsonl")
        if os.path.exists(metrics_path):
            rows = [json.loads(line) for line in open(metrics_path) if line.strip()]
            last = next(r for r in reversed(rows) if "train_loss" in r or "loss" in r)
            loss = last.get("train_loss", last.get("loss"))
            check(re.search(rf"^\| {re.escape(name)} \| {last.get('step')} \|.*\| {re.escape(fmt(loss))} \|", md, re.M),
                  f"Training table does not quote {kind}'s final train loss {fmt(loss)} at step {last.get('step')}")
        eval_path = os.path.join(r.model_dir, "eval.json")
        if os.path.exists(eval_path) and "loss" in json.load(open(eval_path)):
            loss = json.load(open(eval_path))["loss"]
            check(f"| {name} | {fmt(loss)} |" in md, f"Evaluation table does not quote {kind}'s loss {fmt(loss)}")
    compare_md = os.path.join(run, "compare", "compare.md")
    if os.path.exists(compare_md):
        for line in open(compare_md):
            if line.startswith("|"):
                check(line.rstrip() in md, f"compare.md line not in the report: {line.rstrip()}")
    for marker in os.listdir(os.path.join(run, "stages")):
        check(os.path.getmtime(os.path.join(run, "stages", marker)) >= since, f"stage marker {marker} predates this run")
    missing = json.load(open(paths["report.json"]))["missing"]
    if args.no_missing:
        check(not missing, "report lists missing items: " + "; ".join(f"{m['what']} ({m['why']})" for m in missing))
    return report()


def report():
    for failure in failures:
        print(f"check_report: FAIL: {failure}")
    if not failures:
        print("check_report: report complete and made from this run")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
