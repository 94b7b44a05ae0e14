"""Which stages of an experiment one shard runs (the driver's --shard i/n; docs/sweeps.md).

A run's independent work is its (model, seed) replicates: each one's train, eval and probe stages depend on each
other (the checkpoint) and on the datasets, never on another replicate. A shard therefore runs whole
replicates, so that it needs no file another machine wrote: replicate k of the driver's order (stages.py:
kinds in config order, seeds within a kind) goes to shard k mod n, which spreads each kind's seeds over the
shards. Each shard simulates the datasets its replicates read (simulation is deterministic in its config, so
shards that share a dataset make the same numbers; experiments/merge.py checks it), and shard 0 also the
datasets no replicate reads, so that the merged run holds every dataset the single run does. Compare and report
read every replicate: they run once, in the merge.

The shard is part of the shard's resolved config (RUN/experiment.json's "shard": {"index", "count"}), so a run
folder is never resumed as another shard, and the merge reads it from there.
"""
import re

import stages

# The families whose stages belong to one replicate; "simulate" belongs to its dataset; the rest to the merge.
REPLICATE_FAMILIES = ("train", "eval", "probe")
MERGE_FAMILIES = ("compare", "report")


class ShardError(Exception):
    """A --shard that cannot be used: one line."""


def parse(text):
    """(index, count) from 'i/n' with 0 <= i < n: the numbering of Slurm's array task ids (0 .. n - 1)."""
    match = re.fullmatch(r"(0|[1-9][0-9]{0,5})/([1-9][0-9]{0,5})", text)
    if not match or int(match.group(1)) >= int(match.group(2)):
        raise ShardError(f"--shard needs i/n with 0 <= i < n (e.g. 0/2 and 1/2), not '{text}'")
    return int(match.group(1)), int(match.group(2))


def describe(config):
    """'shard i/n' for a shard's config, 'the whole run' for any other."""
    section = config.get("shard")
    return f"shard {section['index']}/{section['count']}" if section else "the whole run"


def without_shard(config):
    """The config the shard is part of: the single run's resolved config."""
    return {key: value for key, value in config.items() if key != "shard"}


def assignment(config):
    """Each replicate's shard, in the driver's order: {tag: shard index}."""
    count = config["shard"]["count"]
    return {r.tag: k % count for k, r in enumerate(stages.replicates(config))}


def check(config):
    """Refuses a shard with nothing of its own to run (more shards than replicates, or a run with no train,
    eval or probe stages): it would only repeat the simulation."""
    index, count = config["shard"]["index"], config["shard"]["count"]
    if (config.get("budget") or {}).get("total_s"):
        raise ShardError("--shard applies to runs without a time budget: a budget shares one machine's time "
                         "between the run's stages")
    if not any(f in config["stages"] for f in REPLICATE_FAMILIES):
        raise ShardError(f"--shard {index}/{count}: this experiment has no train, eval or probe stages to split")
    replicates = len(assignment(config))
    if count > replicates:
        raise ShardError(f"--shard {index}/{count}: this run has {replicates} (model, seed) pairs to split; use at "
                         f"most {replicates} shards")


def datasets(config):
    """The datasets this shard simulates: those its replicates read; on shard 0 also those no replicate reads."""
    index, owner = config["shard"]["index"], assignment(config)
    read, mine = set(), set()
    for r in stages.replicates(config):
        needed = stages.datasets_read(config, r.kind)
        read |= needed
        if owner[r.tag] == index:
            mine |= needed
    if index == 0:
        mine |= set(config["datasets"]) - read
    return mine


def select(table, config):
    """The stages of `table` (stages.stage_table) that this shard runs, in the table's order."""
    index, owner, simulated = config["shard"]["index"], assignment(config), datasets(config)
    kept = []
    for stage in table:
        if stage.family in MERGE_FAMILIES:
            continue
        if stage.dataset is not None and stage.dataset not in simulated:
            continue
        if stage.replicate is not None and owner[stage.replicate.tag] != index:
            continue
        kept.append(stage)
    return kept
