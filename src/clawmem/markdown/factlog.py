"""Every Retain fact of a workspace with its source and date, read fresh from the Markdown.

Reflect works from this list rather than from the index: the Markdown is the source of truth, the
list is cheap to build (one pass of ``extract_facts`` per file) and it does not depend on whether an
embedding model happens to be installed, so two machines reflecting the same git checkout write the
same pages.

A fact's ``day`` is the day it was *recorded*: its daily log's date (``memory/2025-11-27.md``).
Ordering evidence by when it was learned is what opinions and supersession need; the days a
statement is *about* ("in Marrakech Nov 27–Dec 1") are kept apart in ``valid_from``/``valid_to``.
A fact outside a daily log has no recorded day and takes the start of the period it states, if any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from pathlib import Path

from clawmem.markdown.facts import Fact, extract_facts
from clawmem.markdown.workspace import Scan
from clawmem.text.textnorm import fold, tokens
from clawmem.text.timeexpr import date_from_path, fact_validity
from clawmem.text.topics import topic_words

_NEGATION = frozenset("not no never nothing none neither nor against without".split())
_NT = re.compile(r"n['’]t\b")


def is_negated(text: str) -> bool:
    """Whether a statement is phrased negatively ("not worth it", "doesn't", "no longer")."""
    folded = fold(text)
    return bool(_NT.search(folded)) or any(w in _NEGATION for w in tokens(folded))


@dataclass(frozen=True)
class LoggedFact:
    fact: Fact
    path: str  # workspace-relative, POSIX
    day: date | None  # the day it was recorded (see the module docstring)
    valid_from: date | None = None
    valid_to: date | None = None
    order: int = 0  # position in the workspace (path, line): a stable tie-breaker

    @property
    def kind(self) -> str:
        return self.fact.kind

    @property
    def content(self) -> str:
        return self.fact.content

    @property
    def entities(self) -> tuple[str, ...]:
        return self.fact.entities

    @property
    def confidence(self) -> float | None:
        return self.fact.confidence

    @property
    def line(self) -> int:
        return self.fact.line

    @property
    def cite(self) -> str:
        """``memory/2025-11-27.md#L26``: the line a person or `clawmem get` can open."""
        return f"{self.path}#L{self.fact.line}"

    @cached_property
    def folded_entities(self) -> frozenset[str]:
        return frozenset(e.casefold() for e in self.fact.entities)

    @cached_property
    def words(self) -> frozenset[str]:
        return topic_words(self.fact.content, self.fact.entities)

    @property
    def sort_key(self) -> tuple:
        """Oldest first; undated facts before dated ones, then by position in the workspace."""
        return (self.day or date.min, self.order)

    @property
    def identity(self) -> tuple:
        """Same statement, same kind, same entities (and confidence): a restated duplicate."""
        return (self.kind, self.content, self.folded_entities, self.confidence)


@dataclass
class FactLog:
    facts: list[LoggedFact] = field(default_factory=list)
    problems: int = 0  # malformed fact lines (``clawmem check`` lists them)
    unreadable: list[str] = field(default_factory=list)

    def newest_day(self) -> date | None:
        days = [f.day for f in self.facts if f.day is not None]
        return max(days) if days else None


def decode(raw: bytes) -> str:
    """A memory file's text: UTF-8 without a BOM. Raises ``UnicodeDecodeError``."""
    text = raw.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: Path) -> str | None:
    """A memory file's text without a BOM, or None when it is not valid UTF-8."""
    try:
        return decode(path.read_bytes())
    except (UnicodeDecodeError, OSError):
        return None


def fact_dates(
    fact: Fact, file_day: date | None, today: date
) -> tuple[date | None, date | None, date | None]:
    """``(recorded day, valid_from, valid_to)`` of a fact in a file dated ``file_day``: the one
    rule indexing, reflect and check share. A date the statement gives without a year takes the
    daily log's year, else ``today``'s; a statement whose dates cannot be read states none."""
    year = file_day.year if file_day else today.year
    try:
        start, end = fact_validity(fact.content, year)
    except (ValueError, OverflowError):
        start = end = None
    return file_day or start, start, end


def collect_facts(root: Path, scan: Scan, today: date) -> FactLog:
    """Every well-formed fact in the scanned files, oldest first. Facts recorded after ``today``
    are left out: reflecting "as of" a day only knows what had been written by then."""
    from clawmem.markdown.forgotten import load as forgotten_lines
    from clawmem.text.redact import redact  # here: only reflect reads every fact

    gone = forgotten_lines(root)  # lines `clawmem forget` forgot never reach a page
    log = FactLog()
    order = 0
    for entry in scan.markdown_files:
        text = read_text(root / entry.relpath)
        if text is None:
            log.unreadable.append(entry.relpath)
            continue
        # Reflect writes what it reads into pages of its own (entity pages, opinions, proposals),
        # which users commit: a credential a note holds must not be copied there (issue 31).
        # Redaction keeps the lines, so every fact still cites its line.
        found, problems = extract_facts(redact(gone.blank(text)))
        log.problems += len(problems)
        if not found:
            continue
        file_day = date_from_path(entry.relpath)
        if file_day is not None and file_day > today:
            continue
        for fact in found:
            day, start, end = fact_dates(fact, file_day, today)
            if day is not None and day > today:
                continue
            order += 1
            log.facts.append(LoggedFact(fact, entry.relpath, day, start, end, order))
    log.facts.sort(key=lambda f: f.sort_key)
    return log
