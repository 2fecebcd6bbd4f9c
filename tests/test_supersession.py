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


def _later_facts_sql(index, *, kind, entities, after, as_of, not_text, limit):
    """The question as SQLite answers it (``queries.later_facts``'s own query)."""
    folded = [e.casefold() for e in entities]
    return [
        tuple(r)
        for r in index.conn.execute(
            "SELECT DISTINCT c.id, c.path, c.start_line, c.end_line, c.text, c.day, c.entities "
            "FROM chunks c JOIN chunk_entities e ON e.chunk_id = c.id "
            f"WHERE e.folded IN ({','.join('?' * len(folded))}) AND c.kind = ? AND c.day > ? "
            "AND (? IS NULL OR c.day <= ?) AND c.text != ? ORDER BY c.day DESC, c.id DESC "
            "LIMIT ?",
            (*folded, kind, after, as_of, as_of, not_text, limit),
        )
    ]


def test_later_facts_from_the_entities_index_give_sqlites_answer(tmp_path):
    """The later facts supersession asks for, read newest first from each entity's facts by day
    (``chunk_entities_facts``) and merged, are the rows SQLite's query over the units gives, in
    its order: for one and several entities (facts naming both counted once), every kind, days
    before, on and after a fact's, an ``as_of``, the fact's own text left out (and its copies on
    other days), limits that cut; and again after a new fact is written and a log renamed to
    another day (the copies of a unit's day and kind are written with it)."""
    import random

    from clawmem.store import queries

    rng = random.Random(3)
    people = ["Peter", "Anna", "Omar", "Zoe"]
    for day in range(1, 21):
        lines = [f"# 2025-10-{day:02d}", "", "## Retain"]
        for i in range(rng.randint(2, 6)):
            who = rng.sample(people, rng.choice([1, 1, 2]))
            kind = rng.choice("WBO")
            said = rng.choice(["meets on Mondays", "likes tea", f"moved to office {i}"])
            conf = "(c=0.8) " if kind == "O" else ""
            lines.append(f"- {kind}{conf} {' '.join('@' + p for p in who)}: {who[0]} {said}.")
        path = tmp_path / "memory" / f"2025-10-{day:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    mem = open_workspace(tmp_path)
    mem.recall("Peter", k=3)  # indexes the workspace

    def check(index, n_cases=300):
        facts = index.conn.execute(
            "SELECT text, day FROM chunks WHERE kind IS NOT NULL AND day IS NOT NULL"
        ).fetchall()
        assert len(facts) > 40
        asked = 0
        for _ in range(n_cases):
            text, day = rng.choice(facts)
            args = dict(
                kind=rng.choice("WBO"),
                entities=tuple(
                    rng.sample(["peter", "ANNA", "Omar", "zoe", "nobody"], rng.choice([1, 2, 3]))
                ),
                after=rng.choice([day, "2025-10-01", "2025-10-10", "2025-09-30"]),
                as_of=rng.choice([None, None, "2025-10-15", day]),
                not_text=rng.choice([text, "nothing"]),
                limit=rng.choice([1, 3, 40]),
            )
            got = [tuple(r)[:7] for r in queries.later_facts(index, **args)]
            assert got == _later_facts_sql(index, **args), args
            asked += bool(got)
        assert asked > n_cases // 3

    index = mem.open_index()
    check(index)
    plan = " ".join(
        str(r[-1])
        for r in index.conn.execute(
            "EXPLAIN QUERY PLAN SELECT day, chunk_id FROM chunk_entities WHERE folded = ? "
            "AND kind = ? AND day > ? AND (? IS NULL OR day <= ?) ORDER BY day DESC, chunk_id DESC",
            ("peter", "W", "2025-10-01", None, None),
        )
    )
    assert "chunk_entities_facts" in plan and "TEMP B-TREE" not in plan, plan  # no sort
    index.close()
    log = tmp_path / "memory" / "2025-10-25.md"
    log.write_text("# 2025-10-25\n\n## Retain\n- W @Peter @Zoe: Peter likes coffee now.\n")
    (tmp_path / "memory" / "2025-10-03.md").rename(tmp_path / "memory" / "2025-10-23.md")
    mem.recall("Peter", k=3)  # the index changes
    index = mem.open_index()
    check(index)
    assert any(
        r["day"] == "2025-10-25"
        for r in queries.later_facts(
            index, kind="W", entities=("zoe",), after="2025-10-20", as_of=None, not_text="", limit=5
        )
    )
    index.close()
    mem.close()
