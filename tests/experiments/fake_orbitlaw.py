#!/usr/bin/env python3
"""A test double of the `orbitlaw` binary for the experiment-driver tests.

It accepts the command lines that the experiment driver issues (experiments/lib/stages.py) and writes files in
the layout and keys that docs/experiments.md specifies (the ones experiments/report.py reads), filled with
random numbers drawn fresh on every call, so a report that quotes them must have been made from this run.
Training advances FAKE_STEPS steps of FAKE_STEP_SECONDS each, rewrites checkpoint.pt after every step and
honours --resume.
Every invocation is appended to $FAKE_ORBITLAW_CALLS (one line: the arguments, and with FAKE_RECORD_THREADS=1
the OMP_NUM_THREADS it was given) so tests can check which stages ran. FAKE_FAIL=<subcommand> makes that subcommand fail like a real stage would; FAKE_VECTORS=1 adds force
vectors to the predictions (the solar-system figure). Like the real binary, training records the seed its config
resolves to (--config, then --set seed=) in train.provenance.json, and compare names each row after the probe's
label, so tests can check which seed trained which folder.
With FAKE_DETERMINISTIC=1 the numbers are instead drawn from a seed that is a function of the call's inputs (the
contents of the files it reads, other paths relative to the run folder, the other arguments), as the real binary's
results are a function of its inputs at one thread: the same stage in another run folder (a shard's) writes the
same bytes, so a merged run can be checked bit for bit against a single one.
"""
import hashlib
import json
import os
import random
import sys
import time

import h5py
import numpy as np

# The double's stand-in for the binary's G (AU, years, solar masses), which the real compare writes into
# compare.json and the report quotes from there.
G = 4 * np.pi**2
# The seed of every random number this call draws: None (fresh numbers) unless FAKE_DETERMINISTIC is set.
SEED = None


def in_run(path):
    """A path relative to the run folder holding it (the nearest folder above with an experiment.json): the
    same in every run folder of the experiment."""
    folder = os.path.dirname(os.path.abspath(path))
    while folder != os.path.dirname(folder):
        if os.path.isfile(os.path.join(folder, "experiment.json")):
            return os.path.relpath(path, folder)
        folder = os.path.dirname(folder)
    return path


def input_seed(args):
    """A seed that depends only on what the call reads: file contents, other paths within the run folder, the
    other arguments. --resume is left out: a resumed training continues the same run."""
    digest = hashlib.sha256()
    for arg in args:
        if arg == "--resume":
            continue
        if os.path.isfile(arg):
            with open(arg, "rb") as f:
                digest.update(f.read())
        else:
            digest.update(in_run(arg).encode() if os.sep in arg else arg.encode())
        digest.update(b"\0")
    return int.from_bytes(digest.digest()[:8], "little")


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def resolved(args, key, default=None):
    """A config key as orbitlaw resolves it: the --config file, overridden by a later --set key=value."""
    value = default
    config = option(args, "--config")
    if config:
        value = json.load(open(config)).get(key, value)
    for i, arg in enumerate(args[:-1]):
        if arg == "--set" and args[i + 1].startswith(key + "="):
            value = args[i + 1].split("=", 1)[1]
    return value


def write_json(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)


def simulate(args):
    out = option(args, "--out")
    with h5py.File(out + ".tmp", "w") as f:
        f.attrs["format"] = "fake-orbitlaw-trajectories"
        f["position"] = np.random.default_rng(SEED).normal(size=(10, 2))
    os.replace(out + ".tmp", out)


def train(args):
    out = option(args, "--out")
    os.makedirs(out, exist_ok=True)
    steps = int(os.environ.get("FAKE_STEPS", "4"))
    pause = float(os.environ.get("FAKE_STEP_SECONDS", "0"))
    checkpoint = os.path.join(out, "checkpoint.pt")
    metrics = os.path.join(out, "metrics.jsonl")
    start = 0
    if "--resume" in args:
        start = json.load(open(checkpoint))["step"]
    elif os.path.exists(metrics):
        os.remove(metrics)
    base = 6.0 + random.random()
    for step in range(start + 1, steps + 1):
        time.sleep(pause)
        loss = base * 0.8**step
        row = {"step": step, "tokens": step * 1024, "train_loss": loss, "lr": 1e-3, "tokens_per_s": 1000.0 + step}
        if step % 2 == 0:
            row["val_loss"] = loss * 1.05
        with open(metrics, "a") as f:
            f.write(json.dumps(row) + "\n")
        write_json(checkpoint, {"step": step})
    write_json(os.path.join(out, "train.provenance.json"),
               {"stage": "train", "fake": True, "seed": resolved(args, "seed")})


def evaluate(args):
    rng = random.random
    heads = [{"layer": l, "head": h, "entropy": rng(), "mean_distance": 10 * rng()} for l in range(2) for h in range(2)]
    write_json(
        option(args, "--out"),
        {
            "loss": 2 + rng(),
            "accuracy": rng(),
            "trajectory_error": {
                str(h): {"model": rng() * h, "previous_position": rng() * h, "per_orbit_mean": rng() * h,
                         "constant_velocity": rng() * h}
                for h in (1, 5, 100)
            },
            "length_extrapolation": [{"factor": f, "context": 64 * f, "loss": 2 + rng() * f} for f in (1, 2, 4)],
            "attention": heads,
        },
    )


def probe(args):
    out = option(args, "--out")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    n = 200
    r, m1, m2 = rng.uniform(0.5, 5, n), rng.uniform(1e-4, 1e-2, n), rng.uniform(1e-4, 1e-2, n)
    force = G * m1 * m2 / r**2
    path = os.path.join(out, "predictions.h5")
    with h5py.File(path + ".tmp", "w") as f:
        for name, values in (("r", r), ("m1", m1), ("m2", m2), ("force_true", force)):
            f[name] = values
        f["predictions/finetune"] = force * rng.lognormal(0, 0.3, n)
        f["predictions/knn"] = force * rng.lognormal(0, 0.05, n)
        if os.environ.get("FAKE_VECTORS"):
            angle = rng.uniform(0, 2 * np.pi, n)
            body = rng.integers(0, 8, n)
            pos = np.stack([np.cos(angle), np.sin(angle)], 1) * (1 + body[:, None])
            f["position"], f["body"], f["force_true_vec"] = pos, body, -pos
            f["predictions_vec/finetune"] = -pos + rng.normal(0, 0.2, pos.shape)
    os.replace(path + ".tmp", path)
    galaxies = []
    for g in range(3):
        front = [{"complexity": c, "loss": float(rng.uniform(0.1, 1) / c), "score": 0.1, "expression": f"x{c}"}
                 for c in (1, 3, 5, 7)]
        galaxies.append({"galaxy": g, "front": front, "best": front[2], "newton": bool(rng.random() < 0.5)})
    write_json(os.path.join(out, "sr.json"), {"galaxies": galaxies})
    write_json(os.path.join(out, "probe.json"), {"label": resolved(args, "label", "")})
    write_json(os.path.join(out, "probe.complete.json"),
               {"format": "orbitlaw-stage-complete", "version": 1, "stage": "probe", "outputs": {}})


def compare(args):
    out = option(args, "--out")
    dirs = [a for a in args[1:] if os.path.isdir(a) and a != out]
    rows = []
    for d in dirs:
        sr = json.load(open(os.path.join(d, "sr.json")))
        model = json.load(open(os.path.join(d, "probe.json"))).get("label") or os.path.basename(d)
        galaxies = [{"law": g["best"]["expression"], "newton": g["newton"]} for g in sr["galaxies"]]
        newton = sum(g["newton"] for g in galaxies)
        # Like the real compare: one row per probe; a probe with a law search per protocol, with its tiers.
        rows.append({"model": model, "probe": "finetune", "protocol": "published", "r2": random.random(),
                     "galaxies": galaxies, "tiers": {"srbench": newton, "strict": 0, "exponents": 0}})
        rows.append({"model": model, "probe": "knn", "protocol": None, "r2": random.random(), "galaxies": []})
    # Like the real compare: Newton's law as judged, G included (the report quotes G from here).
    newton = {"target": "force", "law": "C*m1*m2/r^2", "G": G, "exponents": [1.0, 1.0, -2.0]}
    write_json(os.path.join(out, "compare.json"), {"newton": newton, "rows": rows})
    lines = ["| model | probe | R² |", "|---|---|---|"] + [f"| {r['model']} | {r['probe']} | {r['r2']:.4g} |" for r in rows]
    with open(os.path.join(out, "compare.md"), "w") as f:
        f.write("# Recovered force laws against Newton\n\n## Probe accuracy\n\n" + "\n".join(lines) + "\n")


def main():
    args = sys.argv[1:]
    if args == ["--version"]:
        print("orbitlaw 0.0.0-fake (test double)")
        return 0
    calls = os.environ.get("FAKE_ORBITLAW_CALLS")
    if calls:
        threads = os.environ.get("OMP_NUM_THREADS") if os.environ.get("FAKE_RECORD_THREADS") else None
        with open(calls, "a") as f:
            f.write(" ".join(args) + (f"  # OMP_NUM_THREADS={threads}" if threads else "") + "\n")
    command = args[0] if args else ""
    if os.environ.get("FAKE_DETERMINISTIC"):
        global SEED
        SEED = input_seed(args)
        random.seed(SEED)
    if os.environ.get("FAKE_FAIL") == command:
        print(f"orbitlaw: error: fake failure of '{command}'", file=sys.stderr)
        return 1
    handlers = {"simulate": simulate, "train": train, "eval": evaluate, "probe": probe, "compare": compare}
    if command not in handlers:
        print(f"orbitlaw: error: the test double has no '{command}'", file=sys.stderr)
        return 2
    handlers[command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
