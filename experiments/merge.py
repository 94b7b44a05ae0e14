#!/usr/bin/env python3
"""Merges the run folders of an experiment's shards (the driver's --shard i/n) into one run folder, then runs
the stages that read every model (compare, report) in it: the result is the run folder and report a single
machine's run of the same config makes. docs/sweeps.md shows it with GNU parallel and a Slurm job array.

usage: merge.py --out DIR SHARD_FOLDER...

Every shard is checked before anything is written, and a bad merge is refused in one line: a folder that is not
a shard's run folder, shards of different configs, splits, commits or orbitlaw builds (or of another commit than
this checkout, whose report and compare would run on them), a shard missing or given twice, a shard whose stages
have not all finished (its rerun resumes it), a shard still running, or a dataset whose numbers differ between
two shards that both simulated it.

DIR is built as DIR.partial and renamed into place when every shard's files are in it, so an interrupted merge
never leaves a folder that looks like a run; rerunning the command removes the partial folder and starts again.
Once DIR exists, a rerun with the same shards resumes its compare and report stages like the driver does.
The merged provenance.json is this merge's, with "shards": each shard's folder, host, commit and command.
"""
import argparse
import hashlib
import os
import shutil
import signal
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import budget  # noqa: E402
import driver  # noqa: E402  the driver's binary lookup, signals and closing summary
import runfolder  # noqa: E402
import shard  # noqa: E402
import stages  # noqa: E402
from expconfig import ConfigError, load, same, write_json  # noqa: E402
from runner import StageError, StageRunner, note  # noqa: E402

ROOT = driver.ROOT
# Written first into DIR.partial and removed last: a partial folder with it is a merge's own, safe to remove.
PARTIAL_MARK = ".orbitlaw-merge-partial"
# Files in a shard's folders that belong to the machine that ran it, not to the run.
NOT_COPIED = (runfolder.LOCK_NAME,)
# What the merged provenance records of each shard, from the shard's provenance.json.
SHARD_RECORD = ("git_revision", "git_dirty", "orbitlaw", "host", "cpus", "command_line", "created_utc")


class MergeError(Exception):
    """A merge refused: one line, 'merge: error: ...'."""


@dataclass
class Shard:
    folder: str
    config: dict  # the shard's resolved config, "shard" included
    provenance: dict
    table: list = None  # its stages (stages.stage_table filtered by shard.select)

    @property
    def index(self):
        return self.config["shard"]["index"]

    @property
    def name(self):
        return f"{shard.describe(self.config)} ({self.folder})"


def first_difference(a, b, prefix=""):
    """The first dotted key at which two configs differ, for the refusal's message."""
    for key in sorted(set(a) | set(b)):
        where = f"{prefix}{key}"
        if key not in a or key not in b:
            return where
        if isinstance(a[key], dict) and isinstance(b[key], dict):
            inner = first_difference(a[key], b[key], where + ".")
            if inner:
                return inner
        elif a[key] != b[key]:
            return where
    return None


def read_shard(folder):
    folder = os.path.abspath(folder)
    if not os.path.isdir(folder) or not runfolder.is_run_folder(folder):
        raise MergeError(f"'{folder}' is not a run folder the experiment driver made")
    config, record = load(os.path.join(folder, "experiment.json")), load(os.path.join(folder, "provenance.json"))
    if not config.get("shard"):
        raise MergeError(f"'{folder}' is a whole run, not a shard (it was made without --shard)")
    return Shard(folder, config, record)


def check_same_run(shards, orbitlaw):
    """One config, one split, one commit and one orbitlaw build for every shard and for this merge."""
    first = shards[0]
    for s in shards[1:]:
        if not same(shard.without_shard(s.config), shard.without_shard(first.config)):
            key = first_difference(shard.without_shard(first.config), shard.without_shard(s.config))
            raise MergeError(f"shards of different configs: {first.folder} and {s.folder} differ at '{key}'")
        if s.config["shard"]["count"] != first.config["shard"]["count"]:
            raise MergeError(f"shards of different splits: {first.name} and {s.name}")
    here = {"git_revision": runfolder.first_line(["git", "-C", ROOT, "rev-parse", "HEAD"]) or "unknown",
            "orbitlaw": runfolder.first_line([orbitlaw, "--version"]) or "unknown"}
    for key, what in (("git_revision", "commits"), ("orbitlaw", "orbitlaw builds")):
        for s in shards:
            if s.provenance.get(key) != first.provenance.get(key):
                raise MergeError(f"shards of different {what}: {first.name} has {first.provenance.get(key)}, "
                                 f"{s.name} has {s.provenance.get(key)}")
        if here[key] != first.provenance.get(key):
            raise MergeError(f"the shards ran at {key.replace('_', ' ')} {first.provenance.get(key)}, this merge at "
                             f"{here[key]}: merge with the checkout and binary the shards ran with")


def check_complete_set(shards):
    count, seen = shards[0].config["shard"]["count"], {}
    for s in shards:
        if s.index in seen:
            raise MergeError(f"{shard.describe(s.config)} given twice: {seen[s.index].folder} and {s.folder}")
        seen[s.index] = s
    missing = [i for i in range(count) if i not in seen]
    if missing:
        raise MergeError(f"shard {missing[0]}/{count} is missing (given: "
                         f"{', '.join(f'{i}/{count}' for i in sorted(seen))}); merge needs all {count}")
    return [seen[i] for i in range(count)]


def check_finished(s, orbitlaw):
    """Every stage of the shard has its done marker and its outputs, and nothing is cut or failed."""
    context = stages.RunContext(ROOT, s.folder, s.config, orbitlaw, sys.executable, None, note)
    s.table = shard.select(stages.stage_table(context), s.config)
    for stage in s.table:
        if not os.path.exists(os.path.join(s.folder, "stages", f"{stage.name}.done")):
            raise MergeError(f"{s.name} is incomplete: stage '{stage.name}' has not finished (rerun the shard's "
                             "command to resume it)")
        lost = [p for p in stage.outputs if not os.path.exists(p)]
        if lost:
            raise MergeError(f"{s.name} is incomplete: stage '{stage.name}' is marked done but "
                             f"{os.path.relpath(lost[0], s.folder)} does not exist")


def data_fingerprint(path):
    """The numbers of a simulated dataset, without its provenance (command line, time), which differ between
    two runs of the same simulation: every dataset's dtype, shape and bytes and the root attributes."""
    import h5py
    import numpy as np
    digest = hashlib.sha256()
    with h5py.File(path, "r") as f:
        for key in sorted(k for k in f.attrs if k != "provenance"):
            digest.update(key.encode() + repr(f.attrs[key]).encode())
        names = []
        f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
        for name in sorted(names):
            values = np.asarray(f[name][()])
            digest.update(f"{name} {values.dtype} {values.shape}".encode() + values.tobytes())
    return digest.hexdigest()


def check_same_data(shards):
    """A dataset simulated by several shards must hold the same numbers in each: their models would otherwise
    have been trained on different data under one name."""
    made = {}
    for s in shards:
        for stage in s.table:
            if stage.dataset is None:
                continue
            path = stage.outputs[0]
            try:
                fingerprint = data_fingerprint(path)
            except OSError as e:
                raise MergeError(f"cannot read dataset '{stage.dataset}' of {s.name}: {e}") from None
            earlier = made.setdefault(stage.dataset, (s, fingerprint))
            if earlier[1] != fingerprint:
                raise MergeError(f"dataset '{stage.dataset}' differs between {earlier[0].name} and {s.name}: the "
                                 "simulation did not reproduce on their machines (docs/sweeps.md)")


def copy_item(source, dest):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if os.path.isdir(source):
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*NOT_COPIED), dirs_exist_ok=True)
    elif os.path.exists(source):
        shutil.copy2(source, dest)


def copy_shard(s, dest, copied_data):
    """The shard's stages' records and outputs. A dataset several shards made comes from the first of them."""
    names = ["stages/{}.done", "logs/{}.log", "configs/{}.json"]
    for stage in s.table:
        if stage.dataset is not None:
            if stage.dataset in copied_data:
                continue
            copied_data.add(stage.dataset)
            for name in os.listdir(os.path.join(s.folder, "data")):
                if name.startswith(f"{stage.dataset}.h5") and not name.endswith(".tmp"):
                    copy_item(os.path.join(s.folder, "data", name), os.path.join(dest, "data", name))
        if stage.replicate is not None:
            for top in ("models", "probe"):
                copy_item(os.path.join(s.folder, top, stage.replicate.tag), os.path.join(dest, top, stage.replicate.tag))
        for pattern in names:
            copy_item(os.path.join(s.folder, pattern.format(stage.name)), os.path.join(dest, pattern.format(stage.name)))
    invocations = os.path.join(s.folder, "logs", "invocations.log")
    if os.path.exists(invocations):
        with open(invocations) as f, open(os.path.join(dest, "logs", "invocations.log"), "a") as out:
            out.writelines(f"{shard.describe(s.config)} ({s.folder}): {line}" for line in f)


def shard_records(shards):
    return [{"index": s.index, "count": s.config["shard"]["count"], "folder": s.folder,
             **{key: s.provenance.get(key) for key in SHARD_RECORD}} for s in shards]


def build(out, shards, config, invocation, orbitlaw):
    """DIR.partial with every shard's files and the merged records, renamed to DIR when complete."""
    partial = out + ".partial"
    if os.path.lexists(partial):
        if not os.path.exists(os.path.join(partial, PARTIAL_MARK)):
            raise MergeError(f"'{partial}' exists and is not an interrupted merge's; move it away")
        note(f"removing the interrupted merge in {partial}")
        shutil.rmtree(partial)
    os.makedirs(partial)
    open(os.path.join(partial, PARTIAL_MARK), "w").close()
    for sub in runfolder.SUBFOLDERS:
        os.makedirs(os.path.join(partial, sub), exist_ok=True)
    copied_data = set()
    for s in shards:
        note(f"copying {s.name}")
        copy_shard(s, partial, copied_data)
    # Every stage the shards ran must now have its outputs here, as in a single run's folder.
    context = stages.RunContext(ROOT, partial, config, orbitlaw, sys.executable, None, note)
    for stage in stages.stage_table(context):
        lost = [p for p in stage.outputs if stage.family not in shard.MERGE_FAMILIES and not os.path.exists(p)]
        if lost:
            raise MergeError(f"the merged folder lacks {os.path.relpath(lost[0], partial)} of stage '{stage.name}'")
    write_json(os.path.join(partial, "experiment.json"), config)
    record = runfolder.provenance(config, invocation, ROOT, orbitlaw)
    record["shards"] = shard_records(shards)
    write_json(os.path.join(partial, "provenance.json"), record)
    os.remove(os.path.join(partial, PARTIAL_MARK))
    os.rename(partial, out)


def is_merge_of(out, shards):
    """Whether DIR is this merge's earlier result: a run folder whose provenance lists these very shard runs."""
    if not runfolder.is_run_folder(out):
        return False
    listed = load(os.path.join(out, "provenance.json")).get("shards")
    return isinstance(listed, list) and \
        [(r.get("index"), r.get("folder"), r.get("created_utc")) for r in listed] == \
        [(s.index, s.folder, s.provenance.get("created_utc")) for s in shards]


def merge(out, folders, invocation):
    orbitlaw = driver.ensure_orbitlaw()
    shards = [read_shard(f) for f in folders]
    check_same_run(shards, orbitlaw)
    shards = check_complete_set(shards)
    config = shard.without_shard(shards[0].config)
    locks = []
    try:
        # Held while the shards are read, so that none of them is being run (or resumed) meanwhile.
        for s in shards:
            locks.append(runfolder.RunFolderLock(s.folder, invocation))
        for s in shards:
            check_finished(s, orbitlaw)
        check_same_data(shards)
        if os.path.lexists(out):
            if not is_merge_of(out, shards):
                raise MergeError(f"'{out}' exists and is not a merge of these shards; choose another --out")
        else:
            build(out, shards, config, invocation, orbitlaw)
    finally:
        for lock in locks:
            lock.release()
    return run_merged_stages(out, config, invocation, orbitlaw)


def run_merged_stages(out, config, invocation, orbitlaw):
    """compare and report, in the merged folder, as the driver runs them (skipped when already done)."""
    lock = runfolder.prepare(out, config, False, invocation, ROOT, orbitlaw)
    try:
        limits = budget.FixedLimit(None)
        context = stages.RunContext(ROOT, out, config, orbitlaw, sys.executable, limits, note)
        table = [s for s in stages.stage_table(context) if s.family in shard.MERGE_FAMILIES]
        StageRunner(ROOT, out, limits).run_all(table)
    finally:
        lock.release()
    driver.print_summary(config.get("experiment"), out, config)
    return 0


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line, like every other refusal."""

    def error(self, message):
        print(f"merge: error: {message} (usage: merge.py --out DIR SHARD_FOLDER...)", file=sys.stderr)
        sys.exit(2)


def main(argv):
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the merged run folder (made by the merge)")
    parser.add_argument("shards", nargs="+", metavar="SHARD_FOLDER", help="every shard's run folder")
    args = parser.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, driver.on_signal)
    invocation = "python experiments/merge.py " + " ".join(argv)
    try:
        return merge(os.path.abspath(args.out), args.shards, invocation)
    except driver.Interrupted:
        print("\nmerge: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except (MergeError, ConfigError, runfolder.RunFolderError, driver.DriverError, StageError) as e:
        print(f"merge: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
