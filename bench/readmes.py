#!/usr/bin/env python3
"""The measured tables of the READMEs, written from the published run (docs/results.json), so that
every TFLOPS figure a README shows is one of docs/results.md's: same run, same commit, same GPU.

A README marks where its table goes; everything between the two markers is replaced:

  <!-- results:stepNN sizes=S,S,... -->   steps/NN_*/README.md: step NN at the sizes named, in that
  <!-- /results -->                      order, at most 6 (the sizes the README's prose discusses):
                                         its TFLOPS and % of cuBLAS, and the previous step's % of
                                         cuBLAS. A size is N^3 (or N) for N x N x N, or MxNxK.
  <!-- results:stepNN -->                without sizes=: every size step NN ran at, at most 12 rows
  <!-- /results -->                      (steps 1 and 2, whose one shape is fixed)
  <!-- results:ladder -->                README.md: every step at a few sizes, TFLOPS (% of cuBLAS),
  <!-- /results -->                      and cuBLAS

The documents are README.md and steps/*/README.md under the repository root. A step the run does
not have (a new step, or the other track's) gets a sentence saying it is not yet measured; a named
size the run does not have is listed under the table as not in this run; the caption counts the
sizes the step ran at that the table leaves out. A README without markers is left alone. An
unknown marker, an unknown attribute, a malformed or repeated size, or more than 6 sizes is an
error that names the README. Running it again on the same JSON changes nothing.

  python3 bench/report.py readmes docs/results.json            # rewrite the tables
  python3 bench/report.py readmes docs/results.json --check    # exit 1 if a table is not the JSON's

`python3 bench/report.py publish` (tools/compare.sh --docs) does the same after writing
docs/results.*. Plain Python 3.
"""

import glob
import os
import re

from results import cell_state, dims, shape_label

MARKER = re.compile(r"(<!-- results:([A-Za-z0-9_]+)((?:[ \t]+[^\s>]+)*)[ \t]*-->)(.*?)(<!-- /results -->)", re.S)
OPENING = re.compile(r"<!-- results:[A-Za-z0-9_]+(?:[ \t]+[^\s>]+)*[ \t]*-->")
STEP_MARK = re.compile(r"^step(\d\d)$")
MAX_ROWS = 12        # a step table without sizes=: every size the step ran at, up to this many
MAX_NAMED_SIZES = 6  # a step table with sizes=: the sizes its README discusses
# The ladder's columns, when the run has them: a mid size, the largest square, and a ragged K.
LADDER_SIZES = ("2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "3000x3000x3000")
GENERATED = "<!-- generated from docs/results.json by bench/report.py (tools/compare.sh --docs): do not edit -->"
OTHER_TRACK = {"hopper": "blackwell", "blackwell": "hopper"}


def step_bench(n):
    return f"step{n:02d}"


def step_name(bench):
    return f"step {int(bench[4:])}"


def parse_size(text):
    """'4096^3' or '4096' -> '4096x4096x4096'; 'MxNxK' as it is (leading zeros dropped); else None."""
    m = re.fullmatch(r"(\d+)(?:\^3)?", text)
    if m:
        n = int(m.group(1))
        return f"{n}x{n}x{n}" if n > 0 else None
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if m and all(int(g) > 0 for g in m.groups()):
        return "x".join(str(int(g)) for g in m.groups())
    return None


def marker_sizes(name, attrs, readme):
    """The sizes a marker names (a list of 'MxNxK'), or None when it names none."""
    sizes = None
    for attr in attrs.split():
        key, eq, value = attr.partition("=")
        if key != "sizes" or not eq:
            raise ValueError(f"{readme}: '<!-- results:{name} ... -->': unknown attribute '{attr}' (sizes=S,S,...)")
        if not STEP_MARK.match(name):
            raise ValueError(f"{readme}: '<!-- results:{name} ... -->': sizes= is for step tables (results:stepNN)")
        if sizes is not None:
            raise ValueError(f"{readme}: '<!-- results:{name} ... -->': sizes= given twice")
        sizes = []
        for text in value.split(","):
            shape = parse_size(text)
            if shape is None:
                raise ValueError(f"{readme}: '<!-- results:{name} ... -->': '{text}' is not a size (N^3 or MxNxK)")
            if shape in sizes:
                raise ValueError(f"{readme}: '<!-- results:{name} ... -->': {text} is named twice")
            sizes.append(shape)
        if len(sizes) > MAX_NAMED_SIZES:
            raise ValueError(f"{readme}: '<!-- results:{name} ... -->': {len(sizes)} sizes, at most "
                             f"{MAX_NAMED_SIZES} (the ones its prose discusses; docs/results.md has them all)")
    return sizes


def tflops_cell(e):
    state = cell_state(e)
    if state:
        return state
    v = e.tflops
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def pct_cell(e):
    state = cell_state(e)
    if state:
        return state
    return "-" if e.ratio is None else f"{100 * e.ratio:.1f}%"


def size_label(shape):
    return shape_label(shape)


def md_table(header, rows, align):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def the_run(results, link):
    """The caption's account of the run: GPU, date, commit, track, statistic, and the link."""
    c = results.context
    track = c.get("track", "?")
    text = (f"`gemm_bench`, **{c.get('gpu', '?')}**, {c.get('date', '?')[:10]}, commit "
            f"`{c.get('git_commit', '?')}`, {track} track, median of {results.repetitions()} repetitions "
            f"([docs/results.md]({link})).")
    return text, track


def step_table(results, n, link, sizes=None):
    """Step n's table: at the sizes named (in that order), or at every size it ran at."""
    bench, prev = step_bench(n), step_bench(n - 1)
    run, track = the_run(results, link)
    other = OTHER_TRACK.get(track)
    ran = [s for s in results.shapes() if (bench, s) in results.entries]
    if not ran:
        return (f"Step {n} is not yet measured: it is not in the run that "
                f"[docs/results.md]({link}) publishes ({results.context.get('gpu', '?')}, "
                f"{results.context.get('date', '?')[:10]}, commit `{results.context.get('git_commit', '?')}`). "
                "`tools/compare.sh --docs` on a GPU measures it and fills this table.")
    absent = []
    if sizes is None:
        shapes = ran[:MAX_ROWS]
    else:
        in_run = set(results.shapes())
        shapes = [s for s in sizes if s in in_run]
        absent = [s for s in sizes if s not in in_run]
    left_out = len([s for s in ran if s not in shapes])
    notes = [run, "% of cuBLAS: cuBLAS timed beside the step in every iteration."]
    if not shapes:
        notes.append(f"None of the sizes this README names is in this run: "
                     f"{', '.join(size_label(s) for s in absent)}.")
        if other:
            notes.append(f"`{other}.cu` is not in this run.")
        return " ".join(notes)
    with_prev = n > 1 and any((prev, s) in results.entries for s in shapes)
    header = ["size", f"step {n} TFLOPS", f"step {n} % of cuBLAS"] + ([f"step {n - 1} % of cuBLAS"] if with_prev else [])
    rows = []
    for s in shapes:
        e = results.entries.get((bench, s))
        row = [size_label(s), tflops_cell(e), pct_cell(e)]
        if with_prev:
            row.append(pct_cell(results.entries.get((prev, s))))
        rows.append(row)
    own = len(ran) == 1 and len(shapes) == 1 and not any(
        (b, shapes[0]) in results.entries for b in results.benches() if b not in ("cublas", bench))
    if own:
        notes.append(f"Step {n} runs only at its own shape: it is not in the size sweep.")
    elif n > 1 and not with_prev:
        notes.append(f"Step {n - 1} is not in this run at these sizes.")
    if absent:
        notes.append(f"Not in this run: {', '.join(size_label(s) for s in absent)}.")
    if left_out > 0:
        notes.append(f"{left_out} more size(s) in docs/results.md.")
    if other:
        notes.append(f"`{other}.cu` is not in this run.")
    return " ".join(notes) + "\n\n" + md_table(header, rows, "l" + "r" * (len(header) - 1))


def ladder_columns(results):
    shapes = results.shapes()
    cols = [s for s in LADDER_SIZES if s in shapes]
    if cols:
        return cols
    # Otherwise the largest sizes most steps ran at.
    counts = {s: sum((b, s) in results.entries for b in results.benches()) for s in shapes}
    best = sorted(shapes, key=lambda s: (-counts[s], -dims(s)[0] * dims(s)[1] * dims(s)[2]))[:4]
    return [s for s in shapes if s in best]


def ladder_table(results, steps_on_disk, link):
    run, track = the_run(results, link)
    cols = ladder_columns(results)
    benches = [b for b in results.benches() if b != "cublas"]
    numbers = sorted({int(b[4:]) for b in benches if STEP_MARK.match(b)} | set(steps_on_disk))
    rows, own, missing = [], [], []
    for n in numbers:
        b = step_bench(n)
        if b not in benches:
            missing.append(n)
            rows.append([f"step {n}"] + ["not yet measured"] + ["-"] * (len(cols) - 1))
            continue
        if not any((b, s) in results.entries for s in cols):
            own.append(n)
            continue
        cells = []
        for s in cols:
            e = results.entries.get((b, s))
            state = cell_state(e)
            cells.append(state or f"{tflops_cell(e)} ({pct_cell(e)})")
        rows.append([f"step {n}"] + cells)
    if "cublas" in results.benches():
        rows.append(["cuBLAS"] + [tflops_cell(results.entries.get(("cublas", s))) for s in cols])
    header = ["TFLOPS (% of cuBLAS)"] + [size_label(s) for s in cols]
    notes = [run, "The percentage is the same-run ratio (cuBLAS timed beside the step in every iteration); "
                  "the cuBLAS row is cuBLAS's own benchmark."]
    if own:
        names = " and ".join(f"{n}" for n in own)
        notes.append(f"Step{'s' if len(own) > 1 else ''} {names} run{'' if len(own) > 1 else 's'} only at "
                     "their own shapes (their READMEs).")
    if missing:
        names = ", ".join(f"{n}" for n in missing)
        notes.append(f"Step{'s' if len(missing) > 1 else ''} {names}: not yet measured.")
    other = OTHER_TRACK.get(track)
    if other:
        notes.append(f"The {other} track is not in this run.")
    return " ".join(notes) + "\n\n" + md_table(header, rows, "l" + "r" * len(cols))


def documents(root):
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "steps", "*", "README.md")))
    return [d for d in docs if os.path.isfile(d)]


def steps_on_disk(root):
    found = set()
    for d in glob.glob(os.path.join(root, "steps", "[0-9][0-9]_*")):
        if os.path.isdir(d):
            found.add(int(os.path.basename(d)[:2]))
    return found


def render(text, results, readme, results_md, on_disk):
    """The README's text with every marked table made from the run; unknown markers are an error."""
    link = os.path.relpath(results_md, os.path.dirname(os.path.abspath(readme))).replace(os.sep, "/")

    def replace(m):
        start, name, attrs, _, end = m.groups()
        sizes = marker_sizes(name, attrs, readme)
        if name == "ladder":
            body = ladder_table(results, on_disk, link)
        elif STEP_MARK.match(name):
            body = step_table(results, int(name[4:]), link, sizes)
        else:
            raise ValueError(f"{readme}: unknown marker '<!-- results:{name} -->' "
                             "(results:ladder or results:stepNN)")
        return f"{start}\n{GENERATED}\n{body}\n{end}"

    opened = len(OPENING.findall(text))
    if opened != len(MARKER.findall(text)):
        raise ValueError(f"{readme}: a '<!-- results:... -->' marker without its '<!-- /results -->'")
    return MARKER.sub(replace, text)


def update(results, root, results_md=None, check=False):
    """Rewrite (or with check, compare) the marked tables of root's READMEs. Returns the documents
    whose text changed (or would change)."""
    results_md = results_md or os.path.join(root, "docs", "results.md")
    on_disk = steps_on_disk(root)
    changed = []
    for readme in documents(root):
        with open(readme) as f:
            text = f.read()
        new = render(text, results, readme, results_md, on_disk)
        if new != text:
            changed.append(readme)
            if not check:
                with open(readme, "w") as f:
                    f.write(new)
    return changed
