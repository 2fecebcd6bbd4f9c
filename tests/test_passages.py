"""Next lines as one passage (recall/passages.py, rrf-v15): a message and the reply next to it,
both among the first hits, are one hit at the better one's place; a fact, a line under another
heading or a line with another between stays a hit of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawmem.recall.passages import join_next_lines
from clawmem.recall.results import Hit
from clawmem.text.query import Query

from .conftest import approve, cli


def hit(line: int, text: str = "", *, path: str = "memory/2024-01-05.md", heading: str = "Talk",
        kind: str | None = None, score: float = 1.0) -> Hit:  # fmt: skip
    return Hit(path=path, start_line=line, end_line=line, heading=heading,
               text=text or f"line {line}", snippet=text or f"line {line}", score=score,
               kind=kind, day=None, entities=(), confidence=None, valid_from=None,
               valid_to=None)  # fmt: skip


def lines(hits: list[Hit]) -> list[tuple[int, int]]:
    return [(h.start_line, h.end_line) for h in hits]


def test_lines_that_touch_are_one_hit_at_the_better_place_in_line_order():
    hits = [hit(12, "Kate: About ten years now.", score=3), hit(40), hit(11, "Elise: How long?")]
    out = join_next_lines(hits, 5, None, 700)
    assert lines(out) == [(11, 12), (40, 40)]
    assert out[0].text == "Elise: How long?\nKate: About ten years now."
    assert out[0].score == 3  # the better placed line's score, ranks and features


def test_a_hit_joins_one_other_at_most_and_the_rest_keep_their_order():
    out = join_next_lines([hit(5), hit(7), hit(30), hit(6), hit(50)], 5, None, 700)
    assert lines(out) == [(5, 6), (7, 7), (30, 30), (50, 50)]
    # a run of lines that all matched is pairs, not one hit
    out = join_next_lines([hit(5), hit(6), hit(7), hit(8)], 5, None, 700)
    assert lines(out) == [(5, 6), (7, 8)]


def test_what_is_never_joined():
    # a line between them
    assert lines(join_next_lines([hit(5), hit(7)], 5, None, 700)) == [(5, 5), (7, 7)]
    # another heading, another file, a fact
    assert len(join_next_lines([hit(5), hit(6, heading="Other")], 5, None, 700)) == 2
    assert len(join_next_lines([hit(5), hit(6, path="memory/x.md")], 5, None, 700)) == 2
    assert len(join_next_lines([hit(5), hit(6, kind="W")], 5, None, 700)) == 2
    # beyond the depth read, and the hits kept as they are (an entity's page leading)
    assert len(join_next_lines([hit(5), hit(9), hit(6)], 2, None, 700)) == 3
    assert len(join_next_lines([hit(5), hit(6)], 5, None, 700, keep=1)) == 2
    assert len(join_next_lines([hit(5), hit(6)], 0, None, 700)) == 2
    # a question asking for all of something keeps its hits spread over distinct items
    every = Query.parse("What cuisines does Emi like?", today=None)
    assert every.asks_for_all
    assert len(join_next_lines([hit(5), hit(6)], 5, every, 700)) == 2
    one = Query.parse("How long has Emi been skiing?", today=None)
    assert lines(join_next_lines([hit(5), hit(6)], 5, one, 700)) == [(5, 6)]


CHAT = """# 2024-01-05

## Evening talk

- Elise: I spent the morning at the library and then went for a run by the river.
- Kate: The new bakery on our street sells the best cinnamon rolls, I bought six of them.
- Elise: Kate, how long have you been skiing? You looked great on the slopes.
- Kate: Since I was twelve, so about ten years now; my father taught me in the Alps.
- Elise: My cousin is moving to Denver next month for a job at a hospital.
- Kate: The train to work was late again this morning, twenty minutes in the cold.
"""


@pytest.fixture
def chat_ws(tmp_path, shared_model) -> Path:
    ws = tmp_path / "ws"
    assert cli("init", str(ws)).code == 0
    (ws / "memory" / "2024-01-05.md").write_text(CHAT, encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    return ws


def recall(ws: Path, query: str, *extra: str) -> list[dict]:
    r = cli("-w", str(ws), "recall", query, "--json", "--min-relevance", "0", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)["results"]


def cited(hits: list[dict]) -> list[tuple[str, str]]:
    """The hits' citations and texts: what must not depend on k (scores are the CPU's digits)."""
    return [(h["citation"], h["snippet"]) for h in hits]


def test_a_question_and_its_answer_come_as_one_hit_with_the_real_model(chat_ws):
    first = recall(chat_ws, "How long has Kate been skiing?")[0]
    assert first["citation"] == "memory/2024-01-05.md#L7-L8", first
    assert "ten years" in first["snippet"] and "how long" in first["snippet"]
    # The first hit does not depend on how many were asked for.
    assert cited(recall(chat_ws, "How long has Kate been skiing?", "-k", "1")) == cited([first])


def test_with_a_read_scope_lines_are_joined_on_the_merged_list(chat_ws, tmp_path):
    team = tmp_path / "team"
    assert cli("init", str(team)).code == 0
    (team / "memory" / "2024-01-06.md").write_text(
        "# 2024-01-06\n\n## Notes\n\n- Kate: The team offsite is in Lisbon in March.\n",
        encoding="utf-8",
    )
    assert cli("-w", str(team), "index").code == 0
    (chat_ws / "clawmem.toml").write_text('[scopes]\nteam = "../team"\n')
    approve(chat_ws)
    full = recall(chat_ws, "How long has Kate been skiing?", "-k", "10")
    assert full[0]["citation"] == "memory/2024-01-05.md#L7-L8", full
    assert any(h.get("scope") == "team" for h in full)
    for k in ("1", "2", "3"):
        got = recall(chat_ws, "How long has Kate been skiing?", "-k", k)
        assert cited(got) == cited(full[: int(k)])
