#!/usr/bin/env python3
"""`report.py merge` on the fixture bench/testdata/sample.json cut in two parts: the merged run has
every (benchmark, shape) of both, the first part's where both have one, each part's command in its
context; parts of another commit or GPU are refused. The ctest bench.report_merge runs it. Plain
Python 3 (unittest).
"""

import copy
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402
from results import load  # noqa: E402

SAMPLE = os.path.join(HERE, "testdata", "sample.json")


class Merge(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="report-merge-")
        with open(SAMPLE) as f:
            self.run = json.load(f)
        late = [b for b in self.run["benchmarks"] if "/4096x4096x4096/" in b["name"]]
        # Part 1 stops before step 4 at 4096^3; part 2 has cuBLAS and step 4 there, cuBLAS's
        # numbers changed so that the test sees which part's it kept.
        self.part1 = dict(self.run, benchmarks=[b for b in self.run["benchmarks"]
                                                if not b["name"].startswith("step04/4096x4096x4096/")])
        self.part2 = copy.deepcopy(dict(self.run, benchmarks=late))
        self.part2["context"]["command"] = "tools/compare.sh --sizes=4096"
        for b in self.part2["benchmarks"]:
            if b["name"].startswith("cublas/"):
                b["TFLOPS"] = 1.0
        self.assertTrue(any(b["name"].startswith("step04/4096x4096x4096/") for b in late))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, run):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(run, f)
        return path

    def test_parts_make_the_whole_run(self):
        out = os.path.join(self.dir, "merged.json")
        self.assertEqual(report.main(["merge", self.write("1.json", self.part1), self.write("2.json", self.part2),
                                      "--out", out]), 0)
        merged, whole = load(out), load(SAMPLE)
        self.assertEqual(sorted(merged.entries), sorted(whole.entries))
        for key, entry in whole.entries.items():
            self.assertEqual(merged.entries[key].tflops, entry.tflops, key)  # cuBLAS from part 1
        with open(out) as f:
            context = json.load(f)["context"]
        self.assertEqual([p["command"] for p in context["parts"]],
                         [self.run["context"]["command"], "tools/compare.sh --sizes=4096"])
        self.assertEqual([p["benchmarks_kept"] for p in context["parts"]], [len(whole.entries) - 1, 1])
        self.assertIn(" ; tools/compare.sh --sizes=4096", context["command"])

    def test_another_commit_is_refused(self):
        self.part2["context"]["git_commit"] = "0000000"
        out = os.path.join(self.dir, "merged.json")
        self.assertEqual(report.main(["merge", self.write("1.json", self.part1), self.write("2.json", self.part2),
                                      "--out", out]), 1)
        self.assertFalse(os.path.exists(out))

    def test_one_part_is_a_usage_error(self):
        with self.assertRaises(SystemExit):
            report.main(["merge", self.write("1.json", self.part1), "--out", os.path.join(self.dir, "m.json")])


if __name__ == "__main__":
    unittest.main()
