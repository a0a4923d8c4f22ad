#!/usr/bin/env python3
"""Checks a step's timeline (docs/timeline.md) end to end: runs the step executable with --trace and
checks the Chrome trace it writes. Plain python3, no matplotlib.

  check_trace.py --exe build/step07 --tile 128x128 [--device emu --track hopper] [--m M --n N --k K]
                 [--roles "producer,consumer 0,consumer 1"] [--loads-per-slice N]

The file must be valid JSON in the Trace Event Format; every track's events must be in time order,
none dropped; every CTA recorded (all SMs are asked for), each with the tracks --roles names
(default: step 7's, for the track); and the counts must match the work: each track's tiles (a
CTA's tiles of --tile) add up to the problem's, and inside each tile the producer waits for a free
stage and issues --loads-per-slice TMA loads (default 2; 0: not counted) once per K slice, the role
that multiplies (hopper: a consumer) waits for a full stage and commits once per K slice
(blackwell: one more commit, for the epilogue), and the role that runs the epilogue runs it once.
Exit status: 0 passed, 1 failed, 77 skipped (a GPU run without a GPU, or in a build without
GEMM_TRACE), which ctest reports as skipped.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
FREE = {"empty", "mma2tma"}  # a stage is free again
FULL = {"full", "tma2mma"}   # a stage's slice has landed


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def check(trace, args):
    other = trace.get("otherData")
    if not isinstance(trace.get("traceEvents"), list) or not isinstance(other, dict):
        fail("not a Chrome trace: no traceEvents list or otherData")
    if other["ctas_claimed"] != other["ctas_recorded"]:
        fail(f"{other['ctas_claimed']} CTAs ran on the recorded SMs but only {other['ctas_recorded']} were recorded")
    tracks = {(t["pid"], t["tid"]): t for t in other["tracks"]}
    for t in tracks.values():
        if t["dropped"] or t["unordered"]:
            fail(f"track {t['name']} of CTA {t['cta']}: {t['dropped']} events dropped, {t['unordered']} out of order")

    events = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("ph") in ("X", "i"):
            if (e["pid"], e["tid"]) not in tracks:
                fail(f"event {e['name']} on a track otherData does not list")
            events[(e["pid"], e["tid"])].append(e)
    for key, evs in events.items():
        ts = [e["ts"] for e in evs]
        if ts != sorted(ts):
            fail(f"track {tracks[key]['name']} of CTA {tracks[key]['cta']}: events not in time order")
        for e in evs:
            if e["ph"] == "X" and e["dur"] < 0:
                fail(f"{e['name']} ends before it begins")

    m, n, k = args.m, args.n, args.k
    tm, tn = (int(x) for x in args.tile.split("x"))
    tiles = -(-m // tm) * -(-n // tn)
    k_slices = -(-k // 64)
    expected = args.roles.split(",") if args.roles else (
        ["producer", "consumer"] if args.track == "hopper" else ["producer", "mma", "epilogue"])
    per_cta = collections.defaultdict(list)
    for t in tracks.values():
        per_cta[t["pid"]].append(t["name"])
    for pid, names in per_cta.items():
        if sorted(names) != sorted(expected):
            fail(f"a CTA has the tracks {sorted(names)}, expected {sorted(expected)}")

    tile_count = collections.Counter()
    for key, evs in events.items():
        role = tracks[key]["role"]
        per_tile = collections.defaultdict(collections.Counter)
        for e in evs:
            if e["cat"] == "tile":
                tile_count[tracks[key]["name"]] += 1
                per_tile[e["args"]["tile"]]["tiles"] += 1
                continue
            tile = e["args"]["tile"]
            if tile < 0:
                continue  # the producer's tail waits, after its last tile
            c = per_tile[tile]
            if e["cat"] == "wait":
                c["free" if e["args"]["barrier"] in FREE else "full" if e["args"]["barrier"] in FULL else "other"] += 1
            elif e["name"].startswith("TMA load"):
                c["loads"] += 1
            elif e["cat"] == "mma":
                c["commits"] += 1
            elif e["cat"] == "epilogue":
                c["epilogues"] += 1
        want = {
            "producer": {"tiles": 1, "free": k_slices, "loads": args.loads_per_slice * k_slices},
            "consumer": {"tiles": 1, "full": k_slices, "commits": k_slices, "epilogues": 1},
            "mma": {"tiles": 1, "full": k_slices, "commits": k_slices + 1},
            "epilogue": {"tiles": 1, "epilogues": 1},
        }[role]
        if not args.loads_per_slice:
            want.pop("loads", None)
        for tile, c in per_tile.items():
            for what, count in want.items():
                if c[what] != count:
                    fail(f"CTA {tracks[key]['cta']}, {tracks[key]['name']}, tile {tile}: {c[what]} {what}, "
                         f"expected {count} ({k_slices} K slices)")
    for name in expected:
        if tile_count[name] != tiles:
            fail(f"track {name}: {tile_count[name]} tiles over all CTAs, the problem has {tiles}")
    print(f"passed: {len(tracks)} tracks of {other['ctas_recorded']} CTAs, {tiles} tiles of {k_slices} K slices, "
          f"{sum(len(v) for v in events.values())} events")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--exe", required=True, help="the step executable")
    p.add_argument("--tile", required=True, help="the step's CTA tile, MxN (128x128)")
    p.add_argument("--device", choices=["emu", "gpu"], default="emu")
    p.add_argument("--track", choices=["hopper", "blackwell"], default="hopper")
    p.add_argument("--m", type=int, default=512)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--k", type=int, default=512)
    p.add_argument("--emu-seed", type=int, default=1)
    p.add_argument("--roles", help="the tracks of every CTA, comma-separated")
    p.add_argument("--loads-per-slice", type=int, default=2)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        cmd = [args.exe, "--device", args.device, "--trace", path, "--trace-sms", "0-255",
               "--m", str(args.m), "--n", str(args.n), "--k", str(args.k)]
        if args.device == "emu":
            cmd += ["--track", args.track, "--emu-seed", str(args.emu_seed)]
        else:
            cmd += ["--check-only"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        print(run.stdout + run.stderr, end="")
        if args.device == "gpu" and run.returncode == 3:
            print("SKIPPED: no GPU to run on (or no track for it)")
            return SKIP
        if args.device == "gpu" and run.returncode == 2 and "needs a traced build" in run.stderr:
            print("SKIPPED: not a traced build (configure with -DGEMM_TRACE=ON)")
            return SKIP
        if run.returncode != 0:
            fail(f"{' '.join(cmd)} exited {run.returncode}")
        if args.device == "gpu":
            for line in run.stdout.splitlines():
                if line.startswith("step ") and " track" in line:
                    args.track = "hopper" if "hopper track" in line else "blackwell"
        try:
            with open(path) as f:
                trace = json.load(f)
        except ValueError as e:
            fail(f"{path} is not valid JSON: {e}")
        check(trace, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
