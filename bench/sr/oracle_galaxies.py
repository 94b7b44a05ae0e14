"""How often a law search finds Newton on one probe's galaxies, over many seeds, for one or two builds.

A probe folder's sr.json names each galaxy's rows; its predictions.h5 holds the inputs (r, m1, m2) and every
probe's predictions. Each galaxy of the chosen probe and protocol is written out as a table and searched with
`orbitlaw sr` at that protocol's settings (operators, loss, budget from sr.json; constants fitted on 128-row
batches and no held-out rows, as the probe's protocols do) once per seed, and the selected law is judged by the
probe's rule (C m1 m2 / r^2 with C > 0, by SRBench's equivalence). Five galaxies of one seed, what the probe
stage itself shows, cannot tell 4/5 from 3/5; forty searches can tell a real change from a draw.
    python bench/sr/oracle_galaxies.py --orbitlaw BIN [--baseline-orbitlaw OLD_BIN] PROBE_DIR
        [--probe newton] [--protocol published] [--seeds 8] [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def galaxy_tables(probe_dir, probe, protocol, workdir):
    with open(os.path.join(probe_dir, "sr.json")) as f:
        searches = json.load(f)["searches"]
    match = [s for s in searches if s["probe"] == probe and s["protocol"] == protocol]
    if not match:
        raise SystemExit(f"oracle_galaxies: error: {probe_dir}/sr.json has no {probe} / {protocol} search")
    search = match[0]
    tables = []
    with h5py.File(os.path.join(probe_dir, "predictions.h5"), "r") as h5:
        columns = {name: h5[name][:] for name in ("r", "m1", "m2")}
        predicted = h5[f"predictions/{probe}"][:]
    for galaxy in search["galaxies"]:
        rows = np.asarray(galaxy["rows"])
        path = os.path.join(workdir, f"{probe}-{protocol}-{galaxy['galaxy']}.csv")
        data = np.stack([columns["r"][rows], columns["m1"][rows], columns["m2"][rows], predicted[rows]], axis=1)
        np.savetxt(path, data, delimiter=",", header="r,m1,m2,y", comments="", fmt="%.17g")
        tables.append(path)
    return search["options"], tables


def run_search(binary, table, options, seed, workdir, tag):
    prefix = os.path.join(workdir, f"{tag}-{os.path.basename(table)}-{seed}")
    cmd = [binary, "sr", "--data", table, "--x", "r,m1,m2", "--y", "y", "--operators", ",".join(options["operators"]),
           "--loss", options["loss"], "--max-size", str(options["max_size"]), "--iterations",
           str(options["iterations"]), "--seed", str(seed), "--threads", "1", "--target", "m1*m2/r^2", "--out",
           prefix, "--set", f"populations={options['populations']}", "--set",
           f"population_size={options['population_size']}", "--set", f"restarts={options['restarts']}", "--set",
           "batch_size=128", "--set", "holdout_fraction=0"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, CI="1"))
    if r.returncode != 0:
        raise SystemExit(f"oracle_galaxies: error: {' '.join(cmd)} failed: {r.stderr.strip()}")
    with open(prefix + ".front.json") as f:
        doc = json.load(f)
    eq = doc["equivalence"]
    newton = bool(eq.get("equivalent")) and eq.get("relation") == "ratio" and eq.get("constant", 0) > 0
    return doc["seconds"], newton


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orbitlaw", required=True)
    parser.add_argument("--baseline-orbitlaw", default="", help="a second build searched on the same tables")
    parser.add_argument("probe_dir", help="an `orbitlaw probe --out` folder (sr.json, predictions.h5)")
    parser.add_argument("--probe", default="newton")
    parser.add_argument("--protocol", default="published")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2, help="searches at once (one thread each)")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="orbitlaw_oracle_galaxies_")
    options, tables = galaxy_tables(args.probe_dir, args.probe, args.protocol, workdir)
    builds = [("today", args.orbitlaw)] + ([("baseline", args.baseline_orbitlaw)] if args.baseline_orbitlaw else [])
    summary = {}
    for tag, binary in builds:
        tasks = [(table, seed) for table in tables for seed in range(1, args.seeds + 1)]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda t: run_search(binary, t[0], options, t[1], workdir, tag), tasks))
        seconds = [s for s, _ in results]
        found = sum(n for _, n in results)
        summary[tag] = {"binary": binary, "searches": len(results), "newton": found, "seconds": sum(seconds),
                        "median_seconds": statistics.median(seconds)}
        print(f"{tag:9s} {binary}: Newton in {found}/{len(results)} searches ({len(tables)} galaxies x "
              f"{args.seeds} seeds), {sum(seconds):.1f} s of search ({args.jobs} at once), median "
              f"{statistics.median(seconds):.2f} s", flush=True)
    if len(summary) == 2:
        print(f"search seconds, baseline / today: x{summary['baseline']['seconds'] / summary['today']['seconds']:.2f}")
    print(json.dumps({"probe_dir": args.probe_dir, "probe": args.probe, "protocol": args.protocol,
                      "seeds": args.seeds, "results": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
