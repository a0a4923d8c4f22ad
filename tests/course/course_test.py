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


def handin(dirpath, name, hopper=None, blackwell=None):
    files = {"steps/%s/hopper.cu" % FOLDER: hopper if hopper is not None else step_file("hopper"),
             "steps/%s/blackwell.cu" % FOLDER: blackwell if blackwell is not None else step_file("blackwell")}
    return make_tar(os.path.join(dirpath, name + ".tar"), files)


def grade(workdir, tar, *extra):
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
    s, _ = grade(workdir, handin(workdir, "blank", text["hopper"], text["blackwell"]))
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


CASES = {"perf_rules": case_perf_rules, "region_rules": case_region_rules, "handout_single": case_handout_single, "handout_all": case_handout_all, "prepare": case_prepare,
         "reference": case_reference, "blank": case_blank, "cublas": case_cublas, "hang": case_hang,
         "refused": case_refused}
CASES.update({name: (lambda w, n=name: case_wrong(w, n)) for name in WRONG})


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", required=True)
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args(argv)
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
