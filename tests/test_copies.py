"""Evidence before its copies (recall/copies.py): which page line restates which fact, and the
order that puts each fact before its copy."""

from __future__ import annotations

from clawmem.recall.copies import cited_source, sources_first


def test_a_page_line_citing_one_fact_is_its_copy():
    line = "- Office cat: Miso (Marta's). Likes the doormat. (memory/2025-11-17.md#L39)"
    assert cited_source("bank/entities/The-Castle.md", line) == ("memory/2025-11-17.md", 39)
    ranged = "- Nov 12 incident, fixed in v2.3.1. (memory/2025-11-12.md#L179-L181)"
    assert cited_source("bank/entities/x.md", ranged) == ("memory/2025-11-12.md", 179)


def test_an_episode_line_quoting_one_message_is_its_copy():
    page = "memory/episodes/2025-12-02-3b8f0c2e.md"
    rel = "sessions/3b8f0c2e-6d1a-4e7b-9a51-0c2d7e4f9a13.jsonl"
    line = f"- W @warelay: We decided to rename the config file. ({rel}#L11-L11)"
    assert cited_source(page, line) == (rel, 11)
    assert cited_source(page, f"**Abstract:** Before I forget: Redis moved. ({rel}#L4-L4)") == (
        rel,
        4,
    )
    assert cited_source("memory/2025-12-02.md", line) is None  # a log's line is narrative


def test_what_is_no_copy():
    line = "- Office cat: Miso. (memory/2025-11-17.md#L39)"
    assert cited_source("memory/2025-11-18.md", line) is None  # a log's line is narrative
    assert cited_source("bank/world.md", "- Vienna is in Austria.") is None
    several = "  - + memory/2025-11-05.md#L41 — a\n  - − memory/2025-11-19.md#L41 — b"
    assert cited_source("bank/opinions.md", several) is None  # a summary of many
    assert cited_source("bank/x.md", "see bank/x.md#L3") is None  # itself


def test_the_source_moves_right_before_its_copy_never_later():
    source_of = {1: 10, 2: 20, 3: 30}.get
    # 10 comes late and 20 not at all: each moves right before its copy; 30 is already first.
    assert sources_first([30, 1, 5, 10, 2, 3], source_of) == (
        [30, 10, 1, 5, 20, 2, 3],
        {10: 1, 20: 2},
    )
    assert sources_first([4, 5], source_of) == ([4, 5], {})
