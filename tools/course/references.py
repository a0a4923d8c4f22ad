"""References to files in a handout's texts: finding them, and marking those to files it leaves out.

A handout (handout.make_tree) leaves files out: the NOTES.md of assigned steps, the later steps'
folders, the instructor tools and tests. The texts it keeps still name many of them, in Markdown
links and as plain paths (`tools/grade`, `steps/05_pipeline/NOTES.md`, a bare `NOTES.md` beside a
README). A reader must never be sent to a file that is not there, so the handout rewrites each such
reference (mark()):

  - a Markdown link or picture to a file it lacks keeps its text and loses the link;
  - a plain mention of a file or folder of the repository that it lacks is followed, on its line,
    by LEFT_OUT: right after the mention in prose and comments (after the rest of its word, or after
    the inline code span that holds it), at the end of the line in a fenced code block (a command
    must stay one).

What counts as a mention: a path with a slash (`tools/diag/`, `../steps/09_cluster/NOTES.md`) or a
file name with a known suffix (`NOTES.md`); one that starts with a top-level folder of the
repository is read from the top, any other from the folder of the file that holds it. Only a path
that names a file or folder of the repository counts (`build/step05` and `steps/NN_name/` do not).
In Markdown every line is read; in code only the comments (and Python's docstrings): a path in code
is data, which the handout's build or tests need as it is.

dangling() is the check (tests/course, case handout_links): the references of a tree to what it
lacks, marked ones aside. Plain Python 3.
"""
import posixpath
import re

LEFT_OUT = "(left out of the handout)"
BLOCK_NOTE = "  # " + LEFT_OUT  # in a fenced code block: a shell comment at the end of the line

_LINK_RE = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_PATH_RE = re.compile(r"(?<![\w./@:-])((?:\.\.?/)*(?:[A-Za-z0-9_.-]+/)+(?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?"
                      r"|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:md|cu|cuh|h|hpp|cpp|cc|py|cmake|sh|txt|json|png|svg))"
                      r"(?![\w/-])")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_SPAN_RE = re.compile(r"`[^`\n]+`")  # an inline code span (one line)
C_LIKE = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".cpp.in")
HASH_COMMENTS = (".py", ".sh", ".yml", ".yaml", ".toml", ".cfg")
HASH_NAMES = {".clang-format", ".gitignore", ".gitattributes", ".clang-tidy"}


def folders(paths):
    """Every folder that holds one of `paths` (a file's parents), without a trailing slash."""
    out = set()
    for p in paths:
        parts = p.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return out


class Index:
    """The paths of a tree (files and folders) and its top-level folders."""

    def __init__(self, paths):
        self.files = set(paths)
        self.dirs = folders(self.files)
        self.top = {p.split("/")[0] for p in self.files if "/" in p}

    def has(self, path):
        return path in self.files or path in self.dirs


def resolve(base, ref, top):
    """The repository path `ref` names, written in a file of folder `base` (None: not a path)."""
    ref = ref.split("#")[0]
    if not ref or re.match(r"^[a-z][a-z0-9+.-]*:", ref) or ref.startswith("/"):
        return None
    first = ref.split("/")[0]
    if ref.startswith(("./", "../")) or first not in top:
        path = posixpath.normpath(posixpath.join(base, ref))
    else:
        path = posixpath.normpath(ref)
    return None if path.startswith("..") else path


def _kind(path):
    name = path.rsplit("/", 1)[-1]
    if path.endswith(".md"):
        return "markdown"
    if path.endswith(C_LIKE):
        return "c"
    if name == "CMakeLists.txt" or path.endswith(".cmake"):
        return "cmake"
    if path.endswith(HASH_COMMENTS) or name in HASH_NAMES:
        return "hash"
    return None


def _past(text, i, end, escapes=True, line=False):
    """The index past the first `end` at or after i, or len(text); in quoted text a backslash escapes
    the next character, and a quote of one line (line=True) also ends at the line's end."""
    n = len(text)
    while i < n and not text.startswith(end, i) and not (line and text[i] == "\n"):
        i += 2 if escapes and text[i] == "\\" else 1
    return min(n, i + len(end))


def _c_comments(text):
    """(start, end) of every comment of C/C++/CUDA text: //... and /*...*/, strings skipped."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        raw = re.match(r'R"([^(\s]{0,16})\(', text[i:i + 20]) if c == "R" and not (
            i and (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if text.startswith("//", i) or text.startswith("/*", i):
            j = _past(text, i, "\n" if text[i + 1] == "/" else "*/", escapes=False)
            spans.append((i, j))
            i = j
        elif raw:
            i = _past(text, i + raw.end(), ")" + raw.group(1) + '"', escapes=False)
        elif c in "\"'":
            i = _past(text, i + 1, c, line=True)
        else:
            i += 1
    return spans


def _hash_comments(text, kind):
    """(start, end) of every # comment outside quotes; kind "python" adds every triple-quoted string
    (docstrings), kind "cmake" the #[[...]] bracket comments, skips [=[...]=] bracket arguments and
    reads a quoted argument across lines."""
    spans, i, n = [], 0, len(text)
    bracket = re.compile(r"\[(=*)\[")
    while i < n:
        c = text[i]
        m = bracket.match(text, i + (c == "#")) if kind == "cmake" and c in "#[" else None
        if kind == "python" and text.startswith(('"""', "'''"), i):
            j = _past(text, i + 3, text[i:i + 3])
            spans.append((i, j))
            i = j
        elif m:
            j = _past(text, m.end(), "]" + m.group(1) + "]", escapes=False)
            if c == "#":
                spans.append((i, j))
            i = j
        elif c == "#":
            j = _past(text, i, "\n", escapes=False)
            spans.append((i, j))
            i = j
        elif c == '"' or (c == "'" and kind != "cmake"):
            i = _past(text, i + 1, c, line=kind != "cmake")
        else:
            i += 1
    return spans


def prose(path, text):
    """The parts of `text` that are read as prose: the whole of a Markdown file, the comments of code."""
    kind = _kind(path)
    if kind == "markdown":
        return [(0, len(text))]
    if kind == "c":
        return _c_comments(text)
    if kind in ("cmake", "hash"):
        return _hash_comments(text, "python" if path.endswith(".py") else kind)
    return []


def _fenced(text):
    """(start, end) of the fenced code blocks of Markdown text."""
    spans, pos, start, fence = [], 0, None, None
    for line in text.split("\n"):
        m = _FENCE_RE.match(line)
        if start is None and m:
            start, fence = pos, m.group(1)
        elif start is not None and line.strip().startswith(fence):
            spans.append((start, pos + len(line)))
            start = None
        pos += len(line) + 1
    if start is not None:
        spans.append((start, len(text)))
    return spans


def links(path, text):
    """[(start, end, bang, text, target)] of the Markdown links and pictures of a Markdown file."""
    if _kind(path) != "markdown":
        return []
    return [(m.start(), m.end(), m.group(1), m.group(2), m.group(3)) for m in _LINK_RE.finditer(text)]


def mentions(path, text, index):
    """[(start, end, repository path)] of the plain mentions, in `text`'s prose, of paths of `index`."""
    base = posixpath.dirname(path)
    out = []
    for a, b in prose(path, text):
        for m in _PATH_RE.finditer(text, a, b):
            target = resolve(base, m.group(1), index.top)
            if target and index.has(target.rstrip("/")):
                out.append((m.start(), m.end(), target.rstrip("/")))
    return out


def _line_at(text, pos):
    return text.count("\n", 0, pos) + 1


def dangling(tree, source):
    """[(path, line, reference, kind)]: every link of `tree`'s Markdown to a path it lacks, and every
    unmarked mention of a path of `source` (the repository's paths) that it lacks. `tree`: {path: bytes}."""
    have = Index(tree)
    known = Index(source)
    out = []
    for path, data in sorted(tree.items()):
        if _kind(path) is None:
            continue
        text = data.decode(errors="replace")
        base = posixpath.dirname(path)
        found = links(path, text)
        for start, _, _, _, target in found:
            full = resolve(base, target, known.top | have.top)
            if full is not None and not have.has(full.rstrip("/")):
                out.append((path, _line_at(text, start), target, "link"))
        where = _Where(path, text)
        for start, end, target in mentions(path, text, known):
            in_link = any(link[0] <= start < link[1] for link in found)  # a link's own target: reported above
            if not have.has(target) and not in_link:
                pos, note = where.marker(start, end)
                if not (text[pos - len(note):pos] == note if where.in_block(start) else text.startswith(note, pos)):
                    out.append((path, _line_at(text, start), text[start:end], "mention"))
    return out


def _word_end(text, end):
    """Where a mention ending at `end` is followed by the marker: after the rest of its word (`'s`, a
    code span's closing backtick, `{a,b}.cu`), before the punctuation that closes it."""
    j = end
    while j < len(text) and not text[j].isspace():
        j += 1
    while j > end and text[j - 1] in ".,;:)]}\"'!?*":
        j -= 1
    return j


class _Where:
    """Where the marker of a mention goes in a text: its fenced blocks and inline code spans (Markdown)."""

    def __init__(self, path, text):
        self.text = text
        md = _kind(path) == "markdown"
        self.blocks = _fenced(text) if md else []
        self.spans = [(m.start(), m.end()) for m in _SPAN_RE.finditer(text)] if md else []

    def in_block(self, pos):
        return any(a <= pos < b for a, b in self.blocks)

    def marker(self, start, end):
        """(position, text): the marker of the mention at [start, end); in a fenced block, at the end of
        its line (the marker then precedes the position)."""
        if self.in_block(start):
            eol = self.text.find("\n", end)
            return (len(self.text) if eol < 0 else eol), BLOCK_NOTE
        span = [b for a, b in self.spans if a < start < b]
        return (span[0] if span else _word_end(self.text, end)), " " + LEFT_OUT


def mark(path, text, have, known):
    """`text` with its references to paths the handout lacks rewritten (see the module's docstring).
    have, known: the Index of the handout and of the repository."""
    kind = _kind(path)
    if kind is None:
        return text
    base = posixpath.dirname(path)
    if kind == "markdown":
        def unlink(m):
            full = resolve(base, m.group(3), known.top | have.top)
            return m.group(0) if full is None or have.has(full.rstrip("/")) else m.group(2)
        text = _LINK_RE.sub(unlink, text)
    where = _Where(path, text)
    inserts = {}  # position -> text inserted there
    for start, end, target in mentions(path, text, known):
        if not have.has(target):
            pos, note = where.marker(start, end)
            inserts[pos] = note
    for pos in sorted(inserts, reverse=True):
        text = text[:pos] + inserts[pos] + text[pos:]
    return text
