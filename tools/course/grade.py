"""The grader of a course assignment (docs/course.md): tools/grade's implementation.

A hand-in is a tar of the assigned steps' step files (steps/NN_name/hopper.cu and blackwell.cu).
grade() checks it completely before anything is written (check_handin), unpacks it into a fresh copy
of the handout (tools/handout's tree, made here from the repository), builds the assigned steps and
gives each step points for

  correctness     the step executable at shapes drawn from the grader's seed (square, non-square,
                  ragged; float and exact mode), on the emulator for both tracks and on the GPU for
                  its track when there is one; every run under a time limit; a hang scores zero;
  performance     GPU only: the same-run ratio to cuBLAS (gemm_bench) against the ratio the
                  reference solution reached on the same GPU model (calibration file), bounded by
                  PERF_BOUND and PERF_FLOOR;
  implementation  the lesson's instructions in the compiled PTX of each track (nvcc -ptx of the
                  handed-in file), its constants (stages) and its grid or warp layout as the emulator
                  ran it; none where the step calls cuBLAS or the harness's references (source and
                  the objects' undefined symbols), still has its TODOs, or never ran correctly.

It runs the submitted code as ordinary subprocesses with time limits: it is not a sandbox.
Plain Python 3 (and cmake, the CUDA toolkit, nm from binutils).
"""
import collections
import concurrent.futures
import ctypes
import ctypes.util
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tarfile
import threading
import time

import handout
from regions import find_regions, is_source

# ---------------------------------------------------------------------------------------------
# The rules, as named constants (docs/course.md, "How a step is graded").
# ---------------------------------------------------------------------------------------------
POINTS = {1: 5, 2: 5, 3: 10, 4: 10, 5: 10, 6: 10, 7: 15, 8: 5, 9: 15, 10: 15}
# Steps beyond the ten: points on top of the 100, graded the same way. Performance is graded once the GPU
# model's calibration has the step (until then it is "not graded", as without a GPU).
BONUS = {11: 10, 12: 10}
SHARE = {"correctness": 0.6, "performance": 0.2, "implementation": 0.2}
# Performance: full points at a same-run ratio to cuBLAS of at least PERF_BOUND times the reference
# solution's (on the same GPU model, from its calibration file), none at PERF_FLOOR times or less,
# linear in between.
PERF_BOUND = 0.90
PERF_FLOOR = 0.50
PERF_REPETITIONS = 3  # gemm_bench --benchmark_repetitions when grading (the median counts)
CALIBRATION_REPETITIONS = 5
# Steps 11 and 12's lessons are the shapes steps 8-10 serve badly: a ragged last wave (11), and few or
# narrow tiles (12).
PERF_SIZES = {1: ["128x128x64"], 2: ["128x128x1024"], 11: ["3072", "5120"], 12: ["512x4096x4096", "16384x128x4096"]}
PERF_SIZES_DEFAULT = ["4096", "8192"]
RUN_LIMIT_S = 60  # each correctness run
PROBE_RUNS = 2  # emulated runs at the many-tiles shape when no correctness run showed the track's grid
BUILD_LIMIT_S = 1800
EMU_SMS = 2  # emulated SMs: a persistent grid smaller than the tile count
# Steps 11 and 12 split the last wave's tiles along K only where they leave clusters idle: with 2 SMs (one
# cluster of 2 CTAs) no wave is ever short. 8 SMs (4 clusters) give most graded shapes a short last wave.
EMU_SMS_STEP = {11: 8, 12: 8}
DEMO_SEED = 14  # the public seed; a real grading keeps its own (--seed-file)
TRACKS = ("hopper", "blackwell")
CALIBRATION_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibration")
MAX_FILE_BYTES = 1 << 20

# Implementation requirements: (kind, what, description). Kinds: "ptx" (a regex the PTX of the
# track's file must match), "const" (a constexpr int of the file at least this value), "grid" (the
# emulated grid smaller than the tile count: a persistent kernel), "threads" (threads per CTA as the
# emulator ran it, at least), "drop" (an earlier step's "const" of this name no longer applies). A
# step's list adds to the previous step's; a later "const" of a name, or a later "threads", replaces
# the earlier one.
WGMMA = ("ptx", r"wgmma\.mma_async", "wgmma.mma_async")
TC_MMA = ("ptx", r"tcgen05\.mma\.cta_group", "tcgen05.mma")
TC_LD = ("ptx", r"tcgen05\.ld\.", "tcgen05.ld")
MBAR_WAIT = ("ptx", r"mbarrier\.try_wait", "an mbarrier wait")
TMA_LOAD = ("ptx", r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global", "TMA loads (cp.async.bulk.tensor to shared memory)")
EXPECT_TX = ("ptx", r"mbarrier\.arrive\.expect_tx", "mbarrier.arrive.expect_tx")
TMA_STORE = ("ptx", r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta", "TMA stores (cp.async.bulk.tensor to global memory)")
NEW_REQUIREMENTS = {
    (1, "hopper"): [WGMMA], (1, "blackwell"): [TC_MMA, TC_LD],
    (2, "blackwell"): [MBAR_WAIT],
    (4, "hopper"): [MBAR_WAIT, TMA_LOAD, EXPECT_TX, TMA_STORE], (4, "blackwell"): [TMA_LOAD, EXPECT_TX, TMA_STORE],
    (5, "hopper"): [("const", ("kStages", 2), "a ring of at least 2 stages (kStages)")],
    (5, "blackwell"): [("const", ("kStages", 2), "a ring of at least 2 stages (kStages)")],
    (6, "hopper"): [("grid", None, "a persistent grid (fewer CTAs than tiles)")],
    (6, "blackwell"): [("grid", None, "a persistent grid (fewer CTAs than tiles)")],
    (7, "hopper"): [("ptx", r"setmaxnreg\.dec", "setmaxnreg.dec (the producer's registers)"),
                    ("ptx", r"setmaxnreg\.inc", "setmaxnreg.inc (the consumers' registers)"),
                    ("threads", 256, "a producer and a consumer warpgroup (256 threads)")],
    (7, "blackwell"): [("threads", 160, "warps with roles beside the epilogue warpgroup (more than 128 threads)")],
    (8, "hopper"): [("const", ("kStages", 4), "a ring of at least 4 stages (kStages)"),
                    ("ptx", r"wgmma\.wait_group\.sync\.aligned\s+1;", "wgmma.wait_group 1 (a group in flight)")],
    (8, "blackwell"): [("const", ("kStages", 4), "a ring of at least 4 stages (kStages)")],
    (9, "hopper"): [("ptx", r"\.multicast::cluster", "TMA multicast to the cluster")],
    (9, "blackwell"): [("ptx", r"cta_group::2", "cta_group::2 (a CTA pair)")],
    (10, "hopper"): [("threads", 384, "two consumer warpgroups and a producer (384 threads)")],
    (11, "hopper"): [("ptx", r"atom\.[\w:.]*add", "atom.add (a split tile's ticket)"),
                     ("ptx", r"fence\.acq_rel\.gpu", "fence.acq_rel.gpu (the parts of a split tile released and "
                                                     "acquired)")],
    (11, "blackwell"): [("ptx", r"atom\.[\w:.]*add", "atom.add (a split tile's ticket)"),
                        ("ptx", r"fence\.acq_rel\.gpu", "fence.acq_rel.gpu (the parts of a split tile released "
                                                        "and acquired)")],
    # Step 12's ring depth is a function of its tiling (ring_stages), no longer one constant: the deep
    # ring is step 8's lesson, checked there. Its 64-row tilings have one consumer warpgroup.
    (12, "hopper"): [("drop", "kStages", ""),
                     ("threads", 256, "a producer and a consumer warpgroup at least (256 threads)"),
                     ("ptx", r"\.entry\s+\S*kernelINS\w*TileConfigILi64E",
                      "a kernel of 64-row tiles (the tiling chosen per problem)")],
    (12, "blackwell"): [("drop", "kStages", ""),
                        ("ptx", r"\.entry\s+\S*kernelINS\w*TileConfigILi128E",
                         "a kernel of 128-row tiles without a pair (the tiling chosen per problem)")],
}
# Calls a step may not make: its own kernels must compute D.
FORBIDDEN_SOURCE = [(re.compile(r"\bcublas\w*", re.I), "calls cuBLAS"),
                    (re.compile(r'#\s*include\s*[<"](?:cublas|harness/)'), "includes cuBLAS or the harness"),
                    (re.compile(r"\b(?:cpu_gemm|CublasReference|CpuReference|reference_for|run_and_check)\b"),
                     "calls the harness's reference")]
FORBIDDEN_SYMBOL = re.compile(r"cublas|gemm::(?:cpu_gemm|CublasReference|CpuReference|reference_for|run_and_check)",
                              re.I)


class Refused(Exception):
    """A hand-in that is not graded at all (nothing has been written)."""


class GradeError(Exception):
    """The grader itself cannot go on (no handout, a build system that does not configure)."""


def requirements(step, track):
    out = []
    for s in range(1, step + 1):
        for r in NEW_REQUIREMENTS.get((s, track), []):
            if r[0] == "drop":
                out = [x for x in out if not (x[0] == "const" and x[1][0] == r[1])]
                continue
            if r[0] == "const":
                out = [x for x in out if not (x[0] == "const" and x[1][0] == r[1][0])]
            if r[0] == "threads":
                out = [x for x in out if x[0] != "threads"]
            out.append(r)
    return out


def points_of(step):
    """The step's points (a bonus step's too), or None for a step the course does not grade."""
    return POINTS.get(step, BONUS.get(step))


def emu_sms(step):
    return EMU_SMS_STEP.get(step, EMU_SMS)


def step_share(step):
    total = points_of(step)
    c = round(total * SHARE["correctness"], 1)
    p = round(total * SHARE["performance"], 1)
    return {"correctness": c, "performance": p, "implementation": round(total - c - p, 1)}


# ---------------------------------------------------------------------------------------------
# The hand-in.
# ---------------------------------------------------------------------------------------------
def helper_files(files, steps):
    """The files outside steps/ that hold a solution region of one of `steps`: a lesson that lives in a helper
    of common/ (docs/design.md, "Course mode": the helper arrives with the step that teaches it)."""
    out = set()
    for path, data in files.items():
        if path.startswith("steps/") or not is_source(path) or b"BEGIN SOLUTION" not in data:
            continue
        if any(r.step in steps for r in find_regions(path, data.decode(errors="replace"))):
            out.add(path)
    return out


def expected_files(steps, folders, tracks, files):
    """What a hand-in of `steps` holds: each step's file of each track, and the helpers with its regions."""
    return {"steps/%s/%s.cu" % (folders[s], t) for s in steps for t in tracks} | helper_files(files, set(steps))


def check_handin(path, steps, folders, tracks, files):
    """{repository path: bytes} of a valid hand-in; Refused naming every problem otherwise.

    Only regular files at exactly the expected paths (a leading "./" is allowed), each once, all of
    them, none over MAX_FILE_BYTES, no NUL bytes; directory entries only for their parent folders.
    Reads the archive into memory: nothing is extracted."""
    want = expected_files(steps, folders, tracks, files)
    parents = set()
    for p in want:
        parts = p.split("/")
        parents.update("/".join(parts[:i]) for i in range(1, len(parts)))
    problems = []
    got = {}
    try:
        tar = tarfile.open(path, "r:*")
    except (OSError, tarfile.TarError) as e:
        raise Refused("%s: not a readable tar archive (%s)" % (path, e))
    with tar:
        try:
            members = tar.getmembers()
        except (OSError, tarfile.TarError, EOFError) as e:
            raise Refused("%s: not a readable tar archive (%s)" % (path, e))
        for m in members:
            name = m.name
            shown = repr(name)
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or "\\" in name:
                problems.append("%s: an absolute path" % shown)
                continue
            parts = [x for x in name.split("/") if x not in ("", ".")]
            if ".." in parts:
                problems.append("%s: a path that leaves the tree (..)" % shown)
                continue
            clean = "/".join(parts)
            if m.isdir():
                if clean not in parents:
                    problems.append("%s: a folder that is not part of a hand-in" % shown)
                continue
            if m.issym() or m.islnk():
                problems.append("%s: a link (only plain files are accepted)" % shown)
                continue
            if not m.isreg():
                problems.append("%s: not a plain file" % shown)
                continue
            if clean not in want:
                problems.append("%s: not one of the hand-in's files (%s)" % (shown, ", ".join(sorted(want))))
                continue
            if clean in got:
                problems.append("%s: in the archive twice" % shown)
                continue
            if m.size > MAX_FILE_BYTES:
                problems.append("%s: %d bytes, more than %d" % (shown, m.size, MAX_FILE_BYTES))
                continue
            data = tar.extractfile(m).read()
            if b"\0" in data:
                problems.append("%s: not a text file (NUL bytes)" % shown)
                continue
            got[clean] = data
    for p in sorted(want - set(got)):
        problems.append("%s: missing" % p)
    if problems:
        raise Refused("%s is not a valid hand-in for step%s %s:\n  %s" % (
            path, "s" if len(steps) > 1 else "", ", ".join(map(str, steps)), "\n  ".join(problems)))
    return got


def reference_tar(root, steps, tracks, out):
    """Writes the reference solution's hand-in of `steps` (the repository's own files) to the tar `out`."""
    files = handout.read_tree(root)
    folders = handout.steps_of(files)
    missing = [s for s in steps if s not in folders]
    if missing:
        raise GradeError("step %s: not in this tree" % ", ".join(map(str, missing)))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with tarfile.open(out, "w") as tar:
        for path in sorted(expected_files(steps, folders, tracks, files)):
            info = tarfile.TarInfo(path)
            info.size = len(files[path])
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(files[path]))
    return out


def steps_in_tar(path, folders):
    """The steps a tar's member names point at (for a hand-in given without --steps)."""
    by_folder = {d: n for n, d in folders.items()}
    found = set()
    try:
        with tarfile.open(path, "r:*") as tar:
            for name in tar.getnames():
                m = re.match(r"^(?:\./)?steps/([^/]+)/", name)
                if m and m.group(1) in by_folder:
                    found.add(by_folder[m.group(1)])
    except (OSError, tarfile.TarError, EOFError) as e:
        raise Refused("%s: not a readable tar archive (%s)" % (path, e))
    if not found:
        raise Refused("%s: no step file in the archive (and no --steps given)" % path)
    return sorted(found)


# ---------------------------------------------------------------------------------------------
# Processes.
# ---------------------------------------------------------------------------------------------
class Run:
    def __init__(self, rc, out, seconds, timed_out):
        self.rc, self.out, self.seconds, self.timed_out = rc, out, seconds, timed_out


def run(cmd, limit, cwd=None, env=None):
    """Runs cmd (a list) in a process group of its own; kills the group at `limit` seconds."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=limit)
        return Run(p.returncode, out.decode(errors="replace"), time.monotonic() - start, False)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return Run(-9, out.decode(errors="replace"), time.monotonic() - start, True)


def gpu_info():
    """(name, compute capability major, minor) of GPU 0, or None: cudaGetDeviceCount through ctypes."""
    names = [ctypes.util.find_library("cudart")] + ["libcudart.so", "libcudart.so.13", "libcudart.so.12"]
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    names += [os.path.join(cuda_home, "lib64", n) for n in ("libcudart.so", "libcudart.so.13", "libcudart.so.12")]
    lib = None
    for n in names:
        if not n:
            continue
        try:
            lib = ctypes.CDLL(n)
            break
        except OSError:
            continue
    if lib is None:
        return None
    count = ctypes.c_int(0)
    if lib.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    lib.cudaDeviceGetAttribute(ctypes.byref(major), 75, 0)  # cudaDevAttrComputeCapabilityMajor
    lib.cudaDeviceGetAttribute(ctypes.byref(minor), 76, 0)  # cudaDevAttrComputeCapabilityMinor
    name = ""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True, timeout=30)
        name = r.stdout.strip().split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return name or "GPU sm_%d%d" % (major.value, minor.value), major.value, minor.value


def gpu_track(info):
    if info is None:
        return None
    return {9: "hopper", 10: "blackwell"}.get(info[1])


def gpu_slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# ---------------------------------------------------------------------------------------------
# The grading tree and its build.
# ---------------------------------------------------------------------------------------------
def tree_digest(tree):
    h = hashlib.sha256()
    for path in sorted(tree):
        h.update(path.encode() + b"\0" + tree[path] + b"\0")
    return h.hexdigest()


def sync_tree(tree, src):
    """Makes `src` hold exactly `tree`: a fresh copy, rewriting only what differs (the build keeps
    its objects for the files that did not change)."""
    os.makedirs(src, exist_ok=True)
    for path, data in tree.items():
        full = os.path.join(src, path)
        try:
            with open(full, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        mode = 0o755 if path in getattr(tree, "executable", ()) else 0o644
        if os.stat(full).st_mode & 0o777 != mode:
            os.chmod(full, mode)
    for dirpath, dirnames, filenames in os.walk(src, topdown=False):
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            if os.path.relpath(full, src).replace(os.sep, "/") not in tree:
                os.remove(full)
        if dirpath != src and not os.listdir(dirpath):
            os.rmdir(dirpath)


MARKER = ".gemm-grade-workdir"


class Workspace:
    """The grading directory: src/ (the handout with the hand-in), build/, ptx/. It is made here, or
    was (the marker file): a folder of something else is refused, since src/ is made to hold the
    handout and nothing else."""

    def __init__(self, root, steps, cuda_tracks, bench, log):
        self.root = os.path.abspath(root)
        if os.path.isdir(self.root) and os.listdir(self.root) and not os.path.exists(os.path.join(self.root, MARKER)):
            raise GradeError("%s is not empty and not a grading directory (it has no %s): give a new or empty "
                             "folder" % (self.root, MARKER))
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, MARKER), "w") as f:
            f.write("a grading directory of tools/grade: src/ and the builds are remade at will\n")
        self.src = os.path.join(self.root, "src")
        self.build = os.path.join(self.root, "build")
        self.steps = steps
        self.cuda_tracks = cuda_tracks
        self.bench = bench
        self.log = log

    def configure(self, build=None, extra=()):
        build = build or self.build
        stamp = os.path.join(build, ".grade-config")
        # The CMake files too: with Makefiles a target added since (a step) is unknown until CMake runs again.
        want = json.dumps({"tracks": self.cuda_tracks, "bench": self.bench, "extra": list(extra),
                           "cmake": cmake_digest(self.src)})
        if os.path.exists(os.path.join(build, "CMakeCache.txt")) and os.path.exists(stamp) \
                and open(stamp).read() == want:
            return
        cmd = ["cmake", "-S", self.src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
               "-DGEMM_TRACKS=" + ";".join(self.cuda_tracks), "-DGEMM_BUILD_BENCH=" + ("ON" if self.bench else "OFF"),
               "-DGEMM_BUILD_TOOLS=OFF", "-DGEMM_BUILD_TESTS=OFF"] + list(extra)
        self.log("configuring the grading build (%s)" % (", ".join(self.cuda_tracks) or "emulator only"))
        r = run(cmd, BUILD_LIMIT_S)
        if r.rc != 0:
            raise GradeError("the grading build does not configure:\n" + tail(r.out, 30))
        os.makedirs(build, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(want)

    def build_target(self, target, build=None, jobs=None):
        cmd = ["cmake", "--build", build or self.build, "--target", target, "-j", str(jobs or os.cpu_count() or 2)]
        return run(cmd, BUILD_LIMIT_S)


def cmake_digest(src):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(src)):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn == "CMakeLists.txt" or fn.endswith(".cmake") or fn == "CMakePresets.json":
                full = os.path.join(dirpath, fn)
                h.update(os.path.relpath(full, src).encode() + b"\0")
                with open(full, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def tail(text, n):
    lines = text.rstrip().split("\n")
    return "\n".join(lines[-n:])


def first_errors(build_output, n=6):
    """The compiler's first error lines (or the last lines) of a failed build."""
    lines = [l for l in build_output.split("\n") if re.search(r"\berror\b", l, re.I) and "Error " not in l]
    return "\n".join(lines[:n]) if lines else tail(build_output, n)


# ---------------------------------------------------------------------------------------------
# Correctness.
# ---------------------------------------------------------------------------------------------
def draw_cases(step, seed):
    """[(label, (m, n, k), exact)] for a step: the grader seed decides the shapes (steps 1-2 keep
    their contract's)."""
    rng = random.Random("%s:%d" % (seed, step))
    if step == 1:
        return [("single tile", (128, 128, 64), False), ("single tile", (128, 128, 64), True)]
    if step == 2:
        return [("K loop", (128, 128, 64 * rng.randint(2, 8)), False),
                ("K loop", (128, 128, 64 * rng.randint(2, 8)), True)]
    square = 128 * rng.randint(1, 3)
    m, n = 128 * rng.randint(1, 4), 128 * rng.randint(1, 4)
    while n == m:
        n = 128 * rng.randint(1, 4)
    nonsquare = (m, n, 64 * rng.randint(1, 6))

    def ragged():
        while True:
            s = (rng.randint(1, 420), 8 * rng.randint(1, 50), 8 * rng.randint(1, 60))
            if s[1] % 128 and s[2] % 64:
                return s
    many = (128 * rng.randint(5, 6) + rng.randint(1, 127), 8 * rng.randint(60, 90), 8 * rng.randint(4, 24))
    cases = [("square", (square, square, square), False), ("non-square", nonsquare, True),
             ("ragged", ragged(), False), ("ragged", ragged(), True), ("many tiles", many, True)]
    if step >= 11:  # one tile row of 128-row tiles (a few of step 12's 64-row tiles), N <= 64, with K for a split
        # in parts of at least 12 slices (float mode)
        cases.append(("split", (rng.randint(129, 256), 8 * rng.randint(2, 8), 64 * rng.randint(24, 48)), False))
    return cases


def gpu_cases(step, seed):
    rng = random.Random("%s:gpu:%d" % (seed, step))
    if step <= 2:
        return draw_cases(step, seed)
    cases = [("square", (2048, 2048, 2048), False), ("non-square", (2048, 1536, 1024), False),
             ("ragged", (1000 + rng.randint(1, 200), 8 * rng.randint(100, 160), 8 * rng.randint(60, 128)), False),
             ("exact", (1024 + rng.randint(1, 127), 1024, 512), True)]
    if step >= 11:  # one tile row (a few of step 12's 64-row tiles), a long K: split over many workers on any GPU
        cases.append(("split", (rng.randint(129, 256), 8 * rng.randint(2, 8), 64 * rng.randint(64, 128)), False))
    return cases


ERROR_RE = re.compile(r"^error: (.*)$", re.M)
# What a wrong D most often means, after the harness's verdict names the first bad element.
MISMATCH_CAUSES = [
    ("unwritten", "part of D was never written: check the tile each CTA computes (its origin) and the store's "
                  "coordinates and bounds"),
    ("guard", "a write landed outside D: check the tile origins and the bounds of the store"),
]
# An emulator run's error is a broken rule (docs/emulator.md, "What it checks": "emulator: <rule>: <file>:<line>:
# <detail>"), or a launch the emulator refuses (these prefixes), unless it is one of these: a deadlock is a hang,
# and the others are the grading machine's limits or what the emulator does not model, not the hand-in's fault.
LAUNCH_RULES = ("kernel launch:", "shared-memory limit", "occupancy:")
NOT_A_RULE = ("cannot map a fiber stack", "not modelled", "has no emulated build")
RULE_WHERE_RE = re.compile(r"^(\S+?\.(?:cu|cuh|cpp|h|hpp):\d+): ")


class Outcome:
    """One run's result. kind: match, mismatch (a wrong D, the run ended), rule (the emulator reports a broken
    rule), todo (a GEMM_TODO of the handout ran), hang (time limit, or the emulator's deadlock report), error
    (anything else: a crash, a CUDA error), or "not run" (after a hang of its track).
    stats: (threads, clusters) of an emulated run that executed to the end (match or mismatch), else None."""

    def __init__(self, kind, reason="", stats=None, rule=None, where=None):
        self.kind, self.reason, self.stats, self.rule, self.where = kind, reason, stats, rule, where

    @property
    def ok(self):
        return self.kind == "match"

    @property
    def hang(self):
        return self.kind == "hang"


def classify_error(text, emulated):
    """(kind, rule, where) of a run's first error line (without "error: ")."""
    if text.startswith("emulator: "):
        body = text[len("emulator: "):]
        if body.startswith("deadlock"):
            return "hang", None, None
        if any(x in body for x in NOT_A_RULE):
            return "error", None, None
        rule, _, rest = body.partition(": ")
        m = RULE_WHERE_RE.match(rest)
        return "todo" if rule.startswith("TODO ") else "rule", rule.strip(), m.group(1) if m else None
    if emulated and text.startswith(LAUNCH_RULES):
        return "rule", text.split(":", 1)[0].strip(), None
    return "error", None, None


def run_summary(r, limit, emulated=True):
    """The Outcome of one step-executable run."""
    stats = None
    m = re.search(r"emulated:\s+(\d+) threads in (\d+) clusters", r.out)
    if m:
        stats = (int(m.group(1)), int(m.group(2)))
    if r.timed_out:
        watchdog = [l for l in r.out.split("\n") if "gemm watchdog:" in l]
        why = ("stopped at the time limit of %d s: it did not finish (a hang). The emulator reports a deadlock "
               "itself when every thread waits; a thread that spins without waiting on a barrier is stopped "
               "only by this limit" % limit)
        if watchdog:
            why += "; " + watchdog[0].strip()
        return Outcome("hang", why)
    if r.rc == 0 and re.search(r"verdict:\s+match", r.out):
        return Outcome("match", "", stats)
    errors = ERROR_RE.findall(r.out)
    if errors:
        # The emulator's message spans several lines after "error:"; keep its first lines.
        i = r.out.index("error: " + errors[0])
        block = r.out[i + len("error: "):].split("\n")
        text = " | ".join(l.strip() for l in block[:4] if l.strip() and not l.startswith("step "))
        kind, rule, where = classify_error(errors[0], emulated)
        return Outcome(kind, text, None, rule, where)
    v = re.search(r"verdict:\s+(.*)", r.out)
    if v:
        text = v.group(1).strip()
        for pattern, cause in MISMATCH_CAUSES:
            if pattern in text:
                text += "; " + cause
                break
        return Outcome("mismatch", text, stats)
    if r.rc < 0 or r.rc > 128:
        return Outcome("error", "the step executable died (signal %d): %s" % (abs(r.rc) % 128, tail(r.out, 3)))
    return Outcome("error", "exit status %d: %s" % (r.rc, tail(r.out, 3)))


# ---------------------------------------------------------------------------------------------
# Implementation.
# ---------------------------------------------------------------------------------------------
def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def const_value(text, name):
    """The value of the last `constexpr int <name> = <integer>;` of a file, or None."""
    vals = re.findall(r"constexpr\s+(?:int|unsigned|uint32_t|int64_t)\s+%s\s*=\s*(\d+)\s*;" % re.escape(name),
                      strip_comments(text))
    return int(vals[-1]) if vals else None


def make_ptx(ws, path, track, out):
    arch = "sm_90a" if track == "hopper" else "sm_100a"
    nvcc = shutil.which("nvcc") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    cmd = [nvcc, "-I" + ws.src, "-O3", "-DNDEBUG", "-std=c++17", "-arch=" + arch, "-ptx", path, "-o", out]
    return run(cmd, BUILD_LIMIT_S)


def undefined_symbols(objects):
    syms = set()
    for o in objects:
        if os.path.exists(o):
            r = run(["nm", "-C", "--undefined-only", o], 120)
            syms.update(l.split(" U ", 1)[-1].strip() for l in r.out.split("\n") if " U " in l)
    return syms


# ---------------------------------------------------------------------------------------------
# Performance.
# ---------------------------------------------------------------------------------------------
def bench_ratios(bench_exe, step, sizes, repetitions, limit):
    """{size: median same-run ratio to cuBLAS} of one step from gemm_bench, or (None, why)."""
    out_json = bench_exe + ".step%02d.json" % step
    cmd = [bench_exe, "--sizes=" + ",".join(sizes), "--benchmark_filter=^step%02d/" % step,
           "--benchmark_repetitions=%d" % repetitions, "--benchmark_report_aggregates_only=true",
           "--benchmark_out=" + out_json, "--benchmark_out_format=json"]
    r = run(cmd, limit)
    if r.timed_out:
        return None, "gemm_bench stopped at the time limit of %d s" % limit
    if r.rc != 0 or not os.path.exists(out_json):
        return None, "gemm_bench failed (exit %d): %s" % (r.rc, tail(r.out, 4))
    with open(out_json) as f:
        data = json.load(f)
    ratios = {}
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name") != "median" or "ratio_to_cublas" not in b:
            continue
        m = re.match(r"step\d\d/(\d+x\d+x\d+)/", b.get("run_name", b.get("name", "")) + "/")
        if m:
            ratios[m.group(1)] = float(b["ratio_to_cublas"])
    if not ratios:
        return None, "gemm_bench reported no ratio for step %d: %s" % (step, tail(r.out, 4))
    return ratios, ""


def expand_size(s):
    return s if "x" in s else "%sx%sx%s" % (s, s, s)


def load_calibration(gpu_name, path=None):
    path = path or os.path.join(CALIBRATION_DIR, gpu_slug(gpu_name) + ".json")
    if not os.path.exists(path):
        return None, path
    with open(path) as f:
        return json.load(f), path


def perf_points(maximum, ratio, reference):
    rel = ratio / reference if reference > 0 else 0.0
    if rel >= PERF_BOUND:
        return maximum, rel
    if rel <= PERF_FLOOR:
        return 0.0, rel
    return round(maximum * (rel - PERF_FLOOR) / (PERF_BOUND - PERF_FLOOR), 1), rel


# ---------------------------------------------------------------------------------------------
# Grading.
# ---------------------------------------------------------------------------------------------
class Options:
    def __init__(self, **kw):
        self.steps = None  # None: the steps the hand-in has
        self.tracks = list(TRACKS)  # the track files a hand-in holds
        self.seed = DEMO_SEED
        self.seed_is_demo = True
        self.time_limit = RUN_LIMIT_S
        self.workdir = None
        self.device = "auto"  # auto, emu, gpu
        self.cuda_tracks = None  # None: both with a GPU, none without
        self.jobs = None
        self.run_jobs = None  # emulated runs at a time (default: the CPU count)
        self.calibration = None  # a calibration file instead of the one for this GPU
        self.log = print
        self.__dict__.update(kw)


class Executed(collections.namedtuple("Executed", "label shape threads clusters")):
    """An emulated run that executed to the end (D matched or not): what the emulator reports of its launch."""

    @property
    def tiles(self):
        return ((self.shape[0] + 127) // 128) * ((self.shape[1] + 127) // 128)


def run_name(case):
    device, track, label, (m, n, k), exact, _ = case
    return "%s on the %s, %s %dx%dx%d %s" % (track, "emulator" if device == "emulator" else "GPU", label, m, n, k,
                                             "exact" if exact else "float")


def part(maximum, graded=True):
    return {"points": 0.0, "maximum": maximum, "graded": graded, "lost": []}


def lose(p, points, reason):
    p["lost"].append({"points": round(points, 2), "reason": reason})


def run_cases(items, opts):
    """Runs [(StepGrader, case index)]: the emulated runs opts.run_jobs at a time (each is one CPU thread; the
    default is the CPU count), the GPU runs one at a time after them. Once a run of a step's (device, track)
    is stopped at the time limit, its runs not yet started are not run. Returns [(command, Run or None,
    Outcome)] in the items' order."""
    lock = threading.Lock()
    stopped = set()
    results = [None] * len(items)

    def one(j):
        g, i = items[j]
        case = g.case_list[i]
        device, track, label, shape, exact, args = case
        cmd = g.command(args, shape, exact)
        with lock:
            skip = (g.step, device, track) in stopped
        if skip:
            results[j] = (cmd, None, Outcome("not run", "not run: an earlier run of this track hung"))
            return
        r = run(cmd, g.opts.time_limit)
        out = run_summary(r, g.opts.time_limit, emulated=device == "emulator")
        if r.timed_out:
            with lock:
                stopped.add((g.step, device, track))
        results[j] = (cmd, r, out)
        g.opts.log("  step %d, %s: %s" % (g.step, run_name(case), "ok" if out.ok else out.reason[:160]))

    emulated = [j for j, (g, i) in enumerate(items) if g.case_list[i][0] == "emulator"]
    if emulated:
        jobs = max(1, min(len(emulated), opts.run_jobs or os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for f in [pool.submit(one, j) for j in emulated]:
                f.result()
    for j in range(len(items)):
        if results[j] is None:
            one(j)
    return results


def run_emulated(graders, opts):
    """The emulated correctness runs of every step at once (they need only the CPU, and the GPU parts are
    timed with the CPU idle): {step: [result or None (a GPU run, made later)] in its case order}."""
    items = [(g, i) for g in graders for i, c in enumerate(g.case_list) if c[0] == "emulator"]
    out = {g.step: [None] * len(g.case_list) for g in graders}
    for (g, i), r in zip(items, run_cases(items, opts)):
        out[g.step][i] = r
    return out


class StepGrader:
    def __init__(self, ws, step, folder, handin, opts, gpu, helpers=()):
        self.ws, self.step, self.folder, self.handin, self.opts, self.gpu = ws, step, folder, handin, opts, gpu
        self.helpers = sorted(helpers)  # the hand-in's files outside steps/ with regions of this step
        self.tag = "step%02d" % step
        self.exe = os.path.join(ws.build, self.tag)
        self.share = step_share(step)
        self.tracks = [t for t in TRACKS if "steps/%s/%s.cu" % (folder, t) in handin]
        self.gtrack = gpu_track(gpu)
        self.executed = {t: [] for t in self.tracks}  # track -> [Executed]: emulated runs that ran to the end
        self.first_failure = {}  # track -> the reason of its first emulated run that did not
        self.hung = set()  # tracks with a run stopped at the time limit or a deadlock
        self.probes = []  # report entries of the implementation's probe runs

    def build(self):
        """Builds the step's executable; None, or why it does not build."""
        self.opts.log("step %d: building %s" % (self.step, self.tag))
        b = self.ws.build_target(self.tag, jobs=self.opts.jobs)
        if b.rc == 0:
            return None
        return "does not build: " + (first_errors(b.out) if not b.timed_out else "the build hit its time limit")

    def grade(self, build_error=None, results=None):
        """The step's report. `results`: the emulated runs of self.case_list, already run (run_emulated); the
        rest (GPU runs) run here, one at a time."""
        res = {"step": self.step, "folder": self.folder, "maximum": points_of(self.step), "tracks": self.tracks,
               "bonus": self.step in BONUS}
        parts = {"correctness": part(self.share["correctness"]),
                 "performance": part(self.share["performance"], graded=self.perf_graded()),
                 "implementation": part(self.share["implementation"])}
        res["parts"] = parts
        if not parts["performance"]["graded"]:
            lose(parts["performance"], 0, self.perf_ungraded_reason())
        if build_error:
            for name, p in parts.items():
                if p["graded"]:
                    lose(p, p["maximum"], build_error)
            return self.total(res)
        self.correctness(parts["correctness"], results)
        self.implementation(parts["implementation"])
        if parts["performance"]["graded"]:
            self.performance(parts["performance"], parts["correctness"])
        return self.total(res)

    def total(self, res):
        parts = res["parts"]
        for p in parts.values():
            if p["graded"]:
                p["points"] = round(max(0.0, p["maximum"] - sum(x["points"] for x in p["lost"])), 1)
        res["points"] = round(sum(p["points"] for p in parts.values() if p["graded"]), 1)
        res["graded_maximum"] = round(sum(p["maximum"] for p in parts.values() if p["graded"]), 1)
        res["ungraded"] = round(sum(p["maximum"] for p in parts.values() if not p["graded"]), 1)
        return res

    # -- correctness ---------------------------------------------------------------------------
    @property
    def case_list(self):
        """The correctness runs (drawn once: their inputs' seeds come from one generator)."""
        if getattr(self, "_cases", None) is None:
            self._cases = self.cases()
        return self._cases

    def cases(self):
        seed = self.opts.seed
        rng = random.Random("%s:inputs:%d" % (seed, self.step))
        out = []
        for track in self.tracks:
            for label, shape, exact in draw_cases(self.step, seed):
                args = ["--device", "emu", "--track", track, "--emu-sms", str(emu_sms(self.step)),
                        "--emu-seed", str(rng.randint(1, 2**31)), "--seed", str(rng.randint(1, 2**31))]
                out.append(("emulator", track, label, shape, exact, args))
        if self.gtrack in self.tracks and self.gtrack in self.ws.cuda_tracks:
            for label, shape, exact in gpu_cases(self.step, seed):
                args = ["--track", self.gtrack, "--check-only", "--seed", str(rng.randint(1, 2**31))]
                out.append(("GPU", self.gtrack, label, shape, exact, args))
        return out

    def command(self, args, shape, exact):
        m, n, k = shape
        return [self.exe] + args + ["--m", str(m), "--n", str(n), "--k", str(k)] + (["--exact"] if exact else [])

    def correctness(self, p, results=None):
        cases = self.case_list
        each = p["maximum"] / len(cases)
        results = list(results or [None] * len(cases))
        todo = [(self, i) for i, r in enumerate(results) if r is None]
        for (_, i), r in zip(todo, run_cases(todo, self.opts)):
            results[i] = r
        runs = []
        hang = None
        count = {}  # track -> its runs (emulated and GPU)
        rules = {}  # track -> [(run name, Outcome)] of its emulated runs that broke a rule
        failed = []  # (track, run name, Outcome) of the other runs that did not match
        for case, (cmd, r, out) in zip(cases, results):
            device, track, label, shape, exact, args = case
            name = run_name(case)
            if out.hang and r is not None and r.timed_out and device == "GPU":
                out.reason += self.watchdog_line(args, shape, exact)
            entry = {"run": name, "command": " ".join(cmd[1:]), "ok": out.ok, "kind": out.kind,
                     "seconds": round(r.seconds, 2) if r else 0, "detail": out.reason}
            if out.rule:
                entry["rule"] = out.rule
                if out.where:
                    entry["where"] = out.where
            runs.append(entry)
            count[track] = count.get(track, 0) + 1
            if device == "emulator":
                if out.stats:
                    self.executed[track].append(Executed(label, shape, out.stats[0], out.stats[1]))
                elif out.kind != "not run":
                    self.first_failure.setdefault(track, "%s: %s" % (name, out.reason))
                if out.hang:
                    self.hung.add(track)
            if out.kind in ("rule", "todo"):
                rules.setdefault(track, []).append((name, out))
            elif not out.ok:
                failed.append((track, name, out))
            if out.hang and hang is None:
                hang = "%s: %s" % (name, out.reason)
        p["runs"] = runs
        if hang:
            p["lost"] = [{"points": p["maximum"], "reason": "a hang scores zero: " + hang}]
            return
        for track, hits in rules.items():
            emulated = sum(1 for c in cases if c[0] == "emulator" and c[1] == track)
            names = []
            for _, out in hits:
                if out.rule not in names:
                    names.append(out.rule)
            quoted = "; ".join("`%s`" % x for x in names)
            if all(out.kind == "todo" for _, out in hits):
                what = "a TODO of the handout is still there (%s), on %d of its %d emulated runs: the step is not " \
                       "written, so this track's correctness scores zero" % (quoted, len(hits), emulated)
            else:
                what = "the emulator reports a broken rule (%s) on %d of its %d emulated runs; a race or a broken " \
                       "rule is a bug however few shapes show it, so this track's correctness scores zero" % (
                           quoted, len(hits), emulated)
            lose(p, each * count[track], "%s track: %s (its %d runs' %.2f points). %s: %s" % (
                track, what, count[track], each * count[track], hits[0][0], hits[0][1].reason))
        for track, name, out in failed:
            if track not in rules:
                lose(p, each, "%s: %s" % (name, out.reason))

    def watchdog_line(self, args, shape, exact):
        """A GPU run that hung, again from a watchdog build (GEMM_WATCHDOG): the line naming the wait."""
        build = os.path.join(self.ws.root, "build-watchdog")
        try:
            self.ws.configure(build=build, extra=["-DGEMM_WATCHDOG=ON"])
        except GradeError:
            return "; (the watchdog build did not configure)"
        b = self.ws.build_target(self.tag, build=build, jobs=self.opts.jobs)
        if b.rc != 0:
            return "; (the watchdog build failed)"
        cmd = [os.path.join(build, self.tag)] + self.command(args, shape, exact)[1:]
        r = run(cmd, self.opts.time_limit)
        lines = [l.strip() for l in r.out.split("\n") if "gemm watchdog:" in l]
        return "; the watchdog build reports: " + lines[0] if lines else "; the watchdog build reported nothing"

    # -- implementation ------------------------------------------------------------------------
    def implementation(self, p):
        forbidden = []
        todo = []
        per_track_fail = {}

        def scan(rel):
            """Forbidden constructs and left TODOs in one hand-in source file."""
            code = strip_comments(self.handin[rel].decode(errors="replace"))
            for rx, what in FORBIDDEN_SOURCE:
                m = rx.search(code)
                if m:
                    forbidden.append("%s %s (`%s` in the source)" % (rel, what, m.group(0)))
            if "GEMM_TODO(" in code:
                todo.append(rel)

        objects = []
        for track in self.tracks:
            rel = "steps/%s/%s.cu" % (self.folder, track)
            scan(rel)
            objects.append(os.path.join(self.ws.build, "steps", "CMakeFiles", "%s_emu_%s.dir" % (self.tag, track),
                                        "%s_emu_%s.cpp.o" % (self.tag, track)))
            objects.append(os.path.join(self.ws.build, "steps", "CMakeFiles", "%s_%s.dir" % (self.tag, track),
                                        self.folder, "%s.cu.o" % track))
        for rel in self.helpers:
            scan(rel)
        syms = sorted(s for s in undefined_symbols(objects) if FORBIDDEN_SYMBOL.search(s))
        if syms:
            forbidden.append("the compiled step refers to %s" % ", ".join(syms[:4]))
        if forbidden:
            lose(p, p["maximum"], "a step must compute D with its own kernels: " + "; ".join(forbidden))
            return
        if todo:
            lose(p, p["maximum"], "GEMM_TODO still in %s: the step is not written yet" % ", ".join(todo))
            return
        for track in self.tracks:
            rel = "steps/%s/%s.cu" % (self.folder, track)
            per_track_fail[track] = self.track_requirements(track, rel, self.handin[rel].decode(errors="replace"))
        p["checks"] = {t: (f or ["ok"]) for t, f in per_track_fail.items()}
        if self.probes:
            p["probes"] = self.probes
        each = p["maximum"] / max(1, len(self.tracks))
        for track, fails in per_track_fail.items():
            if fails:
                lose(p, each, "%s track: %s" % (track, "; ".join(fails)))

    def grid_evidence(self, track):
        """(Executed, persistent) that shows the track's grid, or None. The many-tiles shape (a correctness run or
        a probe) decides: it has more tiles than the emulated device keeps resident; short of it, any run that
        executed with fewer CTAs than tiles shows a persistent grid."""
        done = self.executed.get(track, [])
        many = [x for x in done if x.label in ("many tiles", "probe")]
        if many:
            return many[0], many[0].clusters < many[0].tiles
        fewer = [x for x in done if x.clusters < x.tiles]
        return (fewer[0], True) if fewer else None

    def probe(self, track):
        """Runs the track on the emulator at the many-tiles shape with other schedules (PROBE_RUNS at most) until
        one executes to the end: implementation is judged on a run that executed, not lost because a correctness
        run failed. Probes score no correctness points. Not for a track that hung."""
        if track in self.hung:
            return
        drawn = draw_cases(self.step, self.opts.seed)
        label, shape, _ = next((c for c in drawn if c[0] == "many tiles"), drawn[-1])
        rng = random.Random("%s:probe:%d:%s" % (self.opts.seed, self.step, track))
        for _ in range(PROBE_RUNS):
            args = ["--device", "emu", "--track", track, "--emu-sms", str(emu_sms(self.step)),
                    "--emu-seed", str(rng.randint(1, 2**31)), "--seed", str(rng.randint(1, 2**31))]
            cmd = self.command(args, shape, False)
            r = run(cmd, self.opts.time_limit)
            out = run_summary(r, self.opts.time_limit)
            name = "%s on the emulator, probe at the %s shape %dx%dx%d float" % ((track, label) + tuple(shape))
            self.probes.append({"run": name, "command": " ".join(cmd[1:]), "executed": bool(out.stats),
                                "kind": out.kind, "seconds": round(r.seconds, 2), "detail": out.reason})
            self.opts.log("  %s: %s" % (name, "executed" if out.stats else out.reason[:160]))
            if out.stats:
                self.executed[track].append(Executed("probe", shape, out.stats[0], out.stats[1]))
                return
            if out.hang:
                self.hung.add(track)
                return

    def track_requirements(self, track, rel, text):
        fails = []
        reqs = requirements(self.step, track)
        if not self.executed[track] or (any(r[0] == "grid" for r in reqs) and self.grid_evidence(track) is None):
            self.probe(track)
        if not self.executed[track]:
            why = self.first_failure.get(track)
            return ["no run of this track executed to the end on the emulator%s: the lesson is judged on a step "
                    "that runs" % (" (%s)" % why if why else "")]
        ptx_path = os.path.join(self.ws.root, "ptx", "%s_%s.ptx" % (self.tag, track))
        os.makedirs(os.path.dirname(ptx_path), exist_ok=True)
        ptx = None
        for kind, what, desc in reqs:
            if kind == "ptx":
                if ptx is None:
                    r = make_ptx(self.ws, os.path.join(self.ws.src, rel), track, ptx_path)
                    if r.rc != 0:
                        return ["does not compile to PTX: " + first_errors(r.out, 3)]
                    with open(ptx_path, errors="replace") as f:
                        ptx = f.read()
                if not re.search(what, ptx):
                    fails.append("no %s in its PTX" % desc)
            elif kind == "const":
                name, least = what
                v = const_value(text, name)
                if v is None or v < least:
                    fails.append("%s: %s = %s" % (desc, name, "not found" if v is None else v))
            elif kind == "grid":
                ev = self.grid_evidence(track)
                if ev is None:
                    fails.append("%s: no run with more tiles than the emulated device keeps resident executed to "
                                 "the end (probes included), so the grid is unknown" % desc)
                elif not ev[1]:
                    x = ev[0]
                    fails.append("%s: %d CTAs for %d tiles at %dx%d" % (desc, x.clusters, x.tiles, x.shape[0],
                                                                       x.shape[1]))
            elif kind == "threads":
                x = self.executed[track][0]
                per_cta = x.threads // max(1, x.clusters)
                if per_cta < what:
                    fails.append("%s: %d threads per CTA" % (desc, per_cta))
        return fails

    # -- performance ---------------------------------------------------------------------------
    def perf_graded(self):
        return self.gpu is not None and self.gtrack in self.tracks and self.gtrack in self.ws.cuda_tracks

    def perf_ungraded_reason(self):
        if self.gpu is None:
            return "not graded: no GPU here (performance is graded on a GPU only)"
        return "not graded: the hand-in has no %s.cu for this GPU's track" % self.gtrack

    def performance(self, p, correctness):
        gpu_runs = [r for r in correctness.get("runs", []) if " on the GPU," in r["run"]]
        if not gpu_runs or not all(r["ok"] for r in gpu_runs):
            lose(p, p["maximum"], "not timed: the step is not correct on the GPU")
            return
        cal, path = load_calibration(self.gpu[0], self.opts.calibration)
        ref = (cal or {}).get("steps", {}).get("%02d" % self.step)
        if not ref:
            p["graded"] = False
            lose(p, 0, "not graded: no calibration of step %d for %s (%s); tools/grade --calibrate writes it" %
                 (self.step, self.gpu[0], path))
            return
        b = self.ws.build_target("gemm_bench", jobs=self.opts.jobs)
        if b.rc != 0:
            lose(p, p["maximum"], "gemm_bench does not build: " + first_errors(b.out, 3))
            return
        sizes = sorted(ref)
        ratios, why = bench_ratios(os.path.join(self.ws.build, "gemm_bench"), self.step, sizes, PERF_REPETITIONS,
                                   max(600, 20 * self.opts.time_limit))
        if ratios is None:
            lose(p, p["maximum"], why)
            return
        each = p["maximum"] / len(sizes)
        p["ratios"] = {}
        for size in sizes:
            got = ratios.get(expand_size(size))
            if got is None:
                lose(p, each, "%s: not measured" % size)
                continue
            pts, rel = perf_points(each, got, ref[size])
            p["ratios"][size] = {"ratio_to_cublas": round(got, 4), "reference": ref[size], "relative": round(rel, 3)}
            if pts < each:
                lose(p, each - pts, "%s: %.1f%% of cuBLAS in the same run, %.0f%% of the reference's %.1f%% "
                     "(full points from %.0f%%, none at %.0f%%)" % (size, 100 * got, 100 * rel, 100 * ref[size],
                                                                  100 * PERF_BOUND, 100 * PERF_FLOOR))


def grade(tar_path, opts, root):
    """Grades a hand-in; returns the report (a dict). Refused before anything is written."""
    files = handout.read_tree(root)
    folders = handout.steps_of(files)
    steps = opts.steps or steps_in_tar(tar_path, folders)
    unknown = [s for s in steps if s not in folders]
    if unknown:
        raise Refused("step %s: not in this tree (its steps: %s)" % (
            ", ".join(map(str, unknown)), ", ".join(map(str, sorted(folders)))))
    ungraded = [s for s in steps if points_of(s) is None]
    if ungraded:
        raise Refused("step %s: not graded (the course grades steps %s, and step%s %s as a bonus)" % (
            ", ".join(map(str, ungraded)), ", ".join(map(str, sorted(POINTS))), "s" if len(BONUS) > 1 else "",
            ", ".join(map(str, sorted(BONUS)))))
    handin = check_handin(tar_path, steps, folders, opts.tracks, files)
    # Nothing was written so far; from here on, only the grading directory.
    commit = handout.source_commit(root)
    tree, _ = handout.make_tree(files, steps, commit)
    for path, data in handin.items():
        tree[path] = data
    gpu = None if opts.device == "emu" else gpu_info()
    if opts.device == "gpu" and gpu is None:
        raise GradeError("--device gpu: cudaGetDeviceCount finds no GPU")
    cuda_tracks = opts.cuda_tracks if opts.cuda_tracks is not None else (list(TRACKS) if gpu else [])
    ws = Workspace(opts.workdir, steps, cuda_tracks, bench=gpu is not None, log=opts.log)
    sync_tree(tree, ws.src)
    ws.configure()
    graders = [StepGrader(ws, s, folders[s], handin, opts, gpu, helper_files(files, {s})) for s in steps]
    errors = {g.step: g.build() for g in graders}
    emulated = run_emulated([g for g in graders if not errors[g.step]], opts)
    results = [g.grade(errors[g.step], emulated.get(g.step)) for g in graders]
    return {
        "handin": os.path.abspath(tar_path),
        "steps": results,
        "total": {"points": round(sum(r["points"] for r in results), 1),
                  "graded_maximum": round(sum(r["graded_maximum"] for r in results), 1),
                  "ungraded": round(sum(r["ungraded"] for r in results), 1),
                  "maximum": sum(r["maximum"] for r in results)},
        "seed": "demo (public: %d)" % DEMO_SEED if opts.seed_is_demo else "private",
        "source": commit,
        "gpu": gpu[0] if gpu else None,
        "devices": ["emulator"] + (["GPU (%s)" % gpu_track(gpu)] if gpu and gpu_track(gpu) in cuda_tracks else []),
        "rules": {"points": POINTS, "bonus": BONUS, "share": SHARE, "perf_bound": PERF_BOUND,
                  "perf_floor": PERF_FLOOR, "run_limit_s": opts.time_limit},
    }


def prepare(steps, opts, root):
    """Builds a handout of `steps` in the grading directory, so that gradings there recompile only
    the handed-in files (the ctest fixture of tests/course)."""
    files = handout.read_tree(root)
    tree, _ = handout.make_tree(files, steps, handout.source_commit(root))
    gpu = None if opts.device == "emu" else gpu_info()
    cuda_tracks = opts.cuda_tracks if opts.cuda_tracks is not None else (list(TRACKS) if gpu else [])
    ws = Workspace(opts.workdir, steps, cuda_tracks, bench=gpu is not None, log=opts.log)
    sync_tree(tree, ws.src)
    ws.configure()
    for target in ["step%02d" % s for s in steps] + (["gemm_bench"] if ws.bench else []):
        b = ws.build_target(target, jobs=opts.jobs)
        if b.rc != 0:
            raise GradeError("the handout's %s does not build:\n%s" % (target, first_errors(b.out, 10)))
    return ws


def false_alarms(opts, root, seeds):
    """The emulator's false alarms on the reference solution: the emulated correctness runs of every step of
    opts.steps (default all), both tracks, graded as a hand-in would be with each of `seeds`. The reference is
    correct, so every run that does not match is a false alarm of the grading (a rule, a hang, a mismatch).
    Returns the summary (runs, failures by kind, each failure with its command)."""
    files = handout.read_tree(root)
    folders = handout.steps_of(files)
    steps = opts.steps or sorted(s for s in folders if points_of(s) is not None)
    ws = Workspace(opts.workdir, steps, [], bench=False, log=opts.log)
    sync_tree(files, ws.src)
    ws.configure()
    handin = {p: files[p] for p in expected_files(steps, folders, opts.tracks, files)}
    summary = {"source": handout.source_commit(root), "date": time.strftime("%Y-%m-%d"), "steps": steps,
               "tracks": list(opts.tracks), "seeds": [str(x) for x in seeds],
               "time_limit_s": opts.time_limit, "runs": 0, "by_kind": {}, "by_step": {}, "failures": [],
               "seconds": 0.0}
    start = time.monotonic()
    for s in steps:
        b = ws.build_target("step%02d" % s, jobs=opts.jobs)
        if b.rc != 0:
            raise GradeError("the reference of step %d does not build:\n%s" % (s, first_errors(b.out, 10)))
    for seed in seeds:
        o = Options(**dict(opts.__dict__, seed=seed))
        graders = [StepGrader(ws, s, folders[s], handin, o, None, helper_files(files, {s})) for s in steps]
        opts.log("seed %s: %d emulated runs" % (seed, sum(len(g.case_list) for g in graders)))
        emulated = run_emulated(graders, o)
        for g in graders:
            for case, (cmd, r, out) in zip(g.case_list, emulated[g.step]):
                summary["runs"] += 1
                summary["by_kind"][out.kind] = summary["by_kind"].get(out.kind, 0) + 1
                st = summary["by_step"].setdefault("%02d" % g.step, {"runs": 0, "failures": 0, "seconds": 0.0,
                                                                    "slowest": 0.0})
                st["runs"] += 1
                st["seconds"] = round(st["seconds"] + (r.seconds if r else 0), 1)
                st["slowest"] = round(max(st["slowest"], r.seconds if r else 0), 1)
                if not out.ok:
                    st["failures"] += 1
                    summary["failures"].append({"step": g.step, "seed": str(seed), "run": run_name(case),
                                                "kind": out.kind, "rule": out.rule, "command": " ".join(cmd[1:]),
                                                "detail": out.reason})
    summary["seconds"] = round(time.monotonic() - start, 1)
    fails = len(summary["failures"])
    summary["rate"] = "%d of %d runs (%.2f %%)" % (fails, summary["runs"], 100.0 * fails / max(1, summary["runs"]))
    return summary


def calibrate(opts, root, out=None):
    """Times the reference solution of each step against cuBLAS on this GPU; writes the calibration."""
    gpu = gpu_info()
    track = gpu_track(gpu)
    if gpu is None or track is None:
        raise GradeError("--calibrate needs a GPU of a track (hopper: compute capability 9.0, blackwell: 10.x); "
                         "cudaGetDeviceCount finds %s" % ("none" if gpu is None else "%s (sm_%d%d)" % gpu))
    files = handout.read_tree(root)
    folders = handout.steps_of(files)
    steps = opts.steps or sorted(s for s in folders if points_of(s) is not None)
    commit = handout.source_commit(root)
    ws = Workspace(opts.workdir, steps, [track], bench=True, log=opts.log)
    sync_tree(files, ws.src)
    ws.configure()
    b = ws.build_target("gemm_bench", jobs=opts.jobs)
    if b.rc != 0:
        raise GradeError("gemm_bench does not build:\n" + first_errors(b.out, 10))
    cal = {"gpu": gpu[0], "compute_capability": "%d.%d" % gpu[1:], "track": track, "source": commit,
           "date": time.strftime("%Y-%m-%d"), "repetitions": CALIBRATION_REPETITIONS,
           "what": "median same-run ratio to cuBLAS (gemm_bench ratio_to_cublas) of the reference solution",
           "perf_bound": PERF_BOUND, "perf_floor": PERF_FLOOR, "steps": {}, "measured": {}}
    for s in steps:
        sizes = PERF_SIZES.get(s, PERF_SIZES_DEFAULT)
        opts.log("step %d: timing the reference at %s" % (s, ", ".join(sizes)))
        ratios, why = bench_ratios(os.path.join(ws.build, "gemm_bench"), s, sizes, CALIBRATION_REPETITIONS, 3600)
        if ratios is None:
            raise GradeError("step %d: %s" % (s, why))
        cal["steps"]["%02d" % s] = {expand_size(k): round(v, 4) for k, v in sorted(ratios.items())}
        cal["measured"]["%02d" % s] = {"source": commit, "date": cal["date"]}
    out = out or os.path.join(CALIBRATION_DIR, gpu_slug(gpu[0]) + ".json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if os.path.exists(out):  # calibrated in parts (--steps): keep the other steps of the same GPU
        with open(out) as f:
            old = json.load(f)
        if old.get("gpu") == cal["gpu"]:
            # The file's "source" and "date" are this run's; "measured" keeps each step's own.
            measured = {k: old.get("measured", {}).get(k, {"source": old.get("source"), "date": old.get("date")})
                        for k in old.get("steps", {})}
            cal["steps"] = dict(old.get("steps", {}), **cal["steps"])
            cal["steps"] = {k: cal["steps"][k] for k in sorted(cal["steps"])}
            cal["measured"] = {k: dict(measured, **cal["measured"])[k] for k in cal["steps"]}
    with open(out, "w") as f:
        json.dump(cal, f, indent=2)
        f.write("\n")
    return out, cal


def table(report):
    """The terminal table, then each lost point with its reason."""
    def cell(p):
        if not p["graded"]:
            return "not graded (%g)" % p["maximum"]
        return "%g / %g" % (p["points"], p["maximum"])
    rows = [("step", "correctness", "performance", "implementation", "points")]
    for r in report["steps"]:
        pp = r["parts"]
        pts = "%g / %g" % (r["points"], r["graded_maximum"])
        if r["ungraded"]:
            pts += " (+%g not graded)" % r["ungraded"]
        rows.append(("%d%s" % (r["step"], " (bonus)" if r.get("bonus") else ""), cell(pp["correctness"]),
                     cell(pp["performance"]), cell(pp["implementation"]), pts))
    t = report["total"]
    tot = "%g / %g" % (t["points"], t["graded_maximum"])
    if t["ungraded"]:
        tot += " (+%g not graded)" % t["ungraded"]
    rows.append(("all", "", "", "", tot))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in report["steps"]:
        for name in ("correctness", "performance", "implementation"):
            for x in r["parts"][name]["lost"]:
                lines.append("step %d %s%s: %s" % (r["step"], name, " -%g" % x["points"] if x["points"] else "",
                                                   x["reason"]))
    return "\n".join(lines)



# ---------------------------------------------------------------------------------------------
# The autograder formats courses use (docs/course.md, "Gradescope and Autolab").
# ---------------------------------------------------------------------------------------------
GRADESCOPE_VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
PARTS = ("correctness", "performance", "implementation")


def part_output(p):
    """A part's points lost with their reasons, then its runs (correctness) or checks (implementation)."""
    lines = []
    for x in p["lost"]:
        lines.append(("-%g: " % x["points"] if x["points"] else "") + x["reason"])
    for r in p.get("runs", []):
        lines.append("%s %s%s" % ("ok    " if r["ok"] else "FAILED", r["run"], "" if r["ok"] else ": " + r["detail"]))
    for track, checks in sorted(p.get("checks", {}).items()):
        lines.append("%s: %s" % (track, "; ".join(checks)))
    for r in p.get("probes", []):
        lines.append("probe %s: %s" % (r["run"], "executed" if r["executed"] else r["detail"]))
    return "\n".join(lines) or "full points"


def gradescope_results(report, seconds, visibility="after_due_date"):
    """results.json of the Gradescope autograder specification
    (https://gradescope-autograders.readthedocs.io/en/latest/specs/): the top-level score (the graded points:
    it overrides the tests' sum), execution_time in seconds, output and visibility, and a test per step and
    part with name, number, score, max_score, output and visibility. A part not graded here (performance without
    a GPU) is a test of 0 of 0 points that says so."""
    tests = []
    for r in report["steps"]:
        for i, name in enumerate(PARTS, 1):
            p = r["parts"][name]
            tests.append({"name": "step %d (%s): %s" % (r["step"], r["folder"], name),
                          "number": "%d.%d" % (r["step"], i),
                          "score": p["points"] if p["graded"] else 0.0,
                          "max_score": p["maximum"] if p["graded"] else 0.0,
                          "output": part_output(p), "visibility": visibility})
    t = report["total"]
    head = ["%g of %g points graded here%s." % (t["points"], t["graded_maximum"],
                                                "; %g not graded (performance is graded on a GPU only)" % t["ungraded"]
                                                if t["ungraded"] else ""),
            "Devices: %s. Seed: %s. Source: %s." % (", ".join(report["devices"]), report["seed"], report["source"])]
    return {"score": t["points"], "execution_time": int(round(seconds)), "output": "\n".join(head) + "\n\n" +
            table(report), "visibility": visibility, "tests": tests}


def gradescope_refused(reason, seconds):
    """results.json for a hand-in that was refused: no points, and why (always visible: it is about the upload)."""
    return {"score": 0.0, "execution_time": int(round(seconds)), "visibility": "visible",
            "output": "Not graded: %s\n\nHand in the assigned steps' hopper.cu and blackwell.cu and the helpers with "
                      "their TODOs, with their paths from the handout's top folder, and nothing else (HANDOUT.md has "
                      "the command)." % reason,
            "tests": []}


def autolab_line(report=None, steps=()):
    """Autolab's autoresult (https://docs.autolabproject.com/lab/): the last line of the autograder's output, a
    JSON object with "scores" (a problem per step, named stepNN, its points) and "scoreboard" (the total, then
    each step's points). A refused hand-in (no report) scores zero on its steps."""
    if report is None:
        scores = {"step%02d" % s: 0.0 for s in steps}
        return json.dumps({"scores": scores, "scoreboard": [0.0] + [0.0 for _ in steps]})
    scores = {"step%02d" % r["step"]: r["points"] for r in report["steps"]}
    return json.dumps({"scores": scores,
                       "scoreboard": [report["total"]["points"]] + [r["points"] for r in report["steps"]]})
