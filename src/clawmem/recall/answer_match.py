"""Whether a line can answer what the question asks, and who did it: the first hits re-ordered.

The legs read topic: a line about the pottery class is close to "When did Kate start the pottery
class?" whether it says when, and whoever said it. What the question asks for is in its form:
"when" wants a time ("last week", "on the 14th", a month), "where" a place ("in Lisbon", "at the
gym"), "how many / how much / how long" a number, "who" a person's name, "why" a cause
("because"); and "what did Kate …" wants Kate's own line ("- Kate: I …", first person) holding the
asked event's words, not Elise asking Kate about it ("What about you Kate?"). ``features`` reads
that from the question (parsed once: ``Query.text``, its proper names, its topic words) and the
hit's text, with general English grammar only: question words, prepositions of place, time words,
number words, first- and second-person pronouns. None of it was taken from an evaluation
question.

``reorder`` re-orders the first ``depth`` hits of a recall by a fitted logistic score of those
features beside the hit's place and its fused score over the first hit's (so a weak line never
jumps a strong one on form alone): ``python -m benchmarks.fitting.answer_match`` fits the weights
on tuning data only (REALTALK's chats 1-5 and the mixed workspaces' tuning part) and prints the
Python below (``MODEL``). Only the first ``depth`` hits of the k-independent list move, so the
first n hits are the same whatever k (the list is made at least ``depth`` long before the cut).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.recall.aggregate import only_asks, speaker
from clawmem.text.textnorm import fold

if TYPE_CHECKING:
    from clawmem.recall.results import Hit
    from clawmem.text.query import Query

ANSWER_MATCH = "answer-match-v1"

# ---------------------------------------------------------------------------- the question

# A question word may follow a preposition ("In which city …", "Since when …").
_LEAD = r"^\s*(?:(?:in|on|at|from|to|for|with|by|since|until|during|of|about)\s+)?"
_PERIOD = r"(?:time|date|day|year|month|week|season)"
_PLACE_NOUNS = (
    r"(?:city|cities|country|countries|place|places|town|towns|state|states|location|locations|"
    r"restaurant|restaurants|destination|destinations|park|parks|beach|beaches|store|stores|"
    r"shop|shops|school|university|college|neighbou?rhood)"
)
# In this order: "how long ago" asks when, "how long" a number, "what made …" why.
_ASKS = (
    (
        "when",
        re.compile(
            _LEAD + rf"(?:when\b|(?:what|which)\s+{_PERIOD}\b|how\s+long\s+ago\b|since\s+when\b)",
            re.I,
        ),
    ),
    (
        "count",
        re.compile(
            _LEAD + r"(?:how\s+(?:many|much|long|often|old|far|big|tall)\b"
            r"|what\s+(?:number|percentage|amount|age)\b)",
            re.I,
        ),
    ),
    (
        "why",
        re.compile(
            _LEAD + r"(?:why\b|what\s+(?:made|makes|caused|causes|led|motivated|inspired)\b"
            r"|for\s+what\s+reason\b|what\s+(?:is|was|are|were)\s+the\s+reasons?\b)",
            re.I,
        ),
    ),
    (
        "where",
        re.compile(_LEAD + rf"(?:where\b|(?:what|which)\s+(?:\w+\s+)?{_PLACE_NOUNS}\b)", re.I),
    ),
    (
        "who",
        re.compile(
            _LEAD + r"(?:who|whom|whose)\b|(?:what|which)\s+(?:person|people|friends?)\b", re.I
        ),
    ),
)


def asks_for(question: str) -> str | None:
    """What ``question`` asks for by its form: "when", "count", "why", "where", "who", or None
    (what, which, yes or no). "When did Kate move?" -> "when"; "How many books …" -> "count"."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return None


# ---------------------------------------------------------------------------- the line

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_TIME = re.compile(
    rf"\b(?:{_MONTH}\b|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|today|tonight|yesterday"
    r"|tomorrow|this\s+(?:morning|afternoon|evening)"
    r"|(?:last|next|this|past|coming)\s+(?:night|week|weekend|month|year|summer|winter|spring"
    r"|fall|autumn|semester|time|few\s+\w+|couple\s+of\s+\w+)"
    r"|(?:a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|\d+)\s+(?:of\s+)?"
    r"(?:days?|weeks?|months?|years?|hours?)\s+(?:ago|back|later|before|from\s+now)"
    r"|ago|recently|lately|soon|earlier|weekend|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)\b"
    r"|the\s+other\s+day|christmas|thanksgiving|easter|new\s+year'?s?|halloween|birthday"
    r"|holidays?|summer|winter|spring|autumn|\d{1,2}[./-]\d{1,2}(?:[./-]\d{2,4})?"
    r"|(?:in|at)\s+the\s+(?:morning|afternoon|evening))",
    re.I,
)
_PLACE_WORDS = (
    r"(?:home|city|town|country|beach|park|restaurant|cafe|café|school|campus|office|work|gym"
    r"|church|hospital|store|shop|mall|museum|lake|mountains?|island|airport|hotel|bar|club"
    r"|library|house|apartment|village|downtown|abroad)"
)
# A preposition of place (or a verb of going) before a capitalised word or a place noun.
_PLACE = re.compile(
    r"\b(?:in|at|to|from|near|around|visit(?:ed|ing)?|moved\s+to|live[sd]?\s+in|went\s+to"
    r"|going\s+to|trip\s+to|back\s+to)\s+(?:the\s+)?(?:[A-Z][a-z]+|" + _PLACE_WORDS + r"\b)"
)
_NUMBER = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|twenty|thirty|forty|fifty|hundred|thousand|million|dozen|couple|once|twice|several"
    r"|half)\b",
    re.I,
)
_CAUSE = re.compile(
    r"\b(?:because|since|so\s+that|due\s+to|reason|that'?s\s+why|which\s+is\s+why|cause|caused"
    r"|led\s+me|made\s+me|in\s+order\s+to|so\s+i)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|our|us)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've)\b", re.I)
# A capitalised word inside a sentence (not its first): a name, when it is not one of these.
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow the this
    that what when where which who why how and but not yes yeah wow thank thanks hello hey good
    great well also just really that's it's i'm oh ok okay lol haha""".split()
)
# Who said it: "- Kate: …", a task, a link to the person's page, a transcript's quoted line
# (aggregate.speaker reads the name; this only finds where the message starts).
_SAID = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\[[ xX]\]\s+)?(?:(?:User|Assistant):\s+)?(?:\*\*|\[\[)?"
    r"[^\W\d_][\w .'-]{0,40}?(?:\*\*|\]\])?:\s"
)
_WORD = re.compile(r"[a-z]+")


def _stem(word: str) -> str:
    """A light English suffix strip, so "cooking" and "cooked" meet "cook"."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


# The features, in the order of ``Model.weights``.
FEATURES = (
    "log_place",  # log of the hit's place, from 1
    "inv_place",  # 1 / place
    "score_share",  # its fused score over the best score among the hits
    "time",  # the line says when (a time word, a date)
    "place",  # … where (a preposition of place before a name or a place noun)
    "number",  # … how many (a number, in digits or words)
    "person",  # … who (a capitalised name other than the question's)
    "cause",  # … why ("because", "due to")
    "answers_form",  # the one of those five the question asks for (``asks_for``)
    "said_by_asked",  # the line's speaker is a person the question names
    "said_by_other",  # the line's speaker is someone else, while the question names someone
    "names_asked",  # the line's text names a person the question names
    "first_person",  # "I", "my", "we": its writer tells of themself
    "second_person",  # "you": it speaks to someone
    "only_asks",  # a message that only asks (aggregate.only_asks)
    "asks",  # it ends with a question mark
    "content_share",  # share of the question's content words (not its names) the line holds
)


@dataclass(frozen=True)
class AskedFor:
    """What ``features`` needs of the question, read once per recall (``asked``)."""

    form: str | None  # asks_for
    names: frozenset[str]  # the folded words of its proper names: "kate"
    content: tuple[str, ...]  # its topic words that are no name, stemmed


def asked(query: Query) -> AskedFor:
    """What the question asks for, from its parsed fields (``Query``)."""
    names = frozenset(w for n in query.proper for w in n.split())
    content = tuple(
        dict.fromkeys(
            _stem(w)
            for w in query.topic_words
            if w not in names and w.isascii() and w.isalpha() and len(w) > 2
        )
    )
    return AskedFor(asks_for(query.text), names, content)


def line_features(a: AskedFor, text: str) -> dict[str, float]:
    """The features of one hit's text but its place and score (``FEATURES`` from "time")."""
    said = speaker(text.split("\n", 1)[0]) if text else None
    m = _SAID.match(text)
    body = text[m.end() :] if m else text
    found = {
        "time": bool(_TIME.search(body)),
        "place": bool(_PLACE.search(body)),
        "number": bool(_NUMBER.search(body)),
        "person": bool({fold(c) for c in _CAPITALISED.findall(body)} - _NOT_NAMES - a.names),
        "cause": bool(_CAUSE.search(body)),
    }
    by_asked = said is not None and any(w in a.names for w in said.split())
    words = set(_WORD.findall(fold(body)))
    stems = {_stem(w) for w in words}
    share = sum(1 for c in a.content if c in stems) / len(a.content) if a.content else 0.0
    form = {"when": "time", "where": "place", "count": "number", "who": "person", "why": "cause"}
    return {
        **{k: float(v) for k, v in found.items()},
        "answers_form": float(a.form is not None and found[form[a.form]]),
        "said_by_asked": float(by_asked),
        "said_by_other": float(said is not None and not by_asked and bool(a.names)),
        "names_asked": float(bool(a.names & words)),
        "first_person": float(bool(_FIRST_PERSON.search(body))),
        "second_person": float(bool(_SECOND_PERSON.search(body))),
        "only_asks": float(only_asks(text)),
        "asks": float(body.rstrip().endswith("?")),
        "content_share": share,
    }


def features(a: AskedFor, text: str, place: int, score: float, best: float) -> dict[str, float]:
    """Every feature of one hit (``FEATURES``)."""
    return {
        "log_place": math.log(place),
        "inv_place": 1.0 / place,
        "score_share": score / best if best > 0 else 0.0,
        **line_features(a, text),
    }


@dataclass(frozen=True)
class Model:
    """A fitted logistic score over ``FEATURES``; only the order of its values matters."""

    name: str
    intercept: float
    weights: dict[str, float]

    def score(self, f: dict[str, float]) -> float:
        return self.intercept + sum(w * f[name] for name, w in self.weights.items())


# Fitted by `python -m benchmarks.fitting.answer_match` (tuning data only: 2,485 hits of 497
# questions; see its docstring). Of what a line says, first person (+2.0) and the share of the
# asked event's words it holds (+1.6 for all of them) weigh most.
MODEL = Model(
    name=ANSWER_MATCH,
    intercept=-8.6977,
    weights={
        "log_place": 0.6772,
        "inv_place": 2.2996,
        "score_share": 2.9094,
        "time": 0.4148,
        "place": -0.1754,
        "number": 0.5074,
        "person": 0.5213,
        "cause": 0.3899,
        "answers_form": 0.4268,
        "said_by_asked": 0.1988,
        "said_by_other": -0.4663,
        "names_asked": 0.3277,
        "first_person": 2.0040,
        "second_person": -0.4160,
        "only_asks": 0.3940,
        "asks": 0.2487,
        "content_share": 1.6267,
    },
)


def reorder(
    query: Query, hits: Sequence[Hit], depth: int, keep: int = 0, model: Model = MODEL
) -> list[Hit]:
    """``hits`` with its first ``depth`` hits re-ordered by ``model`` (best first; a tie keeps
    the earlier place), but the first ``keep``, which stay where they are (the entity's page
    that leads a question about the entity: pipeline.py)."""
    head = list(range(keep, min(depth, len(hits))))
    if len(head) < 2:
        return list(hits)
    a = asked(query)
    best = max((h.score for h in hits), default=0.0)
    value = {i: model.score(features(a, hits[i].text, i + 1, hits[i].score, best)) for i in head}
    moved = sorted(head, key=lambda i: (-value[i], i))
    return [*hits[:keep], *(hits[i] for i in moved), *hits[len(head) + keep :]]
