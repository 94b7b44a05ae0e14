"""The run folder: created with the resolved config and a provenance record, or reused only when it was made
with the same resolved config (a run folder is never mixed from two configs).

  RUN/experiment.json   the resolved config (smoke overlay and --set overrides applied)
  RUN/provenance.json   seed, git revision, versions, host, command line of the run's first invocation
  RUN/configs/ data/ models/ probe/ logs/ stages/   (see docs/experiments.md)
"""
import fcntl
import importlib.metadata
import os
import platform
import shutil
import subprocess
import time

import shard
from expconfig import ConfigError, load, same, write_json
from runner import note, utc

SUBFOLDERS = ("configs", "data", "models", "probe", "logs", "stages")
# Everything the driver and its stages write at the top of a run folder: all that --fresh may remove.
WRITTEN = SUBFOLDERS + ("compare", "report", "bundle", "experiment.json", "provenance.json", "budget.json")
# The run folder's lock: held by the driver for the whole run, it names its holder.
LOCK_NAME = ".orbitlaw.lock"
# The Python packages whose versions the provenance records (the report's plotting and rendering stack).
RECORDED_PACKAGES = ("torch", "numpy", "h5py", "matplotlib", "markdown")


class RunFolderError(Exception):
    """A run folder that cannot be used as asked: one line."""


def is_run_folder(run):
    """A run folder is recognised by the driver's own records, not by a file name: an experiment.json and a
    provenance.json that both parse, the provenance recording the same config."""
    try:
        experiment, record = load(os.path.join(run, "experiment.json")), load(os.path.join(run, "provenance.json"))
    except (ConfigError, OSError):
        return False
    return "created_utc" in record and isinstance(record.get("config"), dict) and same(record["config"], experiment)


class RunFolderLock:
    """An exclusive flock on RUN/.orbitlaw.lock for as long as the driver runs: a second driver (or a rerun
    while an interrupted one is still stopping) is refused with the holder's pid and command line. The file is
    removed on release while still held; a waiter that opened it before then finds another file under the name
    and retries, so two drivers never both hold the folder."""

    def __init__(self, run, invocation):
        self.path = os.path.join(run, LOCK_NAME)
        for _ in range(100):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunFolderError(f"run folder '{run}' is in use by another run ({self.holder()}); wait for it "
                                     "to end or choose another --out") from None
            try:
                same_file = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same_file = False
            if same_file:
                self.fd = fd
                os.ftruncate(fd, 0)
                os.write(fd, f"pid {os.getpid()}: {invocation}\n".replace("\n", " ").strip().encode() + b"\n")
                return
            os.close(fd)
        raise RunFolderError(f"cannot lock run folder '{run}': its lock file keeps being replaced")

    def holder(self):
        for _ in range(20):  # the holder writes its line just after taking the lock
            try:
                with open(self.path) as f:
                    line = f.readline().strip()
            except OSError:
                line = ""
            if line:
                return line
            time.sleep(0.025)
        return "a process that has not yet recorded itself"

    def release(self):
        if getattr(self, "fd", None) is None:
            return
        try:
            if os.path.samestat(os.fstat(self.fd), os.stat(self.path)):
                os.remove(self.path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def prepare(run, config, fresh, invocation, root, orbitlaw):
    """Creates RUN, or checks that the existing one holds the same resolved config; logs the invocation.
    Returns the run folder's lock, held until the caller releases it. Nothing in an existing folder is touched
    before it is recognised as a run folder and locked."""
    experiment = os.path.join(run, "experiment.json")
    if os.path.exists(run) and not os.path.isdir(run):
        raise RunFolderError(f"'{run}' is a file, not a run folder; choose another --out")
    recognised = os.path.isdir(run) and is_run_folder(run)
    if os.path.isdir(run) and not recognised and [n for n in os.listdir(run) if n != LOCK_NAME]:
        if fresh:
            raise RunFolderError(f"--fresh: '{run}' exists but is not a run folder this driver made (no "
                                 "experiment.json and provenance.json of its own); not deleting it")
        raise RunFolderError(f"'{run}' exists and is not an orbitlaw run folder; choose another --out")
    os.makedirs(run, exist_ok=True)
    lock = RunFolderLock(run, invocation)
    try:
        if recognised and fresh:
            foreign = sorted(n for n in os.listdir(run) if n not in WRITTEN and n != LOCK_NAME)
            if foreign:
                raise RunFolderError(f"--fresh: '{run}' holds files the driver did not write ({', '.join(foreign[:5])}"
                                     f"{', ...' if len(foreign) > 5 else ''}); not deleting it: move them or choose "
                                     "another --out")
            note(f"--fresh: removing the run in {run}")
            for name in WRITTEN:
                path = os.path.join(run, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                elif os.path.lexists(path):
                    os.remove(path)
            recognised = False
        if recognised:
            made = load(experiment)
            if not same(config, made) and (config.get("shard") or made.get("shard")) and \
                    same(shard.without_shard(config), shard.without_shard(made)):
                raise RunFolderError(f"run folder '{run}' holds {shard.describe(made)}, not {shard.describe(config)}; "
                                     "give each shard its own --out")
            if not same(config, made):
                raise RunFolderError(f"run folder '{run}' was made with a different config; rerun with the same "
                                     "options, pass --fresh, or choose another --out")
            note(f"resuming run folder {run} (completed stages are skipped)")
        else:
            write_json(experiment, config)
            write_json(os.path.join(run, "provenance.json"), provenance(config, invocation, root, orbitlaw))
            note(f"new run folder {run}")
        for sub in SUBFOLDERS:
            os.makedirs(os.path.join(run, sub), exist_ok=True)
        with open(os.path.join(run, "logs", "invocations.log"), "a") as f:
            f.write(f"{utc()} {invocation}\n")
    except BaseException:
        lock.release()
        raise
    return lock


def first_line(command):
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.splitlines()[0] if result.returncode == 0 and result.stdout else None


def package_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(config, invocation, root, orbitlaw):
    status = first_line(["git", "-C", root, "status", "--porcelain"])
    return {
        "experiment": config.get("experiment"),
        "seed": config.get("seed"),
        "smoke": config.get("smoke"),
        "git_revision": first_line(["git", "-C", root, "rev-parse", "HEAD"]) or "unknown",
        "git_dirty": bool(status),
        "orbitlaw": first_line([orbitlaw, "--version"]) or "unknown",
        "python": platform.python_version(),
        "python_packages": {name: package_version(name) for name in RECORDED_PACKAGES},
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "command_line": invocation,
        "created_utc": utc(),
        "config": config,
    }
