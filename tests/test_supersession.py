"""One supersession rule (clawmem/supersession.py), seen from recall and from reflect alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.markdown.markers import find_section
from clawmem.markdown.supersession import Statement, supersedes

pytestmark = pytest.mark.usefixtures("lexical")

LOGS = {
    "memory/2025-11-01.md": (
        "# 2025-11-01\n\n## Retain\n"
        "- B @Peter: Had lunch with Peter at Cafe Landtmann.\n"
        "- W @Peter: Peter's team meets on Mondays at the Vienna office.\n"
    ),
    "memory/2025-11-05.md": (
        "# 2025-11-05\n\n## Retain\n"
        "- B @Peter: Had lunch with Peter at Cafe Central.\n"
        "- W @Peter: Peter's team meets on Tuesdays at the Vienna office.\n"
    ),
}
LANDTMANN = "memory/2025-11-01.md#L4"
MONDAYS = "memory/2025-11-01.md#L5"
TUESDAYS = "memory/2025-11-05.md#L5"


@pytest.fixture
def two_weeks(tmp_path) -> Path:
    for rel, text in LOGS.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    return tmp_path


def _s(kind: str, day: str, text: str, *entities: str) -> Statement:
    return Statement.of(kind, day, entities or ("Peter",), text)


def test_the_rule():
    lunch1 = _s("B", "2025-11-01", "Had lunch with Peter at Cafe Landtmann.")
    lunch2 = _s("B", "2025-11-05", "Had lunch with Peter at Cafe Central.")
    assert not supersedes(lunch2, lunch1)  # an experience is an event: both stay true
    mon = _s("W", "2025-11-01", "Peter's team meets on Mondays at the Vienna office.")
    tue = _s("W", "2025-11-05", "Peter's team meets on Tuesdays at the Vienna office.")
    assert supersedes(tue, mon)
    assert not supersedes(mon, tue)  # only a later day supersedes
    assert not supersedes(_s("W", "2025-11-01", tue_text := "Team meets on Tuesdays."), mon)
    assert not supersedes(_s("W", "2025-11-09", tue_text, "Anna"), mon)  # no shared entity
    assert not supersedes(_s("S", "2025-11-09", "Peter's team meets on Tuesdays."), mon)  # kind
    old = _s("O", "2025-11-05", "Thinks Rust could be a good fit for the warelay CLI.", "Peter")
    new = _s("O", "2025-11-25", "Now thinks a Rust rewrite of the CLI is not worth it.", "Peter")
    assert supersedes(new, old)  # same opinion, same entities, two shared topic words


def test_recall_marks_what_reflect_strikes(two_weeks):
    mem = open_workspace(two_weeks)
    res = mem.recall("Peter lunch cafe team meets office", entity="Peter", k=10)
    by_line = {f"{h.path}#L{h.start_line}": h for h in res.hits if h.kind}
    assert by_line[LANDTMANN].superseded_by is None
    assert by_line[MONDAYS].superseded_by == f"{TUESDAYS}-L5"
    assert by_line[TUESDAYS].superseded_by is None

    mem.reflect()
    page = find_section((two_weeks / "bank/entities/Peter.md").read_text(encoding="utf-8"))
    assert page is not None
    cited = (re.search(r"\((memory/[\w.-]+\.md#L\d+)", line) for line in page.body.splitlines())
    lines = {m.group(1): m.string for m in cited if m}
    assert "~~" not in lines[LANDTMANN] and "superseded" not in lines[LANDTMANN]
    assert "~~" in lines[MONDAYS] and f"superseded by {TUESDAYS}" in lines[MONDAYS]
