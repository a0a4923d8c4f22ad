#!/usr/bin/env python3
"""Tables from gemm_bench's JSON (Google Benchmark's --benchmark_out): the console table, the
Markdown of docs/results.md, publishing a run into docs/, and the READMEs' tables.

  python3 bench/report.py table    results/bench.json    # the table tools/compare.sh prints
  python3 bench/report.py markdown results/bench.json    # docs/results.md's text, on stdout
  python3 bench/report.py publish  results/bench.json [--docs DIR] [--log FILE]
      # DIR (default docs/): results.json (a copy of the run), results.log (the run's console
      # output: --log, or the .log beside the JSON), results.png and results.svg (bench/plot.py),
      # results.md (the markdown); then the READMEs' tables (below) from that JSON.
      # docs/results.* are made only this way.
  python3 bench/report.py merge    first.json second.json [...] --out results/bench.json
      # one run made of parts, for a run longer than one sitting allows: each part run with
      # --sizes (or --benchmark_filter) on the same GPU, commit and software; the first part's
      # (benchmark, shape) wins where two parts have one; the context lists every part's command
  python3 bench/report.py readmes  docs/results.json [--check]
      # the tables between <!-- results:... --> markers in README.md and steps/*/README.md
      # (bench/readmes.py); --check changes nothing and exits 1 if one is not the JSON's

Numbers: for each benchmark, the median aggregate over the repetitions when the run had
repetitions, else the median of its runs. TFLOPS is the step's (or cuBLAS's); "% of cuBLAS" is the
counter ratio_to_cublas (step TFLOPS / cuBLAS TFLOPS, cuBLAS timed in the same benchmark on the
same inputs, interleaved with the step), so 100% is cuBLAS's speed and more is faster.
Plain Python 3, no third-party package: CI runs it.
"""

import argparse
import json
import os
import shlex
import shutil
import sys

import plot  # bench/plot.py: the plot of a run
import readmes  # bench/readmes.py: the READMEs' tables
from results import bench_label, cell_state, load, shape_label  # bench/results.py: the JSON, read


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


def describe_command(c):
    """The run's command; a merged run's parts (report.py merge) are listed below the table."""
    parts = c.get("parts")
    return f"`{c.get('command', 'gemm_bench')}`" if not parts else f"{len(parts)} parts, below"


def describe_parts(c):
    """A merged run's parts, a line each (their commands hold `|`, which a table cell cannot)."""
    parts = c.get("parts")
    if not parts:
        return []
    return ["The run in parts, merged with `python3 bench/report.py merge` (bench/README.md, \"Publishing\"):", ""] + \
        [f"- {p['date']}: `{p['command']}` ({p['benchmarks_kept']} benchmarks)" for p in parts] + [""]


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


def render_markdown(results, plot_name="results", with_log=False):
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
        f"| command | {describe_command(c)} |",
        f"| statistic | median of {results.repetitions()} repetitions |",
        "",
    ] + describe_parts(c) + [
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
        f"([SVG]({plot_name}.svg), [JSON]({plot_name}.json)"
        + (f", [log]({plot_name}.log): the run's console output" if with_log else "") + ")",
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
        "its plot, JSON and log, and the measured tables of README.md and of every step's README "
        "(made from this JSON): `tools/compare.sh --docs` (add `--preset hopper` to build one track). "
        "From a JSON made elsewhere: `python3 bench/report.py publish results/bench.json`.",
        "",
    ]
    return "\n".join(out)


def publish_log(json_path, base, log):
    """docs/results.log: the run's console output (log, or the .log beside the JSON). Re-publishing
    docs/results.json itself keeps the log it has; a run published without one leaves none, so the
    log beside the JSON is always the JSON's run."""
    log = log or os.path.splitext(json_path)[0] + ".log"
    same_json = os.path.abspath(json_path) == os.path.abspath(base + ".json")
    if os.path.isfile(log) and os.path.abspath(log) != os.path.abspath(base + ".log"):
        shutil.copyfile(log, base + ".log")
        return True
    if os.path.isfile(base + ".log") and not same_json:
        os.remove(base + ".log")
        print(f"removed {base}.log: no log of this run")
    return os.path.isfile(base + ".log")


def publish_readmes(results, docs):
    """The READMEs' tables, from the run just published; docs' parent is the repository root."""
    root = os.path.dirname(os.path.abspath(docs))
    changed = readmes.update(results, root, os.path.join(os.path.abspath(docs), "results.md"))
    for path in changed:
        print(f"wrote the table of {os.path.relpath(path, root)}")
    return changed


def publish(json_path, docs, log=None):
    results = load(json_path)
    os.makedirs(docs, exist_ok=True)
    base = os.path.join(docs, "results")
    if os.path.abspath(json_path) != os.path.abspath(base + ".json"):
        shutil.copyfile(json_path, base + ".json")
    with_log = publish_log(json_path, base, log)
    with open(base + ".md", "w") as f:
        f.write(render_markdown(results, with_log=with_log))
    print(f"wrote {base}.json{', ' + base + '.log' if with_log else ''} and {base}.md")
    publish_readmes(results, docs)
    return plot.main([base + ".json", base])

# What must be the same in every part of a merged run: the code, the GPU and the software.
SAME_IN_EVERY_PART = ("git_commit", "gpu_description", "nvidia_driver", "cublas", "cuda_runtime", "track", "steps")


def cell(benchmark):
    """(benchmark, shape) of one JSON entry: "step11/1024x1024x1024/manual_time_median"."""
    return tuple(benchmark["name"].split("/")[:2])


def merge(paths, out):
    """One run's JSON from parts (see the docstring); the first part's context, its command the
    parts' commands joined, and `parts`: each part's date, command and count of benchmarks kept."""
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    first = runs[0]["context"]
    for path, run in zip(paths[1:], runs[1:]):
        for key in SAME_IN_EVERY_PART:
            if run["context"].get(key) != first.get(key):
                print(f"error: {path}: {key} is {run['context'].get(key)!r}, {paths[0]} has {first.get(key)!r}: "
                      "the parts of one run must share the commit, the GPU and the software", file=sys.stderr)
                return 1
    merged = {"context": dict(first), "benchmarks": []}
    earlier, parts = set(), []  # the (benchmark, shape) cells of the parts before this one
    for run in runs:
        mine = [b for b in run["benchmarks"] if cell(b) not in earlier]
        merged["benchmarks"] += mine
        earlier |= {cell(b) for b in mine}
        command = run["context"].get("command") or "gemm_bench"
        parts.append({"date": run["context"].get("date"), "command": shlex.join(shlex.split(command)),
                      "benchmarks_kept": len({cell(b) for b in mine})})
    merged["context"]["command"] = " ; ".join(p["command"] for p in parts)
    merged["context"]["parts"] = parts
    with open(out, "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    print(f"wrote {out}: {len(merged['benchmarks'])} entries from {len(paths)} parts")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["table", "markdown", "publish", "readmes", "merge"])
    p.add_argument("json", nargs="+", help="gemm_bench's JSON (--benchmark_out); merge: the parts, first wins")
    p.add_argument("--out", help="merge: the JSON to write")
    p.add_argument("--docs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"),
                   help="where publish writes, and whose parent holds the READMEs (default: the repository's docs/)")
    p.add_argument("--log", help="publish: the run's console output, kept as results.log (default: the .log beside the JSON)")
    p.add_argument("--check", action="store_true", help="readmes: change nothing; exit 1 if a table is not the JSON's")
    args = p.parse_args(argv)
    if args.command == "merge":
        if len(args.json) < 2 or not args.out:
            p.error("merge needs two or more JSONs and --out")
        return merge(args.json, args.out)
    if len(args.json) != 1:
        p.error(f"{args.command} takes one JSON")
    args.json = args.json[0]
    if args.command == "publish":
        return publish(args.json, os.path.normpath(args.docs), args.log)
    results = load(args.json)
    if not results.entries:
        print(f"error: {args.json} holds no benchmark results", file=sys.stderr)
        return 1
    if args.command == "readmes":
        docs = os.path.normpath(args.docs)
        root = os.path.dirname(os.path.abspath(docs))
        changed = readmes.update(results, root, os.path.join(os.path.abspath(docs), "results.md"), check=args.check)
        for path in changed:
            print(f"{'differs from the JSON' if args.check else 'wrote the table of'}: {os.path.relpath(path, root)}")
        if args.check and changed:
            print(f"run: python3 bench/report.py readmes {args.json}", file=sys.stderr)
            return 1
        return 0
    with_log = os.path.isfile(os.path.splitext(args.json)[0] + ".log")
    sys.stdout.write(render_table(results) + "\n" if args.command == "table"
                     else render_markdown(results, with_log=with_log))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
