#!/usr/bin/env bash
# End-to-end tests of the experiment scripts on the real orbitlaw binary, at --smoke size.
#
# usage: test_pipeline.sh quickstart|interrupt|jobs|shards|vafa-slice|paper|gpu-study|locality|learned-gravity|attention-axis ORBITLAW PYTHON
#
#   quickstart  quickstart --smoke into a temp folder; the report exists, is complete and quotes this run; every
#               model's eval measured the behaviour, and the script ends by printing the verdict tables
#   interrupt   quickstart --smoke killed after the first checkpoint of training, then rerun: completed
#               stages are not redone, training resumes, and the report is complete
#   jobs        quickstart --smoke --jobs 2 (stages of one family side by side, one thread each) gives the
#               numbers and report of a one-job run
#   shards      quickstart --smoke and vafa-slice --smoke --seeds 2 as two shards (--shard 0/2, 1/2) through
#               GNU parallel, merged by experiments/merge.py: the numbers and report of the single run (one
#               thread each)
#   vafa-slice  vafa-slice --smoke: the token head's pipeline with force probes, law searches and compare
#   paper       paper --smoke (every step of the published-scale experiment, tiny)
#   gpu-study   gpu-study --smoke on the CPU (the one-call GPU study at tiny size)
#   locality    locality --smoke: seven attention kinds, an untrained control and a k = 2.5 universe, probed
#               for the acceleration, with the probe controls (raw input, 1/r^2.5 labels)
#   attention-axis   attention-axis --smoke on five of its models: both regimes, the mass transplant where the
#               star's mass varies
#   learned-gravity  learned-gravity --smoke: every model's eval measured its own predictions' behaviour
#               (ladder, transplant, verdict, law search on a_impl) and wrote its predictions file; the report's
#               answer opens with the behavioural tables
#
# Any failure, including a stage whose command line does not match the driver's, fails the test.
set -euo pipefail
scenario="$1"
export ORBITLAW_BIN="$2" ORBITLAW_PYTHON="$3"
python="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run="$tmp/run"
export CI=true  # progress output off

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs an experiment; on failure prints its output and fails. One stage at a time unless --jobs is given: CTest
# already runs one test per core (the driver's default, a job per core, is tested in test_driver.sh's jobs).
experiment() {
  local name="$1"
  shift
  local rc=0 jobs=(--jobs 1)
  [[ " $* " == *" --jobs "* ]] && jobs=()
  bash "$root/experiments/$name.sh" --smoke --out "$run" "${jobs[@]}" "$@" >"$tmp/out.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] && return 0
  cat "$tmp/out.txt"
  fail "$name --smoke failed (exit $rc)"
}

check_report() {
  "$python" "$here/check_report.py" "$run" --since "$1" "${@:2}" || fail "report check"
}

start="$(date +%s)"
case "$scenario" in
  quickstart)
    experiment quickstart
    check_report "$start" --require training_curves.png --require trajectory_error.png --no-missing
    grep -q "report: $run/report/report.html" "$tmp/out.txt" || fail "the script did not print where the report is"
    "$python" - "$run" "$tmp/out.txt" <<'PY' || fail "quickstart behaviour"
import glob, json, os, sys
run, out = sys.argv[1], open(sys.argv[2]).read()
evals = {p.split(os.sep)[-2]: json.load(open(p))["behaviour"]
         for p in glob.glob(os.path.join(run, "models", "*", "eval.json"))}
assert sorted(evals) == ["lssar", "softmax", "untrained"], sorted(evals)
for name, b in evals.items():
    assert b["available"] and b["law_search"]["galaxies"], (name, b)
    # Smoke models learn nothing: none may pass the verdict.
    assert not b["verdict"]["learned"] and b["verdict"]["failed"], (name, b["verdict"])
    # The printed answer quotes this run's numbers: one line per model with its 1-step ratio to constant
    # acceleration.
    one = b["one_step_error_au"]
    ratio = f"{one['model']['median'] / one['constant_acceleration']['median']:.3g}"
    line = next((l for l in out.splitlines() if f"[{name}]: no verdict, passes in 0 of 1 seed" in l), None)
    assert line and f"1-step median error {ratio} (one seed)" in line, (name, ratio, line)
assert "1 seed per model: an anecdote, not a verdict" in out
# The answer comes last, then where the report is.
assert out.rstrip().splitlines()[-2].startswith("report: "), out[-400:]
PY
    ;;
  jobs)
    export OMP_NUM_THREADS=1  # the same arithmetic in both runs: results must then be bit for bit the same
    experiment quickstart --jobs 1
    # Each run in the folder it was made in: the records beside the results name it (eval.json's paths).
    one="$run" run="$tmp/two"
    experiment quickstart --jobs 2
    grep -q "sweep  " "$tmp/out.txt" || fail "no sweep progress with --jobs 2"
    "$python" "$here/same_results.py" "$one" "$run" || fail "--jobs 2 changed the results"
    ;;
  shards)
    export OMP_NUM_THREADS=1  # the same arithmetic in every run: results must then be bit for bit the same
    command -v parallel >/dev/null || fail "GNU parallel is not installed; run 'bash scripts/setup.sh'"
    # quickstart: eval's behavioural test; vafa-slice at two seeds: probes, law searches and compare.
    for sweep in "quickstart" "vafa-slice --seeds 2"; do
      read -r name extra <<<"$sweep"
      rm -rf "$run" "$tmp"/shard-* "$tmp/merged"
      # shellcheck disable=SC2086  # $extra is options, split on purpose
      experiment $name $extra
      parallel --will-cite --halt now,fail=1 bash "$root/experiments/$name.sh" --smoke $extra --shard {}/2 \
        --out "$tmp/shard-{}" '>' "$tmp/shard-{}.txt" '2>&1' ::: 0 1 || { cat "$tmp"/shard-*.txt; fail "a shard of $name failed"; }
      "$python" "$root/experiments/merge.py" --out "$tmp/merged" "$tmp/shard-0" "$tmp/shard-1" >"$tmp/merge.txt" 2>&1 ||
        { cat "$tmp/merge.txt"; fail "merging $name failed"; }
      "$python" "$here/same_results.py" "$run" "$tmp/merged" || fail "the merged shards of $name differ from the single run"
      grep -q "^Merged from 2 shards" "$tmp/merged/report/report.md" || fail "the report does not list the shards"
    done
    ;;
  vafa-slice)
    experiment vafa-slice
    check_report "$start" --require training_curves.png --require trajectory_error.png \
      --require force_scatter_softmax.png --require force_scatter_lssar.png
    grep -q "Recovered force laws against Newton" "$tmp/out.txt" || fail "the script did not print the table of recovered laws"
    # An sr.json edited after the probe run is not shown as the recovered law: the report checks it against
    # the checksum of the stage's completion record and says which file fails.
    echo " " >>"$run/probe/softmax/sr.json"
    "$python" "$root/experiments/report.py" --run "$run" >/dev/null || fail "report after the edit"
    "$python" - "$run/report/report.json" <<'PY' || fail "the report did not name the edited sr.json"
import json, sys
missing = json.load(open(sys.argv[1]))["missing"]
assert any("probe/softmax/sr.json does not match the checksum" in m["why"] for m in missing), missing
assert not any("lssar" in m["what"] for m in missing), missing
PY
    ;;
  interrupt)
    # Long enough a training (checkpoints every 5 steps) that the interruption lands in its middle.
    longer=(--set train.train.max_steps=60 --set train.train.checkpoint_interval=5)
    setsid bash "$root/experiments/quickstart.sh" --smoke --out "$run" "${longer[@]}" >"$tmp/first.txt" 2>&1 &
    pid=$!
    for _ in $(seq 1200); do
      [ -f "$run/models/softmax/checkpoint.pt" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if [ ! -f "$run/models/softmax/checkpoint.pt" ]; then
      wait "$pid" || true
      cat "$tmp/first.txt"
      fail "training wrote no checkpoint within 120 s"
    fi
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" && echo "note: training finished before the interruption landed"
    interrupted=0
    [ -f "$run/stages/train-softmax.done" ] || interrupted=1
    before="$(stat -c %Y "$run"/stages/simulate-*.done | tr '\n' ' ')"
    experiment quickstart "${longer[@]}"
    grep -q "skip   simulate-train" "$tmp/out.txt" || fail "rerun did not skip the completed simulation"
    [ "$before" = "$(stat -c %Y "$run"/stages/simulate-*.done | tr '\n' ' ')" ] || fail "simulation markers rewritten"
    if [ "$interrupted" = 1 ]; then
      grep -q "resume train-softmax" "$tmp/out.txt" || fail "rerun did not resume the interrupted training"
    fi
    "$python" - "$run/models/softmax/metrics.jsonl" <<'PY' || fail "resumed metrics"
import json, sys
steps = [json.loads(line)["step"] for line in open(sys.argv[1]) if line.strip()]
assert steps == sorted(set(steps)), "steps repeat or go backwards after the resume"
assert steps[-1] == 60, f"training ended at step {steps[-1]}, not 60"
PY
    check_report "$start"
    ;;
  paper)
    experiment paper
    check_report "$start" --require training_curves.png
    ;;
  locality)
    experiment locality
    check_report "$start" --require training_curves.png
    # Every model probed for the acceleration, and compared against Newton's law for it.
    "$python" - "$run/compare/compare.json" <<'PY' || fail "locality compare"
import json, sys
data = json.load(open(sys.argv[1]))
assert data["newton"]["target"] == "acceleration", data["newton"]
assert data["newton"]["exponents"] == [0, 1, -2], data["newton"]
models = {row["model"] for row in data["rows"]}
assert len(models) == 10, models
# The k = 2.5 model is probed on its own universe's data: the labels' own law (read by the model-free
# knn_log oracle) falls off faster than Newton's there, and not in the Newton data.
e = {row["model"]: row["exponents"]["e"][0] for row in data["rows"] if row["probe"] == "knn_log"}
assert e["window-2-k25"] < -2.3 < e["window-2"], e
# The label control: window 2's probes fitted to 1/r^2.5 labels in the 1/r^2 universe; the oracle reads their law.
assert e["window-2-labels-k25"] < -2.3, e
# The raw-input controls ran on every model, the vector one with its law search.
for probe in ("raw_input", "raw_input_vector"):
    assert {row["model"] for row in data["rows"] if row["probe"] == probe} == models, (probe, data["rows"])
assert any(row["probe"] == "raw_input_vector" and row.get("galaxies") for row in data["rows"]), data["rows"]
# Liu et al.'s probe of the acceleration vector ran on every model and its magnitudes went to the law search.
assert {row["model"] for row in data["rows"] if row["probe"] == "linear_vector"} == models, data["rows"]
PY
    "$python" - "$run/probe/window-2/probe.json" <<'PY' || fail "locality vector probe"
import json, sys
vector = json.load(open(sys.argv[1]))["probes"]["linear_vector"]
assert len(vector["test_component_r2_unused_for_selection"]) == 2, vector
assert len(vector["validation_r2"]) == 4, vector  # embedding, two blocks, final LayerNorm
PY
    ;;
  learned-gravity)
    experiment learned-gravity
    "$python" - "$run" <<'PY' || fail "learned-gravity behaviour"
import glob, json, os, sys
run = sys.argv[1]
evals = sorted(glob.glob(os.path.join(run, "models", "*", "eval.json")))
assert len(evals) == 9, evals
for path in evals:
    b = json.load(open(path))["behaviour"]
    assert b["available"], (path, b)
    assert set(b["one_step_error_au"]) == {"model", "previous_position", "constant_velocity",
                                           "constant_acceleration", "newton_step"}, b
    assert b["transplant"]["rows"] == 16, b["transplant"]
    assert len(b["law_search"]["galaxies"]) == 1, b["law_search"]
    assert os.path.getsize(os.path.join(os.path.dirname(path), "eval.predictions.h5")) > 0
    # Smoke models learn nothing: none may pass the verdict, the untrained controls least of all.
    assert not b["verdict"]["learned"], (path, b["verdict"])
    # Where the star's mass varies, the verdict's s is the mass transplant's.
    varies = os.path.basename(os.path.dirname(path)).endswith("-mass")
    assert (b["mass_transplant"] is not None) == varies, (path, b["mass_transplant"])
report = open(os.path.join(run, "report", "report.md")).read()
# The report opens with the experiment's closing lines and a figure: check_report.py checks that for every
# scenario; here, that this experiment's opening is its behavioural answer.
assert report.index("## Answer\n") < report.index("- control: window 2 after one training step") < report.index("![")
PY
    ;;
  attention-axis)
    # A kind of each attention family and both regimes; every kind is a config entry like these.
    experiment attention-axis --models window-48,ssmax,sigmoid,lssar-p3-mass,untrained-mass
    "$python" - "$run" <<'PY' || fail "attention-axis behaviour"
import glob, json, os, sys
run = sys.argv[1]
evals = sorted(glob.glob(os.path.join(run, "models", "*", "eval.json")))
assert [os.path.basename(os.path.dirname(p)) for p in evals] == [
    "lssar-p3-mass", "sigmoid", "ssmax", "untrained-mass", "window-48"], evals
for path in evals:
    b = json.load(open(path))["behaviour"]
    assert b["available"] and not b["verdict"]["learned"], (path, b["verdict"])
    varies = os.path.basename(os.path.dirname(path)).endswith("-mass")
    assert (b["mass_transplant"] is not None) == varies, (path, b["mass_transplant"])
# The mass regime's datasets draw the star's mass log-uniform over 0.25-4 Msun.
config = json.load(open(os.path.join(run, "experiment.json")))["datasets"]["train-mass"]
assert (config["star_mass_min"], config["star_mass_max"], config["star_mass_log_uniform"]) == (0.25, 4.0, True)
PY
    ;;
  gpu-study)
    export OUT="$tmp/out"
    experiment gpu-study
    [ -f "$run/budget.json" ] || fail "gpu-study wrote no budget plan"
    if ls "$run"/stages/*.cut "$run"/stages/*.failed >/dev/null 2>&1; then
      fail "gpu-study --smoke had cut or failed stages: $(ls "$run"/stages/*.cut "$run"/stages/*.failed 2>/dev/null)"
    fi
    check_report "$start" --require training_curves.png
    for f in report.html report.md results.json logs.txt compare.md laws.md; do
      [ -s "$OUT/gpu-study/$f" ] || fail "packed results lack $f"
      [ "$(stat -c %s "$OUT/gpu-study/$f")" -le $((16 * 1024 * 1024)) ] || fail "$f is over 16 MB"
    done
    ;;
  *) fail "unknown scenario '$scenario'" ;;
esac
echo "PASS: $scenario (smoke) in $(($(date +%s) - start)) s"
