"""Whether a line can answer what the question asks, and who did it: the first hits re-ordered.

The legs read topic: a line about the pottery class is close to "When did Ana start the pottery
class?" whether it says when, and whoever said it. What the question asks for is in its form:
"when" wants a time ("last week", "on the 14th", a month), "where" a place ("in Lisbon", "at the
gym"), "how many / how much / how long" a number, "who" a person's name, "why" a cause
("because"); and "what did Ana …" wants Ana's own line ("- Ana: I …", first person) holding the
asked event's words, not Marco asking Ana about it ("What about you Ana?"). ``features`` reads
that from the question (parsed once: ``Query.text``, its proper names, its topic words) and the
hit's text, with general English grammar only: question words, prepositions of place, time words,
number words, first- and second-person pronouns. None of it was taken from an evaluation
question. The words are English: a question in another language has no form read, and its lines
are re-ordered by their place, score and the question's words they hold.

``reorder`` re-orders the messages among the first ``depth`` hits of a recall (a line one person
said: a daily log's "- Ana: …", a talk kept as "Ana: …" lines, a transcript's message;
``is_message``) by a fitted logistic score of those features beside the hit's place and its fused
score over the best hit's (what a line says weighs against how strongly the legs found it): the
messages trade places among themselves, and every other hit keeps its place. What the rules
before it chose stays where it is: the entity's page that leads, the units holding a short
question's identifiers (ranking's exact-first: the re-ordering is off for such a question), Retain
facts, pages and notes (none is a message). Fitted on conversations, the weights are used only on
one person's messages: re-ordering every hit lost evidence within 2,000 characters on the
agent-memory set and overrode those rules on the fixture, and re-ordering exchanges kept as one
unit of two people's lines still lost it on the agent-memory set's chat logs (benchmarks/
analysis.md). ``python -m benchmarks.fitting.answer_match`` fits the weights on tuning data only
(REALTALK's chats 1-5 and the mixed workspaces' tuning part) and prints the Python below
(``MODEL``). Only the first ``depth`` hits of the k-independent list move, so the first n hits
are the same whatever k (the list is made at least ``depth`` long before the cut).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.recall.aggregate import only_asks, speaker, speakers
from clawmem.recall.copies import PAGES
from clawmem.text.speakers import said as said_by
from clawmem.text.textnorm import fold

if TYPE_CHECKING:
    from clawmem.recall.results import Hit
    from clawmem.text.query import Query

ANSWER_MATCH = "answer-match-v2"

# ---------------------------------------------------------------------------- the line

# The line is read word by word (lower case, apostrophes kept: "that's", "i'm"; a word's head is
# what comes before its apostrophe), by set look-ups, prefixes and a few two- and three-word
# phrases: one pass over its words, not one regular expression of many alternatives each (those
# took ~1 ms a line; a recall reads five).
_MONTHS = frozenset(
    """jan january feb february mar march apr april may jun june jul july aug august sep sept
    september oct october nov november dec december""".split()
)
_WEEKDAYS = frozenset(
    d + s
    for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
    for s in ("day", "days")
)
# Words that say when, as a word's start: "weekend(s)", "birthday(s)", "summer(time)".
_TIME_STARTS = (
    "today", "tonight", "yesterday", "tomorrow", "ago", "recently", "lately", "soon", "earlier",
    "weekend", "christmas", "thanksgiving", "easter", "halloween", "birthday", "holiday",
    "summer", "winter", "spring", "autumn",
)  # fmt: skip
# Their first three letters (each is three letters or more): most words are told apart by a set
# look-up, not twenty string comparisons.
_TIME_START3 = frozenset(s[:3] for s in _TIME_STARTS)
# "last week", "next summer", "this time", "past few days" (the second word's start).
_PERIOD_STARTS = (
    "night", "week", "month", "year", "summer", "winter", "spring", "fall", "autumn",
    "semester", "time",
)  # fmt: skip
_DAYPARTS = ("morning", "afternoon", "evening")
_TIME_UNITS = frozenset("day days week weeks month months year years hour hours".split())
_COUNTS = frozenset("a one two three four five six seven eight nine ten few couple".split())
_DIGITS_DATE = re.compile(r"\b\d{1,2}[./-]\d{1,2}")
_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)")
_NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    hundred thousand million dozen couple once twice several half""".split()
)
_CAUSE_WORDS = frozenset(("because", "since", "reason", "cause", "caused"))
_CAUSE_PAIRS = frozenset(
    (("so", "that"), ("due", "to"), ("that's", "why"), ("thats", "why"), ("led", "me"),
     ("made", "me"), ("so", "i"))
)  # fmt: skip
_CAUSE_TRIPLES = frozenset((("which", "is", "why"), ("in", "order", "to")))
_FIRST_PERSON = frozenset("i me my mine we our us".split())
_SECOND_PERSON = frozenset(("you", "your"))
_LOWER_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def _is_count(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a count before a unit of time: "two", "12", "a couple of"."""
    if i < 0:
        return False
    w = words[i]
    if w == "of":  # "a couple of weeks later"
        return i > 0 and (words[i - 1] in _COUNTS or words[i - 1].isdigit())
    return w in _COUNTS or w.isdigit()


# Words after which a phrase of time may follow ("last week", "two days later", "in the morning").
_TIME_LEADS = frozenset(("last", "next", "this", "past", "coming", "new", "the", "in", "at"))


def _says_when(low: str, words: list[str], heads: list[str]) -> bool:
    """A time word, a date or a phrase of time: "last week", "two days later", "in the
    morning", "the other day", "New Year", "on the 14th", "2023"."""
    unique, said = set(words), set(heads)
    if _DIGITS_DATE.search(low) or said & _MONTHS or said & _WEEKDAYS:
        return True
    if any(w[:3] in _TIME_START3 and w.startswith(_TIME_STARTS) for w in unique):
        return True
    for w in unique:
        if w[:1].isdigit() and (
            _ORDINAL.fullmatch(w.split("'", 1)[0])
            or (w[:2] in ("19", "20") and len(w) >= 4 and w[:4].isdigit())
        ):
            return True
    if not (unique & _TIME_LEADS or unique & _TIME_UNITS):
        return False
    n = len(words)
    for i, w in enumerate(words):
        if w not in _TIME_LEADS and w not in _TIME_UNITS:
            continue
        nxt = words[i + 1] if i + 1 < n else ""
        third = words[i + 2] if i + 2 < n else ""
        if w in ("last", "next", "this", "past", "coming") and (
            nxt.startswith(_PERIOD_STARTS)
            or (nxt == "few" and third)
            or (nxt == "couple" and third == "of" and i + 3 < n)
            or (w == "this" and nxt.startswith(_DAYPARTS))
        ):
            return True
        if w in _TIME_UNITS and _is_count(words, i - 1):
            if nxt.startswith(("back", "later", "before")) or (
                nxt == "from" and third.startswith("now")
            ):
                return True
        if w == "new" and nxt.startswith("year"):
            return True
        if w == "the" and nxt == "other" and third.startswith("day"):
            return True
        if w in ("in", "at") and nxt == "the" and third.startswith(_DAYPARTS):
            return True
    return False


def _says_why(words: list[str], heads: list[str]) -> bool:
    """ "because", "due to", "that's why", "in order to", …"""
    return bool(
        set(heads) & _CAUSE_WORDS
        or set(zip(words, heads[1:], strict=False)) & _CAUSE_PAIRS
        or set(zip(words, words[1:], heads[2:], strict=False)) & _CAUSE_TRIPLES
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
# A capitalised word inside a sentence (not its first): a name, when it is not one of these.
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow the this
    that what when where which who why how and but not yes yeah wow thank thanks hello hey good
    great well also just really that's it's i'm oh ok okay lol haha""".split()
)
_WORD = re.compile(r"[a-z]+")


def _names_in(body: str) -> set[str]:
    """Capitalised words that do not open a sentence (nor the text)."""
    out = set()
    for m in _CAPITALISED.finditer(body):
        at = m.start()
        if at == 0 or (at >= 2 and body[at - 2] in ".!?" and body[at - 1].isspace()):
            continue
        out.add(fold(m.group(0)))
    return out


def _stem(word: str) -> str:
    """A light English suffix strip, so "cooking" and "cooked" meet "cook"."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _share(content: tuple[str, ...], words: set[str]) -> float:
    """The share of ``content`` (stemmed words) that ``words`` hold, stemmed alike; only the
    words that start as a content word does are stemmed."""
    if not content:
        return 0.0
    starts = tuple({c[:3] for c in content})
    stems = {_stem(w) for w in words if w.startswith(starts)}
    return sum(1 for c in content if c in stems) / len(content)


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
    "answers_form",  # the one of those five the question asks for (``Query.asks``)
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

    form: str | None  # what it asks for by its form (``Query.asks``)
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
    return AskedFor(query.asks, names, content)


def line_features(a: AskedFor, text: str) -> dict[str, float]:
    """The features of one hit's text but its place and score (``FEATURES`` from "time")."""
    line = said_by(text.split("\n", 1)[0]) if text else None  # who said it (text/speakers.py)
    said = fold(line.name) if line is not None else None
    body = text[line.start :] if line is not None else text
    low = body.lower().replace("’", "'")
    words = _LOWER_WORD.findall(low)
    heads = [w.split("'", 1)[0] for w in words] if "'" in low else words
    said_heads = set(heads)
    found = {
        "time": _says_when(low, words, heads),
        "place": bool(_PLACE.search(body)),
        "number": bool(said_heads & _NUMBER_WORDS) or any(map(str.isdigit, said_heads)),
        "person": bool(_names_in(body) - _NOT_NAMES - a.names),
        "cause": _says_why(words, heads),
    }
    by_asked = said is not None and any(w in a.names for w in said.split())
    folded = set(_WORD.findall(low if low.isascii() else fold(body)))
    share = _share(a.content, folded)
    form = {"when": "time", "where": "place", "count": "number", "who": "person", "why": "cause"}
    return {
        **{k: float(v) for k, v in found.items()},
        "answers_form": float(a.form is not None and found[form[a.form]]),
        "said_by_asked": float(by_asked),
        "said_by_other": float(said is not None and not by_asked and bool(a.names)),
        "names_asked": float(bool(a.names & folded)),
        "first_person": float(bool(said_heads & _FIRST_PERSON)),
        "second_person": float(bool(said_heads & _SECOND_PERSON)),
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


# Fitted by `python -m benchmarks.fitting.answer_match` (tuning data only: the 2,264 messages
# among the first five hits of 497 questions; see its docstring). Of what a line says, first person
# (+2.0) and the share of the asked event's words it holds (+1.6 for all of them) weigh most; a
# message someone other than the asked person said counts less (-1.7 against -0.8).
MODEL = Model(
    name=ANSWER_MATCH,
    intercept=-7.6040,
    weights={
        "log_place": 0.4968,
        "inv_place": 1.7936,
        "score_share": 3.3135,
        "time": 0.4566,
        "place": -0.0725,
        "number": 0.4514,
        "person": 0.4755,
        "cause": 0.4413,
        "answers_form": 0.3457,
        "said_by_asked": -0.8297,
        "said_by_other": -1.6519,
        "names_asked": 0.0835,
        "first_person": 2.0144,
        "second_person": -0.3204,
        "only_asks": 0.7084,
        "asks": 0.2275,
        "content_share": 1.6007,
    },
)


def is_message(hit: Hit) -> bool:
    """Whether ``hit`` is a message: a note's line (no fact, no page line, not reached through a
    link) that one person said, "- Ana: …", "Ana: …" or a transcript's "User: …" (its first
    line's ``aggregate.speaker``), the speaker's name a name (``text.speakers.is_name``: one
    word, or a few capitalised ones, "John Zhang"; "Pottery class: …", "last_updated: …",
    "payments-service: …", "Background: …" are a note's labels and a page's fields). A unit of two
    people's lines (an exchange kept as one paragraph, "Jack: …" then "Assistant: …", or a message
    joined with the reply next to it, passages.py) is none: who said it, first person and asking
    are read of one speaker's words."""
    if hit.kind is not None or hit.via is not None or hit.path.startswith(PAGES):
        return False
    return speaker(hit.text.split("\n", 1)[0]) is not None and speakers(hit.text) <= 1


def reorder(
    query: Query, hits: Sequence[Hit], depth: int, keep: int = 0, model: Model = MODEL
) -> list[Hit]:
    """``hits`` with the messages (``is_message``) among its first ``depth`` re-ordered by
    ``model`` among the places they hold (best first; a tie keeps the earlier place); every other
    hit, and the first ``keep`` (the entity's page that leads a question about the entity:
    pipeline.py), stay where they are."""
    slots = [i for i in range(keep, min(depth, len(hits))) if is_message(hits[i])]
    if len(slots) < 2:
        return list(hits)
    a = asked(query)
    best = max((h.score for h in hits), default=0.0)
    value = {i: model.score(features(a, hits[i].text, i + 1, hits[i].score, best)) for i in slots}
    moved = sorted(slots, key=lambda i: (-value[i], i))
    out = list(hits)
    for slot, i in zip(slots, moved, strict=True):
        out[slot] = hits[i]
    return out


# The forms ``form_first`` reads: a time and a number are told by their words and digits alone,
# a cause by the words that state one (``_STATED_CAUSE``, rrf-v20); a place or a name is read by
# capitals and prepositions, too loosely to move a line that no model weighs.
_FORM_FIRST = {"when": "time", "count": "number", "why": "cause"}

# The forms whose stated pattern above is the whole reading (rrf-v20): a clock time ("fell over
# at 14:10") is a stated time that ``line_features``' broader reading of a time misses, and a
# cause is read by ``_STATED_CAUSE`` alone.
_STATED_ALONE = {"when", "why"}

# rrf-v20: among the units that hold what is asked, the Retain facts before the notes' lines.
FACTS_FIRST = True

# A cause a note states outright: "because", "root cause", "caused by", "due to", "the reason",
# "thanks to", "as a result of", "led to", "owing to". Not "since" (a time as often as a cause)
# nor "so" (a purpose or a filler): "why did the API go down?" is answered by the incident's
# "Root cause: the pool was capped at 10", not by a to-do next to the API's name (rrf-v20).
_STATED_CAUSE = re.compile(
    r"(?i:\b(?:because|cause[sd]?|due\s+to|reasons?|thanks\s+to|as\s+a\s+result|led\s+to"
    r"|owing\s+to)\b)"
)


# A day or a time a note states outright: a date ("2026-11-27", "27/11", "the 14th", "Nov 27"),
# a clock time, a weekday or a month by its full name ("may" only as "May"). A line's "today",
# "yesterday" or "last week" is the day of the log that holds it, which every line of that log
# shares: in notes kept from chats, moving such a line before a fact about the same event lost
# the fact's first place (benchmarks/analysis.md, rrf-v19).
_STATED_DAY = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b|\b\d{1,2}:\d{2}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|(?i:\b(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?\s+\d)"
    r"|(?i:\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)"
    r"|(?i:\b(?:january|february|march|april|june|july|august|september|october|november|december)\b)"
    r"|\bMay\b"
)


def holds_asked(a: AskedFor, text: str) -> bool:
    """Whether ``text`` holds what the question asks by its form (``_FORM_FIRST``: a day or a
    time it states outright for "when", ``_STATED_DAY``; a number for "how many / how long"; a
    cause it states outright for "why", ``_STATED_CAUSE``) and some of its topic words or names."""
    if a.form == "when" and not _STATED_DAY.search(text):
        return False
    if a.form == "why" and not _STATED_CAUSE.search(text):
        return False
    f = line_features(a, text)
    form = a.form in _STATED_ALONE or bool(f["answers_form"])
    return form and (f["content_share"] > 0 or bool(f["names_asked"]))


def is_unsaid(hit: Hit) -> bool:
    """A unit no one said that ``form_first`` may move: a Retain fact or a note's line (no
    message, no page line, not reached through a link)."""
    if hit.via is not None or hit.path.startswith(PAGES):
        return False
    return hit.kind is not None or not is_message(hit)


def form_first(query: Query, hits: Sequence[Hit], depth: int, keep: int = 0) -> list[Hit]:
    """rrf-v19: ``hits`` with the units no one said (``is_unsaid``) among its first ``depth``
    that hold what a "when", "how many / how long" or (rrf-v20) "why" question asks
    (``holds_asked``) moved before those that do not, in the places those units hold; among
    those that hold it, the Retain facts first (rrf-v20); each group keeps its order. Messages
    (``reorder``'s) and the first ``keep`` stay where they are. ``reorder``'s model was fitted on
    messages; a fact or a note's line has no speaker for it to read, and the legs rank a line
    next to the question's words (the neighbour boost, the heading column) with a fact that
    states the date. Only a time, a number or a stated cause is read: they are told by words
    and digits. A fact is what was kept on purpose of what a note's lines tell: "W @Tomasz:
    wants the report by Friday 2026-11-27." over the standup line "Tomasz asked for the report
    by Friday." next to the to-do, which the neighbour boost lifts and a fact never gets."""
    if query.asks not in _FORM_FIRST or query.asks_for_all:
        return list(hits)  # a question asking for all of something keeps its spread
    slots = [i for i in range(keep, min(depth, len(hits))) if is_unsaid(hits[i])]
    if len(slots) < 2:
        return list(hits)
    a = asked(query)
    holds = {i: holds_asked(a, hits[i].text) for i in slots}
    fact = {i: FACTS_FIRST and holds[i] and hits[i].kind is not None for i in slots}
    moved = sorted(slots, key=lambda i: (not holds[i], not fact[i], i))
    out = list(hits)
    for slot, i in zip(slots, moved, strict=True):
        out[slot] = hits[i]
    return out
