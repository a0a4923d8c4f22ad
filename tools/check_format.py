#!/usr/bin/env python3
"""Checks that the tracked C++/CUDA sources are formatted as .clang-format says.

  python3 tools/check_format.py            # check: lists each file that differs, exit 1 if any
  python3 tools/check_format.py --fix      # reformat those files in place
  python3 tools/check_format.py FILE...    # only these files

The tree is formatted with clang-format 14 (Debian 12's). Another major version formats some
constructs differently, so the check runs only with version 14: CLANG_FORMAT names the binary,
else clang-format-14, else clang-format. With none of version 14 it prints "SKIP: <why>" and exits
77 (the ctest format.check has SKIP_RETURN_CODE 77). Files: `git ls-files` of *.h, *.cpp, *.cu,
*.cuh, less EXCLUDED. Plain Python 3.
"""
import difflib
import fnmatch
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
VERSION = 14
PATTERNS = ["*.h", "*.cpp", "*.cu", "*.cuh"]
# fnmatch patterns of paths the check leaves alone (none today).
EXCLUDED = []
SKIP = 77


def find_clang_format():
    """The binary to use, or (None, why not)."""
    candidates = [os.environ["CLANG_FORMAT"]] if os.environ.get("CLANG_FORMAT") else ["clang-format-14", "clang-format"]
    seen = []
    for name in candidates:
        path = shutil.which(name)
        if path is None:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", out)
        if m and int(m.group(1)) == VERSION:
            return path, None
        seen.append(f"{name} is version {m.group(1) if m else '?'}")
    if not seen and os.environ.get("CLANG_FORMAT"):
        return None, f"CLANG_FORMAT={os.environ['CLANG_FORMAT']} is not found"
    if not seen:
        return None, f"clang-format is not installed (apt-get install clang-format-{VERSION})"
    return None, (f"{'; '.join(seen)}, and the tree is formatted with clang-format {VERSION}, which formats some "
                  f"constructs differently: install clang-format-{VERSION} or set CLANG_FORMAT")


def tracked_sources():
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--"] + PATTERNS, cwd=ROOT, capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every source under the tree
        files = sorted(str(p.relative_to(ROOT)) for pat in PATTERNS for p in ROOT.rglob(pat)
                       if not any(part.startswith("build") or part.startswith(".") for part in p.relative_to(ROOT).parts))
    return [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in EXCLUDED) and (ROOT / f).exists()]


def main(argv):
    fix = "--fix" in argv
    named = [a for a in argv if a != "--fix"]
    # Files named on the command line are taken only where they are C++/CUDA sources (PATTERNS): clang-format
    # would "format" a Python file or a README as C++.
    skipped = [f for f in named if not any(fnmatch.fnmatch(pathlib.Path(f).name, pat) for pat in PATTERNS)]
    for f in skipped:
        print(f"{f}: not a C++/CUDA source ({', '.join(PATTERNS)}): left as it is")
    files = [f for f in named if f not in skipped] if named else tracked_sources()
    clang_format, why = find_clang_format()
    if clang_format is None:
        print(f"SKIP: {why}")
        return SKIP
    bad = []
    for f in files:
        path = ROOT / f
        text = path.read_text()
        formatted = subprocess.run([clang_format, "--style=file", f"--assume-filename={path}"], input=text,
                                   capture_output=True, text=True, check=True, cwd=ROOT).stdout
        if formatted == text:
            continue
        bad.append(f)
        if fix:
            path.write_text(formatted)
            continue
        diff = list(difflib.unified_diff(text.splitlines(), formatted.splitlines(), f, f + " (formatted)", n=0,
                                         lineterm=""))
        changed = sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))
        print(f"{f}: {changed} line(s) differ, first:")
        print("\n".join("    " + line for line in diff[2:12]))
    if fix:
        print(f"reformatted {len(bad)} of {len(files)} files")
        return 0
    if bad:
        print(f"\n{len(bad)} of {len(files)} files are not formatted as .clang-format says "
              f"(clang-format {VERSION}): python3 tools/check_format.py --fix")
        return 1
    print(f"all {len(files)} files formatted (clang-format {VERSION}, {clang_format})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
