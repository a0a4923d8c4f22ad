#!/usr/bin/env python3
"""Tables from gemm_bench's JSON (Google Benchmark's --benchmark_out): the console table, the
Markdown of docs/results.md, and publishing a run into docs/.

  python3 bench/report.py table    results/bench.json    # the table tools/compare.sh prints
  python3 bench/report.py markdown results/bench.json    # docs/results.md's text, on stdout
  python3 bench/report.py publish  results/bench.json [--docs DIR]
      # DIR (default docs/): results.json (a copy of the run), results.png and results.svg
      # (bench/plot.py), results.md (the markdown). docs/results.* are made only this way.

Numbers: for each benchmark, the median aggregate over the repetitions when the run had
repetitions, else the median of its runs. TFLOPS is the step's (or cuBLAS's); "% of cuBLAS" is the
counter ratio_to_cublas (step TFLOPS / cuBLAS TFLOPS, cuBLAS timed in the same benchmark on the
same inputs, interleaved with the step), so 100% is cuBLAS's speed and more is faster.
Plain Python 3, no third-party package: CI runs it.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
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
    """WRONG for a step whose result did not match (never timed), FAILED for any other error."""
    if e is None:
        return "-"
    if e.error:
        return "WRONG" if e.error.startswith("wrong result") else "FAILED"
    return None


def fmt_tflops(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def tables(results):
    """Two tables, rows = cuBLAS and the steps, columns = shapes: TFLOPS, and % of cuBLAS."""
    shapes, benches = results.shapes(), results.benches()
    header = [shape_label(s) for s in shapes]
    tf, pct = [], []
    for bench in benches:
        tf_row, pct_row = [bench_label(bench)], [bench_label(bench)]
        for shape in shapes:
            e = results.entries.get((bench, shape))
            state = cell_state(e)
            tf_row.append(state or fmt_tflops(e.tflops))
            if state:
                pct_row.append(state)
            elif bench == "cublas":
                pct_row.append("100%")
            else:
                pct_row.append("-" if e.ratio is None else f"{100 * e.ratio:.1f}%")
        tf.append(tf_row)
        pct.append(pct_row)
    return header, tf, pct


def errors(results):
    return [(b, s, results.entries[(b, s)].error) for b in results.benches() for s in results.shapes()
            if (b, s) in results.entries and results.entries[(b, s)].error]


def describe_gpu(c):
    parts = [c.get("gpu", "unknown GPU")]
    if c.get("gpu_sm_count"):
        parts.append(f"{c['gpu_sm_count']} SMs")
    if c.get("gpu_sm_clock_max_mhz"):
        parts.append(f"SM clock up to {c['gpu_sm_clock_max_mhz']} MHz")
    if c.get("gpu_l2_bytes"):
        parts.append(f"{int(c['gpu_l2_bytes']) / 2**20:.0f} MiB L2")
    return ", ".join(parts)


def describe_software(c):
    return (f"driver {c.get('nvidia_driver', 'unknown')} (CUDA {c.get('cuda_driver', '?')}), "
            f"runtime {c.get('cuda_runtime', '?')}, cuBLAS {c.get('cublas', '?')}")


def text_table(header, rows, title):
    first = max(len(title), *(len(r[0]) for r in rows))
    widths = [max(len(h), *(len(r[i + 1]) for r in rows)) for i, h in enumerate(header)]
    lines = [title.ljust(first) + "".join("  " + h.rjust(w) for h, w in zip(header, widths))]
    for r in rows:
        lines.append(r[0].ljust(first) + "".join("  " + v.rjust(w) for v, w in zip(r[1:], widths)))
    return "\n".join(lines)


def render_table(results):
    c = results.context
    header, tf, pct = tables(results)
    out = [
        f"GPU: {describe_gpu(c)}; {describe_software(c)}",
        f"date {c.get('date', '?')}, commit {c.get('git_commit', '?')}, {c.get('track', '?')} track, "
        f"median of {results.repetitions()} repetition(s)",
        "",
        text_table(header, tf, "TFLOPS"),
        "",
        text_table(header, pct, "% of cuBLAS"),
    ]
    errs = errors(results)
    if errs:
        out.append("")
        out += [f"{b} at {s}: {msg}" for b, s, msg in errs]
    return "\n".join(out)


def md_table(header, rows, corner):
    lines = ["| " + " | ".join([corner] + header) + " |",
             "|---" + "|---:" * len(header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def render_markdown(results, plot_name="results"):
    c = results.context
    header, tf, pct = tables(results)
    date = c.get("date", "?")
    out = [
        "<!-- Generated by `python3 bench/report.py publish <bench.json>` (tools/compare.sh --docs) from",
        "     docs/results.json: do not edit by hand; re-run the command instead. -->",
        "# Results: every step against cuBLAS",
        "",
        f"The latest comparison of the steps, measured by `gemm_bench` (bench/) on **{c.get('gpu', '?')}**, "
        f"{date[:10]}.",
        "",
        "| | |",
        "|---|---|",
        f"| GPU | {describe_gpu(c)}, compute capability {c.get('gpu_compute_capability', '?')} |",
        f"| software | {describe_software(c)} |",
        f"| date | {date} |",
        f"| commit | `{c.get('git_commit', '?')}` |",
        f"| track | {c.get('track', '?')} (steps {c.get('steps', '?')}) |",
        f"| command | `{c.get('command', 'gemm_bench')}` |",
        f"| statistic | median of {results.repetitions()} repetitions |",
        "",
        "## TFLOPS",
        "",
        md_table(header, tf, "TFLOPS"),
        "",
        "## % of cuBLAS",
        "",
        "The step's TFLOPS over cuBLAS's, cuBLAS timed inside the same benchmark on the same inputs, "
        "interleaved with the step: 100% is cuBLAS's speed, more is faster.",
        "",
        md_table(header, pct, "% of cuBLAS"),
        "",
    ]
    errs = errors(results)
    if errs:
        out += ["## Errors", ""] + [f"- {b} at {s}: {msg}" for b, s, msg in errs] + [""]
    out += [
        f"![TFLOPS per step at each size, cuBLAS as the reference; below, the ratio to cuBLAS]({plot_name}.png)",
        "",
        f"([SVG]({plot_name}.svg), [JSON]({plot_name}.json))",
        "",
        "## How it was measured",
        "",
    ]
    for key in ("inputs", "rotation", "timing", "ratio_to_cublas", "check"):
        if key in c:
            out.append(f"- {key.replace('_', ' ')}: {c[key]}.")
    out += [
        "",
        "Steps 1 and 2 run only at their own shapes. To measure again on a GPU and rewrite this page, "
        "its plot and JSON: `tools/compare.sh --docs` (add `--preset hopper` to build one track). "
        "From a JSON made elsewhere: `python3 bench/report.py publish results/bench.json`.",
        "",
    ]
    return "\n".join(out)


def publish(json_path, docs):
    results = load(json_path)
    os.makedirs(docs, exist_ok=True)
    base = os.path.join(docs, "results")
    if os.path.abspath(json_path) != os.path.abspath(base + ".json"):
        shutil.copyfile(json_path, base + ".json")
    with open(base + ".md", "w") as f:
        f.write(render_markdown(results))
    print(f"wrote {base}.json and {base}.md")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot  # bench/plot.py
    return plot.main([base + ".json", base])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["table", "markdown", "publish"])
    p.add_argument("json", help="gemm_bench's JSON (--benchmark_out)")
    p.add_argument("--docs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"),
                   help="where publish writes (default: the repository's docs/)")
    args = p.parse_args(argv)
    if args.command == "publish":
        return publish(args.json, os.path.normpath(args.docs))
    results = load(args.json)
    if not results.entries:
        print(f"error: {args.json} holds no benchmark results", file=sys.stderr)
        return 1
    sys.stdout.write(render_table(results) + "\n" if args.command == "table" else render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
