"""``clawmem graph``: the link graph as a self-contained HTML page, Mermaid, DOT and JSON.

A real browser renders the page in scripts/graph_screenshot.py (Chromium is not on CI
machines); here the page's structure is checked: well-formed, one SVG element per node and per
link, the data it was drawn from, and nothing that would reach the network."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")

VOID = {"meta", "br", "img", "input", "link", "hr", "path", "circle", "line"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.data_json = ""
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        self._in_data = a.get("id") == "graph-data"
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data_json += data


def _graph(ws, *args):
    r = cli("-w", str(ws), "graph", *args)
    assert r.code == 0, r.err
    return r


def test_html_is_self_contained_and_draws_every_node_and_link(ws):
    assert cli("-w", str(ws), "index", "-q").code == 0
    r = _graph(ws)
    page_path = ws / ".memory" / "graph.html"
    assert r.out.strip() == str(page_path)
    page = page_path.read_text(encoding="utf-8")
    data = json.loads(_graph(ws, "--format", "json").out)

    p = _Page()
    p.feed(page)
    p.close()
    assert p.errors == [] and p.stack == []
    assert json.loads(p.data_json) == data  # the picture carries its data

    nodes = [a for t, a in p.tags if t == "g" and "node" in a.get("class", "").split()]
    edges = [a for t, a in p.tags if t == "g" and a.get("class") == "edge-group"]
    assert {a["data-id"] for a in nodes} == {n["id"] for n in data["nodes"]}
    assert sorted((a["data-source"], a["data-target"], a["data-type"]) for a in edges) == sorted(
        (e["source"], e["target"], e["type"]) for e in data["edges"]
    )
    # The fixture's entities and the links written between them are in the picture.
    ids = {n["id"] for n in data["nodes"]}
    for name in ("Peter", "Andy", "Kenji", "Linh", "The-Castle", "payments-service", "warelay"):
        assert f"bank/entities/{name}.md" in ids
        assert f">{name}</text>" in page  # its label
    types = {e["type"] for e in data["edges"]}
    assert {"wikilink", "mention", "depends_on", "extends", "related", "reference"} <= types
    assert ">depends_on</text>" in page  # typed links are labelled on the drawing
    assert (
        "bank/entities/Linh.md",
        "bank/entities/Peter.md",
        "works_with",
    ) in {(e["source"], e["target"], e["type"]) for e in data["edges"]}

    # Offline: no URL, no external script, style, image or font.
    assert not re.search(r"https?://", page)
    assert not any(t in ("link", "img", "iframe") for t, _ in p.tags)
    assert not any(t == "script" and "src" in a for t, a in p.tags)
    assert "@import" not in page and "url(http" not in page
    # Pan and zoom are wired (wheel, drag, buttons).
    for hook in ("'wheel'", "'mousedown'", 'id="zin"', 'id="zout"', 'id="fit"'):
        assert hook in page


def test_without_mentions_only_written_links_remain(ws):
    data = json.loads(_graph(ws, "--format", "json", "--no-mentions").out)
    assert data["edges"] and all(e["type"] != "mention" for e in data["edges"])
    # An edge written twice counts twice (Peter's page links Andy once; reflect may add more).
    assert all(e["count"] >= 1 for e in data["edges"])


def test_mermaid_and_dot_name_every_link(ws):
    data = json.loads(_graph(ws, "--format", "json").out)
    mermaid = _graph(ws, "--format", "mermaid").out
    dot = _graph(ws, "-f", "dot").out
    assert mermaid.startswith("graph LR\n")
    ids = dict(re.findall(r'^  (n\d+)\["([^"]*)"\]', mermaid, re.M))
    assert sorted(ids.values()) == sorted(n["label"] for n in data["nodes"])
    arrows = re.findall(r"^  (n\d+) -\.?->\|([^|]+)\| (n\d+)$", mermaid, re.M)
    assert len(arrows) == len(data["edges"])
    assert dot.startswith("digraph clawmem {") and dot.rstrip().endswith("}")
    assert dot.count(" -> ") == len(data["edges"])
    assert '"bank/entities/Linh.md" -> "bank/entities/Peter.md" [label="works_with"];' in dot


def test_output_file_and_bad_format(ws, tmp_path):
    out = tmp_path / "g.mmd"
    r = _graph(ws, "-f", "mermaid", "-o", str(out))
    assert out.read_text(encoding="utf-8").startswith("graph LR")
    assert r.out.strip() == str(out)
    bad = cli("-w", str(ws), "graph", "--format", "png")
    assert bad.code == 2 and "unknown format 'png'" in bad.err
