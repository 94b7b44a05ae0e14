#!/usr/bin/env python3
"""Experiment configs for the run-folder driver (experiments/lib/run.sh).

An experiment is one JSON file (experiments/configs/<name>.json). This helper resolves it (applies the
"smoke" overlay for --smoke and the command line's --set overrides), writes the resolved file into the run
folder, and hands the shell the pieces it needs: scalar values, the names in a section, and per-stage
config files that the orbitlaw subcommands read with --config. It does JSON plumbing only; the stages
themselves are orbitlaw subcommands.

Usage:
  expconfig.py resolve CONFIG OUT.json [--smoke] [--set key=value]...
  expconfig.py get RESOLVED.json dotted.key [default]     scalars as text, lists space-separated
  expconfig.py keys RESOLVED.json dotted.key               names of an object section, in file order
  expconfig.py stage RESOLVED.json OUT.json SECTION... [--set key=value]...
                                                           deep merge of sections (then the overrides),
                                                           written as one object
  expconfig.py seeds RESOLVED.json KIND                    the training seeds of model KIND, space-separated
  expconfig.py same A.json B.json                          exit 0 if both hold the same JSON value

Seeds: "seeds": N (default 1) trains every model N times, with the training seeds base, base + 1, ...,
base + N - 1, where base is the seed the model's own train config resolves to (train.seed, overridden by
models.<kind>.train.seed; the experiment's "seed" when neither sets one). model_seeds() is the one place
that rule lives: the driver and the report both call it.
"""
import copy
import json
import os
import sys

KNOWN_TOP_LEVEL = {
    "experiment", "description", "seed", "threads", "stages", "inputs", "datasets", "train", "models", "eval",
    "probe", "sr", "compare", "report", "budget", "bundle", "smoke", "seeds",
}
KNOWN_STAGES = ["simulate", "train", "eval", "probe", "sr", "compare", "report"]


def fail(message):
    print(f"expconfig: error: {message}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            value = json.load(f)
    except FileNotFoundError:
        fail(f"config file '{path}' does not exist")
    except json.JSONDecodeError as e:
        fail(f"config file '{path}' is not valid JSON: {e}")
    if not isinstance(value, dict):
        fail(f"config file '{path}' must hold a JSON object")
    return value


def deep_merge(base, overlay):
    """Objects merge key by key; anything else in the overlay replaces the base value."""
    result = copy.deepcopy(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def parse_value(text):
    # Same rule as orbitlaw's --set: JSON when it parses, a bare string otherwise.
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def apply_override(config, item):
    key, eq, text = item.partition("=")
    if not eq or not key:
        fail(f"override '{item}' is not of the form key=value")
    parts = key.split(".")
    if any(not p for p in parts):
        fail(f"override '{item}' has an empty key part")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            fail(f"override '{item}': '{part}' is not a section")
    node[parts[-1]] = parse_value(text)


def lookup(config, dotted):
    node = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def validate(config, path):
    unknown = sorted(set(config) - KNOWN_TOP_LEVEL)
    if unknown:
        fail(f"{path}: unknown key '{unknown[0]}' (known: {', '.join(sorted(KNOWN_TOP_LEVEL))})")
    for key in ("experiment", "seed", "stages", "datasets"):
        if key not in config:
            fail(f"{path}: missing required key '{key}'")
    stages = config["stages"]
    if not isinstance(stages, list) or any(s not in KNOWN_STAGES for s in stages):
        fail(f"{path}: 'stages' must be a list drawn from {', '.join(KNOWN_STAGES)}")
    if "train" in stages and not config.get("models"):
        fail(f"{path}: stage 'train' needs a non-empty 'models' section")
    seeds = config.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        fail(f"{path}: 'seeds' must be a whole number >= 1, not {json.dumps(seeds)}")
    if not isinstance(config["datasets"], dict) or not config["datasets"]:
        fail(f"{path}: 'datasets' must be a non-empty object of named datasets")
    for name, model in (config.get("models") or {}).items():
        if not isinstance(model, dict):
            fail(f"{path}: models.{name} must be an object")
        extra = sorted(set(model) - {"train", "eval", "probe", "label"})
        if extra:
            fail(f"{path}: models.{name}: unknown key '{extra[0]}' (known: train, eval, probe, label)")


def seed_count(config):
    return config.get("seeds", 1)


def model_seeds(config, kind):
    """The training seeds of one model: its resolved train seed, then the next seed_count - 1 integers."""
    train = deep_merge(config.get("train") or {}, lookup(config, f"models.{kind}.train") or {})
    base = train.get("seed", config.get("seed"))
    if not isinstance(base, int) or isinstance(base, bool):
        raise ValueError(f"models.{kind}: the training seed must be an integer, not {json.dumps(base)}")
    return [base + i for i in range(seed_count(config))]


def cmd_resolve(args):
    if len(args) < 2:
        fail("resolve needs CONFIG OUT.json")
    source, out = args[0], args[1]
    smoke = False
    overrides = []
    rest = args[2:]
    i = 0
    while i < len(rest):
        if rest[i] == "--smoke":
            smoke = True
        elif rest[i] == "--set" and i + 1 < len(rest):
            overrides.append(rest[i + 1])
            i += 1
        else:
            fail(f"resolve: unexpected argument '{rest[i]}'")
        i += 1
    config = load(source)
    overlay = config.pop("smoke", {})
    if smoke:
        config = deep_merge(config, overlay)
    for item in overrides:
        apply_override(config, item)
    validate(config, source)
    config["smoke"] = smoke  # the resolved file says which mode produced it
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    os.replace(tmp, out)


def cmd_get(args):
    if len(args) not in (2, 3):
        fail("get needs RESOLVED.json KEY [DEFAULT]")
    value = lookup(load(args[0]), args[1])
    if value is None:
        if len(args) == 3:
            print(args[2])
            return
        fail(f"{args[0]}: no key '{args[1]}'")
    if isinstance(value, bool):
        print("true" if value else "false")
    elif isinstance(value, list):
        print(" ".join(str(v) for v in value))
    elif isinstance(value, dict):
        print(json.dumps(value))
    else:
        print(value)


def cmd_keys(args):
    if len(args) != 2:
        fail("keys needs RESOLVED.json KEY")
    value = lookup(load(args[0]), args[1])
    if value is None:
        return
    if not isinstance(value, dict):
        fail(f"{args[0]}: '{args[1]}' is not an object")
    print(" ".join(value.keys()))


def cmd_stage(args):
    if len(args) < 3:
        fail("stage needs RESOLVED.json OUT.json SECTION...")
    config = load(args[0])
    sections, overrides = [], []
    rest = args[2:]
    i = 0
    while i < len(rest):
        if rest[i] == "--set" and i + 1 < len(rest):
            overrides.append(rest[i + 1])
            i += 1
        else:
            sections.append(rest[i])
        i += 1
    merged = {}
    for section in sections:
        value = lookup(config, section)
        if value is None:
            continue
        if not isinstance(value, dict):
            fail(f"{args[0]}: '{section}' is not an object")
        merged = deep_merge(merged, value)
    for item in overrides:
        apply_override(merged, item)
    tmp = args[1] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    os.replace(tmp, args[1])


def cmd_seeds(args):
    if len(args) != 2:
        fail("seeds needs RESOLVED.json KIND")
    try:
        seeds = model_seeds(load(args[0]), args[1])
    except ValueError as e:
        fail(str(e))
    print(" ".join(str(s) for s in seeds))


def cmd_same(args):
    if len(args) != 2:
        fail("same needs A.json B.json")
    a, b = load(args[0]), load(args[1])
    # Run folders made before seeds existed have no "seeds" key: they are one-seed runs, equal to seeds = 1.
    for config in (a, b):
        config.setdefault("seeds", 1)
    sys.exit(0 if a == b else 1)


def main():
    if len(sys.argv) < 2:
        fail("missing command (resolve, get, keys, stage, seeds, same)")
    commands = {"resolve": cmd_resolve, "get": cmd_get, "keys": cmd_keys, "stage": cmd_stage, "seeds": cmd_seeds,
                "same": cmd_same}
    command = commands.get(sys.argv[1])
    if command is None:
        fail(f"unknown command '{sys.argv[1]}'")
    command(sys.argv[2:])


if __name__ == "__main__":
    main()
