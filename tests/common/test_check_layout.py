#!/usr/bin/env python3
"""scripts/check_layout.py: it finds each kind of violation in a made-up tree (a check that cannot fail is no
check), and the repository itself passes."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layout.py"


def run(root):
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


class CheckLayout(unittest.TestCase):
    def test_finds_long_functions_mutual_includes_and_stray_include_roots(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            src = root / "probe" / "src"
            src.mkdir(parents=True)
            body = "\n".join(f"  x += {i};" for i in range(125))
            (src / "long.cpp").write_text(f"int long_one(int x) {{\n{body}\n  return x;\n}}\n"
                                          "int short_one(int x) {\n  if (x) {\n    return 1;\n  }\n  return 0;\n}\n")
            (src / "a.cpp").write_text('#include "b.hpp"\nint a() { return 1; }\n')
            (src / "b.cpp").write_text('#include "a.hpp"\nint b() { return 2; }\n')
            (root / "model" / "shared" / "include" / "orbitlaw").mkdir(parents=True)
            (root / "model" / "shared" / "include" / "orbitlaw" / "x.hpp").write_text("#pragma once\n")
            (root / "common" / "include" / "orbitlaw").mkdir(parents=True)
            (root / "common" / "include" / "orbitlaw" / "loose.hpp").write_text("#pragma once\n")
            code, out = run(root)
            self.assertEqual(code, 1, out)
            self.assertIn("probe/src/long.cpp:1: long_one is 128 lines (at most 120)", out)
            self.assertNotIn("short_one", out)
            self.assertIn("a.cpp includes b.hpp and b.cpp includes a.hpp", out)
            self.assertIn("model/shared/include/orbitlaw/x.hpp:1: a second include root", out)
            self.assertIn("common/include/orbitlaw/loose.hpp:1: a public header belongs under", out)

    def test_the_repository_passes(self):
        code, out = run(ROOT)
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
