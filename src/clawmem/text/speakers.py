"""Who says a line: the one rule for a line that starts with a speaker's label ("Kate: …", "- Kate:
…", "**Kate:** …", "[10:32] Kate: …", "- [[Kate]]: …", a transcript's "User: …").

Chunking reads it to tell a talk kept as one paragraph, one message a line, from a record's
fields (``markdown/chunking.py``); recall reads it for who said a hit (``recall/aggregate.py``:
the person boost, a message that only asks, how many people's lines a unit holds, the messages
``answer_match`` re-orders). The two read one rule here: before, each had its own, and a line
one of them read as a message the other did not ("**Kate:** …" was a talk's line to chunking and
no one's to recall; "Background: …" someone's to recall).

A label is a speaker's when it is a name (``is_name``): one word, or up to three capitalised ones
("John Zhang", "Ana de Souza"), never a common section or field label ("Background:", "Summary:",
"Next steps:", "last_updated:", "payments-service:"), which a structured abstract, a record or a
note's headings put at the start of a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clawmem.text.textnorm import fold

# A list item's marker, a task's box, a time stamp, a transcript's role quoting a line ("User:
# Kate: …": the role is who typed it, the name who said it), bold or a link to the person's page
# around the name, a colon (inside the bold, or after a space), and the message on the same line.
_LINE = re.compile(
    r"[ \t]*(?P<item>[-*+][ \t]+)?(?:\[[ xX]\][ \t]+)?(?:\[[^\]\n]{1,32}\][ \t]*)?"
    r"(?P<role_said>(?P<role>User|Assistant):[ \t]+(?=\S+:\s))?"
    r"(?:\*\*|__|\[\[(?:[^\]|\n]*\|)?)?(?P<name>[^\W\d_][\w.'\u2019 -]{0,40}?)(?:\*\*|__|\]\])?"
    r"[ \t]?:(?:\*\*|__)?[ \t]+(?=\S)"
)

# Labels that open a line as a section or a field, not as someone speaking: general English
# headings of notes, records, structured abstracts, recipes, changelogs and to-do lists. A label
# whose first word is one of these is none ("Action items:", "Due date:").
SECTION_LABELS = frozenset(
    """abstract background introduction intro summary overview tldr tl;dr context purpose aim aims
    objective objectives goal goals scope method methods methodology approach design setting
    settings participants patients subjects population interventions intervention measurements
    measures outcome outcomes result results findings finding discussion conclusion conclusions
    interpretation implications limitations significance importance keywords hypothesis evidence
    claim rationale observation observations analysis data sources source references reference
    note notes nb ps fyi edit update updates status decision decisions owner owners action actions
    todo to-do fix fixed fixes bug bugs issue issues problem problems solution solutions question
    questions answer answers reason reasons cause effect idea ideas plan plans next step steps task
    tasks reminder reminders lesson lessons learned takeaway takeaways tip tips hint hints warning
    warnings caution important example examples definition meaning usage translation quote title
    subject topic topics agenda attendees date dates time location place address phone email url
    link links website tag tags category categories type kind priority deadline due author version
    release changes added removed deprecated security description details detail pros cons risk
    risks cost costs price total budget requirements assumptions constraints dependencies impact
    metrics timeline milestone milestones blockers blocker done wip review feedback comment
    comments ingredients instructions directions recipe output input error errors log result
    re cc bcc from to monday tuesday wednesday thursday friday saturday sunday weekend today
    tonight yesterday tomorrow morning afternoon evening night breakfast lunch dinner fatal info debug
    warn trace alert severity level confidence statement history people mean median average count
    score rating""".split()
)

# Lower-case words inside a person's name ("Ludwig van Beethoven", "Ana de Souza").
_PARTICLES = frozenset("van von der den de del della da di du la le bin ibn al el dos das".split())

# A dotted identifier ("httpx.ReadTimeout", "clinicaltrials.gov": not "J.R.R." nor "Dr. Li") or
# an exception's name ("TypeError: …", "ValueError: …") before a colon is a program's output.
_NOT_A_NAME = re.compile(r"[a-z\d]\.\w|\.[a-z]|(?i:error|exception)$")

# A name has at most this many words; a longer label before a colon is a sentence ("He wants
# errors explained as: …").
NAME_WORDS = 3


def is_name(label: str) -> bool:
    """Whether ``label`` (the text before a line's colon) names a person or a role: one word
    ("Kate", "ben", "User"), or up to ``NAME_WORDS`` words each capitalised but a name's
    particles and a number ("Speaker 2"); no "_" ("last_updated"), a "-" only between
    capitalised parts ("Jean-Luc", not "payments-service"), no dotted identifier or exception's
    name; and not a common section or field label (``SECTION_LABELS``)."""
    words = label.split()
    if not words or len(words) > NAME_WORDS or "_" in label or _NOT_A_NAME.search(label):
        return False
    if fold(words[0]).rstrip(".") in SECTION_LABELS:
        return False
    if len(words) > 1 and not all(
        w[:1].isupper() or (i and (w in _PARTICLES or w.isdigit())) for i, w in enumerate(words)
    ):
        return False
    return all(p[:1].isupper() for w in words if "-" in w for p in w.split("-"))


@dataclass(frozen=True)
class Said:
    name: str  # who said it, as written ("Kate", "User")
    start: int  # where the message starts in the line (after the label)
    item: bool  # the line is a list item ("- Kate: …", a daily log's message)


def said(line: str) -> Said | None:
    """Who says ``line`` (a line, or a unit's text: its first line is read), and where the
    message starts; None when it starts with no speaker's label. A transcript's quoted label
    that is no name ("User: Summary: …") leaves the role as the speaker."""
    m = _LINE.match(line)
    if m is None:
        return None
    name = m.group("name").strip()
    if is_name(name):
        return Said(name, m.end(), m.group("item") is not None)
    if m.group("role") is not None:
        return Said(m.group("role"), m.end("role_said"), m.group("item") is not None)
    return None
