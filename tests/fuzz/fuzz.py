#!/usr/bin/env python3
"""Mutation fuzzing of orbitlaw's file readers, as a user's malformed file reaches them.

Three readers, each fed mutants of small valid seed inputs:
  json  `orbitlaw {train,simulate,probe} --show-config --config F` (the JSON config reader)
  csv   `orbitlaw sr --data F --x r,m1,m2 --y F --iterations 1 ...` (the sr table reader, a tiny budget)
  hdf5  `orbitlaw inspect F` (a dataset of `simulate --preset two-body --systems 3`, bytes flipped,
        overwritten, truncated)

A run is a finding when it dies by a signal, exits with a status other than 0, 1 or 2, prints a Python
traceback or a C++ backtrace (or HDF5's diagnostic stack), fails with more than one line on stderr, or is
still running at the timeout. Each finding is shrunk (mutations undone, or bytes removed, while it still
fails the same way) and saved under the findings folder as `input.<ext>`, `command.txt` (the command, with
{input} for the file), `output.txt` and `finding.json`.

--replay first reruns every saved finding. A finding marked "open" in its finding.json is a known, unfixed
bug: it must still fail (else the mark is stale and the run fails, so that the fix is recorded); any other
saved finding must now pass. Then mutants are run for --seconds with --seed. The exit status is 1 when a
replay does not behave as marked or a new finding was made, else 0.

Standard library only. Example: python3 tests/fuzz/fuzz.py --binary build/app/orbitlaw --minutes 10
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG_COMMANDS = ("train", "simulate", "probe")
SR_ARGS = "sr --data {input} --x r,m1,m2 --y F --iterations 1 --set populations=1 --set population_size=4"
# Text a failing run must not print: tracebacks, backtraces, aborts and the HDF5 library's error stack.
CRASH_MARKERS = re.compile(
    r"Traceback \(most recent call last\)|terminate called|Aborted|Segmentation fault|#\d+ +0x[0-9a-f]+|"
    r"HDF5-DIAG|stack trace|backtrace|AddressSanitizer|internal error",
    re.IGNORECASE,
)


# ----------------------------------------------------------------------------------------------------------
# Running one input.


def run(binary, args, path, timeout):
    """(verdict, returncode, output): verdict is None for a clean run, else the finding's kind."""
    argv = [binary] + args.format(input=path).split()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        # A new session, so that a hung run's children go with it.
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True, cwd=os.path.dirname(path))
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return "hang", None, (out + err).decode("utf-8", "replace")
    text = (out + err).decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    rc = proc.returncode
    if rc < 0:
        return "signal %s" % signal.Signals(-rc).name, rc, text
    if rc not in (0, 1, 2):
        return "exit %d" % rc, rc, text
    if CRASH_MARKERS.search(text):
        return "crash text", rc, text
    # Lines as a terminal breaks them (str.splitlines would also break at \x1c-\x1e and \x85).
    if rc != 0 and len([l for l in re.split(r"\r\n|\r|\n", stderr) if l.strip()]) > 1:
        return "several error lines", rc, text
    return None, rc, text


def signature(kind, output):
    """What makes two findings the same bug: the kind and the first line of output, numbers and paths out."""
    first = next((l for l in re.split(r"\r\n|\r|\n", output) if l.strip()), "")
    first = re.sub(r"'[^']*'", "'Q'", first)  # the quoted cell or name a mutant happened to break
    first = re.sub(r"/[^\s':]+", "PATH", first)
    first = re.sub(r"\d+", "N", first)
    return kind + ": " + first[:160]


# ----------------------------------------------------------------------------------------------------------
# Seeds.


def csv_seeds(rng):
    rows = []
    for _ in range(12):
        r, m1, m2 = rng.uniform(0.5, 5), rng.uniform(0.5, 2), 10 ** rng.uniform(-6, -3)
        rows.append((r, m1, m2, 39.47841760435743 * m1 * m2 / r ** 2))
    plain = "r,m1,m2,F\n" + "".join("%r,%r,%r,%r\n" % row for row in rows)
    excel = '\ufeff"r","m1","m2","F","note, quoted"\r\n' + "".join(
        '%r,%r,%r,"%r","a ""b"""\r\n' % row for row in rows)
    return [plain.encode(), excel.encode("utf-8")]


def json_seeds(binary, work):
    seeds = []
    for command in CONFIG_COMMANDS:
        out = subprocess.run([binary, command, "--show-config"], capture_output=True, cwd=work,
                             env=dict(os.environ, OMP_NUM_THREADS="1"))
        if out.returncode != 0:
            sys.exit("fuzz: `%s %s --show-config` failed: %s" % (binary, command, out.stderr.decode()))
        seeds.append((command, out.stdout))
    return seeds


def hdf5_seed(binary, work):
    path = os.path.join(work, "seed.h5")
    if not os.path.exists(path):
        out = subprocess.run([binary, "simulate", "--preset", "two-body", "--systems", "3", "-q", "--out",
                              path], capture_output=True, cwd=work, env=dict(os.environ, OMP_NUM_THREADS="1"))
        if out.returncode != 0:
            sys.exit("fuzz: simulate failed: " + out.stderr.decode())
    return Path(path).read_bytes()


# ----------------------------------------------------------------------------------------------------------
# Mutations. Each returns the mutant and a list of edits [(offset, old bytes, new bytes)] for byte-level ones
# (so that shrinking can undo them one by one), or None for structural ones (shrunk by cutting bytes).

INTERESTING_TEXT = [
    b"", b"-", b"+", b".", b"e", b"1e309", b"-1e309", b"1e-400", b"nan", b"NaN", b"inf", b"-Infinity",
    b"0x1p3", b"1e-170", b"1e170", b"18446744073709551616", b"-1", b"0", b"true", b"null", b"\"\"", b"\"",
    b"\"\"\"", b",", b",,", b"\r", b"\n", b"\r\n", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"[", b"]", b"{", b"}",
    b"{\"a\":1,\"a\":2}", b"[" * 300, b"9" * 400, b"\\u0000", b"\"\\ud800\"", b"\xc3\x28", b" ", b"\t",
    b"r-1", b"1,2,3,4,5,6,7,8", b"2147483648", b"-2147483649", b"1.7976931348623157e308",
]


def byte_edits(data, rng, hot=None):
    """1 to 4 random byte-level edits; `hot` (a length) biases offsets towards the start (HDF5 metadata)."""
    data = bytearray(data)
    edits = []
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        if hot and rng.random() < 0.7:
            i = rng.randrange(min(hot, len(data)))
        else:
            i = rng.randrange(len(data))
        op = rng.random()
        if op < 0.4:  # flip one bit
            new = bytes([data[i] ^ (1 << rng.randrange(8))])
        elif op < 0.6:  # an extreme byte
            new = bytes([rng.choice([0, 1, 0x7F, 0x80, 0xFF])])
        elif op < 0.8:  # an extreme 4- or 8-byte integer (sizes, offsets, counts)
            width = rng.choice([4, 8])
            if i + width > len(data):
                continue
            new = rng.choice([b"\xff", b"\x00", b"\x7f"]) * width
        else:  # random bytes
            new = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            new = new[: len(data) - i]
        old = bytes(data[i: i + len(new)])
        data[i: i + len(new)] = new
        edits.append((i, old, new))
    return bytes(data), edits


def text_mutation(data, rng):
    """A structural change of text: insert, replace, delete, duplicate or truncate."""
    op = rng.random()
    i = rng.randrange(len(data) + 1)
    if op < 0.35:
        return data[:i] + rng.choice(INTERESTING_TEXT) + data[i:]
    if op < 0.6:  # replace a token (a run of non-separators) with an interesting one
        tokens = [m.span() for m in re.finditer(rb"[^,:\s\[\]{}]+", data)]
        if tokens:
            a, b = rng.choice(tokens)
            return data[:a] + rng.choice(INTERESTING_TEXT) + data[b:]
    if op < 0.75:
        j = min(len(data), i + rng.randint(1, 40))
        return data[:i] + data[j:]
    if op < 0.9:
        j = min(len(data), i + rng.randint(1, 200))
        return data[:j] + data[i:j] + data[j:]
    return data[:i]


def mutate(reader, seed, rng):
    if reader == "hdf5":
        if rng.random() < 0.15:  # truncated, as by a full disk or an interrupted copy
            cut = rng.randrange(len(seed))
            return seed[:cut], None
        return byte_edits(seed, rng, hot=4096)
    data = seed
    for _ in range(rng.randint(1, 3)):
        data = text_mutation(data, rng) if rng.random() < 0.8 else byte_edits(data, rng)[0]
    return data, None


# ----------------------------------------------------------------------------------------------------------
# Shrinking and saving.


def shrink(data, seed, edits, still_fails, budget):
    """The smallest input that still fails the same way, within `budget` runs: undoes byte edits one by one,
    else removes chunks of halving size."""
    runs = 0
    if edits is not None:
        kept = list(edits)
        for edit in list(kept):
            if runs >= budget:
                break
            trial = [e for e in kept if e is not edit]
            candidate = bytearray(seed)
            for i, _, new in trial:
                candidate[i: i + len(new)] = new
            runs += 1
            if still_fails(bytes(candidate)):
                kept, data = trial, bytes(candidate)
        return data
    chunk = max(1, len(data) // 2)
    while chunk >= 1 and runs < budget:
        i, changed = 0, False
        while i < len(data) and runs < budget:
            candidate = data[:i] + data[i + chunk:]
            runs += 1
            if candidate and still_fails(candidate):
                data, changed = candidate, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return data


def save(findings, reader, args, data, kind, output, sig):
    digest = hashlib.sha1(sig.encode()).hexdigest()[:10]
    folder = Path(findings) / ("%s-%s" % (reader, digest))
    folder.mkdir(parents=True, exist_ok=True)
    ext = {"json": "json", "csv": "csv", "hdf5": "h5"}[reader]
    (folder / ("input." + ext)).write_bytes(data)
    (folder / "command.txt").write_text("orbitlaw " + args + "\n")
    (folder / "output.txt").write_text(output[-4000:])
    meta = {"reader": reader, "kind": kind, "signature": sig, "open": True,
            "note": "found by tests/fuzz/fuzz.py; set open to false once fixed"}
    (folder / "finding.json").write_text(json.dumps(meta, indent=2) + "\n")
    return folder


# ----------------------------------------------------------------------------------------------------------
# Replay of saved findings.


def replay(binary, findings, work, timeout, readers):
    """Reruns each saved finding of `readers`; returns the number that do not behave as marked."""
    bad = 0
    for folder in sorted(Path(findings).glob("*/")):
        meta_path = folder / "finding.json"
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        if meta["reader"] not in readers:
            continue
        inputs = list(folder.glob("input.*"))
        args = (folder / "command.txt").read_text().strip()
        args = args[len("orbitlaw "):] if args.startswith("orbitlaw ") else args
        path = os.path.join(work, "replay" + inputs[0].suffix)
        shutil.copyfile(inputs[0], path)
        kind, rc, output = run(binary, args, path, timeout)
        expected_open = bool(meta.get("open"))
        if kind and not expected_open:
            print("REGRESSION %s: %s (exit %s)\n  %s" % (folder.name, kind, rc, output.strip()[:300]))
            bad += 1
        elif not kind and expected_open and meta["kind"] != "hang":
            print("FIXED %s: passes now; set \"open\": false in %s" % (folder.name, meta_path))
            bad += 1
        else:
            print("replay %s: %s" % (folder.name, "still open (%s)" % kind if kind else "passes"))
    return bad


# ----------------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the orbitlaw executable")
    duration = ap.add_mutually_exclusive_group()
    duration.add_argument("--minutes", type=float, help="fuzz this long")
    duration.add_argument("--seconds", type=float, help="fuzz this long")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the mutations")
    ap.add_argument("--runs", type=int, help="stop after this many mutants (with a seed: the same mutants on "
                    "any machine, as the time alone would not give)")
    ap.add_argument("--readers", default="json,csv,hdf5", help="comma-separated: json, csv, hdf5")
    ap.add_argument("--findings", default=str(HERE / "findings"), help="folder of saved findings")
    ap.add_argument("--save", action="store_true", help="save new findings there (default: only report)")
    ap.add_argument("--replay", action="store_true", help="rerun the saved findings first")
    ap.add_argument("--timeout", type=float, default=30, help="seconds before a run counts as a hang")
    ap.add_argument("--shrink-runs", type=int, default=40, help="runs spent shrinking each finding")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        sys.exit("fuzz: '%s' is not an executable" % a.binary)
    readers = a.readers.split(",")
    for r in readers:
        if r not in ("json", "csv", "hdf5"):
            sys.exit("fuzz: unknown reader '%s' (json, csv, hdf5)" % r)
    seconds = a.seconds if a.seconds is not None else 60 * (a.minutes if a.minutes is not None else 1)
    work = a.work or tempfile.mkdtemp(prefix="orbitlaw-fuzz-")
    os.makedirs(work, exist_ok=True)

    failures = replay(binary, a.findings, work, a.timeout, readers) if a.replay else 0

    rng = random.Random(a.seed)
    seeds = {}
    if "json" in readers:
        seeds["json"] = [("%s --show-config --config {input}" % c, s) for c, s in json_seeds(binary, work)]
    if "csv" in readers:
        seeds["csv"] = [(SR_ARGS, s) for s in csv_seeds(rng)]
    if "hdf5" in readers:
        seeds["hdf5"] = [("inspect {input}", hdf5_seed(binary, work))]
    runs = {r: 0 for r in seeds}
    found = {}  # signature -> (reader, args, folder or None): new findings
    # Findings already saved are known; meeting them again is not new.
    known = {json.loads(p.read_text())["signature"] for p in Path(a.findings).glob("*/finding.json")}
    met_known = set()
    start = time.monotonic()
    k = 0
    while time.monotonic() - start < seconds and seeds and (a.runs is None or k < a.runs):
        reader = list(seeds)[k % len(seeds)]
        k += 1
        args, seed = rng.choice(seeds[reader])
        data, edits = mutate(reader, seed, rng)
        ext = {"json": ".json", "csv": ".csv", "hdf5": ".h5"}[reader]
        path = os.path.join(work, "mutant" + ext)
        Path(path).write_bytes(data)
        kind, rc, output = run(binary, args, path, a.timeout)
        runs[reader] += 1
        if not kind:
            continue
        sig = signature(kind, output)
        if sig in known:
            met_known.add(sig)
            continue
        if sig in found:
            continue

        def still_fails(candidate):
            Path(path).write_bytes(candidate)
            again, _, out = run(binary, args, path, a.timeout)
            return again is not None and signature(again, out) == sig

        small = shrink(data, seed, edits, still_fails, a.shrink_runs)
        Path(path).write_bytes(small)
        kind, rc, output = run(binary, args, path, a.timeout)
        folder = save(a.findings, reader, args, small, kind or "flaky", output, sig) if a.save else None
        found[sig] = (reader, args, folder)
        print("FINDING %s [%s] %s\n  command: orbitlaw %s\n  input: %d bytes%s\n  output: %s" %
              (reader, kind, sig, args, len(small), " saved in %s" % folder if folder else "",
               output.strip().replace("\n", "\n          ")[:600]))
    elapsed = time.monotonic() - start
    print("fuzz: %.1f min, seed %d; inputs run: %s; new findings: %d; saved findings met again: %d" %
          (elapsed / 60, a.seed, ", ".join("%s %d" % kv for kv in runs.items()), len(found), len(met_known)))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures or found else 0


if __name__ == "__main__":
    sys.exit(main())
