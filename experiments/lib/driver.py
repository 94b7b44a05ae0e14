#!/usr/bin/env python3
"""The run-folder driver shared by every experiment: experiments/<name>.sh runs
`python experiments/lib/driver.py <name> "$@"` (through experiments/lib/launch.sh).

An experiment is a JSON config (experiments/configs/<name>.json) whose "stages" list says which stage families
run; every stage is an `orbitlaw` subcommand (or the report script) writing into one run folder
(runfolder.py, docs/experiments.md). The stages are a table of records (stages.py), each run under its time
limit (runner.py, budget.py). A rerun with the same config skips every stage whose marker exists and resumes
an interrupted training from its last checkpoint. Stages fail loudly: the driver stops at the first failing
stage, names it and shows the end of its log (in budget mode it records it and goes on to the report).
"""
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

import budget
import runfolder
import shard
import stages
from expconfig import ConfigError, resolve, write_json
from runner import StageError, StageRunner, note

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

USAGE = """\
usage: bash experiments/{name}.sh [--smoke] [--out DIR] [--set key=value]... [--seeds N] [--models A,B,...]
                                 [--fresh] [--stage-timeout S] [--jobs N] [--shard I/N]

  --smoke           tiny sizes (the config's "smoke" overlay): every stage runs, in minutes, for CI
  --out DIR         run folder (default: runs/{name}, or runs/{name}-smoke with --smoke)
  --set key=value   override a config value (dotted keys, e.g. --set models.lssar.train.steps=500)
  --seeds N         train, evaluate and probe every model N times, with training seeds base .. base + N - 1
                    (base: the model's train seed); same as --set seeds=N; default: the config's "seeds", or 1
  --models A,B,...  run only these of the config's models (comma-separated names); default: all of them
  --fresh           delete an existing run folder of this experiment first instead of resuming it
  --stage-timeout S stop any single stage after S seconds (marked as cut; training keeps its checkpoint)
  --jobs N          run up to N stages of one family (the models' and seeds' trainings, evaluations, probes)
                    side by side, each with its share of the cores (OMP_NUM_THREADS); default: one per core
                    (each stage one thread), or 1 where a GPU is visible or the config sets a time budget
  --shard I/N       run only shard I of N (0 <= I < N): every N-th (model, seed) pair's train, eval and probe
                    stages and the datasets they read, for a job array or GNU parallel; merge the N shards'
                    run folders with experiments/merge.py (docs/sweeps.md). Default --out:
                    runs/{name}-shard-I-of-N

Environment: ORBITLAW_BIN (use this orbitlaw binary instead of building build/), ORBITLAW_BUILD_DIR,
ORBITLAW_PYTHON (default .venv/bin/python).
"""


class DriverError(Exception):
    """Anything that stops the experiment before or between stages: one line, 'experiment: error: ...'."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM: the running stage is stopped and the run can be resumed by rerunning it."""


@dataclass
class Options:
    smoke: bool = False
    out: Optional[str] = None
    overrides: list = field(default_factory=list)  # --set and --seeds, as key=value, in command-line order
    models: Optional[list] = None  # --models: the config's models to keep; None keeps all
    fresh: bool = False
    stage_timeout: Optional[str] = None  # as given; checked to be whole seconds
    jobs: Optional[int] = None  # --jobs: stages of one family run side by side; None: default_jobs()
    shard: Optional[tuple] = None  # --shard: (index, count)


def option_value(args, i, flag, needs):
    """The value of `flag VALUE` or `flag=VALUE` at args[i], and how many arguments it took."""
    if args[i] == flag:
        if i + 1 >= len(args) or not args[i + 1]:
            raise DriverError(f"{flag} needs {needs}")
        return args[i + 1], 2
    value = args[i][len(flag) + 1:]
    if not value:  # --out= would fall back to the default folder without a word
        raise DriverError(f"{flag} needs {needs}")
    return value, 1


def parse_options(name, args):
    options, i = Options(), 0
    while i < len(args):
        arg, taken = args[i], 1
        if arg == "--smoke":
            options.smoke = True
        elif arg == "--out" or arg.startswith("--out="):
            options.out, taken = option_value(args, i, "--out", "a folder")
        elif arg == "--set" or arg.startswith("--set="):
            value, taken = option_value(args, i, "--set", "key=value")
            options.overrides.append(value)
        elif arg == "--seeds" or arg.startswith("--seeds="):
            seeds, taken = option_value(args, i, "--seeds", "a number")
            if not re.fullmatch(r"[1-9][0-9]*", seeds):
                raise DriverError(f"--seeds needs a whole number >= 1, not '{seeds}'")
            options.overrides.append(f"seeds={seeds}")
        elif arg == "--models" or arg.startswith("--models="):
            names, taken = option_value(args, i, "--models", "model names")
            options.models = [n for n in names.split(",") if n]
            if not options.models or len(set(options.models)) != len(options.models):
                raise DriverError(f"--models needs distinct comma-separated model names, not '{names}'")
        elif arg == "--jobs" or arg.startswith("--jobs="):
            jobs, taken = option_value(args, i, "--jobs", "a number")
            if not re.fullmatch(r"[1-9][0-9]{0,2}", jobs):
                raise DriverError(f"--jobs needs a whole number from 1 to 999, not '{jobs}'")
            options.jobs = int(jobs)
        elif arg == "--shard" or arg.startswith("--shard="):
            text, taken = option_value(args, i, "--shard", "i/n")
            try:
                options.shard = shard.parse(text)
            except shard.ShardError as e:
                raise DriverError(str(e)) from None
        elif arg == "--fresh":
            options.fresh = True
        elif arg == "--stage-timeout":
            if i + 1 >= len(args):
                raise DriverError("--stage-timeout needs seconds")
            options.stage_timeout, taken = args[i + 1], 2
        elif arg in ("-h", "--help"):
            print(USAGE.format(name=name), end="")
            sys.exit(0)
        else:
            raise DriverError(f"unknown option '{arg}' (see --help)")
        i += taken
    if options.stage_timeout is not None and not re.fullmatch(r"[0-9]+", options.stage_timeout):
        raise DriverError(f"--stage-timeout needs a whole number of seconds, not '{options.stage_timeout}'")
    return options


def ensure_orbitlaw():
    """The orbitlaw binary: ORBITLAW_BIN when set, otherwise build/ (incrementally) like scripts/test.sh."""
    given = os.environ.get("ORBITLAW_BIN")
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise DriverError(f"ORBITLAW_BIN='{given}' is not an executable file")
        return given
    build = os.environ.get("ORBITLAW_BUILD_DIR") or os.path.join(ROOT, "build")
    log = os.path.join(build, "experiment-build.log")
    note(f"building orbitlaw in {build} (incremental; log: {log})")
    os.makedirs(build, exist_ok=True)
    jobs = str(len(os.sched_getaffinity(0)))
    commands = [["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 *shlex.split(os.environ.get("ORBITLAW_CMAKE_ARGS", ""))],
                ["cmake", "--build", build, "--target", "orbitlaw", "-j", jobs]]
    with open(log, "w") as out:
        ok = all(subprocess.run(c, stdout=out, stderr=subprocess.STDOUT).returncode == 0 for c in commands)
    if not ok:
        with open(log, errors="replace") as f:
            print("".join(f.readlines()[-20:]), end="", file=sys.stderr)
        raise DriverError(f"building orbitlaw failed; see {log} (did you run 'bash scripts/setup.sh'?)")
    binary = os.path.join(build, "app", "orbitlaw")
    if not os.access(binary, os.X_OK):
        raise DriverError(f"the build did not produce {binary}")
    return binary


def run_folder_path(name, options):
    # A shard's own folder by default, beside the single run's: shards never share a run folder.
    default = name + ("-smoke" if options.smoke else "") + \
        (f"-shard-{options.shard[0]}-of-{options.shard[1]}" if options.shard else "")
    out = options.out or os.path.join(ROOT, "runs", default)
    run = os.path.abspath(out)
    os.makedirs(os.path.dirname(run), exist_ok=True)
    return run


def time_limits(config, options, start, table):
    """budget.SharedBudget when the config has a "budget" section (planned now, from the stage table),
    budget.FixedLimit(--stage-timeout) otherwise."""
    section = config.get("budget")
    if not (section and section.get("total_s")):
        return budget.FixedLimit(int(options.stage_timeout) if options.stage_timeout else None)
    counts = {}
    for stage in table:
        counts[stage.family] = counts.get(stage.family, 0) + 1
    try:
        limits = budget.SharedBudget(section, start, counts)
    except budget.BudgetError as e:
        raise DriverError(str(e)) from None
    return limits


def print_summary(name, run, config):
    print(flush=True)
    if config.get("shard"):
        note(f"{shard.describe(config)} of experiment '{name}' complete: {run}; once every shard is, "
             "experiments/merge.py merges their run folders into one run and its report (docs/sweeps.md)")
        return
    markers = os.path.join(run, "stages")
    unfinished = sorted(os.path.basename(p) for p in glob.glob(os.path.join(markers, "*.cut"))
                        + glob.glob(os.path.join(markers, "*.failed")))
    if unfinished:
        note(f"experiment '{name}' finished with stages cut or failed ({' '.join(unfinished)}): {run}")
    else:
        note(f"experiment '{name}' complete: {run}")
    # The answer, then where the report is: the last lines a user sees.
    report = os.path.join(run, "report")
    laws = os.path.join(report, "laws.md")
    if os.path.isfile(laws):
        with open(laws) as f:
            print(f.read())
    if os.path.isfile(os.path.join(report, "report.html")):
        print(f"report: {report}/report.html\n        {report}/report.md")
    sys.stdout.flush()


def on_signal(signum, frame):
    # A second signal ends the driver at once, as the default action would.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    raise Interrupted()


def default_jobs(config):
    """--jobs when not given: one single-threaded stage per core, the most trainings per hour for the small
    models a CPU sweep trains (bench/model/sweep.sh); one stage at a time where a GPU is visible (the stages
    would share it) or under a time budget (which shares its time between stages run one after another)."""
    if (config.get("budget") or {}).get("total_s") or os.path.exists("/dev/nvidia0"):
        return 1
    return len(os.sched_getaffinity(0))


def run_experiment(name, args, start, state):
    """Everything from the command line to the last stage; returns the exit status. `state` receives the run
    folder and config as soon as they exist, so that packing on exit finds them."""
    options = parse_options(name, args)
    source = os.path.join(ROOT, "experiments", "configs", f"{name}.json")
    if not os.path.isfile(source):
        raise DriverError(f"no config for experiment '{name}' at {source}")
    run = run_folder_path(name, options)
    config = resolve(source, options.smoke, options.overrides, options.models)
    if options.jobs is None:
        options.jobs = default_jobs(config)
    if options.jobs > 1 and (config.get("budget") or {}).get("total_s"):
        raise DriverError("--jobs applies to runs without a time budget: a budget shares its time between stages "
                          "that run one after another")
    if options.shard:
        config["shard"] = {"index": options.shard[0], "count": options.shard[1]}
        try:
            shard.check(config)
        except shard.ShardError as e:
            raise DriverError(str(e)) from None
    orbitlaw = ensure_orbitlaw()
    try:
        state["lock"] = runfolder.prepare(run, config, options.fresh, f"bash experiments/{name}.sh {' '.join(args)}",
                                          ROOT, orbitlaw)
    except runfolder.RunFolderError as e:
        raise DriverError(str(e)) from None
    state.update(run=run, config=config)
    context = stages.RunContext(ROOT, run, config, orbitlaw, sys.executable, None, note)
    table = stages.stage_table(context)
    if config.get("shard"):
        table = shard.select(table, config)
    context.limits = time_limits(config, options, start, table)
    if isinstance(context.limits, budget.SharedBudget):
        write_json(os.path.join(run, "budget.json"), context.limits.plan)
        note(context.limits.summary())
    runner = StageRunner(ROOT, run, context.limits, options.jobs)
    state["runner"] = runner
    runner.run_all(table)
    print_summary(name, run, config)
    # Budget mode goes on past a failed stage so that the report arrives, but the run still did not succeed.
    failed = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "stages", "*.failed")))
    if failed:
        print(f"experiment: error: stages failed: {' '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def pack_results(name, state):
    """Configs with a "bundle" section (gpu-study) pack the run's evidence on every exit into $OUT/<name>, or
    RUN/bundle when OUT is unset (experiments/lib/bundle.py); returns whether that worked."""
    config, run = state.get("config") or {}, state.get("run")
    section = config.get("bundle")
    if not section or not run or not os.path.isfile(os.path.join(run, "experiment.json")):
        return True
    import bundle
    dest = os.path.join(os.environ["OUT"], name) if os.environ.get("OUT") else os.path.join(run, "bundle")
    try:
        return bundle.pack(run, dest, section.get("max_mb", bundle.DEFAULT_MAX_MB)) == 0
    except (OSError, SystemExit, AssertionError) as e:
        print(f"bundle: error: {e}", file=sys.stderr)
        return False


def main(argv):
    if not argv:
        print("usage: driver.py EXPERIMENT [options]", file=sys.stderr)
        return 2
    name, args, start = argv[0], argv[1:], time.time()
    # A closed terminal (SIGHUP) stops the run like Ctrl-C: the running stage is stopped with it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    state = {}
    code = 1
    try:
        code = run_experiment(name, args, start, state)
    except Interrupted:
        runner = state.get("runner")
        if runner and runner.current:
            print(f"\nexperiment: interrupted during {runner.current}; rerun the same command to resume",
                  file=sys.stderr)
        code = 130
    except ConfigError as e:
        print(f"expconfig: error: {e}", file=sys.stderr)
    except (DriverError, StageError) as e:
        print(f"experiment: error: {e}", file=sys.stderr)
    finally:
        if not pack_results(name, state):
            code = code or 1
        if state.get("lock"):
            state["lock"].release()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
