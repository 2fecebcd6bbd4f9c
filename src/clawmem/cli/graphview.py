"""Pictures of the link graph (``graph.graph_data``): a self-contained HTML page, Mermaid, DOT.

The HTML page works offline and from a file: the layout is computed here (a seeded force layout,
so the same graph always looks the same) and drawn as inline SVG, readable even with scripts off;
a small inline script adds pan (drag), zoom (wheel, buttons) and highlighting of a node's links.
Nothing is fetched from the network: no fonts, no libraries, no URLs.
"""

from __future__ import annotations

import html
import json
import math
import random

FORMATS = ("html", "mermaid", "dot", "json")

# Colours for node kinds and for the link types people use most; other types get a colour
# derived from their name, so a type keeps its colour from one run to the next.
KIND_COLOURS = {"entity": "#d9822b", "daily": "#4a90d9", "note": "#5aa469"}
TYPE_COLOURS = {
    "wikilink": "#7a7a7a",
    "mention": "#c8c8c8",
    "reference": "#8e6c8a",
    "depends_on": "#c0392b",
    "extends": "#16a085",
    "related": "#2980b9",
    "supersedes": "#8e44ad",
    "contradicts": "#e67e22",
}


def type_colour(t: str) -> str:
    if t in TYPE_COLOURS:
        return TYPE_COLOURS[t]
    h = sum(ord(c) * (i + 1) for i, c in enumerate(t)) % 360
    return f"hsl({h}, 55%, 42%)"


# ---------------------------------------------------------------------------------- layout


def layout(
    nodes: list[dict], edges: list[dict], *, size: float = 1000.0, seed: int = 7
) -> dict[str, tuple[float, float]]:
    """Positions by a Fruchterman–Reingold force layout (NumPy), seeded: deterministic."""
    import numpy as np

    n = len(nodes)
    if n == 0:
        return {}
    if n == 1:
        return {nodes[0]["id"]: (size / 2, size / 2)}
    index = {nd["id"]: i for i, nd in enumerate(nodes)}
    rng = random.Random(seed)
    pos = np.array([[rng.random() * size, rng.random() * size] for _ in range(n)])
    pairs = np.array([(index[e["source"]], index[e["target"]]) for e in edges], dtype=int)
    k = size / math.sqrt(n) * 0.9  # the ideal distance between two nodes
    temp = size / 8
    # Every pair repels: O(n²) per step, done in row blocks so memory stays bounded (a graph of
    # thousands of notes is slow to lay out but never runs out of memory).
    steps = 250 if n <= 300 else (100 if n <= 1000 else 40)
    block = max(1, 2_000_000 // n)
    for _ in range(steps):
        disp = np.empty_like(pos)
        for lo in range(0, n, block):
            delta = pos[lo : lo + block, None, :] - pos[None, :, :]
            dist2 = (delta**2).sum(-1) + 1e-9
            disp[lo : lo + block] = ((k * k / dist2)[:, :, None] * delta).sum(1)
        if len(pairs):
            d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
            dl = np.sqrt((d**2).sum(-1)) + 1e-6
            pull = (dl / k)[:, None] * d  # attraction along links
            np.add.at(disp, pairs[:, 0], -pull)
            np.add.at(disp, pairs[:, 1], pull)
        disp += (size / 2 - pos) * 0.05  # a pull to the centre keeps islands in view
        length = np.sqrt((disp**2).sum(-1)) + 1e-6
        pos += disp / length[:, None] * np.minimum(length, temp)[:, None]
        temp = max(size / 400, temp * (0.985 if steps > 100 else 0.95))
    lo, hi = pos.min(0), pos.max(0)
    span = np.maximum(hi - lo, 1e-6)
    pos = 40 + (pos - lo) / span * (size - 80)
    return {nd["id"]: (float(pos[i, 0]), float(pos[i, 1])) for i, nd in enumerate(nodes)}


# ---------------------------------------------------------------------------------- text forms


def to_mermaid(data: dict) -> str:
    ids = {nd["id"]: f"n{i}" for i, nd in enumerate(data["nodes"])}
    out = ["graph LR"]
    for nd in data["nodes"]:
        label = nd["label"].replace('"', "#quot;")
        out.append(f'  {ids[nd["id"]]}["{label}"]:::{nd["kind"]}')
    for e in data["edges"]:
        arrow = "-.->" if e["type"] == "mention" else "-->"
        out.append(f"  {ids[e['source']]} {arrow}|{e['type']}| {ids[e['target']]}")
    for kind, colour in KIND_COLOURS.items():
        out.append(f"  classDef {kind} fill:{colour},color:#fff,stroke:#333")
    return "\n".join(out) + "\n"


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(data: dict) -> str:
    out = [
        "digraph clawmem {",
        "  rankdir=LR;",
        '  node [style=filled, fontname="sans-serif", fontcolor=white];',
    ]
    for nd in data["nodes"]:
        shape = "ellipse" if nd["kind"] == "entity" else "box"
        out.append(
            f"  {_dot_str(nd['id'])} [label={_dot_str(nd['label'])}, shape={shape}, "
            f'fillcolor="{KIND_COLOURS[nd["kind"]]}"];'
        )
    for e in data["edges"]:
        style = ", style=dashed" if e["type"] == "mention" else ""
        out.append(
            f"  {_dot_str(e['source'])} -> {_dot_str(e['target'])} "
            f"[label={_dot_str(e['type'])}{style}];"
        )
    out.append("}")
    return "\n".join(out) + "\n"


def to_json(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


# ---------------------------------------------------------------------------------- HTML

_SIZE = 1000.0

_STYLE = """
body { margin: 0; font: 14px system-ui, sans-serif; color: #222; background: #fafafa; }
header { padding: 8px 12px; border-bottom: 1px solid #ddd; background: #fff; }
header h1 { font-size: 16px; margin: 0 12px 0 0; display: inline; }
header button { margin-left: 4px; }
#legend { display: inline-flex; flex-wrap: wrap; gap: 10px; margin-left: 12px; font-size: 12px; }
#legend span.sw { display: inline-block; width: 18px; height: 4px; vertical-align: middle;
  margin-right: 4px; }
#legend span.dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  vertical-align: middle; margin-right: 4px; }
svg { display: block; width: 100vw; height: calc(100vh - 42px); cursor: grab; }
svg.dragging { cursor: grabbing; }
.edge { stroke-width: 1.6; fill: none; }
.edge.mention { stroke-dasharray: 4 3; stroke-width: 1; }
.elabel { font-size: 10px; fill: #555; pointer-events: none; }
.node circle { stroke: #333; stroke-width: 1; }
.node text { font-size: 12px; paint-order: stroke; stroke: #fafafa; stroke-width: 3px; }
.faded { opacity: 0.12; }
"""

_SCRIPT = """
(function () {
  var svg = document.getElementById('graph');
  var view = document.getElementById('viewport');
  var tx = 0, ty = 0, s = 1, drag = null;
  function apply() { view.setAttribute('transform', 'translate(' + tx + ',' + ty + ') scale(' + s + ')'); }
  function toLocal(ev) {
    var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    var k = Math.max(vb.width / r.width, vb.height / r.height);
    return [(ev.clientX - r.left) * k + vb.x, (ev.clientY - r.top) * k + vb.y];
  }
  function zoomAt(x, y, f) {
    var ns = Math.min(8, Math.max(0.1, s * f)); f = ns / s;
    tx = x - (x - tx) * f; ty = y - (y - ty) * f; s = ns; apply();
  }
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault(); var p = toLocal(ev); zoomAt(p[0], p[1], ev.deltaY < 0 ? 1.15 : 1 / 1.15);
  }, { passive: false });
  svg.addEventListener('mousedown', function (ev) {
    drag = toLocal(ev); drag.push(tx, ty); svg.classList.add('dragging');
  });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return; var p = toLocal(ev);
    tx = drag[2] + p[0] - drag[0]; ty = drag[3] + p[1] - drag[1]; apply();
  });
  window.addEventListener('mouseup', function () { drag = null; svg.classList.remove('dragging'); });
  document.getElementById('zin').onclick = function () { zoomAt(500, 500, 1.3); };
  document.getElementById('zout').onclick = function () { zoomAt(500, 500, 1 / 1.3); };
  document.getElementById('fit').onclick = function () { tx = 0; ty = 0; s = 1; apply(); };
  if (location.hash === '#selftest') {  // scripts/graph_screenshot.py: zoom and pan once
    zoomAt(500, 500, 2); tx += 10; apply();
    document.body.setAttribute('data-selftest', view.getAttribute('transform'));
  }
  var edges = Array.prototype.slice.call(document.querySelectorAll('.edge-group'));
  Array.prototype.forEach.call(document.querySelectorAll('.node'), function (n) {
    n.addEventListener('mouseenter', function () {
      var id = n.getAttribute('data-id'), near = {}; near[id] = 1;
      edges.forEach(function (e) {
        var a = e.getAttribute('data-source'), b = e.getAttribute('data-target');
        var on = a === id || b === id; if (on) { near[a] = 1; near[b] = 1; }
        e.classList.toggle('faded', !on);
      });
      Array.prototype.forEach.call(document.querySelectorAll('.node'), function (m) {
        m.classList.toggle('faded', !near[m.getAttribute('data-id')]);
      });
    });
    n.addEventListener('mouseleave', function () {
      Array.prototype.forEach.call(document.querySelectorAll('.faded'), function (m) {
        m.classList.remove('faded');
      });
    });
  });
})();
"""


def to_html(data: dict, *, title: str = "clawmem link graph") -> str:
    """The graph as one HTML file: inline SVG (laid out here), CSS and script; no network."""
    nodes, edges = data["nodes"], data["edges"]
    pos = layout(nodes, edges, size=_SIZE)
    esc = html.escape
    degree: dict[str, int] = {}
    for e in edges:
        degree[e["source"]] = degree.get(e["source"], 0) + 1
        degree[e["target"]] = degree.get(e["target"], 0) + 1
    types = sorted({e["type"] for e in edges})
    markers = "".join(
        f'<marker id="arrow-{i}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{type_colour(t)}"/></marker>'
        for i, t in enumerate(types)
    )
    marker_of = {t: i for i, t in enumerate(types)}
    radius = {nd["id"]: 5 + min(9.0, 2.2 * math.sqrt(degree.get(nd["id"], 0))) for nd in nodes}
    parts = []
    for e in edges:
        (x1, y1), (x2, y2) = pos[e["source"]], pos[e["target"]]
        dx, dy = x2 - x1, y2 - y1
        dist = math.hypot(dx, dy) or 1.0
        # Stop the line at the target's circle so the arrowhead stays visible.
        r2 = radius[e["target"]] + 2
        x2e, y2e = x2 - dx / dist * r2, y2 - dy / dist * r2
        colour = type_colour(e["type"])
        count = f" ×{e['count']}" if e["count"] > 1 else ""
        label = ""
        if e["type"] not in ("wikilink", "mention"):
            label = (
                f'<text class="elabel" x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" '
                f'text-anchor="middle">{esc(e["type"])}</text>'
            )
        parts.append(
            f'<g class="edge-group" data-source="{esc(e["source"])}" '
            f'data-target="{esc(e["target"])}" data-type="{esc(e["type"])}">'
            f'<line class="edge {esc(e["type"])}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2e:.1f}" '
            f'y2="{y2e:.1f}" stroke="{colour}" marker-end="url(#arrow-{marker_of[e["type"]]})">'
            f"<title>{esc(e['source'])} → {esc(e['target'])} ({esc(e['type'])}{count}, "
            f"line {e['line']})</title></line>{label}</g>"
        )
    for nd in nodes:
        x, y = pos[nd["id"]]
        r = radius[nd["id"]]
        parts.append(
            f'<g class="node {esc(nd["kind"])}" data-id="{esc(nd["id"])}" '
            f'transform="translate({x:.1f},{y:.1f})"><circle r="{r:.1f}" '
            f'fill="{KIND_COLOURS[nd["kind"]]}"/><text x="{r + 3:.1f}" y="4">'
            f"{esc(nd['label'])}</text><title>{esc(nd['id'])}</title></g>"
        )
    legend = "".join(
        f'<span><span class="dot" style="background:{c}"></span>{esc(k)}</span>'
        for k, c in KIND_COLOURS.items()
    ) + "".join(
        f'<span><span class="sw" style="background:{type_colour(t)}"></span>{esc(t)} '
        f"({sum(1 for e in edges if e['type'] == t)})</span>"
        for t in types
    )
    # The data travels with the picture, for anyone who wants to script against it.
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    summary = f"{len(nodes)} notes, {len(edges)} links" + (
        f", {data.get('broken_links', 0)} broken" if data.get("broken_links") else ""
    )
    pad = 60
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_STYLE}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><span>{esc(summary)}</span>"
        '<button id="zin" title="zoom in">+</button><button id="zout" title="zoom out">−</button>'
        '<button id="fit" title="reset the view">fit</button>'
        f'<span id="legend">{legend}</span></header>'
        '<svg id="graph" '
        f'viewBox="{-pad} {-pad} {_SIZE + 2 * pad:.0f} {_SIZE + 2 * pad:.0f}" '
        'preserveAspectRatio="xMidYMid meet">'
        f'<defs>{markers}</defs><g id="viewport">{"".join(parts)}</g></svg>'
        f'<script type="application/json" id="graph-data">{payload}</script>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
