#!/usr/bin/env python3
"""The static site of tools/site, checked without a browser (ctest -L site; tests/site/CMakeLists.txt).

  check_site.py build   --site DIR           tools/site --out DIR runs, within LIMIT seconds, and
                                             writes the index and one page per step folder
  check_site.py links   --site DIR           every internal link and image of every page resolves
                                             (the file, and the #anchor in it); no page, style sheet
                                             or picture fetches a script, style sheet or font from
                                             the network
  check_site.py diffs   --site DIR           each step page shows every track's diff against the
                                             step before with exactly the changed-line counts of
                                             `diff` (both views), marks the lines of the step's own
                                             solution regions, links its neighbours; items of
                                             "What this step adds" that link to no hunk are listed
                                             as warnings
  check_site.py fixture --work DIR           a small made-up tree, to hold the rules that items,
                                             hunks and regions follow to known answers

Steps are found as tools/site finds them (steps/NN_name/ with a README.md), the counts are diff's
own (`diff OLD NEW`, or `diff /dev/null NEW` for a first step). The pages are read with the
standard library's HTML parser. Plain Python 3 (tools/site itself needs Debian's packages).
"""
import argparse
import html.parser
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 30  # seconds for the whole site (issue 48: under 30 s on 2 cores)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
NETWORK = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//")  # http://, https://, //host (file: is not used)
BEGIN_RE = re.compile(r"^\s*// BEGIN SOLUTION step(\d\d):")
END_RE = re.compile(r"^\s*// END SOLUTION step(\d\d)\s*$")


class Failed(Exception):
    pass


class Node:
    __slots__ = ("tag", "attrs", "parent", "children", "content")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []
        self.content = []  # text and child nodes, in document order

    @property
    def classes(self):
        return set((self.attrs.get("class") or "").split())

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag=None, cls=()):
        return [n for n in self.iter() if (tag is None or n.tag == tag) and set(cls) <= n.classes]

    def ancestor(self, tag=None, cls=()):
        n = self.parent
        while n is not None:
            if (tag is None or n.tag == tag) and set(cls) <= n.classes:
                return n
            n = n.parent
        return None

    def all_text(self):
        return "".join(c if isinstance(c, str) else c.all_text() for c in self.content)


class Tree(html.parser.HTMLParser):
    """A page as a tree of Nodes (enough HTML for the pages tools/site writes)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        self.cur.content.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        self.cur.content.append(node)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.content.append(data)


def parse(path):
    return Tree(path.read_text(encoding="utf-8")).root


def find_steps(root):
    return [d for d in sorted((root / "steps").glob("[0-9][0-9]_*/"))
            if d.is_dir() and re.match(r"^\d\d_[A-Za-z0-9_]+$", d.name) and (d / "README.md").is_file()]


def run_site(root, out, extra=()):
    t0 = time.time()
    p = subprocess.run([str(ROOT / "tools" / "site"), "--out", str(out), "--root", str(root)] + list(extra),
                       capture_output=True, text=True)
    took = time.time() - t0
    if p.returncode != 0:
        raise Failed("tools/site exited %d:\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return took, p.stdout + p.stderr


# --- build ----------------------------------------------------------------------------------

def check_build(site, root):
    took, out = run_site(root, site)
    print(out.strip())
    print("tools/site took %.1f s (limit %d s)" % (took, LIMIT))
    if took > LIMIT:
        raise Failed("the site took %.1f s, more than %d s" % (took, LIMIT))
    missing = [p for p in ["index.html"] + ["steps/%s/index.html" % d.name for d in find_steps(root)]
               if not (site / p).is_file()]
    if missing:
        raise Failed("pages missing: %s" % ", ".join(missing))
    print("%d step pages and the index" % len(find_steps(root)))


# --- links ----------------------------------------------------------------------------------

def css_network(text):
    """url(...) and @import of a style sheet that point to the network."""
    bad = []
    for m in re.finditer(r"""url\(\s*['"]?([^'")\s]+)|@import\s+(?:url\()?\s*['"]?([^'")\s;]+)""", text):
        target = m.group(1) or m.group(2)
        if NETWORK.match(target):
            bad.append(target)
    return bad


def check_links(site):
    pages = sorted(site.rglob("*.html"))
    if not pages:
        raise Failed("%s has no pages" % site)
    trees = {p: parse(p) for p in pages}
    ids = {p: {n.attrs["id"] for n in t.iter() if n.attrs.get("id")} for p, t in trees.items()}
    problems, links = [], 0
    for page, tree in trees.items():
        rel = page.relative_to(site).as_posix()
        for n in tree.iter():
            for attr in ("href", "src"):
                url = n.attrs.get(attr)
                if url is None:
                    continue
                # A script, a style sheet, a font or a picture from the network is a failure; a
                # plain link to another site (the PTX ISA) is a link, not a fetch.
                fetched = n.tag in ("script", "img", "link", "source", "iframe", "embed", "object")
                if NETWORK.match(url) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
                    if fetched:
                        problems.append("%s: <%s %s=%s> is fetched from the network" % (rel, n.tag, attr, url))
                    continue
                links += 1
                path, _, frag = url.partition("#")
                target = page if not path else (page.parent / urllib.parse.unquote(path)).resolve()
                if site.resolve() not in target.parents and target != site.resolve():
                    problems.append("%s: %s leaves the site" % (rel, url))
                    continue
                if not target.is_file():
                    problems.append("%s: %s: no such file in the site" % (rel, url))
                    continue
                if frag and target.suffix == ".html":
                    tid = ids.get(target) if target in ids else None
                    if tid is None or urllib.parse.unquote(frag) not in tid:
                        problems.append("%s: %s: no #%s in %s" % (rel, url, frag, target.relative_to(site)))
            style = n.attrs.get("style")
            if style and css_network(style):
                problems.append("%s: a style attribute fetches %s" % (rel, css_network(style)))
            if n.tag == "style" and css_network(n.all_text()):
                problems.append("%s: a <style> fetches %s" % (rel, css_network(n.all_text())))
    for sheet in list(site.rglob("*.css")) + list(site.rglob("*.svg")):
        text = sheet.read_text(encoding="utf-8", errors="replace")
        bad = css_network(text)
        if sheet.suffix == ".svg":  # a picture may carry its own style sheet, script or font
            bad += [u for u in re.findall(r"""(?:xlink:)?href\s*=\s*["']([^"']+)""", text) if NETWORK.match(u)]
            if re.search(r"<script\b", text):
                bad.append("<script>")
        if bad:
            problems.append("%s fetches from the network: %s" % (sheet.relative_to(site), ", ".join(bad)))
    for p in problems:
        print("FAIL %s" % p)
    print("%d pages, %d internal links and pictures, %d problem(s)" % (len(pages), links, len(problems)))
    if problems:
        raise Failed("%d link problem(s)" % len(problems))


# --- diffs ----------------------------------------------------------------------------------

def diff_counts(old, new):
    """(removed, added) lines as `diff` itself counts them."""
    p = subprocess.run(["diff", str(old) if old else "/dev/null", str(new)], capture_output=True, text=True,
                       errors="replace")
    if p.returncode not in (0, 1):
        raise Failed("diff %s %s: %s" % (old, new, p.stderr.strip()))
    lines = p.stdout.split("\n")
    return sum(1 for l in lines if l.startswith("< ")) + sum(1 for l in lines if l == "<"), \
        sum(1 for l in lines if l.startswith("> ")) + sum(1 for l in lines if l == ">")


def region_lines(path, step):
    """Lines (from 1) of the step's own solution regions in a file, markers included."""
    out, start = set(), None
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        b, e = BEGIN_RE.match(line), END_RE.match(line)
        if b and int(b.group(1)) == step:
            start = i
        elif e and start is not None and int(e.group(1)) == step:
            out |= set(range(start, i + 1))
            start = None
    return out


def shown_counts(section):
    """What a track's section shows: (split removed, split added, unified removed, unified added,
    new-file line numbers marked as in a region)."""
    sd = sa = ud = ua = 0
    marked = set()
    for table in section.find_all("table", ["diff"]):
        if "split" in table.classes:
            for td in table.find_all("td", ["code"]):
                sd += "del" in td.classes
                sa += "add" in td.classes
        elif "unified" in table.classes:
            for tr in table.find_all("tr"):
                ud += "del" in tr.classes
                ua += "add" in tr.classes
                if tr.classes & {"add", "ctx"}:
                    cells = tr.find_all("td")
                    if cells and "reg" in cells[-1].classes:  # the code; the new line's number before it
                        marked.add(int(cells[-2].all_text()))
    return sd, sa, ud, ua, marked


def check_diffs(site, root, quiet_warnings=False):
    steps = find_steps(root)
    problems, warnings, checked = [], [], 0
    for idx, d in enumerate(steps):
        page = site / "steps" / d.name / "index.html"
        if not page.is_file():
            problems.append("no page for %s" % d.name)
            continue
        tree = parse(page)
        number = int(d.name[:2])
        for track_file in sorted(d.glob("*.cu")):
            track = track_file.stem
            prev = next((s / track_file.name for s in reversed(steps[:idx]) if (s / track_file.name).is_file()), None)
            want_del, want_add = diff_counts(prev, track_file)
            sections = [n for n in tree.iter() if n.attrs.get("id") == "track-" + track]
            if not sections:
                problems.append("%s: no diff of %s" % (d.name, track_file.name))
                continue
            sd, sa, ud, ua, marked = shown_counts(sections[0])
            got = "side by side -%d +%d, unified -%d +%d" % (sd, sa, ud, ua)
            if (sd, sa, ud, ua) != (want_del, want_add, want_del, want_add):
                problems.append("%s %s: diff counts -%d +%d; the page shows %s" % (
                    d.name, track, want_del, want_add, got))
            regions = region_lines(track_file, number)
            if marked != regions:
                problems.append("%s %s: %d lines in step %d's own solution regions, %d marked (first differing: %s)" % (
                    d.name, track, len(regions), number, len(marked), sorted(marked ^ regions)[:3]))
            checked += 1
            print("ok   %s %s: -%d +%d, as diff %s %s; %d region lines marked" % (
                d.name, track, want_del, want_add, prev.relative_to(root) if prev else "/dev/null",
                track_file.relative_to(root), len(marked)))
        # The neighbours: prev and next link to the pages of the steps either side.
        for rel, other in (("prev", steps[idx - 1] if idx else None), ("next", steps[idx + 1] if idx + 1 < len(steps) else None)):
            hrefs = {posixpath.normpath(posixpath.join("steps/%s" % d.name, n.attrs["href"]))
                     for n in tree.find_all("a") if n.attrs.get("rel") == rel}
            want = {"steps/%s/index.html" % other.name} if other else set()
            if hrefs != want:
                problems.append("%s: %s links %s, not %s" % (d.name, rel, sorted(hrefs) or "nowhere", sorted(want) or "nowhere"))
        for li in tree.find_all("li", ["unlinked"]):
            warnings.append("%s %s item %s links to no hunk: %s" % (
                d.name, li.attrs.get("id", "?").replace("item-", "").rsplit("-", 1)[0], li.attrs.get("value", "?"),
                re.sub(r"\s+", " ", li.all_text()).strip()[:90]))
    if not quiet_warnings:
        for w in warnings:
            print("warning: %s" % w)
    for p in problems:
        print("FAIL %s" % p)
    print("%d step pages, %d track diffs checked, %d problem(s), %d item(s) linking to no hunk (warnings: an item links "
          "to the hunks whose changed lines name one of its `backticked` identifiers)" % (
              len(steps), checked, len(problems), len(warnings)))
    if problems:
        raise Failed("%d problem(s)" % len(problems))
    return warnings


# --- fixture --------------------------------------------------------------------------------

# The opening comment as the step files have it: a title, lines every step file shares, then the
# numbered "What this step adds" (items continued on lines indented past their number).
HEADER = """// GEMM, step by step -- hopper track, step {n} of 3: {name}.
//
// The same few lines in every step file.
//
// What this step adds:
{items}
#include <cstdint>
"""

FIXTURE = {
    "README.md": "# A tiny ladder\n\nRead [step 1](steps/01_first/) or [the notes](docs/notes.md#a-section).\n\n"
                 "## The steps\n\n| # | step |\n|---|---|\n| 1 | [first](steps/01_first/) |\n",
    "docs/notes.md": "# Notes\n\n## A section\n\nBack to [the top](../README.md), on to [step 2](../steps/02_second/README.md).\n",
    "steps/01_first/README.md": "# Step 1: first\n\nThe start. ![a picture](pic.png)\n",
    "steps/01_first/pic.png": b"\x89PNG\r\n\x1a\n",
    "steps/01_first/hopper.cu": HEADER.format(n=1, name="first", p=0, items="//   1. A `kTile` constant.\n//   2. The `run` function.") +
        "\nconstexpr int kTile = 128;\n\n// Runs it.\nint run() {\n  // BEGIN SOLUTION step01: return the tile.\n  return kTile;\n"
        "  // END SOLUTION step01\n}\n",
    "steps/02_second/README.md": "# Step 2: second\n\nMore. Back to [step 1](../01_first/README.md#step-1-first).\n\n"
                                 "## What this step adds\n\n1. Stages, `kStages`, in both tracks.\n2. Nothing named: `nowhere_at_all`.\n",
    "steps/02_second/hopper.cu": HEADER.format(n=2, name="second", p=1, items=(
        "//   1. Two stages: `kStages` buffers,\n//      each `kTile` wide.\n//   2. A name only the header has: `header_only_name`.\n"
        "//   3. A name in no line: `ghost_name`.")) +
        "\nconstexpr int kTile = 128;\nconstexpr int kStages = 2;\n\n// Runs it.\nint run() {\n  // BEGIN SOLUTION step01: return the tile.\n"
        "  return kTile;\n  // END SOLUTION step01\n}\n\n// An unchanged run of lines follows.\n" + "".join("// line %d\n" % i for i in range(20)) +
        "int stages() {\n  // BEGIN SOLUTION step02: the stage count.\n  return kStages;\n  // END SOLUTION step02\n}\n",
    "steps/02_second/blackwell.cu": "// blackwell, first seen in step 2\n\nint kStages = 4;\n",
    "steps/03_third/README.md": "# Step 3: third\n\nThe same file again.\n",
}


def check_fixture(work):
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "tree"
    for path, content in FIXTURE.items():
        p = tree / path
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    # Step 3's file is step 2's with nothing changed: a diff of no hunk.
    (tree / "steps/03_third/hopper.cu").write_text(FIXTURE["steps/02_second/hopper.cu"])
    site = work / "site"
    _, out = run_site(tree, site, ["--verbose"])
    check_links(site)
    check_diffs(site, tree, quiet_warnings=True)
    page = parse(site / "steps/02_second/index.html")

    def item(id_):
        found = [n for n in page.iter() if n.attrs.get("id") == id_]
        if not found:
            raise Failed("step 2 has no item #%s" % id_)
        return found[0], [a.attrs["href"] for a in found[0].find_all("a") if a.attrs.get("href", "").startswith("#hunk-")]

    def hunk_text(href):
        h = [n for n in page.iter() if n.attrs.get("id") == href[1:]]
        if not h:
            raise Failed("step 2: %s links to no hunk" % href)
        return " ".join(td.all_text() for td in h[0].find_all("td", ["code"]) if td.classes & {"add", "del"})

    li, hrefs = item("item-hopper-1")
    if "Two stages: kStages buffers, each kTile wide." not in re.sub(r"\s+", " ", li.all_text()):
        raise Failed("step 2 hopper item 1 should be its two lines joined: %r" % li.all_text())
    if page.find_all("p", ["intro"]):
        raise Failed("step 2: \"What this step adds:\" has no intro, the page shows one")
    if "linked" not in li.classes or not hrefs or not all(re.search(r"\bkStages\b", hunk_text(h)) for h in hrefs):
        raise Failed("step 2 hopper item 1 (`kStages`) should link to the hunks that add kStages: %s" % hrefs)
    for n in (2, 3):  # a name only the opening comment has, and a name nowhere: no link
        li, hrefs = item("item-hopper-%d" % n)
        if "unlinked" not in li.classes or hrefs:
            raise Failed("step 2 hopper item %d should link nowhere, links %s" % (n, hrefs))
    li, hrefs = item("item-readme-1")  # the README's own list: either track's hunks
    if not any(h.startswith("#hunk-hopper-") for h in hrefs) or not any(h.startswith("#hunk-blackwell-") for h in hrefs):
        raise Failed("step 2's README item 1 (`kStages`) should link to hunks of both tracks: %s" % hrefs)
    li, hrefs = item("item-readme-2")
    if "unlinked" not in li.classes:
        raise Failed("step 2's README item 2 should link nowhere")
    # Every hunk an item links to names the item back.
    for h in ("#" + n.attrs["id"] for n in page.iter() if (n.attrs.get("id") or "").startswith("hunk-hopper-")):
        node = [n for n in page.iter() if n.attrs.get("id") == h[1:]][0]
        chips = {a.attrs["href"] for a in node.find_all("a", ["chip"])}
        linked_from = {"#item-hopper-1"} if h in item("item-hopper-1")[1] else set()
        if not linked_from <= chips:
            raise Failed("step 2 %s does not name item 1, which links to it" % h)
    folds = page.find_all("details", ["fold"])
    if not folds:
        raise Failed("step 2: the 20 unchanged lines should be folded")
    if "unchanged" not in " ".join(f.all_text() for f in folds):
        raise Failed("step 2: a fold should say it holds unchanged lines")
    step3 = (site / "steps/03_third/index.html").read_text()
    if "Unchanged from step 2" not in step3:
        raise Failed("step 3 (no change) should say its file is unchanged")
    for want in ("item links nowhere: step 2, hopper.cu item 2", "item links nowhere: step 2, hopper.cu item 3"):
        if want not in out:
            raise Failed("tools/site --verbose should list: %s" % want)
    print("the fixture: items, hunks, regions, folds and the README's list as the rules say")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("build", "links", "diffs", "fixture"))
    ap.add_argument("--site", help="the site's folder")
    ap.add_argument("--root", default=str(ROOT), help="the tree the site is made from")
    ap.add_argument("--work", help="fixture: a scratch folder (replaced)")
    args = ap.parse_args(argv)
    try:
        if args.what == "fixture":
            check_fixture(pathlib.Path(args.work).resolve())
        else:
            site, root = pathlib.Path(args.site).resolve(), pathlib.Path(args.root).resolve()
            if args.what == "build":
                check_build(site, root)
            elif not (site / "index.html").is_file():
                raise Failed("%s has no site: run tools/site --out %s (ctest: site.build) first" % (site, site))
            elif args.what == "links":
                check_links(site)
            else:
                check_diffs(site, root)
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
