"""Speed of one published-protocol law-search restart on probe-sized galaxies, against the engine's unbatched
fit (the probe's setting before batches) and pyoperon, on the same galaxy files.

A galaxy is what the probe's law search sees: 1000 rows of (r, m1, m2) and a predicted force. Here the
predictions are Newton's force F = G m1 m2 / r^2 (G = 4 pi^2) times log-normal noise of 12% (the size of the
KNN oracle's error on vafa-slice's probe data, probe/README.md), on the probe's ranges (r in 0.3-40 AU,
masses log-uniform in 1e-4-1e-2 Msun). Each galaxy is searched with the published protocol (operators
+ * sin cos exp inv, thresholded L1 loss, sizes up to 20, PySR's selection on every row; one restart of the
probe's budget, 60 iterations of 4 populations of 30, on 2 threads) by `orbitlaw sr` with constants fitted on every row (batch_size 0) and on
128-row batches (then refined on every row), and by pyoperon (its defaults, at most 60 s, 2 threads, operators + * / sin
cos exp, squared error: it has no thresholded L1). Recovery: SRBench's rule against m1*m2/r^2 and the strict
tier (the constant within 5% of G), both through `orbitlaw sr --check`. The ratios are medians of per-galaxy
wall-time ratios measured in the same run.
"""
import argparse
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

G = 4 * math.pi ** 2
NAMES = ["r", "m1", "m2"]
PUBLISHED = ["--operators", "+,*,sin,cos,exp,inv", "--loss", "thresholded_l1", "--max-size", "20",
             "--iterations", "60", "--set", "populations=4", "--set", "population_size=30", "--threads", "2", "--set", "holdout_fraction=0", "--set", "restarts=1"]


def write_galaxy(path, rows, noise, rng):
    r = rng.uniform(0.3, 40, rows)
    m1 = np.exp(rng.uniform(math.log(1e-4), math.log(1e-2), rows))
    m2 = np.exp(rng.uniform(math.log(1e-4), math.log(1e-2), rows))
    force = G * m1 * m2 / r ** 2 * np.exp(noise * rng.standard_normal(rows))
    np.savetxt(path, np.column_stack([r, m1, m2, force]), delimiter=",", header="r,m1,m2,F", comments="",
               fmt="%.17g")
    return np.column_stack([r, m1, m2]), force


def verdict(binary, csv, law):
    """(srbench, strict, C/G) of `law` against m1*m2/r^2."""
    if law is None:
        return False, False, float("nan")
    r = subprocess.run([binary, "sr", "--data", csv, "--x", ",".join(NAMES), "--y", "F", "--check", law,
                        "--target", "m1*m2/r^2", "--zero-below", "1e-4"], capture_output=True, text=True)
    m = re.search(r"equivalence: (\{.*\})", r.stdout)
    if not m:
        return False, False, float("nan")
    e = json.loads(m.group(1))
    ok = bool(e["equivalent"]) and e["relation"] == "ratio"
    ratio = e["constant"] / G if ok else float("nan")
    return ok, ok and abs(ratio - 1) <= 0.05, ratio


def run_orbitlaw(binary, csv, seed, batch, workdir):
    prefix = os.path.join(workdir, f"orbitlaw-{batch}")
    cmd = [binary, "sr", "--data", csv, "--x", ",".join(NAMES), "--y", "F", "--seed", str(seed), *PUBLISHED,
           "--set", f"batch_size={batch}", "--out", prefix]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, CI="1"))
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    with open(prefix + ".front.json") as f:
        doc = json.load(f)
    return doc["front"][doc["best"]]["text"], elapsed, doc["evaluations"]


def run_pyoperon(X, y, seed):
    from pyoperon.sklearn import SymbolicRegressor
    # Its defaults but for the operators, the size limit of the protocol, and at most 60 s.
    reg = SymbolicRegressor(allowed_symbols="add,mul,div,constant,variable,sin,cos,exp", n_threads=2,
                            random_state=seed, max_length=20, max_time=60)
    start = time.perf_counter()
    reg.fit(X, y)
    elapsed = time.perf_counter() - start
    return reg.get_model_string(reg.model_, 17, NAMES), elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orbitlaw", required=True)
    parser.add_argument("--galaxies", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.12, help="log-normal noise of the predictions")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tools", default="unbatched,batched,pyoperon")
    parser.add_argument("--out", default="", help="write results JSON here")
    args = parser.parse_args()
    if args.galaxies < 1 or args.rows < 8 or not args.noise >= 0 or args.batch < 1:
        raise SystemExit("galaxy_bench: error: --galaxies >= 1, --rows >= 8, --noise >= 0 and --batch >= 1")
    tools = args.tools.split(",")
    rng = np.random.default_rng(args.seed)
    workdir = tempfile.mkdtemp(prefix="orbitlaw_galaxy_bench_")
    print(f"{args.galaxies} galaxies of {args.rows} rows, noise {args.noise:g}, published protocol, one restart, "
          f"2 threads; batched = constants on {args.batch}-row batches", flush=True)
    results = []
    for g in range(args.galaxies):
        csv = os.path.join(workdir, f"galaxy-{g}.csv")
        X, y = write_galaxy(csv, args.rows, args.noise, rng)
        row = {"galaxy": g}
        for tool in tools:
            evaluations = None
            try:
                if tool == "pyoperon":
                    law, seconds = run_pyoperon(X, y, args.seed + g)
                else:
                    batch = 0 if tool == "unbatched" else args.batch
                    law, seconds, evaluations = run_orbitlaw(args.orbitlaw, csv, args.seed + g, batch, workdir)
            except Exception as e:  # a tool failing on one galaxy is a result, not a crash
                law, seconds, err = None, float("nan"), repr(e)
                print(f"  galaxy {g} {tool}: {err}", flush=True)
            srbench, strict, ratio = verdict(args.orbitlaw, csv, law)
            row[tool] = {"law": law, "seconds": seconds, "evaluations": evaluations, "srbench": srbench,
                         "strict": strict, "C_over_G": ratio}
            print(f"galaxy {g} {tool:9s} {seconds:7.2f} s  srbench {'Y' if srbench else '-'} strict "
                  f"{'Y' if strict else '-'}  {law}", flush=True)
        results.append(row)

    print("\nsummary (wall seconds per restart, median over galaxies; recovery of m1*m2/r^2)")
    summary = {}
    for tool in tools:
        times = [r[tool]["seconds"] for r in results if not math.isnan(r[tool]["seconds"])]
        summary[tool] = {"median_seconds": statistics.median(times) if times else float("nan"),
                         "srbench": sum(r[tool]["srbench"] for r in results),
                         "strict": sum(r[tool]["strict"] for r in results), "galaxies": len(results)}
        s = summary[tool]
        print(f"  {tool:9s} median {s['median_seconds']:7.2f} s   srbench {s['srbench']}/{len(results)}   "
              f"strict {s['strict']}/{len(results)}")
    for peer in [t for t in tools if t != "batched"]:
        if "batched" not in tools:
            break
        ratios = [r[peer]["seconds"] / r["batched"]["seconds"] for r in results
                  if r[peer]["seconds"] > 0 and r["batched"]["seconds"] > 0]
        if ratios:
            summary[f"speedup_vs_{peer}"] = statistics.median(ratios)
            print(f"  batched is x{statistics.median(ratios):.2f} faster than {peer} (median of per-galaxy ratios, "
                  f"range {min(ratios):.2f}-{max(ratios):.2f})")
    if args.out:
        record = {"settings": vars(args), "results": results, "summary": summary}
        pathlib.Path(args.out).write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
