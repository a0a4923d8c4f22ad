#!/usr/bin/env python3
"""The plot of a gemm_bench run: OUT.png and OUT.svg from its JSON.

  python3 bench/plot.py results/bench.json results/bench     # writes results/bench.{png,svg}

Top: TFLOPS of every step at each size (bars, log scale), cuBLAS as a reference line over each
size's group. Bottom: each step's ratio to cuBLAS (step TFLOPS / cuBLAS TFLOPS, both timed in the
same benchmark), with 1.0 = cuBLAS. The numbers are report.py's, read by bench/results.py (median
aggregates). Needs matplotlib (Debian: apt-get install python3-matplotlib); without it, one line
says so and the exit status is 3.
"""

import sys

import results as bench_results  # bench/results.py: the JSON, read (the numbers report.py prints)

MISSING = "plot skipped: matplotlib is missing (Debian/Ubuntu: apt-get install python3-matplotlib; or pip install matplotlib)"


def draw(results, out_base):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = results.shapes()
    steps = [b for b in results.benches() if b != "cublas"]
    c = results.context
    colors = plt.get_cmap("tab10")

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 1.3 * len(shapes) + 3), 9), sharex=True)
    group = 0.8  # width of one shape's group of bars
    labeled = set()  # what has its legend entry already

    def label(name):
        if name in labeled:
            return None
        labeled.add(name)
        return name

    for si, shape in enumerate(shapes):
        present = [s for s in steps if (s, shape) in results.entries]
        width = group / max(len(present), 1)
        for j, step in enumerate(present):
            e = results.entries[(step, shape)]
            x = si - group / 2 + width * (j + 0.5)
            color = colors(steps.index(step) % 10)
            if e.error or e.tflops is None:
                for ax in (top, bottom):
                    ax.annotate("wrong" if e.error.startswith("wrong") else "failed", (x, 0),
                                xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points",
                                rotation=90, ha="center", va="bottom", fontsize=7, color="red")
                continue
            top.bar(x, e.tflops, width * 0.9, color=color, label=label(step))
            if e.ratio is not None:
                bottom.bar(x, e.ratio, width * 0.9, color=color)
                bottom.annotate(f"{100 * e.ratio:.0f}%", (x, e.ratio), xytext=(0, 2), textcoords="offset points",
                                ha="center", va="bottom", fontsize=7)
        ref = results.entries.get(("cublas", shape))
        if ref and not ref.error and ref.tflops:
            top.hlines(ref.tflops, si - group / 2, si + group / 2, colors="black", linestyles="--", linewidth=1.5,
                       label=label("cuBLAS"))
    bottom.axhline(1.0, color="black", linestyle="--", linewidth=1.5, label="cuBLAS (1.0)")

    top.set_yscale("log")
    top.set_ylabel("TFLOPS (log scale)")
    top.set_title(f"GEMM steps vs cuBLAS: {c.get('gpu', '?')}, {c.get('date', '?')[:10]}, "
                  f"commit {c.get('git_commit', '?')}", fontsize=10)
    top.legend(fontsize=8, ncol=2, loc="upper left")
    top.grid(axis="y", which="both", alpha=0.3)
    bottom.set_ylabel("step TFLOPS / cuBLAS TFLOPS")
    ratios = [e.ratio for e in results.entries.values() if e.ratio is not None and not e.error]
    bottom.set_ylim(0, max([1.0] + ratios) * 1.15)
    bottom.grid(axis="y", alpha=0.3)
    bottom.legend(fontsize=8, loc="upper right")
    bottom.set_xticks(range(len(shapes)))
    bottom.set_xticklabels([bench_results.shape_label(s) for s in shapes], rotation=30, ha="right", fontsize=8)
    bottom.set_xlabel(f"M x N x K (fp16 in and out, fp32 accumulation); median of {results.repetitions()} repetitions")
    fig.tight_layout()
    fig.savefig(out_base + ".png", dpi=120, metadata={"Software": None})
    fig.savefig(out_base + ".svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def main(argv):
    if len(argv) != 2:
        print("usage: plot.py BENCH.json OUT_BASE   (writes OUT_BASE.png and OUT_BASE.svg)", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(MISSING)
        return 3
    results = bench_results.load(argv[0])
    if not results.entries:
        print(f"error: {argv[0]} holds no benchmark results", file=sys.stderr)
        return 1
    draw(results, argv[1])
    print(f"wrote {argv[1]}.png and {argv[1]}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
