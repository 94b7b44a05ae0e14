#!/usr/bin/env python3
"""The source layout rules the README states, checked over the libraries (common, simulator, model, probe):

1. Public headers live under <library>/include/orbitlaw/<library>/ (plus the umbrella orbitlaw/<library>.hpp);
   a library has no other include root. Private headers sit beside the sources.
2. No two translation units of a library include each other's headers (a.cpp includes b.hpp while b.cpp
   includes a.hpp): a cycle means the two files are one purpose split badly, or a third is missing.
3. No function is longer than 120 lines (from the line of its opening brace to its closing one).

Prints every violation as file:line: message and exits 1 if there is any. `--list N` prints the functions
longer than N lines instead (for refactoring)."""
import argparse
import pathlib
import re
import sys

# (folder, name): probe/sr is the symbolic-regression engine, a library of its own inside probe/.
LIBRARIES = [("common", "common"), ("simulator", "simulator"), ("model", "model"), ("probe", "probe"),
             ("probe/sr", "sr")]
MAX_FUNCTION_LINES = 120
SOURCE_SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh"}


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (newlines kept, so lines still count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", "", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|return|try)\s*$")
NOT_FUNCTION = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def functions(path):
    """(name, first line, line count) of every function body in the file, lambdas counted with their
    enclosing function (a function inside a class or namespace counts on its own)."""
    text = strip_comments_and_strings(path.read_text(encoding="utf-8", errors="replace"))
    found = []
    stack = []  # for each open brace: (is a function body, name, line)
    line = 1
    head_start = 0  # where the text before the next brace begins
    in_function = 0
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[head_start:i].strip()
            is_function = False
            name = ""
            if in_function == 0 and head.endswith(")") or re.search(r"\)\s*(const|noexcept|override|final|"
                                                                      r"->\s*[\w:<>&*, ]+|\s)*$", head):
                if in_function == 0 and not NOT_FUNCTION.search(head) and not re.search(r"=\s*$", head):
                    m = re.search(r"([~\w:]+(?:<[^<>]*>)?)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)[^()]*$", head)
                    if m and not CONTROL.search(head[: m.start(1)] + m.group(1)):
                        name = m.group(1)
                        is_function = not name.endswith("]") and name not in {"if", "for", "while", "switch",
                                                                              "catch", "return"}
            stack.append((is_function, name, line))
            in_function += is_function
            head_start = i + 1
        elif c == "}":
            if stack:
                is_function, name, first = stack.pop()
                if is_function:
                    in_function -= 1
                    found.append((name, first, line - first + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def library_sources(root, folder):
    """The library's files, without those of a library nested inside it."""
    nested = [root / f for f, _ in LIBRARIES if f != folder and f.startswith(folder + "/")]
    for path in sorted((root / folder).rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not any(path.is_relative_to(n) for n in nested):
            yield path


def check_header_roots(root, folder, library):
    problems = []
    include_root = root / folder / "include"
    for path in library_sources(root, folder):
        if path.suffix not in {".hpp", ".cuh"}:
            continue
        rel = path.relative_to(root)
        if path.is_relative_to(include_root):
            inner = path.relative_to(include_root)
            umbrella = inner == pathlib.Path("orbitlaw") / f"{library}.hpp"
            if not umbrella and inner.parts[:2] != ("orbitlaw", library):
                problems.append(f"{rel}:1: a public header belongs under {folder}/include/orbitlaw/{library}/")
        elif any(part == "include" for part in rel.parts):
            problems.append(f"{rel}:1: a second include root in {folder}/ (one per library: {folder}/include)")
    return problems


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_mutual_includes(root, folder, library):
    units = {}  # stem -> headers its .cpp includes (by file name)
    for path in library_sources(root, folder):
        if path.suffix in {".cpp", ".cu"}:
            names = {pathlib.Path(h).stem for h in INCLUDE.findall(path.read_text(encoding="utf-8"))}
            units.setdefault(path.stem, set()).update(names - {path.stem})
    problems = []
    for a, included in sorted(units.items()):
        for b in sorted(included):
            if a < b and a in units.get(b, set()):
                problems.append(f"{library}: {a}.cpp includes {b}.hpp and {b}.cpp includes {a}.hpp")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    parser.add_argument("--list", type=int, metavar="N", help="print the functions longer than N lines")
    args = parser.parse_args()
    root = args.root
    if args.list is not None:
        rows = []
        for folder, _ in LIBRARIES + [("app", "app")]:
            for path in library_sources(root, folder):
                rows += [(n, path.relative_to(root), line, name) for name, line, n in functions(path) if n > args.list]
        for n, rel, line, name in sorted(rows, reverse=True):
            print(f"{n:5d}  {rel}:{line}  {name}")
        return 0
    problems = []
    for folder, library in LIBRARIES:
        problems += check_header_roots(root, folder, library)
        problems += check_mutual_includes(root, folder, library)
        for path in library_sources(root, folder):
            for name, line, n in functions(path):
                if n > MAX_FUNCTION_LINES:
                    problems.append(f"{path.relative_to(root)}:{line}: {name} is {n} lines "
                                    f"(at most {MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layout: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check_layout: headers, includes and function lengths as the README states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
