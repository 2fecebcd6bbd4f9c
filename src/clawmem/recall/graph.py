"""The link graph, read from the index: a note's links and backlinks, the notes one link away
from recall's best hits, and the whole graph for ``clawmem graph``.

The links themselves (grammar, resolution) are ``links.py``; the SQL is ``queries.py``; drawing the
graph is ``graphview.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from clawmem.errors import WorkspaceError
from clawmem.ingest.indexing import Indexer
from clawmem.ingest.scope_links import ScopeLinks
from clawmem.markdown.links import MENTION, Resolver
from clawmem.markdown.workspace import is_entity_page, is_memory_path
from clawmem.recall.ranking import snippet
from clawmem.recall.results import Hit
from clawmem.store import queries
from clawmem.store.db import Row
from clawmem.store.index import Filters, Index
from clawmem.text.records import as_json, from_row
from clawmem.text.shown_path import shown_path

# --expand starts from this many of the best hits: the ones a reader looks at.
EXPAND_SEEDS = 3


@dataclass(frozen=True, slots=True)
class OutgoingLink:
    """A link written in a note (``clawmem links``' ``outgoing``)."""

    line: int  # 1-based, in the note
    type: str  # the link's type: "mention", "link", or a typed link's ("extends", …)
    syntax: str  # "wiki", "markdown" or "mention"
    text: str  # the link as written
    anchor: str | None  # the heading it names, if any
    context: str  # the line around it
    target: str  # what it names
    label: str | None
    to: str | None  # the note it resolves to
    status: str  # "ok", "ambiguous", "missing"…
    candidates: tuple[str, ...]  # the notes an ambiguous link could mean

    @classmethod
    def from_row(cls, r: Row) -> OutgoingLink:
        found = tuple(r["candidates"].split("\n")) if r["candidates"] else ()
        return from_row(cls, r, columns={"to": "dst"}, candidates=found)

    def to_dict(self) -> dict:
        return as_json(self, to=None if self.to is None else shown_path(self.to))


@dataclass(frozen=True, slots=True)
class Backlink:
    """A link to a note from another (``clawmem links``' ``backlinks``)."""

    from_path: str  # the note that holds it (JSON ``from``)
    line: int  # 1-based, in that note
    type: str
    syntax: str
    text: str
    anchor: str | None
    context: str

    @classmethod
    def from_row(cls, r: Row) -> Backlink:
        return from_row(cls, r, columns={"from_path": "src"})

    def to_dict(self) -> dict:
        return as_json(self, keys={"from_path": "from"}, **{"from": shown_path(self.from_path)})


def resolve_note(index: Index, root: Path, name: str, extra_paths: tuple[str, ...] = ()) -> str:
    """A note named on the command line: a workspace path, or anything a link may say
    ("Peter", "bank/entities/Peter", "@Peter")."""
    paths = queries.indexed_paths(index)
    given = name.strip()
    if given.startswith(str(root)):
        given = given[len(str(root)) :].lstrip("/")
    if given in paths:
        return given
    if given.startswith("@"):
        res = Resolver(paths).resolve_target("mention", given[1:], "")
    else:
        res = Resolver(paths).resolve_target("wiki", given, "")
    if res.status == "ok" and res.path is not None:
        return res.path
    if res.status == "ambiguous":
        raise WorkspaceError(
            f"{name}: ambiguous, it matches " + ", ".join(res.candidates),
            hint="give the workspace path, e.g. " + res.candidates[0],
        )
    why = "no such note" if is_memory_path(given, extra_paths) else "no note of that name"
    raise WorkspaceError(
        f"{name}: {why} in the index",
        hint="give a memory file's path (bank/entities/Peter.md) or a note name (Peter)",
    )


@dataclass(frozen=True, slots=True)
class Links:
    """A note's links and backlinks (``clawmem links``)."""

    path: str  # the note, as a workspace path
    outgoing: list[OutgoingLink]  # the links written in it, in the order written
    backlinks: list[Backlink]  # the links to it from other notes
    notes: list[str]  # what happened on the way (a sync)

    def to_dict(self) -> dict:
        """``clawmem links --json``."""
        return as_json(self, path=shown_path(self.path))


def links_of(ix: Indexer, note: str) -> Links:
    """``clawmem links``: what a note links to and what links to it, with types, lines and
    context. ``note``: a workspace path or a name a link may use ("Peter", "@Peter")."""
    notes: list[str] = []
    ix.lazy_sync(notes)
    if not ix.index_path.exists():
        raise WorkspaceError("no index yet", hint="run `clawmem index`")
    idx = ix.open_for_read()
    try:
        path = resolve_note(idx, ix.root, note, ix.cfg.extra_paths)
        scoped = ScopeLinks(ix.root, ix.cfg)
        out = []
        for lk in map(OutgoingLink.from_row, queries.links_from(idx, path)):
            res = scoped.resolve(lk.syntax, lk.target) if lk.status != "ok" else None
            if res is not None:  # a link into a read scope ([[team:Peter]])
                lk = replace(lk, to=res.path, status=res.status, candidates=tuple(res.candidates))
            out.append(lk)
        back = [Backlink.from_row(r) for r in queries.links_to(idx, path)]
    finally:
        idx.close()
    return Links(path=path, outgoing=out, backlinks=back, notes=notes)


# ------------------------------------------------------------------------------- recall


def expand_hits(
    index: Index,
    hits: list[Hit],
    *,
    filters: Filters,
    limit: int,
    snippet_chars: int,
    seeds: int = EXPAND_SEEDS,
    backlinks_only: bool = False,
    mentions: bool = True,
) -> list[Hit]:
    """Notes one link away from the best ``seeds`` hits, as extra hits after them: for a link
    written in a hit's lines, the note it points at (its heading's unit if the link names one,
    else its first); for a note linking to a hit's note, the unit that holds the link. Notes
    already among the hits are not repeated; each added hit says which link reached it
    (``Hit.via``) and scores below every direct hit. Filters hold for added hits too (an entity
    filter aside: linking to the entity is what makes a note relevant). Typed and plain links
    come before mentions, which are many."""
    if not hits or limit < 1:
        return []
    shown = {h.path for h in hits}
    f = replace(filters, entity=None)
    where, args = queries.filter_sql(f)
    floor = min(h.score for h in hits)
    found: list[tuple[int, int, Hit]] = []  # (mention?, order, hit)
    order = 0
    for seed in hits[:seeds]:
        steps = []
        if not backlinks_only:
            for r in queries.links_from(index, seed.path, (seed.start_line, seed.end_line)):
                if r["dst"]:
                    steps.append((r, r["dst"], None, r["anchor"], "outgoing"))
        for r in queries.links_to(index, seed.path):
            steps.append((r, r["src"], r["line"], None, "backlink"))
        for r, note, line, anchor, direction in steps:
            if note in shown or (not mentions and r["type"] == MENTION):
                continue
            row = queries.unit_at(index, note, line, anchor)
            if row is None or (where and not _passes(index, row["id"], where, args)):
                continue
            shown.add(note)
            order += 1
            via = {
                "direction": direction,
                "type": r["type"],
                "link": f"{r['src']}#L{r['line']}",
                "text": r["text"],
                "from": seed.citation,
            }
            found.append((r["type"] == MENTION, order, _hit(row, via, snippet_chars)))
    found.sort(key=lambda t: (t[0], t[1]))
    added = [h for _, _, h in found[:limit]]
    # Below every direct hit, in the order found.
    return [replace(h, score=floor * 0.5 / (i + 1)) for i, h in enumerate(added)]


def _passes(index: Index, cid: int, where: str, args: list) -> bool:
    sql = f"SELECT 1 FROM chunks c WHERE c.id = ? AND {where}"
    return index.conn.execute(sql, (cid, *args)).fetchone() is not None


def _hit(row: Row, via: dict, snippet_chars: int) -> Hit:
    return Hit.from_row(row, score=0.0, snippet=snippet(row["text"], None, snippet_chars), via=via)


# ------------------------------------------------------------------------------- the graph


@dataclass(frozen=True, slots=True)
class Node:
    """A note of the graph, or an entity mentioned without a page (``@name``)."""

    id: str  # the workspace path, or "@name"
    kind: str  # "entity", "daily" or "note"
    label: str

    def to_dict(self) -> dict:
        # A file name is shown redacted like any other text (text/shown_path.py).
        return as_json(self, id=shown_path(self.id), label=shown_path(self.label))


@dataclass(frozen=True, slots=True)
class Edge:
    """The links of one type from one note to another."""

    source: str
    target: str
    type: str
    count: int  # how many times it is written
    line: int  # the first place it is written in ``source``

    def to_dict(self) -> dict:
        return as_json(self, source=shown_path(self.source), target=shown_path(self.target))


@dataclass(frozen=True, slots=True)
class Graph:
    """The link graph (``clawmem graph``)."""

    nodes: list[Node]  # by id
    edges: list[Edge]  # by source, target and type
    unlinked_notes: int  # indexed notes no link reaches or leaves
    broken_links: int  # links (not mentions) that resolve to no note

    def to_dict(self) -> dict:
        """``clawmem graph --format json``, and what ``cli.graphview`` draws."""
        return as_json(self)


def graph_data(ix: Indexer, *, mentions: bool = True) -> Graph:
    """Nodes (notes, entity pages, and entities mentioned without a page) and edges (resolved
    links, one per source, target and type, with how many times it is written)."""
    ix.lazy_sync([])
    if not ix.index_path.exists():
        raise WorkspaceError("no index yet", hint="run `clawmem index`")
    idx = ix.open_for_read()
    try:
        rows = queries.all_links(idx)
        paths = queries.indexed_paths(idx)
    finally:
        idx.close()
    nodes: dict[str, Node] = {}

    def node(nid: str, kind: str, label: str) -> None:
        if nid not in nodes:
            nodes[nid] = Node(nid, kind, label)

    # (source, target, type) -> [how many times written, the first line]
    edges: dict[tuple[str, str, str], list[int]] = {}
    broken = 0
    for r in rows:
        if r["type"] == MENTION and not mentions:
            continue
        dst = r["dst"]
        if dst is None:
            if r["type"] != MENTION:
                broken += 1
                continue
            dst = "@" + r["target"]  # an entity without a page is still a node of the graph
            node(dst, "entity", "@" + r["target"])
        if dst == r["src"]:
            continue
        key = (r["src"], dst, r["type"])
        edges.setdefault(key, [0, r["line"]])[0] += 1
    linked = {src for src, _, _ in edges} | {dst for _, dst, _ in edges}
    for p in paths:
        if p in linked:
            node(p, _kind(p), _label(p))
    return Graph(
        nodes=sorted(nodes.values(), key=lambda n: n.id),
        edges=[Edge(*key, *edges[key]) for key in sorted(edges)],
        unlinked_notes=len([p for p in paths if p not in linked]),
        broken_links=broken,
    )


def _kind(path: str) -> str:
    if is_entity_page(path):
        return "entity"
    if path.startswith("memory/"):
        return "daily"
    return "note"


def _label(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


# A question about an entity with a page: the page and the best three direct hits come first, then
# at most this many notes that link to the page, then the rest of the direct hits. Fixed places,
# whatever k: the hits of ``-k n`` are the first n of ``-k m``.
LINKED_AFTER = 4
LINKED_MAX = 3


def linked_hits(
    index: Index,
    hits: list[Hit],
    *,
    entity_page: Hit | None,
    expand: bool,
    filters: Filters,
    k: int,
    snippet_chars: int,
) -> list[Hit]:
    """``hits`` with the hits reached through links among or after them.

    With ``expand`` (asked for): up to ``max(3, k // 2)`` notes one link away from the best
    hits, added after the ``k`` direct ones (``hits`` is cut to ``k`` first). For a question
    naming an entity with a page (not the ``entity`` filter, which promises only facts about it
    and its page): up to ``LINKED_MAX`` notes that link to that page with typed or plain links
    (its @mentions are the facts ranking already found), placed after the first
    ``LINKED_AFTER`` hits."""
    if expand:
        hits = hits[:k]
        return hits + expand_hits(
            index, hits, filters=filters, limit=max(3, k // 2), snippet_chars=snippet_chars
        )
    if entity_page is None or filters.entity or not hits or hits[0] != entity_page:
        return hits
    head = hits[:LINKED_AFTER]
    linked = expand_hits(
        index,
        head,
        filters=filters,
        limit=LINKED_MAX,
        snippet_chars=snippet_chars,
        seeds=1,
        backlinks_only=True,
        mentions=False,
    )
    # A note the page's links brought forward is not shown again at its own, later place
    # (twice in the list, it was dropped later on and a recall of k hits returned k - 1).
    placed = {h.citation for h in linked}
    return head + linked + [h for h in hits[LINKED_AFTER:] if h.citation not in placed]
