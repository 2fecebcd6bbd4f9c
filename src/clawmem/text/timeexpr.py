"""Time expressions: ``--since``/``--until`` values, daily-log file names, dates stated inside
facts, and time phrases inside recall queries.

Everything here is pure: "today" is always passed in, so results never depend on the clock and tests
need no clock tricks. Weeks start on Monday (ISO 8601). Bad user input raises ``InputError`` with a
one-line message naming the bad value and the accepted forms.

Three consumers, three levels of strictness:

* ``parse_date`` (``--date``/``--as-of``) takes exactly ``YYYY-MM-DD``;
* ``parse_since``/``parse_until`` take one whole expression (``30d``, ``2025-11``, ``last week`` …)
  and fail loudly on anything else;
* ``fact_validity`` and ``query_time_hint`` search free text and return nothing rather than fail,
  because a statement or a question that mentions no date is normal.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, TypeVar

from clawmem.errors import InputError

_T = TypeVar("_T")


class _lazy:  # lower case: it stands where re.compile stood
    """A regular expression compiled on first use. This module's patterns are large (compiling
    them all took ~40% of a lexical `clawmem recall`'s imports); most commands need few of them."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


@dataclass(frozen=True)
class TimeRange:
    """Inclusive range of days; ``None`` leaves that side open."""

    start: date | None
    end: date | None

    def overlaps(self, start: date | None, end: date | None) -> bool:
        """Whether the inclusive, possibly open range ``start..end`` shares a day with this one."""
        return (self.start is None or end is None or self.start <= end) and (
            self.end is None or start is None or start <= self.end
        )


# --------------------------------------------------------------------------------------------
# Calendar arithmetic


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _add_months(day: date, months: int) -> date:
    """Calendar months, clamping the day: Mar 31 minus one month is Feb 28 (or 29)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _add_years(day: date, years: int) -> date:
    year = day.year + years
    # Feb 29 of a leap year has no twin in other years: clamp to Feb 28.
    return date(year, day.month, min(day.day, calendar.monthrange(year, day.month)[1]))


def _shift(today: date, amount: int, unit: str) -> date:
    """``today`` minus ``amount`` units (d, w, m, y)."""
    if unit == "d":
        return today - timedelta(days=amount)
    if unit == "w":
        return today - timedelta(weeks=amount)
    if unit == "m":
        return _add_months(today, -amount)
    return _add_years(today, -amount)


def _week_of(day: date) -> TimeRange:
    monday = day - timedelta(days=day.weekday())
    return TimeRange(monday, monday + timedelta(days=6))


def _month_of(day: date) -> TimeRange:
    return TimeRange(day.replace(day=1), _month_end(day.year, day.month))


def _year_of(year: int) -> TimeRange:
    return TimeRange(date(year, 1, 1), date(year, 12, 31))


def _period(which: str, unit: str, today: date) -> TimeRange:
    """``this|last|past week|month|year``: calendar periods, except ``past`` which is rolling."""
    if which == "past":
        return TimeRange(_shift(today, 1, unit), today)
    if unit == "w":
        return _week_of(today - timedelta(weeks=1) if which == "last" else today)
    if unit == "m":
        return _month_of(_add_months(today, -1) if which == "last" else today)
    return _year_of(today.year - 1 if which == "last" else today.year)


def _nearest_past(month: int, day: int, today: date) -> date | None:
    """The latest ``month``/``day`` on or before ``today`` (``May 2nd`` asked in March means last
    year's). Feb 29 walks back to the last leap year. None if the day never exists (Apr 31)."""
    for year in range(today.year, today.year - 9, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


# --------------------------------------------------------------------------------------------
# Shared regular-expression pieces

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
# Full names and abbreviations, with an optional period ("Sept."). "may" must be capitalised:
# lower-case "may" is the verb ("we may 2x the price"), never the month in practice.
_MONTH = (
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May|MAY)|june?|july?"
    r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_DAY = r"[0-9]{1,2}(?:st|nd|rd|th)?(?!\w)"
_YEAR = r"[0-9]{4}(?![0-9])"
# Hyphen, figure dash, en dash, em dash, minus sign: people and editors use all of them in ranges.
_DASH = r"\s*[-\u2012\u2013\u2014\u2212]\s*"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_UNITS = {"d": "d", "day": "d", "w": "w", "wk": "w", "week": "w",
          "m": "m", "mo": "m", "month": "m", "y": "y", "yr": "y", "year": "y"}  # fmt: skip


def _month_number(token: str) -> int:
    return _MONTHS[token.lower()[:3]]


def _day_number(token: str) -> int:
    return int(re.match(r"[0-9]+", token).group())  # type: ignore[union-attr]


def _atom(t: str) -> str:
    """One absolute calendar day, named groups suffixed with ``t``: ``2025-11-27``,
    ``2025/11/27``, ``27.11.2025``, ``Nov 27[, 2025]``, ``November 27th 2025``, ``27 Nov[ 2025]``,
    ``2nd of May``. Day, month and year with dots are written in that order wherever dots are
    used; ``11/27/2025`` against ``27/11/2025`` is left alone: which one is meant depends on who
    wrote it."""
    return (
        rf"(?:(?<![\w.])(?P<iy{t}>[0-9]{{4}})(?P<is{t}>[-/])(?P<im{t}>[0-9]{{1,2}})(?P=is{t})"
        rf"(?P<id{t}>[0-9]{{1,2}})(?![0-9])"
        rf"|(?<![\w.])(?P<ed{t}>[0-9]{{1,2}})\.(?P<em{t}>[0-9]{{1,2}})\.(?P<ey{t}>[0-9]{{4}})(?![0-9])"
        rf"|(?P<ma{t}>{_MONTH})\s+(?P<da{t}>{_DAY})(?:,?\s+(?P<ya{t}>{_YEAR}))?"
        rf"|(?<![\w.:/-])(?P<db{t}>{_DAY})(?:\s+of)?\s+(?P<mb{t}>{_MONTH})(?:,?\s+(?P<yb{t}>{_YEAR}))?)"
    )


def _atom_parts(m: re.Match[str], t: str) -> tuple[int | None, int, int]:
    """(year or None, month, day) of an ``_atom`` match."""
    if m.group(f"iy{t}"):
        return int(m.group(f"iy{t}")), int(m.group(f"im{t}")), int(m.group(f"id{t}"))
    if m.group(f"ey{t}"):
        return int(m.group(f"ey{t}")), int(m.group(f"em{t}")), int(m.group(f"ed{t}"))
    if m.group(f"ma{t}"):
        year = m.group(f"ya{t}")
        month, day = _month_number(m.group(f"ma{t}")), _day_number(m.group(f"da{t}"))
    else:
        year = m.group(f"yb{t}")
        month, day = _month_number(m.group(f"mb{t}")), _day_number(m.group(f"db{t}"))
    return (int(year) if year else None), month, day


def _first_resolved(
    patterns: Sequence[tuple[str, _lazy]],
    text: str,
    resolve: Callable[[str, re.Match[str]], _T | None],
) -> tuple[_T | None, re.Match[str] | None]:
    """Leftmost match over all patterns (longest first on ties) that ``resolve`` accepts.

    A match that does not resolve (Feb 30, "and" without "between") gives way to the next one, so a
    bad date early in a sentence does not hide a good one later."""
    candidates = []
    for kind, pattern in patterns:
        for m in pattern.finditer(text):
            candidates.append((m.start(), -(m.end() - m.start()), kind, m))
    for _, _, kind, m in sorted(candidates, key=lambda c: (c[0], c[1])):
        try:
            result = resolve(kind, m)
        except (ValueError, OverflowError):  # a day that does not exist, or beyond year 9999
            continue
        if result is not None:
            return result, m
    return None, None


# --------------------------------------------------------------------------------------------
# Dates stated inside a fact

_RANGE_SEP = rf"(?P<sep>{_DASH}|\s+(?:to|until|till|through|thru|and)\s+)"
_RANGE_PRE = r"(?:\b(?P<pre>from|between)\s+)?"
_FACT_PATTERNS = [
    # Nov 27–Dec 1, 2025 · 2025-11-20 to 2025-11-24 · from Nov 27 until 30 Nov
    ("atoms", _lazy(rf"{_RANGE_PRE}{_atom('1')}{_RANGE_SEP}{_atom('2')}", re.I)),
    # Nov 27-30 · Nov 27–30, 2025
    (
        "days",
        _lazy(
            rf"{_RANGE_PRE}(?P<m>{_MONTH})\s+(?P<d1>{_DAY}){_RANGE_SEP}(?P<d2>{_DAY})"
            rf"(?:,?\s+(?P<y>{_YEAR}))?",
            re.I,
        ),
    ),
    # 27–30 Nov 2025
    (
        "days",
        _lazy(
            rf"{_RANGE_PRE}(?<![\w.:/-])(?P<d1>{_DAY}){_RANGE_SEP}(?P<d2>{_DAY})\s+(?P<m>{_MONTH})"
            rf"(?:,?\s+(?P<y>{_YEAR}))?",
            re.I,
        ),
    ),
    (
        "from",
        _lazy(
            rf"\b(?:from|since|starting(?:\s+(?:on|from))?|as\s+of|effective)\s+{_atom('1')}", re.I
        ),
    ),
    ("until", _lazy(rf"\b(?:until|till|through|thru|up\s+to)\s+{_atom('1')}", re.I)),
    ("on", _lazy(rf"(?:\bon\s+)?{_atom('1')}", re.I)),
]


def fact_validity(content: str, default_year: int) -> tuple[date | None, date | None]:
    """The days a statement says it is about, as ``(start, end)``, both inclusive.

    ``"in Marrakech (Nov 27–Dec 1, 2025)"`` → (2025-11-27, 2025-12-01); ``"(from 2025-11-20)"`` →
    (2025-11-20, None); ``"until 2025-12-05"`` → (None, 2025-12-05); ``"on 2025-11-21"`` or
    ``"December 3, 2025"`` → that day twice. A date without a year takes ``default_year`` (the daily
    log's year); a yearless range that runs backwards (``Dec 28–Jan 3``) ends in the next year. The
    first (leftmost) expression wins; (None, None) when the statement states no date.
    """

    def resolve(kind: str, m: re.Match[str]) -> tuple[date | None, date | None] | None:
        if kind in ("atoms", "days") and m.group("sep").strip().lower() == "and":
            if (m.group("pre") or "").lower() != "between":
                return None  # "Nov 27 and Dec 1" lists two days; it is not a range
        if kind == "atoms":
            y1, m1, d1 = _atom_parts(m, "1")
            y2, m2, d2 = _atom_parts(m, "2")
            return _range(y1, m1, d1, y2, m2, d2, default_year)
        if kind == "days":
            month = _month_number(m.group("m"))
            year = int(m.group("y")) if m.group("y") else None
            d1, d2 = _day_number(m.group("d1")), _day_number(m.group("d2"))
            if d2 < d1:
                return None  # "Nov 30-27" is not a range we can trust
            return _range(year, month, d1, year, month, d2, default_year)
        year, month, day = _atom_parts(m, "1")
        when = date(year or default_year, month, day)
        return {"from": (when, None), "until": (None, when)}.get(kind, (when, when))

    result, _ = _first_resolved(_FACT_PATTERNS, content, resolve)
    return result if result is not None else (None, None)


def _range(
    y1: int | None,
    m1: int,
    d1: int,
    y2: int | None,
    m2: int,
    d2: int,
    default_year: int,
) -> tuple[date, date] | None:
    """Fill in missing years of a range so that it runs forwards."""
    if y1 is None and y2 is None:
        start, end = date(default_year, m1, d1), date(default_year, m2, d2)
        if end < start:
            end = date(default_year + 1, m2, d2)
    elif y1 is None and y2 is not None:
        end = date(y2, m2, d2)
        start = date(y2 if (m1, d1) <= (m2, d2) else y2 - 1, m1, d1)
    elif y2 is None and y1 is not None:
        start = date(y1, m1, d1)
        end = date(y1 if (m2, d2) >= (m1, d1) else y1 + 1, m2, d2)
    elif y1 is not None and y2 is not None:
        start, end = date(y1, m1, d1), date(y2, m2, d2)
    if end < start:
        return None
    return start, end


# --------------------------------------------------------------------------------------------
# Time phrases inside recall queries and whole --since/--until values

_COUNT = r"[0-9]+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_UNIT = r"d|days?|w|wks?|weeks?|m|mos?|months?|y|yrs?|years?"


def _expr(t: str) -> str:
    """One time expression (named groups suffixed with ``t``), resolved by ``_resolve_expr``.

    Bare month names and bare years (``May``, ``2025``) are listed too, but a query only takes them
    after a preposition (``in May``, ``during 2025``): alone they are too often something else."""
    return (
        rf"(?:{_atom(t)}"
        rf"|(?<![\w.])(?P<my{t}>[0-9]{{4}})-(?P<mm{t}>[0-9]{{1,2}})(?![\w-])"
        rf"|(?P<mn{t}>{_MONTH}),?\s+(?P<mny{t}>{_YEAR})"
        rf"|(?P<rw{t}>today|yesterday|tomorrow)\b"
        rf"|(?P<pq{t}>last|this|previous|current|past)\s+(?P<pu{t}>week|month|year)\b"
        rf"|(?:last|past|previous)\s+(?P<ln{t}>{_COUNT})\s+(?P<lu{t}>days?|weeks?|months?|years?)\b"
        rf"|(?P<an{t}>{_COUNT})\s+(?P<au{t}>days?|weeks?|months?|years?)\s+ago\b"
        rf"|(?P<wq{t}>last|this\s+past)\s+(?P<wd{t}>{'|'.join(_WEEKDAYS)})\b"
        rf"|(?P<bw{t}>{'|'.join(_WEEKDAYS)})\b"
        rf"|(?P<bm{t}>{_MONTH})(?![\w-])"
        rf"|(?<![\w.-])(?P<by{t}>(?:19|20)[0-9][0-9])(?![\w-]))"
    )


def _count(token: str) -> int:
    token = token.lower()
    return _NUMBER_WORDS[token] if token in _NUMBER_WORDS else int(token)


def _needs_preposition(m: re.Match[str], t: str) -> bool:
    return bool(m.group(f"bw{t}") or m.group(f"bm{t}") or m.group(f"by{t}"))


def _closed(m: re.Match[str], t: str, today: date) -> tuple[date, date]:
    """``_resolve_expr``'s days as (first, last): an expression always names both ends."""
    r = _resolve_expr(m, t, today)
    assert r.start is not None and r.end is not None
    return r.start, r.end


def _resolve_expr(m: re.Match[str], t: str, today: date) -> TimeRange:
    """The days an ``_expr`` match covers. Raises ValueError for a day that does not exist."""
    g = m.group
    if g(f"iy{t}") or g(f"ey{t}") or g(f"ma{t}") or g(f"mb{t}"):
        year, month, day = _atom_parts(m, t)
        if year is not None:
            when = date(year, month, day)
        else:
            date(2000, month, day)  # raises for Apr 31; 2000 is a leap year, so Feb 29 passes
            found = _nearest_past(month, day, today)
            if found is None:
                raise ValueError("no such day")
            when = found
        return TimeRange(when, when)
    if g(f"my{t}"):
        return _month_of(date(int(g(f"my{t}")), int(g(f"mm{t}")), 1))
    if g(f"mn{t}"):
        return _month_of(date(int(g(f"mny{t}")), _month_number(g(f"mn{t}")), 1))
    if g(f"rw{t}"):
        offset = {"today": 0, "yesterday": -1, "tomorrow": 1}[g(f"rw{t}").lower()]
        when = today + timedelta(days=offset)
        return TimeRange(when, when)
    if g(f"pq{t}"):
        which = g(f"pq{t}").lower()
        which = {"previous": "last", "current": "this"}.get(which, which)
        return _period(which, g(f"pu{t}")[0].lower(), today)
    if g(f"ln{t}"):
        return TimeRange(_shift(today, _count(g(f"ln{t}")), g(f"lu{t}")[0].lower()), today)
    if g(f"an{t}"):
        unit = g(f"au{t}")[0].lower()
        then = _shift(today, _count(g(f"an{t}")), unit)
        if unit == "d":
            return TimeRange(then, then)
        if unit == "w":
            return _week_of(then)
        return _month_of(then) if unit == "m" else _year_of(then.year)
    if g(f"wd{t}") or g(f"bw{t}"):
        # "last Monday" is strictly before today; "on Monday" may be today.
        weekday = _WEEKDAYS.index((g(f"wd{t}") or g(f"bw{t}")).lower())
        back = (today.weekday() - weekday) % 7
        if back == 0 and g(f"wd{t}"):
            back = 7
        when = today - timedelta(days=back)
        return TimeRange(when, when)
    if g(f"bm{t}"):
        month = _month_number(g(f"bm{t}"))
        year = today.year if month <= today.month else today.year - 1
        return _month_of(date(year, month, 1))
    return _year_of(int(g(f"by{t}")))


_PREPOSITION = r"in|on|during|throughout|of|for|from"
_HINT_PATTERNS = [
    # between Nov 1 and Nov 15 · from 2025-11-01 to 2025-11-15
    (
        "range",
        _lazy(
            rf"\b(?:between|from)\s+{_expr('1')}"
            rf"(?:{_DASH}|\s+(?:and|to|until|till|through|thru)\s+){_expr('2')}",
            re.I,
        ),
    ),
    (
        "bounded",
        _lazy(rf"\b(?P<bound>since|after|before|until|till|through|by)\s+{_expr('1')}", re.I),
    ),
    ("plain", _lazy(rf"(?:\b(?P<prep>{_PREPOSITION})\s+)?{_expr('1')}", re.I)),
]
# Every phrase the patterns above match holds four digits in a row (a year), a month's name
# (``_MONTH``: "decide" is not "Dec"), "day" (today, yesterday, the weekdays, days), week, month,
# year or tomorrow; a count of days or a day of the month comes with one of those. A query with
# none is answered without compiling the patterns, which takes ~20 ms: a cold `clawmem recall`
# whose question names no time paid it (issue 16). The flags are the patterns' own, so case
# folding is the same ("ſep", "weeK" with a Kelvin sign).
_HINT_CUE = re.compile(rf"[0-9]{{4}}|{_MONTH}|day|week|month|year|tomorrow", re.I)


def match_time_hint(query: str, today: date) -> tuple[TimeRange, int, int] | None:
    """Like ``query_time_hint``, plus the ``[start, end)`` character span of the phrase, so recall
    can search for the rest of the query without the words "in November 2025"."""

    def resolve(kind: str, m: re.Match[str]) -> TimeRange | None:
        if kind == "range":
            first, second = _closed(m, "1", today), _closed(m, "2", today)
            if second[1] < first[0]:
                first, second = second, first  # "between Dec 15 and Dec 1" means the same days
            return TimeRange(first[0], second[1])
        start, end = _closed(m, "1", today)
        if kind == "plain":
            if _needs_preposition(m, "1") and not m.group("prep"):
                return None
            return TimeRange(start, end)
        bound = m.group("bound").lower()
        if bound == "since":
            return TimeRange(start, None)
        if bound == "after":
            return TimeRange(end + timedelta(days=1), None)
        if bound == "before":
            return TimeRange(None, start - timedelta(days=1))
        return TimeRange(None, end)  # until, till, through, by

    if not _HINT_CUE.search(query):
        return None
    found, m = _first_resolved(_HINT_PATTERNS, query, resolve)
    if found is None or m is None:
        return None
    return found, m.start(), m.end()


def query_time_hint(query: str, today: date) -> TimeRange | None:
    """The time a recall query asks about, or None.

    Understands ``in November 2025``, ``in November`` / ``on May 2nd`` / ``on Nov 12`` (nearest
    past occurrence), ``2025-11-27``, ``27.11.2025``, ``2025-11``, ``yesterday``, ``last week``
    (the previous Monday to Sunday), ``this month``, ``past 30 days``, ``3 days ago``,
    ``last Monday``, ``in 2025``, ``since …``, ``before …``, ``until …``, ``between … and …``.
    The leftmost phrase wins.
    """
    found = match_time_hint(query, today)
    return found[0] if found else None


# --------------------------------------------------------------------------------------------
# --since / --until / --date

_RELATIVE = _lazy(rf"(?P<n>[0-9]+)\s*(?P<u>{_UNIT})(?:\s+ago)?", re.I)
_WHOLE = _lazy(rf"(?:(?:{_PREPOSITION})\s+)?{_expr('1')}", re.I)
_ACCEPTED = (
    "use a duration (30d, 2w, 3m, 1y), a date (2025, 2025-11, 2025-11-27, 27.11.2025, "
    "Nov 27 2025) or today, yesterday, last week/month/year"
)


def _whole_range(text: str, today: date, param: str) -> TimeRange | date:
    """One whole since/until value: a date for a duration, a range for everything else. Errors
    name the parameter ``param`` (the CLI says ``--since``)."""
    value = text.strip()
    rel = _RELATIVE.fullmatch(value)
    if rel:
        try:
            return _shift(today, int(rel.group("n")), _UNITS[rel.group("u").lower().rstrip("s")])
        except (OverflowError, ValueError):
            raise InputError(
                f'{{param}} value "{text}" reaches before year 1; {_ACCEPTED}', param=param
            ) from None
    m = _WHOLE.fullmatch(value)
    if m is None:
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)  # one line
        raise InputError(f'cannot read {{param}} value "{shown}": {_ACCEPTED}', param=param)
    try:
        return _resolve_expr(m, "1", today)
    except (ValueError, OverflowError) as exc:
        raise InputError(
            f'invalid {{param}} value "{text}": {exc}; {_ACCEPTED}', param=param
        ) from None


def parse_since(text: str, today: date) -> date:
    """Inclusive first day for ``--since``: ``30d`` (30 days before today), ``2w``, ``3m`` (calendar
    months), ``1y``, ``2025`` (Jan 1), ``2025-11`` (Nov 1), ``2025-11-27``, ``today``,
    ``yesterday``, ``last week`` (its Monday), ``this month`` …"""
    found = _whole_range(text, today, "since")
    return found if isinstance(found, date) else found.start  # type: ignore[return-value]


def parse_until(text: str, today: date) -> date:
    """Inclusive last day for ``--until``: the end of the named period (``2025-11`` → Nov 30,
    ``2025`` → Dec 31, ``last week`` → its Sunday); a duration counts back from today (``7d``)."""
    found = _whole_range(text, today, "until")
    return found if isinstance(found, date) else found.end  # type: ignore[return-value]


_ISO_DATE = _lazy(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def parse_date(text: str) -> date:
    """Strict ``YYYY-MM-DD`` (``--date``, ``--as-of``): nothing relative, nothing guessed."""
    m = _ISO_DATE.fullmatch(text.strip())
    if m is None:
        raise InputError(f'invalid date "{text}": expected YYYY-MM-DD, e.g. 2025-11-27')
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as exc:
        raise InputError(f'invalid date "{text}": {exc}; expected YYYY-MM-DD') from None


# memory/2025-11-27.md, memory/2025/2025-11-27-standup.md, notes/2025-11-27 retro.md
_DATED_NAME = _lazy(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[-_ .][^/\\]*)?\.md", re.I)


def bad_date_in_name(relpath: str) -> str | None:
    """Why the file name looks like a daily log's (``YYYY-MM-DD…md``) but names no real day
    (``2025-13-45.md``: its facts then have no date), else None."""
    name = re.split(r"[/\\]", relpath)[-1]
    m = _DATED_NAME.fullmatch(name)
    if m is None:
        return None
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as exc:
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)} in its name is not a real date ({exc})"
    return None


def date_from_path(relpath: str) -> date | None:
    """The day a daily log is about, from its file name (``YYYY-MM-DD[-anything].md``), else None.

    Only the file name counts, not its folders, so ``memory/2025/11/2025-11-27.md`` works and
    ``memory/2025-11-27/notes.md`` is not a daily log."""
    name = re.split(r"[/\\]", relpath)[-1]
    m = _DATED_NAME.fullmatch(name)
    if m is None:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
