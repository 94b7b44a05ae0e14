"""Runs one stage: skipped when its marker exists, otherwise its command under its time limit, with
everything it prints in RUN/logs/<stage>.log and a marker in RUN/stages/ saying how it ended.

  <stage>.done    written only after the command exited 0 and its outputs exist: command, start, end, seconds,
                  and the threads it was given (OMP_NUM_THREADS, null: unset, LibTorch takes every core) and the
                  cores it could use, on which its arithmetic, and so its last bits, depend (a "threads" key of
                  the stage's config, RUN/configs/<stage>.json, overrides OMP_NUM_THREADS in orbitlaw)
  <stage>.cut     it hit its time limit: SIGTERM to its process group, SIGKILL a grace period later
  <stage>.failed  it failed in budget mode, where the run goes on so that the report arrives

A stage runs in its own process group, so that the limit stops the whole stage, whatever it started. It never
outlives the driver: an interrupted driver (SIGINT, SIGTERM, SIGHUP) stops the group before it exits, and a
driver killed outright (SIGKILL) takes the stage with it through the kernel's parent-death signal.
"""
import ctypes
import datetime
import os
import shlex
import signal
import subprocess
import sys
import time

from expconfig import write_json

# Signals that interrupt the driver (driver.py): held back while a stage starts, so that the stage is never
# started without the driver knowing its process to stop.
INTERRUPTS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: the stage's setup between fork and exec only calls it


def stage_child_setup(driver_pid):
    """Run in the stage's process between fork and exec: it gets SIGKILL when the driver dies, and the
    interrupt signals the driver holds back are delivered to it normally again."""
    def setup():
        LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != driver_pid:  # the driver died before the line above took effect
            os._exit(1)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
    return setup


class StageError(Exception):
    """A stage that stops the run (failed, or cut outside budget mode): one line for the user."""


def utc(epoch=None):
    moment = datetime.datetime.now(datetime.timezone.utc) if epoch is None else \
        datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def note(message):
    print(f"[{datetime.datetime.now(datetime.timezone.utc).strftime('%H:%M:%S')}] {message}", flush=True)


class Running:
    """A stage whose command runs now: its process, log, start time and time limit."""

    def __init__(self, stage, command, process, log, start, limit):
        self.stage, self.command, self.process = stage, command, process
        self.log, self.start, self.limit = log, start, limit


class StageRunner:
    def __init__(self, root, run, limits, jobs=1):
        self.root, self.run_dir, self.limits, self.jobs = root, run, limits, jobs
        self.running = []  # the stages whose commands run now, for stopping them and the interruption message

    @property
    def current(self):
        """The stages running now, as the interruption message names them ("stage 'a'", "stages 'a', 'b'"), or
        None."""
        names = [f"'{r.stage.name}'" for r in self.running]
        if not names:
            return None
        return ("stage " if len(names) == 1 else "stages ") + ", ".join(names)

    def shown(self, path):
        """A path as messages show it: relative to the repository when inside it."""
        return path[len(self.root) + 1:] if path.startswith(self.root + os.sep) else path

    def marker(self, name, kind):
        return os.path.join(self.run_dir, "stages", f"{name}.{kind}")

    def run(self, stage):
        self.run_all([stage])

    def run_all(self, table):
        """Every stage of `table`, in order, at most `jobs` at a time. Stages of one family in a row (the
        trainings, evaluations or probes of different models and seeds) depend on none of each other and run
        side by side; a stage of the next family starts once all before it have ended."""
        total = len(table)
        done = [0]
        durations = []
        i = 0
        while i < total:
            j = i
            while j < total and table[j].family == table[i].family:
                j += 1
            self.run_group(table[i:j], done, total, durations)
            i = j

    def run_group(self, group, done, total, durations):
        waiting = list(group)
        try:
            while waiting or self.running:
                while waiting and len(self.running) < self.jobs:
                    stage = waiting.pop(0)
                    started = self.start(stage)
                    if started is None:
                        done[0] += 1
                    else:
                        self.running.append(started)
                for r in list(self.running):
                    code = r.process.poll()
                    cut = False
                    if code is None:
                        if r.limit is None or time.time() - r.start < r.limit:
                            continue
                        self.stop(r.process, self.limits.grace_s)
                        code, cut = r.process.returncode, True
                    self.running.remove(r)
                    durations.append(time.time() - r.start)
                    done[0] += 1
                    self.finish(r, code, cut)
                    if self.jobs > 1:
                        self.progress(done[0], total, durations)
                if self.running:
                    time.sleep(0.05)
        except BaseException:  # interrupted, or a stage that stops the run: no stage outlives the driver
            for r in self.running:
                self.stop(r.process, self.limits.grace_s)
            raise

    def progress(self, done, total, durations):
        left = total - done
        eta = ""
        if left and durations:
            seconds = int(sum(durations) / len(durations) * left / self.jobs)
            eta = f", ETA {seconds // 60}:{seconds % 60:02d}"
        note(f"sweep  {done} of {total} stages done, {len(self.running)} running{eta}")

    def start(self, stage):
        """Starts the stage's command; None when its marker says it is done."""
        if os.path.exists(self.marker(stage.name, "done")):
            note(f"skip   {stage.name} (done)")
            return None
        limit = self.limits.limit(stage.family) or None
        command = stage.command(limit)
        log = os.path.join(self.run_dir, "logs", f"{stage.name}.log")
        start = time.time()
        note(f"start  {stage.name} (log: {self.shown(log)})")
        with open(log, "a") as f:
            f.write(f"# {utc()} stage {stage.name}\n# command: {shlex.join(command)}\n")
        process = self.spawn(command, log)
        if process is None:
            return self.finish(Running(stage, command, None, log, start, limit), 127, False)
        return Running(stage, command, process, log, start, limit)

    def spawn(self, command, log):
        """The stage's process in its own process group, its output in `log`; None when it cannot start. With
        several jobs each stage gets its share of the cores (OMP_NUM_THREADS, unless the user set it)."""
        threads = self.threads()
        env = None if threads == os.environ.get("OMP_NUM_THREADS") else dict(os.environ, OMP_NUM_THREADS=threads)
        with open(log, "ab") as out:
            signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
            try:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True, preexec_fn=stage_child_setup(os.getpid()),
                                           env=env)
            except OSError as e:  # what a shell reports as 126/127: the command could not be started
                signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
                out.write(f"cannot start {command[0]}: {e.strerror}\n".encode())
                return None
            try:
                # An interrupt that came while the stage was starting is raised here, where it stops the stage.
                signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
            except BaseException:
                self.stop(process, self.limits.grace_s)
                raise
            return process

    def threads(self):
        """The OMP_NUM_THREADS a stage runs with: the user's; with several jobs and none set, its share of the
        cores; otherwise None (unset)."""
        if self.jobs > 1 and "OMP_NUM_THREADS" not in os.environ:
            return str(max(1, len(os.sched_getaffinity(0)) // self.jobs))
        return os.environ.get("OMP_NUM_THREADS")

    def finish(self, r, code, cut):
        """Records how a stage ended (marker, note); raises StageError where that stops the run."""
        stage, log, limit = r.stage, r.log, r.limit
        # A stage killed by SIGKILL under a limit was stopped for time (by the limit, or by the system).
        cut = cut or (limit is not None and code == -signal.SIGKILL)
        code = 128 - code if code < 0 else code  # as a shell reports it
        end = time.time()
        seconds = int(end) - int(r.start)
        if cut:
            return self.record_cut(stage, log, limit, seconds)
        missing = [p for p in stage.outputs if not os.path.exists(p)] if code == 0 else []
        if code != 0 or missing:
            return self.record_failure(stage, log, code, missing, seconds)
        for kind in ("failed", "cut"):
            if os.path.exists(self.marker(stage.name, kind)):
                os.remove(self.marker(stage.name, kind))
        write_json(self.marker(stage.name, "done"), {"stage": stage.name, "started_utc": utc(int(r.start)),
                                                      "finished_utc": utc(int(end)), "seconds": seconds,
                                                      "command": r.command, "omp_num_threads": self.threads(),
                                                      "cores": len(os.sched_getaffinity(0))})
        note(f"done   {stage.name} in {seconds} s")
        return None

    @staticmethod
    def stop(process, grace_s):
        """SIGTERM to a running stage's process group; SIGKILL when it has not ended after grace_s."""
        if process is None or process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def record_cut(self, stage, log, limit, seconds):
        with open(log, "a") as f:
            f.write(f"# {utc()} cut after {limit}s\n")
        write_json(self.marker(stage.name, "cut"), {"stage": stage.name, "limit_s": limit, "seconds": seconds})
        note(f"cut    {stage.name} after {seconds} s (time limit {limit} s)")
        if not self.limits.keep_going:
            raise StageError(f"stage '{stage.name}' was cut at its time limit of {limit} s; see {self.shown(log)}")

    def record_failure(self, stage, log, code, missing, seconds):
        if missing:
            with open(log, "a") as f:
                f.write(f"# {utc()} exited 0 without its outputs: {' '.join(missing)}\n")
        print(f"---- last lines of {self.shown(log)} ----", file=sys.stderr, flush=True)
        with open(log, errors="replace") as f:
            tail = "".join(f.readlines()[-15:])
        print(tail if tail.endswith("\n") or not tail else tail + "\n", end="", file=sys.stderr)
        print("----", file=sys.stderr, flush=True)
        what = f"exit {code}" if code else "exit 0, but it did not write " + ", ".join(self.shown(p) for p in missing)
        if self.limits.keep_going:
            write_json(self.marker(stage.name, "failed"), {"stage": stage.name, "exit": code, "seconds": seconds})
            note(f"FAILED {stage.name} ({what}); continuing so that the report arrives")
            return
        raise StageError(f"stage '{stage.name}' failed ({what}); see {self.shown(log)}")
