# shellcheck shell=bash
# The run-folder driver shared by every experiment script (experiments/<name>.sh sources this file and calls
# experiment_main <name> "$@").
#
# An experiment is a JSON config (experiments/configs/<name>.json) whose "stages" list says which stages run;
# every stage is an `orbitlaw` subcommand (or the report script) writing into one run folder:
#
#   RUN/experiment.json      the resolved config (smoke overlay and --set overrides applied)
#   RUN/provenance.json      seed, git revision, versions, host, command line of the run's first invocation
#   RUN/configs/             the per-stage config files handed to `orbitlaw <stage> --config`
#   RUN/data/<name>.h5       simulated datasets                       (stage simulate-<name>)
#   RUN/models/<kind>/       checkpoint.pt, metrics.jsonl, eval.json  (stages train-<kind>, eval-<kind>)
#   RUN/probe/<kind>/        predictions.h5, SR results               (stages probe-<kind>, sr-<kind>)
#                            with --seeds N > 1, one folder per training seed s below each of these:
#                            models/<kind>/seed-<s>/, probe/<kind>/seed-<s>/ (stages train-<kind>-seed-<s>, ...)
#   RUN/compare/             compare.md, compare.json                 (stage compare)
#   RUN/report/              report.md, report.html, *.png            (stage report)
#   RUN/logs/<stage>.log     everything each stage printed
#   RUN/stages/<stage>.done  written only after the stage's outputs are complete (JSON: command, seconds)
#
# A rerun with the same config skips every stage whose .done marker exists and resumes an interrupted
# training from its last checkpoint (`orbitlaw train --resume`). A run folder made with a different config is
# refused rather than mixed. Stages fail loudly: the driver stops at the first failing stage, names it and
# shows the end of its log.

experiment_usage() {
  cat <<EOF
usage: bash experiments/$1.sh [--smoke] [--out DIR] [--set key=value]... [--seeds N] [--fresh] [--stage-timeout S]

  --smoke           tiny sizes (the config's "smoke" overlay): every stage runs, in minutes, for CI
  --out DIR         run folder (default: runs/$1, or runs/$1-smoke with --smoke)
  --set key=value   override a config value (dotted keys, e.g. --set models.lssar.train.steps=500)
  --seeds N         train, evaluate and probe every model N times, with training seeds base .. base + N - 1
                    (base: the model's train seed); same as --set seeds=N; default: the config's "seeds", or 1
  --fresh           delete an existing run folder of this experiment first instead of resuming it
  --stage-timeout S stop any single stage after S seconds (marked as cut; training keeps its checkpoint)

Environment: ORBITLAW_BIN (use this orbitlaw binary instead of building build/), ORBITLAW_BUILD_DIR,
ORBITLAW_PYTHON (default .venv/bin/python).
EOF
}

die() {
  echo "experiment: error: $*" >&2
  exit 1
}

note() { echo "[$(date -u +%H:%M:%S)] $*"; }

utc_now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# --- setup -----------------------------------------------------------------------------------------------

# Finds (or builds) the orbitlaw binary. ORBITLAW_BIN wins; otherwise build/ like scripts/test.sh does.
ensure_orbitlaw() {
  if [ -n "${ORBITLAW_BIN:-}" ]; then
    [ -x "$ORBITLAW_BIN" ] || die "ORBITLAW_BIN='$ORBITLAW_BIN' is not an executable file"
    orbitlaw_bin="$ORBITLAW_BIN"
    return
  fi
  local build="${ORBITLAW_BUILD_DIR:-$root/build}"
  note "building orbitlaw in $build (incremental; log: $build/experiment-build.log)"
  mkdir -p "$build"
  if ! {
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${ORBITLAW_CMAKE_ARGS:-} &&
      cmake --build "$build" --target orbitlaw -j "$(nproc)"
  } >"$build/experiment-build.log" 2>&1; then
    tail -n 20 "$build/experiment-build.log" >&2
    die "building orbitlaw failed; see $build/experiment-build.log (did you run 'bash scripts/setup.sh'?)"
  fi
  orbitlaw_bin="$build/app/orbitlaw"
  [ -x "$orbitlaw_bin" ] || die "the build did not produce $orbitlaw_bin"
}

ensure_python() {
  python_bin="${ORBITLAW_PYTHON:-$root/.venv/bin/python}"
  [ -x "$python_bin" ] || die "no Python at $python_bin; run 'bash scripts/setup.sh' first"
}

expconfig() { "$python_bin" "$root/experiments/lib/expconfig.py" "$@"; }
cfg() { expconfig get "$run/experiment.json" "$@"; }
cfg_keys() { expconfig keys "$run/experiment.json" "$1"; }

# Writes RUN/provenance.json once, when the run folder is created.
write_run_provenance() {
  local revision dirty versions
  revision="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  dirty="$(git -C "$root" status --porcelain 2>/dev/null | head -c1 | wc -c)"
  versions="$("$orbitlaw_bin" --version 2>/dev/null | head -n1 || echo unknown)"
  "$python_bin" - "$run/provenance.json" "$experiment" "$revision" "$dirty" "$versions" "$invocation" <<'PY'
import json, os, platform, sys, datetime, importlib.metadata as md
out, name, revision, dirty, orbitlaw_version, invocation = sys.argv[1:]
config = json.load(open(os.path.join(os.path.dirname(out), "experiment.json")))
def version(pkg):
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return None
record = {
    "experiment": name,
    "seed": config.get("seed"),
    "smoke": config.get("smoke"),
    "git_revision": revision,
    "git_dirty": dirty != "0",
    "orbitlaw": orbitlaw_version,
    "python": platform.python_version(),
    "python_packages": {p: version(p) for p in ("torch", "numpy", "h5py", "matplotlib")},
    "host": platform.node(),
    "cpus": os.cpu_count(),
    "command_line": invocation,
    "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "config": config,
}
tmp = out + ".tmp"
json.dump(record, open(tmp, "w"), indent=2)
os.replace(tmp, out)
PY
}

# Creates the run folder, or checks that an existing one was made with the same resolved config.
prepare_run_folder() {
  local resolved="$1"
  if [ -e "$run" ] && [ "$fresh" = 1 ]; then
    [ -f "$run/experiment.json" ] || die "--fresh: '$run' exists but is not a run folder (no experiment.json); not deleting it"
    note "--fresh: removing $run"
    rm -rf -- "$run"
  fi
  if [ -f "$run/experiment.json" ]; then
    if ! expconfig same "$resolved" "$run/experiment.json"; then
      die "run folder '$run' was made with a different config; rerun with the same options, pass --fresh, or choose another --out"
    fi
    note "resuming run folder $run (completed stages are skipped)"
  else
    if [ -e "$run" ] && [ -n "$(ls -A "$run" 2>/dev/null)" ]; then
      die "'$run' exists and is not an orbitlaw run folder; choose another --out"
    fi
    mkdir -p "$run"
    cp "$resolved" "$run/experiment.json"
    write_run_provenance
    note "new run folder $run"
  fi
  mkdir -p "$run/configs" "$run/data" "$run/models" "$run/probe" "$run/logs" "$run/stages"
  echo "$(utc_now) $invocation" >>"$run/logs/invocations.log"
}

# --- stages ----------------------------------------------------------------------------------------------

stage_done() { [ -f "$run/stages/$1.done" ]; }

# --- seeds ------------------------------------------------------------------------------------------------
#
# With "seeds": N > 1 every model is trained, evaluated and probed once per training seed, each seed in its
# own folders and stages, so that a conclusion can be weighed against the seed-to-seed spread. A one-seed run
# keeps the folders and stage names it always had, so existing run folders resume unchanged.
model_seeds() { expconfig seeds "$run/experiment.json" "$1"; }
# The folder below models/<kind>/ and probe/<kind>/ of one seed ("" with one seed).
seed_path() { if [ "$seed_count" -gt 1 ]; then echo "/seed-$1"; fi; }
# The suffix of the stage names (and configs/, logs/ files) of one seed ("" with one seed).
seed_name() { if [ "$seed_count" -gt 1 ]; then echo "-seed-$1"; fi; }

# --- time budget (configs with a "budget" section, e.g. gpu-study) -------------------------------------------
#
# "budget": {"total_s": T, "reserve_s": R, "report_min_s": M, "shares": {"simulate": f, "train": f, ...}}:
# the whole script, build included, must end within T seconds. After the build, what is left (minus R for
# packing the results) is divided among the stage families by their shares, and each family's part among its
# stages (one per dataset or model); the report keeps at least M seconds (default 20). Every stage is started
# with its limit, so a slow stage is cut, never the report.
declare -A budget_limit=()
budget_deadline=""
keep_going=0

plan_budget() {
  local total
  total="$(cfg budget.total_s "")"
  [ -n "$total" ] || return 0
  keep_going=1
  local now elapsed
  now="$(date +%s)"
  elapsed=$((now - experiment_start))
  "$python_bin" - "$run/experiment.json" "$elapsed" "$run/budget.json" <<'PY'
import json, sys
config, elapsed, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
budget = config["budget"]
total, reserve, shares = budget["total_s"], budget.get("reserve_s", 15), budget["shares"]
available = total - elapsed - reserve
if available < 30:
    sys.exit(f"experiment: error: the build took {elapsed} s of the {total} s budget; {available} s is too little")
count = {"simulate": len(config["datasets"]), "compare": 1, "report": 1}
limits = {}
for family, share in shares.items():
    # train, eval, probe and sr run once per model and seed.
    n = count.get(family, len(config.get("models") or {}) * config.get("seeds", 1))
    limits[family] = max(5, int(available * share / sum(shares.values()) / max(1, n)))
# The report must arrive: it keeps at least report_min_s whatever its share says.
limits["report"] = max(limits.get("report", 0), budget.get("report_min_s", 20))
plan = {"total_s": total, "build_s": elapsed, "reserve_s": reserve, "available_s": available,
        "per_stage_limit_s": limits, "shares": shares}
json.dump(plan, open(out, "w"), indent=2)
PY
  local family seconds
  while read -r family seconds; do
    budget_limit[$family]="$seconds"
  done < <("$python_bin" -c 'import json,sys; [print(k, v) for k, v in json.load(open(sys.argv[1]))["per_stage_limit_s"].items()]' "$run/budget.json")
  budget_deadline=$((experiment_start + total - $(cfg budget.reserve_s 15)))
  note "budget: ${total} s in all, build took ${elapsed} s; per-stage limits (s): $(tr '\n' ' ' < <(for f in "${!budget_limit[@]}"; do echo "$f=${budget_limit[$f]}"; done))"
}

# The time limit of one stage: --stage-timeout, or its budget share (never past the deadline, except the
# report, which keeps its own share so that it always arrives).
stage_limit() {
  local name="$1" family="${1%%-*}"
  if [ -z "$budget_deadline" ]; then
    echo "$stage_timeout"
    return
  fi
  local limit="${budget_limit[$family]:-60}" left
  if [ "$family" != report ]; then
    left=$((budget_deadline - $(date +%s) - ${budget_limit[report]:-30}))
    [ "$left" -lt "$limit" ] && limit="$left"
    [ "$limit" -lt 5 ] && limit=5
  fi
  echo "$limit"
}

# run_stage NAME CMD...: runs CMD unless NAME is done; logs to RUN/logs/NAME.log; writes the marker on success.
# A stage that exceeds its time limit (--stage-timeout, or its share of a "budget") gets SIGTERM, then SIGKILL
# 30 s (budget: 10 s) later, and is marked RUN/stages/NAME.cut. The run then stops, except in budget mode,
# where cut and failed (RUN/stages/NAME.failed) stages are recorded and the run goes on to the report.
run_stage() {
  local name="$1"
  shift
  if stage_done "$name"; then
    note "skip   $name (done)"
    return 0
  fi
  local log="$run/logs/$name.log" start end rc=0 limit grace=30
  limit="$(stage_limit "$name")"
  [ -n "$budget_deadline" ] && grace=10
  start="$(date +%s)"
  note "start  $name (log: ${log#"$root/"})"
  {
    echo "# $(utc_now) stage $name"
    printf '# command:'
    printf ' %q' "$@"
    echo
  } >>"$log"
  current_stage="$name"
  if [ -n "$limit" ] && [ "$limit" != 0 ]; then
    timeout --signal=TERM --kill-after="$grace" "$limit" "$@" >>"$log" 2>&1 || rc=$?
  else
    "$@" >>"$log" 2>&1 || rc=$?
  fi
  current_stage=""
  end="$(date +%s)"
  if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ -n "$limit" ]; }; then
    echo "# $(utc_now) cut after ${limit}s" >>"$log"
    printf '{"stage": "%s", "limit_s": %s, "seconds": %s}\n' "$name" "$limit" "$((end - start))" >"$run/stages/$name.cut"
    note "cut    $name after $((end - start)) s (time limit ${limit} s)"
    [ "$keep_going" = 1 ] && return 0
    die "stage '$name' was cut at its time limit; see ${log#"$root/"}"
  fi
  if [ "$rc" != 0 ]; then
    echo "---- last lines of ${log#"$root/"} ----" >&2
    tail -n 15 "$log" >&2
    echo "----" >&2
    if [ "$keep_going" = 1 ]; then
      printf '{"stage": "%s", "exit": %s, "seconds": %s}\n' "$name" "$rc" "$((end - start))" >"$run/stages/$name.failed"
      note "FAILED $name (exit $rc); continuing so that the report arrives"
      return 0
    fi
    die "stage '$name' failed (exit $rc); see ${log#"$root/"}"
  fi
  rm -f "$run/stages/$name.failed" "$run/stages/$name.cut"
  local marker="$run/stages/$name.done"
  "$python_bin" - "$marker" "$name" "$start" "$end" "$@" <<'PY'
import json, os, sys, datetime
marker, name, start, end, *command = sys.argv[1:]
iso = lambda t: datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
record = {"stage": name, "started_utc": iso(start), "finished_utc": iso(end),
          "seconds": int(end) - int(start), "command": command}
json.dump(record, open(marker + ".tmp", "w"), indent=2)
os.replace(marker + ".tmp", marker)
PY
  note "done   $name in $((end - start)) s"
}

# One config file per stage invocation: the stage's section deep-merged with the model's own overrides.
stage_config() {
  local file="$run/configs/$1.json"
  shift
  expconfig stage "$run/experiment.json" "$file" "$@"
  echo "$file"
}

stage_simulate() {
  local name
  for name in $(cfg_keys datasets); do
    run_stage "simulate-$name" "$orbitlaw_bin" simulate --config "$(stage_config "simulate-$name" "datasets.$name")" \
      --out "$run/data/$name.h5"
  done
}

stage_train() {
  local kind seed stage data dir resume val=() seed_set
  data="$(cfg inputs.train train)"
  [ -n "$(cfg inputs.val "")" ] && val=(--val "$run/data/$(cfg inputs.val).h5")
  for kind in $(cfg_keys models); do
    for seed in $(model_seeds "$kind"); do
      stage="train-$kind$(seed_name "$seed")"
      dir="$run/models/$kind$(seed_path "$seed")"
      mkdir -p "$dir"
      # The seed goes into the stage's config file, so configs/<stage>.json says which seed trained the model.
      seed_set=()
      [ "$seed_count" -gt 1 ] && seed_set=(--set "seed=$seed")
      resume=()
      # An interrupted training left a checkpoint but no marker: continue it instead of starting over.
      if ! stage_done "$stage" && [ -f "$dir/checkpoint.pt" ]; then
        note "resume $stage from $dir/checkpoint.pt"
        resume=(--resume)
      fi
      local time_key time_set=()
      time_key="$(cfg budget.train_time_key "")"
      if [ -n "$budget_deadline" ] && [ -n "$time_key" ]; then
        # Stop on its own a little before the hard limit, so the last checkpoint is written cleanly.
        time_set=(--set "$time_key=$(awk -v s="$(stage_limit "$stage")" 'BEGIN { printf "%.3f", s * 0.9 / 60 }')")
      fi
      run_stage "$stage" "$orbitlaw_bin" train \
        --config "$(stage_config "$stage" train "models.$kind.train" "${seed_set[@]}")" \
        --data "$run/data/$data.h5" "${val[@]}" --out "$dir" "${resume[@]}" "${time_set[@]}"
    done
  done
}

stage_eval() {
  local kind seed stage dir data
  data="$(cfg inputs.eval "$(cfg inputs.train train)")"
  for kind in $(cfg_keys models); do
    for seed in $(model_seeds "$kind"); do
      stage="eval-$kind$(seed_name "$seed")"
      dir="$run/models/$kind$(seed_path "$seed")"
      run_stage "$stage" "$orbitlaw_bin" eval --config "$(stage_config "$stage" eval "models.$kind.eval")" \
        --checkpoint "$dir/checkpoint.pt" --data "$run/data/$data.h5" --out "$dir/eval.json"
    done
  done
}

# Every seed's probe uses the same probe config (split, fine-tuning and law-search seeds): the seed-to-seed
# spread is that of training. The label, which compare reports as the model, is the folder below probe/.
stage_probe() {
  local kind seed stage sub data
  data="$(cfg inputs.probe probe)"
  for kind in $(cfg_keys models); do
    for seed in $(model_seeds "$kind"); do
      stage="probe-$kind$(seed_name "$seed")"
      sub="$kind$(seed_path "$seed")"
      local time_key time_set=()
      time_key="$(cfg budget.probe_time_key "")"
      if [ -n "$budget_deadline" ] && [ -n "$time_key" ]; then
        # Law searches stop themselves inside the limit and keep their best laws, so sr.json always arrives.
        time_set=(--set "$time_key=$(awk -v s="$(stage_limit "$stage")" 'BEGIN { printf "%.1f", s * 0.85 }')")
      fi
      run_stage "$stage" "$orbitlaw_bin" probe --config "$(stage_config "$stage" probe "models.$kind.probe")" \
        --set "label=$sub" --checkpoint "$run/models/$sub/checkpoint.pt" --data "$run/data/$data.h5" \
        --out "$run/probe/$sub" "${time_set[@]}"
    done
  done
}

stage_sr() {
  local kind seed stage sub
  for kind in $(cfg_keys models); do
    for seed in $(model_seeds "$kind"); do
      stage="sr-$kind$(seed_name "$seed")"
      sub="$kind$(seed_path "$seed")"
      run_stage "$stage" "$orbitlaw_bin" sr --config "$(stage_config "$stage" sr)" \
        --data "$run/probe/$sub/predictions.h5" --out "$run/probe/$sub/sr.json"
    done
  done
}

stage_compare() {
  local kind seed dirs=()
  for kind in $(cfg_keys models); do
    for seed in $(model_seeds "$kind"); do dirs+=("$run/probe/$kind$(seed_path "$seed")"); done
  done
  mkdir -p "$run/compare"
  run_stage compare "$orbitlaw_bin" compare --config "$(stage_config compare compare)" "${dirs[@]}" \
    --out "$run/compare"
}

stage_report() {
  run_stage report "$python_bin" "$root/experiments/report.py" --run "$run"
}

# The closing lines: where the report is, and the side-by-side table of recovered laws against Newton.
print_summary() {
  echo
  local unfinished
  unfinished="$(cd "$run/stages" && ls -- *.cut *.failed 2>/dev/null | tr '\n' ' ' || true)"
  if [ -n "$unfinished" ]; then
    note "experiment '$experiment' finished with stages cut or failed ($unfinished): $run"
  else
    note "experiment '$experiment' complete: $run"
  fi
  if [ -f "$run/report/report.html" ]; then
    echo "report: $run/report/report.html"
    echo "        $run/report/report.md"
  fi
  if [ -f "$run/report/laws.md" ]; then
    echo
    cat "$run/report/laws.md"
  fi
}

on_interrupt() {
  trap - INT TERM
  if [ -n "${current_stage:-}" ]; then
    echo >&2
    echo "experiment: interrupted during stage '$current_stage'; rerun the same command to resume" >&2
  fi
  exit 130
}

# --- entry point -----------------------------------------------------------------------------------------

experiment_main() {
  experiment="$1"
  shift
  experiment_start="$(date +%s)"
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  invocation="bash experiments/$experiment.sh $*"
  local smoke=0 out="" overrides=() config="$root/experiments/configs/$experiment.json"
  fresh=0
  stage_timeout=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --smoke) smoke=1 ;;
      --out)
        [ $# -ge 2 ] || die "--out needs a folder"
        out="$2"
        shift
        ;;
      --out=*) out="${1#--out=}" ;;
      --set)
        [ $# -ge 2 ] || die "--set needs key=value"
        overrides+=(--set "$2")
        shift
        ;;
      --set=*) overrides+=(--set "${1#--set=}") ;;
      --seeds | --seeds=*)
        local seeds
        if [ "$1" = --seeds ]; then
          [ $# -ge 2 ] || die "--seeds needs a number"
          seeds="$2"
          shift
        else
          seeds="${1#--seeds=}"
        fi
        [[ "$seeds" =~ ^[1-9][0-9]*$ ]] || die "--seeds needs a whole number >= 1, not '$seeds'"
        overrides+=(--set "seeds=$seeds")
        ;;
      --fresh) fresh=1 ;;
      --stage-timeout)
        [ $# -ge 2 ] || die "--stage-timeout needs seconds"
        stage_timeout="$2"
        shift
        ;;
      -h | --help)
        experiment_usage "$experiment"
        exit 0
        ;;
      *) die "unknown option '$1' (see --help)" ;;
    esac
    shift
  done
  if [ -n "$stage_timeout" ] && ! [[ "$stage_timeout" =~ ^[0-9]+$ ]]; then
    die "--stage-timeout needs a whole number of seconds, not '$stage_timeout'"
  fi
  [ -f "$config" ] || die "no config for experiment '$experiment' at $config"
  if [ -z "$out" ]; then
    out="$root/runs/$experiment"
    [ "$smoke" = 1 ] && out="$out-smoke"
  fi
  mkdir -p "$(dirname "$out")"
  run="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

  ensure_python
  local resolved
  resolved="$(mktemp)"
  local smoke_flag=()
  [ "$smoke" = 1 ] && smoke_flag=(--smoke)
  expconfig resolve "$config" "$resolved" "${smoke_flag[@]}" "${overrides[@]}" || {
    rm -f "$resolved"
    exit 1
  }
  ensure_orbitlaw
  prepare_run_folder "$resolved"
  rm -f "$resolved"
  seed_count="$(cfg seeds 1)"
  trap on_interrupt INT TERM
  plan_budget

  local stage
  for stage in $(cfg stages); do
    "stage_$stage"
  done
  print_summary
  # Budget mode goes on past a failed stage so that the report arrives, but the run still did not succeed.
  if compgen -G "$run/stages/*.failed" >/dev/null; then
    echo "experiment: error: stages failed: $(cd "$run/stages" && ls -- *.failed | tr '\n' ' ')" >&2
    return 1
  fi
}
