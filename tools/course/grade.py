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
import ctypes
import ctypes.util
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tarfile
import time

import handout

# ---------------------------------------------------------------------------------------------
# The rules, as named constants (docs/course.md, "How a step is graded").
# ---------------------------------------------------------------------------------------------
POINTS = {1: 5, 2: 5, 3: 10, 4: 10, 5: 10, 6: 10, 7: 15, 8: 5, 9: 15, 10: 15}
SHARE = {"correctness": 0.6, "performance": 0.2, "implementation": 0.2}
# Performance: full points at a same-run ratio to cuBLAS of at least PERF_BOUND times the reference
# solution's (on the same GPU model, from its calibration file), none at PERF_FLOOR times or less,
# linear in between.
PERF_BOUND = 0.90
PERF_FLOOR = 0.50
PERF_REPETITIONS = 3  # gemm_bench --benchmark_repetitions when grading (the median counts)
CALIBRATION_REPETITIONS = 5
PERF_SIZES = {1: ["128x128x64"], 2: ["128x128x1024"]}
PERF_SIZES_DEFAULT = ["4096", "8192"]
RUN_LIMIT_S = 60  # each correctness run
BUILD_LIMIT_S = 1800
EMU_SMS = 2  # emulated SMs: a persistent grid smaller than the tile count
DEMO_SEED = 14  # the public seed; a real grading keeps its own (--seed-file)
TRACKS = ("hopper", "blackwell")
CALIBRATION_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibration")
MAX_FILE_BYTES = 1 << 20

# Implementation requirements: (kind, what, description). Kinds: "ptx" (a regex the PTX of the
# track's file must match), "const" (a constexpr int of the file at least this value), "grid" (the
# emulated grid smaller than the tile count: a persistent kernel), "threads" (threads per CTA as the
# emulator ran it, at least). A step's list adds to the previous step's.
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
            if r[0] == "const":
                out = [x for x in out if not (x[0] == "const" and x[1][0] == r[1][0])]
            out.append(r)
    return out


def step_share(step):
    total = POINTS[step]
    c = round(total * SHARE["correctness"], 1)
    p = round(total * SHARE["performance"], 1)
    return {"correctness": c, "performance": p, "implementation": round(total - c - p, 1)}


# ---------------------------------------------------------------------------------------------
# The hand-in.
# ---------------------------------------------------------------------------------------------
def expected_files(steps, folders, tracks):
    return {"steps/%s/%s.cu" % (folders[s], t) for s in steps for t in tracks}


def check_handin(path, steps, folders, tracks):
    """{repository path: bytes} of a valid hand-in; Refused naming every problem otherwise.

    Only regular files at exactly the expected paths (a leading "./" is allowed), each once, all of
    them, none over MAX_FILE_BYTES, no NUL bytes; directory entries only for their parent folders.
    Reads the archive into memory: nothing is extracted."""
    want = expected_files(steps, folders, tracks)
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
        want = json.dumps({"tracks": self.cuda_tracks, "bench": self.bench, "extra": list(extra)})
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
    return [("square", (square, square, square), False), ("non-square", nonsquare, True),
            ("ragged", ragged(), False), ("ragged", ragged(), True), ("many tiles", many, True)]


def gpu_cases(step, seed):
    rng = random.Random("%s:gpu:%d" % (seed, step))
    if step <= 2:
        return draw_cases(step, seed)
    return [("square", (2048, 2048, 2048), False), ("non-square", (2048, 1536, 1024), False),
            ("ragged", (1000 + rng.randint(1, 200), 8 * rng.randint(100, 160), 8 * rng.randint(60, 128)), False),
            ("exact", (1024 + rng.randint(1, 127), 1024, 512), True)]


ERROR_RE = re.compile(r"^error: (.*)$", re.M)
# What a wrong D most often means, after the harness's verdict names the first bad element.
MISMATCH_CAUSES = [
    ("unwritten", "part of D was never written: check the tile each CTA computes (its origin) and the store's "
                  "coordinates and bounds"),
    ("guard", "a write landed outside D: check the tile origins and the bounds of the store"),
]


def run_summary(r, limit):
    """(ok, hang, reason, stats) from one step-executable run."""
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
        return False, True, why, stats
    if r.rc == 0 and re.search(r"verdict:\s+match", r.out):
        return True, False, "", stats
    errors = ERROR_RE.findall(r.out)
    if errors:
        # The emulator's message spans several lines after "error:"; keep its first lines.
        i = r.out.index("error: " + errors[0])
        block = r.out[i + len("error: "):].split("\n")
        text = " | ".join(l.strip() for l in block[:4] if l.strip() and not l.startswith("step "))
        hang = "deadlock" in errors[0]
        return False, hang, text, stats
    v = re.search(r"verdict:\s+(.*)", r.out)
    if v:
        text = v.group(1).strip()
        for pattern, cause in MISMATCH_CAUSES:
            if pattern in text:
                text += "; " + cause
                break
        return False, False, text, stats
    if r.rc < 0 or r.rc > 128:
        return False, False, "the step executable died (signal %d): %s" % (abs(r.rc) % 128, tail(r.out, 3)), stats
    return False, False, "exit status %d: %s" % (r.rc, tail(r.out, 3)), stats


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
        self.calibration = None  # a calibration file instead of the one for this GPU
        self.log = print
        self.__dict__.update(kw)


def part(maximum, graded=True):
    return {"points": 0.0, "maximum": maximum, "graded": graded, "lost": []}


def lose(p, points, reason):
    p["lost"].append({"points": round(points, 2), "reason": reason})


class StepGrader:
    def __init__(self, ws, step, folder, handin, opts, gpu):
        self.ws, self.step, self.folder, self.handin, self.opts, self.gpu = ws, step, folder, handin, opts, gpu
        self.tag = "step%02d" % step
        self.exe = os.path.join(ws.build, self.tag)
        self.share = step_share(step)
        self.tracks = [t for t in TRACKS if "steps/%s/%s.cu" % (folder, t) in handin]
        self.gtrack = gpu_track(gpu)
        self.stats = {}  # (track, label) -> (threads, clusters, shape) of a correct emulated run

    def grade(self):
        res = {"step": self.step, "folder": self.folder, "maximum": POINTS[self.step], "tracks": self.tracks}
        parts = {"correctness": part(self.share["correctness"]),
                 "performance": part(self.share["performance"], graded=self.perf_graded()),
                 "implementation": part(self.share["implementation"])}
        res["parts"] = parts
        if not parts["performance"]["graded"]:
            lose(parts["performance"], 0, self.perf_ungraded_reason())
        self.opts.log("step %d: building %s" % (self.step, self.tag))
        b = self.ws.build_target(self.tag, jobs=self.opts.jobs)
        if b.rc != 0:
            why = "does not build: " + (first_errors(b.out) if not b.timed_out else "the build hit its time limit")
            for name, p in parts.items():
                if p["graded"]:
                    lose(p, p["maximum"], why)
            return self.total(res)
        self.correctness(parts["correctness"])
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
    def cases(self):
        seed = self.opts.seed
        rng = random.Random("%s:inputs:%d" % (seed, self.step))
        out = []
        for track in self.tracks:
            for label, shape, exact in draw_cases(self.step, seed):
                args = ["--device", "emu", "--track", track, "--emu-sms", str(EMU_SMS),
                        "--emu-seed", str(rng.randint(1, 2**31)), "--seed", str(rng.randint(1, 2**31))]
                out.append(("emulator", track, label, shape, exact, args))
        if self.gtrack in self.tracks and self.gtrack in self.ws.cuda_tracks:
            for label, shape, exact in gpu_cases(self.step, seed):
                args = ["--track", self.gtrack, "--check-only", "--seed", str(rng.randint(1, 2**31))]
                out.append(("GPU", self.gtrack, label, shape, exact, args))
        return out

    def correctness(self, p):
        cases = self.cases()
        each = p["maximum"] / len(cases)
        runs = []
        hang = None
        stopped = set()  # (device, track) with a run stopped at the time limit: the rest is not run
        for device, track, label, (m, n, k), exact, args in cases:
            cmd = [self.exe] + args + ["--m", str(m), "--n", str(n), "--k", str(k)] + (["--exact"] if exact else [])
            name = "%s on the %s, %s %dx%dx%d %s" % (track, "emulator" if device == "emulator" else "GPU", label,
                                                   m, n, k, "exact" if exact else "float")
            if (device, track) in stopped:
                runs.append({"run": name, "command": " ".join(cmd[1:]), "ok": False, "seconds": 0,
                             "detail": "not run: an earlier run of this track hung"})
                lose(p, each, "%s: not run (an earlier run of this track hung)" % name)
                continue
            r = run(cmd, self.opts.time_limit)
            ok, hung, why, stats = run_summary(r, self.opts.time_limit)
            if r.timed_out:
                stopped.add((device, track))
            if hung and r.timed_out and device == "GPU":
                why += self.watchdog_line(args, m, n, k, exact)
            runs.append({"run": name, "command": " ".join(cmd[1:]), "ok": ok, "seconds": round(r.seconds, 2),
                         "detail": why})
            self.opts.log("  %s: %s" % (name, "ok" if ok else why[:160]))
            if ok and device == "emulator" and stats:
                self.stats[(track, label)] = (stats[0], stats[1], (m, n, k))
            if not ok:
                lose(p, each, "%s: %s" % (name, why))
            if hung and hang is None:
                hang = "%s: %s" % (name, why)
        p["runs"] = runs
        if hang:
            p["lost"] = [{"points": p["maximum"], "reason": "a hang scores zero: " + hang}]

    def watchdog_line(self, args, m, n, k, exact):
        """A GPU run that hung, again from a watchdog build (GEMM_WATCHDOG): the line naming the wait."""
        build = os.path.join(self.ws.root, "build-watchdog")
        try:
            self.ws.configure(build=build, extra=["-DGEMM_WATCHDOG=ON"])
        except GradeError:
            return "; (the watchdog build did not configure)"
        b = self.ws.build_target(self.tag, build=build, jobs=self.opts.jobs)
        if b.rc != 0:
            return "; (the watchdog build failed)"
        cmd = [os.path.join(build, self.tag)] + args + ["--m", str(m), "--n", str(n), "--k", str(k)]
        r = run(cmd + (["--exact"] if exact else []), self.opts.time_limit)
        lines = [l.strip() for l in r.out.split("\n") if "gemm watchdog:" in l]
        return "; the watchdog build reports: " + lines[0] if lines else "; the watchdog build reported nothing"

    # -- implementation ------------------------------------------------------------------------
    def implementation(self, p):
        forbidden = []
        todo = []
        per_track_fail = {}
        objects = []
        for track in self.tracks:
            rel = "steps/%s/%s.cu" % (self.folder, track)
            text = self.handin[rel].decode(errors="replace")
            code = strip_comments(text)
            for rx, what in FORBIDDEN_SOURCE:
                m = rx.search(code)
                if m:
                    forbidden.append("%s %s (`%s` in the source)" % (rel, what, m.group(0)))
            if "GEMM_TODO(" in code:
                todo.append(rel)
            objects.append(os.path.join(self.ws.build, "steps", "CMakeFiles", "%s_emu_%s.dir" % (self.tag, track),
                                        "%s_emu_%s.cpp.o" % (self.tag, track)))
            objects.append(os.path.join(self.ws.build, "steps", "CMakeFiles", "%s_%s.dir" % (self.tag, track),
                                        self.folder, "%s.cu.o" % track))
            per_track_fail[track] = self.track_requirements(track, rel, text)
        syms = sorted(s for s in undefined_symbols(objects) if FORBIDDEN_SYMBOL.search(s))
        if syms:
            forbidden.append("the compiled step refers to %s" % ", ".join(syms[:4]))
        p["checks"] = {t: (f or ["ok"]) for t, f in per_track_fail.items()}
        if forbidden:
            lose(p, p["maximum"], "a step must compute D with its own kernels: " + "; ".join(forbidden))
            return
        if todo:
            lose(p, p["maximum"], "GEMM_TODO still in %s: the step is not written yet" % ", ".join(todo))
            return
        each = p["maximum"] / max(1, len(self.tracks))
        for track, fails in per_track_fail.items():
            if fails:
                lose(p, each, "%s track: %s" % (track, "; ".join(fails)))

    def track_requirements(self, track, rel, text):
        fails = []
        correct = [k for k in self.stats if k[0] == track]
        if not correct:
            return ["no correct run on the emulator: the lesson is judged on a step that runs"]
        ptx_path = os.path.join(self.ws.root, "ptx", "%s_%s.ptx" % (self.tag, track))
        os.makedirs(os.path.dirname(ptx_path), exist_ok=True)
        ptx = None
        for kind, what, desc in requirements(self.step, track):
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
                st = self.stats.get((track, "many tiles"))
                if st is None:
                    fails.append("%s: the many-tiles run did not run correctly, so its grid is unknown" % desc)
                else:
                    threads, clusters, (m, n, _) = st
                    tiles = ((m + 127) // 128) * ((n + 127) // 128)
                    if clusters >= tiles:
                        fails.append("%s: %d CTAs for %d tiles at %dx%d" % (desc, clusters, tiles, m, n))
            elif kind == "threads":
                threads, clusters, _ = self.stats[correct[0]]
                per_cta = threads // max(1, clusters)
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
    handin = check_handin(tar_path, steps, folders, opts.tracks)
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
    results = [StepGrader(ws, s, folders[s], handin, opts, gpu).grade() for s in steps]
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
        "rules": {"points": POINTS, "share": SHARE, "perf_bound": PERF_BOUND, "perf_floor": PERF_FLOOR,
                  "run_limit_s": opts.time_limit},
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
    for s in steps:
        b = ws.build_target("step%02d" % s, jobs=opts.jobs)
        if b.rc != 0:
            raise GradeError("the handout of step %d does not build:\n%s" % (s, first_errors(b.out, 10)))
    return ws


def calibrate(opts, root, out=None):
    """Times the reference solution of each step against cuBLAS on this GPU; writes the calibration."""
    gpu = gpu_info()
    track = gpu_track(gpu)
    if gpu is None or track is None:
        raise GradeError("--calibrate needs a GPU of a track (hopper: compute capability 9.0, blackwell: 10.x); "
                         "cudaGetDeviceCount finds %s" % ("none" if gpu is None else "%s (sm_%d%d)" % gpu))
    files = handout.read_tree(root)
    folders = handout.steps_of(files)
    steps = opts.steps or sorted(folders)
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
           "perf_bound": PERF_BOUND, "perf_floor": PERF_FLOOR, "steps": {}}
    for s in steps:
        sizes = PERF_SIZES.get(s, PERF_SIZES_DEFAULT)
        opts.log("step %d: timing the reference at %s" % (s, ", ".join(sizes)))
        ratios, why = bench_ratios(os.path.join(ws.build, "gemm_bench"), s, sizes, CALIBRATION_REPETITIONS, 3600)
        if ratios is None:
            raise GradeError("step %d: %s" % (s, why))
        cal["steps"]["%02d" % s] = {expand_size(k): round(v, 4) for k, v in sorted(ratios.items())}
    out = out or os.path.join(CALIBRATION_DIR, gpu_slug(gpu[0]) + ".json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if os.path.exists(out):  # calibrated in parts (--steps): keep the other steps of the same GPU
        with open(out) as f:
            old = json.load(f)
        if old.get("gpu") == cal["gpu"]:
            cal["steps"] = dict(old.get("steps", {}), **cal["steps"])
            cal["steps"] = {k: cal["steps"][k] for k in sorted(cal["steps"])}
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
        rows.append(("%d" % r["step"], cell(pp["correctness"]), cell(pp["performance"]), cell(pp["implementation"]),
                     pts))
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
