#!/usr/bin/env python3
"""The gallery's checks in a real browser (issue 26), driven over the DevTools protocol.

Against the 5000-record sample bundle, in headless Chromium at 1200 x 900: an item page's first
row holds at least 5 images; every image's alt text is its item's title; the front page shows at
least 20 album covers, each linking to its album's place; clicking the first item opens its
details (sha256, dimensions, format, bytes, URLs; arrow keys step, Escape closes); typing a word
of a title into the search box leaves only items whose title holds it; with scripts off the
search box is hidden and every image still links to its file; dark mode changes the colours; no
page requests anything outside the bundle. Against a 100,000-record bundle: the front page and
page 50 each render (browser start included) in under MAX_SECONDS (3), and every HTML file of
both bundles is under 1 MB.

The bundles are built with ARCHIVER (`archiver serve` standing in for the image host) into
.build/gallery-check/ unless --bundle and --big name existing ones; a second run reuses them.
Installs Debian's chromium and PyPI's websocket-client if missing. Prints `N passed, N failed`;
exits 1 if any check failed. Screenshots go to --shots (default .build/gallery-check/shots).

usage: scripts/gallery-check.py [--archiver BIN] [--bundle DIR] [--big DIR] [--shots DIR]
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, ".build", "gallery-check")
MAX_SECONDS = float(os.environ.get("MAX_SECONDS", "3"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--mute-audio"]


def ensure_tools():
    """Debian's chromium and PyPI's websocket-client, installed when missing."""
    if not shutil.which("chromium"):
        sudo = [] if os.getuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "chromium"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)
    try:
        import websocket  # noqa: F401
    except ImportError:
        # Debian's own pip refuses to install into the system (PEP 668): a venv of our own then.
        if subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--user", "websocket-client"]).returncode != 0:
            venv = os.path.join(ROOT, ".build", "gallery-check-venv")
            if not os.path.exists(os.path.join(venv, "bin", "python")):
                subprocess.run([sys.executable, "-m", "venv", venv], check=True)
                subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "websocket-client"], check=True)
            os.execv(os.path.join(venv, "bin", "python"), [os.path.join(venv, "bin", "python")] + sys.argv)
        import site
        sys.path.append(site.getusersitepackages())


class Browser:
    """One headless Chromium and its page, over the DevTools protocol."""

    def __init__(self, width=1200, height=900, url="about:blank"):
        import websocket
        self.profile = tempfile.mkdtemp(prefix="gallery-check-")
        self.process = subprocess.Popen(
            ["chromium"] + FLAGS + [f"--window-size={width},{height}", "--remote-debugging-port=0",
                                    "--remote-allow-origins=*", f"--user-data-dir={self.profile}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.time() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools server")
            time.sleep(0.05)
        port = open(port_file).read().split()[0]
        while True:
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
            pages = [t for t in targets if t["type"] == "page"]
            if pages:
                break
            time.sleep(0.05)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.requests = []
        self.send("Page.enable")
        self.send("Network.enable")
        self.viewport(width, height)

    def viewport(self, width, height):
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _receive(self):
        message = json.loads(self.ws.recv())
        if message.get("method") == "Network.requestWillBeSent":
            self.requests.append(message["params"]["request"]["url"])
        if "method" in message:
            self.events.append(message)
        return message

    def send(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def wait(self, event, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for index, message in enumerate(self.events):
                if message["method"] == event:
                    del self.events[: index + 1]
                    return message
            self._receive()
        raise RuntimeError(f"no {event} in {timeout} s")

    def goto(self, url):
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait("Page.loadEventFired")

    def eval(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def key(self, key, code, keycode):
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=keycode)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def build(archiver, catalog, out, records):
    """Archives `catalog` into `out` from `archiver serve` (a rerun over a whole bundle is quick)."""
    server = subprocess.Popen([archiver, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True)
    # Without its front page the bundle's stamp no longer matches: the rerun writes the gallery
    # again, so the pages checked are this binary's even when the bundle is complete.
    if os.path.exists(os.path.join(out, "index.html")):
        os.remove(os.path.join(out, "index.html"))
    try:
        line = server.stdout.readline()
        url = re.search(r"http://[0-9.:]+", line).group(0)
        subprocess.run([archiver, "run", "--catalog", catalog, "--out", out, "--concurrency", "32", "--quiet",
                        "--mirror", f"https://via.placeholder.com={url}"], check=False, stdout=subprocess.DEVNULL)
    finally:
        server.terminate()
        server.wait()
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    if len(manifest["items"]) != records:
        raise RuntimeError(f"{out}: {len(manifest['items'])} items, expected {records}")


def big_catalog(path):
    """100,000 records from the sample's 5000, each with its own URL (`?n=<id>`), as make bench makes."""
    records = json.load(open(os.path.join(ROOT, "samples", "photos.json")))
    big = [dict(records[i % len(records)], id=i + 1, url=records[i % len(records)]["url"] + f"?n={i + 1}")
           for i in range(100_000)]
    with open(path, "w") as f:
        json.dump(big, f)


def failing_catalog(path):
    """The sample's first 120 records, every 7th gone (a 404) and one not http (invalid-url)."""
    records = json.load(open(os.path.join(ROOT, "samples", "photos.json")))[:120]
    for record in records:
        if record["id"] % 7 == 0:
            record["url"] = f"https://via.placeholder.com/600/nothex{record['id']}"
    records[9]["url"] = "ftp://example.com/10.png"
    with open(path, "w") as f:
        json.dump(records, f)


def check_failures(t, bundle, shots):
    """Failed items show in their place in the grid, as tiles the size of an image, with their kind."""
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    base = "file://" + os.path.abspath(bundle)
    b = Browser()
    try:
        b.goto(base + "/pages/0001.html")
        b.screenshot(os.path.join(shots, "failures-in-place.png"))
        tiles = b.eval("""[...document.querySelectorAll('main li')].map(li=>{const e=li.firstElementChild.getBoundingClientRect();
            return [li.id.slice(5),li.className,(li.querySelector('.tile b')||{}).textContent||null,Math.round(e.width),Math.round(e.height)]})""")
        expected = [(str(i["id"]), i["status"], i.get("error", {}).get("kind")) for i in manifest["items"]]
        shown = [(i, c, k.split(" ")[0] if k else None) for i, c, k, _, _ in tiles]
        sizes = {(w, h) for _, _, _, w, h in tiles}
        failed = sum(1 for _, c, _ in shown if c == "failed")
        t.check(shown == expected and failed > 0 and len(sizes) == 1,
                f"{failed} failed items shown in their place among {len(tiles)}, each with its kind, every tile "
                f"{'x'.join(map(str, next(iter(sizes))))} px like the images")
        b.goto(base + "/index.html")
        summary = b.eval("[...document.querySelectorAll('#failures li')].map(l=>l.textContent)")
        kinds = {}
        for item in manifest["items"]:
            if item["status"] == "failed":
                kinds[item["error"]["kind"]] = kinds.get(item["error"]["kind"], 0) + 1
        t.check(sorted(summary) == sorted(f"{k}: {n} item{'' if n == 1 else 's'}" for k, n in kinds.items()),
                f"the front page's failures summary: {'; '.join(summary)}")
    finally:
        b.close()


def html_files(bundle):
    pages = os.path.join(bundle, "pages")
    return [os.path.join(bundle, "index.html")] + sorted(os.path.join(pages, n) for n in os.listdir(pages))


def render_seconds(url, shot):
    """Seconds from starting a fresh headless Chromium on `url` (1200 x 900) to the page loaded
    (its load event) and two frames painted after it; then a screenshot, not timed.

    Timed over DevTools rather than `chromium --screenshot`, which loads every lazy image of the
    page before it shoots (measured: the same front page took 5-11 s that way, 2-3 s this way)."""
    start = time.monotonic()
    b = Browser(url=url)
    try:
        while not b.eval(f"location.href=={json.dumps(url)}&&document.readyState=='complete'"):
            time.sleep(0.01)
        b.eval("new Promise(r=>requestAnimationFrame(()=>requestAnimationFrame(r)))")
        seconds = time.monotonic() - start
        b.screenshot(shot)
    finally:
        b.close()
    return seconds


def check_sample(t, bundle, shots):
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    items = {str(item["id"]): item for item in manifest["items"]}
    base = "file://" + os.path.abspath(bundle)
    b = Browser()
    try:
        page1 = base + "/pages/" + sorted(n for n in os.listdir(os.path.join(bundle, "pages")) if n[0].isdigit())[0]

        b.goto(page1)
        b.screenshot(os.path.join(shots, "page1.png"))
        row = b.eval("""(()=>{const lis=[...document.querySelectorAll('main li')];
            const top=lis[0].getBoundingClientRect().top;
            return lis.filter(l=>Math.abs(l.getBoundingClientRect().top-top)<1&&l.querySelector('img')).length})()""")
        t.check(row >= 5, f"item page at 1200x900: {row} images in the first row (at least 5)")
        b.viewport(390, 844)
        phone = b.eval("""(()=>{const lis=[...document.querySelectorAll('main li')];
            const top=lis[0].getBoundingClientRect().top;
            return lis.filter(l=>Math.abs(l.getBoundingClientRect().top-top)<1).length})()""")
        b.screenshot(os.path.join(shots, "page1-phone.png"))
        b.viewport(1200, 900)
        t.check(1 <= phone < row, f"item page at 390x844 (a phone): {phone} per row, fewer than on a laptop")

        # Every image on every item page: its alt text is its item's title in the manifest.
        wrong, seen = [], 0
        for name in sorted(os.listdir(os.path.join(bundle, "pages"))):
            if not name[0].isdigit():
                continue
            b.goto(base + "/pages/" + name)
            pairs = b.eval("[...document.querySelectorAll('main img')].map(i=>[i.closest('li').id.slice(5),i.alt])")
            seen += len(pairs)
            wrong += [name + "#" + i for i, alt in pairs if items.get(i, {}).get("title") != alt]
        done = sum(1 for item in manifest["items"] if item["status"] == "done")
        t.check(not wrong and seen == done, f"{seen} images on the item pages for {done} done items, each with its title "
                                            f"as alt text{'; wrong: ' + ', '.join(wrong[:5]) if wrong else ''}")

        b.goto(base + "/index.html")
        b.screenshot(os.path.join(shots, "index.png"))
        covers = b.eval("""[...document.querySelectorAll('.covers li')].map(li=>{const r=li.getBoundingClientRect(),
            i=li.querySelector('img');return [r.bottom<=innerHeight&&r.right<=innerWidth, li.querySelector('a').getAttribute('href'),
            i?i.alt:null]})""")
        visible = sum(1 for v, _, _ in covers if v)
        bad = []
        for _, href, alt in covers:
            path, anchor = href.split("#")
            target = os.path.join(bundle, path)
            if not os.path.exists(target) or f'id="{anchor}"' not in open(target).read():
                bad.append(href)
            elif alt is not None:
                first = items[anchor[len("group-"):]]
                album = [i for i in manifest["items"] if i["albumId"] == first["albumId"] and i["status"] == "done"]
                if not album or album[0]["title"] != alt:
                    bad.append(href + " (alt)")
        t.check(visible >= 20 and not bad, f"front page: {len(covers)} album covers, {visible} of them in the first "
                                           f"1200x900 screen, each linking to its album's page and anchor"
                                           f"{'; bad: ' + ', '.join(bad[:5]) if bad else ''}")

        b.goto(page1)
        first = b.eval("(()=>{const a=document.querySelector('li.done>a'),r=a.getBoundingClientRect();"
                       "return [a.parentNode.id.slice(5),r.x+r.width/2,r.y+r.height/2]})()")
        b.click(first[1], first[2])
        item = items[first[0]]
        shown = b.eval("""(()=>{const t=i=>document.getElementById(i).textContent;return {open:details.open,
            title:t('d-title'),id:t('d-id'),format:t('d-format'),size:t('d-size'),bytes:t('d-bytes'),sha:t('d-sha'),
            url:t('d-url'),link:(document.querySelector('#d-url a')||{}).href||null,mirror:t('d-mirror'),
            mirrorLinks:document.querySelectorAll('#d-mirror a').length,pic:document.querySelector('#d-pic img').complete
            &&document.querySelector('#d-pic img').naturalWidth}})()""")
        b.screenshot(os.path.join(shots, "details.png"))
        expected_size = f"{item.get('width')} × {item.get('height')} px"
        mirror_ok = shown["mirror"] == (item["source"] if item["source"] != item["url"] else "") and shown["mirrorLinks"] == 0
        t.check(shown["open"] and shown["sha"] == item["sha256"] and shown["size"] == expected_size
                and shown["title"] == item["title"] and shown["id"] == f"#{item['id']}" and shown["format"] == "png"
                and shown["bytes"] == f"{item['bytes']:,} bytes" and shown["url"] == item["url"]
                and shown["link"] == item["url"] and mirror_ok,
                f"clicking item {item['id']} opens its details: sha256 {shown['sha'][:12]}…, {shown['size']}, "
                f"{shown['format']}, {shown['bytes']}, catalog URL a link, mirror as plain text "
                f"({shown['mirror'] or 'none'}), image {shown['pic']} px wide")
        b.key("ArrowRight", "ArrowRight", 39)
        after_right = b.eval("document.getElementById('d-id').textContent")
        b.key("ArrowLeft", "ArrowLeft", 37)
        after_left = b.eval("document.getElementById('d-id').textContent")
        b.key("Escape", "Escape", 27)
        closed = b.eval("!details.open")
        ids = [i["id"] for i in manifest["items"]]
        next_id = ids[ids.index(item["id"]) + 1]
        t.check(after_right == f"#{next_id}" and after_left == f"#{item['id']}" and closed,
                f"in the details, ArrowRight shows {after_right}, ArrowLeft {after_left}, Escape closes: {closed}")

        titles = b.eval("[...document.querySelectorAll('main li .t')].map(e=>e.textContent)")
        word = max(item["title"].split(), key=len)
        box = b.eval("(()=>{const r=q.getBoundingClientRect();return [r.x+r.width/2,r.y+r.height/2]})()")
        b.click(box[0], box[1])
        b.send("Input.insertText", text=word)
        left = b.eval("[...document.querySelectorAll('main li')].filter(l=>!l.hidden&&l.offsetParent).map(l=>l.querySelector('.t').textContent)")
        expected = [title for title in titles if word.lower() in title.lower()]
        b.screenshot(os.path.join(shots, "search.png"))
        t.check(left == expected and len(left) >= 1 and len(left) < len(titles),
                f"typing {word!r} into the search box leaves {len(left)} of {len(titles)} items, each whose title holds it")

        b.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
        background = b.eval("getComputedStyle(document.body).backgroundColor")
        b.send("Input.insertText", text="")
        b.eval("q.value='';q.dispatchEvent(new Event('input'))")
        b.screenshot(os.path.join(shots, "page1-dark.png"))
        b.goto(base + "/index.html")
        b.screenshot(os.path.join(shots, "index-dark.png"))
        b.send("Emulation.setEmulatedMedia", features=[])
        light = b.eval("getComputedStyle(document.body).backgroundColor")
        t.check(background != light, f"prefers-color-scheme dark: body background {background} (light: {light})")

        b.send("Emulation.setScriptExecutionDisabled", value=True)
        b.goto(page1)
        noscript = b.eval("""({search:getComputedStyle(document.getElementById('search')).display,
            dialog:document.getElementById('details').open,
            links:[...document.querySelectorAll('li.done>a')].map(a=>a.href)})""")
        missing = [u for u in noscript["links"] if not os.path.exists(u[len("file://"):])]
        b.send("Emulation.setScriptExecutionDisabled", value=False)
        t.check(noscript["search"] == "none" and not noscript["dialog"] and noscript["links"] and not missing,
                f"scripts off: search box hidden, dialog closed, {len(noscript['links'])} images link to their files "
                f"({len(missing)} missing)")

        # Scroll through an item page so lazy images load too, then look at every request made.
        b.goto(page1)
        b.eval("new Promise(r=>{let y=0;const s=()=>{scrollTo(0,y+=800);y<document.body.scrollHeight?setTimeout(s,20):r()};s()})")
        time.sleep(0.5)
        b.eval("1")
        outside = sorted({u for u in b.requests if not (u.startswith(base + "/") or u.startswith("about:") or u.startswith("data:"))})
        t.check(not outside, f"{len(b.requests)} requests over the checks, all inside the bundle"
                             f"{': outside ' + ', '.join(outside[:5]) if outside else ''}")
    finally:
        b.close()


def check_sizes(t, bundle):
    sizes = [(os.path.getsize(p), p) for p in html_files(bundle)]
    largest = max(sizes)
    t.check(largest[0] < 1 << 20, f"{os.path.basename(bundle)}: {len(sizes)} HTML files, largest "
                                  f"{os.path.relpath(largest[1], bundle)} at {largest[0]:,} bytes (under 1 MB)")


def check_big(t, big, shots):
    base = "file://" + os.path.abspath(big)
    names = sorted(n for n in os.listdir(os.path.join(big, "pages")) if n[0].isdigit())
    blank = os.path.join(shots, "blank.html")
    with open(blank, "w") as f:
        f.write("<!DOCTYPE html><title>blank</title>")
    # Three fresh browsers each, the median counts: one start varies by a second on a busy machine.
    pages = (("an empty page", "file://" + blank), ("front page", f"{base}/index.html"),
             ("page 50", f"{base}/pages/{names[49]}"))
    times = {label: [] for label, _ in pages}
    for _ in range(3):
        for label, url in pages:
            times[label].append(render_seconds(url, os.path.join(shots, "big-" + os.path.basename(url) + ".png")))
    baseline = sorted(times["an empty page"])[1]
    for label, url in pages[1:]:
        runs = sorted(times[label])
        path = url[len(base) + 1:]
        t.check(runs[1] < MAX_SECONDS, f"100,000-record bundle's {label} ({path}, {os.path.getsize(os.path.join(big, path)):,} "
                                       f"bytes) loaded and painted {runs[1]:.2f} s after starting the browser (median of "
                                       f"{', '.join(f'{r:.2f}' for r in runs)}; under {MAX_SECONDS:g} s; an empty page: "
                                       f"{baseline:.2f} s; load average {os.getloadavg()[0]:.1f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archiver", default=os.path.join(ROOT, ".build", "release", "archiver"))
    parser.add_argument("--bundle", help="the 5000-record bundle (built from samples/photos.json without it)")
    parser.add_argument("--big", help="a 100,000-record bundle (built without it)")
    parser.add_argument("--shots", default=os.path.join(WORK, "shots"))
    args = parser.parse_args()
    ensure_tools()
    os.makedirs(args.shots, exist_ok=True)
    bundle, big = args.bundle, args.big
    os.makedirs(WORK, exist_ok=True)
    failing = os.path.join(WORK, "failing")
    failing_json = os.path.join(WORK, "failing.json")
    failing_catalog(failing_json)
    build(args.archiver, failing_json, failing, 120)
    if not bundle or not big:
        if not bundle:
            bundle = os.path.join(WORK, "sample")
            build(args.archiver, os.path.join(ROOT, "samples", "photos.json"), bundle, 5000)
        if not big:
            catalog = os.path.join(WORK, "catalog-100k.json")
            if not os.path.exists(catalog):
                big_catalog(catalog)
            big = os.path.join(WORK, "big")
            build(args.archiver, catalog, big, 100_000)
    t = Tally()
    check_sample(t, bundle, args.shots)
    check_failures(t, failing, args.shots)
    check_sizes(t, bundle)
    check_sizes(t, big)
    check_big(t, big, args.shots)
    print(f"gallery-check: screenshots in {args.shots}")
    print(f"{t.passed} passed, {t.failed} failed")
    sys.exit(1 if t.failed else 0)


if __name__ == "__main__":
    main()
