#!/usr/bin/env python3
"""Packs what must come back from a run folder into a few small files under one folder.

Usage: bundle.py RUN_DIR DEST_DIR [--max-mb 16]
(or pack(RUN_DIR, DEST_DIR, max_mb) from the driver, for configs with a "bundle" section)

A GPU machine returns only a few small files, so datasets and checkpoints stay behind and the evidence
comes back as:
  report.html   the self-contained report (PNGs inlined)       report.md, laws.md   its Markdown
  compare.md    the compare tables (if the stage ran)
  results.json  every small JSON output of the run in one object: resolved config, provenance, time budget,
                stage markers (done / cut / failed), per-model metrics.jsonl rows, eval.json, train
                provenance, probe sr.json, compare.json, report.json
  logs.txt      the end of every stage log (at most 256 KB of each)
Every file is checked against the size limit; a file over it is cut down (results.json: metrics thinned
evenly; logs.txt: shorter tails) and says so, never silently dropped.
"""
import glob
import json
import os
import shutil
import sys

LOG_TAIL_BYTES = 256 * 1024
DEFAULT_MAX_MB = 16


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return {"unreadable": f"{type(e).__name__}: {e}"}


def read_jsonl(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    rows.append({"unparsable_line": line[:200]})
    return rows


def collect(run):
    rel = lambda p: os.path.relpath(p, run)  # noqa: E731
    results = {"run_dir": run, "files": {}}
    for name in ("experiment.json", "provenance.json", "budget.json"):
        path = os.path.join(run, name)
        if os.path.exists(path):
            results["files"][name] = read_json(path)
    patterns = [
        "stages/*.done", "stages/*.cut", "stages/*.failed", "data/*.provenance.json", "models/*/*.json",
        "probe/*/*.json", "compare/*.json", "report/report.json",
        # runs with several seeds keep each seed's outputs one folder further down
        "models/*/seed-*/*.json", "probe/*/seed-*/*.json",
    ]
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(run, pattern))):
            results["files"][rel(path)] = read_json(path)
    metrics = glob.glob(os.path.join(run, "models", "*", "metrics.jsonl"))
    metrics += glob.glob(os.path.join(run, "models", "*", "seed-*", "metrics.jsonl"))
    for path in sorted(metrics):
        results["files"][rel(path)] = read_jsonl(path)
    return results


def thin(rows, keep):
    if len(rows) <= keep:
        return rows
    step = len(rows) / keep
    picked = [rows[int(i * step)] for i in range(keep)]
    return picked[:-1] + [rows[-1]]


def write_results(results, path, limit):
    keep = None
    while True:
        text = json.dumps(results, indent=1)
        if len(text.encode()) <= limit:
            break
        keep = 1000 if keep is None else keep // 2
        if keep < 10:
            raise SystemExit("bundle: error: results.json stays over the size limit even with thinned metrics")
        for key, value in results["files"].items():
            if key.endswith("metrics.jsonl"):
                results["files"][key] = thin(value, keep)
        results["thinned_metrics_to_rows"] = keep
    with open(path, "w") as f:
        f.write(text)


def write_logs(run, path, limit):
    logs = sorted(glob.glob(os.path.join(run, "logs", "*.log")))
    tail = LOG_TAIL_BYTES
    while True:
        parts = []
        for log in logs:
            size = os.path.getsize(log)
            with open(log, "rb") as f:
                if size > tail:
                    f.seek(size - tail)
                data = f.read().decode("utf-8", "replace")
            cut = f" (last {tail} of {size} bytes)" if size > tail else ""
            parts.append(f"===== {os.path.relpath(log, run)}{cut} =====\n{data}\n")
        text = "".join(parts)
        if len(text.encode()) <= limit or tail < 1024:
            break
        tail //= 2
    with open(path, "w") as f:
        f.write(text)


def pack(run, dest, limit_mb=DEFAULT_MAX_MB):
    """Packs RUN_DIR's evidence into DEST_DIR, each file at most limit_mb; returns an exit status."""
    run, dest = os.path.abspath(run), os.path.abspath(dest)
    limit = int(limit_mb * 1024 * 1024)
    if not os.path.isfile(os.path.join(run, "experiment.json")):
        print(f"bundle: error: '{run}' is not a run folder (no experiment.json)", file=sys.stderr)
        return 1
    os.makedirs(dest, exist_ok=True)
    copied = []
    for source, name in (("report/report.html", "report.html"), ("report/report.md", "report.md"),
                         ("report/laws.md", "laws.md"), ("compare/compare.md", "compare.md")):
        path = os.path.join(run, source)
        if os.path.exists(path):
            if os.path.getsize(path) > limit:
                print(f"bundle: warning: {source} is {os.path.getsize(path)} bytes, over the limit; not copied")
                continue
            shutil.copyfile(path, os.path.join(dest, name))
            copied.append(name)
    write_results(collect(run), os.path.join(dest, "results.json"), limit)
    write_logs(run, os.path.join(dest, "logs.txt"), limit)
    copied += ["results.json", "logs.txt"]
    sizes = {name: os.path.getsize(os.path.join(dest, name)) for name in copied}
    for name, size in sizes.items():
        assert size <= limit, f"{name} is {size} bytes"
    print(f"bundle: {dest}: " + ", ".join(f"{n} ({s / 1024:.0f} KB)" for n, s in sizes.items()), flush=True)
    return 0


def main():
    args = sys.argv[1:]
    limit_mb = DEFAULT_MAX_MB
    if "--max-mb" in args:
        i = args.index("--max-mb")
        limit_mb = float(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    return pack(args[0], args[1], limit_mb)


if __name__ == "__main__":
    sys.exit(main())
