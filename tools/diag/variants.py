#!/usr/bin/env python3
"""Writes the variants of the hopper steps 5 and 6 that their READMEs compare against, as source
files under tools/diag/gen/ (not tracked), for tools/diag/ladder_diag.cu. Each variant is the
step file with one named change, made by replacing exact text (the script stops if the text is
not found, so it never measures something else by accident):

  step05_wait1   step 5's first two designs' release rule: wait_group 1, release slice k-1's stage
                 after issuing slice k and refill it with slice k+1; drain at the end
  step05_g16     step 5 with step 6's L2 tile order (groups of 16 rows), still one CTA per tile
  step06_cap3    step 6 with __launch_bounds__(kThreads, 3): registers capped at 168, 3 CTAs/SM
  *_trace        the same with DIAG_MARK(0) at a tile's start and DIAG_MARK(4) once its TMA store
                 has read shared memory (ladder_diag.cu records %globaltimer and %smid there)

  python3 tools/diag/variants.py
"""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tools/diag/gen"


def replace(src, old, new, count=1):
    if src.count(old) != count:
        raise SystemExit(f"variants.py: expected {count} occurrence(s) of:\n{old}")
    return src.replace(old, new)


def wait1(src, ind):
    """wait_group 0 + refill the same stage with slice kt+2  ->  wait_group 1 + refill kt-1's.
    The accumulators are not zeroed either (the first wgmma has scale-d = 0): with a group in flight
    across iterations, zeroing them makes ptxas serialise every wgmma (C7515)."""
    zero = ("#pragma unroll\n" + ind[:-2] + "for (int h = 0; h < 2; ++h)\n#pragma unroll\n" + ind
            + "for (int i = 0; i < kAccRegs; ++i) acc[h][i] = 0.0f;\n")
    src = replace(src, zero, "")
    a = src.index(ind + "// BEGIN SOLUTION step05: wait_group 0 completes")
    b = src.index(ind + "read.advance();\n", a)
    src = src[:a] + (
        f"{ind}wgmma_wait_group<1>();  // slice kt's group may still run; slice kt-1's has completed\n"
        f"{ind}wgmma_fence_operands(acc[0]);\n{ind}wgmma_fence_operands(acc[1]);\n"
        f"{ind}if (kt > 0) {{\n"
        f"{ind}  const int prev = (read.stage + kStages - 1) % kStages;\n"
        f"{ind}  if (lane_id() == 0) mbarrier_arrive(&smem.empty[prev]);\n"
        f"{ind}  const int64_t next = kt - 1 + kStages;\n"
        f"{ind}  if (threadIdx.x == 0 && next < k_tiles) load_slice(smem, write, &map_a, &map_b, m0, n0, next);\n"
        f"{ind}}}\n") + src[b:]
    close = ind + "read.advance();\n" + ind[:-2] + "}\n"  # the K loop's end; the drain follows
    a = src.index(close, a) + len(close)
    o = ind[:-2]
    src = src[:a] + (
        f"{o}wgmma_wait_group<0>();\n{o}wgmma_fence_operands(acc[0]);\n{o}wgmma_fence_operands(acc[1]);\n"
        f"{o}if (lane_id() == 0 && k_tiles > 0) mbarrier_arrive(&smem.empty[(read.stage + kStages - 1) % kStages]);\n") + src[a:]
    return src


def variant(name, step, *, wait_one=False, group=None, cap3=False, trace=False):
    folder = {"05": "05_pipeline", "06": "06_persistent"}[step]
    src = (ROOT / f"steps/{folder}/hopper.cu").read_text()
    src = replace(src, f"namespace gemm::step{step}::hopper", f"namespace gemm::diag_{name}::hopper", 2)
    if wait_one:
        src = wait1(src, "    " if step == "05" else "      ")
    if group is not None:
        src = replace(src, "  m0 = (blockIdx.x % tiles_m) * kTileM;\n  n0 = (blockIdx.x / tiles_m) * kTileN;\n",
                      f"  {{\n    const Tile t = TileScheduler(tiles_m, (N + kTileN - 1) / kTileN, 1, {group}).tile(blockIdx.x, 0);\n"
                      "    m0 = t.m * kTileM;\n    n0 = t.n * kTileN;\n  }\n")
        src = replace(src, '#include "common/problem.h"\n', '#include "common/problem.h"\n#include "common/scheduler.cuh"\n')
    if cap3:
        src = replace(src, "__global__ void __launch_bounds__(kThreads)", "__global__ void __launch_bounds__(kThreads, 3)")
    if trace:
        start = "    n0 = tile.n * kTileN;\n    // END SOLUTION step06\n" if step == "06" else "  // END SOLUTION step03\n"
        src = replace(src, start, start + "  DIAG_MARK(0);\n")
        src = replace(src, "tma_store_wait_group_read<0>();\n", "tma_store_wait_group_read<0>();\n    DIAG_MARK(4);\n")
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.cu").write_text(src)


variant("step05_wait1", "05", wait_one=True)
variant("step05_g16", "05", group=16)
variant("step06_cap3", "06", cap3=True)
variant("step05_g16_trace", "05", group=16, trace=True)
variant("step06_trace", "06", trace=True)
variant("step06_cap3_trace", "06", cap3=True, trace=True)
print(f"wrote {len(list(OUT.glob('*.cu')))} variants to {OUT.relative_to(ROOT)}")
