"""Read scopes: a personal workspace that reads a team's (``[scopes]`` in clawmem.toml). Recall
finds the team's notes too, marked and cited so `get` reads them back; nothing is ever written to
the team's workspace, its index included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import FIXTURE, approve, cli

pytestmark = pytest.mark.usefixtures("lexical")


def files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def personal_and_team(tmp_path) -> tuple[Path, Path]:
    team = tmp_path / "team"
    shutil.copytree(FIXTURE, team)
    (team / "memory" / "2025-12-08.md").write_text(
        "# 2025-12-08\n\n## Retain\n- W @Kestrel: The kestrel launch review is on Thursday.\n"
    )
    assert cli("-w", str(team), "index").code == 0
    me = tmp_path / "me"
    assert cli("init", str(me)).code == 0
    (me / "clawmem.toml").write_text('[scopes]\nteam = "../team"\n')
    approve(me)  # the team's folder is outside this workspace
    assert cli("-w", str(me), "retain", "I prepare the kestrel demo.", "-e", "Kestrel").code == 0
    return me, team


def test_recall_searches_the_scope_marks_and_cites_it(personal_and_team):
    me, team = personal_and_team
    before = files(team)
    r = cli("-w", str(me), "recall", "kestrel", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    scopes = {h.get("scope") for h in data["results"]}
    assert None in scopes and "team" in scopes  # both workspaces answered
    team_hit = next(h for h in data["results"] if h.get("scope") == "team")
    assert team_hit["citation"].startswith("team:memory/") or team_hit["citation"].startswith(
        "team:bank/"
    )
    assert "scopes searched: team" in data["notes"]

    # The citation reads back, from the team's file.
    path, _, lines = team_hit["citation"].partition("#L")
    start = int(lines.split("-")[0])
    got = cli("-w", str(me), "get", path, "--from", str(start), "--lines", "1", "--json")
    assert got.code == 0, got.err
    g = json.loads(got.out)
    real = (team / path.removeprefix("team:")).read_text().splitlines()[start - 1]
    assert g["text"].rstrip("\n") == real and g["citation"].startswith("team:")

    # status says what recall can search
    st = json.loads(cli("-w", str(me), "status", "--json").out)
    assert st["scopes"] == [{"name": "team", "path": str(team.resolve()), "state": "ok"}]

    # Nothing was written into the scope: not its Markdown, not its index.
    assert files(team) == before


def test_retain_never_writes_into_a_scope(personal_and_team):
    me, team = personal_and_team
    before = files(team)
    assert cli("-w", str(me), "retain", "The kestrel demo moved to Friday.").code == 0
    assert files(team) == before


def test_a_missing_or_unindexed_scope_is_reported(personal_and_team, tmp_path):
    me, team = personal_and_team
    shutil.rmtree(team / ".memory")
    data = json.loads(cli("-w", str(me), "recall", "kestrel", "--json").out)
    assert any(d.startswith("scope team") and "not indexed" in d for d in data["degraded"])
    assert not (team / ".memory").exists()  # still nothing written there
    assert data["results"]  # this workspace still answers
    (me / "clawmem.toml").write_text('[scopes]\nteam = "../nowhere"\n')
    approve(me)
    data = json.loads(cli("-w", str(me), "recall", "kestrel", "--json").out)
    assert any("not found" in d for d in data["degraded"])


def test_a_bad_scope_entry_is_a_clear_error(personal_and_team):
    me, _ = personal_and_team
    (me / "clawmem.toml").write_text('[scopes]\nteam = ""\n')
    r = cli("-w", str(me), "recall", "kestrel")
    assert r.code != 0 and r.err.startswith("clawmem: error: clawmem.toml: [scopes] team")


def test_links_into_a_scope_resolve_for_check(personal_and_team):
    me, team = personal_and_team
    (me / "memory" / "2025-12-09.md").write_text(
        "# 2025-12-09\n\nAsked [[team:Peter]] about [[team:bank/entities/Peter.md|the page]];"
        " [[team:Nobody]] and [[other:Peter]] do not resolve.\n"
    )
    before = files(team)
    r = cli("-w", str(me), "check", "--json")
    messages = sorted(p["message"] for p in json.loads(r.out))
    assert len(messages) == 2, messages
    assert messages[0].startswith("broken link [[other:Peter]]")  # not a scope: a plain name
    assert messages[1].startswith("broken link [[team:Nobody]]")  # no such note in the scope
    assert files(team) == before


def test_links_shows_where_a_link_into_a_scope_points(personal_and_team):
    me, _ = personal_and_team
    (me / "memory" / "2025-12-09.md").write_text("# 2025-12-09\n\nAsked [[team:Peter]].\n")
    r = cli("-w", str(me), "links", "memory/2025-12-09.md", "--json")
    assert r.code == 0, r.err
    (link,) = json.loads(r.out)["outgoing"]
    assert link["to"] == "team:bank/entities/Peter.md" and link["status"] == "ok"
    got = cli("-w", str(me), "get", link["to"], "--lines", "1", "--json")
    assert json.loads(got.out)["text"].startswith("# Peter")


def test_scopes_are_merged_by_relevance_not_interleaved_by_rank(personal_and_team):
    """Issue 45: a team fact that answers the question comes before a local page that only
    names its subject; each list keeps its own order."""
    me, team = personal_and_team
    (me / "bank" / "entities" / "Dana.md").write_text("# Dana\n\nA customer from Graz.\n")
    (team / "memory" / "2025-12-09.md").write_text(
        "# 2025-12-09\n\n## Retain\n"
        "- W @Dana: Dana's escalation of the refund ticket went to the payments on-call.\n"
    )
    assert cli("-w", str(team), "index").code == 0
    r = cli("-w", str(me), "recall", "Dana escalation", "--json", "-k", "8")
    assert r.code == 0, r.err
    hits = json.loads(r.out)["results"]
    first = hits[0]
    assert first.get("scope") == "team" and first["citation"] == "team:memory/2025-12-09.md#L4-L4"
    local = [h for h in hits if h.get("scope") is None]
    assert local and local[0]["citation"].startswith("bank/entities/Dana.md")
    assert first["relevance"] > local[0]["relevance"]
    # Each workspace's own order is kept.
    for scope in (None, "team"):
        mine = [h for h in hits if h.get("scope") == scope]
        lows = [min(h["relevance"] for h in mine[: i + 1]) for i in range(len(mine))]
        assert lows == sorted(lows, reverse=True)


def test_merged_hits_are_scored_at_their_merged_place(personal_and_team):
    """A scope's hits were scored among its own: merged, each hit's relevance is read again at
    its place in the one list (relevance reads the place), the order and the first hit's
    relevance unchanged."""
    from clawmem import open_workspace
    from clawmem.recall import relevance

    me, team = personal_and_team
    mem = open_workspace(me)
    res = mem.recall("kestrel launch review demo", k=10, min_relevance=0.0)
    mem.close()
    assert {h.scope for h in res.hits} == {None, "team"}
    model = relevance.model_named(res.relevance["model"])
    assert model is not None
    moved = 0
    for place, h in enumerate(res.hits, 1):
        assert h.features is not None and h.features.rank == place
        assert round(h.relevance, 6) == round(model.probability(h.features), 6)
        moved += place > 1 and h.scope != res.hits[0].scope
    assert moved  # the other workspace's hits were placed after the first
    alone = open_workspace(team).recall("kestrel launch review demo", k=10, min_relevance=0.0)
    first_team = next(h for h in res.hits if h.scope == "team")
    if first_team is not res.hits[0]:
        # shown later than in its own list: scored lower than there
        assert first_team.relevance < alone.hits[0].relevance
    else:
        assert round(first_team.relevance, 6) == round(alone.hits[0].relevance, 6)
