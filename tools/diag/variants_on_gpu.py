#!/usr/bin/env python3
"""What the emulator sees that the hardware does not: every hopper single-bug variant of tests/emu
(tests/emu/variants.cmake, and any other file that defines variants with gemm_add_step_variant) run
as a real GPU program on a Hopper GPU, plainly and under compute-sanitizer racecheck and synccheck,
each run under a time limit, beside what the emulator says of the same variant. docs/emulator.md,
"On a GPU", says how to read the table.

  python3 tools/diag/variants_on_gpu.py [--build-dir DIR] [--out DIR] [--only REGEX] [-j N]
  python3 tools/diag/variants_on_gpu.py --build-dir DIR --no-build ...   (ctest -L gpu_variants)
  python3 tools/diag/variants_on_gpu.py --table RESULTS.json... [--out DIR]  (the table again; several
                                                           files: shards of one run, merged)
  python3 tools/diag/variants_on_gpu.py --self-test                       (no GPU needed)

The build (DIR, default build-gpu-variants; configured here unless --no-build: -DGEMM_GPU_VARIANTS=ON,
hopper track, no benchmarks or diagnostics; then the target gpu_variants) makes each variant a step
executable of its own, DIR/gpu_variants/<name> (cmake/GemmVariant.cmake): the step driver on the
variant's nvcc build for sm_90a, and on its emulated build for --device emu. Beside each,
<name>.json: its shape, emulated SMs, emulator seeds and EXPECT. Per variant:

  plain        --check-only at the variant's shape (exact mode when K <= 512, else float mode against
               the CPU reference), D checked against the reference
  large        the same at --large (default 2048x2048x512): more CTAs, more chances for a race
  racecheck    compute-sanitizer --tool racecheck at the variant's shape (kernels of its step only)
  synccheck    compute-sanitizer --tool synccheck, likewise
  emulator     --device emu at the variant's shape, SMs and each of its seeds (as emu_variant_tests)

Each GPU run's outcome is one of: hang (stopped at the time limit), CUDA error (a launch failure,
an illegal address, a trap), wrong D (the harness's MISMATCH), hazard (the sanitizer reported an
error), nothing (D matched, no report), or failed (anything else). The emulator's is the rule it
reported (its first line), and whether EXPECT matched. After a plain run that hangs, the sanitizers
are not run on that variant (they would hang too, for longer) unless --sanitize-hangs.

Writes OUT/results.json and OUT/table.md (default OUT: DIR/gpu_variants/report). Exit status: 0
measured, 1 a run could not be made (a missing executable, a build that failed), 2 bad arguments,
77 skipped: no GPU (the driver's exit 3: cudaErrorNoDevice, or cudaErrorInsufficientDriver, 35, as
on a machine without the NVIDIA driver), no Hopper GPU, or no compute-sanitizer; the reason is printed.
Plain Python 3.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "course"))

import grade  # noqa: E402  (its run(): a process group with a time limit)

EXIT_SKIP = 77
EXIT_USAGE = 2  # harness/driver.h, kExitUsage: bad arguments, a shape the step does not compute
EXIT_NO_DEVICE = 3  # harness/driver.h, kExitNoDevice: no GPU, or no track of the step for it
SANITIZER_ERROR = 99  # --error-exitcode
INPUT_SEED = 7  # the inputs emu_variant_tests uses (tests/emu/variant_test.cpp)
EXACT_MAX_K = 512  # harness: exact mode's limit on K
RUNS = ("plain", "large", "racecheck", "synccheck")
NOTHING = "nothing"


class Skip(Exception):
    """The measurement cannot be made on this machine: no GPU, no Hopper GPU, no compute-sanitizer."""


class Failure(Exception):
    pass


def shape_args(m, n, k):
    mode = ["--exact"] if k <= EXACT_MAX_K else ["--cpu-check"]
    return ["--m", str(m), "--n", str(n), "--k", str(k)] + mode


def gpu_command(v, run, large, sanitizer):
    """The command of one GPU run of variant `v` (a manifest entry)."""
    m, n, k = large if run == "large" else (v["m"], v["n"], v["k"])
    step = [v["exe"], "--track", "hopper", "--check-only", "--seed", str(INPUT_SEED)] + shape_args(m, n, k)
    if run in ("plain", "large"):
        return step
    tool = [sanitizer, "--tool", run, "--error-exitcode", str(SANITIZER_ERROR), "--print-limit", "20",
            "--kernel-name", "kns=step%02d" % v["step"]]
    if run == "racecheck":
        tool += ["--racecheck-report", "all"]
    return tool + step


def emu_command(v, seed):
    return [v["exe"], "--device", "emu", "--track", "hopper", "--emu-sms", str(v["sms"]), "--emu-seed", str(seed),
            "--seed", str(INPUT_SEED), "--check-only"] + shape_args(v["m"], v["n"], v["k"])


def execute(cmd, limit):
    """(exit status, output, seconds, timed out) of cmd, run as the grader runs a step: in a process group
    of its own, killed at `limit` seconds."""
    r = grade.run(cmd, limit)
    return r.rc, r.out, r.seconds, r.timed_out


def first_error(out):
    """The first `error: ...` line of a driver's output, without the prefix (or None)."""
    m = re.search(r"^error: (.*)$", out, re.M)
    return m.group(1).strip() if m else None


def no_gpu(rc, out):
    """The reason the driver ran nothing here (exit 3: no GPU, no driver, no track for the GPU), or None."""
    if rc != EXIT_NO_DEVICE:
        return None
    return first_error(out) or "the step driver found nothing to run on (exit %d)" % EXIT_NO_DEVICE


def sanitizer_counts(out):
    """The sanitizer's error count (ERROR SUMMARY, or racecheck's errors and warnings), or None."""
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", out)
    if m:
        return int(m.group(2)), int(m.group(3))
    m = re.search(r"ERROR SUMMARY: (\d+) errors?", out)
    return (int(m.group(1)), 0) if m else None


def classify(run, rc, out, timed_out, limit):
    """{outcome, detail} of one GPU run; Skip when the machine cannot make it."""
    if timed_out:
        return {"outcome": "hang", "detail": "stopped at the time limit of %d s" % limit}
    why = no_gpu(rc, out)
    if why:
        raise Skip(why)
    if run in ("racecheck", "synccheck"):
        counts = sanitizer_counts(out)
        if rc == SANITIZER_ERROR or (counts and (counts[0] or counts[1])):
            errors, warnings = counts or (0, 0)
            first = re.search(r"^========= (?:Error|Warning|Race|Barrier|Invalid)[^\n]*", out, re.M | re.I)
            detail = "%d error(s), %d warning(s)" % (errors, warnings)
            return {"outcome": "hazard", "detail": detail + (": " + first.group(0)[10:].strip() if first else "")}
    verdict = re.search(r"^verdict:\s+(.*)$", out, re.M)
    error = first_error(out)
    if verdict and verdict.group(1).startswith("match") and rc == 0:
        return {"outcome": NOTHING, "detail": ""}
    if verdict and verdict.group(1).startswith("MISMATCH"):
        return {"outcome": "wrong D", "detail": verdict.group(1).strip()}
    if error and re.search(r"cuda(Error|_ERROR)|launch failure|illegal|trap|misaligned|exception", error, re.I):
        return {"outcome": "CUDA error", "detail": error}
    if rc < 0 or rc > 128:
        return {"outcome": "CUDA error", "detail": "died of signal %d" % (abs(rc) % 128)}
    return {"outcome": "failed", "detail": "exit %d: %s" % (rc, error or out.strip()[-300:])}


def emulator_outcome(rc, out, timed_out, limit, expect):
    """{outcome, detail, expect}: the rule the emulator reported (or match, or a stop at the limit)."""
    if timed_out:
        return {"outcome": "hang", "detail": "stopped at the time limit of %d s" % limit, "expect": False}
    i = out.find("error: emulator: ")
    if i < 0:
        verdict = re.search(r"^verdict:\s+(.*)$", out, re.M)
        if verdict and verdict.group(1).startswith("match"):
            return {"outcome": NOTHING, "detail": "", "expect": False}
        return {"outcome": "failed", "detail": first_error(out) or out.strip()[-300:], "expect": False}
    message = out[i + len("error: "):].strip()
    flat = message.replace("\n", " ")
    rule = re.match(r"emulator: ([^:]+)", message)
    rule = rule.group(1) if rule else message.split("\n")[0]
    try:
        matched = bool(re.search(expect, flat)) if expect else False
    except re.error:
        matched = False
    return {"outcome": "rule", "detail": rule.strip(), "message": message[:2000], "expect": matched}


def load_manifest(build_dir, only):
    out = []
    for path in sorted(glob.glob(os.path.join(build_dir, "gpu_variants", "*.json"))):
        with open(path) as f:
            v = json.load(f)
        if only and not re.search(only, v["name"]):
            continue
        v["exe"] = os.path.join(build_dir, "gpu_variants", v["name"])
        out.append(v)
    return out


def find_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for cand in (os.path.join(home, "bin", "compute-sanitizer"), os.path.join(home, "compute-sanitizer",
                                                                             "compute-sanitizer")):
        if os.access(cand, os.X_OK):
            return cand
    return None


def gpu_name():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip().split("\n")[0] if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def measure_variant(v, opts, sanitizer, log):
    runs = {}
    for run in RUNS:
        if run in ("racecheck", "synccheck") and runs["plain"]["outcome"] == "hang" and not opts.sanitize_hangs:
            runs[run] = {"outcome": "not run", "detail": "the plain run hung"}
            continue
        limit = opts.time_limit if run in ("plain", "large") else opts.sanitizer_time_limit
        cmd = gpu_command(v, run, opts.large, sanitizer)
        rc, out, seconds, timed_out = execute(cmd, limit)
        r = classify(run, rc, out, timed_out, limit)
        if run == "large" and r["outcome"] == "failed" and rc == EXIT_USAGE:
            r = {"outcome": "not run", "detail": "the step computes one fixed shape: " + r["detail"]}
        r.update(command=" ".join(os.path.basename(c) if c in (v["exe"], sanitizer) else c for c in cmd),
                 seconds=round(seconds, 1))
        runs[run] = r
        log("  %s %s: %s %s" % (v["name"], run, r["outcome"], r["detail"][:160]))
    return runs


def measure_emulator(v, opts):
    out = []
    for seed in v["seeds"]:
        rc, text, seconds, timed_out = execute(emu_command(v, seed), opts.emu_time_limit)
        r = emulator_outcome(rc, text, timed_out, opts.emu_time_limit, v.get("expect"))
        r.update(seed=seed, seconds=round(seconds, 1))
        out.append(r)
    return v["name"], out


def source_commit():
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + (" (with uncommitted changes)" if dirty else "") if r.returncode == 0 else "unknown"
    except OSError:
        return "unknown"


def measure(opts, log):
    variants = load_manifest(opts.build_dir, opts.only)
    if not variants:
        raise Failure("no variant manifest in %s/gpu_variants (configure with -DGEMM_GPU_VARIANTS=ON and build the "
                      "target gpu_variants)" % opts.build_dir)
    missing = [v["name"] for v in variants if not os.access(v["exe"], os.X_OK)]
    built = [v for v in variants if v["name"] not in missing]
    # A GPU first, with a plain run of a built variant (the driver's exit 3 says why there is none).
    if built:
        rc, out, _, timed_out = execute(gpu_command(built[0], "plain", opts.large, None), opts.time_limit)
        why = None if timed_out else no_gpu(rc, out)
        if why:
            raise Skip(why)
    if missing:
        raise Failure("not built: %s (cmake --build %s --target gpu_variants)" % (", ".join(missing), opts.build_dir))
    sanitizer = find_sanitizer()
    if sanitizer is None:
        raise Skip("no compute-sanitizer (the CUDA Toolkit's; put it on PATH or set CUDA_HOME)")
    results = {"source": source_commit(), "gpu": gpu_name(), "date": time.strftime("%Y-%m-%d"),
               "time_limit_s": opts.time_limit, "sanitizer_time_limit_s": opts.sanitizer_time_limit,
               "large": "x".join(map(str, opts.large)), "variants": []}
    log("%d variants on %s; the emulator's runs beside the GPU's, %d at a time" % (len(variants), results["gpu"],
                                                                                   opts.jobs))
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        # The emulator's runs use only the CPU, so they go on while the GPU runs one variant at a time
        # (a hang or a sanitizer must not share the GPU with another run of this tool).
        emulating = [pool.submit(measure_emulator, v, opts) for v in variants]
        gpu_runs = {v["name"]: measure_variant(v, opts, sanitizer, log) for v in variants}
        emulated = dict(f.result() for f in emulating)
    for v in variants:
        results["variants"].append({"name": v["name"], "step": v["step"], "file": v["file"],
                                    "shape": "%dx%dx%d" % (v["m"], v["n"], v["k"]), "sms": v["sms"],
                                    "runs": gpu_runs[v["name"]], "emulator": emulated[v["name"]]})
    return results


# ---------------------------------------------------------------------------------------------
# The table.
# ---------------------------------------------------------------------------------------------
def cell(r):
    if r["outcome"] in (NOTHING, "not run"):
        return r["outcome"]
    detail = r["detail"].replace("|", "\\|")
    return "**%s**: %s" % (r["outcome"], detail[:120]) if detail else "**%s**" % r["outcome"]


def emulator_cell(runs):
    rules = sorted({r["detail"] for r in runs if r["outcome"] == "rule"})
    caught = sum(r["outcome"] == "rule" for r in runs)
    matched = sum(r["expect"] for r in runs)
    head = "; ".join(r.replace("|", "\\|") for r in rules) or ", ".join(sorted({r["outcome"] for r in runs}))
    return "%s (%d of %d seeds; EXPECT on %d)" % (head, caught, len(runs), matched)


def shows(v):
    """Whether a GPU run showed the bug: a run that could not be made (failed) shows nothing."""
    return any(v["runs"][r]["outcome"] not in (NOTHING, "not run", "failed") for r in RUNS)


def table(results):
    large = results.get("large", "large")
    lines = ["# Single-bug variants on a GPU and on the emulator", "",
             "Source %s, GPU %s, %s; time limit %s s per plain run, %s s per sanitizer run "
             "(tools/diag/variants_on_gpu.py)." % (results["source"], results["gpu"] or "unknown", results["date"],
                                                   results["time_limit_s"], results["sanitizer_time_limit_s"]), "",
             "| variant | shape | GPU, its shape | GPU, %s | racecheck | synccheck | GPU shows it | emulator |" % large,
             "|---|---|---|---|---|---|---|---|"]
    for v in results["variants"]:
        lines.append("| `%s` | %s | %s | %s | %s | %s | %s | %s |" % (
            v["name"], v["shape"], cell(v["runs"]["plain"]), cell(v["runs"]["large"]), cell(v["runs"]["racecheck"]),
            cell(v["runs"]["synccheck"]), "yes" if shows(v) else "**no**", emulator_cell(v["emulator"])))
    n = len(results["variants"])
    by = {}
    for v in results["variants"]:
        for r in RUNS:
            o = v["runs"][r]["outcome"]
            if o not in (NOTHING, "not run", "failed"):
                by.setdefault(o, set()).add(v["name"])
    gpu = sum(shows(v) for v in results["variants"])
    emu = sum(all(r["outcome"] == "rule" for r in v["emulator"]) for v in results["variants"])
    expect = sum(all(r["expect"] for r in v["emulator"]) for v in results["variants"])
    kinds = ", ".join("%s in %d" % (o, len(names)) for o, names in sorted(by.items()))
    lines += ["", "%d variants: the GPU showed %d (%s); the emulator reported a rule on every seed of %d, its EXPECT "
              "on every seed of %d." % (n, gpu, kinds or "none", emu, expect), ""]
    return "\n".join(lines)


def merge(parts):
    """Results files of one GPU made in shards (--only), as one: the variants of all, by name. The
    shards must agree on the GPU and the large shape; where they differ in the source, the date or a
    time limit (shards of two calls of the tool), the table names each value with its count of
    variants."""
    merged = dict(parts[0], variants=[])
    for part in parts:
        for key in ("gpu", "large"):
            if part.get(key) != merged.get(key):
                raise Failure("--table: the results files are not of one GPU and shape: %s %r against %r"
                              % (key, part.get(key), merged.get(key)))
        merged["variants"] += part["variants"]
    names = [v["name"] for v in merged["variants"]]
    if len(set(names)) != len(names):
        raise Failure("--table: a variant is in more than one results file")
    for key in ("source", "date", "time_limit_s", "sanitizer_time_limit_s"):
        counts = {}
        for part in parts:
            counts[part[key]] = counts.get(part[key], 0) + len(part["variants"])
        if len(counts) > 1:
            merged[key] = "; ".join("%s (%d variants)" % (value, n) for value, n in counts.items())
    merged["variants"].sort(key=lambda v: v["name"])
    return merged


def write(results, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table(results))
    return os.path.join(out_dir, "table.md")


# ---------------------------------------------------------------------------------------------
# The build.
# ---------------------------------------------------------------------------------------------
def build(opts, log):
    cache = os.path.join(opts.build_dir, "CMakeCache.txt")
    if not os.path.exists(cache) or "GEMM_GPU_VARIANTS:BOOL=ON" not in open(cache).read():
        cmd = ["cmake", "-S", str(ROOT), "-B", opts.build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DGEMM_TRACKS=hopper",
               "-DGEMM_GPU_VARIANTS=ON", "-DGEMM_BUILD_BENCH=OFF", "-DGEMM_BUILD_TOOLS=OFF"]
        log("+ " + " ".join(cmd))
        if subprocess.run(cmd).returncode != 0:
            raise Failure("the build does not configure")
    cmd = ["cmake", "--build", opts.build_dir, "--target", "gpu_variants", "-j", str(opts.jobs)]
    log("+ " + " ".join(cmd))
    if subprocess.run(cmd).returncode != 0:
        raise Failure("the variants do not build")


# ---------------------------------------------------------------------------------------------
# Self-test: no GPU needed.
# ---------------------------------------------------------------------------------------------
def self_test():
    def check(cond, what):
        if not cond:
            raise Failure("self-test: " + what)

    def skip_reason(rc, out):
        try:
            classify("plain", rc, out, False, 60)
        except Skip as e:
            return str(e)
        return None

    no_driver = ("step 05 (x), hopper track\nerror: no GPU: this machine has no CUDA GPU to run on (cudaGetDeviceCount "
                 "returned cudaErrorInsufficientDriver: no NVIDIA driver is loaded, or it is older than this CUDA "
                 "runtime)\n")
    no_device = "error: no GPU: this machine has no CUDA GPU to run on (cudaGetDeviceCount found no CUDA device)\n"
    check("cudaErrorInsufficientDriver" in (skip_reason(3, no_driver) or ""), "no driver (35) is a skip")
    check("no CUDA device" in (skip_reason(3, no_device) or ""), "no device is a skip")
    check(skip_reason(1, no_driver) is None, "exit 1 is not a skip")
    cases = [
        ("plain", 0, "verdict:        match\n", False, NOTHING),
        ("plain", -9, "", True, "hang"),
        ("plain", 1, "verdict:        MISMATCH at (128,0): got 1 want 2 (bits differ)\n", False, "wrong D"),
        ("plain", 1, "error: cudaDeviceSynchronize failed: cudaErrorLaunchFailure (unspecified launch failure)\n",
         False, "CUDA error"),
        ("plain", -6, "", False, "CUDA error"),
        ("plain", 2, "error: --m: not a number\n", False, "failed"),
        ("racecheck", 99, "========= Error: Race reported between Write access at f+0x10\n"
                          "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
                          "verdict:        match\n", False, "hazard"),
        ("synccheck", 99, "========= Barrier error detected. Divergent thread(s) in warp\n"
                          "========= ERROR SUMMARY: 2 errors\nverdict:        match\n", False, "hazard"),
        ("synccheck", 0, "========= ERROR SUMMARY: 0 errors\nverdict:        match\n", False, NOTHING),
        ("racecheck", 1, "========= ERROR SUMMARY: 0 errors\nverdict:        MISMATCH: part of D\n", False, "wrong D"),
    ]
    for run, rc, out, timed_out, want in cases:
        got = classify(run, rc, out, timed_out, 60)["outcome"]
        check(got == want, "%s, exit %d: %s, not %s (%r)" % (run, rc, got, want, out[:80]))
    rule = emulator_outcome(1, "step 05\nerror: emulator: deadlock: every thread waits\n  at x.cu:3\n", False, 60,
                            r"^emulator: deadlock: every thread")
    check(rule["outcome"] == "rule" and rule["detail"] == "deadlock" and rule["expect"], "emulator rule: %s" % rule)
    check(not emulator_outcome(1, "error: emulator: deadlock: x\n", False, 60, r"^emulator: race")["expect"],
          "EXPECT that does not match")
    check(emulator_outcome(0, "verdict:        match\n", False, 60, "x")["outcome"] == NOTHING, "emulator match")

    # The table, from a made-up results file (the shape of one this tool writes).
    def runs(plain, large, race, sync):
        return {"plain": {"outcome": plain, "detail": "stopped at the time limit of 30 s" if plain == "hang" else ""},
                "large": {"outcome": large, "detail": ""}, "racecheck": {"outcome": race, "detail": "3 error(s)"},
                "synccheck": {"outcome": sync, "detail": ""}}
    emu = [{"seed": s, "outcome": "rule", "detail": "deadlock", "expect": True} for s in (1, 2, 3)]
    fake = {"source": "abc1234", "gpu": "a made-up GPU", "date": "today", "time_limit_s": 30,
            "sanitizer_time_limit_s": 300, "large": "2048x2048x512", "variants": [
                {"name": "step05_hopper_a", "step": 5, "file": "f", "shape": "520x392x136", "sms": 2,
                 "runs": runs("hang", "hang", "not run", "not run"), "emulator": emu},
                {"name": "step05_hopper_b", "step": 5, "file": "f", "shape": "520x392x136", "sms": 2,
                 "runs": runs(NOTHING, NOTHING, NOTHING, NOTHING), "emulator": emu[:2] + [dict(emu[2], expect=False)]},
                {"name": "step06_hopper_c", "step": 6, "file": "f", "shape": "520x392x136", "sms": 2,
                 "runs": runs(NOTHING, "wrong D", "hazard", NOTHING), "emulator": emu}]}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "results.json")
        with open(path, "w") as f:
            json.dump(fake, f)
        main(["--table", path, "--out", d])
        text = open(os.path.join(d, "table.md")).read()
        # The same results in two shards (given in the other order) make the same table.
        for i, part in enumerate((fake["variants"][2:], fake["variants"][:2])):
            with open(os.path.join(d, "part%d.json" % i), "w") as f:
                json.dump(dict(fake, variants=part), f)
        main(["--table", os.path.join(d, "part0.json"), os.path.join(d, "part1.json"), "--out", d])
        check(open(os.path.join(d, "table.md")).read() == text, "the table of two shards")
        try:
            merge([fake, dict(fake, gpu="another GPU", variants=[])])
            check(False, "shards of two GPUs merged")
        except Failure as e:
            check("gpu" in str(e), "the refusal names the field: %s" % e)
        two = merge([dict(fake, variants=fake["variants"][:1]), dict(fake, source="def5678", sanitizer_time_limit_s=120,
                                                                      variants=fake["variants"][1:])])
        check(two["source"] == "abc1234 (1 variants); def5678 (2 variants)" and two["sanitizer_time_limit_s"] ==
              "300 (1 variants); 120 (2 variants)" and two["date"] == "today", "two calls' shards: %s" % two)
    rows = [l for l in text.split("\n") if l.startswith("| `")]
    check(len(rows) == 3, "three rows: %s" % rows)
    check(rows[0].count("**hang**") == 2 and "not run" in rows[0] and "| yes |" in rows[0], "row a: %s" % rows[0])
    check("| **no** |" in rows[1] and "EXPECT on 2)" in rows[1], "row b: %s" % rows[1])
    check("**wrong D**" in rows[2] and "**hazard**: 3 error(s)" in rows[2], "row c: %s" % rows[2])
    check("3 variants: the GPU showed 2 (hang in 1, hazard in 1, wrong D in 1); the emulator reported a rule on every "
          "seed of 3, its EXPECT on every seed of 2." in text, "summary: %s" % text[-300:])
    print("self-test passed: %d GPU outcomes, the no-GPU skip (no device, no driver), the emulator's rule, the table, "
          "the table of shards" % len(cases))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=str(ROOT / "build-gpu-variants"))
    p.add_argument("--no-build", action="store_true", help="use the build as it is (configured with GEMM_GPU_VARIANTS)")
    p.add_argument("--out", help="where results.json and table.md go (default BUILD_DIR/gpu_variants/report)")
    p.add_argument("--only", help="a regex: only the variants whose name it matches")
    p.add_argument("--large", default="2048x2048x512", help="the second plain run's shape (default %(default)s)")
    p.add_argument("--time-limit", type=int, default=30, help="seconds per plain run (default %(default)s)")
    p.add_argument("--sanitizer-time-limit", type=int, default=300, help="seconds per sanitizer run (default "
                                                                         "%(default)s)")
    p.add_argument("--emu-time-limit", type=int, default=300, help="seconds per emulated run (default %(default)s)")
    p.add_argument("--sanitize-hangs", action="store_true", help="run the sanitizers after a plain run that hung too")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="build jobs and emulated runs at once")
    p.add_argument("--table", metavar="RESULTS", nargs="+", help="write the table of a results file, or of the "
                                                                  "shards of one run merged; run nothing")
    p.add_argument("--self-test", action="store_true", help="check the classification and the table, no GPU needed")
    opts = p.parse_args(argv)
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", opts.large)
    if not m:
        p.error("--large: MxNxK")
    opts.large = tuple(int(x) for x in m.groups())
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    try:
        if opts.self_test:
            self_test()
            return 0
        if opts.table:
            parts = []
            for path in opts.table:
                with open(path) as f:
                    parts.append(json.load(f))
            print(write(merge(parts), opts.out or os.path.dirname(os.path.abspath(opts.table[0]))))
            return 0
        opts.build_dir = os.path.abspath(opts.build_dir)
        if not opts.no_build:
            build(opts, log)
        results = measure(opts, log)
        print(write(results, opts.out or os.path.join(opts.build_dir, "gpu_variants", "report")))
        return 0
    except Skip as e:
        print("SKIP: %s" % e)
        return EXIT_SKIP
    except Failure as e:
        print("variants_on_gpu: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
