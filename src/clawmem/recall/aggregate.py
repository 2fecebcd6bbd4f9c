"""Questions that ask for all of something, and who said a chat line.

"What authors has Tim read?", "Which courses has Ben taken?", "What are Peter's hobbies?",
"How many times did Ben call?", "Tell me about Peter": the answer is a list whose items were
said on many days, each in a line or two. ``fusion.Ranking``'s ``aggregate_*`` numbers rank such
a question another way: when it names someone, the question without the names is embedded too
and ranked as a third leg (``Query.unnamed``; ranking.py's ``_content_leg``), so the items asked
for rank above the lines that merely greet or mention the person; a line that only asks
(``only_asks``) counts less; and the fused order is spread out by maximal marginal relevance
(``spread_out``), so near-duplicate lines on the topic (a fifth line on the chess club) give way
to distinct items (the one line on tennis). Such a question is told apart by its form alone,
when it is parsed (``text.query.asks_for_all``, read as ``Query.asks_for_all``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from clawmem.text import speakers as speakers_rule

if TYPE_CHECKING:
    import numpy as np

    from clawmem.text.query import Query


def speaker(text: str, *, as_written: bool = False) -> str | None:
    """Who said a chat line ("- Name: text", a daily log's message; text/speakers.py has the
    rule, which chunking's talk detection reads too), folded (as written with ``as_written``);
    else None. rrf-v11: a task, a link to the person's page or a transcript's quoted line has a
    speaker too; rrf-v17: a section's or a field's label ("Background: …") is no speaker."""
    from clawmem.text.textnorm import fold

    said = speakers_rule.said(text)
    if said is None:
        return None
    return said.name if as_written else fold(said.name)


def speakers(text: str) -> int:
    """How many people's lines a unit holds (``speaker`` of each of its lines): 2 for a note
    keeping a talk as one paragraph ("kate: … Ben: … kate: …"), 1 for one message."""
    return len({s for line in text.split("\n") if (s := speaker(line)) is not None})


def is_chat_line(text: str) -> bool:
    """Whether ``text`` is someone's message in a chat log, a list item "- Name: text" as a daily
    log writes it: a structured abstract's "Background: ..." is no one speaking."""
    said = speakers_rule.said(text)
    return said is not None and said.item


def without_names_if_asked(query: Query) -> str | None:
    """The text ranking's third leg embeds (ranking.py's ``_content_leg``): the question without
    its names, when it asks for all of something and names someone (``Query.unnamed``, read when
    the question was parsed: ``text.query.without_names``); None when it does not, or when
    nothing but the names was asked. A question naming no one has none: it would only count the
    vector leg twice."""
    return query.unnamed


# Ends with a question mark (ASCII or full-width), perhaps after closing quotes or a bracketed
# note ("[photo: …]").
_ASKING_END = re.compile(r"[?？][\s\"'”’)]*(?:\[[^\]]*\]\s*)?$")
_BRACKETED = re.compile(r"\[[^\]]*\]")
_SENTENCE = re.compile(r"[^.!?…。！？]+[.!?…。！？]*")
# A sentence of this many words or more that is not a question states something.
_STATEMENT_WORDS = 4


def only_asks(text: str) -> bool:
    """Whether a unit is a message that only asks: someone said it ("- Kate: ...", a
    transcript's "User: ..."), it ends with a question, and says nothing else of four words or
    more that is not a question ("Hello Kate. How are you?" asks; "I love skiing! What about
    you?" does not: it says what its writer loves). A note's own open question ("- Should we
    move the NAS?", a to-do ending "(reconnect?)") is no message: it may be what is looked for."""
    said = speakers_rule.said(text)
    if said is None or not _ASKING_END.search(text):
        return False
    text = text[said.start :]
    for sentence in _SENTENCE.findall(_BRACKETED.sub(" ", text)):
        sentence = sentence.strip()
        if sentence and not sentence.endswith(("?", "？")):
            if len(sentence.split()) >= _STATEMENT_WORDS:
                return False
    return True


# A line that opens with a question word or an inverted verb ("who …", "should we …", "is the
# …"), after its list marker and checkbox: English only.
_ASKING_START = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\[[ xX]\]\s+)?(?:who|whom|whose|what|when|where|why|how|which|is|are|"
    r"was|were|do|does|did|can|could|should|would|will|shall|has|have|had)\b",
    re.IGNORECASE,
)


def open_question(text: str) -> bool:
    """Whether a unit is a note's own question that no one said: a to-do or a line that only
    asks ("- [ ] who signs off the rounding?", "Should we move the NAS?"): it opens with a
    question word and every sentence of it is a question. It restates what is still open, so it
    cannot say who, when, where, how many or why (``Ranking.open_question_factor``); a to-do that
    ends with a question in passing ("- [ ] reproduce the crash (kill wifi during reconnect?)")
    states a task, and a message someone said is ``only_asks``'s."""
    if speakers_rule.said(text) is not None:
        return False
    if not _ASKING_END.search(text) or not _ASKING_START.match(text):
        return False
    for sentence in _SENTENCE.findall(_BRACKETED.sub(" ", text)):
        sentence = sentence.strip()
        if sentence and not sentence.endswith(("?", "？")):
            return False
    return True


def spread_out(
    ordered: Sequence[int], score: dict[int, float], vectors: dict[int, np.ndarray], weight: float
) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein, 1998) over ``ordered`` (best first):
    each next unit is the one with the highest ``(1 - weight) * score / best score - weight *``
    its highest cosine to a unit already picked. A unit without a vector (``vectors`` lacks it)
    is like no other. The result depends only on ``ordered``, ``score`` and ``vectors``, never
    on how many hits are read, so cutting it keeps the order of every longer cut (k-stability)."""
    import numpy as np

    n = len(ordered)
    best = score[ordered[0]] if n else 0.0
    if n < 2 or best <= 0 or not weight:
        return list(ordered)
    dims = len(next(iter(vectors.values()))) if vectors else 0
    mat = np.zeros((n, dims), dtype=np.float32)
    for i, cid in enumerate(ordered):
        v = vectors.get(cid)
        if v is not None:
            norm = float(np.sqrt(np.einsum("i,i->", v, v)))
            if norm > 0:
                mat[i] = v / norm
    # numpy's own loop, not BLAS (vector_matrix.cosines says why).
    sim = np.einsum("ij,kj->ik", mat, mat)
    rel = (1.0 - weight) * np.array([score[c] / best for c in ordered])
    closest = np.full(n, -np.inf)
    left = np.ones(n, dtype=bool)
    picked: list[int] = []
    for _ in range(n):
        value = rel - weight * (closest if picked else 0.0)
        value[~left] = -np.inf
        i = int(np.argmax(value))  # ties: the earlier unit
        picked.append(i)
        left[i] = False
        closest = np.maximum(closest, sim[i])
    return [ordered[i] for i in picked]
