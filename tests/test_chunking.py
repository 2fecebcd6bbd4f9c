from hypothesis import given, settings
from hypothesis import strategies as st

from clawmem.markdown.chunking import chunk_markdown, sha256, weight

DOC = """# Day

Intro paragraph
continues here.

## Work
- item one
  - nested under one
- item two

```python
def f():

    return 1
```

## Retain
- W @Peter: fact one
"""


def test_units_are_blocks_with_heading_paths_and_exact_lines():
    chunks = chunk_markdown(DOC)
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (3, 4, "Day"),  # a paragraph
        (7, 8, "Day > Work"),  # a list item with its nested item
        (9, 9, "Day > Work"),
        (11, 15, "Day > Work"),  # a whole fence, blank line inside and all
        (18, 18, "Day > Retain"),
    ]
    lines = DOC.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.sha256 == sha256(c.text)


def test_code_fence_and_list_item_never_split():
    fence = "```\n" + "\n".join(f"line {i} " + "x" * 40 for i in range(20)) + "\n```"
    items = "\n".join(f"- item {i}\n  continued {i} " + "y" * 40 for i in range(20))
    doc = f"# T\n\n{fence}\n\n{items}\n"
    chunks = chunk_markdown(doc, max_chars=1200, overlap_chars=200)
    fence_start, fence_end = 3, 24
    for c in chunks:
        # a chunk contains the whole fence or none of it
        inside = (
            c.start_line <= fence_start <= c.end_line or c.start_line <= fence_end <= c.end_line
        )
        if inside:
            assert c.start_line <= fence_start and c.end_line >= fence_end
        # never begins on an item's continuation line
        first = c.text.split("\n")[0]
        assert not first.startswith("  continued")


def test_oversized_block_and_line_still_chunk():
    one_line = "word " * 3000
    chunks = chunk_markdown(one_line, max_chars=1600, overlap_chars=320)
    assert len(chunks) >= 9
    assert all(c.start_line == c.end_line == 1 and len(c.text) <= 1600 for c in chunks)
    # the slices cover the whole line
    assert chunks[0].text == one_line.rstrip("\n")[:1600]
    assert one_line.rstrip().endswith(chunks[-1].text.rstrip())

    huge = "\n".join(f"para line {i} with some words in it" for i in range(5000))
    chunks = chunk_markdown(huge, max_chars=1600, overlap_chars=320)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 5000
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
        assert len(c.text) <= 1600
    assert covered == set(range(1, 5001))


def test_short_paragraphs_are_units_of_their_own():
    paras = "\n\n".join(f"Paragraph {i}. " + "z" * 300 for i in range(12))
    chunks = chunk_markdown("# H\n\n" + paras, max_chars=1600, overlap_chars=400)
    assert [(c.start_line, c.end_line) for c in chunks] == [(3 + 2 * i,) * 2 for i in range(12)]
    assert all(c.heading == "H" for c in chunks)


def test_windows_of_an_oversized_block_overlap():
    para = "\n".join(f"line {i} " + "z" * 90 for i in range(60))  # one paragraph, ~6,000 chars
    chunks = chunk_markdown("# H\n\n" + para, max_chars=1600, overlap_chars=400)
    assert len(chunks) > 3
    assert all(b.start_line <= a.end_line for a, b in zip(chunks, chunks[1:], strict=False))
    assert chunks[0].start_line == 3 and chunks[-1].end_line == 62


def test_a_heading_without_a_body_is_a_unit():
    doc = "# Ideas\n\n## Later\n\n# Done\n\nshipped it\n"
    chunks = chunk_markdown(doc)
    assert [(c.start_line, c.heading, c.text) for c in chunks] == [
        (1, "Ideas", "# Ideas"),  # its only subsection is empty too
        (3, "Ideas > Later", "## Later"),
        (7, "Done", "shipped it"),  # "# Done" has a body: it is context, not a unit
    ]


def test_cjk_text_weighs_more_so_units_fit_the_model():
    han = "決済サービスの障害対応について議論した。" * 60  # 1,200 characters, ~1,200 tokens
    chunks = chunk_markdown(han, max_chars=1600, overlap_chars=320)
    assert len(chunks) >= 3
    assert all(weight(c.text) <= 1600 for c in chunks)
    assert "".join(c.text for c in chunks).count("決済") >= han.count("決済")


def test_empty_and_blank_documents():
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n   \n") == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# H",
                "## S",
                "text line",
                "",
                "- item",
                "  - sub",
                "```",
                "code",
                "| a | b |",
                "|---|---|",
                "Kate: a message",
                "Ben: " + "a long reply " * 12,
            ]
        ),
        max_size=80,
    )
)
def test_every_nonblank_line_is_covered(lines):
    doc = "\n".join(lines)
    chunks = chunk_markdown(doc, max_chars=120, overlap_chars=30)
    src = doc.split("\n")
    covered = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(src)
        covered.update(range(c.start_line, c.end_line + 1))
    for i, line in enumerate(src, 1):
        if line.strip() and not line.startswith("#"):  # headings are context, in heading paths
            assert i in covered, (i, line)


def test_line_exactly_at_the_cap_terminates():
    # A 1,600-character line inside an oversized block once looped forever (found on SciFact).
    doc = "# T\n\n" + "\n".join(["y" * 1600] * 3 + ["short"] * 5) + "\n"
    chunks = chunk_markdown(doc, max_chars=1600, overlap_chars=320)
    assert [(c.start_line, c.end_line) for c in chunks][-1] == (6, 10)
    assert all(len(c.text) <= 1600 for c in chunks)


TALK = """# 2024-01-05

## Evening talk with Elise

Emi: Hi Emily! Are you feeling any better today?
elise: Hi Kate! I had some magic medicine.
Emi: The magic medicine sounds like a great remedy.

**Kate:** the venue is booked
**Ben:** for Saturday?
**Kate:** yes, 7 pm

[10:32] Kate: shall we go with Hetzner?
[10:33] Ben: yes

Background: Stripe deduplicates requests by key for 24 h.
Methods: we replayed a day of webhooks.
Results: no double charges.

Decision: Postgres for the ledger
Owner: Peter
"""


def test_a_conversation_paragraph_is_one_unit_per_message():
    chunks = chunk_markdown(TALK)
    spans = [(c.start_line, c.end_line) for c in chunks]
    # Speakers come back: each message is its own unit, citing its own line.
    assert spans[:6] == [(5, 5), (6, 6), (7, 7), (9, 9), (10, 10), (11, 11)]
    assert chunks[1].text == "elise: Hi Kate! I had some magic medicine."
    assert chunks[1].heading == "2024-01-05 > Evening talk with Elise"
    # Two lines by two people, a structured abstract and a record name each label once: they
    # read as fields, and stay one unit.
    assert spans[6:] == [(13, 14), (16, 18), (20, 21)]


def test_an_over_long_message_in_a_talk_is_still_cut():
    doc = "Kate: " + "word " * 500 + "\nBen: ok\nKate: fine\n"
    chunks = chunk_markdown(doc, max_chars=1600, overlap_chars=320)
    assert [c.start_line for c in chunks[-2:]] == [2, 3]
    assert all(c.start_line == c.end_line == 1 for c in chunks[:-2]) and len(chunks) > 3
    assert all(weight(c.text) <= 1600 for c in chunks)


RECORDS = """# Opinions

### @Kate — Kate prefers short replies
- confidence: 0.80
- last_updated: 2026-11-29
- statement: Kate prefers short replies (memory/2026-11-29.md#L4)
- evidence: 1 supporting, 0 contradicting
  - + memory/2026-11-29.md#L4 (2026-11-29) — first statement

## Potluck
- Kate: bring the cake
- Peter: bring the wine

## Chores
- todo: water the plants
- todo: call the landlord

## Mixed
- status: done
- the rest of the list is prose
"""


def test_a_list_of_one_records_fields_is_one_unit():
    """reflect's opinion block ("- confidence: … / - statement: …") is one unit: a field alone
    ("confidence: 0.80") says nothing a question could ask. Lists of things stay one unit per
    item: capitalised labels (who brings what), a field named twice, an item that is no field."""
    spans = [(c.start_line, c.end_line) for c in chunk_markdown(RECORDS)]
    assert spans == [(4, 8), (11, 11), (12, 12), (15, 15), (16, 16), (19, 19), (20, 20)]
