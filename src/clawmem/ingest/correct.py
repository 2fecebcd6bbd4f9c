"""``clawmem correct CITATION "new text"``: replace a wrong fact with a right one, keeping both.

The old line stays where it is (daily logs are only appended to, and what was believed before
stays answerable with ``--as-of``); the new fact is retained today with a note that names the old
one (``supersedes [[path#Lline]]``, markdown/supersession.py). Recall then marks the old fact
``superseded_by`` the new one, reflect strikes it through on the entity page, and ``history``
shows the chain.
"""

from __future__ import annotations

from datetime import date

from clawmem.ingest.cited import fact_at
from clawmem.ingest.indexing import Indexer
from clawmem.ingest.retain import Retained, retain, stated_as_a_fact


def correct(
    ix: Indexer,
    citation: str,
    text: str,
    *,
    kind: str | None = None,
    confidence: float | None = None,
    entities: tuple[str, ...] | list[str] | None = None,
    allow_secret: bool = False,
    today: date | None = None,
    writer: str = "correct",
) -> Retained:
    """Retain ``text`` as the correction of the fact at ``citation``: the old fact's kind,
    entities and confidence unless given. ``text`` may be written as a Retain line, as retain
    takes it ("W @Kate: Kate moved to Porto."): its kind, entities and confidence are then the
    ones given (the old fact's entities where the line names none)."""
    old = fact_at(ix, citation).fact
    stated_kind, statement, stated_entities, stated_confidence = stated_as_a_fact(
        text, kind, entities or (), confidence
    )
    if statement is not text:  # written as a Retain line: its head says what the fact is
        kind, confidence = stated_kind, stated_confidence
        if stated_entities:
            entities = stated_entities
    new_kind = kind or old.kind
    if confidence is None and new_kind == old.kind == "O":
        confidence = old.confidence
    return retain(
        ix,
        statement,
        kind=new_kind,
        confidence=confidence,
        entities=tuple(old.lead_entities or old.entities) if entities is None else entities,
        allow_secret=allow_secret,
        today=today,
        supersedes=citation,
        literal=True,
        writer=writer,
    )
