#!/usr/bin/env python3
"""Every page of the site in headless Chromium (ctest -L browser; tests/site/CMakeLists.txt).

  browser_test.py --site DIR [--shots DIR] [--chromium PATH] [--width 1440 --height 900]

Opens each .html page of the site that tools/site wrote (file:// URLs) and fails, naming the page,
on a console error, an uncaught exception, a resource that failed to load or an image that did not
decode. It saves a screenshot of each page's top (DIR/<page>.png, the page's path with '/' as '+'),
and for a step page two of its diff: at its start, side by side (<page>+diff.png), and at its
first track, unified (<page>+unified.png). On the step pages it also checks the
parts the script and the style sheet carry: the side-by-side view shows and the unified one does
not, the switch turns that around, "Unfold all" opens every fold; and, with scripts disabled, the
diff still shows and its folds still open.

Chromium is driven over its DevTools protocol on a pipe (--remote-debugging-pipe: NUL-separated
JSON on file descriptors 3 and 4), with the Python standard library only. Without Chromium it
prints SKIPPED with the reason and exits 77 (ctest's SKIP_RETURN_CODE). Plain Python 3.
"""
import argparse
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
TIMEOUT = 30  # seconds for one page to load; a file:// page takes well under one


class Failed(Exception):
    pass


class Browser:
    """Chromium with a DevTools connection on a pipe: call() sends a command and returns its result;
    the events that arrive meanwhile are kept in self.events."""

    def __init__(self, exe, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--disable-extensions", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe",
                "--user-data-dir=" + profile, "about:blank"]
        # The protocol is on the child's fds 3 (commands in) and 4 (replies out): a shell puts the
        # pipe ends there and then becomes Chromium.
        self.proc = subprocess.Popen(["sh", "-c", 'exec "$@" 3<&%d 4>&%d' % (to_chrome_r, from_chrome_w), "sh"] + argv,
                                     pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, timeout):
        """The next message, or None after timeout seconds."""
        end = time.time() + timeout
        while b"\0" not in self.buf:
            left = end - time.time()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise Failed("Chromium closed the DevTools pipe: %s" % self.stderr_tail())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=TIMEOUT):
        want = self.send(method, params, session)
        end = time.time() + timeout
        while time.time() < end:
            msg = self.read(end - time.time())
            if msg is None:
                break
            if msg.get("id") == want:
                if "error" in msg:
                    raise Failed("%s: %s" % (method, msg["error"].get("message")))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)
        raise Failed("%s: no answer from Chromium in %d s" % (method, timeout))

    def wait_event(self, method, timeout=TIMEOUT):
        end = time.time() + timeout
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                return self.events.pop(i)
        while time.time() < end:
            msg = self.read(end - time.time())
            if msg is None:
                break
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)
        raise Failed("no %s in %d s" % (method, timeout))

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise Failed("evaluating %s: %s" % (expr[:60], r["exceptionDetails"].get("text")))
        return r.get("result", {}).get("value")

    def stderr_tail(self):
        try:
            self.proc.kill()
            return self.proc.stderr.read().decode(errors="replace")[-800:]
        except Exception:  # noqa: BLE001 (a report on the way out: whatever there is)
            return ""

    def close(self):
        try:
            self.send("Browser.close", session=False)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()


def errors_in(events):
    """What the events of one page load report as wrong."""
    out = []
    for ev in events:
        m, p = ev["method"], ev.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description", "")))
                                                             for a in p.get("args", []))))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("uncaught: %s %s" % (d.get("text", ""), d.get("exception", {}).get("description", "")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            out.append("console: %s %s" % (e.get("text", ""), e.get("url", "")))
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            out.append("failed to load (%s): %s" % (p.get("errorText"), p.get("requestId")))
    return out


def shot(browser, path):
    data = browser.call("Page.captureScreenshot", {"format": "png"})["data"]
    path.write_bytes(base64.b64decode(data))


def load(browser, url, settle=True):
    browser.events = []
    browser.call("Page.navigate", {"url": url})
    browser.wait_event("Page.loadEventFired")
    if settle:  # let the page settle (a frame drawn after the load) before it is measured
        browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


BROKEN_IMAGES = "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))"
# The step page's parts, measured: which view shows, how many rows each view shows, the folds.
STATE = """(() => {
  const shown = el => !!el && el.getClientRects().length > 0;
  const splits = [...document.querySelectorAll('table.diff.split')];
  const unis = [...document.querySelectorAll('table.diff.unified')];
  const folds = [...document.querySelectorAll('details.fold')];
  return {split: splits.filter(shown).length, unified: unis.filter(shown).length, tables: splits.length,
          folds: folds.length, open: folds.filter(d => d.open).length,
          rows: [...document.querySelectorAll('table.diff.split tr')].filter(shown).length,
          button: !!document.querySelector('button.unfold:not([hidden])')};
})()"""


def check_step_page(browser, name, url, shots):
    s = browser.evaluate(STATE)
    if s["tables"] == 0:
        raise Failed("%s: no diff tables" % name)
    if s["split"] == 0 or s["unified"] != 0:
        raise Failed("%s: side by side should show first (%d split, %d unified tables shown)" % (name, s["split"], s["unified"]))
    if s["folds"] and not s["button"]:
        raise Failed("%s: the script did not show the Unfold all button" % name)
    browser.evaluate("document.getElementById('diff').scrollIntoView()")
    shot(browser, shots / (name + "+diff.png"))
    browser.evaluate("document.querySelector('label[for=\"view-unified\"]').click()")
    s = browser.evaluate(STATE)
    if s["unified"] == 0 or s["split"] != 0:
        raise Failed("%s: the Unified switch did not switch (%d split, %d unified shown)" % (name, s["split"], s["unified"]))
    # At the first track: its title, its list of items beside its first hunk, the opening comment
    # (which a course handout keeps: docs/lesson-page.png is this picture of step 5, and shows no
    # solution region's code).
    browser.evaluate("document.querySelector('section.track').scrollIntoView()")
    shot(browser, shots / (name + "+unified.png"))
    if s["folds"]:
        browser.evaluate("document.querySelector('button.unfold').click()")
        s = browser.evaluate(STATE)
        if s["open"] != s["folds"]:
            raise Failed("%s: Unfold all opened %d of %d folds" % (name, s["open"], s["folds"]))
    # Back to side by side: the choice is kept (localStorage) for the next pages.
    browser.evaluate("document.querySelector('label[for=\"view-split\"]').click()")


def check_without_script(browser, name, url):
    browser.call("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        load(browser, url, settle=False)
        s = browser.evaluate(STATE)
        if s["split"] == 0 or s["rows"] == 0:
            raise Failed("%s without script: the diff does not show" % name)
        if s["folds"]:
            browser.evaluate("document.querySelector('details.fold > summary').click()")
            if browser.evaluate(STATE)["open"] != 1:
                raise Failed("%s without script: a fold does not open" % name)
    finally:
        browser.call("Emulation.setScriptExecutionDisabled", {"value": False})


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, help="the folder tools/site wrote")
    ap.add_argument("--shots", help="where the screenshots go (default: SITE-screenshots beside it)")
    ap.add_argument("--chromium", help="the browser (default: chromium, chromium-browser on PATH)")
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--only", help="only pages whose path contains this")
    args = ap.parse_args(argv)
    exe = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("SKIPPED: no Chromium here (Debian: apt-get install chromium)")
        return SKIP
    site = pathlib.Path(args.site).resolve()
    if not (site / "index.html").is_file():
        print("FAIL: %s has no index.html: run tools/site --out %s first" % (site, site))
        return 1
    shots = pathlib.Path(args.shots).resolve() if args.shots else site.with_name(site.name + "-screenshots")
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    if args.only:
        pages = [p for p in pages if args.only in p]
    profile = tempfile.mkdtemp(prefix="site-chromium-")
    browser = Browser(exe, profile)
    failures = []
    try:
        version = browser.call("Browser.getVersion", session=False).get("product", "?")
        print("%s, %d pages, %dx%d" % (version, len(pages), args.width, args.height), flush=True)
        target = browser.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        browser.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                       session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(domain + ".enable")
        browser.call("Emulation.setDeviceMetricsOverride", {"width": args.width, "height": args.height,
                                                            "deviceScaleFactor": 1, "mobile": False})
        for page in pages:
            name = page[:-len(".html")].replace("/", "+")
            url = (site / page).as_uri()
            try:
                load(browser, url)
                bad = browser.evaluate(BROKEN_IMAGES)
                shot(browser, shots / (name + ".png"))
                if page.startswith("steps/") and page.endswith("/index.html"):
                    check_step_page(browser, name, url, shots)
                    check_without_script(browser, name, url)
                problems = errors_in(browser.events) + ["image did not load: %s" % b for b in bad]
                if problems:
                    raise Failed("; ".join(problems))
                print("ok   %s" % page, flush=True)
            except Failed as e:
                failures.append("%s: %s" % (page, e))
                print("FAIL %s: %s" % (page, e), flush=True)
    except Failed as e:
        failures.append(str(e))
        print("FAIL: %s" % e)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    print("\n%d page(s): %d pass, %d fail; screenshots in %s" % (len(pages), len(pages) - len(failures),
                                                                 len(failures), shots))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
