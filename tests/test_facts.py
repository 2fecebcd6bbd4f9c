"""The Retain grammar: exact round trips, awkward real-world lines, and whole documents."""

from __future__ import annotations

import dataclasses
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawmem.errors import InputError
from clawmem.markdown.facts import (
    KINDS,
    Fact,
    FactProblem,
    extract_facts,
    find_retain_section,
    format_fact,
    is_entity_slug,
    make_fact,
    parse_fact,
    retain_insert_index,
)

# --------------------------------------------------------------------------------------------
# Strategies

_slug_edge = st.one_of(
    st.characters(categories=["Lu", "Ll", "Lo", "Nd"]),
    st.sampled_from("_ÅéệĐ東京김"),
)
_slug_inner = st.one_of(
    _slug_edge,
    st.sampled_from(".-_"),
    st.characters(categories=["Mn"]),  # combining marks (decomposed Vietnamese, Indic signs)
)
slugs = st.builds(
    lambda first, middle, last: first + "".join(middle) + (last or ""),
    _slug_edge,
    st.lists(_slug_inner, max_size=6),
    st.one_of(st.none(), _slug_edge),
).filter(is_entity_slug)

_content_chars = st.characters(
    exclude_categories=["Cs"],  # lone surrogates cannot be written to a UTF-8 file
    exclude_characters="\r\n",
)
_nasty_bits = st.sampled_from(
    [
        "@Andy",
        " @api.v2.",
        "peter@example.com",
        "`@decorator`",
        "[x](https://a.b/@c)",
        "https://x.y/@z",
        "14:32 — ",
        ": ",
        "O(c=0.9)",
        "🎉",
        "Hà Nội",
        "東京",
        "\t",
        "  ",
        "- W @X: ",
    ]
)
raw_contents = st.lists(st.one_of(st.text(_content_chars, max_size=12), _nasty_bits), max_size=6)
contents = raw_contents.map("".join).filter(
    lambda s: bool(s.strip()) and len(s.strip().splitlines()) == 1
)
confidences = st.one_of(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    st.sampled_from([0.0, 0.5, 0.95, 1.0, 1e-7, 0.1 + 0.2]),
)


@st.composite
def made_facts(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    confidence = draw(st.one_of(st.none(), confidences)) if kind == "O" else None
    return make_fact(kind, draw(contents), draw(st.lists(slugs, max_size=3)), confidence)


@st.composite
def valid_lines(draw):
    """Valid fact lines, built from their parts (not through format_fact)."""
    kind = draw(st.sampled_from(sorted(KINDS)))
    head = kind
    if kind == "O" and draw(st.booleans()):
        head += "(c=" + draw(st.from_regex(r"\A(0(\.[0-9]{1,4})?|1(\.0{1,3})?)\Z")) + ")"
    for slug in draw(st.lists(slugs, max_size=3)):
        head += " @" + slug
    content = draw(contents).strip(" \t")
    indent = draw(st.sampled_from(["", " ", "   ", "\t"]))
    bullet = draw(st.sampled_from("-*+"))
    trailing = draw(st.sampled_from(["", " ", "  ", "\t", " \t "]))
    eol = draw(st.sampled_from(["", "\n", "\r\n", "\r"]))
    return f"{indent}{bullet} {head}: {content}{trailing}{eol}"


# --------------------------------------------------------------------------------------------
# Round trips


@given(made_facts())
@settings(max_examples=400)
def test_made_fact_round_trips(fact: Fact) -> None:
    line = format_fact(fact)
    assert "\n" not in line and "\r" not in line
    assert parse_fact(line) == fact
    assert parse_fact(line, 12) == dataclasses.replace(fact, line=12)


@given(valid_lines())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_valid_line_round_trips(line: str) -> None:
    fact = parse_fact(line)
    assert format_fact(fact) == line
    assert fact.content == fact.content.rstrip(" \t") and fact.content
    assert fact.kind in KINDS


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
@settings(max_examples=500)
def test_any_string_either_round_trips_or_raises(text: str) -> None:
    for line in (text, "- " + text, "- W @Peter: " + text, "- O(c=" + text):
        try:
            fact = parse_fact(line)
        except InputError as exc:
            assert exc.message and "\n" not in exc.message
            continue
        assert format_fact(fact) == line


@given(st.lists(made_facts(), min_size=1, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_extract_finds_every_formatted_fact_at_its_line(facts: list[Fact], newline: str) -> None:
    lines = ["# Daily log", "", "Some prose.", "", "## Retain"]
    expected_lines = []
    for fact in facts:
        lines.append(format_fact(fact))
        expected_lines.append(len(lines))
    lines += ["", "## Next", "- W @Other: not a fact here"]
    found, problems = extract_facts(newline.join(lines) + newline)
    assert problems == []
    assert [f.line for f in found] == expected_lines
    # Facts read from a file carry their line and nothing else that make_fact did not set,
    # except notes, which generated facts never have.
    assert [dataclasses.replace(f, line=0) for f in found] == facts


# --------------------------------------------------------------------------------------------
# Awkward real-world lines that ARE facts: (line, kind, content, entities)

GOOD = [
    (
        "- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.",
        "W",
        "Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.",
        ("Peter",),
    ),
    ("- W @Peter: 14:32 — deployed v2.3.1", "W", "14:32 — deployed v2.3.1", ("Peter",)),
    ("- W: The office moved to Berlin.", "W", "The office moved to Berlin.", ()),
    (
        "- B @warelay: I fixed the Baileys WS crash by wrapping connection.update in try/catch.",
        "B",
        "I fixed the Baileys WS crash by wrapping connection.update in try/catch.",
        ("warelay",),
    ),
    (
        "- O(c=0.95) @Peter: Prefers concise replies (<1500 chars) on WhatsApp.",
        "O",
        "Prefers concise replies (<1500 chars) on WhatsApp.",
        ("Peter",),
    ),
    ("- O @Peter: Likes Rust.", "O", "Likes Rust.", ("Peter",)),
    ("- S @Peter @Andy: Old friends.", "S", "Old friends.", ("Peter", "Andy")),
    (
        "- W @Linh: Họp với đối tác ở Hà Nội vào thứ Năm.",
        "W",
        "Họp với đối tác ở Hà Nội vào thứ Năm.",
        ("Linh",),
    ),
    (
        "- W @Kenji: 東京の決済サービスは来週リリース予定。",
        "W",
        "東京の決済サービスは来週リリース予定。",
        ("Kenji",),
    ),
    ("- W @Đặng_Văn: Giám đốc mới.", "W", "Giám đốc mới.", ("Đặng_Văn",)),
    ("- W @Наташа: Живёт в Москве.", "W", "Живёт в Москве.", ("Наташа",)),
    # Decomposed (NFD) Vietnamese: combining marks stay inside the slug.
    ("- W @Nguye\u0302\u0303n: x", "W", "x", ("Nguye\u0302\u0303n",)),
    ("- W @The-Castle: Booked for the wedding.", "W", "Booked for the wedding.", ("The-Castle",)),
    ("- W @api.v2: Deprecated on 2026-01-01.", "W", "Deprecated on 2026-01-01.", ("api.v2",)),
    ("- W @Peter: 🎉 Got the job! 🚀", "W", "🎉 Got the job! 🚀", ("Peter",)),
    (
        "- W @Peter: Ratio is 3:2 — note: keep it.",
        "W",
        "Ratio is 3:2 — note: keep it.",
        ("Peter",),
    ),
    (
        "- W @Peter: met @Andy at the café; then @Kenji.",
        "W",
        "met @Andy at the café; then @Kenji.",
        ("Peter", "Andy", "Kenji"),
    ),
    ("- W @Peter: told @Peter's story", "W", "told @Peter's story", ("Peter",)),
    (
        "- W @Peter: Reach him at peter@example.com or <peter@example.com>.",
        "W",
        "Reach him at peter@example.com or <peter@example.com>.",
        ("Peter",),
    ),
    (
        "- W @Peter: Uses `@decorator` and ``a `@b` c`` in Python.",
        "W",
        "Uses `@decorator` and ``a `@b` c`` in Python.",
        ("Peter",),
    ),
    (
        "- W @Peter: Profile at [x](https://a.b/@c) and https://mastodon.social/@peter ok.",
        "W",
        "Profile at [x](https://a.b/@c) and https://mastodon.social/@peter ok.",
        ("Peter",),
    ),
    ("- W @Peter: Call @ 3pm or @3pm, not @-x.", "W", "Call @ 3pm or @3pm, not @-x.", ("Peter",)),
    ("- W: 会议@田中 在东京。", "W", "会议@田中 在东京。", ("田中",)),
    (
        "- W: (@Andy) and [@Bea] and **@Cy**",
        "W",
        "(@Andy) and [@Bea] and **@Cy**",
        ("Andy", "Bea", "Cy"),
    ),
    ("* W @Peter: star bullet", "W", "star bullet", ("Peter",)),
    ("+ W @Peter: plus bullet", "W", "plus bullet", ("Peter",)),
    (
        "- W @Peter: - [ ] a task box inside the statement is just text",
        "W",
        "- [ ] a task box inside the statement is just text",
        ("Peter",),
    ),
    ("- W @Peter: @Peter @Peter", "W", "@Peter @Peter", ("Peter",)),
    ("- O(c=0) @X: never", "O", "never", ("X",)),
    ("- O(c=1) @X: always", "O", "always", ("X",)),
    ("- O(c=1.000) @X: always", "O", "always", ("X",)),
    ("- O(c=0.950) @X: literal kept", "O", "literal kept", ("X",)),
]


@pytest.mark.parametrize(("line", "kind", "content", "entities"), GOOD)
def test_awkward_good_lines(line: str, kind: str, content: str, entities: tuple) -> None:
    fact = parse_fact(line, 7)
    assert (fact.kind, fact.content, fact.entities, fact.line) == (kind, content, entities, 7)
    assert format_fact(fact) == line


@pytest.mark.parametrize(
    "body",
    ["x" + " " * 20000 + "x", "`" * 20000, "`a" * 10000, "](" * 10000, "a." * 10000, "@" * 20000],
)
def test_pathological_lines_stay_fast(body: str) -> None:
    # Regexes such as ".*?[ \t]*$" or "(`+).*?\1" are quadratic on lines like these.
    started = time.process_time()  # CPU time: a loaded machine's wall clock is not the regex's
    fact = parse_fact(f"- W @P: {body} @Andy ")
    assert fact.entities[-1] == "Andy" or body.startswith("`")
    extract_facts(f"## Retain\n- W @P: {body}\n")
    assert time.process_time() - started < 2


def test_confidence_literal_and_value() -> None:
    fact = parse_fact("- O(c=0.950) @X: y")
    assert fact.confidence == 0.95 and fact.confidence_text == "0.950"
    assert parse_fact("- O @X: y").confidence is None
    assert parse_fact("- W @X: y").confidence is None


def test_lead_entities_keep_duplicates_entities_do_not() -> None:
    fact = parse_fact("- W @Peter @Peter: with @Andy")
    assert fact.lead_entities == ("Peter", "Peter")
    assert fact.entities == ("Peter", "Andy")
    assert format_fact(fact) == "- W @Peter @Peter: with @Andy"


def test_trailing_whitespace_is_kept_out_of_content() -> None:
    fact = parse_fact("- W @Peter: Lives in Berlin.  \t")
    assert fact.content == "Lives in Berlin."
    assert fact.trailing == "  \t"
    assert format_fact(fact) == "- W @Peter: Lives in Berlin.  \t"


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings_round_trip(eol: str) -> None:
    line = "- W @Peter: Lives in Berlin. " + eol
    fact = parse_fact(line)
    assert fact.content == "Lives in Berlin."
    assert (fact.trailing, fact.eol) == (" ", eol)
    assert format_fact(fact) == line


def test_indentation_round_trips() -> None:
    fact = parse_fact("  - W: indented")
    assert fact.indent == "  " and format_fact(fact) == "  - W: indented"


# --------------------------------------------------------------------------------------------
# Malformed lines: (line, words the message must contain)

BAD = [
    ("- O(c=high) @Peter: x", 'expected "O(c=0.0–1.0)", got "O(c=high)"'),
    ("- O(c=1.5) @Peter: x", 'within 0.0–1.0, got "O(c=1.5)"'),
    ("- O(c=-0.1) @Peter: x", 'within 0.0–1.0, got "O(c=-0.1)"'),
    # Decision: ".5" is rejected (one spelling per value), and the message gives the fix.
    ("- O(c=.5) @Peter: x", 'write "O(c=0.5)"'),
    ("- O(c=00.5) @Peter: x", 'write "O(c=0.5)"'),
    ("- O(c=1.) @Peter: x", 'write "O(c=1.0)"'),
    ("- O(c=0.5 @Peter: x", 'expected "O(c=0.0–1.0)"'),
    ("- O(0.5) @Peter: x", 'expected "O(c=0.0–1.0)", got "O(0.5)"'),
    ("- O(c=٠.٥) @Peter: x", 'expected "O(c=0.0–1.0)"'),  # Arabic-Indic digits
    ("- W(c=0.9) @Peter: x", "only opinions carry a confidence"),
    ("- X @Peter: x", 'unknown kind "X"'),
    ("- w @Peter: x", 'write "W"'),
    ("- Peter likes tea", 'unknown kind "Peter"'),
    ("- W @Peter missing colon", 'expected ": " after "W @Peter"'),
    ("- W @Peter @Andy", 'expected ": " after "W @Peter @Andy"'),
    ("- W @Peter:no space", 'expected a space after "W @Peter:"'),
    ("- W @Peter:  two spaces", 'expected one space after "W @Peter:"'),
    ("- W @Peter: ", "empty statement"),
    ("- W @Peter:", "empty statement"),
    ("- W:", "empty statement"),
    ("- W@Peter: x", 'expected a space before "@Peter'),
    ("- W @: x", 'invalid entity "@: x"'),
    ("- W @.x: y", "invalid entity"),
    ("- W @Peter.: x", 'expected ": " after "W @Peter"'),
    ("- [ ] Call Peter about the contract", "task boxes are not facts"),
    ("- [x] W @Peter: done", "task boxes are not facts"),
    ("-  W: two spaces after the bullet", 'one space after "-"'),
    ("-W: no space", 'expected a space after "-"'),
    ("-", "empty bullet"),
    ("W @Peter: no bullet", 'a fact starts with "- "'),
    ("", 'a fact starts with "- "'),
    ("- W @Peter: two\nlines", "single line"),
    ("- W @Peter: two\rlines", "single line"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_awkward_bad_lines(line: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_fact(line, 12)
    assert message in info.value.message
    assert info.value.message.startswith("line 12: ")
    assert info.value.hint


def test_error_without_line_number_has_no_prefix() -> None:
    with pytest.raises(InputError) as info:
        parse_fact("- X: y")
    assert info.value.message.startswith('unknown kind "X"')


# --------------------------------------------------------------------------------------------
# make_fact and format_fact


def test_make_fact_is_canonical() -> None:
    fact = make_fact("opinion", "  Prefers tea over coffee.  ", ["@Peter", "Andy", "Peter"], 0.9)
    assert format_fact(fact) == "- O(c=0.9) @Peter @Andy: Prefers tea over coffee."
    assert fact.line == 0 and fact.notes == ()


@pytest.mark.parametrize(
    ("kind", "letter"),
    [("W", "W"), ("w", "W"), ("world", "W"), ("Experience", "B"), ("o", "O"), ("S", "S")],
)
def test_make_fact_kind_names(kind: str, letter: str) -> None:
    assert make_fact(kind, "x").kind == letter


def test_make_fact_single_entity_string() -> None:
    assert make_fact("W", "x", "Peter").lead_entities == ("Peter",)


def test_make_fact_confidence_formatting() -> None:
    assert format_fact(make_fact("O", "x", confidence=1)) == "- O(c=1.0): x"
    assert format_fact(make_fact("O", "x", confidence=0)) == "- O(c=0.0): x"
    assert format_fact(make_fact("O", "x", confidence=1e-7)) == "- O(c=0.0000001): x"
    assert format_fact(make_fact("O", "x", confidence=0.1 + 0.2)) == "- O(c=0.30000000000000004): x"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("X", "x"), "unknown fact kind"),
        (("W", "   "), "needs a statement"),
        (("W", "two\nlines"), "single line"),
        (("W", "two\u2028lines"), "single line"),
        (("W", "x", ["Pe ter"]), "invalid entity"),
        (("W", "x", ["Peter."]), "invalid entity"),
        (("W", "x", [""]), "invalid entity"),
        (("W", "x", (), 0.5), "only opinions"),
        (("O", "x", (), 1.5), "within 0.0–1.0"),
        (("O", "x", (), -0.1), "within 0.0–1.0"),
        (("O", "x", (), float("nan")), "within 0.0–1.0"),
        (("O", "x", (), True), "must be a number"),
        (("O", "x", (), "0.5"), "must be a number"),
    ],
)
def test_make_fact_validates(args: tuple, message: str) -> None:
    with pytest.raises(InputError) as info:
        make_fact(*args)
    assert message in info.value.message


def test_format_fact_does_not_print_a_stale_confidence_literal() -> None:
    fact = parse_fact("- O(c=0.950) @X: y")
    assert format_fact(dataclasses.replace(fact, confidence=0.8)) == "- O(c=0.8) @X: y"
    assert format_fact(dataclasses.replace(fact, confidence=None)) == "- O @X: y"


def test_format_fact_rejects_impossible_facts() -> None:
    with pytest.raises(InputError):
        format_fact(Fact("Q", "x", (), None, 0))
    with pytest.raises(InputError):
        format_fact(Fact("W", "x", (), 0.5, 0))


@pytest.mark.parametrize(
    ("name", "ok"),
    [("Peter", True), ("api.v2", True), ("The-Castle", True), ("_x", True), ("3M", True),
     ("東京", True), ("Peter.", False), ("-x", False), ("a b", False), ("", False),
     ("a:b", False), ("a@b", False), ("\u0301x", False)],
)  # fmt: skip
def test_is_entity_slug(name: str, ok: bool) -> None:
    assert is_entity_slug(name) is ok


# --------------------------------------------------------------------------------------------
# Whole documents

DOC = """\
# 2025-11-27

- W @Peter: a fact-looking bullet outside Retain is ignored
- O(c=high) @Peter: so is a malformed one

## Retain
- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.
  - source: call with @Andy
    - deeper note
  wrapped continuation line

- [ ] call the riad
* B @warelay: Fixed the WS crash.

Some prose in the section is ignored.

+ O(c=0.95) @Peter: Prefers concise replies.
- O(c=high) @Peter: malformed
1. W: numbered items are reported
- X @Peter: unknown kind
### Details
- S @Peter: sub-headings stay inside the Retain section
```
- W @Peter: inside a fence
## Retain
```
~~~md
- W: tilde fence
~~~
> - W @Peter: a quote is not a fact

    - W: indented code is not a fact
## Next
- W @Peter: after the section
- X: no error here either

# Retain

- W: a second, top-level Retain section
## Still inside the level-1 section
- S: yes
"""


def test_extract_facts_on_a_multi_section_document() -> None:
    facts, problems = extract_facts(DOC)
    assert [(f.line, f.kind, f.content) for f in facts] == [
        (7, "W", "Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday."),
        (13, "B", "Fixed the WS crash."),
        (17, "O", "Prefers concise replies."),
        (22, "S", "sub-headings stay inside the Retain section"),
        (39, "W", "a second, top-level Retain section"),
        (41, "S", "yes"),
    ]
    assert facts[0].entities == ("Peter",)
    assert facts[2].confidence == 0.95
    assert [(p.line, p.text) for p in problems] == [
        (12, "- [ ] call the riad"),
        (18, "- O(c=high) @Peter: malformed"),
        (19, "1. W: numbered items are reported"),
        (20, "- X @Peter: unknown kind"),
    ]
    assert "task boxes are not facts" in problems[0].message
    assert problems[1].message == 'expected "O(c=0.0–1.0)", got "O(c=high)"'
    assert "numbered items" in problems[2].message
    assert all(isinstance(p, FactProblem) for p in problems)


def test_nested_bullets_and_continuations_are_notes() -> None:
    facts, problems = extract_facts(DOC)
    assert facts[0].notes == ("source: call with @Andy", "deeper note", "wrapped continuation line")
    assert facts[1].notes == ()
    # Notes are not part of the fact line and do not add entities.
    assert facts[0].entities == ("Peter",)
    assert format_fact(facts[0]) == DOC.splitlines()[6]


def test_paragraphs_are_ignored_but_lazy_continuations_belong_to_the_item() -> None:
    # Markdown reads an unindented line right after a bullet as the same paragraph ("lazy
    # continuation"); after a blank line it is a paragraph of its own.
    text = "## Retain\n- W: a\nlazy line\n\nA paragraph.\n- W: b\n"
    facts, problems = extract_facts(text)
    assert problems == []
    assert [(f.content, f.notes) for f in facts] == [("a", ("lazy line",)), ("b", ())]


def test_nested_bullets_are_never_problems() -> None:
    text = "## Retain\n- W @P: x\n  - [ ] task box note\n  - X not a fact\n  1. numbered note\n"
    facts, problems = extract_facts(text)
    assert problems == []
    assert facts[0].notes == ("[ ] task box note", "X not a fact", "numbered note")


def test_sub_bullets_of_a_malformed_fact_are_not_reported() -> None:
    facts, problems = extract_facts("## Retain\n- X: bad\n  - W: nested\n")
    assert facts == [] and [p.line for p in problems] == [2]


def test_fact_lines_are_exact_in_the_file() -> None:
    lines = DOC.splitlines()
    facts, problems = extract_facts(DOC)
    for fact in facts:
        assert format_fact(fact) == lines[fact.line - 1]
    for problem in problems:
        assert problem.text == lines[problem.line - 1]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_documents_give_the_same_facts(newline: str) -> None:
    lf_facts, lf_problems = extract_facts(DOC)
    facts, problems = extract_facts(DOC.replace("\n", newline))
    assert facts == lf_facts
    assert problems == lf_problems
    assert all(f.eol == "" and "\r" not in f.content for f in facts)


def test_line_numbers_ignore_unicode_line_separators() -> None:
    # str.splitlines would split on U+2028 and \x0c and shift every later line number.
    text = "## Retain\n- W: a\u2028b\x0cc\n- W: second\n"
    facts, _ = extract_facts(text)
    assert [(f.line, f.content) for f in facts] == [(2, "a\u2028b\x0cc"), (3, "second")]


def test_no_retain_section_means_no_facts_and_no_problems() -> None:
    text = "# Notes\n- W @Peter: looks like a fact\n- O(c=high): broken\n- [ ] task\n"
    assert extract_facts(text) == ([], [])
    assert extract_facts("") == ([], [])


@pytest.mark.parametrize(
    "heading",
    ["## Retain", "# Retain", "###### retain", "## RETAIN", "## Retain ##", "Retain\n------"],
)
def test_retain_heading_variants(heading: str) -> None:
    facts, _ = extract_facts(f"Intro.\n\n{heading}\n- W: yes\n")
    assert [f.content for f in facts] == ["yes"]


@pytest.mark.parametrize(
    "heading", ["## Retained", "## Retain facts", "####### Retain", "#Retain", "## **Retain**"]
)
def test_not_retain_headings(heading: str) -> None:
    assert extract_facts(f"{heading}\n- W: no\n") == ([], [])


def test_section_ends_at_same_or_higher_level_only() -> None:
    text = (
        "### Retain\n- W: a\n#### Deeper\n- W: b\n### Sibling\n- W: c\n"
        "## Retain\n- W: d\n# Top\n- W: e\n"
    )
    facts, _ = extract_facts(text)
    assert [f.content for f in facts] == ["a", "b", "d"]


def test_setext_heading_ends_the_section() -> None:
    text = "## Retain\n- W: a\n\nOther\n-----\n- W: b\n"
    assert [f.content for f in extract_facts(text)[0]] == ["a"]


def test_unclosed_fence_swallows_the_rest() -> None:
    text = "## Retain\n- W: a\n```\n- W: b\n## Retain\n- W: c\n"
    assert [f.content for f in extract_facts(text)[0]] == ["a"]


def test_headings_inside_lists_and_quotes_do_not_open_sections() -> None:
    text = "- ## Retain\n  - W: a\n> ## Retain\n> - W: b\n"
    assert extract_facts(text) == ([], [])


def test_find_retain_section_and_insert_index() -> None:
    lines = ["# Log", "", "## Retain", "- W: a", "  - note", "", "", "## Next", "- W: b"]
    assert find_retain_section(lines) == (2, 7)
    assert retain_insert_index(lines) == 5
    with_ends = [line + "\r\n" for line in lines]
    assert find_retain_section(with_ends) == (2, 7)
    assert retain_insert_index(with_ends) == 5


def test_find_retain_section_edges() -> None:
    assert find_retain_section([]) is None
    assert find_retain_section(["# Log", "- W: a"]) is None
    assert find_retain_section(["```", "## Retain", "```"]) is None
    assert find_retain_section(["## Retain"]) == (0, 1)
    assert retain_insert_index(["## Retain"]) == 1
    assert retain_insert_index(["## Retain", "", ""]) == 1
    # Only the first section; it ends at the second Retain heading of the same level.
    assert find_retain_section(["## Retain", "- W: a", "## Retain", "- W: b"]) == (0, 2)
    # A setext heading spans two lines; facts go after its underline.
    assert retain_insert_index(["Retain", "======", "", "# Next"]) == 2


def test_appending_at_the_insert_index_yields_the_fact() -> None:
    lines = ["# Log", "## Retain", "- W: a", "", "## Next"]
    index = retain_insert_index(lines)
    assert index is not None
    new = make_fact("B", "Fixed it.", ["warelay"])
    lines.insert(index, format_fact(new))
    facts, problems = extract_facts("\n".join(lines))
    assert problems == []
    assert facts[-1] == dataclasses.replace(new, line=index + 1)


def test_ascii_letters_only_kinds() -> None:
    assert set(KINDS) == set("WBOS") and all(k in string.ascii_uppercase for k in KINDS)
