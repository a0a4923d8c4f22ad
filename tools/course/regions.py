"""Solution regions: finding them, and replacing the assigned ones with a TODO (docs/course.md).

A region is the lesson's code between two marker lines of a C++/CUDA source (docs/design.md,
"Course mode"):

    // BEGIN SOLUTION step05: <one-line hint>
    ...
    // END SOLUTION step05

blank() turns a region into its hint, as comments wrapped to the line limit, and one call

    GEMM_TODO("step05", "<hint>", uses...);

(common/todo.cuh) that fails loudly where it runs. `uses` are the local variables of the
enclosing function that the removed code used: passing them (by reference, unused) keeps
-Wunused-variable and nvcc's "declared but never referenced" quiet about variables only the
region read. They come from a small C++ scanner (tokens, brace scopes, declarations at statement
starts) that knows enough of the step files' C++: it refuses, naming the line, a region that is not
inside a function body or one that declares a variable used after its END (the declaration then
belongs before the region). Plain Python 3.
"""
import re
import textwrap

LINE_LIMIT = 120
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc")
BEGIN_RE = re.compile(r"^(?P<indent>[ \t]*)// BEGIN SOLUTION step(?P<num>\d\d): (?P<hint>.+?)\s*$")
END_RE = re.compile(r"^(?P<indent>[ \t]*)// END SOLUTION step(?P<num>\d\d)\s*$")
# Any line that looks like a marker, well-formed or not (a typo must not slip through as code).
LOOSE_RE = re.compile(r"^\s*//\s*(BEGIN|END)\s+SOLUTION\b")


class RegionError(Exception):
    pass


class Region:
    def __init__(self, path, step, hint, begin, end, indent):
        self.path = path  # repository-relative path
        self.step = step  # 5 for step05
        self.hint = hint
        self.begin = begin  # 0-based index of the BEGIN line
        self.end = end  # 0-based index of the END line
        self.indent = indent

    @property
    def tag(self):
        return "step%02d" % self.step

    def body(self, lines):
        return lines[self.begin + 1:self.end]

    def __repr__(self):
        return "%s:%d-%d (%s)" % (self.path, self.begin + 1, self.end + 1, self.tag)


def is_source(path):
    return path.endswith(SOURCE_SUFFIXES)


def find_regions(path, text):
    """The regions of one source file, in order; RegionError for unpaired, nested or malformed markers."""
    regions = []
    open_ = None
    for i, line in enumerate(text.split("\n")):
        b, e = BEGIN_RE.match(line), END_RE.match(line)
        if b:
            if open_:
                raise RegionError("%s:%d: BEGIN SOLUTION inside the region opened at line %d (regions never nest)" %
                                  (path, i + 1, open_[1] + 1))
            open_ = (b, i)
        elif e:
            if not open_:
                raise RegionError("%s:%d: END SOLUTION without a BEGIN" % (path, i + 1))
            if e.group("num") != open_[0].group("num"):
                raise RegionError("%s:%d: END SOLUTION step%s closes BEGIN SOLUTION step%s of line %d" %
                                  (path, i + 1, e.group("num"), open_[0].group("num"), open_[1] + 1))
            b0, i0 = open_
            regions.append(Region(path, int(b0.group("num")), b0.group("hint"), i0, i, b0.group("indent")))
            open_ = None
        elif LOOSE_RE.match(line):
            raise RegionError("%s:%d: malformed solution marker: %s" % (path, i + 1, line.strip()))
    if open_:
        raise RegionError("%s:%d: BEGIN SOLUTION never closed" % (path, open_[1] + 1))
    return regions


# ---------------------------------------------------------------------------------------------
# A small C++ tokenizer and scope scanner: just enough for the step files.
# ---------------------------------------------------------------------------------------------
_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])+')
  | (?P<number>\.?\d(?:[\w.']|[eEpP][+-])*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<op>::|->\*?|\+\+|--|<<=?|>>=?|<=>?|>=|==|!=|&&|\|\||[-+*/%&|^!=]=|\.\.\.|.)
""", re.S | re.X)

KEYWORDS = set("""
alignas alignof asm auto bool break case catch char char8_t char16_t char32_t class co_await co_return
co_yield concept const consteval constexpr constinit const_cast continue decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept nullptr operator private protected public register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch template this thread_local throw true try
typedef typeid typename union unsigned using virtual void volatile wchar_t while
""".split())
# Words that may open a declaration before its type.
SPECIFIERS = {"const", "constexpr", "static", "volatile", "inline", "thread_local", "register", "mutable",
              "extern", "typename", "unsigned", "signed", "long", "short", "__restrict__"}
BUILTIN_TYPES = {"auto", "bool", "char", "double", "float", "int", "long", "short", "void", "unsigned",
                 "signed"}
DECL_FOLLOW = {"=", ";", ",", "[", "{", "(", ":"}


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return "%s@%d" % (self.text, self.line + 1)


def tokenize(text):
    """Tokens (kind, text, 0-based line) without white space, comments and preprocessor lines."""
    toks = []
    line = 0
    pos = 0
    at_line_start = True
    n = len(text)
    while pos < n:
        if at_line_start:
            m = re.match(r"[ \t]*#", text[pos:pos + 200])
            if m:  # a preprocessor line, with its continuations
                while pos < n:
                    end = text.find("\n", pos)
                    if end < 0:
                        pos = n
                        break
                    cont = text[pos:end].rstrip().endswith("\\")
                    pos = end + 1
                    line += 1
                    if not cont:
                        break
                continue
        m = _TOKEN_RE.match(text, pos)
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "nl":
            line += 1
            at_line_start = True
        elif kind == "bcomment":
            line += tok.count("\n")
        elif kind not in ("ws", "lcomment"):
            at_line_start = False
            toks.append(Tok(kind, tok, line))
        pos = m.end()
    return toks


class Scope:
    __slots__ = ("kind", "decls")

    def __init__(self, kind):
        self.kind = kind  # "ns", "class", "enum", "block" (a function body or a block in one), "init"
        self.decls = {}  # name -> 0-based line of its declaration


def _brace_kind(toks, i, stmt_start):
    """What the `{` at toks[i] opens, from the tokens of its statement before it."""
    head = [t.text for t in toks[stmt_start:i]]
    prev = toks[i - 1].text if i > 0 else ";"
    if "namespace" in head:
        return "ns"
    h = head
    if h[:1] == ["template"]:  # skip template <...>
        depth, j = 0, 1
        while j < len(h):
            depth += h[j] == "<"
            depth -= h[j] == ">"
            j += 1
            if depth == 0:
                break
        h = h[j:]
    if h[:1] == ["enum"]:
        return "enum"
    if h[:1] in (["struct"], ["class"], ["union"]) and prev != ")":
        return "class"
    if prev in (")", "else", "do", "try", "const", "noexcept", "override", "mutable", "]", ";", "{", "}", ":"):
        return "block"
    if prev == ">" and "[" in head:  # a lambda with a trailing return type
        return "block"
    return "init"


def _skip_template_args(toks, j):
    """Index past the balanced <...> starting at toks[j] (a `<`), or j if it does not balance."""
    depth, k = 0, j
    while k < len(toks):
        t = toks[k].text
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == ">>":
            depth -= 2
        elif t in (";", "{", "}"):
            return j
        k += 1
        if depth <= 0:
            return k
    return j


def _declaration(toks, i, in_for=False, at_namespace=False):
    """The (name, line) pairs a declaration starting at toks[i] declares ([] if it is not one).
    At namespace scope only constants count (`constexpr int kX = 1;`), not functions."""
    n = len(toks)
    j = i
    have_type = False
    while j < n and toks[j].text in SPECIFIERS:
        have_type |= toks[j].text in ("unsigned", "signed", "long", "short")
        j += 1
    if j >= n or toks[j].kind != "ident":
        return []
    if toks[j].text in BUILTIN_TYPES:
        while j < n and toks[j].text in BUILTIN_TYPES | SPECIFIERS:
            j += 1
        have_type = True
    elif toks[j].text in KEYWORDS:
        return []
    if not have_type:  # a named type: a qualified name, with template arguments
        j += 1
        while True:
            if j < n and toks[j].text == "<":
                k = _skip_template_args(toks, j)
                if k == j:
                    return []
                j = k
            if j + 1 < n and toks[j].text == "::" and toks[j + 1].kind == "ident":
                j += 2
                continue
            break
    while j < n and toks[j].text in ("*", "&", "&&", "const", "volatile", "__restrict__"):
        j += 1
    if j >= n:
        return []
    if toks[j].text == "[" and toks[j - 1].text in ("auto", "&", "&&"):  # a structured binding
        names = []
        k = j + 1
        while k < n and toks[k].text != "]":
            if toks[k].kind == "ident":
                names.append((toks[k].text, toks[k].line))
            k += 1
        return names
    follow = DECL_FOLLOW if in_for else DECL_FOLLOW - {":"}  # not a label or a bit-field
    if at_namespace:
        if not any(toks[k].text in ("const", "constexpr") for k in range(i, j)):
            return []
        follow = {"=", ";", ",", "[", "{"}  # `(`: a function
    if toks[j].kind != "ident" or toks[j].text in KEYWORDS or j + 1 >= n or toks[j + 1].text not in follow:
        return []
    names = [(toks[j].text, toks[j].line)]
    # Further declarators: top-level commas up to the statement's end.
    depth = 0
    k = j + 1
    while k < n:
        t = toks[k].text
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                break
        elif t == ";" and depth == 0:
            break
        elif t == "," and depth == 0:
            m = k + 1
            while m < n and toks[m].text in ("*", "&", "&&"):
                m += 1
            if m + 1 < n and toks[m].kind == "ident" and toks[m + 1].text in DECL_FOLLOW - {":"}:
                names.append((toks[m].text, toks[m].line))
        k += 1
    return names


class Analysis:
    """The scopes of a source file: for each token, the stack of scopes it is in, and the block-scope
    locals each scope declares (name -> 0-based line)."""

    def __init__(self, text):
        self.toks = tokenize(text)
        self.scopes_at = []  # per token: the scope stack (outermost first)
        self.decl_scope = {}  # (name, line) -> the scope that declares it
        self._scan()

    def _declare(self, scope, names):
        for name, line in names:
            scope.decls[name] = line
            self.decl_scope[(name, line)] = scope

    def _scan(self):
        toks = self.toks
        stack = [Scope("ns")]
        parens = [0]  # open parentheses, per brace level
        stmt_start = 0
        expect_stmt = True
        pending = []  # a for-header's declarations, for the body's scope
        for i, t in enumerate(toks):
            self.scopes_at.append(tuple(stack))
            if expect_stmt and parens[-1] == 0 and stack[-1].kind == "block":
                self._declare(stack[-1], _declaration(toks, i))
            elif expect_stmt and parens[-1] == 0 and stack[-1].kind == "ns":
                self._declare(stack[-1], _declaration(toks, i, at_namespace=True))
            expect_stmt = False
            x = t.text
            if x == "(":
                if i > 0 and toks[i - 1].text == "for":
                    pending = _declaration(toks, i + 1, in_for=True)
                parens[-1] += 1
            elif x == ")":
                parens[-1] -= 1
                expect_stmt = parens[-1] == 0 and stack[-1].kind == "block"
            elif x == "{":
                kind = _brace_kind(toks, i, stmt_start)
                if parens[-1] > 0 and kind != "block":
                    kind = "init"
                if stack[-1].kind == "init" and kind != "block":
                    kind = "init"
                stack.append(Scope(kind))
                parens.append(0)
                if kind == "block" and pending:
                    self._declare(stack[-1], pending)
                pending = []
                stmt_start = i + 1
                expect_stmt = kind in ("block", "ns", "class")
            elif x == "}":
                if len(stack) > 1:
                    stack.pop()
                    parens.pop()
                stmt_start = i + 1
                expect_stmt = stack[-1].kind in ("block", "ns", "class") and parens[-1] == 0
            elif x == ";" and parens[-1] == 0:
                stmt_start = i + 1
                expect_stmt = True
                pending = []
            elif x in ("else", "do"):
                expect_stmt = True
            elif x == ":" and i > 0 and toks[i - 1].text in ("public", "private", "protected", "default"):
                expect_stmt = True

    def first_token_at_or_after(self, line):
        for i, t in enumerate(self.toks):
            if t.line >= line:
                return i
        return len(self.toks)

    def stack_at(self, line):
        i = self.first_token_at_or_after(line)
        if i >= len(self.toks):
            return (Scope("ns"),)
        return self.scopes_at[i]

    def visible_locals(self, line):
        """Block-scope locals declared before `line` and in scope there: name -> declaration line."""
        out = {}
        for s in self.stack_at(line):
            if s.kind == "block":
                out.update({name: d for name, d in s.decls.items() if d < line})
        return out


def used_names(toks):
    """Identifiers used as names (not members, not qualified), in order of first use."""
    seen = []
    for i, t in enumerate(toks):
        if t.kind != "ident" or t.text in KEYWORDS:
            continue
        if i > 0 and toks[i - 1].text in (".", "->", "::"):
            continue
        if t.text not in seen:
            seen.append(t.text)
    return seen


def analyse_region(analysis, region):
    """(uses, problems): the visible locals the region uses, and why the region cannot be blanked."""
    problems = []
    toks = analysis.toks
    idx = [i for i, t in enumerate(toks) if region.begin < t.line < region.end]
    if analysis.stack_at(region.begin)[-1].kind != "block":
        problems.append("%s:%d: region %s is not inside a function body (a GEMM_TODO call cannot stand there)" %
                        (region.path, region.begin + 1, region.tag))
        return [], problems
    visible = analysis.visible_locals(region.begin)
    uses = [name for name in used_names([toks[i] for i in idx]) if name in visible]
    # Declarations the region makes that outlive it and are used after its END.
    if idx:
        outer = analysis.scopes_at[idx[0]][-1]
        declared = {name for (name, line), scope in analysis.decl_scope.items()
                    if scope is outer and region.begin < line < region.end}
        for i in range(idx[-1] + 1, len(toks)):
            if outer not in analysis.scopes_at[i]:
                break
            t = toks[i]
            if t.kind == "ident" and t.text in declared and not (i > 0 and toks[i - 1].text in (".", "->", "::")):
                problems.append("%s:%d: region %s declares `%s`, which line %d uses after the region: declare it "
                                "before the BEGIN line and assign it inside" %
                                (region.path, region.begin + 1, region.tag, t.text, t.line + 1))
                declared.discard(t.text)
    return uses, problems


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wrap(text, width):
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False) or [""]


def _chunks(items, width):
    """items (strings) packed into lines of at most `width` characters, in order, nothing dropped."""
    lines, cur = [], ""
    for item in items:
        if cur and len(cur) + len(item) > width:
            lines.append(cur)
            cur = ""
        cur += item
    return lines + [cur]


def todo_lines(region, uses):
    """The lines that replace a region: the hint as comments, then the GEMM_TODO call."""
    ind = region.indent
    first = "%s// TODO %s: " % (ind, region.tag)
    words = _wrap(region.hint, LINE_LIMIT - len(first))
    out = [first + words[0]]
    rest = " ".join(words[1:])
    if rest:
        out += ["%s//   %s" % (ind, w) for w in _wrap(rest, LINE_LIMIT - len(ind) - 5)]
    args = "".join(", " + u for u in uses)
    call = 'GEMM_TODO("%s", %s%s);' % (region.tag, c_string(region.hint), args)
    if len(ind) + len(call) <= LINE_LIMIT:
        return out + [ind + call]
    # The hint as adjacent string literals, a line each, then the variables.
    cont = ind + "    "
    out.append('%sGEMM_TODO("%s",' % (ind, region.tag))
    words = [w + " " for w in region.hint.split(" ")]
    words[-1] = words[-1][:-1]
    pieces = _chunks(words, LINE_LIMIT - len(cont) - 4)
    out += [cont + c_string(p) for p in pieces]
    if not uses:
        out[-1] += ");"
        return out
    out[-1] += ","
    items = [u + ", " for u in uses]
    items[-1] = uses[-1] + ");"
    out += [cont + line.rstrip() for line in _chunks(items, LINE_LIMIT - len(cont))]
    return out


TODO_INCLUDE = '#include "common/todo.cuh"  // GEMM_TODO: the handout\'s TODOs (docs/course.md)'


def blank(path, text, assigned):
    """`text` with every region of an assigned step replaced by its TODO (and common/todo.cuh included).

    Returns (new_text, blanked_regions). RegionError names every region that cannot be blanked."""
    regions = find_regions(path, text)
    chosen = [r for r in regions if r.step in assigned]
    if not chosen:
        return text, []
    lines = text.split("\n")
    analysis = Analysis(text)
    problems = []
    uses_of = {}
    for r in chosen:
        uses_of[r.begin], why = analyse_region(analysis, r)
        problems += why
    # Constants of namespace scope that only assigned regions use: nvcc warns about an unreferenced
    # one (#177-D). The first region that used one names it, as a value (+kName: device code may read a
    # host constexpr but not bind a reference to it).
    inside = lambda line: any(r.begin < line < r.end for r in chosen)
    for (name, dline), scope in analysis.decl_scope.items():
        if scope.kind != "ns":
            continue
        refs = [t for t in analysis.toks if t.kind == "ident" and t.text == name and t.line != dline]
        if refs and all(inside(t.line) for t in refs):
            first = min((r for r in chosen if any(r.begin < t.line < r.end for t in refs)), key=lambda r: r.begin)
            uses_of[first.begin].append("+" + name)
    replacement = {r.begin: (r, todo_lines(r, uses_of[r.begin])) for r in chosen}
    if problems:
        raise RegionError("\n".join(problems))
    out = []
    i = 0
    while i < len(lines):
        if i in replacement:
            r, new = replacement[i]
            out += new
            i = r.end + 1
            continue
        out.append(lines[i])
        i += 1
    # The include, after the file's last #include line.
    last = max((k for k, l in enumerate(out) if l.startswith("#include ")), default=None)
    if last is None:
        raise RegionError("%s: no #include line to put common/todo.cuh after" % path)
    out.insert(last + 1, TODO_INCLUDE)
    return "\n".join(out), chosen
