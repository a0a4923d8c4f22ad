#!/usr/bin/env python3
"""The READMEs' generated tables (bench/readmes.py, `report.py readmes` and `publish`) on the
fixture bench/testdata/sample.json (steps 1-4 at 1024^3, 3000^3 and 4096^3, steps 1-2 at their own
shapes; step 3 WRONG at 3000^3), in a scratch tree: the markers are filled, text outside them is
untouched, a step table with sizes= has exactly those rows in that order, a step the run lacks says
so, a bad marker fails, and a second run changes nothing. The ctest bench.readme_tables runs it.
Plain Python 3 (unittest).
"""

import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import readmes  # noqa: E402
import report  # noqa: E402
from results import load  # noqa: E402

SAMPLE = os.path.join(HERE, "testdata", "sample.json")


def marked(name, inside="old table, replaced\n"):
    return f"before\n\n<!-- results:{name} -->\n{inside}<!-- /results -->\n\nafter\n"


class ReadmeTables(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="readme-tables-")
        self.files = {
            "README.md": marked("ladder"),
            "steps/01_single_tile/README.md": marked("step01"),
            "steps/02_k_loop/README.md": marked("step02", ""),
            "steps/03_tiling/README.md": marked("step03"),
            "steps/04_tma/README.md": marked("step04") + "\n" + marked("step04"),
            "steps/05_pipeline/README.md": marked("step05"),  # not in the run
            "steps/06_persistent/README.md": "no markers here\n",
        }
        for rel, text in self.files.items():
            self.write(rel, text)
        self.results = load(SAMPLE)

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return f.read()

    def update(self, check=False):
        changed = readmes.update(self.results, self.root, check=check)
        return sorted(os.path.relpath(p, self.root) for p in changed)

    def test_fills_markers_and_is_idempotent(self):
        self.assertEqual(self.update(check=True), sorted(r for r in self.files if "06_" not in r))
        first = self.update()
        self.assertEqual(len(first), 6)
        after_first = {rel: self.read(rel) for rel in self.files}
        self.assertEqual(self.update(), [], "a second run on the same JSON changed a README")
        self.assertEqual(self.update(check=True), [])
        for rel in self.files:
            self.assertEqual(self.read(rel), after_first[rel], rel)
        # Outside the markers nothing changed; inside, the old text is gone.
        for rel in self.files:
            text = self.read(rel)
            if "<!--" in text:
                self.assertTrue(text.startswith("before\n\n<!-- results:"), rel)
                self.assertTrue(text.endswith("<!-- /results -->\n\nafter\n"), rel)
                self.assertNotIn("old table", text, rel)
        self.assertEqual(self.read("steps/06_persistent/README.md"), "no markers here\n")

    def test_step_tables(self):
        self.update()
        step3 = self.read("steps/03_tiling/README.md")
        self.assertIn("SYNTHETIC TEST DATA", step3)
        self.assertIn("commit `0000000-synthetic`", step3)
        self.assertIn("[docs/results.md](../../docs/results.md)", step3)
        self.assertIn("| 4096^3 | 87.7 | 12.7% |", step3)
        self.assertIn("| 3000^3 | WRONG | WRONG |", step3)
        self.assertIn("Step 2 is not in this run at these sizes.", step3)
        step4 = self.read("steps/04_tma/README.md")
        self.assertIn("| size | step 4 TFLOPS | step 4 % of cuBLAS | step 3 % of cuBLAS |", step4)
        self.assertIn("| 3000^3 | 238 | 39.4% | WRONG |".replace("238", "237.6"), step4)
        self.assertEqual(step4.count("| 1024^3 |"), 2)  # both marked places
        step1 = self.read("steps/01_single_tile/README.md")
        self.assertIn("| 128x128x64 | 0.28 | 140.0% |", step1)
        self.assertIn("runs only at its own shape", step1)
        step5 = self.read("steps/05_pipeline/README.md")
        self.assertIn("Step 5 is not yet measured", step5)
        self.assertNotIn("| size |", step5)

    def test_ladder(self):
        self.update()
        top = self.read("README.md")
        self.assertIn("[docs/results.md](docs/results.md)", top)
        self.assertIn("| TFLOPS (% of cuBLAS) | 4096^3 | 3000^3 |", top)
        self.assertIn("| step 4 | 279.9 (39.4%) | 237.6 (39.4%) |", top)
        self.assertIn("| step 3 | 87.7 (12.7%) | WRONG |", top)
        self.assertIn("| step 5 | not yet measured | - |", top)  # on disk, not in the run
        self.assertIn("| cuBLAS | 703.9 | 605.8 |", top)
        self.assertIn("Steps 1 and 2 run only at their own shapes", top)
        self.assertNotIn("| step 1 |", top)

    def rows(self, rel):
        """The size column of every table row in a README, in order."""
        return [line.split("|")[1].strip() for line in self.read(rel).splitlines()
                if line.startswith("| ") and not line.startswith("| size ")]

    def test_named_sizes(self):
        self.write("steps/04_tma/README.md", marked("step04 sizes=4096^3,1024x1024x1024"))
        self.update()
        step4 = self.read("steps/04_tma/README.md")
        # Exactly the sizes named, in the order named; the one left out is counted.
        self.assertEqual(self.rows("steps/04_tma/README.md"), ["4096^3", "1024^3"])
        self.assertIn("| 4096^3 | 279.9 | 39.4% | 12.7% |", step4)
        self.assertNotIn("| 3000^3 |", step4)
        self.assertIn("1 more size(s) in docs/results.md.", step4)
        self.assertIn("<!-- results:step04 sizes=4096^3,1024x1024x1024 -->", step4)  # the marker stays
        self.assertEqual(self.update(check=True), [])

    def test_named_size_not_in_run(self):
        self.write("steps/04_tma/README.md", marked("step04 sizes=3000,8192^3"))
        self.update()
        step4 = self.read("steps/04_tma/README.md")
        self.assertEqual(self.rows("steps/04_tma/README.md"), ["3000^3"])
        self.assertIn("Not in this run: 8192^3.", step4)
        self.assertIn("2 more size(s) in docs/results.md.", step4)

    def test_named_sizes_of_a_step_not_in_the_run(self):
        self.write("steps/05_pipeline/README.md", marked("step05 sizes=4096^3,3000^3"))
        self.update()
        step5 = self.read("steps/05_pipeline/README.md")
        self.assertIn("Step 5 is not yet measured", step5)
        self.assertNotIn("| size |", step5)

    def test_bad_sizes_fail(self):
        for attrs in ("sizes=4096^3,4096x4096x4096",   # the same size twice
                      "sizes=1,2,3,4,5,6,7",            # more than 6
                      "sizes=4096^2",                   # not a size
                      "sizes=",                         # empty
                      "rows=4096^3",                    # unknown attribute
                      "sizes=1024 sizes=4096"):         # given twice
            self.write("steps/04_tma/README.md", marked(f"step04 {attrs}"))
            with self.assertRaises(ValueError, msg=attrs):
                self.update()
        self.write("README.md", marked("ladder sizes=4096^3"))  # sizes= is for step tables
        self.write("steps/04_tma/README.md", marked("step04"))
        with self.assertRaises(ValueError):
            self.update()

    def test_unclosed_marker_fails(self):
        self.write("steps/03_tiling/README.md", "<!-- results:step03 -->\nno end\n")
        with self.assertRaises(ValueError):
            self.update()
        self.write("steps/03_tiling/README.md", "<!-- results:step03 sizes=4096^3 -->\nno end\n")
        with self.assertRaises(ValueError):
            self.update()

    def test_unknown_marker_fails(self):
        self.write("steps/03_tiling/README.md", marked("stepX"))
        with self.assertRaises(ValueError):
            self.update()

    def test_publish_keeps_the_log_and_fills_the_tables(self):
        run = os.path.join(self.root, "run")
        os.makedirs(run)
        shutil.copyfile(SAMPLE, os.path.join(run, "bench.json"))
        with open(os.path.join(run, "bench.log"), "w") as f:
            f.write("the console output\n")
        docs = os.path.join(self.root, "docs")
        report.publish(os.path.join(run, "bench.json"), docs)  # the plot may be skipped (no matplotlib)
        with open(os.path.join(docs, "results.log")) as f:
            self.assertEqual(f.read(), "the console output\n")
        with open(os.path.join(docs, "results.md")) as f:
            self.assertIn("[log](results.log)", f.read())
        self.assertIn("| 4096^3 | 87.7 | 12.7% |", self.read("steps/03_tiling/README.md"))
        # Publishing docs/results.json again keeps its log; another run without a log drops it.
        report.publish(os.path.join(docs, "results.json"), docs)
        self.assertTrue(os.path.isfile(os.path.join(docs, "results.log")))
        os.remove(os.path.join(run, "bench.log"))
        report.publish(os.path.join(run, "bench.json"), docs)
        self.assertFalse(os.path.isfile(os.path.join(docs, "results.log")))


if __name__ == "__main__":
    unittest.main()
