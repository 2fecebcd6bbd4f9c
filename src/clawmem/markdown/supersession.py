"""When a newer fact replaces an older one: the one rule recall and reflect both apply.

A fact **supersedes** an older fact when all of these hold:

1. **Kind.** Both have the same kind, and that kind describes something that can stop being true:
   ``W`` (the world: "Peter is in Lisbon"), ``S`` (an observation or summary) or ``O`` (an opinion:
   a newer statement of it replaces the older wording). ``B`` facts never supersede or get
   superseded: an experience is an event, and a later lunch does not undo an earlier one.
2. **Time.** The newer fact was recorded on a later day (both have a recorded day).
3. **Subject.** They mention at least one entity in common (names compared case-insensitively).
4. **Topic.** They talk about the same thing: their topic words (``topics.topic_words``: folded,
   without stopwords, opinion verbs and the entities' own names) overlap with a Jaccard index of at
   least 0.4; or, for two opinions about exactly the same entities, they share two topic words
   ("Rust", "CLI").

The evidence is the Markdown alone (no vectors), so reflect's pages and recall's ``superseded_by``
agree, and two machines with different embedding models agree too. An older fact points at the
*newest* fact that supersedes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from clawmem.text.topics import jaccard, topic_words

KINDS = frozenset({"W", "S", "O"})  # kinds whose facts can be superseded (rule 1)
TOPIC_JACCARD = 0.4
OPINION_SHARED_WORDS = 2


@dataclass(frozen=True)
class Statement:
    """What the rule looks at in a fact."""

    kind: str
    day: str | None  # ISO date it was recorded
    entities: frozenset[str]  # casefolded
    words: frozenset[str]  # topic words

    @classmethod
    def of(cls, kind: str, day: str | None, entities, content: str) -> Statement:
        names = tuple(entities)
        return cls(kind, day, frozenset(e.casefold() for e in names), topic_words(content, names))


def supersedes(newer: Statement, older: Statement) -> bool:
    """Whether ``newer`` replaces ``older`` (see the module docstring)."""
    if newer.kind != older.kind or older.kind not in KINDS:
        return False
    if newer.day is None or older.day is None or newer.day <= older.day:
        return False
    if not newer.entities & older.entities:
        return False
    if jaccard(newer.words, older.words) >= TOPIC_JACCARD:
        return True
    return (
        older.kind == "O"
        and newer.entities == older.entities
        and len(newer.words & older.words) >= OPINION_SHARED_WORDS
    )
