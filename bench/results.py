#!/usr/bin/env python3
"""gemm_bench's JSON (Google Benchmark's --benchmark_out) read into one entry per (benchmark,
shape): the numbers report.py tabulates and plot.py draws. Plain Python 3.

Numbers: for each benchmark, the median aggregate over the repetitions when the run had
repetitions, else the median of its runs.
"""

import json
import statistics
from dataclasses import dataclass, field


@dataclass
class Entry:
    tflops: float = None
    ratio: float = None
    cublas_tflops: float = None
    step_ms: float = None
    cublas_ms: float = None
    sets: int = None
    repetitions: int = 1
    label: str = ""
    error: str = ""


@dataclass
class Results:
    context: dict
    entries: dict = field(default_factory=dict)  # (bench, shape) -> Entry

    def shapes(self):
        """Every shape of the run, smallest problem first."""
        keys = {shape for _, shape in self.entries}
        return sorted(keys, key=lambda s: (dims(s)[0] * dims(s)[1] * dims(s)[2], dims(s)))

    def benches(self):
        """cublas first, then the steps in order."""
        names = {bench for bench, _ in self.entries}
        return sorted(names, key=lambda b: (b != "cublas", b))

    def repetitions(self):
        reps = {e.repetitions for e in self.entries.values() if not e.error}
        return max(reps) if reps else 1


def dims(shape):
    return tuple(int(x) for x in shape.split("x"))


def shape_label(shape):
    m, n, k = dims(shape)
    return f"{m}^3" if m == n == k else shape


def bench_label(bench):
    return "cuBLAS" if bench == "cublas" else bench


COUNTERS = {"TFLOPS": "tflops", "ratio_to_cublas": "ratio", "cublas_TFLOPS": "cublas_tflops",
            "step_ms": "step_ms", "cublas_ms": "cublas_ms", "sets": "sets"}


def load(path):
    with open(path) as f:
        data = json.load(f)
    results = Results(context=data.get("context", {}))
    medians, runs, errors, labels = {}, {}, {}, {}
    for b in data.get("benchmarks", []):
        parts = b.get("run_name", b["name"]).split("/")
        if len(parts) < 2:
            continue
        key = (parts[0], parts[1])
        if b.get("label"):
            labels[key] = b["label"]
        if b.get("error_occurred"):
            errors[key] = b.get("error_message", "error")
        elif b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = b
        else:
            runs.setdefault(key, []).append(b)
    for key in set(medians) | set(runs) | set(errors):
        e = Entry(label=labels.get(key, ""))
        if key in medians:
            src = medians[key]
            e.repetitions = src.get("repetitions", 1)
            for counter, attr in COUNTERS.items():
                if counter in src:
                    setattr(e, attr, src[counter])
        elif key in runs:
            e.repetitions = len(runs[key])
            for counter, attr in COUNTERS.items():
                values = [r[counter] for r in runs[key] if counter in r]
                if values:
                    setattr(e, attr, statistics.median(values))
        else:
            e.error = errors[key]
        results.entries[key] = e
    return results


def cell_state(e):
    """What a table cell shows for an entry that has no time: "-" for none, WRONG for a step whose
    result did not match (never timed), FAILED for any other error; None for a timed entry."""
    if e is None:
        return "-"
    if e.error:
        return "WRONG" if e.error.startswith("wrong result") else "FAILED"
    return None
