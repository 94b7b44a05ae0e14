"""Runs one stage: skipped when its marker exists, otherwise its command under its time limit, with
everything it prints in RUN/logs/<stage>.log and a marker in RUN/stages/ saying how it ended.

  <stage>.done    written only after the command exited 0 and its outputs exist: command, start, end, seconds
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


class StageRunner:
    def __init__(self, root, run, limits):
        self.root, self.run_dir, self.limits = root, run, limits
        self.current = None  # the name of the stage running now, for the interruption message
        self.process = None

    def shown(self, path):
        """A path as messages show it: relative to the repository when inside it."""
        return path[len(self.root) + 1:] if path.startswith(self.root + os.sep) else path

    def marker(self, name, kind):
        return os.path.join(self.run_dir, "stages", f"{name}.{kind}")

    def run(self, stage):
        if os.path.exists(self.marker(stage.name, "done")):
            note(f"skip   {stage.name} (done)")
            return
        limit = self.limits.limit(stage.family) or None
        command = stage.command(limit)
        log = os.path.join(self.run_dir, "logs", f"{stage.name}.log")
        start = int(time.time())
        note(f"start  {stage.name} (log: {self.shown(log)})")
        with open(log, "a") as f:
            f.write(f"# {utc()} stage {stage.name}\n# command: {shlex.join(command)}\n")
        self.current = stage.name
        code, cut = self.execute(command, log, limit)
        self.current = None
        end = int(time.time())
        if cut:
            return self.record_cut(stage, log, limit, end - start)
        missing = [p for p in stage.outputs if not os.path.exists(p)] if code == 0 else []
        if code != 0 or missing:
            return self.record_failure(stage, log, code, missing, end - start)
        for kind in ("failed", "cut"):
            if os.path.exists(self.marker(stage.name, kind)):
                os.remove(self.marker(stage.name, kind))
        write_json(self.marker(stage.name, "done"), {"stage": stage.name, "started_utc": utc(start),
                                                      "finished_utc": utc(end), "seconds": end - start,
                                                      "command": command})
        note(f"done   {stage.name} in {end - start} s")

    def execute(self, command, log, limit):
        """(exit status as a shell reports it, whether the limit cut it)."""
        with open(log, "ab") as out:
            signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
            try:
                self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                                stderr=subprocess.STDOUT, start_new_session=True,
                                                preexec_fn=stage_child_setup(os.getpid()))
            except OSError as e:  # what a shell reports as 126/127: the command could not be started
                signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
                out.write(f"cannot start {command[0]}: {e.strerror}\n".encode())
                return 127, False
            try:
                # An interrupt that came while the stage was starting is raised here, where it stops the stage.
                signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
                self.process.wait(timeout=limit)
                cut = False
            except subprocess.TimeoutExpired:
                self.stop(self.limits.grace_s)
                cut = True
            except BaseException:  # the driver is interrupted: the stage must not outlive it
                self.stop(self.limits.grace_s)
                raise
            code = self.process.returncode
            self.process = None
        # A stage killed by SIGKILL under a limit was stopped for time (by the limit, or by the system).
        cut = cut or (limit is not None and code == -signal.SIGKILL)
        return (128 - code if code < 0 else code), cut

    def stop(self, grace_s):
        """SIGTERM to the running stage's process group; SIGKILL when it has not ended after grace_s."""
        process = self.process
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
