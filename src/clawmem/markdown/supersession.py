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
5. **Not narrower.** A newer fact that says everything the older one says and adds a condition
   ("prefers concise replies *while travelling*": every topic word of the older is in it, and it
   holds a condition word the older does not, ``CONDITIONS``) narrows the older one to a case; it
   does not replace it, and both stay true.

The evidence is the Markdown alone (no vectors), so reflect's pages and recall's ``superseded_by``
agree, and two machines with different embedding models agree too. An older fact points at the
*newest* fact that supersedes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from clawmem.text.textnorm import tokens
from clawmem.text.topics import jaccard, topic_words

KINDS = frozenset({"W", "S", "O"})  # kinds whose facts can be superseded (rule 1)
TOPIC_JACCARD = 0.4
OPINION_SHARED_WORDS = 2
# Words that put a statement under a condition (rule 5), folded, in the languages clawmem
# supports: "while travelling", "khi đi công tác", "旅行の時", "旅行时".
CONDITIONS = frozenset(
    {"while", "whilst", "when", "whenever", "during", "if", "unless", "except", "only"}
    | {"khi", "neu", "tru"}  # Vietnamese (folded: "nếu" -> "neu", "trừ khi" -> "tru khi")
)
CJK_CONDITIONS = ("時", "とき", "場合", "時候", "时候", "时", "如果", "除非", "期间", "期間")


def conditions_in(text: str) -> frozenset[str]:
    """The condition words of a statement (rule 5)."""
    found = {w for w in tokens(text) if w in CONDITIONS}
    found.update(c for c in CJK_CONDITIONS if c in text)
    return frozenset(found)


@dataclass(frozen=True)
class Statement:
    """What the rule looks at in a fact."""

    kind: str
    day: str | None  # ISO date it was recorded
    entities: frozenset[str]  # casefolded
    words: frozenset[str]  # topic words
    conditions: frozenset[str] = frozenset()  # condition words (rule 5)

    @classmethod
    def of(cls, kind: str, day: str | None, entities: Iterable[str], content: str) -> Statement:
        names = tuple(entities)
        return cls(
            kind,
            day,
            frozenset(e.casefold() for e in names),
            topic_words(content, names),
            conditions_in(content),
        )


def supersedes(newer: Statement, older: Statement) -> bool:
    """Whether ``newer`` replaces ``older`` (see the module docstring)."""
    if newer.kind != older.kind or older.kind not in KINDS:
        return False
    if newer.day is None or older.day is None or newer.day <= older.day:
        return False
    if not newer.entities & older.entities:
        return False
    if older.words < newer.words and newer.conditions - older.conditions:
        return False  # narrower: the older statement still holds outside the condition
    if jaccard(newer.words, older.words) >= TOPIC_JACCARD:
        return True
    return (
        older.kind == "O"
        and newer.entities == older.entities
        and len(newer.words & older.words) >= OPINION_SHARED_WORDS
    )


# ---------------------------------------------------------------------------- explicit corrections
#
# ``clawmem correct`` (and ``retain --supersedes``) says in the Markdown which fact a new one
# replaces: a note under the new fact, written with the link grammar's typed relation so that it
# reads as a link in any Markdown viewer and in ``clawmem links``:
#
#     - W @Peter: Lives in Porto.
#       - supersedes [[memory/2025-11-12.md#L30]]
#
# The old line is never touched (a daily log is only ever appended to), and the explicit note
# wins over the rule above whatever the kinds and topics: the person said so.

_EXPLICIT = re.compile(
    r"^supersedes \[\[([^\[\]#|\n]+)#L([1-9][0-9]{0,8})(?:-L[1-9][0-9]{0,8})?\]\]$"
)


def supersedes_note(path: str, line: int) -> str:
    """The note that makes a fact replace the fact at ``path`` line ``line`` (without its
    bullet and indentation, as ``Fact.notes`` holds it)."""
    return f"supersedes [[{path}#L{line}]]"


def explicit_target(notes: Iterable[str]) -> tuple[str, int] | None:
    """(path, line) of the fact a fact's notes say it supersedes, or None."""
    for note in notes:
        m = _EXPLICIT.match(note.strip())
        if m:
            return m.group(1).strip(), int(m.group(2))
    return None
