"""What recall returns: ``Hit`` (one cited passage or fact) and ``RecallResult`` (the hits, and
why there are few or none: notes, degraded legs, the empty reason, the filters applied)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clawmem.markdown.workspace import TRANSCRIPT_PREFIX
from clawmem.store.schema import PROPOSAL_PREFIX
from clawmem.text.shown_path import shown_path

if TYPE_CHECKING:
    from clawmem.store.db import Row

# The note under each proposed line (reflect/proposal_review.py).
# (the citation runs to the line's end: a transcript's name may hold spaces)
_PROPOSAL_CITES = re.compile(
    r"proposal [0-9a-f]{10}, confidence [01](?:\.\d+)?, from (\S(?:.*\S)?)[ \t]*$", re.M
)


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    snippet: str
    score: float
    kind: str | None  # None for a chunk; W/B/O/S for a fact
    day: str | None
    entities: tuple[str, ...]
    confidence: float | None
    valid_from: str | None
    valid_to: str | None
    lexical_rank: int | None = None
    lexical_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    superseded_by: str | None = None  # citation of a newer fact about the same entity
    session_id: str | None = None  # a transcript's hit: its session, and when it was said
    said_at: str | None = None
    # Reached through a link, not by the query (recall --expand, entity recall): the link's
    # direction, type, where it is written and the hit it starts from (graph.expand).
    via: dict | None = None
    # From a read scope (another workspace this one reads, [scopes] in clawmem.toml): its name.
    # ``path`` stays relative to that workspace; the citation carries the name.
    scope: str | None = None
    # The estimated probability that this hit is evidence for the question (relevance.py), and
    # what it was computed from; None for a hit no ranking scored (one reached through a link).
    relevance: float | None = None
    features: Any = None
    # Proposals (memory/proposals/) that restate this hit's lines, folded into it because both
    # were found (copies.fold_proposals): their citations, for ``proposals accept|reject``.
    proposals: tuple[str, ...] = ()
    # Page lines (reflect's entity and opinion pages) that restate this hit's fact, folded into
    # it because they came after it (copies.folded): their citations.
    copies: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: Row, *, score: float, snippet: str, **fields: Any) -> Hit:
        """The hit of one index row (``search.COLUMNS``): its place, text and fact fields.
        ``fields`` set the rest (ranks, ``via``) or override the row's (a grown group's lines
        and text, an entity page's name)."""
        values: dict[str, Any] = {
            "path": row["path"],
            "start_line": row["start_line"],
            "end_line": row["end_line"],
            "heading": row["heading"],
            "text": row["text"],
            "kind": row["kind"],
            "day": row["day"],
            "entities": tuple(row["entities"].split()),
            "confidence": row["confidence"],
            "valid_from": row["valid_from"],
            "valid_to": row["valid_to"],
        }
        values.update(fields)
        return cls(score=score, snippet=snippet, **values)

    @property
    def origin(self) -> str:
        """ "sessions" for a transcript's lines, "memory" for the Markdown."""
        return "sessions" if self.path.startswith(TRANSCRIPT_PREFIX) else "memory"

    @property
    def citation(self) -> str:
        return f"{self.scoped_path}#L{self.start_line}-L{self.end_line}"

    @property
    def scoped_path(self) -> str:
        """The path ``get`` reads it back with: ``team:memory/x.md`` for a read scope's hit."""
        return f"{self.scope}:{self.path}" if self.scope else self.path

    def to_dict(self, explain: bool = False, shown: bool = True) -> dict:
        """The hit as ``recall --json`` and ``memory_search`` give it; ``shown`` False keeps
        the path as it is on disk (for the context block, which reads the file again and
        shows the path through ``shown_path`` itself)."""
        show = shown_path if shown else str
        d: dict[str, object] = {
            "type": "fact" if self.kind else "chunk",
            "citation": show(self.citation),
            "source": show(self.citation),
            "path": show(self.scoped_path),
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 6),
            "relevance": None if self.relevance is None else round(self.relevance, 4),
            "heading": self.heading,
            "snippet": self.snippet,
            "timestamp": self.day,
            "origin": self.origin,
        }
        if self.origin == "sessions":
            # What was said, and when: the exact time rather than the day.
            d.update(session_id=self.session_id, timestamp=self.said_at or self.day, day=self.day)
        if self.kind:
            d.update(
                kind=self.kind,
                content=self.text,
                entities=list(self.entities),
                confidence=self.confidence,
                valid_from=self.valid_from,
                valid_to=self.valid_to,
                superseded_by=None if self.superseded_by is None else show(self.superseded_by),
            )
        if self.path.startswith(PROPOSAL_PREFIX):
            # A fact proposed for review (reflect/proposal_review.py), not a fact: marked, with
            # the lines it was proposed from, so an agent can read what was actually said. As
            # they stand in the indexed text (redacted when it was indexed, and shown as such in
            # the snippet): no second pass, which would import redaction into a cold recall.
            d["proposal"] = {"cites": _PROPOSAL_CITES.findall(self.text)}
        if self.proposals:
            d["proposed"] = [show(f"{self.scope}:{c}" if self.scope else c) for c in self.proposals]
        if self.copies:
            d["copies"] = [show(f"{self.scope}:{c}" if self.scope else c) for c in self.copies]
        if self.via is not None:
            d["via"] = {k: show(v) if isinstance(v, str) else v for k, v in self.via.items()}
        if self.scope is not None:
            d["scope"] = self.scope
        if explain:
            d["explain"] = {
                "lexical_rank": self.lexical_rank,
                "lexical_score": None
                if self.lexical_score is None
                else round(self.lexical_score, 6),
                "vector_rank": self.vector_rank,
                "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
                "features": None if self.features is None else self.features.to_dict(),
            }
        return d


@dataclass
class RecallResult:
    query: str
    mode: str
    ranking: str
    hits: list[Hit]
    empty_reason: str | None = None
    relaxed: bool = False  # the all-terms query found nothing; fewer terms were used
    notes: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # why a leg is off or partial
    vectors: dict = field(default_factory=dict)
    index: dict = field(default_factory=dict)
    filters: dict = field(default_factory=dict)
    budget: dict | None = None
    seconds: float = 0.0
    # {"model", "threshold", "best"}: the fitted relevance model, the threshold below which no
    # hit is returned, and the best relevance among the first hits.
    relevance: dict = field(default_factory=dict)
    # The hits held back because none reached the threshold (the terminal shows them dimmed).
    weak_hits: list[Hit] = field(default_factory=list)

    def to_dict(self, explain: bool = False, shown: bool = True) -> dict:
        return {
            "query": self.query,
            "mode": self.mode,
            "ranking": self.ranking,
            "results": [h.to_dict(explain, shown) for h in self.hits],
            "count": len(self.hits),
            "empty_reason": self.empty_reason,
            "relevance": self.relevance,
            "relaxed": self.relaxed,
            "notes": self.notes,
            "degraded": self.degraded,
            "vectors": self.vectors,
            "index": self.index,
            "filters": self.filters,
            "budget": self.budget,
            "seconds": round(self.seconds, 4),
        }
