"""Evidence before its copies.

Reflect's pages restate facts: an entity page's line ends with the citation of the log line it came
from (``- Office cat: Miso. (memory/2025-11-17.md#L39)``), an opinion's evidence cites the lines
that moved it; an episode page, which flush writes of a conversation, quotes its messages
(``**Abstract:** … (sessions/3b8f….jsonl#L4-L4)``, its proposed Retain lines). Such a copy is
shorter and sits under a heading that names its subject, so it often ranks above its source; and
then the source, the evidence an agent should read and cite, falls out of the first hits. Here, a
page line that cites exactly one source is that source's copy: the source takes the copy's place
when it came later (issue 45, "a copy never pushes its source out of the top k"), and the copy is
then no hit of its own but a citation on the source's hit (``folded``): an agent reading the hits
within a budget reads each fact once, with both citations.

A proposal (reflect/proposal_review.py: a line noticed in a conversation, for review) restates the
message it cites and says nothing the message does not. In each leg it counts as that message
(``fold_into_sources``): the message takes the better of the two places, and the proposal, found
with it, is no hit of its own but a citation on the message's hit. So a proposal never pushes
another unit down a leg, nor spends an agent's budget on a second reading of the same words
(issue 44: recall with proposals indexed is no worse than without).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from clawmem.recall.fusion import LegHit
from clawmem.store import queries
from clawmem.store.schema import PROPOSAL_PREFIX

if TYPE_CHECKING:
    from clawmem.store.index import Index

# "memory/2025-11-17.md#L39", "memory/2025-11-12.md#L179-L181", "sessions/3b8f….jsonl#L11-L11":
# a workspace citation in a text (a note's line, or a transcript's message).
_CITED = re.compile(
    r"(?<![\w/.:-])((?:[\w.~-]+/)*[\w.~-]+\.(?:md|jsonl))#L(\d+)(?:-L?(\d+))?(?![\w-])"
)
# Pages: what reflect writes and people curate, and the episode pages flush writes of a
# conversation (their abstract and proposed lines quote its messages, each cited). A daily log
# citing another line is narrative.
PAGES = ("bank/", "memory/episodes/")


def cited_source(path: str, text: str, pages: tuple[str, ...] = PAGES) -> tuple[str, int] | None:
    """The one (path, first line) that the page line ``text`` of ``path`` restates, or None
    (not under ``pages``, no citation, or several: a summary of many is no copy of one)."""
    if not path.startswith(pages) or "#L" not in text:
        return None
    found = {(m.group(1), int(m.group(2))) for m in _CITED.finditer(text)}
    if len(found) != 1:
        return None
    src = next(iter(found))
    return None if src[0] == path else src


# The note under a proposed line: "proposal 8b3c2df307, confidence 0.15, from
# sessions/3b8f….jsonl#L4-L4" (reflect/proposal_review.py): a transcript's message or a daily
# log's paragraph.
_PROPOSED_FROM = re.compile(
    r"\bproposal [0-9a-f]{10}, confidence [01](?:\.\d+)?, from "
    r"((?:[\w.~ -]+/)*[\w.~ -]+\.(?:md|jsonl))#L(\d+)(?:-L?\d+)?(?![\w-])"
)


_PROPOSAL_ID = re.compile(r"\bproposal ([0-9a-f]{10}), confidence ")


def proposal_id(text: str) -> str | None:
    """The short id a proposal's note names (``proposal 8b3c2df307, confidence …``), or None."""
    m = _PROPOSAL_ID.search(text)
    return m.group(1) if m else None


def proposal_source(index: Index, path: str, text: str) -> int | None:
    """The id of the unit the proposal ``text`` (a unit of ``path``, under PROPOSAL_PREFIX)
    cites, or None (not a proposal, or its source is not indexed)."""
    if not path.startswith(PROPOSAL_PREFIX):
        return None
    found = {(m.group(1), int(m.group(2))) for m in _PROPOSED_FROM.finditer(text)}
    if len(found) != 1:
        return None
    cited = next(iter(found))
    row = queries.unit_at(index, *cited)
    if row is None or not row["start_line"] <= cited[1] <= row["end_line"]:
        return None
    return int(row["id"])


def kept_fact(index: Index, proposal_text: str) -> int | None:
    """The id of the fact a proposal (its unit's text) was kept as, or None. An accepted
    proposal (``clawmem proposals accept``, or promoted by reflect) is retained as a fact with the
    proposal's own line; the message it was noticed in then says nothing that fact does not, so
    recall shows the fact, the message's words once, with the message's citation on it. The
    fact is found by its unit's hash (``make_unit``: the same heading, statement, people and
    kind as the proposal's line)."""
    from clawmem.errors import InputError
    from clawmem.markdown.facts import parse_fact
    from clawmem.store.index import make_unit

    try:
        fact = parse_fact(proposal_text.split("\n", 1)[0].strip())
    except InputError:
        return None
    unit = make_unit(
        0, 0, "Retain", fact.content, None, kind=fact.kind, entities=tuple(fact.entities)
    )
    row = index.conn.execute(
        "SELECT c.id FROM chunks c WHERE c.sha256 = ? AND c.kind IS NOT NULL "
        "AND substr(c.path, 1, ?) != ? LIMIT 1",
        (unit.sha256, len(PROPOSAL_PREFIX), PROPOSAL_PREFIX),
    ).fetchone()
    return None if row is None else int(row[0])


def sources_first(
    ordered: list[int],
    source_of: Callable[[int], int | None],
    depth: int = 200,
) -> tuple[list[int], dict[int, int]]:
    """``ordered`` with each copy's source moved to just before the copy, when the source came
    later or not at all; ``source_of(cid)`` gives the unit a copy restates (None for others).
    Returns the new order and {source: copy} for the sources moved. Only the first ``depth``
    units are looked at: nothing past a page of hits is read."""
    place = {cid: i for i, cid in enumerate(ordered)}
    moved: dict[int, int] = {}
    out: list[int] = []
    for i, cid in enumerate(ordered):
        if cid in moved:
            continue  # already shown before its copy
        if i < depth:
            src = source_of(cid)
            if src is not None and src != cid and src not in moved and place.get(src, i + 1) > i:
                out.append(src)
                moved[src] = cid
        out.append(cid)
    return out, moved


def folded(
    ordered: list[int],
    source_of: Callable[[int], int | None],
    depth: int = 200,
) -> dict[int, list[int]]:
    """{source: its copies} for each copy in ``ordered`` (within ``depth``) whose source comes
    before it: the copies that add nothing to a list that already shows their source.
    ``source_of`` as for ``sources_first``."""
    place = {cid: i for i, cid in enumerate(ordered)}
    out: dict[int, list[int]] = {}
    for i, cid in enumerate(ordered[:depth]):
        src = source_of(cid)
        if src is not None and src != cid and place.get(src, i) < i:
            out.setdefault(src, []).append(cid)
    return out


def fold_into_sources(hits: list[LegHit], source: dict[int, int]) -> list[LegHit]:
    """One leg's hits (best first) with each proposal (a key of ``source``) counted as the unit
    it restates: the first of the two keeps its place (its score, as the source's), the second
    is dropped, and the ranks close up behind it."""
    if not source:
        return hits
    out: list[LegHit] = []
    seen: set[int] = set()
    for h in hits:
        cid = source.get(h.chunk_id, h.chunk_id)
        if cid not in seen:
            seen.add(cid)
            out.append(replace(h, chunk_id=cid, rank=len(out) + 1))
    return out
