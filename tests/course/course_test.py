#!/usr/bin/env python3
"""The course tools against known hand-ins (ctest -L course; tests/course/CMakeLists.txt).

  course_test.py --workdir DIR CASE

Every hand-in is made here from the current step files: the reference itself, the handout's blank
files, and known-wrong ones made by replacing exact text (a text that is no longer in the step file
fails the test, naming it, so a case never grades something else by accident). Each is graded on
the emulator in DIR/grade, which the `prepare` case builds once (the ctest fixture): a grading there
recompiles only the handed-in files. Plain Python 3.
"""
import argparse
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "course"))

import handout  # noqa: E402

STEP = 5  # the step the gradings use: it has a wait, expect_tx, a tile origin and a stage release
FOLDER = "05_pipeline"
BUILD_DIR = [None]  # --build-dir
TIME_LIMIT = 5  # seconds per run for the gradings here (the hang case must stop within it)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def step_file(track):
    return (ROOT / "steps" / FOLDER / ("%s.cu" % track)).read_text()


def edit(text, old, new, what):
    n = text.count(old)
    if n != 1:
        raise Failed("%s: expected the step file to hold this text once, found it %d times:\n%s" % (what, n, old))
    return text.replace(old, new)


def make_tar(path, files, extra=None):
    """A tar of {path: text}; `extra` adds raw TarInfo members (links, odd paths)."""
    with tarfile.open(path, "w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in extra or []:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def helpers():
    """The files outside steps/ that hold regions of STEP (a lesson in a helper of common/): part of a hand-in."""
    import grade as g
    return sorted(g.helper_files(handout.read_tree(ROOT), {STEP}))


def handin(dirpath, name, hopper=None, blackwell=None, others=None):
    """A hand-in of STEP: its two step files (the reference's unless given) and its helpers (`others`: {path:
    text}, else the reference's)."""
    files = {"steps/%s/hopper.cu" % FOLDER: hopper if hopper is not None else step_file("hopper"),
             "steps/%s/blackwell.cu" % FOLDER: blackwell if blackwell is not None else step_file("blackwell")}
    for path in helpers():
        files[path] = (others or {}).get(path, (ROOT / path).read_text())
    return make_tar(os.path.join(dirpath, name + ".tar"), files)


def grade(workdir, tar, *extra, stdout=None):
    """Grades `tar` (step STEP, the emulator) in the shared grading directory: (the step's report, seconds);
    `stdout` (a list) receives the grader's standard output."""
    out = os.path.join(workdir, os.path.basename(tar) + ".json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, str(ROOT / "tools" / "grade"), tar, "--steps", str(STEP), "--workdir",
           os.path.join(workdir, "grade"), "--device", "emu", "--json", out, "--time-limit", str(TIME_LIMIT),
           "--quiet"] + list(extra)
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    print(r.stdout)
    print(r.stderr, file=sys.stderr)
    check(r.returncode == 0, "tools/grade exited %d" % r.returncode)
    if stdout is not None:
        stdout.append(r.stdout)
    with open(out) as f:
        report = json.load(f)
    return report["steps"][0], seconds


def reasons(step, part):
    return " || ".join(x["reason"] for x in step["parts"][part]["lost"])


# ---------------------------------------------------------------------------------------------
# Cases.
# ---------------------------------------------------------------------------------------------
def case_handout_single(workdir):
    """The handout of one step: its regions are TODOs, later steps and their targets are gone, no
    solution line of it is anywhere in the tree."""
    out = os.path.join(workdir, "handout-single")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([str(ROOT / "tools" / "handout"), "--steps", str(STEP), "--out", out], capture_output=True,
                       text=True)
    print(r.stdout, r.stderr)
    check(r.returncode == 0, "tools/handout failed")
    steps_cmake = pathlib.Path(out, "steps", "CMakeLists.txt").read_text()
    files = handout.read_tree(ROOT)
    for n, folder in handout.steps_of(files).items():
        present = os.path.isdir(os.path.join(out, "steps", folder))
        check(present == (n <= STEP), "steps/%s: %s" % (folder, "missing" if n <= STEP else "not left out"))
        check(("gemm_add_step(%02d " % n in steps_cmake) == (n <= STEP), "gemm_add_step(%02d ...) line" % n)
    for track in ("hopper", "blackwell"):
        text = pathlib.Path(out, "steps", FOLDER, track + ".cu").read_text()
        check('GEMM_TODO("step%02d"' % STEP in text and "BEGIN SOLUTION step%02d" % STEP not in text,
              "%s.cu: the step's regions are not TODOs" % track)
        check('#include "common/todo.cuh"' in text, "%s.cu: common/todo.cuh not included" % track)
    check(not os.path.exists(os.path.join(out, "tools", "grade")), "the grader is in the handout")
    absent(out, files, [STEP])


def absent(out, files, assigned):
    """No code line of an assigned region (at least 12 characters, not ordinary code) in the tree."""
    tree = {}
    for dirpath, _, names in os.walk(out):
        if os.path.basename(dirpath) == "build" or "/build/" in dirpath + "/":
            continue
        for name in names:
            path = os.path.join(dirpath, name)
            tree[os.path.relpath(path, out)] = open(path, "rb").read()
    leaks = handout.leak_set(files, tree, set(assigned))
    check(len(leaks) > 3, "too few solution lines to look for (%d): the check would prove nothing" % len(leaks))
    found = handout.find_leaks(tree, leaks)
    check(not found, "solution text in the handout: %s" % found[:5])
    print("%d solution lines of step(s) %s: none in the %d files of the handout" % (len(leaks), assigned, len(tree)))


def case_handout_all(workdir):
    """The handout of every step configures (CMake, hopper track, tests on) and holds no solution line."""
    files = handout.read_tree(ROOT)
    steps = sorted(handout.steps_of(files))
    out = os.path.join(workdir, "handout-all")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([str(ROOT / "tools" / "handout"), "--steps", "%d-%d" % (steps[0], steps[-1]), "--out", out],
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    check(r.returncode == 0, "tools/handout failed")
    absent(out, files, steps)
    r = subprocess.run(["cmake", "-S", out, "-B", os.path.join(out, "build"), "-DGEMM_TRACKS=hopper",
                        "-DGEMM_BUILD_BENCH=OFF"], capture_output=True, text=True)
    print(r.stdout[-2000:], r.stderr[-4000:])
    check(r.returncode == 0, "the handout of all steps does not configure")


def read_written(out):
    """{path: bytes} of a tree written under `out` (its build/ aside)."""
    tree = {}
    for dirpath, dirnames, names in os.walk(out):
        dirnames[:] = [d for d in dirnames if not (d == "build" and dirpath == out)]
        for name in names:
            full = os.path.join(dirpath, name)
            tree[os.path.relpath(full, out).replace(os.sep, "/")] = open(full, "rb").read()
    return tree


def case_handout_links(workdir):
    """No handout sends its reader to a file it leaves out: the handout of each step alone, of all of them and of
    two in a row, written by tools/handout and read back, has no Markdown link to a path it lacks and no unmarked
    mention (prose, comments) of a repository path it lacks (references.dangling). The check itself must find the
    references of the repository's own files (what the handout held before it rewrote them) and of a made-up tree."""
    import references
    files = handout.read_tree(ROOT)
    steps = sorted(handout.steps_of(files))
    for spec in [str(s) for s in steps] + ["%d-%d" % (steps[0], steps[-1]), "5-6"]:
        out = os.path.join(workdir, "handout-links", spec)
        shutil.rmtree(out, ignore_errors=True)
        r = subprocess.run([str(ROOT / "tools" / "handout"), "--steps", spec, "--out", out, "--quiet"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "tools/handout --steps %s failed: %s" % (spec, r.stderr))
        tree = read_written(out)
        found = references.dangling(tree, files)
        check(not found, "the handout of step(s) %s refers to files it leaves out:\n  %s" % (
            spec, "\n  ".join("%s:%d: %s (%s)" % f for f in found[:40])))
        print("steps %s: %d files, no reference to a file left out" % (spec, len(tree)))
        if spec == str(STEP):
            # The same files as the repository has them: the references the handout rewrote.
            raw = references.dangling({p: files[p] for p in tree if p in files}, files)
            want = [("steps/%s/README.md" % FOLDER, "NOTES.md", "link"),
                    ("steps/%s/hopper.cu" % FOLDER, "NOTES.md", "mention"),
                    ("steps/%s/blackwell.cu" % FOLDER, "NOTES.md", "mention"),
                    ("README.md", "tools/grade", "mention")]
            for path, ref, kind in want:
                check(any(f[0] == path and f[2] == ref and f[3] == kind for f in raw),
                      "the check misses the %s to %s in %s as the repository has it: %s" % (kind, ref, path, raw[:20]))
            print("the repository's own files of that handout: %d references to files it leaves out" % len(raw))
    # A made-up tree: a dead link, a dead mention in prose and in a comment, a marked one, one in code (data).
    source = ["a/README.md", "a/here.md", "b/gone.md", "b/kept.md", "c/x.cpp"]
    made = {"a/README.md": b"[x](../b/gone.md), [y](here.md), `b/gone.md`, b/kept.md, b/gone.md " +
                           references.LEFT_OUT.encode() + b"\n```sh\ncat b/gone.md\n```\n",
            "a/here.md": b"", "b/kept.md": b"",
            "c/x.cpp": b'const char* p = "b/gone.md";  // b/gone.md\n/* ../b/gone.md */\n'}
    found = sorted((f[0], f[1], f[3]) for f in references.dangling(made, source))
    want = [("a/README.md", 1, "link"), ("a/README.md", 1, "mention"), ("a/README.md", 3, "mention"),
            ("c/x.cpp", 1, "mention"), ("c/x.cpp", 2, "mention")]
    check(found == want, "made-up tree: found %s, want %s" % (found, want))
    have, known = references.Index(made), references.Index(source)
    marked = {p: references.mark(p, d.decode(), have, known).encode() for p, d in made.items()}
    check(not references.dangling(marked, source), "made-up tree, marked: %s" % references.dangling(marked, source))
    check(marked["c/x.cpp"].startswith(b'const char* p = "b/gone.md";') and b"cat b/gone.md  # " in marked["a/README.md"],
          "marking changed code or broke a command: %s" % marked)


def case_handout_commands(workdir, build_dir):
    """HANDOUT.md's "Test as the grader does": its emulated runs are the grader's (its shapes with the public
    demo seed, its emulated SMs: 2 for step 5, 8 for step 11), its GPU runs too, and they run as written: each
    emulated run of step 5, both tracks, on this build's step05 (the reference solution) with the first seed of
    the loop ends in `verdict: match`."""
    import grade as g
    files = handout.read_tree(ROOT)
    for step in (STEP, 11):
        tree, _ = handout.make_tree(files, [step])
        text = tree["HANDOUT.md"].decode()
        check("## Test as the grader does" in text, "step %d: HANDOUT.md has no section on testing" % step)
        block = text.split("## Test as the grader does", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
        exe = "./build/step%02d" % step
        emulated = [l.strip() for l in block.split("\n") if l.strip().startswith(exe + " --device emu")]
        on_gpu = [l.strip() for l in block.split("\n") if l.strip().startswith(exe + " --check-only")]
        seeds = re.search(r"^for seed in ([\d ]+); do$", block, re.M)
        check(seeds and len(seeds.group(1).split()) >= 3, "step %d: no loop over several emulator seeds" % step)
        check("for track in hopper blackwell; do" in block, "step %d: not both tracks" % step)

        def shape(line):
            m = re.search(r"--m (\d+) --n (\d+) --k (\d+)", line)
            return (int(m.group(1)), int(m.group(2)), int(m.group(3))), "--exact" in line
        want = [(sh, ex) for _, sh, ex in g.draw_cases(step, g.DEMO_SEED)]
        check([shape(l) for l in emulated] == want, "step %d: shapes %s, the grader's %s" % (
            step, [shape(l) for l in emulated], want))
        check([shape(l) for l in on_gpu] == [(sh, ex) for _, sh, ex in g.gpu_cases(step, g.DEMO_SEED)],
              "step %d: the GPU runs are not the grader's: %s" % (step, on_gpu))
        sms = "--emu-sms %d " % g.emu_sms(step)
        check(all(sms in l and "--emu-seed $seed" in l and "--track $track" in l for l in emulated),
              "step %d: the runs do not all use %s, the loop's seed and track: %s" % (step, sms, emulated))
        if step != STEP:
            continue
        first = seeds.group(1).split()[0]
        for line in emulated:
            for track in ("hopper", "blackwell"):
                cmd = line.replace("$track", track).replace("$seed", first).split()
                cmd[0] = os.path.join(build_dir, os.path.basename(cmd[0]))
                r = g.run(cmd, g.RUN_LIMIT_S)
                ok = r.rc == 0 and re.search(r"verdict:\s+match", r.out)
                check(ok, "%s: %s" % (" ".join(cmd), "time limit" if r.timed_out else r.out[-1500:]))
                print("%s: match (%.1f s)" % (" ".join(cmd[1:]), r.seconds))


def calls(toks):
    """The names a token list calls: `f(`, `f<...>(`, `ns::f(` (not `x.f(`, `p->f(`)."""
    import regions as rg
    out = []
    for i, t in enumerate(toks):
        if t.kind != "ident" or t.text in rg.KEYWORDS or (i > 0 and toks[i - 1].text in (".", "->")):
            continue
        j = i + 1
        if j < len(toks) and toks[j].text == "<":
            j = rg._skip_template_args(toks, j)
        if j < len(toks) and toks[j].text == "(" and t.text not in out:
            out.append(t.text)
    return out


def wrappers(files):
    """The instruction wrappers of common/: the functions whose definition holds inline PTX (asm), and those that
    call one (mbarrier_wait spins on mbarrier_try_wait_parity). A name's definitions are taken together (the GPU
    build's and the emulator's); preprocessor lines are dropped by the tokenizer, so both builds are read."""
    import regions as rg
    bodies = {}
    for path, data in files.items():
        if not (path.startswith("common/") and rg.is_source(path)):
            continue
        toks = rg.tokenize(data.decode(errors="replace"))
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.kind == "ident" and t.text not in rg.KEYWORDS and i + 1 < len(toks) and toks[i + 1].text == "(" \
                    and not (i > 0 and toks[i - 1].text in (".", "->", "=", "return", "(", ",")):
                depth, j = 0, i + 1
                while j < len(toks):  # the parameter list
                    depth += {"(": 1, ")": -1}.get(toks[j].text, 0)
                    j += 1
                    if depth == 0:
                        break
                while j < len(toks) and toks[j].text in ("const", "noexcept", "override"):
                    j += 1
                if j < len(toks) and toks[j].text == "{":  # a definition: its body
                    depth, k = 0, j
                    while k < len(toks):
                        depth += {"{": 1, "}": -1}.get(toks[k].text, 0)
                        k += 1
                        if depth == 0:
                            break
                    bodies.setdefault(t.text, []).append(toks[j:k])
                    i = k
                    continue
            i += 1
    wrapped = {n for n, bs in bodies.items() if any(x.text == "asm" for b in bs for x in b)}
    while True:
        more = {n for n, bs in bodies.items() if n not in wrapped and any(c in wrapped for b in bs for c in calls(b))}
        if not more:
            return wrapped
        wrapped |= more


def hint_gaps(files, wrapped):
    """[(path, line, tag, missing names)]: the regions whose hint does not name every wrapper their code calls,
    and the number of regions that call one."""
    import regions as rg
    gaps, calling = [], 0
    for path, data in sorted(files.items()):
        if not rg.is_source(path) or b"BEGIN SOLUTION" not in data:
            continue
        text = data.decode(errors="replace")
        lines = text.split("\n")
        for r in rg.find_regions(path, text):
            needed = [n for n in calls(rg.tokenize("\n".join(r.body(lines)))) if n in wrapped]
            calling += bool(needed)
            missing = [n for n in needed if not re.search(r"\b%s\b" % re.escape(n), r.hint)]
            if missing:
                gaps.append((path, r.begin + 1, r.tag, missing))
    return gaps, calling


def case_hints(workdir):
    """Every solution region's hint, the student's TODO, names each instruction wrapper of common/ that the
    region's code calls (the mbarrier waits and arrives, the wgmma fences and waits, the tcgen05 commits and
    fences, the TMA loads and stores, ...): a TODO that leaves one out leaves the student to guess it."""
    files = handout.read_tree(ROOT)
    wrapped = wrappers(files)
    for name in ("mbarrier_wait", "mbarrier_arrive", "wgmma_fence_operands", "wgmma_wait_group", "tcgen05_commit",
                 "tcgen05_fence_after_thread_sync", "tma_load_2d", "tma_store_2d", "cluster_sync", "elect_one_sync"):
        check(name in wrapped, "%s is not found as an instruction wrapper of common/: the check would miss it" % name)
    check("smem_addr" not in wrapped and "make_smem_desc_k_sw128" not in wrapped,
          "a helper that computes a value counts as a wrapper")
    # The check itself: a hint that names the wait but leaves out the fence after it.
    made = {"steps/99_x/hopper.cu": b"void f(float (&acc)[4]) {\n  // BEGIN SOLUTION step99: wgmma_wait_group<0>.\n"
                                    b"  wgmma_wait_group<0>();\n  wgmma_fence_operands(acc);\n"
                                    b"  // END SOLUTION step99\n}\n"}
    found, _ = hint_gaps(made, wrapped)
    check(found == [("steps/99_x/hopper.cu", 2, "step99", ["wgmma_fence_operands"])], "made-up region: %s" % found)
    gaps, calling = hint_gaps(files, wrapped)
    check(calling >= 100, "only %d regions call a wrapper: the check would prove little" % calling)
    check(not gaps, "%d hints leave out operations their region needs:\n  %s" % (
        len(gaps), "\n  ".join("%s:%d (%s): %s" % (p, l, t, ", ".join(m)) for p, l, t, m in gaps)))
    print("%d regions call instruction wrappers of common/ (%d wrappers); every hint names them" % (
        calling, len(wrapped)))


def case_prepare(workdir):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "grade"), "--prepare", "--steps", str(STEP), "--workdir",
                        os.path.join(workdir, "grade"), "--device", "emu"], capture_output=True, text=True)
    print(r.stdout, r.stderr)
    check(r.returncode == 0, "tools/grade --prepare failed")


def case_reference(workdir):
    s, _ = grade(workdir, handin(workdir, "reference"))
    c, i = s["parts"]["correctness"], s["parts"]["implementation"]
    check(c["points"] == c["maximum"], "reference: correctness %s of %s: %s" % (c["points"], c["maximum"],
                                                                                reasons(s, "correctness")))
    check(i["points"] == i["maximum"], "reference: implementation %s of %s: %s" % (i["points"], i["maximum"],
                                                                                   reasons(s, "implementation")))


def case_blank(workdir):
    out = os.path.join(workdir, "handout-blank")
    shutil.rmtree(out, ignore_errors=True)
    files = handout.read_tree(ROOT)
    tree, _ = handout.make_tree(files, [STEP])
    text = {t: tree["steps/%s/%s.cu" % (FOLDER, t)].decode() for t in ("hopper", "blackwell")}
    others = {p: tree[p].decode() for p in helpers()}
    s, _ = grade(workdir, handin(workdir, "blank", text["hopper"], text["blackwell"], others))
    check(s["points"] == 0, "the blank handout scores %s" % s["points"])
    check("TODO step%02d" % STEP in reasons(s, "correctness"), "no TODO message: " + reasons(s, "correctness"))


# Known-wrong hand-ins: (hopper file edits, pattern the correctness reasons must match).
WRONG = {
    "missing_wait": ([('    mbarrier_wait(&smem.full[read.stage], read.full_parity(), WaitTag{"full", "consumer"});\n',
                       "")],
                     r"read while a TMA load writes it|wait on (its|that) mbarrier is missing"),
    "expect_tx": ([("mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);",
                    "mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes / 2);")],
                  r"expect_tx bytes differ from the bytes delivered"),
    "tile_origin": ([("  m0 = (blockIdx.x % tiles_m) * kTileM;\n  n0 = (blockIdx.x / tiles_m) * kTileN;\n",
                      "  m0 = (blockIdx.x / tiles_m) * kTileM;\n  n0 = (blockIdx.x % tiles_m) * kTileN;\n")],
                    r"never written: check the tile each CTA computes|written twice|outside D"),
    "early_release": ([("    wgmma_wait_group<0>();  // this warp's share",
                        "    if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);\n"
                        "    wgmma_wait_group<0>();  // this warp's share"),
                       ("    if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);\n"
                        "    const int64_t next", "    const int64_t next")],
                      r"wgmma\.wait_group|released before|still reads it|overwritten while"),
}


def case_wrong(workdir, name):
    edits, pattern = WRONG[name]
    text = step_file("hopper")
    for old, new in edits:
        text = edit(text, old, new, name)
    s, _ = grade(workdir, handin(workdir, name, hopper=text))
    c = s["parts"]["correctness"]
    check(c["points"] < c["maximum"], "%s keeps every correctness point" % name)
    check(re.search(pattern, reasons(s, "correctness")), "%s: no reason naming the cause (/%s/) in: %s" % (
        name, pattern, reasons(s, "correctness")[:2000]))


def case_rule_track(workdir):
    """A hopper file that breaks a rule on one shape only: only a CTA whose tile starts at row 640 or later
    (the many-tiles shape alone has one) announces half the stage's bytes. Its other runs match, but a broken
    rule is a bug however few shapes show it: the hopper track's correctness scores zero, the blackwell track
    keeps its share, the reason quotes the rule, and the implementation is not lost as a knock-on (the other
    runs executed). The same grading writes the Gradescope and Autolab output, checked against their fields."""
    text = edit(step_file("hopper"), "mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);",
                "mbarrier_arrive_expect_tx(&smem.full[s], m0 >= 640 ? kStageBytes / 2 : kStageBytes);", "rule_track")
    results = os.path.join(workdir, "rule_track.results.json")
    if os.path.exists(results):
        os.remove(results)
    stdout = []
    s, _ = grade(workdir, handin(workdir, "rule_track", hopper=text), "--format", "gradescope,autolab",
                 "--results", results, stdout=stdout)
    c, i = s["parts"]["correctness"], s["parts"]["implementation"]
    hopper = [r for r in c["runs"] if r["run"].startswith("hopper ")]
    bad = [r for r in hopper if not r["ok"]]
    check(len(bad) == 1 and bad[0]["kind"] == "rule" and "many tiles" in bad[0]["run"],
          "one hopper run (the many-tiles one) breaks a rule: %s" % [(r["run"], r["kind"]) for r in bad])
    check(all(r["ok"] for r in c["runs"] if r not in bad), "the other runs match: %s" % reasons(s, "correctness"))
    check(abs(c["points"] - c["maximum"] / 2) < 0.051, "correctness %s of %s: the hopper track's half should be "
          "zero, the blackwell track's kept: %s" % (c["points"], c["maximum"], reasons(s, "correctness")))
    check(re.search(r"hopper track: the emulator reports a broken rule \(`expect_tx bytes differ from the bytes "
                    r"delivered`\) on 1 of its 5", reasons(s, "correctness")),
          "the reason does not quote the rule: " + reasons(s, "correctness"))
    check(i["points"] == i["maximum"], "implementation %s of %s: lost as a knock-on? %s" % (
        i["points"], i["maximum"], reasons(s, "implementation")))
    check_gradescope(results, s)
    check_autolab(stdout[0], s)


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_gradescope(path, s):
    """results.json per the Gradescope autograder specification: score, execution_time, output, visibility,
    tests[] with name, score, max_score, output, visibility."""
    with open(path) as f:
        res = json.load(f)
    vis = ("hidden", "after_due_date", "after_published", "visible")
    check(number(res.get("score")) and abs(res["score"] - s["points"]) < 1e-6,
          "gradescope score: %s" % res.get("score"))
    check(number(res.get("execution_time")) and res["execution_time"] >= 0, "gradescope execution_time")
    check(isinstance(res.get("output"), str) and res["output"], "gradescope output")
    check(res.get("visibility") in vis, "gradescope visibility: %s" % res.get("visibility"))
    tests = res.get("tests")
    check(isinstance(tests, list) and len(tests) == 3, "gradescope tests: a test per part of the step")
    for t in tests:
        check(isinstance(t.get("name"), str) and t["name"], "a test's name: %s" % t)
        check(number(t.get("score")) and number(t.get("max_score")) and 0 <= t["score"] <= t["max_score"] + 1e-9,
              "a test's score and max_score: %s" % t)
        check(isinstance(t.get("output"), str), "a test's output: %s" % t)
        check(t.get("visibility") in vis, "a test's visibility: %s" % t)
    check(abs(sum(t["score"] for t in tests) - res["score"]) < 0.051, "the tests' scores add up to the score")
    check(abs(sum(t["max_score"] for t in tests) - s["graded_maximum"]) < 0.051,
          "the tests' max_score add up to the graded maximum")
    corr = [t for t in tests if t["name"].endswith(": correctness")]
    check(corr and "expect_tx bytes differ" in corr[0]["output"], "the correctness test's output quotes the rule")


def check_autolab(stdout, s):
    """Autolab's autoresult: the output's last line is {"scores": {...}, "scoreboard": [...]}."""
    last = [l for l in stdout.split("\n") if l.strip()][-1]
    try:
        res = json.loads(last)
    except ValueError:
        raise Failed("the output's last line is not JSON: %s" % last)
    check(isinstance(res, dict) and set(res) == {"scores", "scoreboard"}, "autoresult keys: %s" % last)
    check(res["scores"] == {"step%02d" % STEP: s["points"]}, "autoresult scores: %s" % res["scores"])
    check(isinstance(res["scoreboard"], list) and res["scoreboard"][0] == s["points"] and
          all(number(x) for x in res["scoreboard"]), "autoresult scoreboard: %s" % res["scoreboard"])


def case_cublas(workdir):
    """cuBLAS called from the GPU build only (the emulated build cannot include it): the emulator runs
    stay correct, and the step still scores no implementation points."""
    text = step_file("hopper")
    text = edit(text, '#include <cuda_fp16.h>\n',
                '#include <cuda_fp16.h>\n#if !defined(GEMM_EMULATED)\n#include <cublas_v2.h>\n#endif\n', "cublas")
    text = edit(text, "Status run(const Problem& p, cudaStream_t stream) {\n",
                "Status run(const Problem& p, cudaStream_t stream) {\n#if !defined(GEMM_EMULATED)\n"
                "  cublasHandle_t handle = nullptr;\n"
                "  if (cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);\n#endif\n", "cublas")
    s, _ = grade(workdir, handin(workdir, "cublas", hopper=text))
    i = s["parts"]["implementation"]
    check(i["points"] == 0, "a step calling cuBLAS scores %s implementation" % i["points"])
    check("calls cuBLAS" in reasons(s, "implementation"), "no reason naming cuBLAS: " + reasons(s, "implementation"))


def case_hang(workdir):
    text = edit(step_file("hopper"), "  SharedStorage& smem = dynamic_smem<SharedStorage>();\n\n  int64_t m0",
                "  SharedStorage& smem = dynamic_smem<SharedStorage>();\n  volatile int spin = 1;\n"
                "  while (spin) {\n  }\n\n  int64_t m0", "hang")
    s, seconds = grade(workdir, handin(workdir, "hang", hopper=text))
    c = s["parts"]["correctness"]
    check(c["points"] == 0, "a hanging step scores %s correctness" % c["points"])
    check("time limit of %d s" % TIME_LIMIT in reasons(s, "correctness"), "no time-limit reason: " +
          reasons(s, "correctness"))
    # One run hangs (the rest of its track is not run), the other track's runs take a few seconds each.
    check(seconds < 4 * TIME_LIMIT + 60, "grading a hang took %.0f s" % seconds)


def case_refused(workdir):
    """Bad hand-ins are refused (exit 2), with the reason, before anything is written."""
    d = os.path.join(workdir, "refused")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    hopper, blackwell = step_file("hopper"), step_file("blackwell")
    good = {"steps/%s/hopper.cu" % FOLDER: hopper, "steps/%s/blackwell.cu" % FOLDER: blackwell}
    good.update({p: (ROOT / p).read_text() for p in helpers()})

    def link(name, kind):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = "/etc/passwd"
        return info, None

    cases = {
        "extra_file": (dict(good, **{"steps/%s/README.md" % FOLDER: "x"}), None, r"not one of the hand-in's files"),
        "other_step": (dict(good, **{"steps/01_single_tile/hopper.cu": "x"}), None, r"not one of the hand-in's files"),
        "dotdot": (dict(good, **{"steps/%s/../../CMakeLists.txt" % FOLDER: "x"}), None, r"leaves the tree"),
        "absolute": (dict(good, **{os.path.join(d, "evil.cu"): "x"}), None, r"absolute path"),
        "symlink": ({"steps/%s/blackwell.cu" % FOLDER: blackwell}, [link("steps/%s/hopper.cu" % FOLDER, tarfile.SYMTYPE)],
                    r"a link"),
        "hardlink": ({"steps/%s/blackwell.cu" % FOLDER: blackwell},
                     [link("steps/%s/hopper.cu" % FOLDER, tarfile.LNKTYPE)], r"a link"),
        "missing": ({"steps/%s/hopper.cu" % FOLDER: hopper}, None, r"blackwell\.cu: missing"),
        "not_a_tar": (None, None, r"not a readable tar archive"),
    }
    for path in helpers():  # a helper with the step's regions is part of the hand-in
        cases["missing_helper"] = ({k: v for k, v in good.items() if k != path}, None, re.escape(path) + ": missing")
    grading = os.path.join(d, "grading")
    for name, (files, extra, pattern) in cases.items():
        tar = os.path.join(d, name + ".tar")
        if files is None:
            pathlib.Path(tar).write_text("this is not a tar archive\n")
        else:
            make_tar(tar, files, extra)
        out = os.path.join(d, name + ".json")
        r = subprocess.run([sys.executable, str(ROOT / "tools" / "grade"), tar, "--steps", str(STEP), "--workdir",
                            grading, "--device", "emu", "--json", out, "--quiet"], capture_output=True, text=True)
        print("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
        check(r.returncode == 2, "%s: exit %d, not 2 (refused)" % (name, r.returncode))
        check(re.search(pattern, r.stderr), "%s: the reason does not say /%s/" % (name, pattern))
        check(not os.path.exists(grading) and not os.path.exists(out), "%s: something was written" % name)
        check(not os.path.exists(os.path.join(d, "evil.cu")), "%s: a file was written outside" % name)
    # Refused under the autograder formats: Gradescope's results.json and Autolab's last line give 0 points.
    results = os.path.join(d, "results.json")
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "grade"), os.path.join(d, "missing.tar"), "--steps",
                        str(STEP), "--workdir", grading, "--device", "emu", "--quiet", "--format", "gradescope,autolab",
                        "--results", results], capture_output=True, text=True)
    check(r.returncode == 2 and not os.path.exists(grading), "refused under --format: exit %d" % r.returncode)
    with open(results) as f:
        res = json.load(f)
    check(res["score"] == 0 and "blackwell.cu: missing" in res["output"] and res["visibility"] == "visible",
          "gradescope, refused: %s" % res)
    check(json.loads(r.stdout.strip().split("\n")[-1]) == {"scores": {"step%02d" % STEP: 0.0},
                                                          "scoreboard": [0.0, 0.0]}, "autolab, refused: " + r.stdout)


def case_region_rules(workdir):
    """tools/course/regions.py on small sources: what a TODO passes on, and the regions it refuses."""
    import regions as rg
    src = """#include "common/defs.cuh"
namespace gemm::stepXX::hopper {
constexpr int kOnlyInRegion = 4;
constexpr int kAlsoOutside = 2;
__device__ void f(int* out, int n) {
  int row = 0, col = 0;
  const int unused_after = n * kAlsoOutside;
  for (int i = 0; i < n; ++i) {
    // BEGIN SOLUTION step03: rows and columns of element i.
    row = i / kOnlyInRegion + unused_after;
    col = i % kOnlyInRegion;
    // END SOLUTION step03
    out[i] = row + col + kAlsoOutside;
  }
}
}  // namespace gemm::stepXX::hopper
"""
    text, blanked = rg.blank("x.cu", src, {3})
    check(len(blanked) == 1, "one region blanked")
    call = [l for l in text.split("\n") if "GEMM_TODO(" in l]
    check(call and call[0].strip() == 'GEMM_TODO("step03", "rows and columns of element i.", row, i, unused_after, '
          'col, +kOnlyInRegion);', "the TODO call: %s" % call)
    check("// TODO step03: rows and columns of element i." in text and '#include "common/todo.cuh"' in text,
          "the hint and the include")
    bad_scope = src.replace("__device__ void f(", "// BEGIN SOLUTION step03: x\nint g();\n// END SOLUTION step03\n"
                            "__device__ void f(")
    declares = src.replace("  int row = 0, col = 0;\n", "").replace(
        "    row = i / kOnlyInRegion + unused_after;\n    col = i % kOnlyInRegion;\n",
        "    int row = i / kOnlyInRegion + unused_after;\n    int col = i % kOnlyInRegion;\n")
    for name, bad, pattern in (("namespace scope", bad_scope, r"not inside a function body"),
                               ("declares", declares, r"declares `row`, which line \d+ uses after the region"),
                               ("nested", src.replace("    row = i", "    // BEGIN SOLUTION step03: y\n    row = i"),
                                r"regions never nest"),
                               ("unclosed", src.replace("    // END SOLUTION step03\n", ""), r"never closed"),
                               ("typo", src.replace("// END SOLUTION step03", "// END SOLUTON step03"),
                                r"never closed|malformed")):
        try:
            rg.blank("x.cu", bad, {3})
        except rg.RegionError as e:
            check(re.search(pattern, str(e)), "%s: refused, but the message says: %s" % (name, e))
        else:
            raise Failed("%s: not refused" % name)


def case_perf_rules(workdir):
    """The GPU-only part without a GPU: gemm_bench's JSON read back (a stand-in that writes the
    recorded bench/testdata/sample.json), and the bound and floor applied to a ratio."""
    import grade as g
    fake = os.path.join(workdir, "fake_gemm_bench")
    pathlib.Path(fake).write_text(
        "#!/usr/bin/env python3\nimport shutil, sys\n"
        "out = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--benchmark_out=')][0]\n"
        "shutil.copy(%r, out)\n" % str(ROOT / "bench" / "testdata" / "sample.json"))
    os.chmod(fake, 0o755)
    ratios, why = g.bench_ratios(fake, 1, ["128x128x64"], g.PERF_REPETITIONS, 60)
    check(ratios is not None and abs(ratios["128x128x64"] - 1.4003) < 1e-3, "gemm_bench JSON: %s %s" % (ratios, why))
    full, rel = g.perf_points(2.0, 0.9 * 0.8, 0.8)
    check(full == 2.0 and abs(rel - 0.9) < 1e-9, "at the bound: %s" % full)
    half, _ = g.perf_points(2.0, 0.7 * 0.8, 0.8)
    check(abs(half - 1.0) < 1e-9, "half way between floor and bound: %s" % half)
    none, _ = g.perf_points(2.0, 0.5 * 0.8, 0.8)
    check(none == 0.0, "at the floor: %s" % none)
    cal = os.path.join(workdir, "cal.json")
    pathlib.Path(cal).write_text(json.dumps({"gpu": "NVIDIA H100 80GB HBM3", "steps": {"05": {"4096x4096x4096": 0.75}}}))
    data, path = g.load_calibration("NVIDIA H100 80GB HBM3", cal)
    check(data["steps"]["05"]["4096x4096x4096"] == 0.75 and path == cal, "calibration file")
    check(g.gpu_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3", "calibration file name")


def case_scoring_rules(workdir):
    """The correctness and implementation rules on recorded runs, without a build: an emulator error is a
    broken rule, a deadlock or a mismatch is not; one run of a track breaking a rule zeroes that track's
    correctness (GPU runs included), a mismatch costs its run; the grid is judged from any run that executed
    when the many-tiles run did not; a refused hand-in still gets Gradescope and Autolab output."""
    import grade as g
    race = ("error: emulator: shared memory overwritten while an asynchronous operation reads it: "
            "steps/07_warp_specialization/hopper.cu:301: the TMA store issued at line 330 still reads it\n"
            "  at CTA (1,0,0) thread 140 (warp 4, lane 12)\n  replay: --emu-seed 9\n")
    cases = {
        "rule": (race, 1, "rule", "shared memory overwritten while an asynchronous operation reads it",
                 "steps/07_warp_specialization/hopper.cu:301"),
        "todo": ("error: emulator: TODO step05: common/pipeline.cuh:47: wait on full\n", 1, "todo",
                 "TODO step05", "common/pipeline.cuh:47"),
        "launch": ("error: shared-memory limit: the kernel needs 300000 bytes\n", 1, "rule", "shared-memory limit",
                   None),
        "deadlock": ("error: emulator: deadlock: steps/05_pipeline/blackwell.cu:106: CTA (5,0,0) thread 0 (warp 0, "
                     "lane 0, role producer) waits on mbarrier 'mma2tma' stage 0 ...\n  every live thread waits and "
                     "...\n", 1, "hang", None, None),
        "infra": ("error: emulator: cannot map a fiber stack of 65536 bytes\n", 1, "error", None, None),
        "mismatch": ("verdict:        MISMATCH at (128,0): got 0 want 3 (unwritten)\n"
                     "emulated:       16384 threads in 2 clusters, 9 fiber switches, 3 async operations\n", 1,
                     "mismatch", None, None),
        "match": ("verdict:        match\nemulated:       16384 threads in 2 clusters, 9 fiber switches, 3 async "
                  "operations\n", 0, "match", None, None),
    }
    for name, (out, rc, kind, rule, where) in cases.items():
        o = g.run_summary(g.Run(rc, out, 1.0, False), 60)
        check((o.kind, o.rule, o.where) == (kind, rule, where), "%s: %s" % (name, (o.kind, o.rule, o.where)))
    check(g.run_summary(g.Run(1, race, 1.0, False), 60, emulated=False).kind == "rule",
          "an emulator message is a rule whichever device")
    check(g.run_summary(g.Run(1, "error: CUDA error: an illegal memory access\n", 1.0, False), 60,
                        emulated=False).kind == "error", "a GPU error is not a rule")
    check(g.run_summary(g.Run(-9, "", 60.0, True), 60).kind == "hang", "the time limit is a hang")

    # Step 7 as the issue graded it: 5 emulated runs per track and 4 GPU runs; the hopper track's race shows on
    # 2 of its 5 emulated runs and its many-tiles run is one of them; everything else matches.
    grader = object.__new__(g.StepGrader)
    grader.step, grader.tracks, grader.gtrack, grader.exe = 7, ["hopper", "blackwell"], "hopper", "step07"
    grader.executed, grader.first_failure, grader.hung, grader.probes = {"hopper": [], "blackwell": []}, {}, set(), []
    grader.opts = g.Options(log=lambda *a: None)
    cases_7 = []
    for track in grader.tracks:
        for label, shape, exact in g.draw_cases(7, 1):
            cases_7.append(("emulator", track, label, shape, exact, []))
    for label, shape, exact in g.gpu_cases(7, 1):
        cases_7.append(("GPU", "hopper", label, shape, exact, []))
    ok = g.Outcome("match", "", (256 * 2, 2))
    racy = g.Outcome("rule", race[len("error: "):].split("\n")[0],
                     None, "shared memory overwritten while an asynchronous operation reads it", "hopper.cu:301")
    outcomes = []
    for c in cases_7:
        bad = c[1] == "hopper" and c[0] == "emulator" and c[2] in ("many tiles", "ragged") and c[4]
        outcomes.append(([c[0]], g.Run(0, "", 1.0, False), racy if bad else ok))
    grader._cases = cases_7
    p = g.part(9.0)
    grader.correctness(p, outcomes)
    lost = sum(x["points"] for x in p["lost"])
    hopper_runs = sum(1 for c in cases_7 if c[1] == "hopper")
    check(abs(lost - 9.0 * hopper_runs / len(cases_7)) < 0.02, "the hopper track's share lost: %s of %s (%s)" %
          (lost, 9.0 * hopper_runs / len(cases_7), p["lost"]))
    check(len(p["lost"]) == 1 and "`shared memory overwritten while an asynchronous operation reads it`" in
          p["lost"][0]["reason"] and "on 2 of its 5 emulated runs" in p["lost"][0]["reason"],
          "one loss quoting the rule: %s" % p["lost"])
    # A mismatch alone costs its own run.
    outcomes[0] = (["emulator"], g.Run(1, "", 1.0, False), g.Outcome("mismatch", "MISMATCH at (0,0)", (512, 2)))
    outcomes[:] = [(x, r, ok if o is racy else o) for x, r, o in outcomes]
    grader.executed = {"hopper": [], "blackwell": []}
    p = g.part(9.0)
    grader.correctness(p, outcomes)
    check(len(p["lost"]) == 1 and abs(p["lost"][0]["points"] - round(9.0 / len(cases_7), 2)) < 1e-6,
          "a mismatch costs its run: %s" % p["lost"])

    # The grid, judged from a run that executed: the many-tiles run broke a rule, the non-square one ran with
    # fewer CTAs than tiles.
    grader.executed = {"hopper": [g.Executed("non-square", (512, 384, 64), 512, 2)], "blackwell": []}
    ev = grader.grid_evidence("hopper")
    check(ev is not None and ev[1], "a persistent grid seen on the non-square run: %s" % (ev,))
    grader.executed["hopper"].append(g.Executed("many tiles", (700, 600, 64), 6 * 256, 6))
    check(grader.grid_evidence("hopper")[1], "the many-tiles run decides")
    grader.executed["hopper"] = [g.Executed("square", (128, 128, 128), 256, 1)]
    check(grader.grid_evidence("hopper") is None, "one tile shows nothing (a probe runs)")

    # Step 6's hopper track, whose only executed run has one tile: the implementation probes the many-tiles
    # shape (the runs and the PTX are stand-ins here) and judges the grid from the first probe that executes.
    class Ws:
        root = src = workdir

    probes = []

    def fake_run(cmd, limit, cwd=None, env=None):
        probes.append(cmd)
        if len(probes) == 1:  # the first probe breaks the rule again, the second executes
            return g.Run(1, race, 1.0, False)
        return g.Run(0, "verdict:        match\nemulated:       256 threads in 2 clusters, 1 fiber switches\n", 1.0,
                     False)

    def fake_ptx(ws, path, track, out):
        pathlib.Path(out).write_text("wgmma.mma_async mbarrier.try_wait mbarrier.arrive.expect_tx "
                                     "cp.async.bulk.tensor.2d.shared::cluster.global "
                                     "cp.async.bulk.tensor.2d.global.shared::cta")
        return g.Run(0, "", 0.1, False)

    saved = g.run, g.make_ptx
    g.run, g.make_ptx = fake_run, fake_ptx
    try:
        grader.step, grader.ws, grader.tag, grader.probes, grader.hung = 6, Ws, "step06", [], set()
        grader.opts = g.Options(log=lambda *a: None, seed=1)
        grader.executed["hopper"] = [g.Executed("square", (128, 128, 128), 128, 1)]
        fails = grader.track_requirements("hopper", "hopper.cu", "constexpr int kStages = 4;")
        check(fails == [] and len(probes) == 2 and "--m" in probes[1], "judged on the second probe: %s, %d probes"
              % (fails, len(probes)))
        check([p["executed"] for p in grader.probes] == [False, True], "the probes reported: %s" % grader.probes)
        probes[:] = [None]  # from here on every probe executes; with no probe left, the grid is unknown
        grader.executed["hopper"], grader.probes = [g.Executed("square", (128, 128, 128), 128, 1)], []
        grader.hung = {"hopper"}  # a track that hung is not probed
        fails = grader.track_requirements("hopper", "hopper.cu", "constexpr int kStages = 4;")
        check(len(fails) == 1 and "grid is unknown" in fails[0] and grader.probes == [], "no probe: %s" % fails)
    finally:
        g.run, g.make_ptx = saved

    # Refused hand-ins in both formats.
    res = g.gradescope_refused("x.tar: steps/05_pipeline/hopper.cu: missing", 1.2)
    check(res["score"] == 0 and "missing" in res["output"] and res["tests"] == [], "gradescope, refused: %s" % res)
    auto = json.loads(g.autolab_line(None, [5, 7]))
    check(auto == {"scores": {"step05": 0.0, "step07": 0.0}, "scoreboard": [0.0, 0.0, 0.0]}, "autolab, refused")


CASES = {"scoring_rules": case_scoring_rules, "rule_track": case_rule_track, "perf_rules": case_perf_rules, "region_rules": case_region_rules, "handout_single": case_handout_single, "handout_all": case_handout_all,
         "handout_links": case_handout_links, "hints": case_hints,
         "handout_commands": lambda w: case_handout_commands(w, BUILD_DIR[0]), "prepare": case_prepare,
         "reference": case_reference, "blank": case_blank, "cublas": case_cublas, "hang": case_hang,
         "refused": case_refused}
CASES.update({name: (lambda w, n=name: case_wrong(w, n)) for name in WRONG})


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", required=True)
    p.add_argument("--build-dir", help="the build whose step executables the cases run (default: the workdir's parent)")
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args(argv)
    BUILD_DIR[0] = os.path.abspath(args.build_dir or os.path.dirname(os.path.abspath(args.workdir)))
    os.makedirs(args.workdir, exist_ok=True)
    try:
        CASES[args.case](os.path.abspath(args.workdir))
    except Failed as e:
        print("FAILED: %s" % e, file=sys.stderr)
        return 1
    print("PASSED: %s" % args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
