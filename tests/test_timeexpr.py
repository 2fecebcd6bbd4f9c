"""Time expressions: --since/--until, --date, daily-log paths, dates in facts, query hints."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawmem.errors import InputError
from clawmem.text import timeexpr
from clawmem.text.timeexpr import (
    TimeRange,
    date_from_path,
    fact_validity,
    match_time_hint,
    parse_date,
    parse_since,
    parse_until,
    query_time_hint,
)

TODAY = date(2025, 12, 3)  # a Wednesday
D = date

# --------------------------------------------------------------------------------------------
# --since / --until


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("30d", D(2025, 11, 3), D(2025, 11, 3)),
        ("7d", D(2025, 11, 26), D(2025, 11, 26)),
        ("0d", TODAY, TODAY),
        ("30 days", D(2025, 11, 3), D(2025, 11, 3)),
        ("2w", D(2025, 11, 19), D(2025, 11, 19)),
        ("2 weeks ago", D(2025, 11, 19), D(2025, 11, 19)),
        ("3m", D(2025, 9, 3), D(2025, 9, 3)),
        ("1y", D(2024, 12, 3), D(2024, 12, 3)),
        ("1Y", D(2024, 12, 3), D(2024, 12, 3)),
        ("2025", D(2025, 1, 1), D(2025, 12, 31)),
        ("2025-11", D(2025, 11, 1), D(2025, 11, 30)),
        ("2025-11-27", D(2025, 11, 27), D(2025, 11, 27)),
        (" 2025-11-27 ", D(2025, 11, 27), D(2025, 11, 27)),
        ("today", TODAY, TODAY),
        ("Yesterday", D(2025, 12, 2), D(2025, 12, 2)),
        ("last week", D(2025, 11, 24), D(2025, 11, 30)),
        ("this week", D(2025, 12, 1), D(2025, 12, 7)),
        ("last month", D(2025, 11, 1), D(2025, 11, 30)),
        ("this month", D(2025, 12, 1), D(2025, 12, 31)),
        ("last year", D(2024, 1, 1), D(2024, 12, 31)),
        ("Nov 2025", D(2025, 11, 1), D(2025, 11, 30)),
        ("November 2025", D(2025, 11, 1), D(2025, 11, 30)),
        ("Nov 27, 2025", D(2025, 11, 27), D(2025, 11, 27)),
        ("Nov 27", D(2025, 11, 27), D(2025, 11, 27)),
        ("Dec 25", D(2024, 12, 25), D(2024, 12, 25)),  # nearest past occurrence
    ],
)
def test_since_and_until(text: str, since: date, until: date) -> None:
    assert parse_since(text, TODAY) == since
    assert parse_until(text, TODAY) == until


@pytest.mark.parametrize(
    ("text", "until"),
    [
        ("2024-02", D(2024, 2, 29)),  # leap year
        ("2025-02", D(2025, 2, 28)),
        ("1900-02", D(1900, 2, 28)),  # divisible by 100: not a leap year
        ("2000-02", D(2000, 2, 29)),  # divisible by 400: a leap year
        ("2025-04", D(2025, 4, 30)),
        ("2025-12", D(2025, 12, 31)),
        ("2025-01", D(2025, 1, 31)),
    ],
)
def test_until_a_month_is_its_last_day(text: str, until: date) -> None:
    assert parse_until(text, TODAY) == until


@pytest.mark.parametrize(
    ("today", "text", "since"),
    [
        (D(2025, 3, 31), "1m", D(2025, 2, 28)),  # clamped to the month's last day
        (D(2024, 3, 31), "1m", D(2024, 2, 29)),
        (D(2025, 1, 15), "2m", D(2024, 11, 15)),  # across a year boundary
        (D(2024, 2, 29), "1y", D(2023, 2, 28)),
        (D(2024, 2, 29), "4y", D(2020, 2, 29)),
        (D(2025, 1, 1), "last month", D(2024, 12, 1)),
        (D(2025, 1, 1), "last week", D(2024, 12, 23)),
        (D(2025, 12, 1), "this week", D(2025, 12, 1)),  # a Monday
        (D(2025, 12, 7), "this week", D(2025, 12, 1)),  # a Sunday
    ],
)
def test_calendar_edges(today: date, text: str, since: date) -> None:
    assert parse_since(text, today) == since


@pytest.mark.parametrize(
    "text",
    ["", "30", "abc", "3x", "2025-13", "2025-02-30", "2025-11-31", "1850", "next week", "-3d",
     "30 d d", "27/11/2025", "11/27/2025", "31.02.2025", "999999999y", "9999999d"],
)  # fmt: skip
def test_bad_since_until(text: str) -> None:
    for parse in (parse_since, parse_until):
        with pytest.raises(InputError) as info:
            parse(text, TODAY)
        message = info.value.message
        assert f'"{text}"' in message  # names the bad value
        assert "30d" in message and "2025-11" in message  # and the accepted forms
        assert "\n" not in message


def test_since_never_after_until_for_the_same_value() -> None:
    for text in ["2025", "2025-02", "last week", "this month", "today", "Nov 2025"]:
        assert parse_since(text, TODAY) <= parse_until(text, TODAY)


@given(st.integers(0, 1000), st.sampled_from("dwmy"), st.dates(D(1990, 1, 1), D(2100, 12, 31)))
def test_durations_count_back_from_today(n: int, unit: str, today: date) -> None:
    since = parse_since(f"{n}{unit}", today)
    assert since <= today
    assert since == parse_until(f"{n}{unit}", today)
    if unit == "d":
        assert today - since == timedelta(days=n)


# --------------------------------------------------------------------------------------------
# --date / --as-of


def test_parse_date() -> None:
    assert parse_date("2025-11-27") == D(2025, 11, 27)
    assert parse_date(" 2024-02-29 ") == D(2024, 2, 29)


@pytest.mark.parametrize(
    "text",
    ["2025-11", "2025-1-5", "20251127", "2025-W48-4", "2025-02-29", "2025-13-01", "yesterday",
     "27.11.2025", "2025-11-27T10:00", "２０２５-11-27", ""],
)  # fmt: skip
def test_parse_date_is_strict(text: str) -> None:
    with pytest.raises(InputError) as info:
        parse_date(text)
    assert f'"{text}"' in info.value.message and "YYYY-MM-DD" in info.value.message


# --------------------------------------------------------------------------------------------
# Daily-log paths


@pytest.mark.parametrize(
    ("path", "day"),
    [
        ("memory/2025-11-27.md", D(2025, 11, 27)),
        ("memory/2025/2025-11-27-standup.md", D(2025, 11, 27)),
        ("memory/2025/11/2025-11-27.md", D(2025, 11, 27)),
        ("memory/2025-11-27_retro.md", D(2025, 11, 27)),
        ("memory/2025-11-27 call with Peter.md", D(2025, 11, 27)),
        ("memory\\2025-11-27.md", D(2025, 11, 27)),
        ("2024-02-29.MD", D(2024, 2, 29)),
        ("MEMORY.md", None),
        ("bank/entities/Peter.md", None),
        ("memory/2025-11-27/notes.md", None),
        ("memory/2025-13-01.md", None),
        ("memory/2025-02-29.md", None),
        ("memory/2025-11-27.txt", None),
        ("memory/2025-11-27.md.bak", None),
        ("memory/x2025-11-27.md", None),
        ("memory/2025-11-270.md", None),
        ("memory/2025-11.md", None),
    ],
)
def test_date_from_path(path: str, day: date | None) -> None:
    assert date_from_path(path) == day


# --------------------------------------------------------------------------------------------
# Dates stated inside facts


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.",
         (D(2025, 11, 27), D(2025, 12, 1))),
        ("Nov 27—Dec 1, 2025", (D(2025, 11, 27), D(2025, 12, 1))),  # em dash
        ("Nov 27-Dec 1, 2025", (D(2025, 11, 27), D(2025, 12, 1))),  # hyphen
        ("Nov 27 – Dec 1 2025", (D(2025, 11, 27), D(2025, 12, 1))),
        ("In Lisbon Nov 27-30.", (D(2024, 11, 27), D(2024, 11, 30))),  # default year
        ("Nov 27–30, 2025", (D(2025, 11, 27), D(2025, 11, 30))),
        ("27–30 Nov 2025", (D(2025, 11, 27), D(2025, 11, 30))),
        ("Away (from 2025-11-20).", (D(2025, 11, 20), None)),
        ("Since Nov 20 he works remotely.", (D(2024, 11, 20), None)),
        ("As of 2025-11-20 the API is v2.", (D(2025, 11, 20), None)),
        ("Blocked until 2025-12-05.", (None, D(2025, 12, 5))),
        ("Valid through Dec 5, 2025.", (None, D(2025, 12, 5))),
        ("Trip 2025-11-20 to 2025-11-24.", (D(2025, 11, 20), D(2025, 11, 24))),
        ("Trip 2025-11-20–2025-11-24.", (D(2025, 11, 20), D(2025, 11, 24))),
        ("from 2025-11-20 until 2025-11-24", (D(2025, 11, 20), D(2025, 11, 24))),
        ("between Nov 27 and Dec 1", (D(2024, 11, 27), D(2024, 12, 1))),
        ("Released on 2025-11-21.", (D(2025, 11, 21), D(2025, 11, 21))),
        ("Signed December 3, 2025.", (D(2025, 12, 3), D(2025, 12, 3))),
        ("Signed Dec. 3rd 2025.", (D(2025, 12, 3), D(2025, 12, 3))),
        ("Signed 3 December 2025.", (D(2025, 12, 3), D(2025, 12, 3))),
        ("Birthday is May 2.", (D(2024, 5, 2), D(2024, 5, 2))),
        ("Leave Dec 28–Jan 3.", (D(2024, 12, 28), D(2025, 1, 3))),  # runs into the next year
        ("Leave Dec 28–Jan 3, 2026.", (D(2025, 12, 28), D(2026, 1, 3))),
        ("Met Nov 27 and Dec 1.", (D(2024, 11, 27), D(2024, 11, 27))),  # two days, not a range
        ("Feb 30 is no date, but Mar 3 is.", (D(2024, 3, 3), D(2024, 3, 3))),
        ("Valid until 31.12.2025.", (None, D(2025, 12, 31))),  # day.month.year
        ("Trip 20.11.2025 to 24.11.2025.", (D(2025, 11, 20), D(2025, 11, 24))),
        ("Released 2025/11/21.", (D(2025, 11, 21), D(2025, 11, 21))),
        ("Due 11/27/2025 or 27/11/2025.", (None, None)),  # which order: depends on the writer
        ("Leap day Feb 29.", (D(2024, 2, 29), D(2024, 2, 29))),
        ("14:32 — deployed v2.3.1", (None, None)),
        ("Prefers concise replies (<1500 chars) on WhatsApp.", (None, None)),
        ("Ticket DEC-0054 and build 2025.11.27", (None, None)),
        ("We may 2x the price in 10 days.", (None, None)),
        ("Họp với đối tác ở Hà Nội vào thứ Năm.", (None, None)),
        ("東京の決済サービスは来週リリース予定。", (None, None)),
        ("", (None, None)),
    ],
)  # fmt: skip
def test_fact_validity(content: str, expected: tuple) -> None:
    assert fact_validity(content, 2024) == expected


def test_fact_validity_year_inference_uses_explicit_years() -> None:
    assert fact_validity("Nov 27–Dec 1, 2025", 1999) == (D(2025, 11, 27), D(2025, 12, 1))
    assert fact_validity("Nov 27, 2025–Jan 2", 1999) == (D(2025, 11, 27), D(2026, 1, 2))


@given(st.dates(D(1900, 1, 1), D(2099, 12, 31)), st.integers(0, 400), st.sampled_from("-–—"))
def test_fact_validity_iso_ranges(start: date, days: int, dash: str) -> None:
    end = start + timedelta(days=days)
    if end.year > 9999:
        return
    text = f"Trip ({start.isoformat()}{dash}{end.isoformat()})."
    assert fact_validity(text, 2000) == (start, end)


@given(st.text(max_size=60), st.integers(1, 9998))
def test_fact_validity_never_raises(content: str, year: int) -> None:
    start, end = fact_validity(content, year)
    assert start is None or end is None or start <= end


# --------------------------------------------------------------------------------------------
# Time hints inside recall queries


HINT_CASES = [
    ("what was true in November 2025?", (D(2025, 11, 1), D(2025, 11, 30))),
    ("what did Peter do in Nov 2025", (D(2025, 11, 1), D(2025, 11, 30))),
    ("what happened in November", (D(2025, 11, 1), D(2025, 11, 30))),
    ("what happened in December", (D(2025, 12, 1), D(2025, 12, 31))),
    ("plans made in January", (D(2025, 1, 1), D(2025, 1, 31))),
    ("who did I meet on May 2nd", (D(2025, 5, 2), D(2025, 5, 2))),
    ("on Nov 12", (D(2025, 11, 12), D(2025, 11, 12))),
    ("on Dec 25", (D(2024, 12, 25), D(2024, 12, 25))),  # nearest past occurrence
    ("on the 2nd of May", (D(2025, 5, 2), D(2025, 5, 2))),
    ("on Feb 29", (D(2024, 2, 29), D(2024, 2, 29))),  # walks back to a leap year
    ("on Nov 12, 2023", (D(2023, 11, 12), D(2023, 11, 12))),
    ("decisions from last week", (D(2025, 11, 24), D(2025, 11, 30))),
    ("what broke yesterday", (D(2025, 12, 2), D(2025, 12, 2))),
    ("what is planned today", (TODAY, TODAY)),
    ("standup 2025-11-27 notes", (D(2025, 11, 27), D(2025, 11, 27))),
    ("anything in 2025-11", (D(2025, 11, 1), D(2025, 11, 30))),
    ("everything in 2024", (D(2024, 1, 1), D(2024, 12, 31))),
    ("this month's invoices", (D(2025, 12, 1), D(2025, 12, 31))),
    ("past 30 days", (D(2025, 11, 3), TODAY)),
    ("last 2 weeks", (D(2025, 11, 19), TODAY)),
    ("3 days ago", (D(2025, 11, 30), D(2025, 11, 30))),
    ("a week ago", (D(2025, 11, 24), D(2025, 11, 30))),
    ("two months ago", (D(2025, 10, 1), D(2025, 10, 31))),
    ("last Monday", (D(2025, 12, 1), D(2025, 12, 1))),
    ("last Wednesday", (D(2025, 11, 26), D(2025, 11, 26))),  # today is Wednesday
    ("on Wednesday", (TODAY, TODAY)),
    ("since Nov 20", (D(2025, 11, 20), None)),
    ("after 2025-11-20", (D(2025, 11, 21), None)),
    ("before 2025-11-01", (None, D(2025, 10, 31))),
    ("until November 2025", (None, D(2025, 11, 30))),
    ("between Nov 1 and Nov 15", (D(2025, 11, 1), D(2025, 11, 15))),
    ("from 2025-11-01 to 2025-11-15", (D(2025, 11, 1), D(2025, 11, 15))),
    ("between 2025-11-15 and 2025-11-01", (D(2025, 11, 1), D(2025, 11, 15))),
    ("What did Paola do on 10.01.2024?", (D(2024, 1, 10), D(2024, 1, 10))),
    ("on 2.11.2025", (D(2025, 11, 2), D(2025, 11, 2))),
    ("between 01.11.2025 and 15.11.2025", (D(2025, 11, 1), D(2025, 11, 15))),
    ("standup 2025/11/27 notes", (D(2025, 11, 27), D(2025, 11, 27))),
]


@pytest.mark.parametrize(("query", "expected"), HINT_CASES)
def test_query_time_hint(query: str, expected: tuple) -> None:
    assert query_time_hint(query, TODAY) == TimeRange(*expected)


@pytest.mark.parametrize(
    "query",
    [
        "tell me about Peter",
        "what does Peter think of Rust?",
        "payment_processor DEC-0054",
        "in DEC-0054",
        "2025 roadmap",  # a bare year is too often a number or a name
        "may I see the notes",
        "version 2.3.1 at 14:32",
        "build 2025.11.27",
        "release v1.10.2025",
        "on 27/11/2025",  # day first or month first: the writer's convention, unknown here
        "on 31.02.2025",
        "on Feb 30",
        "Họp với đối tác ở Hà Nội",
        "東京の決済サービス",
        "",
    ],
)
def test_query_without_time_hint(query: str) -> None:
    assert query_time_hint(query, TODAY) is None


# Words of the time grammar, case and Unicode variants among them, and words of no time.
_HINT_WORDS = (
    "in on of since after before until by between from and to through last this past previous "
    "current a an two three ago the 2nd 12 30 2025 1999 2025-11 2025-11-27 Nov NOV ſeptember "
    "Sept. May may june Monday sunday yesterday today tomorrow week weeK weeks month year days "
    "- – , Peter DEC-0054 v2.3.1 x Hà 東京 decide 0740 201 20251 19 99 10.01.2024 2025/11/27 "
    "1.2.2025 27/11/2025"
).split()


def _hint_matches(text: str) -> list[str]:
    return [m.group() for _, p in timeexpr._HINT_PATTERNS for m in p.finditer(text)]


@pytest.mark.parametrize("query", [q for q, _ in HINT_CASES])
def test_each_time_phrase_holds_a_cue(query: str) -> None:
    """match_time_hint skips a query without a cue (a year, a month, day, week, …) without
    compiling the patterns: sound only if every phrase the patterns match holds one."""
    found = _hint_matches(query)
    assert found
    assert all(timeexpr._HINT_CUE.search(phrase) for phrase in found), found


@given(st.lists(st.sampled_from(_HINT_WORDS), max_size=8).map(" ".join) | st.text(max_size=40))
def test_no_time_phrase_lacks_a_cue(text: str) -> None:
    for phrase in _hint_matches(text):
        assert timeexpr._HINT_CUE.search(phrase), phrase


def test_match_time_hint_gives_the_span() -> None:
    query = "what was true in November 2025?"
    found = match_time_hint(query, TODAY)
    assert found is not None
    hint, start, end = found
    assert query[start:end] == "in November 2025"
    assert hint == TimeRange(D(2025, 11, 1), D(2025, 11, 30))


def test_leftmost_phrase_wins() -> None:
    assert query_time_hint("yesterday or in 2024", TODAY) == TimeRange(
        D(2025, 12, 2), D(2025, 12, 2)
    )


@given(st.text(max_size=60), st.dates(D(1900, 1, 1), D(2100, 12, 31)))
def test_query_time_hint_never_raises(query: str, today: date) -> None:
    hint = query_time_hint(query, today)
    assert hint is None or hint.start is None or hint.end is None or hint.start <= hint.end


def test_time_range_helpers() -> None:
    nov = TimeRange(D(2025, 11, 1), D(2025, 11, 30))
    assert nov.overlaps(D(2025, 10, 1), D(2025, 11, 1))
    assert nov.overlaps(None, None) and nov.overlaps(D(2025, 11, 30), None)
    assert not nov.overlaps(D(2025, 12, 1), None)
    assert not nov.overlaps(None, D(2025, 10, 31))
    assert TimeRange(D(2025, 11, 15), None).overlaps(D(2025, 11, 1), D(2025, 11, 15))
