"""Open `clawmem graph`'s HTML in a real headless browser and take a screenshot.

    python3 scripts/graph_screenshot.py [--workspace DIR] [--out graph.png] [--no-mentions]

Without --workspace it copies fixtures/workspace to a temporary folder, indexes it (lexical
only: the graph needs no model) and draws its graph. It needs Chromium (Debian:
`apt-get install -y chromium`), which CI machines lack, so it is a script and not a test; the
test suite checks the HTML's structure instead (tests/test_graph.py). It fails (exit 1) if the
browser cannot render the page, if the page's pan/zoom script does not run (a self-test zooms
and pans once), or if the screenshot is blank; the browser gets no network (an unreachable
proxy), so a page that needed one would show holes. Look at the PNG: nodes, labels, typed
links and the legend should show.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("graph_screenshot: no Chromium found; install it with `apt-get install -y chromium`")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--out", type=Path, default=Path("graph.png"))
    ap.add_argument("--no-mentions", action="store_true")
    ap.add_argument("--size", default="1400,1000")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="clawmem-graph-"))
    ws = args.workspace
    env = {**os.environ, "CLAWMEM_VECTORS": "0"}
    if ws is None:
        ws = tmp / "ws"
        shutil.copytree(REPO / "fixtures" / "workspace", ws)
    clawmem = [sys.executable, "-m", "clawmem", "-w", str(ws)]
    subprocess.run([*clawmem, "index", "-q"], check=True, env=env)
    page = tmp / "graph.html"
    extra = ["--no-mentions"] if args.no_mentions else []
    subprocess.run([*clawmem, "graph", "-o", str(page), *extra], check=True, env=env)
    # --dump-dom after the scripts ran proves the page parses and its script does not fail;
    # the network is shut off so any request for a resource would leave a hole in the picture.
    common = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--proxy-server=127.0.0.1:9",  # nothing reachable: an offline page must not care
        f"--user-data-dir={tmp / 'profile'}",
    ]
    # With #selftest the page's own script zooms (x2 about the centre) and pans once and writes
    # the resulting transform into the DOM: the pan/zoom code ran in a real browser.
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri() + "#selftest"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    want = 'data-selftest="translate(-490,-500) scale(2)"'
    if dom.returncode != 0 or 'id="viewport"' not in dom.stdout or want not in dom.stdout:
        print("graph_screenshot: the page did not render or its script failed", file=sys.stderr)
        print(dom.stderr[-2000:], file=sys.stderr)
        return 1
    out = args.out.resolve()
    shot = subprocess.run(
        [*common, f"--screenshot={out}", f"--window-size={args.size}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if shot.returncode != 0 or not out.exists():
        print(shot.stderr[-2000:], file=sys.stderr)
        return 1
    colours = _distinct_colours(out)
    print(f"{out}: {out.stat().st_size:,} bytes, {colours} distinct colours; page {page}")
    if colours < 8:
        print("graph_screenshot: the screenshot looks blank", file=sys.stderr)
        return 1
    return 0


def _distinct_colours(png: Path) -> int:
    """How many colours the screenshot has, read with zlib (no imaging library needed)."""
    import struct
    import zlib

    data = png.read_bytes()
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, _, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    bpp = 4 if ctype == 6 else 3
    stride = width * bpp
    prev = bytearray(stride)
    seen = set()
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):  # undo the PNG row filters (None, Sub, Up, Average, Paeth)
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if filt == 1:
                line[x] = (line[x] + a) & 255
            elif filt == 2:
                line[x] = (line[x] + b) & 255
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filt == 4:
                p_ = a + b - c
                pa, pb, pc = abs(p_ - a), abs(p_ - b), abs(p_ - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        if y % 5 == 0:
            for x in range(0, stride, bpp * 3):
                seen.add(bytes(line[x : x + 3]))
        prev = line
    return len(seen)


if __name__ == "__main__":
    sys.exit(main())
