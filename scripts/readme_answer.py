#!/usr/bin/env python3
"""The README's answer table, generated from the results pages (docs/results/*.md).

Usage: readme_answer.py [--check] [--readme README.md] [--pages docs/results]

Every answer table of a run with at least 3 seeds per model (the pages mark them with
`<!-- answer-table RUN seeds=N -->`, experiments/lib/results_page.py) becomes rows of the README's table, between
the README's BEGIN and END marker lines. Without --check the README is rewritten; with --check nothing is written,
and a README whose table differs from the pages is printed as a diff, exit 1.
"""
import argparse
import difflib
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import atomic_file  # noqa: E402  the README written whole or not at all
from results_page import ANSWER_HEADER  # noqa: E402  the pages' answer table

BEGIN = "<!-- answer-table: generated from docs/results/*.md by scripts/readme_answer.py; do not edit -->"
END = "<!-- end of the generated answer-table -->"
MARKER = re.compile(r"<!-- answer-table (\S+) seeds=(\d+) -->")
MIN_SEEDS = 3
# The README's columns: the page's, less the label (the kind names the model) and the ladder (in the page).
COLUMNS = ["learned in", "1-step median / constant acceleration's", "a_impl r exponent", "s", "star-mass exponent"]


def cells(line):
    """The cells of a Markdown table row, "\\|" inside a cell kept as it is."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [p.strip() for p in parts[1:-1]]


class PageError(Exception):
    pass


def page_rows(path):
    """(run, kind, {column: cell}) for every row of every answer table of a run with at least MIN_SEEDS seeds."""
    with open(path) as f:
        lines = f.read().splitlines()
    found = []
    for i, line in enumerate(lines):
        m = MARKER.fullmatch(line.strip())
        if not m or int(m.group(2)) < MIN_SEEDS:
            continue
        header = cells(lines[i + 1])
        if header != ANSWER_HEADER:
            raise PageError(f"{path}:{i + 2}: the answer table's header is not {ANSWER_HEADER}")
        for row in lines[i + 3:]:
            if not row.startswith("|"):
                break
            values = dict(zip(header, cells(row)))
            kind = re.search(r"\[([^\]]+)\]$", values["model"])
            found.append((m.group(1), kind.group(1) if kind else values["model"], values))
    return found


def generated(pages_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(pages_dir, "*.md"))):
        link = f"docs/results/{os.path.basename(path)}"  # from the README, at the repository's root
        for run, kind, values in page_rows(path):
            rows.append([f"[{run}]({link})", f"`{kind}`"] + [values[c] for c in COLUMNS])
    if not rows:
        raise PageError(f"no answer table of a run with at least {MIN_SEEDS} seeds in {pages_dir}/*.md")
    header = ["run (results page)", "model"] + COLUMNS
    return [BEGIN, "| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(r) + " |" for r in rows] + [END]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 where the README differs")
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    parser.add_argument("--pages", default=os.path.join(ROOT, "docs", "results"))
    args = parser.parse_args()
    with open(args.readme) as f:
        text = f.read()
    lines = text.splitlines()
    try:
        block = generated(args.pages)
        if lines.count(BEGIN) != 1 or lines.count(END) != 1 or lines.index(BEGIN) > lines.index(END):
            raise PageError(f"{args.readme} must hold the line {BEGIN!r} once, then {END!r} once")
    except (OSError, PageError) as e:
        print(f"readme_answer: error: {e}", file=sys.stderr)
        return 1
    start, end = lines.index(BEGIN), lines.index(END)
    current = lines[start:end + 1]
    if args.check:
        if current == block:
            print(f"readme_answer: {args.readme} agrees with {args.pages} ({len(block) - 4} rows)")
            return 0
        diff = difflib.unified_diff(current, block, f"{args.readme} (as it is)", f"from {args.pages}", lineterm="")
        print("\n".join(diff))
        print(f"readme_answer: error: {args.readme}'s answer table differs from the results pages; run "
              "scripts/readme_answer.py to regenerate it", file=sys.stderr)
        return 1
    new = lines[:start] + block + lines[end + 1:]
    atomic_file.write_text(args.readme, "\n".join(new) + ("\n" if text.endswith("\n") else ""))
    print(f"readme_answer: {args.readme}: {len(block) - 4} rows from {args.pages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
