#!/usr/bin/env python3
"""The README's answer table against the results pages (scripts/readme_answer.py --check): it agrees on this
checkout, and the check fails on a README whose table was edited by hand or lost its markers.

usage: test_readme_answer.py PYTHON   (exit 0 when every test passes)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PYTHON = sys.argv[1] if len(sys.argv) > 1 else sys.executable
SCRIPT = os.path.join(ROOT, "scripts", "readme_answer.py")
PAGES = os.path.join(ROOT, "docs", "results")


def check(readme):
    return subprocess.run([PYTHON, SCRIPT, "--check", "--readme", readme, "--pages", PAGES],
                          capture_output=True, text=True)


class ReadmeAnswer(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.readme = os.path.join(self.tmp, "README.md")
        shutil.copy(os.path.join(ROOT, "README.md"), self.readme)
        with open(self.readme) as f:
            self.text = f.read()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_the_readme_agrees_with_the_pages(self):
        result = subprocess.run([PYTHON, SCRIPT, "--check"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def edited(self, old, new):
        self.assertIn(old, self.text)
        with open(self.readme, "w") as f:
            f.write(self.text.replace(old, new, 1))
        return check(self.readme)

    def test_a_hand_edited_number_fails(self):
        row = next(line for line in self.text.splitlines() if line.startswith("| [") and "| 2 of 3 |" in line)
        edit = row.replace("| 2 of 3 |", "| 3 of 3 |")
        result = self.edited(row, edit)
        self.assertEqual(result.returncode, 1)
        self.assertIn("-" + edit, result.stdout)  # the diff shows the edited row against the page's
        self.assertIn("+" + row, result.stdout)
        self.assertIn("differs from the results pages", result.stderr)

    def test_a_dropped_row_fails(self):
        row = next(line for line in self.text.splitlines() if line.startswith("| ["))
        self.assertEqual(self.edited(row + "\n", "").returncode, 1)

    def test_a_readme_without_the_markers_fails(self):
        result = self.edited("<!-- end of the generated answer-table -->", "")
        self.assertEqual(result.returncode, 1)
        self.assertIn("must hold the line", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
