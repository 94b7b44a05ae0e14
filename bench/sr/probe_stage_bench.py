"""The vafa-slice experiment's probe stage, today's law-search engine against its earlier settings, on one trained model.

Both runs are `orbitlaw probe` with the run folder's own probe config, checkpoint and probe data and
`time_limit_seconds=0` (no share of the stage's wall-time limit: each search runs its whole budget, so the
comparison is of the engines, not of how much of a limit each used). The earlier engine is today's with the two
settings that made it fast turned off: constants fitted on every row of a galaxy (`batch_size` 0 in both
protocols, the default before bench/sr/galaxies.sh) and no stop at an exact fit (`target_patience` beyond the
budget). Everything else, fine-tuning, linear probes and oracles included, is the same in both runs.

`--earlier-orbitlaw BINARY` runs the earlier engine with another build, e.g. one of a commit from before a change
to the engine's code (the settings above cannot turn such a change off):
    git worktree add /tmp/orbitlaw-old COMMIT && cmake -S /tmp/orbitlaw-old -B /tmp/orbitlaw-old/build \
        -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/orbitlaw-old/build -j2 --target orbitlaw
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EARLIER = ["sr.published.batch_size=0", "sr.extended.batch_size=0", "sr.published.target_patience=1000000",
           "sr.extended.target_patience=1000000"]


def run_probe(binary, run, model, out, extra):
    cmd = [binary, "probe", "--config", os.path.join(run, "configs", f"probe-{model}.json"), "--set",
           f"label={model}", "--checkpoint", os.path.join(run, "models", model, "checkpoint.pt"), "--data",
           os.path.join(run, "data", "probe.h5"), "--out", out, "--set", "time_limit_seconds=0"]
    for s in extra:
        cmd += ["--set", s]
    # A probe folder resumes what it holds (e.g. a finished fine-tuning): each run starts from nothing.
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, CI="1"))
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"probe_stage_bench: error: {' '.join(cmd)} failed: {r.stderr.strip()}")
    with open(os.path.join(out, "sr.json")) as f:
        searches = json.load(f)["searches"]
    return elapsed, {(s["probe"], s["protocol"]): s for s in searches}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orbitlaw", required=True)
    parser.add_argument("run", help="a finished vafa-slice run folder")
    parser.add_argument("--model", default="softmax")
    parser.add_argument("--earlier-orbitlaw", default="", help="the build to run the earlier engine with "
                        "(default: --orbitlaw)")
    parser.add_argument("--out", default="", help="keep both probe folders and results.json here")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.run, "models", args.model, "checkpoint.pt")):
        raise SystemExit(f"probe_stage_bench: error: {args.run} has no trained model '{args.model}'")
    out = args.out or tempfile.mkdtemp(prefix="orbitlaw_probe_stage_")
    os.makedirs(out, exist_ok=True)
    earlier_binary = args.earlier_orbitlaw or args.orbitlaw
    if not os.access(earlier_binary, os.X_OK):
        raise SystemExit(f"probe_stage_bench: error: {earlier_binary} is not an executable")
    print(f"probe stage of {args.run} model {args.model}, no time limit: today's engine, then the earlier one "
          f"({earlier_binary})", flush=True)
    now_s, now = run_probe(args.orbitlaw, args.run, args.model, os.path.join(out, "today"), [])
    print(f"  today's engine: {now_s:.1f} s", flush=True)
    old_s, old = run_probe(earlier_binary, args.run, args.model, os.path.join(out, "earlier"), EARLIER)
    print(f"  earlier engine: {old_s:.1f} s", flush=True)

    def counts(s):
        g = s["newton_galaxies"]
        n = len(s["galaxies"])
        return f"{g['srbench']},{g['strict']},{g['exponents']} of {n}"

    print(f"\n{'probe / protocol':24s} {'earlier s':>9s} {'today s':>8s} {'ratio':>6s}  "
          f"Newton galaxies srbench,strict,exponents: earlier | today")
    rows, ratios = [], []
    for key in old:
        o, n = old[key], now[key]
        ratio = o["seconds"] / n["seconds"] if n["seconds"] > 0 else float("inf")
        ratios.append(ratio)
        rows.append({"probe": key[0], "protocol": key[1], "earlier_seconds": o["seconds"],
                     "today_seconds": n["seconds"], "ratio": ratio, "earlier_newton": o["newton_galaxies"],
                     "today_newton": n["newton_galaxies"]})
        print(f"{key[0] + ' / ' + key[1]:24s} {o['seconds']:9.1f} {n['seconds']:8.1f} {ratio:6.2f}  "
              f"{counts(o)} | {counts(n)}")
    search_old = sum(r["earlier_seconds"] for r in rows)
    search_now = sum(r["today_seconds"] for r in rows)
    print(f"\nlaw searches: {search_old:.1f} s -> {search_now:.1f} s (x{search_old / search_now:.2f}; median "
          f"per search x{statistics.median(ratios):.2f}); the whole probe stage: {old_s:.1f} s -> {now_s:.1f} s "
          f"(x{old_s / now_s:.2f})")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"run": args.run, "model": args.model, "orbitlaw": args.orbitlaw, "earlier_orbitlaw": earlier_binary,
                   "earlier_settings": EARLIER, "searches": rows,
                   "stage_seconds": {"earlier": old_s, "today": now_s}}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
