"""Stage time limits: --stage-timeout, or an experiment's wall-clock budget shared among its stages.

This module holds every fraction and default of the driver's time budget. A config with a "budget" section
(gpu-study) turns budget mode on:

  "budget": {"total_s": T, "reserve_s": R, "report_min_s": M, "shares": {"simulate": f, "train": f, ...},
             "train_time_key": KEY, "probe_time_key": KEY}

The whole script, build included, must end within T seconds. After the build, what is left (minus R for
packing the results) is divided among the stage families by their shares, and each family's part among its
stages (one per dataset, or per model and seed); the report keeps at least M seconds. Every stage is started
with its limit, so a slow stage is cut, never the report. Training is told (through train_time_key) to stop
itself at TRAIN_STOP_SHARE of its limit, so that its last checkpoint is written cleanly, and the probe
(through probe_time_key) at PROBE_STOP_SHARE.

How `orbitlaw probe` divides the time it is given among its model probes and law searches is the probe's own
split (kModelProbeShare and friends in probe/src/run.cpp), applied inside the seconds this module hands it: the
two are not copies of each other, and neither reads the other's fractions.
"""
import time

# Shares of a stage's limit at which a stage that can stop itself is told to: the rest is for writing its
# outputs before the hard limit (SIGTERM) arrives.
TRAIN_STOP_SHARE = 0.9
PROBE_STOP_SHARE = 0.85

DEFAULT_RESERVE_S = 15  # for packing the results after the report, when the config does not say
DEFAULT_REPORT_MIN_S = 20  # the report's floor, whatever its share says, when the config does not say
MIN_AVAILABLE_S = 30  # less than this left after the build: the budget cannot be kept at all
MIN_STAGE_S = 5  # no stage gets less: a stage given no time does nothing useful
UNPLANNED_FAMILY_S = 60  # a stage family the shares do not name
UNPLANNED_REPORT_S = 30  # kept free for the report when its share is not planned

# After SIGTERM at its limit a stage has this long to end before SIGKILL; shorter under a budget, where every
# second of the grace comes out of the stages after it.
GRACE_S = 30
BUDGET_GRACE_S = 10


class BudgetError(Exception):
    """A budget that cannot be kept (the build left too little of it): one line."""


class FixedLimit:
    """--stage-timeout S: every stage gets S seconds (None or 0: no limit); the run stops at a cut stage."""

    keep_going = False
    grace_s = GRACE_S

    def __init__(self, seconds):
        self.seconds = seconds or None

    def limit(self, family):
        return self.seconds


class SharedBudget:
    """Budget mode: per-family limits planned once, none running past the deadline. A cut or failed stage does
    not stop the run, so that the report and the packed results arrive."""

    keep_going = True
    grace_s = BUDGET_GRACE_S

    def __init__(self, budget, start, stage_counts, now=None):
        """budget: the config's "budget" section; start: when the script started (epoch seconds);
        stage_counts: {family: number of stages of that family this run has}."""
        now = time.time() if now is None else now
        total, shares = budget["total_s"], budget["shares"]
        reserve = budget.get("reserve_s", DEFAULT_RESERVE_S)
        elapsed = int(now) - int(start)
        available = total - elapsed - reserve
        if available < MIN_AVAILABLE_S:
            raise BudgetError(f"the build took {elapsed} s of the {total} s budget; {available} s is too little")
        weight = sum(shares.values())
        self.limits = {family: max(MIN_STAGE_S, int(available * share / weight / max(1, stage_counts.get(family, 0))))
                       for family, share in shares.items()}
        # The report must arrive: it keeps at least report_min_s whatever its share says.
        self.limits["report"] = max(self.limits.get("report", 0), budget.get("report_min_s", DEFAULT_REPORT_MIN_S))
        self.deadline = int(start) + total - reserve
        self.plan = {"total_s": total, "build_s": elapsed, "reserve_s": reserve, "available_s": available,
                     "per_stage_limit_s": self.limits, "shares": shares}

    def limit(self, family, now=None):
        """The family's planned limit, but never past the deadline minus the report's own time (except for the
        report itself, which keeps its limit so that it always arrives)."""
        limit = self.limits.get(family, UNPLANNED_FAMILY_S)
        if family != "report":
            now = time.time() if now is None else now
            left = self.deadline - int(now) - self.limits.get("report", UNPLANNED_REPORT_S)
            limit = max(MIN_STAGE_S, min(limit, left))
        return limit

    def summary(self):
        limits = " ".join(f"{family}={seconds}" for family, seconds in self.limits.items())
        return (f"budget: {self.plan['total_s']} s in all, build took {self.plan['build_s']} s; "
                f"per-stage limits (s): {limits}")


def self_stop_settings(budget, limits, family, limit):
    """The --set arguments that tell a stage to stop itself inside its limit (budget mode only), or []."""
    if not isinstance(limits, SharedBudget) or limit is None:
        return []
    if family == "train" and budget.get("train_time_key"):
        return ["--set", f"{budget['train_time_key']}={limit * TRAIN_STOP_SHARE / 60:.3f}"]  # minutes
    if family == "probe" and budget.get("probe_time_key"):
        return ["--set", f"{budget['probe_time_key']}={limit * PROBE_STOP_SHARE:.1f}"]  # seconds
    return []
