"""Memory you can correct, forget and carry (issue 41), run as a user runs it: the CLI on a copy of
the fixture workspace, real files, real git, the real index.

facts and entities NAME list without a question; correct writes the new fact with a note naming
the old one, recall shows the correction first and --as-of before it the old one; history shows
the chain and who wrote each statement; forget blanks the lines in place and keeps them out of a
rebuild, a merge, reflect, flush and transcripts; export and import carry facts out and in (and
round-trip); Claude's memory tool stays inside bank/memories; episode pages age out on request.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from datetime import date
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.markdown.forgotten import FORGOTTEN, key

from .conftest import cli, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")

TODAY = date.today().isoformat()


@pytest.fixture(autouse=True)
def _today():
    """Today, read as each test starts: a suite that runs past midnight once compared a fact
    retained on the new day with the day this module was imported on."""
    global TODAY
    TODAY = date.today().isoformat()


OLD = "memory/2025-11-27.md#L26-L26"  # "- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) …"


def run(ws: Path, *args: str):
    r = cli("-w", str(ws), *args)
    return r


def js(ws: Path, *args: str):
    r = cli("-w", str(ws), *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


# ---------------------------------------------------------------------------- facts, entities


def test_facts_lists_newest_first_with_filters(ws):
    d = js(ws, "facts", "--entity", "Peter", "--limit", "3")
    assert d["shown"] == 3 and d["total"] > 3
    days = [f["timestamp"] for f in d["facts"]]
    assert days == sorted(days, reverse=True)
    assert all("Peter" in f["entities"] for f in d["facts"])
    ops = js(ws, "facts", "--kind", "O", "--min-confidence", "0.9", "--all")
    assert ops["facts"] and all(f["kind"] == "O" and f["confidence"] >= 0.9 for f in ops["facts"])
    since = js(ws, "facts", "--since", "2025-11-27", "--until", "2025-11-27", "--all")
    day = "2025-11-27"
    assert since["facts"] and all(  # recorded that day, or stating a validity that covers it
        f["timestamp"] == day or (f["valid_from"] <= day <= (f["valid_to"] or "9999"))
        for f in since["facts"]
    )


def test_entities_name_shows_page_and_facts(ws):
    d = js(ws, "entities", "Peter")
    assert d["entity"] == "Peter" and d["page"] == "bank/entities/Peter.md"
    assert d["total"] >= 5 and all("Peter" in f["entities"] for f in d["facts"])
    bad = run(ws, "entities", "Petr")
    assert bad.code == 2 and "did you mean @Peter" in bad.err


# ---------------------------------------------------------------------------- correct, history


def test_correct_supersedes_and_as_of_shows_the_old(ws):
    d = js(ws, "correct", OLD, "Currently in Essaouira (Nov 28–Dec 1, 2025) after Marrakech.")
    assert d["stored"] and d["supersedes"] == OLD and d["entities"] == ["Peter"]
    log = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    assert "  - supersedes [[memory/2025-11-27.md#L26]]\n" in log
    old_line = (ws / "memory/2025-11-27.md").read_text(encoding="utf-8").splitlines()[25]
    assert "Marrakech" in old_line  # the old line is never touched
    res = js(ws, "recall", "Peter Marrakech birthday", "-k", "5")
    cites = [h["citation"] for h in res["results"]]
    assert d["source"] in cites and OLD in cites
    assert cites.index(d["source"]) == cites.index(OLD) - 1  # the correction right before
    old = next(h for h in res["results"] if h["citation"] == OLD)
    assert old["superseded_by"] == d["source"]
    before = js(ws, "recall", "Peter Marrakech birthday", "--as-of", "2025-11-28", "-k", "5")
    hit = next(h for h in before["results"] if h["citation"] == OLD)
    assert hit["superseded_by"] is None
    assert d["source"] not in [h["citation"] for h in before["results"]]
    hist = js(ws, "history", OLD)
    steps = [s["citation"] for s in hist["steps"]]
    assert steps[-2:] == [OLD, d["source"]]
    assert hist["steps"][-1]["writer"] == "correct"
    assert hist["steps"][-2]["writer"] == "hand edit"


def test_correct_takes_the_statement_written_as_a_retain_line(ws):
    """A user who writes the correction the way retain takes it means that fact: its head is
    read (kind, people, confidence), never written again in front of the statement."""
    d = js(ws, "correct", OLD, "B @Peter @Kate: Peter drove Kate to Essaouira on Nov 28.")
    log = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    line = next(x for x in log.splitlines() if "Essaouira on Nov 28" in x)
    assert line == "- B @Peter @Kate: Peter drove Kate to Essaouira on Nov 28."
    assert d["kind"] == "B" and d["entities"] == ["Peter", "Kate"] and d["supersedes"] == OLD
    plain = js(ws, "correct", d["source"], "Peter drove Kate to Essaouira on Nov 29.")
    assert plain["kind"] == "B" and plain["entities"] == ["Peter", "Kate"]  # the old fact's
    bad = run(ws, "correct", OLD, "O(c=0.9) @Peter: likes Essaouira", "--kind", "W")
    assert bad.code == 2 and "kind" in bad.err


def test_a_corrected_fact_is_one_unit_not_two(tmp_path):
    """The note correct writes under a fact ("supersedes [[…]]") is not a second unit holding
    the fact again, without its kind or people, that recall could show in the fact's place; a
    note a person wrote under a fact keeps its own unit."""
    ws = tmp_path / "w"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    day = ws / "memory" / "2026-03-02.md"
    day.write_text(
        "# 2026-03-02\n\n## Retain\n- W @Kate: Kate moved to Lisbon in March.\n", encoding="utf-8"
    )
    d = js(ws, "correct", "memory/2026-03-02.md#L4", "Kate moved to Porto in March, not Lisbon.")
    with day.open("a", encoding="utf-8") as f:
        f.write("- W @Kate: Kate likes trams.\n  - she rides the 28 to Graca on Sundays\n")
    res = js(ws, "recall", "Porto", "-k", "5")
    assert [(h["citation"], h["kind"]) for h in res["results"]] == [(d["source"], "W")]
    idx = sqlite3.connect(ws / ".memory" / "index.sqlite")
    units = idx.execute("SELECT path, start_line, end_line, kind FROM chunks").fetchall()
    idx.close()
    new = int(d["source"].rsplit("#L", 1)[1].split("-")[0])
    today = d["source"].split("#")[0]
    assert [u for u in units if u[0] == today and u[1] == new] == [(today, new, new, "W")]
    tram = [u[1:] for u in units if u[0] == "memory/2026-03-02.md" and u[1] == 5]
    assert sorted(tram, key=str) == sorted([(5, 5, "W"), (5, 6, None)], key=str)


def test_correct_refuses_a_line_that_is_not_a_fact(ws):
    r = run(ws, "correct", "memory/2025-11-27.md#L1-L1", "x")
    assert r.code == 2 and "is not a fact" in r.err
    r = run(ws, "correct", "../outside.md#L1", "x")
    assert r.code == 3


def test_retain_warns_of_a_near_duplicate(ws):
    d = js(
        ws, "retain", "Peter's rule: no production deploys on Fridays unless on fire", "-e", "Peter"
    )
    assert d["stored"] and "memory/2025-11-07.md#L31-L31" in d["similar"]


# ---------------------------------------------------------------------------- forget


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    p = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


LINE = "memory/2025-11-16.md#L12-L12"


def test_forget_previews_then_blanks_in_place_and_stays_forgotten(ws):
    path = ws / "memory/2025-11-16.md"
    before = path.read_bytes()
    raw = before.decode().splitlines()[11]
    ino = path.stat().st_ino
    preview = run(ws, "forget", LINE, "--dry-run")
    assert preview.code == 0 and "would forget 1 line" in preview.out and LINE in preview.out
    assert path.read_bytes() == before  # a preview writes nothing
    assert run(ws, "forget", LINE).code == 2  # no terminal, no --yes: refused, nothing done
    done = js(ws, "forget", LINE, "--yes")
    assert done["applied"] and done["lines_forgotten"] == 1
    after = path.read_bytes()
    assert len(after) == len(before) and path.stat().st_ino == ino  # same size, same file
    assert after.decode().splitlines()[11].strip() == ""
    assert (ws / FORGOTTEN).read_text().count(key(raw)) == 1
    assert (
        "flights to Marrakech" not in run(ws, "recall", "booked flights Marrakech", "-k", "20").out
    )
    # A rebuild from scratch reads the line again if someone pastes it back: it stays out.
    lines = after.decode().splitlines(keepends=True)
    lines[11] = raw + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    assert run(ws, "index", "--force").code == 0
    assert (
        "flights to Marrakech" not in run(ws, "recall", "booked flights Marrakech", "-k", "20").out
    )
    facts = js(ws, "facts", "--entity", "Andy", "--all")
    assert all("booked flights" not in f["content"] for f in facts["facts"])


def test_forget_records_only_the_lines_it_blanked(ws):
    """Forget recorded every line's tombstone before blanking the lines: when a file's blanking
    was refused (it changed after forget read it, here while forget waited for the write lock
    another writer held), the tombstones stayed, and a line the user still had vanished from
    recall, rebuilds and merges. A line is recorded once it is gone from its file: the file
    blanked first (it sorts first) is recorded, the one that changed keeps its line, unrecorded."""
    import sys
    import time

    from clawmem.files.locking import WRITE_QUEUE, is_held

    first, changed = ws / "memory/2025-11-07.md", ws / "memory/2025-11-16.md"
    gone = first.read_text().splitlines()[30]
    kept = changed.read_text().splitlines()[11]
    assert run(ws, "index").code == 0
    holder = subprocess.Popen(  # another clawmem writer, holding the write lock until told
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from clawmem.files.locking import write_lock\n"
            "with write_lock(Path(sys.argv[1]), purpose='clawmem reflect'):\n"
            "    print('locked', flush=True); sys.stdin.readline()",
            str(ws / ".memory"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "locked"
        cmd = [sys.executable, "-m", "clawmem", "-w", str(ws), "forget", "--yes"]
        forget = subprocess.Popen(
            [*cmd, "memory/2025-11-07.md#L31-L31", LINE],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # forget has read its lines and waits in the write lock's queue: the user edits the log.
        deadline = time.monotonic() + 120
        while not is_held(ws / ".memory" / WRITE_QUEUE) and forget.poll() is None:
            assert time.monotonic() < deadline, "forget never waited for the write lock"
            time.sleep(0.05)
        changed.write_text("- a note written meanwhile\n" + changed.read_text(), encoding="utf-8")
    finally:
        holder.communicate("go\n")
    _, err = forget.communicate(timeout=120)
    assert forget.returncode != 0 and "changed since the preview" in err, err
    assert kept in changed.read_text()  # still in the file (one line down) ...
    listed = (ws / FORGOTTEN).read_text()
    assert key(kept) not in listed  # ... so not hidden: recall still finds it
    assert "flights to Marrakech" in run(ws, "recall", "booked flights Marrakech", "-k", "20").out
    assert first.read_text().splitlines()[30].strip() == "" and key(gone) in listed


@pytest.mark.parametrize("brk", ["\f", "\v", "\x85", "\u2028", "\u2029", "\x1c"])
def test_a_citation_names_the_same_line_for_recall_get_and_forget(ws, brk):
    """A line holding a character str.splitlines breaks at (a PDF's form feed, a pasted U+2028)
    is one line to the index, which cites the lines after it so; get, forget and the merge
    driver counted it as two. get of a recalled citation showed the line above it, and forget
    of a fact's citation previewed its section's heading, then failed on the bytes after
    recording the heading's hash: every "## Retain" of the workspace was left out of the index
    (0 facts), and of every merge. The three count lines one way now."""
    log = ws / "memory" / "2026-01-14.md"
    log.write_text(
        f"# 2026-01-14\n\nPasted from the PDF: page one{brk}page two.\n\n## Retain\n"
        "- W @Ann: Ann keeps the blue notebook\n- W @Ann: Ann owes Bob the gnu money\n",
        encoding="utf-8",
    )
    assert run(ws, "index").code == 0
    hit = js(ws, "recall", "Ann blue notebook", "--mode", "lexical", "-k", "1")["results"][0]
    assert hit["citation"] == "memory/2026-01-14.md#L6-L6"
    got = js(ws, "get", hit["citation"])
    assert got["text"] == "- W @Ann: Ann keeps the blue notebook" and got["total_lines"] == 7
    done = js(ws, "forget", hit["citation"], "--yes")
    assert done["applied"] and done["lines_forgotten"] == 1
    text = log.read_text(encoding="utf-8")
    assert "blue notebook" not in text and "## Retain" in text and brk in text
    assert key("## Retain") not in (ws / FORGOTTEN).read_text()
    facts = js(ws, "facts", "--entity", "Ann", "--all")["facts"]
    assert [f["content"] for f in facts] == ["Ann owes Bob the gnu money"]
    assert len(js(ws, "facts", "--all")["facts"]) > 20  # the other logs' facts are all there


def test_forgetting_a_section_with_its_heading_leaves_every_other_section_alone(ws):
    """A tombstone hides every line of its text in the workspace. Forgetting a section with its
    "## Retain" heading (a citation range) recorded the heading's hash: the next rebuild left
    every fact of the workspace out (0 facts), and the merge driver dropped the heading from
    every log it merged. A list a cloned repository commits could do the same on purpose. A line
    that is only structure is blanked where it was forgotten, never tombstoned, and no
    tombstone hides one."""
    log = ws / "memory" / "2026-01-15.md"
    log.write_text(
        "# 2026-01-15\n\n## Retain\n- W @Ann: Ann keeps the blue notebook\n", encoding="utf-8"
    )
    assert run(ws, "index").code == 0
    before = len(js(ws, "facts", "--all")["facts"])
    done = js(ws, "forget", "memory/2026-01-15.md#L3-L4", "--yes")
    assert done["applied"] and done["lines_forgotten"] == 2
    assert log.read_text(encoding="utf-8").splitlines()[2].strip() == ""  # blanked in its file
    listed = (ws / FORGOTTEN).read_text()
    assert key("- W @Ann: Ann keeps the blue notebook") in listed
    assert key("## Retain") not in listed
    # A list from a clone that names structure anyway hides none of it.
    with (ws / FORGOTTEN).open("a", encoding="utf-8") as f:
        for line in ("## Retain", "```", "---"):
            f.write(f"{key(line)}  memory/x.md  2026-01-01\n")
    assert run(ws, "index", "--force").code == 0
    facts = js(ws, "facts", "--all")["facts"]
    assert len(facts) == before - 1 and all("blue notebook" not in f["content"] for f in facts)


def test_forget_an_entity_takes_its_facts_mentions_and_page(ws):
    done = js(ws, "forget", "--entity", "Kenji", "--yes")
    assert done["pages_removed"] == ["bank/entities/Kenji.md"]
    assert not (ws / "bank/entities/Kenji.md").exists()
    assert js(ws, "facts", "--entity", "Kenji", "--all")["total"] == 0
    text = "".join(p.read_text(encoding="utf-8") for p in ws.rglob("*.md"))
    assert "@Kenji" not in text and "[[Kenji]]" not in text and "(Kenji.md)" not in text
    # Lines naming Kenji as a plain word are kept, and the preview said which.
    assert any("name Kenji in plain text and are kept" in n for n in done["notes"])


def two_clones(ws: Path, tmp_path: Path) -> Path:
    """``ws`` committed, pushed to a bare remote and cloned beside it, both with clawmem's git
    hooks: two clones of one shared workspace. Returns the other clone."""
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    assert run(ws, "init", str(ws), "--git").code == 0
    _git(ws, "checkout", "-q", "-B", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "workspace")
    _git(ws, "remote", "add", "origin", str(remote))
    _git(ws, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    _git(tmp_path, "clone", "-q", str(remote), str(other))
    assert run(other, "init", str(other), "--git").code == 0
    return other


def forget_here_append_there(ws: Path, other: Path, appended: str) -> str:
    """Here: forget LINE, commit, push. There: append to the same log (where the line still
    is), commit, pull. Returns the merged log as the other clone has it."""
    js(ws, "forget", LINE, "--yes")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "forget")
    _git(ws, "push", "-q", "origin", "main")
    with open(other / "memory/2025-11-16.md", "a", encoding="utf-8") as f:
        f.write(appended + "\n")
    _git(other, "add", "-A")
    _git(other, "commit", "-qm", "other")
    _git(other, "pull", "-q", "--no-rebase", "origin", "main")
    return (other / "memory/2025-11-16.md").read_text(encoding="utf-8")


def test_forget_survives_a_git_merge_that_brings_the_line_back(ws, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    other = two_clones(ws, tmp_path)
    # The merge must not bring the forgotten line back.
    text = forget_here_append_there(ws, other, "- a line written in the other clone")
    assert "booked flights to Marrakech" not in text
    assert "a line written in the other clone" in text
    assert "flights to Marrakech" not in run(other, "recall", "booked flights", "-k", "20").out


def test_forget_keeps_a_transcript_message_out_of_index_and_flush(ws, tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    said = [
        ("user", "my locker combination is left 12 right 7"),
        ("assistant", "Noted, the gym locker. Anything else about the gym?"),
        ("user", "No, that is all about the gym locker for today."),
    ]
    lines = [
        {
            "type": role,
            "message": {"role": role, "content": text},
            "sessionId": "5f0c2a3e-0000-4000-8000-000000000001",
            "uuid": f"5f0c2a3e-0000-4000-8000-00000000001{n}",
            "timestamp": f"2025-11-20T10:00:0{n}.000Z",
        }
        for n, (role, text) in enumerate(said)
    ]
    t = sessions / "s1.jsonl"
    t.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{sessions}"]\n', encoding="utf-8")
    assert run(ws, "trust").code == 0  # a folder outside the workspace: approved first
    res = js(ws, "recall", "locker combination", "--source", "sessions", "-k", "3")
    hit = next(h for h in res["results"] if "combination" in h["snippet"])
    before = t.read_bytes()
    done = js(ws, "forget", hit["citation"], "--yes")
    assert done["transcript_lines"] and t.read_bytes() == before  # not ours to edit
    res = js(ws, "recall", "locker combination", "--source", "sessions", "-k", "5")
    assert all("combination" not in h["snippet"] for h in res["results"])
    mem = open_workspace(ws)
    said = mem.get(hit["citation"])
    assert "combination" not in said.text
    flushed = js(ws, "flush", str(t))  # the episode page is written without the message
    assert flushed["page"], flushed
    page = (ws / flushed["page"]).read_text(encoding="utf-8")
    assert "gym locker" in page and "combination" not in page


# ---------------------------------------------------------------------------- export, import


def test_export_then_import_into_an_empty_workspace_gives_the_same_facts(ws, tmp_path):
    out = tmp_path / "facts.jsonl"
    assert run(ws, "export", "--out", str(out)).code == 0
    exported = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    empty = tmp_path / "empty"
    assert run(empty, "init", str(empty)).code == 0
    preview = js(empty, "import", str(out), "--dry-run")
    assert len(preview["facts"]) == len(exported) and preview["dry_run"]
    done = js(empty, "import", str(out), "--yes")
    assert len(done["stored"]) == len(exported) and not done["skipped"]
    again = js(empty, "import", str(out), "--yes")
    assert not again["stored"] and len(again["duplicates"]) == len(exported)  # idempotent
    back = js(empty, "facts", "--all")["facts"]

    def same(f):
        return (
            f["kind"],
            f["content"],
            tuple(sorted(f["entities"])),
            f["confidence"],
            f["timestamp"],
        )

    assert sorted(map(same, back)) == sorted(map(same, exported))
    log = next((empty / "memory").glob("2025-11-27.md")).read_text(encoding="utf-8")
    assert "  - imported from facts.jsonl#L" in log


def test_import_writes_no_credential_from_an_entity_or_the_sources_name(ws, tmp_path):
    """Import redacted a fact's statement, then told retain the text was clean: an entity that
    is a credential (@ghp_…) and a source named after one went into the daily log as written
    (the line and its "imported from" note). The entity is left out, the name redacted."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    src = tmp_path / f"{token}.jsonl"
    row = {"kind": "W", "content": "the deploy bot runs nightly", "entities": [token, "Ann"]}
    src.write_text(json.dumps({**row, "timestamp": "2026-01-21"}) + "\n", encoding="utf-8")
    done = js(ws, "import", str(src), "--yes")
    assert done["stored"], done
    assert token not in json.dumps(done["facts"])  # ("source" is the path as you typed it)
    log = (ws / "memory" / "2026-01-21.md").read_text(encoding="utf-8")
    assert token not in log and "- W @Ann: the deploy bot runs nightly" in log, log
    assert "imported from [redacted].jsonl#L1" in log, log


def test_export_to_a_path_it_cannot_use_is_a_clear_error(ws, tmp_path):
    """An existing file, or a folder that does not exist, was an internal error (exit 70)."""
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    r = run(ws, "export", "-o", str(taken))
    assert r.code == 2 and "already exists" in r.err and "internal error" not in r.err, r.err
    assert taken.read_text() == "mine\n"
    for fmt, out in (("jsonl", tmp_path / "no" / "x.jsonl"), ("okf", Path("/proc/no/okf"))):
        r = run(ws, "export", "--format", fmt, "-o", str(out))
        assert r.code == 2 and "cannot write the export" in r.err, r.err
        assert len(r.err.splitlines()) == 2


def test_okf_export_reads_back(ws, tmp_path):
    folder = tmp_path / "okf"
    d = js(ws, "export", "--format", "okf", "--out", str(folder))
    assert (folder / "index.md").read_text().startswith('---\nokf_version: "0.2"\n---')
    page = (folder / "entities/peter.md").read_text(encoding="utf-8")
    assert page.startswith("---\ntype: Entity\n") and 'resource: "memory/' in page
    empty = tmp_path / "empty"
    run(empty, "init", str(empty))
    done = js(empty, "import", str(folder), "--yes")
    assert len(done["stored"]) + len(done["duplicates"]) == d["facts"]
    assert (
        js(empty, "facts", "--entity", "Peter", "--all")["total"]
        == js(ws, "facts", "--entity", "Peter", "--all")["total"]
    )


def test_import_claude_code_basic_memory_and_mem0(ws, tmp_path):
    cc = tmp_path / "cc" / "memory"
    cc.mkdir(parents=True)
    (cc / "MEMORY.md").write_text(
        "# Project memory\n\n- Tests run with `pytest -n auto`\n- The API key is sk-ant-api03-"
        + "a" * 40
        + "\n"
    )
    basic = tmp_path / "bm"
    basic.mkdir()
    (basic / "Kate.md").write_text(
        "---\ntitle: Kate\n---\n# Kate\n\n## Observations\n"
        "- [preference] Likes short replies #style\n- [event] Started pottery class\n\n"
        "## Relations\n- works_at [[Acme]]\n"
    )
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps(
            [
                {
                    "id": "1",
                    "memory": "Prefers Hetzner over AWS",
                    "user_id": "elise",
                    "created_at": "2025-10-01T09:00:00Z",
                }
            ]
        )
    )
    a = js(ws, "import", str(cc), "--yes")
    assert a["format"] == "claude-code" and len(a["stored"]) == 2
    text = "\n".join(p.read_text() for p in (ws / "memory").glob("*.md"))
    assert "sk-ant-api03-" not in text  # redacted before it was written
    b = js(ws, "import", str(basic), "--yes")
    assert b["format"] == "basic-memory"
    kate = js(ws, "facts", "--entity", "Kate", "--all")["facts"]
    assert {f["kind"] for f in kate} == {"O", "B", "W"}
    assert any("works at [[Acme]]" in f["content"] for f in kate)
    c = js(ws, "import", str(mem0), "--yes")
    assert c["format"] == "mem0"
    elise = js(ws, "facts", "--entity", "elise")["facts"]
    assert elise[0]["timestamp"] == "2025-10-01"


def test_import_names_a_source_over_the_cap_instead_of_importing_nothing(ws, tmp_path):
    """A source over the cap once read as empty: "0 fact(s)", exit 0, and no word of why."""
    from clawmem.ingest.importing import MAX_SOURCE_BYTES

    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:  # sparse: the size is over the cap, the disk holds one line
        f.write(b'{"kind": "W", "content": "Zanzibar ferry leaves at nine"}\n')
        f.truncate(MAX_SOURCE_BYTES + 1)
    r = run(ws, "import", str(big), "--format", "jsonl", "--dry-run")
    assert r.code != 0
    assert "big.jsonl" in r.err and "cap" in r.err and len(r.err.splitlines()) <= 2
    folder = tmp_path / "cc"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- Tests run with pytest\n")
    with (folder / "notes.md").open("wb") as f:
        f.write(b"- a bullet in a huge note\n")
        f.truncate(MAX_SOURCE_BYTES + 1)
    if hasattr(os, "mkfifo"):  # and a FIFO named like a note: reading it waited for ever
        os.mkfifo(folder / "pipe.md")
    done = js(ws, "import", str(folder), "--format", "claude-code", "--dry-run")
    assert [c["content"] for c in done["facts"]] == ["Tests run with pytest"]
    assert any(s.startswith("notes.md: ") and "cap" in s for s in done["skipped"])
    if hasattr(os, "mkfifo"):
        assert "pipe.md: not a regular file" in done["skipped"]


def test_a_source_that_is_a_fifo_is_refused_at_once(ws, tmp_path):
    """`clawmem import PIPE --format mem0` read the FIFO as the export's JSON and waited until
    some program wrote to it and closed it: for ever, when none does."""
    from .conftest import cli_subprocess

    pipe = tmp_path / "export.json"
    os.mkfifo(pipe)
    for fmt in ("mem0", "auto"):
        r = cli_subprocess(
            "-w", str(ws), "import", str(pipe), "--format", fmt, "--dry-run", timeout=60
        )
        assert r.code == 7, r.err
        assert r.err.startswith(f"clawmem: error: {pipe}: not a regular file or a folder"), r.err


def test_okf_import_reads_only_plain_values_of_the_front_matter(ws, tmp_path):
    """A concept whose title was a YAML alias bomb (nested aliases, ~600 bytes) made the import
    build a string of billions of items: it never returned."""
    folder = tmp_path / "okf"
    folder.mkdir()
    (folder / "index.md").write_text('---\nokf_version: "0.2"\n---\n# shared\n')
    head = ["---", "type: Entity", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        head.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    head += ["title: *i", "---", "# Bomb", "- Kate likes short replies"]
    (folder / "bomb.md").write_text("\n".join(head) + "\n")
    r = cli_subprocess("-w", str(ws), "import", str(folder), "--dry-run", "--json", timeout=60)
    assert r.code == 0, r.err
    facts = json.loads(r.out)["facts"]
    assert [f["content"] for f in facts] == ["Kate likes short replies"]
    assert facts[0]["entities"] == ["bomb"]  # the file's name stands in for the title


def test_okf_front_matter_nested_too_deeply_is_skipped_not_an_internal_error(ws, tmp_path):
    """PyYAML composes a document recursively: a title of 20,000 nested lists raised
    RecursionError and the whole import was an internal error. That concept is skipped, named,
    and the others are imported."""
    folder = tmp_path / "okf"
    folder.mkdir()
    (folder / "deep.md").write_text(
        "---\ntype: Entity\ntitle: " + "[" * 20_000 + "]" * 20_000 + "\n---\n- x\n"
    )
    (folder / "kate.md").write_text("---\ntype: Entity\n---\n# Kate\n- Kate likes tea\n")
    r = cli("-w", str(ws), "import", str(folder), "--format", "okf", "--dry-run", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [f["content"] for f in data["facts"]] == ["Kate likes tea"]
    assert "deep.md: front matter is not YAML (nested too deeply)" in data["skipped"]


# ---------------------------------------------------------------------------- Claude's memory tool


def test_claude_memory_tool_is_confined_redacted_and_indexed(ws):
    tool = open_workspace(ws).memory_tool()
    assert "created" in tool.handle(
        {
            "command": "create",
            "path": "/memories/prefs.txt",
            "file_text": "Kate likes short replies\npassword: hunter2xyz\n",
        }
    )
    assert (ws / "bank/memories/prefs.txt.md").is_file()
    shown = tool.handle({"command": "view", "path": "/memories/prefs.txt"})
    assert "hunter2xyz" not in shown and "Kate likes short replies" in shown
    assert "/memories/prefs.txt" in tool.handle({"command": "view", "path": "/memories"})
    assert "edited" in tool.handle(
        {
            "command": "str_replace",
            "path": "/memories/prefs.txt",
            "old_str": "short",
            "new_str": "very short",
        }
    )
    assert "edited" in tool.handle(
        {
            "command": "insert",
            "path": "/memories/prefs.txt",
            "insert_line": 0,
            "insert_text": "# Preferences",
        }
    )
    hits = js(ws, "recall", "Kate very short replies", "-k", "3")["results"]
    assert hits[0]["path"] == "bank/memories/prefs.txt.md"
    assert "renamed" in tool.handle(
        {"command": "rename", "old_path": "/memories/prefs.txt", "new_path": "/memories/kate.md"}
    )
    for bad in ("/memories/../MEMORY.md", "/etc/passwd", "/memories/.hidden", "/memories/a\x00b"):
        assert tool.handle({"command": "view", "path": bad}).startswith("Error")
    os.symlink("/etc", ws / "bank/memories/out")
    assert tool.handle({"command": "view", "path": "/memories/out/passwd"}).startswith("Error")
    assert tool.handle(
        {"command": "create", "path": "/memories/out/x.md", "file_text": "x"}
    ).startswith("Error")
    assert "deleted" in tool.handle({"command": "delete", "path": "/memories/kate.md"})
    assert not (ws / "bank/memories/kate.md").exists()


def test_claude_memory_tool_never_writes_back_part_of_a_file(ws):
    """An edit read at most the cap (decoding bad bytes as U+FFFD) and wrote that back: a
    person's 1.6 MB note lost everything after its first megabyte to one str_replace."""
    from clawmem.ingest.claude_memory import MAX_FILE_BYTES

    folder = ws / "bank/memories"
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / "big.md"
    rows = "".join(f"- note {i} about the project and its parts\n" for i in range(40_000))
    big.write_text("REPLACE_ME\n" + rows + "THE LAST LINE\n")
    assert big.stat().st_size > MAX_FILE_BYTES
    latin = folder / "latin.md"
    latin.write_bytes("- caf\xe9 cr\xe8me, REPLACE_ME\n".encode("latin-1"))
    before = {p: p.read_bytes() for p in (big, latin)}
    tool = open_workspace(ws).memory_tool()
    for path in ("/memories/big.md", "/memories/latin.md"):
        edit = {"command": "str_replace", "path": path, "old_str": "REPLACE_ME", "new_str": "x"}
        assert tool.handle(edit).startswith("Error")
        put = {"command": "insert", "path": path, "insert_line": 0, "insert_text": "# Notes"}
        assert tool.handle(put).startswith("Error")
    assert {p: p.read_bytes() for p in (big, latin)} == before
    assert "REPLACE_ME" in tool.handle({"command": "view", "path": "/memories/big.md"})


def test_claude_memory_tool_answers_a_disk_refusal_as_an_error(ws):
    """A file where a folder is named, or a name too long, raised OSError out of ``handle``
    instead of returning the tool result's "Error: …" text."""
    tool = open_workspace(ws).memory_tool()
    assert "created" in tool.handle(
        {"command": "create", "path": "/memories/a/x.md", "file_text": "hi"}
    )
    for path in ("/memories/a/x.md/y.md", "/memories/" + "a" * 300 + ".md"):
        out = tool.handle({"command": "create", "path": path, "file_text": "x"})
        assert out.startswith("Error: "), out
    assert (ws / "bank/memories/a/x.md").read_text() == "hi"
    if hasattr(os, "mkfifo"):  # a FIFO named like a note: reading it waited for a writer
        os.mkfifo(ws / "bank/memories/pipe.md")
        for call in (
            {"command": "view", "path": "/memories/pipe.md"},
            {"command": "str_replace", "path": "/memories/pipe.md", "old_str": "a", "new_str": "b"},
        ):
            assert tool.handle(call) == "Error: /memories/pipe.md: not a regular file"


def test_claude_memory_tool_refuses_a_name_the_index_would_leave_out(ws):
    """A name with a line break, a control or a bidi-override character was created ("File
    created successfully"), though the scan leaves such a file out: a remote agent's note was
    never searchable, and a file named "a\n## Retain…" sat in the user's workspace (and git)."""
    tool = open_workspace(ws).memory_tool()
    assert "created" in tool.handle(
        {"command": "create", "path": "/memories/ok.md", "file_text": "x"}
    )
    for bad in ("/memories/a\nb.md", "/memories/\u202eevil.md", "/memories/d\x1b[2J/x.md"):
        out = tool.handle({"command": "create", "path": bad, "file_text": "hi"})
        assert out.startswith("Error: ") and "line break or control character" in out, out
        renamed = {"command": "rename", "old_path": "/memories/ok.md", "new_path": bad}
        assert tool.handle(renamed).startswith("Error: ")
    assert sorted(p.name for p in (ws / "bank/memories").iterdir()) == ["ok.md"]


# ---------------------------------------------------------------------------- episodes age out


def test_old_episode_pages_are_archived_and_hand_written_ones_kept(ws):
    from clawmem.markdown.markers import splice

    eps = ws / "memory/episodes"
    eps.mkdir(parents=True, exist_ok=True)
    (eps / "2024-01-02-s1.md").write_text(splice(None, ["- said things"], title="Episode s1"))
    (eps / "2024-01-03-mine.md").write_text("# my own notes\n\nwritten by hand\n")
    (eps / f"{TODAY}-s2.md").write_text(splice(None, ["- recent"], title="Episode s2"))
    (ws / "clawmem.toml").write_text("[sessions]\nretention_days = 90\n", encoding="utf-8")
    d = js(ws, "reflect")
    aged = d["episodes_aged_out"]
    assert aged["archived"] == ["memory/episodes/2024-01-02-s1.md"]
    assert any(k.startswith("memory/episodes/2024-01-03-mine.md") for k in aged["kept"])
    assert (ws / ".clawmem/archive/episodes/2024-01-02-s1.md").is_file()
    assert (eps / f"{TODAY}-s2.md").is_file() and (eps / "2024-01-03-mine.md").is_file()


def test_episode_retention_never_moves_a_page_out_or_stops_on_a_bad_date(ws, tmp_path):
    """A committed link .clawmem/archive -> elsewhere (only .clawmem and .clawmem/archive/episodes
    were checked) moved the pages out of the workspace; a page named 2025-13-45-… stopped reflect
    with an internal error (exit 70)."""
    from clawmem.markdown.markers import splice

    eps = ws / "memory/episodes"
    eps.mkdir(parents=True, exist_ok=True)
    (eps / "2024-01-02-s1.md").write_text(splice(None, ["- said things"], title="Episode s1"))
    (eps / "2025-13-45-odd.md").write_text("# a page of mine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / ".clawmem").mkdir(exist_ok=True)
    os.symlink(outside, ws / ".clawmem/archive")
    (ws / "clawmem.toml").write_text("[sessions]\nretention_days = 90\n", encoding="utf-8")
    d = js(ws, "reflect")
    aged = d["episodes_aged_out"]
    assert aged["archived"] == [] and list(outside.iterdir()) == []
    assert (eps / "2024-01-02-s1.md").is_file() and (eps / "2025-13-45-odd.md").is_file()
    kept = "\n".join(aged["kept"])
    assert "2024-01-02-s1.md: not archived" in kept and "symbolic link" in kept
    assert "2025-13-45-odd.md" in kept


# ---------------------------------------------------------------------------- over MCP


def test_mcp_list_update_forget_and_files(ws):
    from clawmem.cli.mcp.dispatch import Tools

    tools = Tools(open_workspace(ws))
    ok, listed = tools.call("memory_list", {"entity": "Peter", "limit": 2})
    assert ok and listed["shown"] == 2
    ok, fixed = tools.call("memory_update", {"citation": OLD, "text": "Currently in Essaouira."})
    assert ok and fixed["supersedes"] == OLD
    ok, hist = tools.call("memory_history", {"target": OLD})
    assert ok and hist["steps"][-1]["writer"] == "mcp:stdio"  # the caller: a token name over HTTP
    ok, preview = tools.call("memory_forget", {"citations": [LINE]})
    assert ok and not preview["applied"] and preview["lines"][0]["citation"] == LINE
    assert "booked flights" in (ws / "memory/2025-11-16.md").read_text(encoding="utf-8")
    ok, done = tools.call("memory_forget", {"citations": [LINE], "confirm": True})
    assert ok and done["applied"]
    # A read-only caller cannot forget, correct or write files.
    from dataclasses import replace

    from clawmem.cli.mcp.access import LOCAL

    reader = replace(LOCAL, write=False, who="reader")
    for name in ("memory_forget", "memory_update", "memory_files"):
        ok, text = tools.call(name, {"citations": [LINE]}, reader)
        assert not ok and "unknown tool" in text
    ok, made = tools.call(
        "memory_files", {"command": "create", "path": "/memories/a.md", "file_text": "hello"}
    )
    assert ok and "created" in made["result"]


def test_claude_memory_tool_never_edits_a_file_another_program_holds_open(ws, tmp_path):
    """str_replace renamed the edited file over the old one: a program holding the note open
    for append (another agent's logger) went on writing into the replaced file, and its lines
    were lost. The edit is refused while it is held; once it is closed, the edit keeps them."""
    import subprocess
    import sys
    import time

    note = ws / "bank/memories/prefs.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("Kate likes short replies.\n")
    go, ready = tmp_path / "go", tmp_path / "ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "f = open(sys.argv[1], 'a')\n"
            "f.write('agent line 1\\n'); f.flush(); open(sys.argv[2], 'w').close()\n"
            "while not os.path.exists(sys.argv[3]): time.sleep(0.02)\n"
            "f.write('agent line 2\\n'); f.close()\n",
            str(note),
            str(ready),
            str(go),
        ]
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        tool = open_workspace(ws).memory_tool()
        edit = {
            "command": "str_replace",
            "path": "/memories/prefs.md",
            "old_str": "short",
            "new_str": "very short",
        }
        said = tool.handle(edit)
        assert said.startswith("Error") and "another program" in said, said
    finally:
        go.touch()
        holder.wait(timeout=30)
    assert note.read_text() == "Kate likes short replies.\nagent line 1\nagent line 2\n"
    assert "edited" in tool.handle(edit)
    assert note.read_text() == "Kate likes very short replies.\nagent line 1\nagent line 2\n"


def test_claude_memory_tool_names_no_file_with_a_credential(ws):
    """The tool redacted a file's text but took its name as given: `create
    /memories/ghp_….md` (or a rename to `password=….md`) wrote the credential into the
    workspace as a file name, and `view` listed it as written. Such a name is refused without
    repeating it, and one a person gave is listed redacted."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    tool = open_workspace(ws).memory_tool()
    assert "created" in tool.handle(
        {"command": "create", "path": "/memories/a.md", "file_text": "x"}
    )
    for call in (
        {"command": "create", "path": f"/memories/{token}.md", "file_text": "x"},
        {
            "command": "rename",
            "old_path": "/memories/a.md",
            "new_path": "/memories/pw=hunter2Xy9.md",
        },
    ):
        said = tool.handle(call)
        assert said.startswith("Error: the path holds what looks like a credential"), said
        assert token not in said and "hunter2Xy9" not in said
    assert sorted(p.name for p in (ws / "bank/memories").iterdir()) == ["a.md"]
    (ws / "bank/memories" / f"{token}.md").write_text("a person's note\n")
    listed = tool.handle({"command": "view", "path": "/memories"})
    assert token not in listed and "/memories/[redacted]" in listed, listed


def test_the_import_preview_shows_an_opinions_confidence_and_the_day(ws, tmp_path):
    """The preview read `O @Peter: …`: the confidence to be written, and the day it goes to,
    were left out of what the user is asked to approve."""
    src = tmp_path / "facts.jsonl"
    src.write_text(
        '{"kind": "O", "content": "Prefers tea to coffee", "entities": ["Kenji"], '
        '"confidence": 0.75, "timestamp": "2025-10-02"}\n'
        '{"kind": "W", "content": "The Lisbon office closes in August"}\n',
        encoding="utf-8",
    )
    r = run(ws, "import", str(src), "--dry-run")
    assert r.code == 0, r.err
    assert "O(c=0.75) @Kenji: Prefers tea to coffee  (2025-10-02, facts.jsonl#L1)" in r.out, r.out
    assert "W: The Lisbon office closes in August  (facts.jsonl#L2)" in r.out, r.out
