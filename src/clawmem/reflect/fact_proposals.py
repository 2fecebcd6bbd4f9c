"""Fact proposals: what a conversation or a daily log's narrative says that is worth keeping,
proposed as Retain lines for a person to review (``clawmem proposals``), never written as facts.

No model: rules over first-person statements, each rule a kind and a base confidence.

- plans and decisions (W): "I'm going to …", "I'm starting …", "let's go with …", "we decided …";
- what the speaker did or went through (B): "I went …", "I just finished …", "I got …";
- preferences (O): "I love …", "I can't stand …", "I prefer …", "my favourite … is …";
- dated events of the people around them (W): "my sister's wedding is on the 14th", "…'s surgery
  is on …".

A statement that names a day ("on the 14th", "next Tuesday", "in March") is more likely an event
worth keeping: its confidence goes up, and the proposal is dated on that day when one day is
meant (text/timeexpr.py), else on the day it was said. Questions, short lines and hedges ("I
think", "maybe") are left out or marked down. The speaker, when known (a chat's sender), leads
the line as an entity; people with a page (or the chat's other speaker) who are named in the
sentence are its other entities.

Each proposal cites the line it was said on (``sessions/x.jsonl#L12-L12`` or
``memory/2025-11-12.md#L5-L5``). Its key is the SHA-256 of its Retain line: a proposal with the
same line is the same proposal, whoever says it again (proposal_review.py keeps the keys seen and
rejected).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from clawmem.markdown.facts import format_fact, is_entity_slug, make_fact
from clawmem.reflect.episodes import sentences
from clawmem.text.redact import redact

# The threshold below which a candidate is not proposed. Chosen on REALTALK chats 1-5 with
# `python -m benchmarks.suites.proposals --tune` (benchmarks/analysis.md); reported on chats 6-10.
MIN_CONFIDENCE = 0.5
MAX_CHARS = 300
MIN_CHARS = 15

# (kind, base confidence, pattern). The first rule that matches a sentence decides its kind.
_RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        "W",
        0.7,
        re.compile(
            r"\b(?:remember|note that|before I forget|for the record|fyi|heads up)\b"
            r"|\bnow (?:lives|runs|is|uses)\b|\bmoved to\b|\bchanged to\b|\bno longer\b",
            re.I,
        ),
    ),
    (
        "O",
        0.6,
        re.compile(
            r"\b(?:I|we)(?: really| absolutely| just)? (?:love|loved|hate|prefer|enjoy|adore|"
            r"dislike|can't stand|cannot stand|can’t stand|am obsessed with|am a (?:big )?fan of)\b"
            r"|\bmy fav(?:ou?rite|e)\b|\bI'd rather\b|\bI’d rather\b",
            re.I,
        ),
    ),
    (
        "W",
        0.65,
        re.compile(
            r"\blet['’]s (?:go with|use|keep|do)\b"
            r"|\b(?:I|we) (?:have |'ve |’ve )?(?:decided|agreed|chose|settled on)\b"
            r"|\b(?:I|we)(?:'m|’m| am|'re|’re| are) (?:starting|going to|gonna|planning|"
            r"thinking of|moving|taking|joining|applying|signing up|flying|traveling|travelling|"
            r"visiting|getting|having|hosting|working on|learning)\b"
            r"|\b(?:I|we)(?:'ll|’ll| will) (?:be|start|go|move|take|join|visit|fly|get|have)\b"
            r"|\b(?:I|we) plan(?:ned)? (?:to|on)\b|\bmy plan is\b",
            re.I,
        ),
    ),
    (
        "B",
        0.55,
        re.compile(
            r"\b(?:I|we) (?:just |finally |recently |also )?(?:went|visited|started|finished|got|"
            r"bought|moved|met|joined|graduated|took|made|won|lost|quit|signed up|booked|"
            r"adopted|passed|failed|tried|learned|learnt|found|saw|watched|played|cooked|"
            r"baked|ran|traveled|travelled|celebrated|completed|received|had)\b"
            r"|\b(?:I|we)(?:'ve|’ve| have) (?:been|just|finally|started|got|gotten)\b",
            re.I,
        ),
    ),
    (
        "W",
        0.6,
        re.compile(
            r"\b(?:my|our) (?:mom|mum|mother|dad|father|sister|brother|wife|husband|partner|"
            r"girlfriend|boyfriend|son|daughter|friend|boss|grandma|grandpa|family|cousin|aunt|"
            r"uncle)\b"
            r"|\b\w+['’]s (?:surgery|birthday|wedding|appointment|exam|interview|flight|party|"
            r"graduation|trip|deadline)\b",
            re.I,
        ),
    ),
)
# Broader, weaker readings of the same kinds, after the rules above: a plan or want, something
# going on now ("I'm redecorating my living room"), something done (a past tense), something had.
_RULES += (
    (
        "W",
        0.55,
        re.compile(
            r"\bI (?:wanna|want to|have a plan|hope to|need to|intend to)\b"
            r"|\bI(?:'m|’m| am|m) (?:gonna|about to|planning|thinking about|leaving)\b",
            re.I,
        ),
    ),
    (
        "B",
        0.5,
        re.compile(
            r"\bI (?:just |also |already |recently |finally |actually )?(?:\w{3,}ed|read|cut|ate|"
            r"did|wrote|drove|flew|spent|sold|left|began|bought|brought|caught|fell|kept|built|"
            r"sent)\b|\bI was (?:fired|hired|promoted|accepted|invited)\b"
            r"|\bI(?:'m|’m| am|m) (?:also |actually |currently |just |still )?(?!feeling\b)"
            r"\w{3,}ing\b"
            r"|\bI have (?:a|an|another|my|some) \w+",
            re.I,
        ),
    ),
)
_HEDGE = re.compile(r"\b(?:I think|maybe|probably|might|not sure|I guess|I wonder)\b", re.I)
_DAY_WORDS = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this (?:week|weekend|month|year)|next "
    r"(?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)|\d{1,2}(?:st|nd|rd|th)|winter|summer|spring|fall|break|holiday|weekend)\b",
    re.I,
)
_LEAD = re.compile(
    r"^(?:(?:and|also|so|ok|okay|oh|well|yeah|yes|haha|lol|good|great)[,.!]?\s+)*"
    r"(?:(?:please\s+)?(?:remember|note|before I forget|for the record|fyi|heads up)[:,]\s+)?",
    re.I,
)


@dataclass(frozen=True)
class Proposal:
    """One proposed fact: a Retain line, its confidence, its day and the line it cites."""

    kind: str  # W, B, O or S
    text: str  # the statement, one line, redacted
    entities: tuple[str, ...]
    confidence: float  # 0-1, how likely it is worth keeping (rounded to 2 places)
    day: str  # YYYY-MM-DD: the day it speaks of, else the day it was said
    source: str  # the citation of the line it was said on, path#Lline-Lline

    @property
    def line(self) -> str:
        """The Retain line a person accepts (opinions carry their confidence, as the grammar
        allows only for them)."""
        conf = self.confidence if self.kind == "O" else None
        return format_fact(make_fact(self.kind, self.text, self.entities, conf))

    @property
    def key(self) -> str:
        """SHA-256 of the Retain line: the same line proposed again is the same proposal."""
        return hashlib.sha256(self.line.encode("utf-8")).hexdigest()

    @property
    def id(self) -> str:
        """The short id ``clawmem proposals accept`` takes."""
        return self.key[:10]


@dataclass(frozen=True)
class Said:
    """One line of a conversation or a log, as the extractor reads it."""

    text: str
    source: str  # path#Lline-Lline
    day: date | None  # when it was said
    speaker: str | None = None  # the person who said it (an entity slug), None: unknown


def candidates(said: Said, names: Iterable[str] = ()) -> list[Proposal]:
    """Every sentence of ``said`` that a rule matches, with its confidence (no threshold)."""
    out = []
    names = tuple(names)
    for sentence in sentences(said.text):
        whole = " ".join(sentence.split())
        s = _LEAD.sub("", whole).strip()
        if len(s) < MIN_CHARS or s.endswith("?"):
            continue
        rule = next((r for r in _RULES if r[2].search(whole)), None)
        if rule is None:
            continue
        kind, conf = rule[0], rule[1]
        day = said.day
        if _DAY_WORDS.search(s):
            conf += 0.15
            day = _day_spoken_of(s, said.day) or day
        if _HEDGE.search(s):
            conf -= 0.2
        if len(s) > 60:
            conf += 0.05
        if len(s) > MAX_CHARS:
            s = s[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
        text = redact(s[0].upper() + s[1:])
        entities = _entities(text, said.speaker, names)
        out.append(
            Proposal(
                kind,
                text,
                entities,
                round(max(0.0, min(1.0, conf)), 2),
                day.isoformat() if day else "",
                said.source,
            )
        )
    return out


def propose(said: Iterable[Said], names: Iterable[str] = ()) -> list[Proposal]:
    """The proposals of ``said`` at or above ``MIN_CONFIDENCE``, each line once, in order."""
    names = tuple(names)
    seen: set[str] = set()
    out = []
    for item in said:
        for p in candidates(item, names):
            if p.confidence >= MIN_CONFIDENCE and p.key not in seen:
                seen.add(p.key)
                out.append(p)
    return out


def _entities(text: str, speaker: str | None, names: tuple[str, ...]) -> tuple[str, ...]:
    found = [speaker] if speaker and is_entity_slug(speaker) else []
    for name in names:
        if name in found or not is_entity_slug(name):
            continue
        pattern = re.escape(name).replace(r"\-", r"[-\s]")
        if re.search(rf"(?<![\w-]){pattern}(?![\w-])", text, re.I):
            found.append(name)
    return tuple(found)


def _day_spoken_of(sentence: str, said_on: date | None) -> date | None:
    """The one day a sentence names ("on the 14th", "tomorrow"), relative to when it was said."""
    if said_on is None:
        return None
    from clawmem.text.timeexpr import match_time_hint

    try:
        hit = match_time_hint(sentence, said_on)
    except (ValueError, OverflowError):
        return None
    if hit is None:
        return None
    span = hit[0]
    return span.start if span.start is not None and span.start == span.end else None
