"""Fact proposals: what a conversation or a daily log's narrative says that is worth keeping,
proposed as Retain lines for a person to review (``clawmem proposals``), never written as facts.

No language model, no download: a small logistic model over features the conversation itself
gives (FEATURES: which rule of a handful read the sentence, first person, a named day, hedges,
length, how often the nearby messages return to its topic and whether someone else does, whether
it answers a question or brings a topic up, whether it is said to the other person, about the
speaker, about now or lately), its weights fitted on REALTALK's tuning chats by
``python -m benchmarks.suites.proposals --tune`` and shipped here as numbers. The rules give the
kind:

- plans and decisions (W): "I'm going to …", "I'm starting …", "let's go with …", "we decided …";
- what the speaker did or went through (B): "I went …", "I just finished …", "I got …";
- preferences (O): "I love …", "I can't stand …", "I prefer …", "my favourite … is …";
- dated events of the people around them (W): "my sister's wedding is on the 14th", "…'s surgery
  is on …"; any other statement the model keeps is W.

A proposal is a turn (a message, with the same speaker's next messages sent within TURN_GAP
seconds: people type "Im out shopping rn" and "to make a jello salad" as two), or a log's
paragraph: its statements (questions and short lines left out) joined into one line, scored by
its best sentence, whose rule gives the kind. Casual spellings ("im", "ive", "i") are read as
"I'm", "I've", "I" by the rules and the features, and so is an "I" left out at a sentence's start
("Started a pottery class today", _DROPPED_I); the line keeps what was typed. A person
talks about a handful of things worth keeping in a sitting, whatever its length, so each
speaker gets a budget per stretch of talk (BUDGET, below) rather than every message over a
threshold: the model's ranking within a conversation carries over between conversations much
better than its probabilities do. At reflect the embedder reads the turn that comes next after
the budget, and it is proposed too when it reads as an event (turn_reading.py); flush, inside
the PreCompact hook's budget, proposes without that reading. Notes ("before I forget: …") and decisions ("let's go with
…") are proposed whenever read, outside the budget (see _ASKED_TO_KEEP).

A proposal is dated on the day a sentence names when one day is meant (text/timeexpr.py), else
on the day it was said. The speaker, when known (a chat's sender), leads the line as an entity;
people with a page (or the chat's other speaker) who are named in it are its other entities.

Each proposal cites the lines it was said on (``sessions/x.jsonl#L12-L13`` or
``memory/2025-11-12.md#L5-L5``). Its key is the SHA-256 of its Retain line: a proposal with the
same line is the same proposal, whoever says it again (proposal_review.py keeps the keys seen and
rejected, and never proposes again a turn a person accepted or rejected, grown by a message
since the last flush).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from clawmem.markdown.facts import format_fact, is_entity_slug, make_fact
from clawmem.reflect.episodes import sentences
from clawmem.text.redact import redact
from clawmem.text.topics import topic_words

# Which turns are proposed (chosen with `python -m benchmarks.suites.proposals --tune` on
# REALTALK chats 1-5, where a speaker has 1.2 listed events per session on average and none in
# one session of five; reported on chats 6-10, benchmarks/analysis.md): in each stretch of talk,
# each speaker's BUDGET best-scored turns, each at least MIN_CONFIDENCE and at least RELATIVE
# times the stretch's best of that speaker (a second thing said only when nearly as likely as
# the first). Chosen leaving one tuning chat out (weights fitted on the other four): the setting
# of the most recall at a precision of at least 0.50, P 0.507, R 0.590 (top 3 at 0.15: P 0.497,
# R 0.621). At reflect, where the embedder can read turns, the next best turn too (BUDGET + 1)
# when it passes the same bounds and reads as an event (turn_reading.py): on the same folds P
# 0.518 -> 0.515, R 0.605 -> 0.633; a third turn for everyone gave P 0.506, R 0.637.
BUDGET = 2
MIN_CONFIDENCE = 0.15
RELATIVE = 0.5
# A stretch ends at a pause of STRETCH_PAUSE seconds or after STRETCH_MESSAGES messages, so that
# a 2,000-message transcript without pauses still gets a budget per part of it (REALTALK's
# sessions are 32 messages at the median of the tuning chats, 183 at most; the F1 moved by less
# than 0.01 between 40 and no limit).
STRETCH_PAUSE = 6 * 3600
STRETCH_MESSAGES = 60
MIN_CHARS = 15
# A turn: a message and the same speaker's next ones, each sent within TURN_GAP seconds of the one
# before (on the tuning chats 95% of a speaker's consecutive messages are 152 s apart or less),
# up to TURN_CHARS characters. Chosen on REALTALK chats 1-5, leave one chat out (fit on four,
# scored on the fifth): a turn rather than a message as the unit took F1 from 0.507 to 0.547,
# and on chat 5, the one whose long casual sessions look like the held-out chats, P 0.24 -> 0.35,
# R 0.21 -> 0.30; 300 or 600 characters did no better than 400.
TURN_GAP = 600
TURN_CHARS = 400
# A proposal's line is cut only past a turn's length (a single longer message): cut at 300, as
# when a proposal was one message, 82 of the 285 tuning proposals lost their end and 25 the very
# sentence that scored them (their kind and day said by a sentence the line no longer held).
# Chosen on REALTALK chats 1-5, leave one chat out, the same 284 turns: P 0.507 -> 0.518,
# R 0.590 -> 0.605 (benchmarks/analysis.md).
MAX_CHARS = TURN_CHARS

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
            r"|\b(?:I|we) (?:have |'ve |’ve )?(?:decided|agreed|chose|settled on)\b",
            re.I,
        ),
    ),
    (
        "W",
        0.65,
        re.compile(
            r"\b(?:I|we)(?:'m|’m| am|'re|’re| are) (?:starting|going to|gonna|planning|"
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

# Casual spellings of the first person, read as their written forms by the rules and features
# ("im gonna", "Ive been", "i got"): on chat 5 of the tuning chats as many "Im" as "I'm".
_CASUAL = re.compile(
    r"\b(?:(?P<m>[Ii]m)\b|(?P<ve>[Ii]ve)\b"
    r"|(?P<ll>[Ii]ll)\b(?= (?:be|go|have|get|do|see|try|make|take|start))"
    r"|(?P<d>[Ii]d)\b(?= (?:like|love|be|go|rather))|(?P<i>i)\b)"
)
_WRITTEN = {"m": "I'm", "ve": "I've", "ll": "I'll", "d": "I'd", "i": "I"}


# A statement whose "I" is left out, as people write in a chat or a diary ("Started my new job
# today", "Got a flu", "Just woke up", "Been busy all week", "Gonna see a movie tonight"): read
# with its subject ("I started …", "I've been …", "I'm gonna …"), so that the rules and the
# features read it as the speaker's own, as they read the same sentence written out. Only at the
# start of a sentence (after a lead-in such as "oh," or "lol"), and only a verb from these lists:
# a verb in the past that tells something done, "been", or a few ways of saying a plan; not "got
# it" or "got you" (an acknowledgement), nor a bare "-ing" word, which as often starts a sentence
# about something else ("Planning a trip is fun"). On REALTALK's tuning chats 1-5, leaving one
# chat out: P 0.515 -> 0.521, R 0.633 -> 0.641 (benchmarks/analysis.md).
_DROPPED_I = re.compile(
    r"^(?P<lead>\W*(?:(?:and|but|so|oh|well|yeah|yes|lol|haha|ok|okay|also|ugh|wow)[,!.]?\s+)*)"
    r"(?:(?P<did>(?:(?:just|finally|also|recently|actually) )?(?:went|got(?! (?:it|you|ya|that|"
    r"this)\b)|had|made|took|saw|ate|woke|drove|bought|ran|met|came|left|found|began|spent|flew|"
    r"started|finished|tried|visited|watched|played|cooked|baked|moved|booked|passed|failed|"
    r"learned|learnt|joined|signed|ordered|picked|called|celebrated|completed|received|"
    r"graduated|quit|won|lost|adopted|traveled|travelled|slept|worked|stayed|caught|fell|wrote|"
    r"sent|cleaned|walked|hiked|studied|decided|headed|skipped|missed)\b)"
    r"|(?P<been>been\b)"
    r"|(?P<plan>(?:gonna|going to|planning (?:to|on)|heading (?:to|out|home|back)|"
    r"thinking (?:of|about)|working on|leaving (?:for|to|at|now|soon|tomorrow|tonight|today))\b))",
    re.I,
)
_SUBJECT = {"did": "I ", "been": "I've ", "plan": "I'm "}


def _casual(text: str) -> str:
    """``text`` with casual spellings of the first person written out, and a left-out "I" at
    its start put back (_DROPPED_I): what the rules and the features read."""
    m = _DROPPED_I.match(text)
    if m:
        cut = m.end("lead")
        text = text[:cut] + _SUBJECT[m.lastgroup or "did"] + text[cut:]
    return _CASUAL.sub(lambda m: _WRITTEN[m.lastgroup or "i"], text)


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
    at: str | None = None  # when it was said, ISO 8601, if known (a gap starts a new stretch)
    context_only: bool = False  # read for context (the agent's replies), never proposed from


# What the embedder reads of turns (turn_reading.TurnReading): one number a text, higher for an
# event; None when there is no model to read with.
Reading = Callable[[Sequence[str]], "list[float] | None"]


# The features of a candidate sentence, in the order of WEIGHTS. All are computed from the
# conversation itself, in one pass with a sliding window (no embedder: a 2,000-message
# transcript must be read within the PreCompact budget plus a second).
FEATURES = (
    "bias",
    "rule_note",  # which rule of _RULES matched first (none: all zero)
    "rule_preference",
    "rule_decision",
    "rule_plan",
    "rule_did",
    "rule_family",
    "rule_want",
    "rule_past",
    "first_person",  # I, my, we, our ...
    "names_a_day",  # "on the 14th", "next week", "tonight"
    "hedge",  # "I think", "maybe"
    "log_chars",  # log(1 + characters)
    "topic_words",  # log(1 + how many words it is about)
    "echoed",  # log(1 + messages nearby that share a topic word with it)
    "echoed_by_other",  # log(1 + such messages by someone else: the other asks, answers)
    "first_mention",  # no earlier message nearby shares a topic word: it brings a topic up
    "proper_names",  # log(1 + capitalised words past the first)
    "stretch_position",  # log(1 + messages since the conversation started or paused an hour)
    "exclaims",  # ends with "!"
    "answers",  # someone else asked something just before ("what are your plans?")
    "leads_message",  # the first sentence of its message
    "second_person",  # "you", "your": said to the other person, about them
    "self_subject",  # starts with I, my, we: the speaker is what it is about
    "now_or_recent",  # "right now", "rn", "currently", "today", "earlier", "just"
)
# Fitted by `python -m benchmarks.suites.proposals --tune` on REALTALK chats 1-5 (logistic
# regression, label: the sentence matches an event the dataset lists for its speaker and
# session); reported on chats 6-10 (benchmarks/analysis.md). Weights only: nothing of the chats.
WEIGHTS: tuple[float, ...] = (
    -4.690, -0.727, -0.481, 1.214, 2.059, 1.787, 1.512, 1.236, 1.770, 0.811, 0.809, -0.177,
    -0.343, 0.379, 0.487, 0.379, 0.417, 0.504, -0.437, 0.187, 0.590, 0.377, -0.487, 0.067, 0.909,
)  # fmt: skip
_NAMES_A_DAY = FEATURES.index("names_a_day")
# What a person asks a memory to keep, which REALTALK's event lists cannot judge: an explicit
# note ("before I forget: …", "remember: …", "for the record, …") and a decision ("let's go with
# …", "we agreed …", rule 2). The lists name mostly what people did and planned, and two friends
# chatting rarely decide anything, so the fitted model marks these down (a decision in a work log
# scored 0.06). A message whose best sentence is one of these is proposed outside the budget, at
# least at MIN_CONFIDENCE (never above it on their account, so the promotion rule,
# proposal_review.py, never promotes one on a confidence the data did not earn). The note rule's
# looser readings ("now lives", "no longer", "I remember when …") are not asked to keep anything:
# outside the budget, the note rule added 34 proposals on the tuning chats, 1 of them right. Preferences ("I love …")
# are not either: proposed on the rule, they were right 3% of the time on the held-out chats
# (132 proposals, 4 events), so they compete for the budget on the model's score like any other.
_DECISION_RULE = 2
_ASKED_TO_KEEP = re.compile(
    r"\b(?:note that|before I forget|for the record|fyi|heads up)\b"
    r"|\bremember(?: that)?\s*:|^(?:\W*(?:and|also|so|ok|okay|please)\b)*\W*remember\b",
    re.I,
)
# In a talk between two people, "remember, …" is as often advice to the other person as a note
# to keep ("Remember, the key is to keep your hair moisturized", "Remember, practice makes
# perfect, so don't give up") or a pointer back ("remember how I told you about …"): said to
# the listener (you, your; an imperative), a maxim ("it's important to …", "the key is"), or a
# recollection, it is not asked to keep anything, and competes for the budget on its score like
# any other turn. Only between people: to an assistant, "remember: your replies stay short" is
# the very note to keep. On REALTALK's tuning chats 1-5, leaving one chat out: 14 of 24 turns
# proposed outside the budget were such advice, none matching an event; read so, P 0.521 ->
# 0.536, R 0.641 -> 0.637 (benchmarks/analysis.md).
_ADVICE = re.compile(
    r"\b(?:you|your|you're|you’re|yourself|yours)\b"
    r"|^\W*(?:\w+[,:]?\s+)?(?:don['’]t|do not|never|always|try|make sure)\b"
    r"|\bremember(?:ed)? (?:how|when|what|the time|that time|I told|I said|me|us)\b"
    r"|\b(?:it['’]s|it is) (?:always |also |perfectly |totally |really )?(?:important|okay|ok|"
    r"fine|normal|natural|a good idea|best|crucial|essential|worth)\b|\bthe key is\b",
    re.I,
)
_AHEAD_RULES = (2, 3, 6)  # decisions, plans, wants: the days they name are to come
_WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b")
WINDOW = 15  # messages either side that count as "nearby"
PAUSE_SECONDS = 3600  # a pause this long starts a new stretch of the conversation
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I’m|I've|I’ve|I'll|I’ll|I'd|my|me|we|our|us)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you’re|yours)\b", re.I)
_SELF_SUBJECT = re.compile(r"^\W*(?:I|I'm|I’m|I've|I’ve|I'll|I’ll|I'd|my|we|our)\b", re.I)
_NOW_OR_RECENT = re.compile(
    r"\b(?:today|yesterday|tonight|this morning|last night|earlier|later|tomorrow|this weekend|"
    r"last weekend|recently|just|right now|rn|currently|at the moment|atm)\b",
    re.I,
)
_PROPER = re.compile(r"(?<=\s)[A-Z][a-z]{2,}")


@dataclass(frozen=True)
class _Sentence:
    at: int  # index of its message in the conversation
    whole: str  # the sentence, whitespace collapsed
    text: str  # without its lead ("ok, so ...")
    rule: int  # index into _RULES, -1: none
    topics: frozenset[str]


def _sentences_of(said: Said) -> list[tuple[str, str, int, str]]:
    """(sentence, its statement without a lead-in, its rule, the sentence with casual spellings
    read as written: ``_casual``) of each sentence worth scoring."""
    out = []
    for sentence in sentences(said.text):
        whole = " ".join(sentence.split())
        s = _LEAD.sub("", whole).strip()
        if len(s) < MIN_CHARS or s.endswith("?"):
            continue
        read = _casual(whole)
        rule = next((i for i, r in enumerate(_RULES) if r[2].search(read)), -1)
        out.append((whole, s, rule, read))
    return out


def _after_pause(conversation: list[Said], seconds: float) -> list[bool]:
    """For each message, whether at least ``seconds`` passed since the last dated message
    before it (a message with no readable time, or one whose time cannot be compared with the
    last, follows no pause)."""
    from datetime import datetime

    out, last = [], None
    for item in conversation:
        when = None
        if item.at:
            try:
                when = datetime.fromisoformat(item.at.replace("Z", "+00:00"))
            except ValueError:
                when = None
        paused = False
        if when is not None and last is not None:
            try:
                paused = (when - last).total_seconds() >= seconds
            except TypeError:  # one aware, one naive: no pause can be told
                paused = False
        out.append(paused)
        last = when or last
    return out


def _pauses(conversation: list[Said]) -> list[int]:
    """For each message, how many came before it since the conversation started or paused."""
    out, run = [], 0
    for paused in _after_pause(conversation, PAUSE_SECONDS):
        run = 0 if paused else run
        out.append(run)
        run += 1
    return out


def featurize(conversation: list[Said]) -> list[tuple[int, str, str, int, tuple[float, ...]]]:
    """Every candidate sentence of a conversation (in order): (message index, sentence, its
    text without its lead, rule index, features in the order of FEATURES)."""
    import math

    topics = [topic_words(item.text) for item in conversation]
    stretch = _pauses(conversation)
    out = []
    for i, item in enumerate(conversation):
        if item.context_only:
            continue
        answers = 0.0
        for j in range(i - 1, max(-1, i - 4), -1):
            if conversation[j].speaker != item.speaker:
                answers = 1.0 if "?" in conversation[j].text else 0.0
                break
        lead = sentences(item.text)[:1]
        for whole, s, rule, read in _sentences_of(item):
            words = topics[i] if s == item.text else topic_words(s)
            echoed = other = 0
            first = 1.0
            for j in range(max(0, i - WINDOW), min(len(conversation), i + WINDOW + 1)):
                if j == i or not (words & topics[j]):
                    continue
                echoed += 1
                if conversation[j].speaker != item.speaker:
                    other += 1
                if j < i:
                    first = 0.0
            x = [0.0] * len(FEATURES)
            x[0] = 1.0
            if rule >= 0:
                x[1 + rule] = 1.0
            x[9] = 1.0 if _FIRST_PERSON.search(read) else 0.0
            x[10] = 1.0 if _DAY_WORDS.search(s) else 0.0
            x[11] = 1.0 if _HEDGE.search(s) else 0.0
            x[12] = math.log1p(len(s))
            x[13] = math.log1p(len(words))
            x[14] = math.log1p(echoed)
            x[15] = math.log1p(other)
            x[16] = first
            x[17] = math.log1p(len(_PROPER.findall(s)))
            x[18] = math.log1p(stretch[i])
            x[19] = 1.0 if s.endswith("!") else 0.0
            x[20] = answers
            x[21] = 1.0 if lead and " ".join(lead[0].split()) == whole else 0.0
            x[22] = 1.0 if _SECOND_PERSON.search(whole) else 0.0
            x[23] = 1.0 if _SELF_SUBJECT.search(_casual(s)) else 0.0
            x[24] = 1.0 if _NOW_OR_RECENT.search(s) else 0.0
            out.append((i, whole, s, rule, tuple(x)))
    return out


def confidence_of(x: tuple[float, ...]) -> float:
    """The fitted model's probability that a sentence with features ``x`` is worth keeping."""
    import math

    z = sum(w * v for w, v in zip(WEIGHTS, x, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _conversations(said: Iterable[Said]) -> list[list[Said]]:
    """``said`` grouped by the file it was said in (the citation's path), in order, each
    group's messages joined into turns (``turns``)."""
    groups: dict[str, list[Said]] = {}
    for item in said:
        groups.setdefault(item.source.split("#", 1)[0], []).append(item)
    return [turns(group) for group in groups.values()]


def _seconds(a: str | None, b: str | None) -> float | None:
    """Seconds from ``a`` to ``b`` (ISO 8601), or None when either cannot be read or compared."""
    from datetime import datetime

    if not a or not b:
        return None
    try:
        return (
            datetime.fromisoformat(b.replace("Z", "+00:00"))
            - datetime.fromisoformat(a.replace("Z", "+00:00"))
        ).total_seconds()
    except (ValueError, TypeError):
        return None


def turns(conversation: list[Said]) -> list[Said]:
    """One conversation's messages with each speaker's run of consecutive messages joined into
    one (each sent within TURN_GAP seconds of the one before, up to TURN_CHARS characters),
    citing the lines from the first's to the last's. Only dated messages of a speaker's own
    (not context) are joined: a log's paragraphs, which have no time, stay apart."""
    out: list[Said] = []
    last_at: str | None = None
    for item in conversation:
        prev = out[-1] if out else None
        gap = _seconds(last_at, item.at) if prev is not None else None
        if (
            prev is not None
            and gap is not None
            and 0 <= gap <= TURN_GAP
            and prev.speaker == item.speaker
            and not prev.context_only
            and not item.context_only
            and len(prev.text) + len(item.text) < TURN_CHARS
            and "#L" in item.source
        ):
            joint = prev.text.rstrip()
            joint += (" " if joint[-1:] in ".!?" else ". ") + item.text.lstrip()
            end = item.source.rsplit("-L", 1)[-1]
            source = prev.source.rsplit("-L", 1)[0] + "-L" + end
            out[-1] = Said(joint, source, prev.day, prev.speaker, prev.at, False)
        else:
            out.append(item)
        last_at = item.at
    return out


@dataclass(frozen=True)
class _Scored:
    at: int  # index of the message in its conversation
    confidence: float  # its best sentence's, rounded to 2 places
    rule: int  # the best sentence's rule, -1: none
    text: str  # its statements joined, without the first one's lead
    best: str  # the best sentence (the day it names dates the proposal)
    names_a_day: bool
    asked: bool  # the best sentence is a note or a decision: proposed outside the budget


def _scored_messages(conversation: list[Said]) -> list[_Scored]:
    """Every message of a conversation with a candidate sentence, scored by its best one."""
    by_message: dict[int, list[tuple[float, str, int, bool, bool]]] = {}
    # Two people talking (the other not an assistant, whose replies are context): a note may be
    # advice to the other (_ADVICE).
    people = len({item.speaker for item in conversation if not item.context_only}) > 1
    for i, whole, s, rule, x in featurize(conversation):
        note = bool(_ASKED_TO_KEEP.search(whole)) and not (people and _ADVICE.search(whole))
        asked = rule == _DECISION_RULE or note
        conf = max(confidence_of(x), MIN_CONFIDENCE if asked else 0.0)
        by_message.setdefault(i, []).append((conf, s, rule, bool(x[_NAMES_A_DAY]), asked))
    out = []
    for i, found in by_message.items():
        conf, best, rule, day, asked = max(found, key=lambda f: f[0])
        text = " ".join(f[1] for f in found)
        out.append(_Scored(i, round(conf, 2), rule, text, best, day, asked))
    return out


def _build(item: Said, m: _Scored, names: tuple[str, ...]) -> Proposal:
    """The proposal of a scored message: its line dated, redacted, its entities found (only for
    those proposed: most messages of a long transcript are not)."""
    kind = _RULES[m.rule][0] if m.rule >= 0 else "W"
    day = item.day
    if m.names_a_day:
        day = _day_spoken_of(m.best, item.day, ahead=m.rule in _AHEAD_RULES) or day
    s = m.text
    if len(s) > MAX_CHARS:
        s = s[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    text = redact(s[0].upper() + s[1:])
    return Proposal(
        kind,
        text,
        _entities(text, item.speaker, names),
        m.confidence,
        day.isoformat() if day else "",
        item.source,
    )


def scored(
    said: Iterable[Said], names: Iterable[str] = (), at_least: float = 0.0
) -> list[Proposal]:
    """Every message of ``said`` with a candidate sentence and a confidence of at least
    ``at_least`` as a proposal (the default: all of them), in order, budget or not."""
    names = tuple(names)
    out = []
    for conversation in _conversations(said):
        for m in _scored_messages(conversation):
            if m.confidence >= at_least:
                out.append(_build(conversation[m.at], m, names))
    return out


def _stretches(conversation: list[Said]) -> list[int]:
    """For each message, the stretch of talk it belongs to (a pause of STRETCH_PAUSE seconds or
    STRETCH_MESSAGES messages starts the next)."""
    out, part, run = [], 0, 0
    for paused in _after_pause(conversation, STRETCH_PAUSE):
        if paused or run >= STRETCH_MESSAGES:
            part, run = part + 1, 0
        out.append(part)
        run += 1
    return out


def selected(
    said: Iterable[Said], names: Iterable[str] = (), read: Reading | None = None
) -> list[Proposal]:
    """What is proposed from ``said``, in order: in each stretch of each conversation, each
    speaker's BUDGET best messages (at least MIN_CONFIDENCE, at least RELATIVE times that
    speaker's best there), and every note or decision (_ASKED_TO_KEEP, _DECISION_RULE). With
    ``read`` (turn_reading.TurnReading: what the embedder reads of a turn), the next best one
    too when it would pass those bounds and reads as an event. A line said in two conversations
    is here twice (the promotion rule counts them)."""
    names = tuple(names)
    out: list[tuple[int, int, Proposal]] = []
    third: list[tuple[int, int, Proposal, str]] = []  # to be read: (conversation, at, it, text)
    for c, conversation in enumerate(_conversations(said)):
        part = _stretches(conversation)
        groups: dict[tuple[int, str | None], list[_Scored]] = {}
        for m in _scored_messages(conversation):
            groups.setdefault((part[m.at], conversation[m.at].speaker), []).append(m)
        for group in groups.values():
            ranked = sorted(group, key=lambda m: (-m.confidence, m.at))
            top = ranked[0].confidence
            for n, m in enumerate(ranked):
                passes = m.confidence >= max(MIN_CONFIDENCE, RELATIVE * top)
                if (n < BUDGET and passes) or (m.asked and m.confidence >= MIN_CONFIDENCE):
                    out.append((c, m.at, _build(conversation[m.at], m, names)))
                elif n == BUDGET and passes and read is not None:
                    item = conversation[m.at]
                    third.append((c, m.at, _build(item, m, names), item.text))
    if third and read is not None:
        from clawmem.reflect.turn_reading import is_event

        readings = read([t[3] for t in third])
        if readings is not None:
            kept = [t for t, r in zip(third, readings, strict=True) if is_event(r)]
            out += [(c, at, p) for c, at, p, _text in kept]
    return [p for _c, _at, p in sorted(out, key=lambda t: (t[0], t[1]))]


def candidates(said: Said, names: Iterable[str] = ()) -> list[Proposal]:
    """The candidate of one line said on its own (no conversation around it), if any."""
    return scored([said], names)


def propose(
    said: Iterable[Said], names: Iterable[str] = (), read: Reading | None = None
) -> list[Proposal]:
    """The proposals of ``said`` (``selected``, with ``read`` if given), each line once, in
    order."""
    seen: set[str] = set()
    out = []
    for p in selected(said, names, read):
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


# A person named as someone's relation ("my sister Anna", "our neighbour Tomás") or by an
# event of theirs ("Anna's wedding", "Mom's surgery"): an entity even without a page, so that
# reflect gives the people who are only talked about a page of what was said about them.
_RELATION_NAME = re.compile(
    r"\b(?i:my|our|his|her|their)\s+(?i:mom|mum|mother|dad|father|sister|brother|wife|husband|"
    r"partner|girlfriend|boyfriend|son|daughter|friend|best friend|boss|colleague|coworker|"
    r"neighbou?r|grandma|grandpa|grandmother|grandfather|cousin|aunt|uncle|roommate|teacher|"
    r"niece|nephew|fianc[eé]e?)\s*,?\s+(?P<name>[A-Z][a-z\u00e0-\u00ff]{2,})\b"
    r"|\b(?P<owner>[A-Z][a-z\u00e0-\u00ff]{2,})['’]s (?:surgery|birthday|wedding|appointment|"
    r"exam|interview|flight|party|graduation|trip|deadline|funeral|operation|recital|concert)\b"
)
_NOT_NAMES = frozenset({"The", "This", "That", "Today", "Tomorrow", "Tonight", "Everyone"})


def _entities(text: str, speaker: str | None, names: tuple[str, ...]) -> tuple[str, ...]:
    found = [speaker] if speaker and is_entity_slug(speaker) else []
    for m in _RELATION_NAME.finditer(text):
        name = m.group("name") or m.group("owner")
        if name not in found and name not in _NOT_NAMES and is_entity_slug(name):
            found.append(name)
    for name in names:
        if name in found or not is_entity_slug(name):
            continue
        pattern = re.escape(name).replace(r"\-", r"[-\s]")
        if re.search(rf"(?<![\w-]){pattern}(?![\w-])", text, re.I):
            found.append(name)
    return tuple(found)


# A sentence that speaks of what is to come, though its rule read something else ("I still have
# back pain, but I managed to plan a trip on the 10th of February", "my flight is on March 3"):
# the day it names without a year is the next one, as for a plan's.
_FORWARD = re.compile(
    r"\b(?:will|(?:I|we|you|he|she|they)['’]ll|going to|gonna|plan(?:s|ned|ning)?|booked|"
    r"scheduled|upcoming|can['’]t wait|looking forward|(?:is|are|['’]s) on)\b",
    re.I,
)
# A phrase that places its day in the past whatever the sentence says ("last Monday", "this past
# Friday", "two weeks ago"), or that names the year.
_BACKWARD = re.compile(r"\b(?:last|past|ago|yesterday|earlier|\d{4})\b", re.I)
# "On the 14th": a day of a month the time parser leaves unread (no month named), when what
# follows it ends the phrase ("on the 14th.", "on the 14th at noon"), not "on the 5th floor".
_BARE_ORDINAL = re.compile(
    r"\bon the (\d{1,2})(?:st|nd|rd|th)(?=\s*(?:$|[.,;:!?)]|(?:at|and|in|for|so|but|because|"
    r"when|which|if|then|with|until|till|or|morning|afternoon|evening|night)\b))",
    re.I,
)


def _day_spoken_of(sentence: str, said_on: date | None, ahead: bool = False) -> date | None:
    """The one day a sentence names ("on the 14th", "tomorrow"), relative to when it was said.
    ``ahead``: a plan or decision, so a day named without its year ("a dry run on Monday", "on
    the 10th of February") is the next one, not the last one the time parser (written for
    questions about the past) would take; a sentence that speaks of what is to come (_FORWARD)
    is read so too."""
    if said_on is None:
        return None
    from datetime import timedelta

    from clawmem.text.timeexpr import match_time_hint

    ahead = ahead or bool(_FORWARD.search(sentence))
    try:
        hit = match_time_hint(sentence, said_on)
    except (ValueError, OverflowError):
        return None
    if hit is None:
        return _bare_ordinal(sentence, said_on, ahead)
    span, start, end = hit
    if span.start is None or span.start != span.end:
        return None
    phrase = sentence[start:end].casefold()
    if not ahead or span.start >= said_on or _BACKWARD.search(phrase):
        return span.start
    if _WEEKDAY.search(phrase):
        return span.start + timedelta(days=7)
    return _next_yearly(span.start, said_on)


def _next_yearly(day: date, said_on: date) -> date:
    """``day``'s month and day in the first year that puts it on or after ``said_on`` (29
    February in a year without it: 28 February)."""
    for year in (said_on.year, said_on.year + 1):
        try:
            moved = day.replace(year=year)
        except ValueError:
            moved = day.replace(year=year, day=28)
        if moved >= said_on:
            return moved
    return day


def _bare_ordinal(sentence: str, said_on: date, ahead: bool) -> date | None:
    """The day "on the 14th" means: that day of the month it was said in, or of the next month
    (ahead) or the last (not) when that day is on the wrong side of the day it was said."""
    m = _BARE_ORDINAL.search(sentence)
    if m is None:
        return None
    n = int(m.group(1))
    year, month = said_on.year, said_on.month
    for _ in range(3):  # a month without that day (the 31st) is skipped
        try:
            day = date(year, month, n)
        except ValueError:
            day = None
        if day is not None and (day >= said_on if ahead else day <= said_on):
            return day
        month += 1 if ahead else -1
        if month == 13:
            year, month = year + 1, 1
        elif month == 0:
            year, month = year - 1, 12
    return None
