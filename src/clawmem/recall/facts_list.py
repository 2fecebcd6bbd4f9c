"""Listing facts without a question: ``clawmem facts`` and ``clawmem entities NAME``.

Recall ranks units by a question; a person reviewing memory ("what does it hold about Peter?",
"every opinion since March") wants the facts themselves, filtered, newest first. The filters are
recall's (``pipeline.filters_of``: time, kind, entity, path, as-of, source), so ``--since 30d``
means the same thing in both; confidence is a filter only listing has. Each fact comes back as a
recall ``Hit`` with its supersession marked (``pipeline.mark_superseded``), so the JSON of a
listed fact is the JSON of a recalled one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

from clawmem.errors import BadArgument
from clawmem.ingest.indexing import Indexer
from clawmem.recall.pipeline import filters_of, mark_superseded, source_of
from clawmem.recall.results import Hit
from clawmem.store import queries
from clawmem.store.db import Row
from clawmem.store.index import Filters

DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class FactList:
    """The facts a listing found (newest first), how many matched in all, and the filters."""

    facts: list[Hit]
    total: int  # facts matching the filters; ``facts`` holds the first ``limit`` of them
    filters: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "total": self.total,
            "shown": len(self.facts),
            "filters": dict(self.filters),
            "notes": list(self.notes),
            "facts": [h.to_dict() for h in self.facts],
        }


def list_facts(
    ix: Indexer,
    *,
    entity: str | None = None,
    kind: str | list[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    as_of: str | None = None,
    path: str | None = None,
    source: str | None = None,
    min_confidence: float | None = None,
    include_superseded: bool = True,
    limit: int | None = DEFAULT_LIMIT,
    today: date | None = None,
) -> FactList:
    """The facts matching the filters, newest first (by the day recorded, then by place).

    ``min_confidence`` keeps opinions of at least that confidence (and drops facts without
    one). ``include_superseded=False`` drops facts a newer fact replaces. ``limit=None`` lists
    every match."""
    if limit is not None and limit < 1:
        raise BadArgument("limit", limit, "must be at least 1")
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise BadArgument("min_confidence", min_confidence, "must be between 0 and 1")
    today = today or date.today()
    filters = replace(
        filters_of(today, since, until, kind, entity, path, as_of),
        source=source_of(source),
        facts_only=True,
    )
    shown: dict[str, object] = {
        "entity": filters.entity,
        "kinds": list(filters.kinds),
        "since": filters.since,
        "until": filters.until,
        "as_of": filters.as_of,
        "path": filters.path_prefix,
        "source": filters.source,
        "min_confidence": min_confidence,
        "include_superseded": include_superseded,
    }
    notes: list[str] = []
    ix.lazy_sync(notes)
    if not ix.index_path.exists():
        return FactList([], 0, shown, [*notes, "no index yet: run `clawmem index`"])
    idx = ix.open_for_read()
    try:
        rows = queries.facts_matching(idx, filters, min_confidence=min_confidence)
        hits = [_hit(r) for r in rows]
        if not include_superseded or limit is None or len(hits) <= limit:
            hits = mark_superseded(idx, hits, filters.as_of)
        else:
            # Only the facts shown need their supersession: it is a query per fact.
            hits = mark_superseded(idx, hits[:limit], filters.as_of) + hits[limit:]
    finally:
        idx.close()
    if not include_superseded:
        hits = [h for h in hits if h.superseded_by is None]
    total = len(hits)
    return FactList(hits if limit is None else hits[:limit], total, shown, notes)


@dataclass(frozen=True)
class EntityDetail:
    """One entity: its page (if any) and the facts that mention it."""

    entity: str  # as the facts or the page name it
    page: str | None  # bank/entities/<entity>.md, when it exists
    page_lines: int  # how many lines the page has (0 without one)
    facts: FactList

    def to_dict(self) -> dict[str, object]:
        return {
            "entity": self.entity,
            "page": self.page,
            "page_lines": self.page_lines,
            **self.facts.to_dict(),
        }


def entity_detail(
    ix: Indexer,
    name: str,
    *,
    include_superseded: bool = True,
    limit: int | None = DEFAULT_LIMIT,
    today: date | None = None,
) -> EntityDetail:
    """``clawmem entities NAME``: the entity's page and the facts mentioning it, newest first.
    An entity memory does not know is a ``BadArgument`` naming the closest known ones."""
    from clawmem.recall.entities import list_entities

    wanted = name.lstrip("@")
    known = list_entities(ix)
    match = next((e for e in known if e.entity.casefold() == wanted.casefold()), None)
    if match is None:
        import difflib

        names = [e.entity for e in known]
        close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.6)
        hint = (
            f"did you mean {', '.join('@' + c for c in close)}?"
            if close
            else "`clawmem entities` lists the known ones"
        )
        raise BadArgument("name", name, "no fact or page mentions this entity", hint=hint)
    listed = list_facts(
        ix,
        entity=match.entity,
        include_superseded=include_superseded,
        limit=limit,
        today=today,
    )
    lines = 0
    if match.page is not None:
        try:
            lines = len((ix.root / match.page).read_bytes().splitlines())
        except OSError:
            lines = 0
    return EntityDetail(match.entity, match.page, lines, listed)


def _hit(row: Row) -> Hit:
    # The index holds text already redacted (nothing secret is ever stored there).
    return Hit.from_row(row, score=0.0, snippet=row["text"])


__all__ = ["DEFAULT_LIMIT", "EntityDetail", "FactList", "Filters", "entity_detail", "list_facts"]
