"""Experiment configs for the run-folder driver (experiments/lib/driver.py) and the report.

An experiment is one JSON file (experiments/configs/<name>.json). resolve() applies its "smoke" overlay (for
--smoke) and the command line's --set overrides and checks the result; stage_config() builds the config file
one orbitlaw subcommand reads with --config (sections deep-merged, then overrides). It does JSON plumbing
only; the stages themselves are orbitlaw subcommands.

Seeds: "seeds": N (default 1) trains every model N times, with the training seeds base, base + 1, ...,
base + N - 1, where base is the seed the model's own train config resolves to (train.seed, overridden by
models.<kind>.train.seed; the experiment's "seed" when neither sets one). model_seeds() is the one place
that rule lives: the driver and the report both call it.
"""
import copy
import json

import atomic_file

KNOWN_TOP_LEVEL = {
    "experiment", "description", "seed", "threads", "stages", "inputs", "datasets", "train", "models", "eval",
    "probe", "compare", "report", "budget", "bundle", "smoke", "seeds",
}
# The stage families the driver knows (experiments/lib/stages.py), in no particular order: a config lists
# the ones it runs, in the order it runs them.
KNOWN_STAGES = ["simulate", "train", "eval", "probe", "compare", "report"]


class ConfigError(Exception):
    """A config, override or config file that cannot be used: one line, printed as 'expconfig: error: ...'."""


def load(path):
    try:
        with open(path) as f:
            value = loads_strict(f.read())
    except FileNotFoundError:
        raise ConfigError(f"config file '{path}' does not exist") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"config file '{path}' is not valid JSON: {e}") from None
    except ConfigError as e:
        raise ConfigError(f"config file '{path}': {e}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"config file '{path}' must hold a JSON object")
    return value


def write_json(path, value):
    """Written under a temporary name and renamed into place, so a killed run never leaves half a file."""
    atomic_file.write_text(path, json.dumps(value, indent=2) + "\n")


def deep_merge(base, overlay):
    """Objects merge key by key; anything else in the overlay replaces the base value."""
    result = copy.deepcopy(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def strict_object(pairs):
    """object_pairs_hook: a key given twice is an error (json would keep the last without a word)."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ConfigError(f"the key '{key}' is given twice")
        seen[key] = value
    return seen


def no_constant(name):
    """parse_constant: NaN and Infinity are not numbers a config can hold."""
    raise ConfigError(f"{name} is not a number a config can hold")


def loads_strict(text):
    return json.loads(text, object_pairs_hook=strict_object, parse_constant=no_constant)


def parse_value(text):
    # Same rule as orbitlaw's --set: JSON when it parses, a bare string otherwise (but never NaN or a duplicate).
    try:
        return loads_strict(text)
    except json.JSONDecodeError:
        return text


def apply_override(config, item):
    key, eq, text = item.partition("=")
    if not eq or not key:
        raise ConfigError(f"override '{item}' is not of the form key=value")
    parts = key.split(".")
    if any(not p for p in parts):
        raise ConfigError(f"override '{item}' has an empty key part")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override '{item}': '{part}' is not a section")
    try:
        node[parts[-1]] = parse_value(text)
    except ConfigError as e:
        raise ConfigError(f"override '{item}': {e}") from None


def lookup(config, dotted, default=None):
    node = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def validate(config, path):
    unknown = sorted(set(config) - KNOWN_TOP_LEVEL)
    if unknown:
        raise ConfigError(f"{path}: unknown key '{unknown[0]}' (known: {', '.join(sorted(KNOWN_TOP_LEVEL))})")
    for key in ("experiment", "seed", "stages", "datasets"):
        if key not in config:
            raise ConfigError(f"{path}: missing required key '{key}'")
    stages = config["stages"]
    if not isinstance(stages, list) or any(s not in KNOWN_STAGES for s in stages):
        raise ConfigError(f"{path}: 'stages' must be a list drawn from {', '.join(KNOWN_STAGES)}")
    if "train" in stages and not config.get("models"):
        raise ConfigError(f"{path}: stage 'train' needs a non-empty 'models' section")
    seeds = config.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ConfigError(f"{path}: 'seeds' must be a whole number >= 1, not {json.dumps(seeds)}")
    if not isinstance(config["datasets"], dict) or not config["datasets"]:
        raise ConfigError(f"{path}: 'datasets' must be a non-empty object of named datasets")
    for name, model in (config.get("models") or {}).items():
        if "." in name:  # stage configs are looked up by dotted path (models.<kind>.train)
            raise ConfigError(f"{path}: model name '{name}' contains a '.'; use another name")
        if not isinstance(model, dict):
            raise ConfigError(f"{path}: models.{name} must be an object")
        extra = sorted(set(model) - {"train", "eval", "probe", "label", "inputs"})
        if extra:
            raise ConfigError(
                f"{path}: models.{name}: unknown key '{extra[0]}' (known: train, eval, probe, label, inputs)")
        inputs = model.get("inputs", {})
        if not isinstance(inputs, dict) or any(k not in ("train", "val", "eval", "probe") for k in inputs):
            raise ConfigError(f"{path}: models.{name}.inputs must be an object of train, val, eval, probe datasets")
        for role, dataset in inputs.items():
            if dataset not in config["datasets"]:
                raise ConfigError(f"{path}: models.{name}.inputs.{role}: no dataset named '{dataset}'")


def resolve(source, smoke, overrides, models=None):
    """The experiment's config as it runs: the smoke overlay (with --smoke), then the overrides, then only the
    `models` named (all when None), checked."""
    config = load(source)
    overlay = config.pop("smoke", {})
    if smoke:
        config = deep_merge(config, overlay)
    for item in overrides:
        apply_override(config, item)
    if "smoke" in config:
        # --set smoke.KEY=V: the overlay is already merged (or not used), so the key would do nothing unrecorded.
        raise ConfigError("--set smoke.…: the smoke overlay cannot be overridden; with --smoke, --set the key itself")
    if models is not None:
        known = config.get("models") or {}
        unknown = [m for m in models if m not in known]
        if unknown:
            raise ConfigError(f"{source}: --models names '{unknown[0]}', which is not a model of this experiment "
                              f"(known: {', '.join(known) or 'none'})")
        config["models"] = {m: known[m] for m in known if m in models}
    validate(config, source)
    config["smoke"] = smoke  # the resolved file says which mode produced it
    return config


def same(a, b):
    """Whether two resolved configs are the same run's. Run folders made before seeds existed have no "seeds"
    key: they are one-seed runs, equal to seeds = 1."""
    return {"seeds": 1, **a} == {"seeds": 1, **b}


def stage_config(config, sections, overrides=()):
    """One stage's config: the named sections (absent ones skipped) deep-merged in order, then overrides."""
    merged = {}
    for section in sections:
        value = lookup(config, section)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"'{section}' is not an object")
        merged = deep_merge(merged, value)
    for item in overrides:
        apply_override(merged, item)
    return merged


def model_input(config, kind, role, default=None):
    """The dataset a model reads in one role (train, val, eval, probe): its own inputs.<role> (a model trained
    in another universe, such as the locality run's k = 2.5 control), else the experiment's."""
    return lookup(config, f"models.{kind}.inputs.{role}") or lookup(config, f"inputs.{role}", default)


def seed_count(config):
    return config.get("seeds", 1)


def model_seeds(config, kind):
    """The training seeds of one model: its resolved train seed, then the next seed_count - 1 integers."""
    train = deep_merge(config.get("train") or {}, lookup(config, f"models.{kind}.train") or {})
    base = train.get("seed", config.get("seed"))
    if not isinstance(base, int) or isinstance(base, bool):
        raise ValueError(f"models.{kind}: the training seed must be an integer, not {json.dumps(base)}")
    return [base + i for i in range(seed_count(config))]


def is_control(config, kind):
    """Whether a model of the experiment is a control (what a probe or test reads without the training under
    test), not a trained model. models.<kind> has no key for it (train, eval, probe, label, inputs only), so
    the shipped configs' convention is the rule: a kind named untrained*, or a label that starts with
    'control' or 'negative control'. The report says where a control does as well as the trained models."""
    label = str(lookup(config, f"models.{kind}.label") or "").strip().lower()
    return kind.startswith("untrained") or label.startswith(("control", "negative control"))
