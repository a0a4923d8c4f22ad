#!/usr/bin/env python3
"""The rules that keep each step a lesson (docs/design.md, "A step is a lesson"), checked on the tree:

  python3 tools/check_lessons.py [--root DIR]

- every step README is at most 1,300 words of prose (the generated table between its
  `<!-- results:... -->` markers is data and not counted) and has a "## Why these numbers" section;
- a step file's opening comment is the same in every step of its track but for its first line (the
  step line) and its numbered "What this step adds:" list;
- the diff from the previous step's file to a step's file changes at most 250 lines (300 for step
  7, which splits the kernel into roles; 410 for step 12, whose tiling becomes the template's
  parameter and so touches every line that names the tile), solution markers not counted.

Prints every broken rule, naming the file; exit status 1 if any, else 0. The ctest docs.lessons
runs it. Plain Python 3.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

MAX_WORDS = 1300
MAX_CHANGED = 250
MAX_CHANGED_STEP = {7: 300, 12: 410}
TRACKS = ("hopper", "blackwell")
GENERATED = re.compile(r"<!-- results:.*?<!-- /results -->", re.S)
MARKER = re.compile(r"^\s*// (BEGIN|END) SOLUTION")


def step_dirs(root):
    dirs = sorted(d for d in (root / "steps").iterdir() if d.is_dir() and re.match(r"\d\d_", d.name))
    return [(int(d.name[:2]), d) for d in dirs]


def readme_problems(readme):
    text = readme.read_text()
    words = len(GENERATED.sub("", text).split())
    problems = []
    if words > MAX_WORDS:
        problems.append(f"{readme}: {words} words of prose, more than {MAX_WORDS}")
    if not re.search(r"^## Why these numbers\s*$", text, re.M):
        problems.append(f"{readme}: no '## Why these numbers' section")
    return problems


def header(source):
    """The opening comment without its step line and its numbered list of what the step adds."""
    lines = []
    for line in source.read_text().splitlines()[1:]:
        if not line.startswith("//"):
            break
        lines.append(line)
    out, in_list = [], False
    for line in lines:
        if line.startswith("// What this step adds"):
            in_list = True
            out.append(line)
            continue
        if in_list and (re.match(r"//\s+\d+\.\s", line) or re.match(r"//\s{4,}\S", line)):
            continue
        in_list = False
        out.append(line)
    return out


def changed_lines(before, after):
    """Lines added and removed, as `diff` counts them (its diff is the minimal one a reader sees;
    difflib's is not always), solution markers left out of both files."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, f in enumerate((before, after)):
            path = pathlib.Path(tmp) / str(i)
            path.write_text("".join(line for line in f.read_text().splitlines(True) if not MARKER.match(line)))
            paths.append(str(path))
        out = subprocess.run(["diff", "-U0", *paths], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    root = pathlib.Path(p.parse_args(argv).root)
    steps = step_dirs(root)
    problems = []
    for _, d in steps:
        problems += readme_problems(d / "README.md")
    for track in TRACKS:
        files = [(n, d / f"{track}.cu") for n, d in steps if (d / f"{track}.cu").exists()]
        first_n, first = files[0]
        for n, f in files[1:]:
            if header(f) != header(first):
                problems.append(f"{f}: its opening comment differs from step {first_n}'s outside the step line and "
                                "the numbered list of what the step adds")
        for (_, before), (n, after) in zip(files, files[1:]):
            count, limit = changed_lines(before, after), MAX_CHANGED_STEP.get(n, MAX_CHANGED)
            if count > limit:
                problems.append(f"{after}: {count} lines changed from {before}, more than {limit}")
    for line in problems:
        print(line)
    print(f"{len(steps)} steps, {len(TRACKS)} tracks: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
