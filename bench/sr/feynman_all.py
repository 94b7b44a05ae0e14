"""The whole Feynman database (bench/sr/feynman_equations.tsv: SRBench's 116 problems by default) at SRBench's noise
levels over several seeds: orbitlaw sr, pyoperon and gplearn at the same time limit per fit, every fit appended
to a JSONL file as it ends, so that a rerun with the same file skips the fits already done.

  python bench/sr/feynman_all.py --orbitlaw build/app/orbitlaw --jsonl runs/feynman.jsonl \
      [--time 10] [--noise 0,0.001,0.01,0.1] [--seeds 1,2,3] [--tools orbitlaw,pyoperon,gplearn] [--rows 500]
      [--only I.12.1,I.14.3] [--orbitlaw-set max_size=30 ...] [--report-only]

Data: each equation's variables uniform in the published ranges (the table's), --rows rows; the target gets
Gaussian noise of s.d. level * RMS(y), SRBench's model. The rows depend on (seed, equation) only and the noise
on (seed, equation, level), so the order of fits, a resume or another --only draw the same data. Judge: SRBench's
rule by `orbitlaw sr --check --zero-below 1e-4` against the noise-free law, the same for every tool
(feynman_bench.check). Time: orbitlaw and pyoperon stop at --time s (both on 2 threads); gplearn (one process, no
time option) evolves one generation at a time while the next is predicted to end within --time s.
--orbitlaw-set KEY=VALUE (repeatable) passes an sr option to orbitlaw's searches (operators=... replaces the
bench's operator set). The settings are part of a fit's record and of the key a rerun skips by, so an ablation
can share a JSONL file with the default run, and --report-only with the same settings selects its fits. An
orbitlaw fit also records why its search stopped (stop_reason, restarts_run, iterations_run).

The table: per tool and noise level, the symbolic-solution rate as the mean over seeds of each seed's rate (over
the equations fitted at that seed) with the spread over seeds (sample s.d.; min-max), the median seconds per
fit, and SRBench's published rates beside them (labelled published); then every equation a tool missed at
a level, with the seeds it was missed at.
"""
import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import feynman_bench as fb  # noqa: E402  the same runners and judge as the 20-equation bench

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "feynman_equations.tsv")
TOOLS = ("orbitlaw", "pyoperon", "gplearn")

# SRBench's ground-truth study, Feynman problems: symbolic-solution rate in % at target noise 0 / 0.001 / 0.01,
# the mean over its 116 problems of each problem's rate over 10 seeds (cavalab/srbench docs/csv/groundtruth.csv
# at ac1059b; AIFeynman's rows cover 112-114 problems). It has no Feynman rates at noise 0.1.
PUBLISHED = {
    "AIFeynman": {0.0: 55.8, 0.001: 1.5, 0.01: 0.0},
    "AFP_FE": {0.0: 27.0, 0.001: 15.9, 0.01: 6.1},
    "GP-GOMEA": {0.0: 26.8, 0.001: 1.6, 0.01: 0.0},
    "DSR": {0.0: 19.7, 0.001: 16.8, 0.01: 8.4},
    "Operon": {0.0: 16.6, 0.001: 0.3, 0.01: 0.1},
    "gplearn": {0.0: 16.3, 0.001: 15.8, 0.01: 13.2},
}


def load_table(path=TABLE, include_unexpressible=False):
    """[(id, formula, {variable: (low, high)})] in the file's order; SRBench's 116 unless include_unexpressible."""
    equations = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            eq_id, _, srbench, formula, variables, _ = line.rstrip("\n").split("\t")
            if srbench != "1" and not include_unexpressible:
                continue
            ranges = {}
            for item in variables.split():
                name, bounds = item.split("=")
                low, high = bounds.split(":")
                ranges[name] = (float(low), float(high))
            equations.append((eq_id, formula, ranges))
    return equations


def fit_key(record):
    return (record["equation"], record["noise"], record["seed"], record["tool"], record["time_limit"],
            record["rows"], tuple(record.get("orbitlaw_settings", ())))


def load_records(path):
    """The fits in the JSONL file. A last line cut short (the run killed while writing it) is dropped from the
    file, so that the rerun appends after the complete ones."""
    if not os.path.exists(path):
        return []
    records, good_bytes = [], 0
    with open(path, "rb") as f:
        for raw in f:
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("no newline")
                records.append(json.loads(raw))
                good_bytes += len(raw)
            except ValueError:
                print(f"feynman_all: dropping an incomplete last line of {path}", file=sys.stderr)
                break
    if good_bytes != os.path.getsize(path):
        with open(path, "r+b") as f:
            f.truncate(good_bytes)
    return records


def draw(eq_id, ranges, formula, rows, seed, level):
    """X, the noisy y and the noise-free y of one equation; seeded by (seed, equation[, level]) alone."""
    eq_hash = zlib.crc32(eq_id.encode())
    rng = np.random.default_rng([seed, eq_hash])
    columns = {n: rng.uniform(lo, hi, rows) for n, (lo, hi) in ranges.items()}
    X = np.column_stack([columns[n] for n in ranges])
    y_clean = np.asarray(fb.evaluate(formula, columns), dtype=float)
    y = fb.add_noise(y_clean, level, np.random.default_rng([seed, eq_hash, int(round(level * 1e6))]))
    return X, y, y_clean


def run_gplearn_timed(X, y, names, seconds, seed):
    """gplearn has no time option: one generation at a time (warm start) while the next is predicted to end by
    `seconds` (the last generation's time as the prediction); its settings are feynman_bench's."""
    from gplearn.genetic import SymbolicRegressor
    reg = SymbolicRegressor(population_size=1000, generations=1, warm_start=True,
                            function_set=("add", "sub", "mul", "div", "sqrt", "log", "sin", "cos"),
                            n_jobs=1, random_state=seed, stopping_criteria=1e-12, parsimony_coefficient=0.001)
    start = time.perf_counter()
    generations = 0
    while True:
        generations += 1
        reg.set_params(generations=generations)
        t0 = time.perf_counter()
        reg.fit(X, y)
        last = time.perf_counter() - t0
        if reg.run_details_["best_fitness"][-1] <= 1e-12 or time.perf_counter() - start + last > seconds:
            break
    return fb.gplearn_to_infix(reg._program, names), time.perf_counter() - start, ""


def fit_once(tool, args, eq_id, formula, ranges, seed, level, workdir):
    names = list(ranges)
    X, y, _ = draw(eq_id, ranges, formula, args.rows, seed, level)
    y_name = next(t for t in ("y", "target", "y_") if t not in names)  # some equations have a variable y
    csv = os.path.join(workdir, "data.csv")
    fb.write_csv(csv, names, X, y, y_name)
    details = {}
    try:
        if tool == "orbitlaw":
            found, elapsed, err = fb.run_orbitlaw(args.orbitlaw, csv, names, y, args.time, seed, workdir,
                                                  args.orbitlaw_set, y_name, details)
        elif tool == "pyoperon":
            found, elapsed, err = fb.run_pyoperon(X, y, names, args.time, seed)
        else:
            found, elapsed, err = run_gplearn_timed(X, y, names, args.time, seed)
    except Exception as e:  # a tool failing on one equation is a result, not a crash
        found, elapsed, err = None, float("nan"), repr(e)
    solved = fb.check(args.orbitlaw, csv, names, found, formula, y_name)
    record = {"equation": eq_id, "noise": level, "seed": seed, "tool": tool, "time_limit": args.time,
              "rows": args.rows, "solved": solved, "seconds": elapsed, "expression": found, "error": err,
              "formula": formula, "operators": None if tool == "gplearn" else fb.OPERATORS}
    if tool == "orbitlaw":
        for setting in args.orbitlaw_set:
            if setting.startswith("operators="):
                record["operators"] = setting.split("=", 1)[1].split(",")
        record["orbitlaw_settings"] = list(args.orbitlaw_set)
        record.update(details)
    return record


def summarise(records, tools, levels, order=()):
    """{tool: {level: {...}}}: rate per seed (%), its mean and spread over seeds, median seconds per fit, and the
    misses {equation: [seeds]} in the order of the equation ids `order` (the table's), others after them."""
    rank = {eq: i for i, eq in enumerate(order)}
    out = {}
    for tool in tools:
        out[tool] = {}
        for level in levels:
            mine = [r for r in records if r["tool"] == tool and r["noise"] == level]
            if not mine:
                continue
            per_seed = {}
            for seed in sorted({r["seed"] for r in mine}):
                fits = [r for r in mine if r["seed"] == seed]
                per_seed[seed] = 100.0 * sum(r["solved"] for r in fits) / len(fits)
            rates = list(per_seed.values())
            times = [r["seconds"] for r in mine if r["seconds"] is not None and not math.isnan(r["seconds"])]
            misses = {}
            for r in mine:
                if not r["solved"]:
                    misses.setdefault(r["equation"], []).append(r["seed"])
            out[tool][level] = {
                "fits": len(mine), "equations": len({r["equation"] for r in mine}), "rate_per_seed": per_seed,
                "rate_mean": statistics.mean(rates), "rate_sd": statistics.stdev(rates) if len(rates) > 1 else 0.0,
                "rate_min": min(rates), "rate_max": max(rates),
                "median_seconds": statistics.median(times) if times else float("nan"),
                "misses": {eq: sorted(misses[eq]) for eq in sorted(misses, key=lambda e: (rank.get(e, len(rank)), e))}}
    return out


def print_table(summary, tools, levels, out=sys.stdout):
    print("symbolic-solution rate, % (SRBench's rule against the noise-free law): mean over seeds ± s.d. "
          "[min-max] (equations, seeds), median s per fit", file=out)
    header = "| noise | " + " | ".join(tools) + " | " + " | ".join(f"{m} (published)" for m in PUBLISHED) + " |"
    print(header, file=out)
    print("|" + "---|" * (1 + len(tools) + len(PUBLISHED)), file=out)
    for level in levels:
        cells = []
        for tool in tools:
            s = summary.get(tool, {}).get(level)
            if s is None:
                cells.append("-")
                continue
            cells.append(f"{s['rate_mean']:.1f} ± {s['rate_sd']:.1f} [{s['rate_min']:.1f}-{s['rate_max']:.1f}] "
                         f"({s['equations']} eq, {len(s['rate_per_seed'])} seeds), {s['median_seconds']:.2f} s")
        published = [f"{PUBLISHED[m][level]:.1f}" if level in PUBLISHED[m] else "-" for m in PUBLISHED]
        print(f"| {level:g} | " + " | ".join(cells) + " | " + " | ".join(published) + " |", file=out)
    print("\nmisses (equation: seeds missed)", file=out)
    for tool in tools:
        for level in levels:
            s = summary.get(tool, {}).get(level)
            if s is None:
                continue
            items = ", ".join(f"{eq}" + ("" if len(s["rate_per_seed"]) == 1 else f" {seeds}")
                              for eq, seeds in s["misses"].items())
            print(f"{tool} noise {level:g} ({len(s['misses'])} of {s['equations']}): {items or 'none'}", file=out)


def progress(done, total, skipped, started, finished_here):
    """done/total, the rate of this run's fits and the ETA, redrawn in place on a terminal."""
    if not sys.stderr.isatty():
        return
    elapsed = time.time() - started
    rate = finished_here / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else float("nan")
    eta_text = "?" if math.isnan(eta) else f"{int(eta // 3600)}:{int(eta % 3600 // 60):02d}:{int(eta % 60):02d}"
    sys.stderr.write(f"\rfits {done}/{total} ({skipped} from earlier runs)  {60 * rate:.1f} fits/min  ETA {eta_text}   ")
    sys.stderr.flush()


def parse_list(text, kind, what):
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SystemExit(f"feynman_all: error: {what} must be a comma-separated list, got '{text}'")
    if not values:
        raise SystemExit(f"feynman_all: error: {what} is empty")
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orbitlaw", required=True, help="the orbitlaw binary (searches and the judge)")
    parser.add_argument("--jsonl", required=True, help="every fit, one JSON line each; kept and resumed")
    parser.add_argument("--time", type=float, default=10, help="seconds per fit, every tool (default 10)")
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--noise", default="0,0.001,0.01,0.1", help="SRBench's levels by default")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--only", default="", help="comma-separated equation ids (default: SRBench's 116)")
    parser.add_argument("--table", default=TABLE)
    parser.add_argument("--orbitlaw-set", action="append", default=[], metavar="KEY=VALUE",
                        help="an sr option for orbitlaw's searches (repeatable), e.g. max_size=30")
    parser.add_argument("--report-only", action="store_true", help="print the table of --jsonl, run nothing")
    args = parser.parse_args()
    bad = [s for s in args.orbitlaw_set if "=" not in s or not s.split("=", 1)[0].strip()]
    if bad:
        raise SystemExit(f"feynman_all: error: --orbitlaw-set needs KEY=VALUE, got '{bad[0]}'")
    levels = parse_list(args.noise, float, "--noise")
    if any(not math.isfinite(v) or v < 0 for v in levels):
        raise SystemExit(f"feynman_all: error: --noise needs non-negative numbers, got '{args.noise}'")
    seeds = parse_list(args.seeds, int, "--seeds")
    tools = parse_list(args.tools, str, "--tools")
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise SystemExit(f"feynman_all: error: unknown tool {unknown[0]} (one of {', '.join(TOOLS)})")
    equations = load_table(args.table)
    if args.only:
        wanted = args.only.split(",")
        missing = [w for w in wanted if w not in {e[0] for e in equations}]
        if missing:
            raise SystemExit(f"feynman_all: error: no equation {missing[0]} in {args.table}")
        equations = [e for e in equations if e[0] in wanted]

    records = load_records(args.jsonl)
    done = {fit_key(r) for r in records}
    plan = [(eq, level, seed, tool) for seed in seeds for level in levels for eq in equations for tool in tools]
    settings = lambda tool: tuple(args.orbitlaw_set) if tool == "orbitlaw" else ()  # noqa: E731
    key = lambda eq, level, seed, tool: (eq[0], level, seed, tool, args.time, args.rows, settings(tool))  # noqa: E731
    todo = [p for p in plan if key(*p) not in done]
    if todo and not args.report_only:
        for tool in sorted({p[3] for p in todo} - {"orbitlaw"}):
            module = {"pyoperon": "pyoperon.sklearn", "gplearn": "gplearn.genetic"}[tool]
            try:
                __import__(module)
            except ImportError:
                raise SystemExit(f"feynman_all: error: {tool} is not installed (bash bench/sr/run.sh installs the "
                                 "pinned peers: pyoperon==0.6.2 gplearn==0.4.3)")
        print(f"{len(equations)} equations x noise {levels} x seeds {seeds} x {tools}: {len(plan)} fits, "
              f"{len(plan) - len(todo)} already in {args.jsonl}; {args.time:g} s per fit, {args.rows} rows",
              flush=True)
        workdir = tempfile.mkdtemp(prefix="orbitlaw_feynman_all_")
        started, skipped = time.time(), len(plan) - len(todo)
        with open(args.jsonl, "a") as log:
            for i, (eq, level, seed, tool) in enumerate(todo):
                progress(skipped + i, len(plan), skipped, started, i)
                record = fit_once(tool, args, eq[0], eq[1], eq[2], seed, level, workdir)
                log.write(json.dumps(record) + "\n")
                log.flush()
                os.fsync(log.fileno())
                records.append(record)
                if sys.stderr.isatty():
                    sys.stderr.write("\r\033[K")  # clear the progress line before the fit's own line
                print(f"{skipped + i + 1}/{len(plan)} {eq[0]:10s} noise {level:<6g} seed {seed} {tool:9s} "
                          f"{'SOLVED' if record['solved'] else '-':6s} {record['seconds']:7.2f} s  "
                          f"{record['expression']}", flush=True)
            progress(len(plan), len(plan), skipped, started, len(todo))
        if sys.stderr.isatty():
            sys.stderr.write("\n")
    wanted_keys = {key(*p) for p in plan}
    selected = [r for r in records if fit_key(r) in wanted_keys]
    print(f"\n{len(selected)} fits of {len(plan)} planned ({args.time:g} s per fit, {args.rows} rows"
          + (f"; orbitlaw with {' '.join(args.orbitlaw_set)}" if args.orbitlaw_set else "") + ")")
    print_table(summarise(selected, tools, levels, [e[0] for e in equations]), tools, levels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
