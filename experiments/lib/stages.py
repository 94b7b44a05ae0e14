"""The stage table: every stage of one run, in the order it runs, as records the driver executes.

Each config family named in the config's "stages" list expands into one stage per dataset (simulate), per
model and training seed (train, eval, probe), or one in all (compare, report). A stage record says
everything the driver needs: its name (marker, log and config file names), its family (which budget share
it draws from), how to build its command line (given its time limit), and the files it must leave behind
when it succeeds. docs/experiments.md lists the command lines.

With "seeds": N > 1 every model is trained, evaluated and probed once per training seed, each seed in its
own folders (models/<kind>/seed-<s>/, probe/<kind>/seed-<s>/) and stages (train-<kind>-seed-<s>, ...). A
one-seed run keeps the folders and stage names it always had, so existing run folders resume unchanged.
"""
import os
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

import budget
from expconfig import ConfigError, lookup, model_input, model_seeds, seed_count, stage_config, write_json


@dataclass(frozen=True)
class Stage:
    name: str  # RUN/stages/<name>.done, RUN/logs/<name>.log, RUN/configs/<name>.json
    family: str  # its config family, and the budget share its time limit comes from
    command: Callable[[Optional[int]], list]  # the argv, given the stage's time limit in seconds (None: none)
    outputs: tuple  # files that must exist after the stage exits 0
    # Whose stage it is, for splitting a run into shards (shard.py): the model and seed of a train, eval or
    # probe stage, the dataset of a simulate stage; neither for compare and report, which read every model.
    replicate: Optional["Replicate"] = None
    dataset: Optional[str] = None


@dataclass
class RunContext:
    """What the stage builders read: the resolved config and where things are."""

    root: str  # the repository
    run: str  # the run folder
    config: dict  # the resolved config (RUN/experiment.json)
    orbitlaw: str  # the orbitlaw binary
    python: str  # the Python that runs the report
    limits: object  # budget.FixedLimit or budget.SharedBudget
    note: Callable[[str], None]  # progress lines

    def path(self, *parts):
        return os.path.join(self.run, *parts)

    def data(self, name):
        return self.path("data", f"{name}.h5")

    def config_file(self, stage, sections, overrides=()):
        """RUN/configs/<stage>.json: the stage's sections deep-merged with the model's overrides."""
        path = self.path("configs", f"{stage}.json")
        write_json(path, stage_config(self.config, sections, overrides))
        return path


@dataclass(frozen=True)
class Replicate:
    """One model at one training seed: its folder below models/ and probe/ (also the probe's label, and so
    the model's name in compare) and the suffix of its stage names."""

    kind: str
    seed: int
    tag: str
    suffix: str


def replicates(config):
    several = seed_count(config) > 1
    for kind in config.get("models") or {}:
        try:
            seeds = model_seeds(config, kind)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        for seed in seeds:
            tag = f"{kind}/seed-{seed}" if several else kind
            yield Replicate(kind, seed, tag, f"-seed-{seed}" if several else "")


# The datasets a model's stages read: one rule for the command lines and for the datasets a shard simulates.


def train_inputs(config, kind):
    """The training data and the validation data (None: none) of a model."""
    return model_input(config, kind, "train", "train"), model_input(config, kind, "val")


def eval_input(config, kind):
    return model_input(config, kind, "eval") or model_input(config, kind, "train", "train")


def probe_input(config, kind):
    return model_input(config, kind, "probe", "probe")


def datasets_read(config, kind):
    """Every dataset the model's stages of this run read (its train, eval and probe families as configured)."""
    families = config["stages"]
    read = list(train_inputs(config, kind)) if "train" in families else []
    read += [eval_input(config, kind)] if "eval" in families else []
    read += [probe_input(config, kind)] if "probe" in families else []
    return {name for name in read if name}


# Each family has a function that lists its stages and one that builds a stage's command line; the command
# is built only when the stage runs (a skipped stage writes no config file and decides nothing).


def simulate_stages(ctx):
    for name in ctx.config["datasets"]:
        stage = f"simulate-{name}"
        yield Stage(stage, "simulate", partial(simulate_command, ctx, stage, name), (ctx.data(name),), dataset=name)


def simulate_command(ctx, stage, name, limit):
    return [ctx.orbitlaw, "simulate", "--config", ctx.config_file(stage, [f"datasets.{name}"]),
            "--out", ctx.data(name)]


def train_stages(ctx):
    for r in replicates(ctx.config):
        stage, folder = f"train-{r.kind}{r.suffix}", ctx.path("models", r.tag)
        yield Stage(stage, "train", partial(train_command, ctx, stage, r),
                    (os.path.join(folder, "checkpoint.pt"), os.path.join(folder, "metrics.jsonl")), replicate=r)


def train_command(ctx, stage, r, limit):
    folder = ctx.path("models", r.tag)
    os.makedirs(folder, exist_ok=True)
    # The seed goes into the stage's config file, so configs/<stage>.json says which seed trained the model.
    config = ctx.config_file(stage, ["train", f"models.{r.kind}.train"], [f"seed={r.seed}"] if r.suffix else [])
    data, val = train_inputs(ctx.config, r.kind)
    resume = []
    # An interrupted training left a checkpoint but no marker: continue it instead of starting over.
    if os.path.exists(os.path.join(folder, "checkpoint.pt")):
        ctx.note(f"resume {stage} from {folder}/checkpoint.pt")
        resume = ["--resume"]
    return [ctx.orbitlaw, "train", "--config", config, "--data", ctx.data(data),
            *(["--val", ctx.data(val)] if val else []), "--out", folder, *resume,
            *budget.self_stop_settings(ctx.config.get("budget") or {}, ctx.limits, "train", limit)]


def eval_stages(ctx):
    for r in replicates(ctx.config):
        stage = f"eval-{r.kind}{r.suffix}"
        yield Stage(stage, "eval", partial(eval_command, ctx, stage, r), (ctx.path("models", r.tag, "eval.json"),),
                    replicate=r)


def eval_command(ctx, stage, r, limit):
    return [ctx.orbitlaw, "eval", "--config", ctx.config_file(stage, ["eval", f"models.{r.kind}.eval"]),
            "--checkpoint", ctx.path("models", r.tag, "checkpoint.pt"), "--data", ctx.data(eval_input(ctx.config, r.kind)),
            "--out", ctx.path("models", r.tag, "eval.json")]


def probe_stages(ctx):
    for r in replicates(ctx.config):
        stage = f"probe-{r.kind}{r.suffix}"
        yield Stage(stage, "probe", partial(probe_command, ctx, stage, r),
                    (ctx.path("probe", r.tag, "probe.complete.json"),), replicate=r)


def probe_command(ctx, stage, r, limit):
    """Every seed's probe uses the same probe config (split, fine-tuning and law-search seeds): the
    seed-to-seed spread is that of training. The label, which compare reports as the model, is the tag."""
    return [ctx.orbitlaw, "probe", "--config", ctx.config_file(stage, ["probe", f"models.{r.kind}.probe"]),
            "--set", f"label={r.tag}", "--checkpoint", ctx.path("models", r.tag, "checkpoint.pt"),
            "--data", ctx.data(probe_input(ctx.config, r.kind)), "--out", ctx.path("probe", r.tag),
            *budget.self_stop_settings(ctx.config.get("budget") or {}, ctx.limits, "probe", limit)]


def compare_stages(ctx):
    yield Stage("compare", "compare", partial(compare_command, ctx),
                (ctx.path("compare", "compare.json"), ctx.path("compare", "compare.md")))


def compare_command(ctx, limit):
    os.makedirs(ctx.path("compare"), exist_ok=True)
    probes = [ctx.path("probe", r.tag) for r in replicates(ctx.config)]
    return [ctx.orbitlaw, "compare", "--config", ctx.config_file("compare", ["compare"]), *probes,
            "--out", ctx.path("compare")]


def report_stages(ctx):
    yield Stage("report", "report", partial(report_command, ctx),
                (ctx.path("report", "report.md"), ctx.path("report", "report.html")))


def report_command(ctx, limit):
    return [ctx.python, os.path.join(ctx.root, "experiments", "report.py"), "--run", ctx.run]


# The config families and the builders of their stages (expconfig.KNOWN_STAGES names the same families).
FAMILIES = {"simulate": simulate_stages, "train": train_stages, "eval": eval_stages, "probe": probe_stages,
            "compare": compare_stages, "report": report_stages}


def stage_table(ctx):
    """Every stage of the run, in the order the config's "stages" list runs the families."""
    return [stage for family in ctx.config["stages"] for stage in FAMILIES[family](ctx)]
