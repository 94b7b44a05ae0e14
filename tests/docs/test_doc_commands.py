#!/usr/bin/env python3
"""The commands in the code blocks of README.md, docs/*.md, probe/README.md and model/cuda/README.md: every one
parses, and the blocks marked runnable run.

usage: test_doc_commands.py ORBITLAW PYTHON   (exit 0 when every test passes; ORBITLAW defaults to $ORBITLAW_BIN)

A fenced code block is read line by line (backslash continuations joined, comments dropped, `&&` and `;` split);
`B=build/app/orbitlaw` style assignments are expanded. What is checked, per command:

- `orbitlaw SUB ...` (also `build/app/orbitlaw`, `$B`): SUB is a subcommand of `orbitlaw --help`; every `--flag` is
  one of `orbitlaw SUB --help`; the `--set` keys resolve (`orbitlaw SUB --show-config --set ...` exits 0, for
  simulate, train, eval and probe); every file it reads (`--data`, `--val`, `--checkpoint`, `--config`, and the
  positional arguments of compare and inspect) is shipped in the repository or written by an earlier command of
  the same document (`--out`, `--predictions`, `> FILE`, an experiment's run folder).
- `bash experiments/NAME.sh ...`: the script exists; every `--flag` is one of its `--help`; `--models` names models
  of its config; `--set` keys of its train, eval, probe or datasets sections resolve with `orbitlaw --show-config`,
  any other key exists in the config. It writes its run folder (`--out`, or runs/NAME[-smoke]).
- `bash scripts/X.sh`, `PYTHON FILE.py`: the file exists.

Markers, on the line before a fence: `<!-- runnable -->` runs the block as a bash script (set -euo pipefail) at
the size it is written in (smoke size), in a scratch folder that links the repository's experiments/, scripts/
and .venv and has build/app/orbitlaw pointing at ORBITLAW, with OMP_NUM_THREADS=1; it must exit 0 within 120 s.
`<!-- template -->` marks a block of command templates (placeholders such as RUN or <kind>): its subcommands and
flags are checked, its files and `--set` values are not.
"""
import functools
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import expconfig  # noqa: E402  the experiments' own config resolution

ORBITLAW = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.environ.get("ORBITLAW_BIN", "")
PYTHON = sys.argv[2] if len(sys.argv) > 2 else sys.executable
MARKER = re.compile(r"<!--\s*(runnable|template)\s*-->")
SHOW_CONFIG = {"simulate", "train", "eval", "probe"}
READS = {"--data", "--val", "--checkpoint", "--config", "-c"}
POSITIONAL_READS = {"compare", "inspect"}
SECTIONS = {"train": "train", "eval": "eval", "probe": "probe"}
# A line this test reads as commands: it starts (after environment assignments) with orbitlaw, a variable, bash,
# a Python, or is an assignment.
COMMAND_LINE = re.compile(r"^\s*([A-Z_][A-Z0-9_]*=\S*\s+)*(\$\{?\w+|(\S*/)?orbitlaw(\s|$)|bash\s|\S*python3?\s|"
                          r"[A-Za-z_]\w*=\S)")


def documents():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + \
        [os.path.join(ROOT, "probe", "README.md"), os.path.join(ROOT, "model", "cuda", "README.md")]


def blocks(text):
    """(line number of the fence, marker or None, [(line number, line)]) for every fenced code block."""
    lines = text.splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = re.match(r"^\s*(```+|~~~+)(.*)$", lines[i])
        if not fence:
            i += 1
            continue
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.search(before)
        info = fence.group(2).strip().split()
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
            body.append((j + 1, lines[j]))
            j += 1
        if not info or info[0] in ("sh", "bash", "shell", "console"):
            found.append((i + 1, marker.group(1) if marker else None, body))
        i = j + 1
    return found


def commands(body):
    """(line number, [tokens]) of each simple command in a block; None tokens for a line shlex cannot read."""
    joined, start, out = "", None, []
    for number, line in body:
        start = start or number
        if line.rstrip().endswith("\\"):
            joined += line.rstrip()[:-1] + " "
            continue
        joined += line
        if not COMMAND_LINE.match(joined):
            joined, start = "", None  # output, a listing or another tool: not a command this test checks
            continue
        try:
            lexer = shlex.shlex(joined, posix=True, punctuation_chars=";&|<>")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            if number != body[-1][0]:
                joined += "\n"  # a quoted string goes on to the next line
                continue
            tokens = None
        if tokens is None:
            out.append((start, None))
        else:
            current = []
            for token in tokens + [";"]:
                if token in (";", "&&", "||", "|", "&"):
                    if current:
                        out.append((start, current))
                    current = []
                else:
                    current.append(token)
        joined, start = "", None
    return out


@functools.lru_cache(maxsize=None)
def help_text(*args):
    result = subprocess.run(list(args) + ["--help"], capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


def flags_of(help_output):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_output))


@functools.lru_cache(maxsize=None)
def show_config(sub, args):
    result = subprocess.run([ORBITLAW, sub, "--show-config"] + list(args), capture_output=True, text=True,
                            timeout=60)
    return result.returncode, (result.stderr.strip().splitlines() or [""])[-1]


def option_values(tokens, names):
    """The values of the options in `names` (--x V and --x=V)."""
    values = []
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if name in names:
            if eq:
                values.append(value)
            elif i + 1 < len(tokens):
                values.append(tokens[i + 1])
    return values


class Checker:
    """Checks the commands of one document, in order, remembering what each writes."""

    def __init__(self, path):
        self.path = path
        self.rel = os.path.relpath(path, ROOT)
        self.produced = []
        self.variables = {}
        self.problems = []

    def problem(self, line, message):
        self.problems.append(f"{self.rel}:{line}: {message}")

    def shipped_or_produced(self, path):
        clean = os.path.normpath(path)
        if os.path.exists(os.path.join(ROOT, clean)):
            return True
        return any(clean == p or clean.startswith(p + os.sep) for p in self.produced)

    def produce(self, path):
        self.produced.append(os.path.normpath(path))

    def expand(self, tokens):
        out = []
        for token in tokens:
            for name, value in self.variables.items():
                token = token.replace("${" + name + "}", value).replace("$" + name, value)
            out.append(token)
        return out

    def check_block(self, marker, body):
        for line, tokens in commands(body):
            if tokens is None:
                self.problem(line, "the command cannot be read as shell words (unbalanced quotes?)")
                continue
            if len(tokens) == 1 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S+", tokens[0]):
                name, _, value = tokens[0].partition("=")
                self.variables[name] = value
                continue
            tokens = self.expand(tokens)
            while tokens and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", tokens[0]):
                tokens = tokens[1:]  # environment assignments before the command
            if ">" in tokens:
                at = tokens.index(">")
                if at + 1 < len(tokens):
                    self.produce(tokens[at + 1])
                tokens = tokens[:at]
            if not tokens:
                continue
            self.check_command(line, tokens, template=marker == "template")

    def check_command(self, line, tokens, template):
        head = tokens[0]
        if os.path.basename(head) == "orbitlaw":
            self.check_orbitlaw(line, tokens[1:], template)
        elif head == "bash" and len(tokens) > 1 and tokens[1].startswith("experiments/"):
            self.check_experiment(line, tokens[1:], template)
        elif head == "bash" and len(tokens) > 1 and tokens[1].startswith("scripts/"):
            if not os.path.isfile(os.path.join(ROOT, tokens[1])):
                self.problem(line, f"'{tokens[1]}' is not a script of the repository")
        elif re.search(r"(^|/)(python3?|PYTHON)$", head) and len(tokens) > 1 and tokens[1].endswith(".py"):
            if not os.path.isfile(os.path.join(ROOT, tokens[1])):
                self.problem(line, f"'{tokens[1]}' is not a file of the repository")

    def check_orbitlaw(self, line, args, template):
        subs = set(re.findall(r"^\s{2}([a-z]+)\s", help_text(ORBITLAW), re.M))
        if not args or args[0] not in subs:
            if args and args[0] in ("--help", "-h", "--version"):
                return
            self.problem(line, f"'orbitlaw {args[0] if args else ''}': no such subcommand (orbitlaw --help lists "
                               f"{', '.join(sorted(subs))})")
            return
        sub, rest = args[0], args[1:]
        known = flags_of(help_text(ORBITLAW, sub))
        for token in rest:
            flag = token.partition("=")[0]
            if flag.startswith("--") and flag not in known:
                self.problem(line, f"'orbitlaw {sub} {flag}': no such option (orbitlaw {sub} --help)")
        if template:
            return
        sets = option_values(rest, {"--set"})
        if sets and sub in SHOW_CONFIG:
            self.check_keys(line, sub, sets)
        reads = option_values(rest, READS)
        if sub in POSITIONAL_READS:
            reads += positional(rest)
        for path in reads:
            if not self.shipped_or_produced(path):
                self.problem(line, f"'orbitlaw {sub}' reads '{path}', which no earlier command of "
                                   f"{self.rel} writes and the repository does not ship")
        for path in option_values(rest, {"--out", "--predictions"}):
            self.produce(path)
            if sub == "eval" and path.endswith(".json"):
                self.produce(path[:-5] + ".predictions.h5")

    def check_keys(self, line, sub, sets):
        args = []
        for item in sets:
            args += ["--set", item]
        rc, message = show_config(sub, tuple(args))
        if rc != 0:
            self.problem(line, f"'orbitlaw {sub} --set {' '.join(sets)}' does not resolve: {message}")

    def check_experiment(self, line, args, template):
        script = args[0]
        name = os.path.basename(script)[:-3] if script.endswith(".sh") else ""
        source = os.path.join(ROOT, "experiments", "configs", f"{name}.json")
        if not os.path.isfile(os.path.join(ROOT, script)) or not os.path.isfile(source):
            self.problem(line, f"'{script}' is not an experiment of the repository (no script or no config)")
            return
        rest = args[1:]
        known = flags_of(help_text("bash", os.path.join(ROOT, script)))
        for token in rest:
            flag = token.partition("=")[0]
            if flag.startswith("--") and flag not in known:
                self.problem(line, f"'{script} {flag}': no such option ({script} --help)")
        out = option_values(rest, {"--out"})
        self.produce(out[-1] if out else os.path.join("runs", name + ("-smoke" if "--smoke" in rest else "")))
        if template:
            return
        models = [m for value in option_values(rest, {"--models"}) for m in value.split(",")]
        try:
            config = expconfig.resolve(source, "--smoke" in rest, option_values(rest, {"--set"}), models or None)
        except expconfig.ConfigError as e:
            self.problem(line, f"'{script}': {e}")
            return
        for item in option_values(rest, {"--set"}):
            self.check_experiment_key(line, script, config, item)

    def check_experiment_key(self, line, script, config, item):
        key, _, value = item.partition("=")
        parts = key.split(".")
        if parts[0] in SECTIONS and len(parts) > 1:
            sub, inner = SECTIONS[parts[0]], ".".join(parts[1:])
        elif parts[0] == "datasets" and len(parts) > 2:
            sub, inner = "simulate", ".".join(parts[2:])
        elif parts[0] == "models" and len(parts) > 3 and parts[2] in SECTIONS:
            sub, inner = SECTIONS[parts[2]], ".".join(parts[3:])
        else:
            if expconfig.lookup(config, key) is None and parts[0] not in ("seeds", "stages", "seed"):
                self.problem(line, f"'{script} --set {key}': not a key of its config")
            return
        rc, message = show_config(sub, ("--set", f"{inner}={value}"))
        if rc != 0:
            self.problem(line, f"'{script} --set {item}' does not resolve in orbitlaw {sub}: {message}")


def positional(args):
    """The arguments of a subcommand that are neither options nor option values."""
    out, skip = [], False
    for token in args:
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = "=" not in token and token not in ("--resume", "--resume-changed", "--show-config",
                                                      "--oracle-only")
        else:
            out.append(token)
    return out


def check_text(path, text):
    """(problems, runnable blocks [(line, script)]) of one document's text."""
    checker = Checker(path)
    runnable = []
    for line, marker, body in blocks(text):
        checker.check_block(marker, body)
        if marker == "runnable":
            runnable.append((line, "\n".join(text for _, text in body)))
    return checker.problems, runnable


def run_block(script, scratch):
    os.makedirs(os.path.join(scratch, "build", "app"), exist_ok=True)
    for name in ("experiments", "scripts", ".venv"):
        if not os.path.lexists(os.path.join(scratch, name)):
            os.symlink(os.path.join(ROOT, name), os.path.join(scratch, name))
    binary = os.path.join(scratch, "build", "app", "orbitlaw")
    if not os.path.lexists(binary):
        os.symlink(ORBITLAW, binary)
    env = dict(os.environ, ORBITLAW_BIN=binary, OMP_NUM_THREADS="1", CI="true", ORBITLAW_PYTHON=PYTHON)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=scratch, env=env, capture_output=True,
                          text=True, timeout=120)


class DocCommands(unittest.TestCase):
    def test_every_command_in_the_docs_parses(self):
        problems = []
        for path in documents():
            with open(path) as f:
                problems += check_text(path, f.read())[0]
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_the_runnable_blocks_run(self):
        count = 0
        for path in documents():
            with open(path) as f:
                for line, script in check_text(path, f.read())[1]:
                    count += 1
                    scratch = tempfile.mkdtemp()
                    try:
                        result = run_block(script, scratch)
                    finally:
                        shutil.rmtree(scratch)
                    self.assertEqual(result.returncode, 0, f"{os.path.relpath(path, ROOT)}:{line}: the runnable "
                                     f"block failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
        self.assertGreater(count, 0, "no block is marked runnable")

    def test_broken_commands_are_caught(self):
        doc = "\n".join([
            "```sh",
            "B=build/app/orbitlaw",
            "$B simulate --preset two-body --systems 4 --out data/a.h5",
            "$B inspect data/a.h5",                                  # fine: written above
            "$B simulat --out x.h5",                                 # no such subcommand
            "$B train --data data/a.h5 --out m --learning-rate 3",   # no such option
            "$B train --data data/a.h5 --out m --set model.atention=lssar",  # no such key
            "$B eval --checkpoint nowhere/checkpoint.pt --data data/a.h5 --out e.json",  # never written
            "bash experiments/quickstart.sh --smoke --modles softmax",  # no such option
            "bash experiments/quickstart.sh --models nosuch",        # no such model
            "bash experiments/quickstart.sh --set train.train.max_stepz=3",  # no such key
            "```",
        ])
        problems, _ = check_text(os.path.join(ROOT, "docs", "broken.md"), doc)
        expected = ["docs/broken.md:5: 'orbitlaw simulat'", "docs/broken.md:6: 'orbitlaw train --learning-rate'",
                    "docs/broken.md:7: 'orbitlaw train --set model.atention=lssar' does not resolve",
                    "docs/broken.md:8: 'orbitlaw eval' reads 'nowhere/checkpoint.pt'",
                    "docs/broken.md:9: 'experiments/quickstart.sh --modles'",
                    "docs/broken.md:10: 'experiments/quickstart.sh': ", "docs/broken.md:11: "]
        for start in expected:
            self.assertTrue(any(p.startswith(start) for p in problems), f"not caught: {start}\n" + "\n".join(problems))
        self.assertEqual(len(problems), len(expected), "\n".join(problems))


if __name__ == "__main__":
    if not ORBITLAW or not os.access(ORBITLAW, os.X_OK):
        print("test_doc_commands: error: no orbitlaw binary (pass it, or set ORBITLAW_BIN)", file=sys.stderr)
        sys.exit(1)
    unittest.main(argv=sys.argv[:1])
