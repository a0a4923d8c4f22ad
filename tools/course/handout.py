"""The student tree of a course assignment (docs/course.md): tools/handout's implementation.

make_tree() reads the repository's tracked files (git ls-files, as they are in the working tree, or
one revision through git archive; never the history) and returns the handout as {path: bytes}:

  - every solution region of an assigned step, in every source file that has one, becomes its hint
    and a GEMM_TODO call (regions.blank; common/todo.cuh);
  - the steps after the last assigned one are left out: their folders and their gemm_add_step lines
    (which is all their tests and benchmark entries hang on: both are made per built step);
  - instructor material is left out: the course tools and tests, the NOTES.md of assigned and
    left-out steps (lab notes: earlier designs and diagnostic runs), and the hopper
    diagnostics of tools/diag/ (made from the step files' solution text); tools/CMakeLists.txt becomes a
    short one;
  - in Markdown, a fenced code block or an inline code span that quotes a solution line of an
    assigned region is replaced by a note;
  - a reference to a file the handout leaves out (a Markdown link, a path in prose or a comment)
    loses its link or is marked as left out (references.mark): no text sends a student to a file
    that is not there;
  - HANDOUT.md says what was assigned and where the TODOs are; handout.json records it.

find_leaks() is the final check, run on every tree before it is written: no line of an assigned
region's code (white space folded, at least MIN_LEAK_CHARS long, and not also ordinary code of the
handout, such as `__syncthreads();`) may appear anywhere in it, docs and READMEs included.
Plain Python 3.
"""
import io
import json
import os
import re
import subprocess
import tarfile
import textwrap

import references
from regions import RegionError, blank, find_regions, is_source

MIN_LEAK_CHARS = 12
STEP_LINE_RE = re.compile(r"^\s*gemm_add_step\((\d\d)\s+(\w+)\)\s*$")
# Left out of every handout (instructor material), as path prefixes: the course tools and tests, the
# diagnostics and probes of tools/diag/ (the variants there are made from the solution text) and the
# rest of tools/, and the emulator's own tests (small complete kernels of the lessons, and
# variants that edit the steps' solution text: tests/emu/CMakeLists.txt then builds only the steps'
# emulator tests; cmake/GemmVariant.cmake stays, for the copies of step 12 its tests run at each tiling).
INSTRUCTOR_ONLY = ("tools/", "tests/course/", "tests/emu/")
# ... except these: the step comparison and the emulator-against-GPU check, and the steps' emulator tests.
KEPT = {"tools/CMakeLists.txt", "tools/compare.sh", "tools/emu_vs_gpu.sh", "tests/emu/CMakeLists.txt",
        "tests/emu/step_emu_test.cpp", "tests/emu/step12_tilings_test.cpp", "tests/emu/emu_seeds.h"}
HANDOUT_TOOLS_CMAKE = """\
# tools/ in a handout (tools/handout): compare.sh and emu_vs_gpu.sh. The repository's diagnostics,
# probes and checks of itself are not part of it.
"""
LIBRARY_CODE = ("steps/", "common/", "emu/", "harness/", "tests/ptx/")


class HandoutError(Exception):
    pass


def git(root, *args, binary=False):
    r = subprocess.run(["git", "-C", str(root)] + list(args), capture_output=True)
    if r.returncode != 0:
        raise HandoutError("git %s failed: %s" % (" ".join(args), r.stderr.decode(errors="replace").strip()))
    return r.stdout if binary else r.stdout.decode()


class Tree(dict):
    """{path: bytes}, and which of the paths are executable."""

    def __init__(self, *args):
        super().__init__(*args)
        self.executable = set()


def read_tree(root, rev=None):
    """The tracked files: the working tree's content, or revision `rev`'s (git archive). In a copy
    without .git, or with GEMM_TREE=files, read_exported's files."""
    files = Tree()
    if rev:
        data = git(root, "archive", "--format=tar", rev, binary=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    files[m.name] = tar.extractfile(m).read()
                    if m.mode & 0o111:
                        files.executable.add(m.name)
        return files
    # GEMM_TREE=files: the files on disk, as in a copy without .git (a copy whose .git does not match
    # its files, such as a device machine's).
    if not os.path.exists(os.path.join(str(root), ".git")) or os.environ.get("GEMM_TREE") == "files":
        return read_exported(root)
    for entry in git(root, "ls-files", "-s", "-z").split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        full = os.path.join(str(root), path)
        if meta.startswith("100") and os.path.isfile(full) and not os.path.islink(full):  # not deleted, no link
            with open(full, "rb") as f:
                files[path] = f.read()
            if meta.startswith("100755"):
                files.executable.add(path)
    return files


def read_exported(root):
    """The files of a copy of the repository without its .git (an export, a device machine's copy):
    everything but the folders .gitignore names (build/, build-*/, results/, __pycache__/, ...)."""
    import fnmatch
    anywhere, top = [".git"], []
    try:
        with open(os.path.join(str(root), ".gitignore")) as f:
            for line in f:
                line = line.strip()
                if line.endswith("/") and not line.startswith("#"):
                    (top if line.startswith("/") else anywhere).append(line.strip("/"))
    except OSError:
        pass
    files = Tree()
    for dirpath, dirnames, filenames in os.walk(str(root)):
        rel = os.path.relpath(dirpath, str(root))
        dirnames[:] = [d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in anywhere)
                       and not (rel == "." and any(fnmatch.fnmatch(d, p) for p in top))]
        for name in filenames:
            full = os.path.join(dirpath, name)
            path = os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/")
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            with open(full, "rb") as f:
                files[path] = f.read()
            if os.access(full, os.X_OK):
                files.executable.add(path)
    return files


def source_commit(root, rev=None):
    try:
        commit = git(root, "rev-parse", rev or "HEAD").strip()
    except HandoutError:
        return "unknown"
    if rev is None and git(root, "status", "--porcelain", "--untracked-files=no").strip():
        commit += " (with uncommitted changes)"
    return commit


def steps_of(files):
    """{step number: folder name} from steps/CMakeLists.txt's gemm_add_step lines."""
    text = files.get("steps/CMakeLists.txt", b"").decode()
    steps = {}
    for line in text.split("\n"):
        m = STEP_LINE_RE.match(line)
        if m:
            steps[int(m.group(1))] = "%s_%s" % (m.group(1), m.group(2))
    return steps


def parse_steps(text):
    """'7,9' or '1-3,5' -> sorted list of ints."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise HandoutError("--steps: '%s' is not a step number or a range (e.g. 7,9 or 1-3)" % part)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out.update(range(lo, hi + 1))
    if not out:
        raise HandoutError("--steps: no step given")
    return sorted(out)


def norm(line):
    return " ".join(line.split())


def solution_lines(files, assigned):
    """The code lines of every assigned region in the tree (white space folded)."""
    lines = set()
    for path, data in files.items():
        if not is_source(path):
            continue
        text = data.decode(errors="replace")
        if "BEGIN SOLUTION" not in text:
            continue
        src = text.split("\n")
        for r in find_regions(path, text):
            if r.step in assigned:
                for line in r.body(src):
                    s = norm(line)
                    if s and not s.startswith("//") and not s.startswith("#"):
                        lines.add(s)
    return lines


def _library_code(tree):
    """The lines (white space folded) of the code a handout's steps are built from: its step files
    (TODOs in place), common/, emu/, harness/ and tests/ptx/ (one call of each wrapper of common/, for
    ptxas). A solution line that is also one of these, or part of
    one, is ordinary code (`__syncthreads();`, a loop header), not the solution."""
    out = set()
    for path, data in tree.items():
        if path.startswith(LIBRARY_CODE) and is_source(path):
            out.update(norm(l) for l in data.decode(errors="replace").split("\n"))
    return out


def leak_set(files, tree, assigned):
    """The solution lines of the assigned steps that find_leaks looks for."""
    library = _library_code(tree)
    joined = "\n".join(library)
    return {s for s in solution_lines(files, assigned) if len(s) >= MIN_LEAK_CHARS and s not in joined}


def find_leaks(tree, leaks):
    """[(path, line number, solution line)] for every solution line that appears in the tree."""
    found = []
    if not leaks:
        return found
    for path, data in sorted(tree.items()):
        text = data.decode(errors="replace")
        for no, line in enumerate(text.split("\n"), 1):
            s = norm(line)
            if len(s) < MIN_LEAK_CHARS:
                continue
            for leak in leaks:
                if leak in s:
                    found.append((path, no, leak))
    return found


_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_SPAN_RE = re.compile(r"`([^`\n]+)`")


def redact_markdown(text, leaks, assigned_tags):
    """Fenced blocks and inline code spans quoting a solution line become a note."""
    note = "(left out of the handout: it shows the solution of %s)" % ", ".join(assigned_tags)
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(m.group(1)):
                j += 1
            block = lines[i:j + 1]
            if any(leak in norm(l) for l in block[1:-1] for leak in leaks):
                out += [block[0], note, block[-1] if j < len(lines) else m.group(1)]
            else:
                out += block
            i = j + 1
            continue
        line = lines[i]
        if any(leak in norm(line) for leak in leaks):
            line = _SPAN_RE.sub(lambda s: "`...`" if any(leak in norm(s.group(1)) for leak in leaks)
                                else s.group(0), line)
        out.append(line)
        i += 1
    return "\n".join(out)


def make_tree(files, assigned, commit="unknown"):
    """The handout of `assigned` (step numbers) from the tracked files: (tree, report)."""
    steps = steps_of(files)
    if not steps:
        raise HandoutError("steps/CMakeLists.txt lists no step (gemm_add_step lines)")
    missing = [s for s in assigned if s not in steps]
    if missing:
        raise HandoutError("step %s: not in this tree (its steps: %s)" %
                           (", ".join(map(str, missing)), ", ".join(str(s) for s in sorted(steps))))
    last = max(assigned)
    dropped = {n: d for n, d in steps.items() if n > last}
    kept = {n: d for n, d in steps.items() if n <= last}
    tags = ["step%02d" % s for s in assigned]
    tree = Tree()
    todos = []
    problems = []
    for path, data in files.items():
        if path.startswith(INSTRUCTOR_ONLY) and path not in KEPT:
            continue
        m = re.match(r"steps/(\d\d)_[^/]+/", path)
        if m:
            n = int(m.group(1))
            if n in dropped:
                continue
            if path.endswith("/NOTES.md") and n in assigned:
                continue
        if path == "tools/CMakeLists.txt":
            data = HANDOUT_TOOLS_CMAKE.encode()
        elif path == "steps/CMakeLists.txt":
            lines = data.decode().split("\n")
            data = "\n".join(l for l in lines
                             if not (STEP_LINE_RE.match(l) and int(STEP_LINE_RE.match(l).group(1)) in dropped)).encode()
        elif is_source(path) and b"BEGIN SOLUTION" in data:
            try:
                text, blanked = blank(path, data.decode(), set(assigned))
            except RegionError as e:
                problems.append(str(e))
                continue
            data = text.encode()
            todos += [(path, r.tag, r.hint) for r in blanked]
        tree[path] = data
        if path in files.executable:
            tree.executable.add(path)
    if problems:
        raise HandoutError("regions that cannot be blanked:\n" + "\n".join(problems))
    leaks = leak_set(files, tree, set(assigned))
    for path in list(tree):
        if path.endswith(".md"):
            tree[path] = redact_markdown(tree[path].decode(), leaks, tags).encode()
    mark_references(tree, files)
    tree["HANDOUT.md"] = handout_readme(assigned, kept, todos, commit).encode()
    manifest = {"assigned": assigned, "steps": {str(n): d for n, d in sorted(kept.items())},
                "left_out": {str(n): d for n, d in sorted(dropped.items())}, "source": commit,
                "todos": [{"file": p, "step": t, "hint": h} for p, t, h in todos]}
    tree["handout.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    found = find_leaks(tree, leaks)
    if found:
        raise HandoutError("solution text of an assigned region is still in the handout:\n" +
                           "\n".join("  %s:%d: %s" % f for f in found[:40]))
    return tree, manifest


def mark_references(tree, files):
    """Rewrites, in place, every reference of the tree's texts to a file of `files` it lacks."""
    have, known = references.Index(tree), references.Index(files)
    for path, data in tree.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        new = references.mark(path, text, have, known)
        if new != text:
            tree[path] = new.encode()


def handout_readme(assigned, kept, todos, commit):
    by_file = {}
    for path, tag, _ in todos:
        by_file.setdefault(path, []).append(tag)
    first = min(assigned)
    lines = [
        "# Course handout",
        "",
        "Assigned: %s. This tree has steps %s; the steps after step %d are not part of it." %
        (", ".join("step %d" % s for s in assigned), ", ".join(str(n) for n in sorted(kept)), max(assigned)),
        "",
        "Every part of a step that is yours to write is marked `// TODO stepNN: <hint>` and holds a",
        "`GEMM_TODO(...)` call (`common/todo.cuh`) that fails at once when it runs, on the GPU and on the",
        "emulator, naming the step, the file and line and the hint. Replace each call by your code.",
        "A region of an assigned step is a TODO in every step file that has it: a later step copies the",
        "earlier steps' code forward, so steps after step %d carry TODOs of the steps they build on." % first,
        "",
        "| file | TODOs |",
        "|---|---|",
    ]
    for path in sorted(by_file):
        tags = by_file[path]
        counts = ", ".join("%d x %s" % (tags.count(t), t) for t in sorted(set(tags)))
        lines.append("| `%s` | %s |" % (path, counts))
    lines += [""] + grader_runs(assigned) + [
        "",
        "Build, run and debug: [docs/course.md](docs/course.md), \"For students\". What you hand in: a tar",
        "of the assigned steps' `hopper.cu` and `blackwell.cu`, and of every file outside `steps/` with TODOs",
        "(a helper whose lesson is an assigned step's), with their paths:",
        "",
        "```sh",
        "tar cf handin.tar " + " ".join(["steps/%s/hopper.cu steps/%s/blackwell.cu" % (kept[s], kept[s])
                                         for s in assigned] + sorted(p for p in by_file if not p.startswith("steps/"))),
        "```",
        "",
        "Made from commit %s." % commit,
        "",
    ]
    return "\n".join(lines)


GRADER_SEEDS = "1 2 3 4 5"  # the emulator seeds HANDOUT.md's loop tries: the grader draws one per run


def grader_runs(assigned):
    """HANDOUT.md's section on testing as the grader does: its emulated runs of each assigned step, with the
    shapes the public demo seed draws, the grader's emulated SMs (grade.emu_sms), and a loop over emulator
    schedules; then its GPU runs."""
    import grade  # the grader's rules (grade.py imports this module: imported here, when it is loaded)
    counts = {s: grade.emu_sms(s) for s in assigned}
    if len(set(counts.values())) == 1:
        sms = "%d SMs" % counts[assigned[0]]
    else:
        sms = ", ".join("%d SMs for step %d" % (n, s) for s, n in counts.items())
    text = (
        "The grader runs each assigned step on the emulator, both tracks, at shapes it draws from its own seed: a "
        "square one, a non-square one, two ragged ones (N and K not multiples of the tile) and one with more tiles "
        "than the emulated SMs hold at once, in float and exact mode (steps 1 and 2 at their own shapes; steps 11 "
        "and 12 add one that splits along K). It emulates %s (`--emu-sms`), not the driver's default of 4, so that a "
        "persistent grid has fewer CTAs than tiles, and gives every run a schedule of its own (`--emu-seed`: the "
        "order of the threads and of the asynchronous completions) and a limit of %d s. A broken rule on any run "
        "zeroes the track's correctness, and a hang the step's: one run that matches proves little, so run every "
        "shape on several schedules, as below. The shapes are the ones the grader draws with its public demo seed "
        "(%d); a real grading draws others of the same kinds." % (sms, grade.RUN_LIMIT_S, grade.DEMO_SEED))
    lines = ["## Test as the grader does", ""] + textwrap.wrap(text, 100) + [""]
    for step in assigned:
        target = "step%02d" % step
        lines += ["```sh", "cmake --build build --target %s" % target,
                  "for seed in %s; do" % GRADER_SEEDS, "  for track in hopper blackwell; do"]
        for _, (m, n, k), exact in grade.draw_cases(step, grade.DEMO_SEED):
            lines.append("    ./build/%s --device emu --track $track --emu-sms %d --emu-seed $seed --seed $seed "
                         "--m %d --n %d --k %d%s" % (target, grade.emu_sms(step), m, n, k, " --exact" if exact else ""))
        lines += ["  done", "done"]
        lines.append("# on a GPU (its track), as the grader runs it there:")
        for _, (m, n, k), exact in grade.gpu_cases(step, grade.DEMO_SEED):
            lines.append("./build/%s --check-only --m %d --n %d --k %d%s" % (target, m, n, k,
                                                                             " --exact" if exact else ""))
        lines += ["```", ""]
    lines += ["Every run must end with `verdict: match`; the emulator names a broken rule with its line, and",
              "`--emu-seed S` replays the schedule of a failed run."]
    return lines


def write_tree(tree, out):
    """Writes the tree under `out` (which must not exist, or be empty)."""
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise HandoutError("%s: exists and is not an empty folder" % out)
    for path, data in sorted(tree.items()):
        full = os.path.join(out, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        if path in getattr(tree, "executable", ()):
            os.chmod(full, 0o755)
    return out
