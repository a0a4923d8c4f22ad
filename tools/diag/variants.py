#!/usr/bin/env python3
"""The variants of the hopper steps that their READMEs and NOTES compare against. Each variant is the
step file with one named change, made by replacing exact text (the script stops, naming the text,
when it is not found, so a variant never measures something else by accident):

  step05_wait1      step 5's first two designs' release rule: wait_group 1, release slice ks-1's
                    stage after issuing slice ks and refill it with slice ks+1; drain at the end
  step05_g16        step 5 with step 6's L2 tile order (groups of 16 rows), still one CTA per tile
  step06_cap3       step 6 with __launch_bounds__(kThreads, 3): registers capped at 168, 3 CTAs/SM
  step06_knobs      step 6 with its launcher's two settings exposed as run_with(p, stream, group_m,
                    ctas): the L2 group size and the grid (<= 0: the persistent grid); run() as the
                    step's. The tools time group sizes and check odd grids with it, and ask it for
                    step 6's resident CTAs (they may not include a step file)
  stepNN_full_grid  steps 8-10 with the persistent grid of every resident CTA (cluster), as before
                    balanced_grid trimmed it to whole waves (common/scheduler.cuh)
  step08_stagesN    step 8 with a ring of N stages (2, 3, 4, 6) instead of its 5: the depth sweep
  step10_tile256x128  step 10 with a CTA tile of 256 x 128 instead of 128 x 256
  step11_knobs      step 11 with its split exposed as run_with(p, stream, min_split_slices,
                    max_splits): at least that many K slices a part, at most that many parts (1: no
                    split); run() as the step's
  step12_knobs      step 12 likewise, and with the tiling: run_with(p, stream, index,
                    min_split_slices, max_splits), index into kTilings, -1 for the one choose_tiling
                    picks
  step12_pdl        step 12 launched with programmatic dependent launch (common/grid_dependency.cuh):
                    every thread waits for the grid before it (griddepcontrol_wait) once the
                    barriers are initialised, then lets the next grid be scheduled
                    (griddepcontrol_launch_dependents); the launch sets LaunchConfig::programmatic
  step12_carveout_max  step 12 with its kernel's preferred shared-memory carveout set to the most
                    shared memory (cudaFuncAttributePreferredSharedMemoryCarveout) before each launch
  *_trace           the same with DIAG_MARK(0) at a tile's start and DIAG_MARK(4) once its TMA store
                    has read shared memory (tools/diag/trace.cuh: %globaltimer and %smid per tile)

Every variant lives in namespace gemm::diag_<name>::hopper and gets, appended, what the tools call
besides run(): resident(&ctas) (CTAs of its kernel resident on the GPU at once) and, for a *_trace
variant, set_trace(records) (where its kernel writes the trace; null: nowhere).

The build makes each one a target of its own (tools/CMakeLists.txt, cmake/GemmDiagVariant.cmake):
the source is generated into the build directory from the current step file and compiled as an
object library, which tools/diag/ladder_diag.cpp and tools/diag/persistent_sweep.cpp link.

  python3 tools/diag/variants.py --list                      # name, step folder, trace (0/1)
  python3 tools/diag/variants.py --variant NAME --out FILE   # write one variant's source
  python3 tools/diag/variants.py --check                     # make every variant, write nothing
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = {"05": "05_pipeline", "06": "06_persistent", "08": "08_deep_pipeline", "09": "09_cluster",
           "10": "10_multi_consumer", "11": "11_split_k", "12": "12_tile_per_problem"}

# The launcher's line that trims the persistent grid to whole waves, and the cap on the work units
# alone that it replaced (full_grid).
BALANCED = {
    "08": ("  ctas = static_cast<int>(balanced_grid(tiles, ctas));\n",
           "  if (ctas > tiles) ctas = static_cast<int>(tiles);\n"),
    "09": ("  clusters = static_cast<int>(balanced_grid(sched.num_work(), clusters));\n",
           "  if (clusters > sched.num_work()) clusters = static_cast<int>(sched.num_work());\n"),
    "10": ("  clusters = static_cast<int>(balanced_grid(sched.num_work(), clusters));\n",
           "  if (clusters > sched.num_work()) clusters = static_cast<int>(sched.num_work());\n"),
}


class Missing(Exception):
    pass


def replace(src, old, new, count=1):
    """`old` replaced by `new`; it must occur exactly `count` times (None: at least once)."""
    found = src.count(old)
    if (count is None and found == 0) or (count is not None and found != count):
        raise Missing(f"expected {count or 'at least 1'} occurrence(s), found {found}, of:\n{old}")
    return src.replace(old, new)


def wait1(src, ind):
    """wait_group 0 + refill the same stage with slice ks+2  ->  wait_group 1 + refill ks-1's."""
    begin = ind + "// BEGIN SOLUTION step05: wait_group 0 completes"
    if src.count(begin) != 1:
        raise Missing(f"expected 1 occurrence of:\n{begin}")
    a = src.index(begin)
    b = src.index(ind + "read.advance();\n", a)
    src = src[:a] + (
        f"{ind}wgmma_wait_group<1>();  // slice ks's group may still run; slice ks-1's has completed\n"
        f"{ind}wgmma_fence_operands(acc[0]);\n{ind}wgmma_fence_operands(acc[1]);\n"
        f"{ind}if (ks > 0) {{\n"
        f"{ind}  const int prev = (read.stage + kStages - 1) % kStages;\n"
        f"{ind}  if (lane_id() == 0) mbarrier_arrive(&smem.empty[prev]);\n"
        f"{ind}  const int64_t next = ks - 1 + kStages;\n"
        f"{ind}  if (threadIdx.x == 0 && next < k_slices) load_slice(smem, write, &map_a, &map_b, m0, n0, next);\n"
        f"{ind}}}\n") + src[b:]
    close = ind + "read.advance();\n" + ind[:-2] + "}\n"  # the K loop's end; the drain follows
    a = src.index(close, a) + len(close)
    o = ind[:-2]
    src = src[:a] + (
        f"{o}wgmma_wait_group<0>();\n{o}wgmma_fence_operands(acc[0]);\n{o}wgmma_fence_operands(acc[1]);\n"
        f"{o}if (lane_id() == 0 && k_slices > 0) mbarrier_arrive(&smem.empty[(read.stage + kStages - 1) % kStages]);\n"
    ) + src[a:]
    return src


FOOTER = """
// ---- Appended by tools/diag/variants.py: what the diagnostics ask of a variant besides run().
#include "common/device.cuh"

namespace gemm::diag_{name}::hopper {{
Status resident(int* ctas) {{ return resident_ctas(kernel{tpl}, kThreads{tpl}, smem_bytes<SharedStorage{tpl}>(), ctas); }}
{trace}}}  // namespace gemm::diag_{name}::hopper
"""
SET_TRACE = ("cudaError_t set_trace(unsigned long long* records) {\n"
             "  return cudaMemcpyToSymbol(::gemm::diag::g_trace, &records, sizeof records);\n"
             "}\n")


# The launcher's settings a *_knobs variant exposes: the texts of run() it replaces, and the run()
# it appends, which calls run_with with the step's own settings.
KNOBS = {
    "06": ([("Status run(const Problem& p, cudaStream_t stream) {\n",
             "Status run_with(const Problem& p, cudaStream_t stream, int group_m, int ctas) {\n"),
            ("  int ctas = 0;\n"
             "  if (Status s = resident_ctas(kernel, kThreads, cfg.smem_bytes, &ctas); !s.ok()) return s;\n"
             "  if (ctas > tiles) ctas = static_cast<int>(tiles);\n",
             "  if (ctas <= 0) {\n"
             "    if (Status s = resident_ctas(kernel, kThreads, cfg.smem_bytes, &ctas); !s.ok()) return s;\n"
             "    if (ctas > tiles) ctas = static_cast<int>(tiles);\n"
             "  }\n"),
            # The group size becomes the kernel's argument, which the step file takes from kGroupM.
            ("int64_t M, int64_t N, int64_t K) {\n", "int64_t M, int64_t N, int64_t K, int group_m) {\n"),
            ("/*cluster_m=*/1, kGroupM);\n", "/*cluster_m=*/1, group_m);\n"),
            ("p.m, p.n, p.k);\n", "p.m, p.n, p.k, group_m);\n")],
           "Status run(const Problem& p, cudaStream_t stream) { return run_with(p, stream, kGroupM, /*ctas=*/0); }\n"),
    "11": ([("Status run(const Problem& p, cudaStream_t stream) {\n",
             "Status run_with(const Problem& p, cudaStream_t stream, int min_split_slices, int max_splits) {\n"),
            ("const SplitK split(sched.num_work(), clusters, k_slices, kMinSplitSlices, kMaxSplits);\n",
             "const SplitK split(sched.num_work(), clusters, k_slices, min_split_slices, max_splits);\n")],
           "Status run(const Problem& p, cudaStream_t stream) { return run_with(p, stream, kMinSplitSlices, kMaxSplits); }\n"),
    "12": ([("template <class Tiling>\nStatus run_tiling(const Problem& p, cudaStream_t stream) {\n",
             "template <class Tiling>\nStatus run_tiling(const Problem& p, cudaStream_t stream, int min_split_slices, "
             "int max_splits) {\n"),
            ("const SplitK split(sched.num_work(), clusters, k_slices, kMinSplitSlices, kMaxSplits);\n",
             "const SplitK split(sched.num_work(), clusters, k_slices, min_split_slices, max_splits);\n"),
            ("Status run(const Problem& p, cudaStream_t stream) {\n"
             "  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;\n"
             "  int index = 0;\n"
             "  if (Status s = choose_tiling(p, &index); !s.ok()) return s;\n",
             "Status run_with(const Problem& p, cudaStream_t stream, int index, int min_split_slices,\n"
             "                int max_splits) {\n"
             "  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;\n"
             "  if (index < 0)\n"
             "    if (Status s = choose_tiling(p, &index); !s.ok()) return s;\n")]
           + [(f"return run_tiling<TilingAt<{i}>>(p, stream);",
               f"return run_tiling<TilingAt<{i}>>(p, stream, min_split_slices, max_splits);") for i in range(7)],
           "Status run(const Problem& p, cudaStream_t stream) {\n"
           "  return run_with(p, stream, /*index=*/-1, kMinSplitSlices, kMaxSplits);\n}\n"
           "int tiling_count() { return kTilingCount; }\n"
           "TileChoice tiling(int index) { return kTilings[index]; }\n"),
}


# Programmatic dependent launch in step 12: the wait comes after the prologue (nothing before it
# touches global memory but the kernel's parameters) and before the roles' first TMA load or store.
PDL = [("the CTA's own barrier publishes the inits\n  }\n  // END SOLUTION step09\n",
        "the CTA's own barrier publishes the inits\n  }\n  // END SOLUTION step09\n"
        "  griddepcontrol_wait();  // the grid before this one has finished, and its memory is visible\n"
        "  griddepcontrol_launch_dependents();\n"),
       ("  cfg.smem_bytes = smem_bytes<SharedStorage<Tiling>>();\n",
        "  cfg.smem_bytes = smem_bytes<SharedStorage<Tiling>>();\n  cfg.programmatic = true;\n"),
       ('#include "common/tile_config.cuh"\n', '#include "common/tile_config.cuh"\n#include "common/grid_dependency.cuh"\n')]


# Step 12 with the most shared memory preferred for its kernel's carveout (the SM's split between L1
# and shared memory), set before each launch.
CARVEOUT_MAX = [("  return launch(kernel<Tiling>, cfg, map_a, map_b, map_d, p.m, p.n, split, scratch);\n",
                 "  if (cudaError_t e = cudaFuncSetAttribute(kernel<Tiling>, cudaFuncAttributePreferredSharedMemoryCarveout,\n"
                 "                                           cudaSharedmemCarveoutMaxShared);\n"
                 "      e != cudaSuccess)\n"
                 "    return cuda_failure(e, \"cudaFuncSetAttribute(PreferredSharedMemoryCarveout)\");\n"
                 "  return launch(kernel<Tiling>, cfg, map_a, map_b, map_d, p.m, p.n, split, scratch);\n")]


def make(step, *, wait_one=False, group=None, cap3=False, trace=False, full_grid=False, knobs=False, stages=None,
         tall=False, pdl=False, carveout_max=False):
    def build(name):
        src = (ROOT / f"steps/{FOLDERS[step]}/hopper.cu").read_text()
        src = replace(src, f"namespace gemm::step{step}::hopper", f"namespace gemm::diag_{name}::hopper", None)
        if wait_one:
            src = wait1(src, "    " if step == "05" else "      ")
        if group is not None:
            src = replace(src, "  m0 = (blockIdx.x % tiles_m) * kTileM;\n  n0 = (blockIdx.x / tiles_m) * kTileN;\n",
                          f"  {{\n    const Tile t = TileScheduler(tiles_m, (N + kTileN - 1) / kTileN, 1, {group})"
                          ".tile(blockIdx.x, 0);\n    m0 = t.m * kTileM;\n    n0 = t.n * kTileN;\n  }\n")
            src = replace(src, '#include "common/problem.h"\n',
                          '#include "common/problem.h"\n#include "common/scheduler.cuh"\n')
        if full_grid:
            src = replace(src, *BALANCED[step])
        if stages is not None:
            src = replace(src, "constexpr int kStages = 5;\n", f"constexpr int kStages = {stages};\n")
        if tall:
            src = replace(src, "constexpr int kTileM = 128;\nconstexpr int kTileN = 256;\n",
                          "constexpr int kTileM = 256;\nconstexpr int kTileN = 128;\n")
        if cap3:
            src = replace(src, "__global__ void __launch_bounds__(kThreads)",
                          "__global__ void __launch_bounds__(kThreads, 3)")
        if pdl:
            for old, new in PDL:
                src = replace(src, old, new)
        if carveout_max:
            for old, new in CARVEOUT_MAX:
                src = replace(src, old, new)
        tpl = "<TilingAt<0>>" if step == "12" else ""  # step 12's kernel is a template on its tiling
        extra = ""
        if knobs:
            for old, new in KNOBS[step][0]:
                src = replace(src, old, new)
            extra = KNOBS[step][1]
        if trace:
            start = "    n0 = tile.n * kTileN;\n    // END SOLUTION step06\n" if step == "06" else "  // END SOLUTION step03\n"
            src = replace(src, start, start + "  DIAG_MARK(0);\n")
            # Once the tile's TMA store has read shared memory: step 6's epilogue_tile() ends with that wait.
            done = ("    epilogue_tile(smem, acc, &map_d, m0, n0, N);\n" if step == "06"
                    else "tma_store_wait_group_read<0>();\n")
            src = replace(src, done, done + "    DIAG_MARK(4);\n")
            src = '#include "tools/diag/trace.cuh"  // DIAG_MARK\n' + src
        header = (f"// Generated by tools/diag/variants.py from steps/{FOLDERS[step]}/hopper.cu: variant {name}.\n"
                  "// Do not edit: edit the step file or variants.py.\n")
        return header + src + FOOTER.format(name=name, tpl=tpl, trace=(SET_TRACE if trace else "") + extra)
    return {"step": step, "trace": trace, "build": build}


VARIANTS = {
    "step05_wait1": make("05", wait_one=True),
    "step05_g16": make("05", group=16),
    "step06_cap3": make("06", cap3=True),
    "step06_knobs": make("06", knobs=True),
    "step05_g16_trace": make("05", group=16, trace=True),
    "step06_trace": make("06", trace=True),
    "step06_cap3_trace": make("06", cap3=True, trace=True),
}
for _step in ("08", "09", "10"):
    VARIANTS[f"step{_step}_full_grid"] = make(_step, full_grid=True)
for _n in (2, 3, 4, 6):
    VARIANTS[f"step08_stages{_n}"] = make("08", stages=_n)
VARIANTS["step10_tile256x128"] = make("10", tall=True)
VARIANTS["step11_knobs"] = make("11", knobs=True)
VARIANTS["step12_knobs"] = make("12", knobs=True)
VARIANTS["step12_pdl"] = make("12", pdl=True)
VARIANTS["step12_carveout_max"] = make("12", carveout_max=True)



def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true", help="one line per variant: name, step folder, trace (0/1)")
    g.add_argument("--variant", metavar="NAME", choices=sorted(VARIANTS), help="write this variant (to --out)")
    g.add_argument("--check", action="store_true", help="make every variant from the current step files")
    p.add_argument("--out", metavar="FILE", help="where --variant writes")
    args = p.parse_args(argv)
    if args.list:
        for name, v in VARIANTS.items():
            print(name, FOLDERS[v["step"]], int(v["trace"]))
        return 0
    names = sorted(VARIANTS) if args.check else [args.variant]
    failed = 0
    for name in names:
        try:
            src = VARIANTS[name]["build"](name)
        except Missing as e:
            print(f"variants.py: {name}: steps/{FOLDERS[VARIANTS[name]['step']]}/hopper.cu no longer has the text "
                  f"this variant changes: {e}", file=sys.stderr)
            failed += 1
            continue
        if args.variant:
            if not args.out:
                p.error("--variant needs --out")
            out = pathlib.Path(args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(src)
    if args.check and not failed:
        print(f"all {len(names)} variants apply to the current step files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
