#!/usr/bin/env bash
# Tests of the run-folder driver (experiments/lib/driver.py) and the report, with a test double in place of the
# orbitlaw binary (fake_orbitlaw.py) so that they check the driver's own behaviour in seconds, whatever state
# the real stages are in. The same behaviours on the real binary are checked by test_pipeline.sh.
# The experiment they drive is vafa-slice: every stage kind (probe and compare included) and two models.
#
# usage: test_driver.sh full|resume|errors|budget|seeds|orphans|outputs|jobs|shards PYTHON
set -euo pipefail
scenario="$1"
python="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The test double behind an executable path, as ORBITLAW_BIN requires.
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$python" "$here/fake_orbitlaw.py" >"$tmp/orbitlaw"
chmod +x "$tmp/orbitlaw"
export ORBITLAW_BIN="$tmp/orbitlaw" ORBITLAW_PYTHON="$python" FAKE_ORBITLAW_CALLS="$tmp/calls"
run="$tmp/run"

experiment() { bash "$root/experiments/vafa-slice.sh" --smoke --out "$run" "$@"; }

case "$scenario" in
  full)
    start="$(date +%s)"
    experiment >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "experiment --smoke on the test double failed"; }
    "$python" "$here/check_report.py" "$run" --since "$start" --no-missing \
      --require training_curves.png --require trajectory_error.png --require attention_locality.png \
      --require force_scatter_softmax.png --require force_scatter_lssar.png \
      --require pareto_softmax.png --require pareto_lssar.png || fail "report check"
    grep -q "report: $run/report/report.html" "$tmp/out.txt" || fail "the script did not print where the report is"
    grep -q "Recovered force laws against Newton" "$tmp/out.txt" || fail "the script did not print the table of recovered laws"
    for f in experiment.json provenance.json configs/train-lssar.json logs/train-lssar.log; do
      [ -s "$run/$f" ] || fail "run folder lacks $f"
    done
    "$python" - "$run" <<'PY' || fail "provenance"
import json, sys
p = json.load(open(sys.argv[1] + "/provenance.json"))
assert p["seed"] == 1 and p["smoke"] is True and len(p["git_revision"]) >= 7, p
assert p["config"]["experiment"] == "vafa-slice"
assert json.load(open(sys.argv[1] + "/configs/train-lssar.json"))["model"]["attention"] == "lssar"
PY
    # The check bites: a report that does not quote the run's own numbers is rejected.
    cp "$run/models/softmax/metrics.jsonl" "$tmp/metrics.keep"
    "$python" - "$run/models/softmax/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
# 1.234: more than the validation loss beside it can differ by (5% of a loss below 7), so the altered
# number cannot happen to equal another column of the same row.
rows[-1]["train_loss"] += 1.234
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in rows))
PY
    "$python" "$here/check_report.py" "$run" --since "$start" >/dev/null && fail "check_report accepted a stale report"
    cp "$tmp/metrics.keep" "$run/models/softmax/metrics.jsonl"
    # A rerun does nothing but print the summary again.
    : >"$tmp/calls"
    experiment >"$tmp/out2.txt" 2>&1 || fail "rerun of a complete run failed"
    [ ! -s "$tmp/calls" ] || fail "rerun of a complete run called orbitlaw again: $(cat "$tmp/calls")"
    [ "$(grep -c 'skip' "$tmp/out2.txt")" -ge 10 ] || fail "rerun did not report skipped stages"
    ;;

  resume)
    # Interrupt during training, after the first checkpoint of the first model; rerun; check nothing completed
    # is redone and training continues from its checkpoint.
    # One job: lssar's training has not started when softmax's is interrupted (the jobs case covers both).
    FAKE_STEPS=8 FAKE_STEP_SECONDS=0.5 setsid bash "$root/experiments/vafa-slice.sh" --smoke --out "$run" --jobs 1 \
      >"$tmp/first.txt" 2>&1 &
    pid=$!
    for _ in $(seq 300); do
      [ -f "$run/models/softmax/checkpoint.pt" ] && break
      sleep 0.1
    done
    [ -f "$run/models/softmax/checkpoint.pt" ] || fail "no checkpoint appeared"
    kill -TERM -- "-$pid"
    wait "$pid" && fail "the interrupted run exited 0"
    grep -q "interrupted during stage 'train-softmax'" "$tmp/first.txt" || { cat "$tmp/first.txt"; fail "no interruption message"; }
    [ ! -f "$run/stages/train-softmax.done" ] || fail "interrupted training was marked done"
    [ -f "$run/stages/simulate-train.done" ] || fail "simulate did not complete before training"
    before="$(stat -c %Y "$run"/stages/simulate-*.done | tr '\n' ' ')"
    : >"$tmp/calls"
    FAKE_STEPS=8 experiment --jobs 1 >"$tmp/second.txt" 2>&1 || { cat "$tmp/second.txt"; fail "rerun failed"; }
    ! grep -q '^simulate' "$tmp/calls" || fail "rerun simulated again"
    grep -q '^train .*models/softmax --resume$' "$tmp/calls" || fail "rerun did not resume softmax: $(cat "$tmp/calls")"
    grep -q '^train .*models/lssar$' "$tmp/calls" || fail "rerun did not train lssar from scratch"
    [ "$before" = "$(stat -c %Y "$run"/stages/simulate-*.done | tr '\n' ' ')" ] || fail "simulate markers rewritten"
    [ "$(tail -n1 "$run/models/softmax/metrics.jsonl" | "$python" -c 'import json,sys;print(json.load(sys.stdin)["step"])')" = 8 ] ||
      fail "resumed training did not reach its last step"
    ;;

  errors)
    experiment >/dev/null 2>&1 || fail "setup run failed"
    out="$(experiment --set seed=2 2>&1)" && fail "a run folder with another config was reused"
    grep -q "was made with a different config" <<<"$out" || fail "unclear message for a config mismatch: $out"
    out="$(bash "$root/experiments/vafa-slice.sh" --bogus 2>&1)" && fail "unknown option accepted"
    [ "$(wc -l <<<"$out")" = 1 ] && grep -q "unknown option '--bogus'" <<<"$out" || fail "unknown option: $out"
    out="$(bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/subset" --models bogus 2>&1)" && fail "--models bogus accepted"
    [ "$(wc -l <<<"$out")" = 1 ] && grep -q "names 'bogus', which is not a model of this experiment" <<<"$out" ||
      fail "--models bogus: $out"
    # Values are what they say: an empty --out, NaN, a duplicate key and a --set into the smoke overlay (which
    # would do nothing, unrecorded) are one-line errors, and nothing runs.
    for bad in "--out=" "--set train.train.lr=NaN" '--set train={"a":1,"a":2}' "--set smoke.train.train.lr=0.1"; do
      out="$(bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/values" $bad 2>&1)" && fail "accepted: $bad"
      [ "$(wc -l <<<"$out")" = 1 ] && grep -q "error: " <<<"$out" || fail "$bad: $out"
      [ ! -e "$tmp/values" ] && [ ! -e "$root/runs/vafa-slice-smoke" ] || fail "$bad made a run folder"
    done
    # --models keeps only the named models: their stages run, the others' never start.
    : >"$tmp/calls"
    bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/subset" --models lssar >/dev/null 2>&1 || fail "--models lssar failed"
    [ -e "$tmp/subset/stages/probe-lssar.done" ] && [ -z "$(ls "$tmp/subset/stages" | grep softmax)" ] &&
      ! grep -q softmax "$tmp/calls" || fail "--models lssar ran other models: $(ls "$tmp/subset/stages")"
    mkdir -p "$tmp/notarun" && touch "$tmp/notarun/precious"
    bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/notarun" --fresh >/dev/null 2>&1 && fail "--fresh on a foreign folder"
    [ -f "$tmp/notarun/precious" ] || fail "--fresh deleted a folder that is not a run folder"
    # A failing stage stops the run, names the stage, and leaves no marker; later stages do not run.
    out="$(FAKE_FAIL=eval experiment --fresh 2>&1)" && fail "a failing stage did not fail the run"
    grep -q "stage 'eval-softmax' failed (exit 1)" <<<"$out" || fail "unclear message for a failed stage: $out"
    grep -q "fake failure of 'eval'" <<<"$out" || fail "the failed stage's log tail was not shown"
    [ ! -e "$run/stages/eval-softmax.done" ] && [ ! -e "$run/stages/probe-softmax.done" ] || fail "markers after a failure"
    # A stage over --stage-timeout is stopped, marked cut, and named with its limit in one line.
    out="$(FAKE_STEPS=100 FAKE_STEP_SECONDS=0.2 experiment --fresh --stage-timeout 2 2>&1)" && fail "a cut stage did not fail the run"
    [ "$(grep -c 'error' <<<"$out")" = 1 ] && grep -q "error: stage 'train-softmax' was cut at its time limit of 2 s" <<<"$out" ||
      fail "unclear message for a cut stage: $out"
    [ -f "$run/stages/train-softmax.cut" ] && [ ! -e "$run/stages/train-softmax.done" ] || fail "cut stage not marked cut"
    # A missing input is reported as missing, never drawn from anything else.
    experiment >/dev/null 2>&1 || fail "completing the run failed"
    rm "$run/models/lssar/eval.json" "$run/probe/lssar/sr.json"
    # The report quotes G from compare.json (the run's own output), not from a copy of its own.
    "$python" - "$run/compare/compare.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
data["newton"]["G"] = 1.5
json.dump(data, open(sys.argv[1], "w"))
PY
    "$python" "$root/experiments/report.py" --run "$run" >/dev/null || fail "report.py on a run with missing inputs"
    grep -q "C = G ≈ 1.5)" "$run/report/laws.md" && grep -q 'Target law: the force `C\*m1\*m2/r^2`, C = G ≈ 1.5\.' \
      "$run/report/report.md" || fail "the report does not quote G from compare.json"
    grep -q "missing: evaluation of lssar" "$run/report/report.md" || fail "missing eval not reported"
    grep -q "missing: Pareto fronts of lssar" "$run/report/report.md" || fail "missing SR front not reported"
    [ ! -e "$run/report/pareto_lssar.png" ] || fail "a Pareto plot was drawn without its input"
    # Without matplotlib (gpu-study's bare machine) the report still arrives, its plots listed as missing.
    mkdir -p "$tmp/nompl/matplotlib"
    echo 'raise ImportError("no matplotlib here")' >"$tmp/nompl/matplotlib/__init__.py"
    PYTHONPATH="$tmp/nompl" "$python" "$root/experiments/report.py" --run "$run" >/dev/null || fail "report without matplotlib"
    grep -q "missing: training curves\*\* — cannot plot on this machine" "$run/report/report.md" ||
      fail "plots not listed as missing without matplotlib"
    ! compgen -G "$run/report/*.png" >/dev/null || fail "PNG files left from an earlier report"
    grep -q "| softmax | " "$run/report/report.md" || fail "tables missing from the report without matplotlib"
    # A loss that is not a number is refused in one line naming the file and the key, never printed as a loss.
    sed -i '$ s/"train_loss": [^,}]*/"train_loss": "low"/' "$run/models/softmax/metrics.jsonl"
    out="$("$python" "$root/experiments/report.py" --run "$run" 2>&1)" && fail "a non-numeric loss was reported"
    [ "$(wc -l <<<"$out")" = 1 ] && grep -q "metrics.jsonl' line [0-9]*: 'train_loss' is not a number (\"low\")" <<<"$out" ||
      fail "unclear message for a non-numeric loss: $out"
    ;;

  jobs)
    # --jobs 2: the two models' trainings (and evaluations, probes) run side by side, each stage on its share
    # of the cores; the run's outputs equal a one-job run's; an interrupted sweep resumes.
    unset OMP_NUM_THREADS
    export FAKE_RECORD_THREADS=1
    FAKE_STEPS=6 FAKE_STEP_SECONDS=0.4 experiment --jobs 2 >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "--jobs 2 failed"; }
    "$python" - "$run/stages" <<'PY' || fail "the trainings did not run side by side"
import json, sys
a = json.load(open(sys.argv[1] + "/train-softmax.done"))
b = json.load(open(sys.argv[1] + "/train-lssar.done"))
assert b["started_utc"] < a["finished_utc"] and a["started_utc"] < b["finished_utc"], (a, b)
PY
    share=$(($(nproc) / 2)); [ "$share" -ge 1 ] || share=1
    [ "$(grep -c "^train .*# OMP_NUM_THREADS=$share$" "$tmp/calls")" = 2 ] || fail "stages not given their share of the cores: $(cat "$tmp/calls")"
    grep -q "sweep  [0-9]* of [0-9]* stages done, [0-9] running" "$tmp/out.txt" || fail "no progress for the whole sweep"
    # Every stage a one-job run has, and nothing else (the real binary's results: test_pipeline.sh jobs).
    FAKE_STEPS=6 bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/one" --jobs 1 >/dev/null 2>&1 || fail "one-job run failed"
    # Each stage's marker records the threads it was given, on which its last bits depend: its share with two
    # jobs, none (LibTorch's every core) with one.
    "$python" - "$run/stages/train-lssar.done" "$tmp/one/stages/train-lssar.done" "$share" "$(nproc)" <<'PY' ||
import json, sys
two, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert two["omp_num_threads"] == sys.argv[3] and one["omp_num_threads"] is None, (two, one)
assert two["cores"] == one["cores"] == int(sys.argv[4]), (two, one)
PY
      fail "the stage markers do not record the threads"
    # Without --jobs: one single-threaded stage per core (one stage, LibTorch's threads, on a 1-core machine).
    FAKE_STEPS=6 bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/default" >/dev/null 2>&1 || fail "default run failed"
    "$python" - "$tmp/default/stages/train-lssar.done" "$(nproc)" <<'PY' || fail "--jobs does not default to the cores"
import json, sys
marker, cores = json.load(open(sys.argv[1])), int(sys.argv[2])
assert marker["omp_num_threads"] == ("1" if cores > 1 else None), marker
PY
    [ "$(ls "$run/stages")" = "$(ls "$tmp/one/stages")" ] || fail "--jobs 2 ran other stages: $(ls "$run/stages")"
    # Killed during the side-by-side trainings, the rerun resumes both.
    rm -rf "$run"
    FAKE_STEPS=20 FAKE_STEP_SECONDS=0.2 setsid bash "$root/experiments/vafa-slice.sh" --smoke --out "$run" --jobs 2 \
      >"$tmp/first.txt" 2>&1 &
    pid=$!
    for _ in $(seq 300); do
      [ -f "$run/models/softmax/checkpoint.pt" ] && [ -f "$run/models/lssar/checkpoint.pt" ] && break
      sleep 0.1
    done
    kill -TERM -- "-$pid"
    wait "$pid" && fail "the interrupted sweep exited 0"
    grep -q "interrupted during stages 'train-softmax', 'train-lssar'" "$tmp/first.txt" || { cat "$tmp/first.txt"; fail "no interruption message naming both stages"; }
    FAKE_STEPS=20 experiment --jobs 2 >"$tmp/second.txt" 2>&1 || { cat "$tmp/second.txt"; fail "rerun failed"; }
    grep -q "resume train-softmax" "$tmp/second.txt" && grep -q "resume train-lssar" "$tmp/second.txt" ||
      fail "the rerun did not resume both trainings: $(cat "$tmp/second.txt")"
    out="$(experiment --jobs 0 2>&1)" && fail "--jobs 0 accepted"
    grep -q "jobs needs a whole number" <<<"$out" || fail "--jobs 0: $out"
    out="$(bash "$root/experiments/gpu-study.sh" --smoke --out "$tmp/gpu" --jobs 2 2>&1)" && fail "--jobs with a budget accepted"
    grep -q "applies to runs without a time budget" <<<"$out" && [ ! -e "$tmp/gpu" ] || fail "--jobs with a budget: $out"
    ;;

  shards)
    # --shard i/n through GNU parallel, then experiments/merge.py: the merged run's report and every result file
    # equal a single run's bit for bit (the test double's numbers are then a function of each stage's inputs).
    command -v parallel >/dev/null || fail "GNU parallel is not installed; run 'bash scripts/setup.sh'"
    export FAKE_DETERMINISTIC=1
    sweep() { bash "$root/experiments/vafa-slice.sh" --smoke --seeds 2 "$@"; }
    merge() { "$python" "$root/experiments/merge.py" "$@"; }
    sweep --out "$tmp/single" >"$tmp/single.txt" 2>&1 || { cat "$tmp/single.txt"; fail "the single run failed"; }
    : >"$tmp/calls"
    parallel --will-cite --halt now,fail=1 bash "$root/experiments/vafa-slice.sh" --smoke --seeds 2 --shard {}/2 \
      --out "$tmp/shard-{}" '>' "$tmp/shard-{}.txt" '2>&1' ::: 0 1 || { cat "$tmp"/shard-*.txt; fail "a shard failed"; }
    # Each shard ran its own (model, seed) pairs, the datasets they read, and neither compare nor the report.
    markers() {  # markers SHARD SEED: how many stage markers of that seed the shard holds
      local f n=0
      for f in "$tmp/shard-$1/stages/"*"-seed-$2.done"; do [ -e "$f" ] && n=$((n + 1)); done
      echo "$n"
    }
    [ "$(markers 0 1)/$(markers 0 2)/$(markers 1 1)/$(markers 1 2)" = 6/0/0/6 ] ||
      fail "the shards did not split the (model, seed) pairs: $(ls "$tmp"/shard-*/stages)"
    [ "$(grep -c '^simulate' "$tmp/calls")" = 6 ] && ! grep -q '^compare' "$tmp/calls" && [ ! -e "$tmp/shard-0/report" ] ||
      fail "the shards ran other stages: $(cut -d' ' -f1 "$tmp/calls" | sort | uniq -c)"
    grep -q "shard 1/2 of experiment 'vafa-slice' complete" "$tmp/shard-1.txt" || fail "no closing line for the shard"
    merge --out "$tmp/merged" "$tmp/shard-1" "$tmp/shard-0" >"$tmp/merge.txt" 2>&1 || { cat "$tmp/merge.txt"; fail "merge failed"; }
    "$python" "$here/same_results.py" "$tmp/single" "$tmp/merged" --bytes || fail "the merged run differs from the single run"
    grep -q "report: $tmp/merged/report/report.html" "$tmp/merge.txt" || fail "the merge did not print where the report is"
    # The provenance is the merge's and lists the shards.
    grep -q "^Merged from 2 shards" "$tmp/merged/report/report.md" &&
      grep -q "^| 0/2 | $tmp/shard-0 | " "$tmp/merged/report/report.md" &&
      grep -q "^| 1/2 | $tmp/shard-1 | .*--shard 1/2 " "$tmp/merged/report/report.md" || fail "the report does not list the shards"
    [ "$("$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["shards"]))' "$tmp/merged/provenance.json")" = 2 ] ||
      fail "provenance.json does not list the shards"
    # The check bites: a merge that took one seed's training from the wrong shard is told apart.
    cp -r "$tmp/merged" "$tmp/broken"
    cp "$tmp/broken/models/softmax/seed-1/metrics.jsonl" "$tmp/broken/models/softmax/seed-2/metrics.jsonl"
    "$python" "$root/experiments/report.py" --run "$tmp/broken" >/dev/null || fail "report of the broken merge"
    "$python" "$here/same_results.py" "$tmp/single" "$tmp/broken" >"$tmp/broken.txt" && fail "a broken merge passed as the single run"
    grep -q "differ" "$tmp/broken.txt" || fail "the broken merge's difference: $(cat "$tmp/broken.txt")"
    # A rerun of a complete merge runs nothing; an interrupted one's partial folder is removed and made again.
    : >"$tmp/calls"
    merge --out "$tmp/merged" "$tmp/shard-1" "$tmp/shard-0" >"$tmp/merge2.txt" 2>&1 || fail "rerun of the merge failed"
    [ ! -s "$tmp/calls" ] && grep -q "skip   report (done)" "$tmp/merge2.txt" || fail "rerun of a complete merge redid stages"
    mkdir -p "$tmp/again.partial/models" && touch "$tmp/again.partial/.orbitlaw-merge-partial"
    merge --out "$tmp/again" "$tmp/shard-0" "$tmp/shard-1" >/dev/null 2>&1 && [ ! -e "$tmp/again.partial" ] &&
      "$python" "$here/same_results.py" "$tmp/single" "$tmp/again" --bytes >/dev/null || fail "merge after an interrupted merge"
    # Bad merges are refused in one line, and make no folder.
    refused() {  # refused WHAT EXPECTED-MESSAGE MERGE-ARGS...
      local what="$1" expected="$2" out
      shift 2
      out="$(merge --out "$tmp/bad" "$@" 2>&1)" && fail "merge accepted $what"
      [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^merge: error: .*$expected" <<<"$out" || fail "$what: $out"
      [ ! -e "$tmp/bad" ] && [ ! -e "$tmp/bad.partial" ] || fail "$what: the refused merge made a folder"
    }
    refused "no shards" "required: SHARD_FOLDER"
    refused "a missing shard" "shard 1/2 is missing (given: 0/2)" "$tmp/shard-0"
    refused "a shard given twice" "shard 0/2 given twice" "$tmp/shard-0" "$tmp/shard-0" "$tmp/shard-1"
    refused "a whole run" "is a whole run, not a shard" "$tmp/single" "$tmp/shard-1"
    refused "a folder that is no run" "is not a run folder" "$tmp/shard-0/models" "$tmp/shard-1"
    sweep --shard 1/2 --set seed=7 --out "$tmp/other" >/dev/null 2>&1 || fail "shard of another config failed"
    refused "shards of different configs" "shards of different configs: .* differ at 'seed'" "$tmp/shard-0" "$tmp/other"
    sweep --shard 1/3 --out "$tmp/third" >/dev/null 2>&1 || fail "shard of another split failed"
    refused "shards of different splits" "shards of different splits" "$tmp/shard-0" "$tmp/third"
    cp -r "$tmp/shard-1" "$tmp/commit"
    sed -i 's/"git_revision": "[^"]*"/"git_revision": "0000000"/' "$tmp/commit/provenance.json"
    refused "shards of different commits" "shards of different commits" "$tmp/shard-0" "$tmp/commit"
    cp -r "$tmp/shard-1" "$tmp/data"
    "$python" -c 'import h5py,sys; f=h5py.File(sys.argv[1],"r+"); f["position"][0,0]+=1' "$tmp/data/data/train.h5"
    refused "a dataset that differs" "dataset 'train' differs between shard 0/2" "$tmp/shard-0" "$tmp/data"
    refused "an existing folder" "exists and is not a merge of these shards" --out "$tmp/single" "$tmp/shard-0" "$tmp/shard-1"
    # A shard with a stage left to do is refused; its rerun resumes that stage alone, as any run's.
    rm "$tmp/shard-1/stages/probe-lssar-seed-2.done"
    refused "an incomplete shard" "shard 1/2 ($tmp/shard-1) is incomplete: stage 'probe-lssar-seed-2' has not finished" \
      "$tmp/shard-0" "$tmp/shard-1"
    : >"$tmp/calls"
    sweep --shard 1/2 --out "$tmp/shard-1" >/dev/null 2>&1 || fail "rerun of the incomplete shard failed"
    [ "$(cut -d' ' -f1 "$tmp/calls")" = probe ] || fail "the shard's rerun redid more than its stage: $(cat "$tmp/calls")"
    # A shard killed during its training resumes it when rerun, like any run.
    FAKE_STEPS=20 FAKE_STEP_SECONDS=0.2 setsid bash "$root/experiments/vafa-slice.sh" --smoke --seeds 2 --shard 0/2 \
      --out "$tmp/killed" >"$tmp/killed.txt" 2>&1 &
    pid=$!
    for _ in $(seq 300); do
      [ -f "$tmp/killed/models/softmax/seed-1/checkpoint.pt" ] && break
      sleep 0.1
    done
    kill -TERM -- "-$pid"
    wait "$pid" && fail "the interrupted shard exited 0"
    FAKE_STEPS=20 sweep --shard 0/2 --out "$tmp/killed" >"$tmp/killed2.txt" 2>&1 || { cat "$tmp/killed2.txt"; fail "rerun of the killed shard"; }
    grep -q "resume train-softmax-seed-1" "$tmp/killed2.txt" && grep -q "skip   simulate-train" "$tmp/killed2.txt" ||
      fail "the killed shard did not resume: $(cat "$tmp/killed2.txt")"
    # --shard's own errors: one line, nothing run.
    for bad in "2/2" "1/0" "x" "-1/2" "0/5"; do
      out="$(sweep --shard "$bad" --out "$tmp/badshard" 2>&1)" && fail "--shard $bad accepted"
      [ "$(wc -l <<<"$out")" = 1 ] && grep -q "error: --shard" <<<"$out" && [ ! -e "$tmp/badshard" ] || fail "--shard $bad: $out"
    done
    grep -q "this run has 4 (model, seed) pairs to split; use at most 4 shards" <<<"$out" || fail "--shard 0/5: $out"
    out="$(bash "$root/experiments/gpu-study.sh" --smoke --shard 0/2 --out "$tmp/gpu" 2>&1)" && fail "--shard with a budget accepted"
    grep -q "shard applies to runs without a time budget" <<<"$out" && [ ! -e "$tmp/gpu" ] || fail "--shard with a budget: $out"
    out="$(sweep --shard 1/2 --out "$tmp/shard-0" 2>&1)" && fail "shard 1/2 resumed shard 0/2's folder"
    grep -q "holds shard 0/2, not shard 1/2" <<<"$out" || fail "unclear message for another shard's folder: $out"
    ;;

  budget)
    # gpu-study's time budget: a training slower than its share is cut, the run goes on with the checkpoint
    # it has, the report marks the cut, and the packed results arrive, all within the total budget.
    start="$(date +%s)"
    export OUT="$tmp/out"
    FAKE_STEPS=1000 FAKE_STEP_SECONDS=0.2 bash "$root/experiments/gpu-study.sh" --smoke --out "$run" \
      --set budget.total_s=90 --set budget.report_min_s=45 --set budget.shares.train=0.2 >"$tmp/out.txt" 2>&1 ||
      { cat "$tmp/out.txt"; fail "gpu-study --smoke exited non-zero"; }
    elapsed=$(($(date +%s) - start))
    [ "$elapsed" -le 92 ] || fail "the 90 s budget took $elapsed s"
    [ -f "$run/stages/train-softmax.cut" ] && [ -f "$run/stages/train-lssar.cut" ] || fail "slow training was not cut"
    [ -f "$run/stages/probe-lssar.done" ] || fail "the stages after a cut training did not run on its checkpoint"
    grep -q "train.max_minutes=" "$tmp/calls" || fail "training was not told its time limit"
    grep -q "^probe .*time_limit_seconds=" "$tmp/calls" || fail "the probe was not told its time limit"
    grep -q "| train-softmax | CUT at its" "$run/report/report.md" || fail "the report does not mark the cut stage"
    grep -q "finished with stages cut or failed" "$tmp/out.txt" || fail "the summary does not mention the cut"
    for f in report.html report.md results.json logs.txt compare.md laws.md; do
      [ -s "$OUT/gpu-study/$f" ] || fail "packed results lack $f"
      [ "$(stat -c %s "$OUT/gpu-study/$f")" -le $((16 * 1024 * 1024)) ] || fail "$f is over 16 MB"
    done
    [ "$(find "$OUT" -type f | wc -l)" -le 6 ] || fail "more than a few files to bring back: $(find "$OUT" -type f)"
    "$python" - "$OUT/gpu-study/results.json" <<'PY' || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1]))["files"]
assert "stages/train-softmax.cut" in r and "budget.json" in r and "models/lssar/metrics.jsonl" in r, sorted(r)
PY
    # A failing stage in budget mode is recorded and the report still arrives.
    FAKE_FAIL=eval bash "$root/experiments/gpu-study.sh" --smoke --out "$tmp/run2" >"$tmp/out2.txt" 2>&1 &&
      fail "gpu-study with a failing stage exited 0"
    grep -q "stages failed: eval-lssar.failed eval-softmax.failed" "$tmp/out2.txt" || fail "failed stages not named"
    [ -s "$OUT/gpu-study/report.html" ] || fail "no packed report after a failed stage"
    [ -f "$tmp/run2/stages/eval-softmax.failed" ] && [ -f "$tmp/run2/report/report.html" ] || fail "failed stage not recorded"
    grep -q "| eval-softmax | FAILED (exit 1) |" "$tmp/run2/report/report.md" || fail "report does not mark the failure"
    ;;

  seeds)
    # --seeds 3: each model is trained, evaluated and probed once per training seed in its own folders, and
    # the report opens with an answer drawn from all seeds. The test double's numbers are fresh random numbers
    # on every call, so the seeds' values differ and the aggregates can be recomputed from the seeds' files.
    start="$(date +%s)"
    experiment --seeds 3 >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "experiment --smoke --seeds 3 failed"; }
    "$python" "$here/check_report.py" "$run" --since "$start" --no-missing \
      --require force_scatter_lssar-seed-3.png --require pareto_softmax-seed-2.png || fail "report check"
    for kind in softmax lssar; do
      for seed in 1 2 3; do
        for f in models/$kind/seed-$seed/checkpoint.pt models/$kind/seed-$seed/eval.json \
          probe/$kind/seed-$seed/predictions.h5 probe/$kind/seed-$seed/sr.json configs/train-$kind-seed-$seed.json \
          stages/train-$kind-seed-$seed.done stages/eval-$kind-seed-$seed.done stages/probe-$kind-seed-$seed.done; do
          [ -s "$run/$f" ] || fail "run folder lacks $f"
        done
      done
    done
    [ ! -e "$run/models/softmax/checkpoint.pt" ] && [ ! -e "$run/stages/train-softmax.done" ] ||
      fail "a three-seed run also trained in the one-seed folders"
    "$python" - "$run" "$here" <<'PY' || fail "seeds in the report"
import json, os, re, statistics, sys
run, here = sys.argv[1:]
sys.path.insert(0, os.path.join(here, "..", "..", "experiments"))
from report import fmt
md = open(os.path.join(run, "report", "report.md")).read()
compare = json.load(open(os.path.join(run, "compare", "compare.json")))["rows"]
labels = {"softmax": "softmax", "lssar": "LSSAR (p = 15)"}
headings = re.findall(r"^#+ .*$", md, re.M)
assert headings[1:4] == ["## Answer", "### Differences over seeds", "### Summary: one row per model"], headings[:4]
answer = md.split("## Answer", 1)[1].split("\n## ", 1)[0]
# The summary has one row per model; every quantity per seed is in the detail table further down.
summary = answer.split("### Summary: one row per model", 1)[1]
assert [line.split(" | ")[0] for line in summary.splitlines() if line.startswith("| ") and " | 3 | " in line] == \
    ["| " + name for name in labels.values()], summary
for kind, name in labels.items():
    values = {"final validation loss (nats)": {}, "1-step error (AU)": {},
              "1-step error of the previous position (AU)": {}, "probe R², finetune": {},
              "Newton galaxies (srbench) of 3, finetune / published": {}}
    for seed in (1, 2, 3):
        folder = os.path.join(run, "models", kind, f"seed-{seed}")
        # Each folder was trained with its own seed, and its config file says so.
        assert json.load(open(os.path.join(folder, "train.provenance.json")))["seed"] == seed
        assert json.load(open(os.path.join(run, "configs", f"train-{kind}-seed-{seed}.json")))["seed"] == seed
        rows = [json.loads(line) for line in open(os.path.join(folder, "metrics.jsonl"))]
        values["final validation loss (nats)"][seed] = [r["val_loss"] for r in rows if "val_loss" in r][-1]
        one = json.load(open(os.path.join(folder, "eval.json")))["trajectory_error"]["1"]
        values["1-step error (AU)"][seed] = one["model"]
        values["1-step error of the previous position (AU)"][seed] = one["previous_position"]
        row = next(r for r in compare if r["model"] == f"{kind}/seed-{seed}" and r["probe"] == "finetune")
        values["probe R², finetune"][seed] = row["r2"]
        values["Newton galaxies (srbench) of 3, finetune / published"][seed] = row["tiers"]["srbench"]
    for quantity, per_seed in values.items():
        xs = list(per_seed.values())
        mean, sd = statistics.fmean(xs), statistics.stdev(xs)
        each = "; ".join(f"seed {s}: {fmt(v)}" for s, v in per_seed.items())
        line = f"| {name} | {quantity} | {fmt(mean)} (SD {fmt(sd)}) | 3 of 3 | {each} |"
        assert line in md, f"summary row missing: {line}"
    assert len(set(values["final validation loss (nats)"].values())) == 3, "the seeds' values do not differ"
    # The answer's sentence weighs the 1-step difference by the 95% t interval of the per-seed differences
    # (3 seeds: df 2, t = 4.3027 from a printed table).
    sentence = next(p for p in answer.split("\n\n") if p.startswith(f"**{name}**"))
    assert "(3 seeds: 1, 2, 3)" in sentence, sentence
    diffs = [values["1-step error (AU)"][s] - values["1-step error of the previous position (AU)"][s] for s in (1, 2, 3)]
    within = abs(statistics.fmean(diffs)) <= 4.3027 * statistics.stdev(diffs) / 3 ** 0.5
    expected = ("previous position: no difference established at this number of seeds" if within
                else f"by {fmt(abs(statistics.fmean(diffs)))} AU, 95% interval [")
    assert expected in sentence, (expected, sentence)
PY
    # compare.md's own title does not repeat the section heading.
    ! grep -q '^# Recovered force laws against Newton$' "$run/report/report.md" || fail "duplicated compare heading"
    # A rerun calls nothing; lost markers of one seed's stages redo those stages alone, and a training with a
    # checkpoint but no marker is resumed in its own seed's folder.
    : >"$tmp/calls"
    experiment --seeds 3 >/dev/null 2>&1 || fail "rerun of a complete three-seed run failed"
    [ ! -s "$tmp/calls" ] || fail "rerun of a complete three-seed run called orbitlaw again: $(cat "$tmp/calls")"
    rm "$run/stages/eval-lssar-seed-2.done" "$run/stages/train-softmax-seed-3.done"
    experiment --seeds 3 >/dev/null 2>&1 || fail "rerun after lost markers failed"
    [ "$(cut -d' ' -f1 "$tmp/calls" | tr '\n' ' ')" = "train eval " ] &&
      grep -q '^train .*models/softmax/seed-3 --resume$' "$tmp/calls" &&
      grep -q '^eval .*models/lssar/seed-2/eval.json$' "$tmp/calls" ||
      fail "lost markers of single seeds redid more or less than their stages: $(cat "$tmp/calls")"
    # The seed count is part of the run's config; a bad count is a one-line error.
    out="$(experiment 2>&1)" && fail "a three-seed run folder was reused for one seed"
    grep -q "was made with a different config" <<<"$out" || fail "unclear message for a seed-count mismatch: $out"
    out="$(experiment --seeds 0 2>&1)" && fail "--seeds 0 accepted"
    [ "$(wc -l <<<"$out")" = 1 ] && grep -q "seeds needs a whole number >= 1" <<<"$out" || fail "--seeds 0: $out"
    ;;

  orphans)
    # The driver never leaves a stage behind: killed outright, or interrupted by a signal sent to it alone (not
    # to its process group, as a supervisor or `kill PID` does), no process of the running stage remains. A
    # second driver on the same run folder is refused, naming the first, while the first runs.
    stage_pids() { pgrep -f -- "--out $run/models/softmax" || true; }
    for sig in KILL TERM INT HUP; do
      rm -rf "$run"
      FAKE_STEPS=300 FAKE_STEP_SECONDS=0.1 setsid bash "$root/experiments/vafa-slice.sh" --smoke --out "$run" \
        >"$tmp/first.txt" 2>&1 &
      pid=$!
      for _ in $(seq 300); do
        [ -f "$run/models/softmax/checkpoint.pt" ] && break
        sleep 0.1
      done
      [ -n "$(stage_pids)" ] || { cat "$tmp/first.txt"; fail "no training stage is running"; }
      if [ "$sig" = KILL ]; then
        out="$(experiment 2>&1)" && fail "a second driver ran on a run folder in use"
        [ "$(wc -l <<<"$out")" = 1 ] && grep -q "is in use by another run (pid $pid: " <<<"$out" ||
          fail "the second driver's refusal does not name the first: $out"
      fi
      kill -"$sig" "$pid"
      wait "$pid" && fail "the driver killed by SIG$sig exited 0"
      for _ in $(seq 50); do
        [ -z "$(stage_pids)" ] && break
        sleep 0.1
      done
      left="$(stage_pids)"
      if [ -n "$left" ]; then
        kill -KILL $left
        fail "the training stage outlived the driver stopped by SIG$sig"
      fi
    done
    # A driver killed outright leaves its lock file; the rerun takes the folder and resumes.
    FAKE_STEPS=4 experiment >"$tmp/rerun.txt" 2>&1 || { cat "$tmp/rerun.txt"; fail "rerun after the kill failed"; }
    [ ! -e "$run/.orbitlaw.lock" ] || fail "the driver left its lock file after a complete run"
    ;;

  outputs)
    # --fresh deletes only a run folder the driver made, recognised by its records, not by a file name.
    mkdir -p "$tmp/notes"
    echo "my notes on experiments" >"$tmp/notes/experiment.json"
    echo "keep me" >"$tmp/notes/results.txt"
    out="$(bash "$root/experiments/vafa-slice.sh" --smoke --out "$tmp/notes" --fresh 2>&1)" &&
      fail "--fresh deleted a folder holding a plain-text experiment.json"
    [ "$(wc -l <<<"$out")" = 1 ] && grep -q "not a run folder this driver made" <<<"$out" || fail "--fresh: $out"
    [ "$(cat "$tmp/notes/results.txt")" = "keep me" ] && [ -f "$tmp/notes/experiment.json" ] ||
      fail "--fresh removed files of a folder that is not a run folder"
    # A run folder the driver made, with a file of the user's inside: --fresh refuses rather than delete it.
    experiment >/dev/null 2>&1 || fail "setup run failed"
    echo "keep me" >"$run/my-notes.txt"
    out="$(experiment --fresh 2>&1)" && fail "--fresh deleted a file the driver did not write"
    grep -q "holds files the driver did not write (my-notes.txt)" <<<"$out" || fail "--fresh: $out"
    [ -f "$run/my-notes.txt" ] && [ -f "$run/stages/report.done" ] || fail "--fresh removed part of the run"
    rm "$run/my-notes.txt"
    experiment --fresh >/dev/null 2>&1 || fail "--fresh on the driver's own run folder failed"
    # The report removes only the plots a report listed: a plot the user put in the report folder stays, and
    # a folder of the user's is refused.
    echo "the user's plot" >"$run/report/mine.png"
    "$python" "$root/experiments/report.py" --run "$run" >/dev/null || fail "rerunning the report failed"
    [ "$(cat "$run/report/mine.png")" = "the user's plot" ] || fail "the report deleted a plot it did not write"
    [ -f "$run/report/training_curves.png" ] || fail "the report did not redraw its own plots"
    mkdir -p "$tmp/figures" && echo "the user's plot" >"$tmp/figures/training_curves.png"
    "$python" "$root/experiments/report.py" --run "$run" --out "$tmp/figures" >/dev/null 2>&1 &&
      fail "the report wrote into a folder of the user's"
    [ "$(cat "$tmp/figures/training_curves.png")" = "the user's plot" ] || fail "the report overwrote a file of the user's"
    ;;

  *) fail "unknown scenario '$scenario'" ;;
esac
echo "PASS: driver $scenario"
