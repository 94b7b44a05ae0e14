"""The run folder: created with the resolved config and a provenance record, or reused only when it was made
with the same resolved config (a run folder is never mixed from two configs).

  RUN/experiment.json   the resolved config (smoke overlay and --set overrides applied)
  RUN/provenance.json   seed, git revision, versions, host, command line of the run's first invocation
  RUN/configs/ data/ models/ probe/ logs/ stages/   (see docs/experiments.md)
"""
import importlib.metadata
import os
import platform
import shutil
import subprocess

from expconfig import load, same, write_json
from runner import note, utc

SUBFOLDERS = ("configs", "data", "models", "probe", "logs", "stages")
# The Python packages whose versions the provenance records (the report's plotting and rendering stack).
RECORDED_PACKAGES = ("torch", "numpy", "h5py", "matplotlib", "markdown")


class RunFolderError(Exception):
    """A run folder that cannot be used as asked: one line."""


def prepare(run, config, fresh, invocation, root, orbitlaw):
    """Creates RUN, or checks that the existing one holds the same resolved config; logs the invocation."""
    experiment = os.path.join(run, "experiment.json")
    if os.path.exists(run) and fresh:
        if not os.path.isfile(experiment):
            raise RunFolderError(f"--fresh: '{run}' exists but is not a run folder (no experiment.json); "
                                 "not deleting it")
        note(f"--fresh: removing {run}")
        shutil.rmtree(run)
    if os.path.isfile(experiment):
        if not same(config, load(experiment)):
            raise RunFolderError(f"run folder '{run}' was made with a different config; rerun with the same options, "
                                 "pass --fresh, or choose another --out")
        note(f"resuming run folder {run} (completed stages are skipped)")
    else:
        if os.path.exists(run) and os.listdir(run):
            raise RunFolderError(f"'{run}' exists and is not an orbitlaw run folder; choose another --out")
        os.makedirs(run, exist_ok=True)
        write_json(experiment, config)
        write_json(os.path.join(run, "provenance.json"), provenance(config, invocation, root, orbitlaw))
        note(f"new run folder {run}")
    for sub in SUBFOLDERS:
        os.makedirs(os.path.join(run, sub), exist_ok=True)
    with open(os.path.join(run, "logs", "invocations.log"), "a") as f:
        f.write(f"{utc()} {invocation}\n")


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
