"""Next lines as one passage: two hits among the first few that are lines next to each other in
one section are shown as one hit, at the better one's place (rrf-v15).

A conversation kept in notes answers across lines: one message asks ("How long have you been
skiing?") and the next answers it, or one says what happened and the next what it was. When both
lines are among the first hits, a reader gets them as separate hits, the second some places
below the first and cited apart, often with other hits between. Shown together, in the order
they were written and under one citation, they read as the exchange they are, and cost the
same characters as the two hits apart did. A hit joins one other at most (a pair: a message
and the one next to it; a run of five lines is not one hit because all five matched). Only
lines that touch (no line between them) and share a heading are joined, and only notes' lines:
a Retain fact is a statement of its own (its kind, validity and the copies folded into it
belong to it alone), and a page led in for the entity asked about keeps its lead as it is.
A question asking for all of something ("What cuisines does Kate like?") is left as ranked: its
hits were spread over distinct items (``aggregate.spread_out``), and the line next to one item
is most often more of the same item, taking the budget another item needed.
"""

from __future__ import annotations

from dataclasses import replace

from clawmem.recall.ranking import snippet
from clawmem.recall.results import Hit
from clawmem.text.query import Query


def join_next_lines(
    hits: list[Hit], depth: int, q: Query | None, snippet_chars: int, keep: int = 0
) -> list[Hit]:
    """``hits`` with each of the first ``depth`` joined with the first later one among them whose
    lines touch its own (``_touches``), into the better placed one's place; the other takes no
    place of its own. The first ``keep`` hits are left as they are. Only the first ``depth``
    hits are read, so the result's first hits do not depend on how many were asked for."""
    if depth <= 0 or (q is not None and q.asks_for_all):
        return hits
    head, rest = list(hits[:depth]), hits[depth:]
    out: list[Hit] = []
    used = [False] * len(head)
    for i, h in enumerate(head):
        if used[i]:
            continue
        if i >= keep and _joinable(h):
            j = next(
                (j for j in range(i + 1, len(head)) if not used[j] and _touches(h, head[j])), None
            )
            if j is not None:
                used[j] = True
                h = _joined(h, head[j], q, snippet_chars)
        out.append(h)
    return out + rest


def _joinable(h: Hit) -> bool:
    """A note's lines (no fact, no hit reached through a link)."""
    return h.kind is None and h.via is None


def _touches(h: Hit, x: Hit) -> bool:
    """Whether ``x``'s lines are right before or after ``h``'s, in the same section."""
    if not _joinable(x) or (x.path, x.scope, x.heading) != (h.path, h.scope, h.heading):
        return False
    return x.start_line == h.end_line + 1 or x.end_line + 1 == h.start_line


def _joined(best: Hit, other: Hit, q: Query | None, snippet_chars: int) -> Hit:
    """One hit of two whose lines touch, in line order, with ``best``'s score, ranks and
    relevance features: it holds its place."""
    parts = (best, other)
    ordered = sorted(parts, key=lambda p: p.start_line)
    text = "\n".join(p.text for p in ordered)
    entities = tuple(dict.fromkeys(e for p in ordered for e in p.entities))
    return replace(
        best,
        start_line=ordered[0].start_line,
        end_line=ordered[-1].end_line,
        text=text,
        snippet=snippet(text, q.lex if q is not None else None, snippet_chars),
        entities=entities,
        proposals=tuple(dict.fromkeys(c for p in parts for c in p.proposals)),
        copies=tuple(dict.fromkeys(c for p in parts for c in p.copies)),
    )
