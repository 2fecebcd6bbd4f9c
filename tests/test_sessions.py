"""Session transcripts: formats, configuration, recall with citations `get` reads back, the
source filter, transcripts ranked below notes, and incremental (append-only) indexing.

Real files, real SQLite; the CLI invoked as users invoke it. Redaction has its own file
(test_redaction.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.config import load_config
from clawmem.errors import ConfigError
from clawmem.recall.fusion import Ranking
from clawmem.store.index import Index
from clawmem.transcripts.formats import CLAUDE_CODE, OPENCLAW, parse

from .conftest import REPO, approve, cli

SESSIONS = REPO / "fixtures" / "sessions"
OC = "3b8f0c2e-6d1a-4e7b-9a51-0c2d7e4f9a13"
OC_FILE = SESSIONS / "openclaw" / f"{OC}.jsonl"
CC_DIR = SESSIONS / "claude-code" / "-home-peter-code-payments-service"
CC = "5c2e9f14-8a7b-4c3d-b2e1-9f8a7b6c5d4e"
CC_FILE = CC_DIR / f"{CC}.jsonl"


def configure(ws: Path, *folders: Path) -> None:
    paths = ", ".join(json.dumps(str(f)) for f in folders)
    (ws / "clawmem.toml").write_text(f"[sessions]\npaths = [{paths}]\n", encoding="utf-8")
    approve(ws)  # the folders are outside the workspace: the user's own setting


@pytest.fixture
def sess(ws, tmp_path) -> Path:
    """The fixture workspace with copies of the fixture transcripts configured."""
    copy = tmp_path / "transcripts"
    shutil.copytree(SESSIONS, copy)
    configure(ws, copy / "openclaw", copy / "claude-code")
    return ws


# ---------------------------------------------------------------------------- formats


def test_openclaw_fixture_keeps_only_user_and_assistant_text():
    p = parse(OC_FILE.read_bytes())
    assert p.format == OPENCLAW and p.session_id == OC
    assert p.lines == 14 and p.bad_lines == ()
    # Lines 1-3 are the header, a model change and a thinking-level change; line 7 a tool call
    # only, 8 a tool result, 10 a custom entry: none of them is talk.
    assert [(m.line, m.role) for m in p.messages] == [
        (4, "user"),
        (5, "assistant"),
        (6, "user"),
        (9, "assistant"),
        (11, "user"),
        (12, "assistant"),
        (13, "user"),
        (14, "assistant"),
    ]
    five = p.messages[1]
    assert five.text.startswith("Noted: staging Redis")
    assert "user is telling me" not in five.text  # the thinking block is not kept
    assert five.at == "2025-12-02T09:14:49Z"
    # A user message whose content is a plain string (not blocks) is read too.
    assert p.messages[6].text.startswith("And remember: no production deploys")


def test_claude_code_fixture_skips_meta_commands_tools_and_sidechains():
    p = parse(CC_FILE.read_bytes())
    assert p.format == CLAUDE_CODE and p.session_id == CC
    # 1 summary, 2 caveat (isMeta), 3 /clear bookkeeping, 5 tool_use, 6 tool_result, 9 tool_use,
    # 10 tool_result, 11 compaction boundary, 13 a sub-agent's side chain.
    assert [(m.line, m.role) for m in p.messages] == [
        (4, "user"),
        (7, "assistant"),
        (8, "user"),
        (12, "assistant"),
    ]
    assert all("toolu_" not in m.text and "Caveat" not in m.text for m in p.messages)


def test_a_line_still_being_written_waits_for_its_newline():
    data = OC_FILE.read_bytes()
    cut = data[: data.rindex(b"\n", 0, len(data) - 1) + 20]  # last line only partly written
    p = parse(cut)
    assert p.lines == 13 and p.consumed == data.rindex(b"\n", 0, len(data) - 1) + 1
    assert p.messages[-1].line == 13


def test_sessions_config_table(tmp_path):
    (tmp_path / "clawmem.toml").write_text(
        '[sessions]\npaths = ["~/a", "b"]\nidle_minutes = 30\n', encoding="utf-8"
    )
    approve(tmp_path)
    cfg = load_config(tmp_path, environ={})
    assert cfg.session_paths == ("~/a", "b") and cfg.session_idle_minutes == 30
    assert cfg.sources["session_paths"] == "clawmem.toml"
    (tmp_path / "clawmem.toml").write_text('[sessions]\npath = ["~/a"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting 'path' in \\[sessions\\]"):
        load_config(tmp_path, environ={})


def test_nothing_outside_the_workspace_is_read_unless_configured(ws, lexical):
    r = cli("-w", str(ws), "index", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["transcripts"]["read_whole"] == 0
    r = cli("-w", str(ws), "recall", "staging Redis port 6380", "--json", "--source", "sessions")
    assert json.loads(r.out)["results"] == []


# ---------------------------------------------------------------------------- recall and get


def test_recall_finds_what_was_only_said_and_get_reads_the_citation_back(sess, lexical):
    r = cli("-w", str(sess), "index", "--json")
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["transcripts"]["read_whole"] == 4 and report["skipped"] == []
    r = cli("-w", str(sess), "recall", "which port does the staging Redis use now?", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    hit = next(h for h in out["results"] if h["origin"] == "sessions")
    assert hit["citation"] == f"sessions/{OC}.jsonl#L4-L4"
    assert hit["session_id"] == OC and hit["timestamp"] == "2025-12-02T09:14:43Z"
    assert hit["day"] == "2025-12-02"
    assert "port 6380" in hit["snippet"]
    assert out["filters"]["source"] == "all"
    got = cli("-w", str(sess), "get", hit["citation"])
    assert got.code == 0, got.err
    assert got.out.startswith("User: Morning. Before I forget: the staging Redis")
    assert "6380" in got.out
    js = json.loads(cli("-w", str(sess), "get", f"sessions/{OC}.jsonl#L4-L9", "--json").out)
    assert [m["line"] for m in js["messages"]] == [4, 5, 6, 9]
    assert js["citation"] == f"sessions/{OC}.jsonl#L4-L9" and js["session_id"] == OC


def test_claude_code_citations_keep_the_project_folder(sess, lexical):
    cli("-w", str(sess), "index")
    out = json.loads(
        cli("-w", str(sess), "recall", "squash merges", "--json", "--source", "sessions").out
    )
    cites = [h["citation"] for h in out["results"]]
    want = f"sessions/-home-peter-code-payments-service/{CC}.jsonl#L8-L8"
    assert want in cites
    got = cli("-w", str(sess), "get", want)
    assert got.out.strip().startswith("User: Do it. And from now on I prefer squash merges")


def test_source_filter(sess, lexical):
    cli("-w", str(sess), "index")

    def origins(source: str) -> set[str]:
        r = cli("-w", str(sess), "recall", "staging", "-k", "20", "--json", "--source", source)
        assert r.code == 0, r.err
        return {h["origin"] for h in json.loads(r.out)["results"]}

    assert origins("all") == {"memory", "sessions"}
    assert origins("memory") == {"memory"}
    assert origins("sessions") == {"sessions"}
    bad = cli("-w", str(sess), "recall", "staging", "--source", "chats")
    assert bad.code == 2 and "--source chats: unknown source" in bad.err


def test_source_filter_applies_to_the_vector_leg(sess, hash_model):
    mem = open_workspace(sess, environ={})
    mem.index()
    # The test embedder's cosines mean nothing: every hit is shown (min_relevance=0).
    res = mem.recall("staging redis port", source="sessions", mode="vector", k=10, min_relevance=0)
    assert res.hits and {h.origin for h in res.hits} == {"sessions"}
    res = mem.recall("staging redis port", source="memory", mode="vector", k=10, min_relevance=0)
    assert res.hits and {h.origin for h in res.hits} == {"memory"}


def test_a_note_ranks_above_a_conversation_saying_the_same(tmp_path, lexical):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    said = "The quarterly budget review moves to the Vienna office on Thursdays."
    (ws / "memory" / "2025-12-01.md").write_text(f"# 2025-12-01\n\n{said}\n", encoding="utf-8")
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "s1.jsonl").write_text(
        json.dumps(
            {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-12-01T10:00:00Z"}
        )
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "timestamp": "2025-12-01T10:01:00Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": said}]},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    configure(ws, folder)
    mem = open_workspace(ws, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    res = mem.recall("quarterly budget review Vienna Thursdays", mode="lexical")
    assert [h.origin for h in res.hits[:2]] == ["memory", "sessions"]
    flat = mem.recall(
        "quarterly budget review Vienna Thursdays",
        mode="lexical",
        ranking=Ranking(transcript_factor=1.0),
    )
    note, talk = res.hits[0], res.hits[1]
    talk_flat = next(h for h in flat.hits if h.origin == "sessions")
    assert talk.score == pytest.approx(talk_flat.score * 0.9)
    assert note.score == pytest.approx(next(h for h in flat.hits if h.origin == "memory").score)


def test_get_refuses_paths_outside_the_sessions_folders(sess, lexical):
    for bad in ("sessions/../MEMORY.md", "sessions/nope.jsonl", "sessions/x.md"):
        r = cli("-w", str(sess), "get", bad)
        assert r.code != 0 and "clawmem: error:" in r.err, bad


def test_unknown_jsonl_is_skipped_with_a_reason_and_bad_lines_are_problems(sess, lexical, tmp_path):
    folder = tmp_path / "transcripts" / "openclaw"
    (folder / "other.jsonl").write_text('{"foo": 1}\n{"bar": 2}\n', encoding="utf-8")
    with (folder / f"{OC}.jsonl").open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    data = json.loads(cli("-w", str(sess), "index", "--json").out)
    skipped = {s["path"]: s["reason"] for s in data["skipped"]}
    assert "not a transcript format" in skipped["sessions/other.jsonl"]
    assert {"path": f"sessions/{OC}.jsonl", "line": 15} == {
        k: v for k, v in data["problems"][0].items() if k in ("path", "line")
    }


def test_a_line_nested_too_deeply_is_a_bad_line_not_the_end_of_every_index(sess, lexical, tmp_path):
    """One line of 50,000 nested lists raised RecursionError out of Python's JSON parser: every
    `clawmem index` and `recall` of the workspace was an internal error. It is a bad line, like
    any other that is not JSON, and the lines around it are read."""
    folder = tmp_path / "transcripts" / "openclaw"
    with (folder / f"{OC}.jsonl").open("a", encoding="utf-8") as f:
        f.write("[" * 50_000 + "]" * 50_000 + "\n")
        f.write(_message(99) + "\n")
    r = cli("-w", str(sess), "index", "--json")
    assert r.code == 0, r.err
    lines = {
        p["line"] for p in json.loads(r.out)["problems"] if p["path"] == f"sessions/{OC}.jsonl"
    }
    assert 15 in lines
    hits = json.loads(cli("-w", str(sess), "recall", "zebracode99", "--json").out)
    assert any(h["citation"] == f"sessions/{OC}.jsonl#L16-L16" for h in hits["results"])
    got = cli("-w", str(sess), "get", f"sessions/{OC}.jsonl#L15-L16")
    assert got.code == 0 and "zebracode99" in got.out, got.err


def test_unclosed_system_reminders_are_read_in_linear_time():
    """The lazy regular expression that removed <system-reminder> blocks tried every opening tag
    against the rest of the message: 20,000 unclosed tags took about two minutes to index. The
    bound is loose on purpose: linear, it takes milliseconds."""
    import time

    text = "<system-reminder>" * 20_000
    line = {"type": "message", "message": {"role": "user", "content": "hello " + text}}
    t0 = time.process_time()
    parsed = parse(json.dumps(line).encode() + b"\n", fmt=OPENCLAW)
    assert time.process_time() - t0 < 5.0
    assert parsed.messages[0].text.endswith(text[-100:])  # unclosed: kept as written
    closed = "a <system-reminder>x</system-reminder> b <system-reminder>y</system-reminder>c"
    line["message"]["content"] = closed
    assert parse(json.dumps(line).encode() + b"\n", fmt=OPENCLAW).messages[0].text == "a  b c"


# ---------------------------------------------------------------------------- incremental


def _message(i: int, role: str = "user") -> str:
    return (
        json.dumps(
            {
                "type": "message",
                "id": f"n{i:04d}",
                "timestamp": f"2025-12-02T10:{i:02d}:00.000Z",
                "message": {
                    "role": role,
                    "content": [
                        {
                            "type": "text",
                            "text": f"appended note number {i} about the zebracode{i} rollout of the relay",
                        }
                    ],
                },
            }
        )
        + "\n"
    )


def _rows(ws: Path, relpath: str) -> dict[int, tuple[int, str]]:
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        return {
            r[0]: (r[1], r[2])
            for r in idx.conn.execute(
                "SELECT id, start_line, text FROM chunks WHERE path = ?", (relpath,)
            )
        }
    finally:
        idx.close()


def test_appending_ten_messages_reindexes_only_those(sess, lexical, tmp_path):
    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    rel = f"sessions/{OC}.jsonl"
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    before = _rows(sess, rel)
    size = path.stat().st_size
    added = "".join(_message(i, "user" if i % 2 else "assistant") for i in range(10))
    with path.open("a", encoding="utf-8") as f:
        f.write(added)
    report = mem.index()
    assert report.transcripts_appended == 1 and report.transcripts_read_whole == 0
    assert report.units == 10
    assert report.transcript_bytes_read == len(added.encode())  # only the new bytes were read
    assert report.files_indexed == 1  # no other file was touched
    after = _rows(sess, rel)
    assert {k: v for k, v in after.items() if k in before} == before  # old rows untouched
    new = sorted(v[0] for k, v in after.items() if k not in before)
    assert new == list(range(15, 25))
    assert path.stat().st_size == size + len(added.encode())
    res = mem.recall("zebracode7", mode="lexical")
    assert res.hits[0].citation == f"{rel}#L22-L22"


def test_recall_syncs_an_append_first(sess, lexical, tmp_path):
    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    with path.open("a", encoding="utf-8") as f:
        f.write(_message(3))
    res = mem.recall("zebracode3", mode="lexical")
    assert res.hits and res.hits[0].citation == f"sessions/{OC}.jsonl#L15-L15"
    assert res.index["stale_files"] == 0


def test_partial_line_then_shrink_then_rewrite(sess, lexical, tmp_path):
    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    rel = f"sessions/{OC}.jsonl"
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    original = path.read_bytes()
    line = _message(5).encode()
    path.write_bytes(original + line[:30])  # the writer is mid-line
    report = mem.index()
    assert report.units == 0 and report.transcript_bytes_read == 30
    path.write_bytes(original + line)  # the line is finished
    report = mem.index()
    assert report.units == 1 and report.transcripts_appended == 1
    assert mem.recall("zebracode5", mode="lexical").hits[0].citation == f"{rel}#L15-L15"
    # Shrunk below what was indexed: read again whole.
    path.write_bytes(original[: original.index(b"\n") + 1] + line)
    report = mem.index()
    assert report.transcripts_read_whole == 1
    assert mem.recall("zebracode5", mode="lexical").hits[0].citation == f"{rel}#L2-L2"
    assert all(h.path != rel for h in mem.recall("allkeys", mode="lexical").hits)
    # Changed before the offset with the same length, then grown: read again whole.
    data = path.read_bytes().replace(b"zebracode5", b"yakcode555")
    path.write_bytes(data + _message(6).encode())
    report = mem.index()
    assert report.transcripts_read_whole == 1
    assert mem.recall("yakcode555", mode="lexical").hits[0].citation == f"{rel}#L2-L2"
    assert not mem.recall("zebracode5", mode="lexical").hits


def test_appended_rows_leave_no_ghosts_in_the_lexical_index(sess, lexical, tmp_path):
    """The last old message gains a neighbour on append; its lexical row is restated so that
    deleting the transcript later removes every term (a contentless FTS5 table needs the exact
    values back)."""
    folder = tmp_path / "transcripts" / "openclaw"
    path = folder / f"{OC}.jsonl"
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    with path.open("a", encoding="utf-8") as f:
        f.write(_message(1))
    mem.index()
    with path.open("a", encoding="utf-8") as f:
        f.write(_message(2))
    mem.index()
    path.unlink()
    report = mem.index()
    assert report.files_removed == 1
    idx = Index.open(sess / ".memory" / "index.sqlite", readonly=True)
    try:
        for term in ("zebracode1", "zebracode2", "allkeys", "warelayrc"):
            rows = idx.conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)
            ).fetchall()
            assert rows == [], term
    finally:
        idx.close()


def test_status_counts_transcripts_and_stays_cheap(sess, lexical, tmp_path):
    cli("-w", str(sess), "index")
    s = json.loads(cli("-w", str(sess), "status", "--json").out)
    assert s["clean"] is True
    assert s["files"] == s["files_on_disk"]
    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    with path.open("a", encoding="utf-8") as f:
        f.write(_message(9))
    s = json.loads(cli("-w", str(sess), "status", "--json").out)
    assert s["changed_on_disk"]["modified"] == [f"sessions/{OC}.jsonl"]


# ---------------------------------------------------------------------------- the watcher


def test_the_watcher_batches_a_growing_transcript(sess, lexical, tmp_path):
    """A few new messages wait until the conversation goes quiet; a burst over
    session_batch_messages is synced at once, without waiting for quiet."""
    import threading
    import time

    from clawmem.ingest.watch import Watcher

    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    with (sess / "clawmem.toml").open("a", encoding="utf-8") as f:
        f.write("batch_messages = 20\n")
    approve(sess)  # a changed file asks again
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    lines: list[str] = []
    w = Watcher(mem.indexer, debounce_s=0.1, reconcile_s=60, session_quiet_s=4.0, log=lines.append)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()

    def synced(why: str) -> list[str]:
        return [x for x in lines if x.startswith("synced (") and why in x]

    def wait(pred, timeout: float) -> None:
        end = time.monotonic() + timeout
        while not pred() and time.monotonic() < end:
            time.sleep(0.05)

    try:
        wait(lambda: synced("start"), 20)
        assert synced("start"), lines
        start = time.monotonic()
        with path.open("a", encoding="utf-8") as f:
            for i in range(3):
                f.write(_message(i))
                f.flush()
                time.sleep(0.2)
        time.sleep(1.5)
        assert not synced("transcript"), lines  # under both thresholds, not yet quiet
        wait(lambda: synced("quiet"), 10)
        assert synced("quiet") and time.monotonic() - start >= 4.0, lines
        assert mem.recall("zebracode2", mode="lexical", sync=False).hits
        start = time.monotonic()
        with path.open("a", encoding="utf-8") as f:
            for i in range(30, 55):
                f.write(_message(i))
                f.flush()
                time.sleep(0.01)
            wait(lambda: synced("line(s) new"), 3.5)  # well before 4 s of quiet
            assert synced("line(s) new"), lines
            f.write(_message(56))  # the conversation goes on: the batch did not wait for quiet
        assert time.monotonic() - start < 4.0
        assert mem.recall("zebracode30", mode="lexical", sync=False).hits
    finally:
        w.request_stop()
        t.join(10)
    assert not t.is_alive()


# ---------------------------------------------------------------------------- the real model


def test_a_paraphrase_finds_what_was_said_with_the_real_model(tmp_path):
    """Meaning, not words: the question shares almost no words with the message that answers
    it ("cache" for Redis, "listen" for lives on), so the vector leg has to find it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# MEMORY\n\n- Peter lives in Vienna.\n", encoding="utf-8")
    copy = tmp_path / "transcripts"
    shutil.copytree(SESSIONS, copy)
    configure(ws, copy / "openclaw", copy / "claude-code")
    mem = open_workspace(ws)
    report = mem.index()
    assert report.pending == 0 and report.embedded > 0
    res = mem.recall("which port is the staging cache server on these days?", k=3)
    assert res.ranking.startswith("rrf"), res.degraded
    # The message's own hit, or the pair it makes with the reply next to it (rrf-v15).
    spans = [(h.path, h.start_line, h.end_line) for h in res.hits[:2]]
    assert any(p == f"sessions/{OC}.jsonl" and s <= 4 <= e for p, s, e in spans), spans
    res = mem.recall("how do we merge pull requests?", k=3, source="sessions")
    first = res.hits[0]
    assert first.path.endswith(f"{CC}.jsonl") and first.start_line <= 8 <= first.end_line, [
        h.citation for h in res.hits
    ]
