"""The index as derived data: incremental sync, atomic rebuild, corruption, bad files."""

import json
import os
import sqlite3

import pytest

from clawmem import open_workspace

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


def index_json(ws, *args):
    r = cli("-w", str(ws), "index", "--json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


def workspace_bytes(ws):
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in ws.rglob("*.md")
        if ".memory" not in p.parts
    }


def test_first_index_then_incremental(ws):
    before = workspace_bytes(ws)
    first = index_json(ws)
    assert first["rebuilt"] and first["files_indexed"] == len(before)
    assert (ws / ".memory" / ".gitignore").read_text().strip().endswith("*")
    again = index_json(ws)
    assert again["files_indexed"] == 0 and again["files_unchanged"] == len(before)

    (ws / "memory" / "2025-11-30.md").write_text("# new\n\nzanzibar ferry\n", encoding="utf-8")
    (ws / "memory" / "2025-11-29.md").unlink()
    (ws / "bank" / "new-page.md").write_text("Quokka facts\n", encoding="utf-8")
    r = index_json(ws)
    assert (r["files_indexed"], r["files_removed"]) == (2, 1)
    mem = open_workspace(ws)
    assert mem.recall("zanzibar", mode="lexical").hits[0].path == "memory/2025-11-30.md"
    assert mem.recall("quokka", mode="lexical").hits
    # the deleted file is gone from the index
    con = sqlite3.connect(ws / ".memory" / "index.sqlite")
    assert (
        con.execute("select count(*) from chunks where path='memory/2025-11-29.md'").fetchone()[0]
        == 0
    )
    con.close()


def test_touch_without_change_reads_but_does_not_reindex(ws):
    index_json(ws)
    p = ws / "MEMORY.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10_000_000))
    r = index_json(ws)
    assert r["files_indexed"] == 0


def test_force_rebuild_swaps_and_leaves_no_temp_files(ws):
    index_json(ws)
    r = index_json(ws, "--force")
    assert r["rebuilt"]
    leftovers = [p.name for p in (ws / ".memory").iterdir() if "rebuild" in p.name]
    assert leftovers == []


def test_killed_rebuild_leftover_is_cleaned(ws):
    index_json(ws)
    stale = ws / ".memory" / "index.sqlite.rebuild-99999"
    stale.write_bytes(b"half written garbage")
    r = index_json(ws)
    assert r["files_indexed"] == 0
    assert not stale.exists()


def test_corrupt_index_is_rebuilt_with_a_message(ws):
    index_json(ws)
    before = workspace_bytes(ws)
    (ws / ".memory" / "index.sqlite").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (ws / ".memory" / f"index.sqlite{suffix}").unlink(missing_ok=True)
    r = cli("-w", str(ws), "index")
    assert r.code == 0, r.err
    assert "corrupt" in r.err
    assert open_workspace(ws).recall("Hetzner", mode="lexical").hits
    assert workspace_bytes(ws) == before


def test_schema_mismatch_rebuilds(ws):
    index_json(ws)
    con = sqlite3.connect(ws / ".memory" / "index.sqlite")
    con.execute("update meta set value='0' where key='schema_version'")
    con.commit()
    con.close()
    r = index_json(ws)
    assert r["rebuilt"] and "schema_version" in r["rebuild_reason"]


def test_bad_files_are_reported_by_name_and_never_touched(ws):
    bad_utf8 = ws / "memory" / "2025-12-01.md"
    bad_utf8.write_bytes(b"# ok line\n\xff\xfe broken\n")
    binary = ws / "bank" / "blob.md"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    empty = ws / "memory" / "2025-12-02.md"
    empty.write_bytes(b"")
    big = ws / "bank" / "huge.md"
    big.write_bytes(b"lorem ipsum dolor\n" * 3_000_000)  # ~54 MB, over max_file_bytes
    before = workspace_bytes(ws)
    r = index_json(ws)
    reasons = {s["path"]: s["reason"] for s in r["skipped"]}
    assert (
        "invalid UTF-8" in reasons["memory/2025-12-01.md"]
        and "line 2" in reasons["memory/2025-12-01.md"]
    )
    assert "binary" in reasons["bank/blob.md"]
    assert "max_file_bytes" in reasons["bank/huge.md"]
    assert "memory/2025-12-02.md" not in reasons  # an empty file is fine
    assert workspace_bytes(ws) == before
    st = open_workspace(ws).status()
    assert {s["path"] for s in st.skipped} >= {"bank/huge.md"}
    assert {s["path"] for s in st.unreadable} >= {"memory/2025-12-01.md", "bank/blob.md"}


def test_walk_skips_hidden_git_node_modules_and_outside_symlinks(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOPSECRET outside\n")
    (ws / "memory" / "link-out").symlink_to(outside, target_is_directory=True)
    (ws / "memory" / "file-out.md").symlink_to(outside / "secret.md")
    for d in (".git", "node_modules", ".hidden"):
        (ws / "memory" / d).mkdir()
        (ws / "memory" / d / "x.md").write_text("TOPSECRET hidden\n")
    (ws / "notes-not-memory.md").write_text("TOPSECRET root\n")
    r = index_json(ws)
    reasons = {s["path"]: s["reason"] for s in r["skipped"]}
    assert reasons["memory/link-out"] == "symlink leaves the workspace"
    assert reasons["memory/file-out.md"] == "symlink leaves the workspace"
    assert open_workspace(ws).recall("TOPSECRET", mode="lexical").hits == []


def test_empty_workspace(tmp_path):
    (tmp_path / "MEMORY.md").write_text("")
    r = cli("-w", str(tmp_path), "recall", "anything", "--json")
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["results"] == [] and res["empty_reason"]


def test_extra_paths_inside_only(ws):
    (ws / "projects").mkdir()
    (ws / "projects" / "plan.md").write_text("Capybara roadmap\n")
    (ws / "clawmem.toml").write_text('extra_paths = ["projects", "../elsewhere"]\n')
    r = index_json(ws)
    reasons = {s["path"]: s["reason"] for s in r["skipped"]}
    assert reasons["../elsewhere"] == "extra path is outside the workspace"
    assert open_workspace(ws).recall("capybara", mode="lexical").hits[0].path == "projects/plan.md"


def test_file_deleted_mid_index_is_reported(ws):
    from clawmem.ingest.sync import parse_file
    from clawmem.markdown.workspace import FileEntry

    mem = open_workspace(ws)
    gone = parse_file(ws, FileEntry("memory/never.md", 10, 0), mem.cfg)
    assert gone.reason == "deleted while indexing"


def _fts_vocabulary(index_path):
    """Every (term, rows, occurrences) of the lexical index, read through fts5vocab."""
    from clawmem.store import db

    conn, _ = db.connect(index_path)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, 'col')")
        return sorted(tuple(r) for r in conn.execute("SELECT term, col, doc, cnt FROM temp.v"))
    finally:
        conn.close()


def test_incremental_edits_leave_the_same_lexical_index_as_a_rebuild(ws):
    """Units carry their neighbours' text as context in the contentless FTS table, and deleting a
    row must restate exactly what was inserted. Edit a section so that neighbours change (a unit
    removed from the middle, one added, a file deleted), then compare every term count of the
    incrementally synced index with a fresh rebuild's."""
    index_json(ws)
    log = ws / "memory" / "2025-11-12.md"
    text = log.read_text(encoding="utf-8")
    text = text.replace("- [x] unique index `charges_order_intent_succeeded_key`\n", "")
    text = text.replace("## Follow-ups\n\n", "## Follow-ups\n\n- [ ] quokka drill on Monday\n")
    log.write_text(text, encoding="utf-8")
    (ws / "memory" / "2025-11-29.md").unlink()
    assert index_json(ws)["files_indexed"] == 1
    incremental = _fts_vocabulary(ws / ".memory" / "index.sqlite")
    index_json(ws, "--force")
    assert _fts_vocabulary(ws / ".memory" / "index.sqlite") == incremental
    assert ("quokka", "context", 1, 1) in incremental  # the context of the item after it


def test_an_index_larger_than_the_map_is_read_unmapped_with_the_same_answers(ws, monkeypatch):
    """A connection maps the whole index while it fits in ``db.MMAP_BYTES``; a larger index is
    read through SQLite's page cache instead (mapped pages count in a process's memory: 1M
    units, docs/benchmarks.md), and answers the same."""
    from clawmem.store import db

    index_json(ws)
    path = ws / ".memory" / "index.sqlite"

    def recall_and_map() -> tuple[list, int]:
        r = cli("-w", str(ws), "recall", "WhatsApp replies", "--mode", "lexical", "--json")
        assert r.code == 0, r.err
        conn, _ = db.connect(path, readonly=True)
        try:
            (mapped,) = conn.execute("PRAGMA mmap_size").fetchone()
        finally:
            conn.close()
        hits = json.loads(r.out)["results"]
        return [(h["citation"], round(h["score"], 6)) for h in hits], mapped

    fits, mapped = recall_and_map()
    assert fits and mapped == db.MMAP_BYTES
    monkeypatch.setattr(db, "MMAP_BYTES", path.stat().st_size - 1)
    larger, unmapped = recall_and_map()
    assert unmapped == 0
    assert larger == fits


def test_a_new_file_waits_for_another_writer_instead_of_failing(ws):
    """Another program holding the index in an exclusive transaction (a backup, a SQLite shell):
    indexing a new file waits for it (busy_timeout), as the soak's "database held" check asks.
    A new file once opened its transaction with an empty statement and read in it, and a write
    after a read cannot wait: "database is locked" at once, an internal error."""
    import threading
    import time

    from clawmem.store import db

    index_json(ws)
    holder, _ = db.connect(ws / ".memory" / "index.sqlite")
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(1.5, holder.rollback)
    release.start()
    try:
        (ws / "memory" / "2030-02-02.md").write_text("# x\n\nThe gannet colony.\n", "utf-8")
        t0 = time.monotonic()
        r = cli("-w", str(ws), "index", "--json")
        waited = time.monotonic() - t0
    finally:
        release.join()
        holder.close()
    assert r.code == 0, r.err
    assert waited >= 1.0  # it waited for the holder, then indexed
    assert json.loads(r.out)["files_indexed"] >= 1


def test_a_write_transaction_that_reads_first_waits_for_another_writer(ws):
    """The rule under the test above, for every transaction clawmem writes in: it takes the
    write lock as it begins (BEGIN IMMEDIATE), so one that reads before its first write waits
    for another writer instead of failing with "database is locked" (a read snapshot cannot be
    upgraded once another writer holds the lock, and busy_timeout does not retry that)."""
    import threading
    import time

    from clawmem.store import db

    index_json(ws)
    path = ws / ".memory" / "index.sqlite"
    holder, _ = db.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE files SET mtime_ns = mtime_ns + 1")
    release = threading.Timer(1.0, holder.commit)
    writer, _ = db.connect(path)
    release.start()
    try:
        t0 = time.monotonic()
        with writer:
            writer.executemany("DELETE FROM links WHERE src = ?", [])  # opens the transaction
            before = writer.execute("SELECT count(*) FROM files").fetchone()[0]
            writer.execute("UPDATE files SET lines = lines + 0")
        waited = time.monotonic() - t0
    finally:
        release.join()
        holder.close()
        writer.close()
    assert before >= 1
    assert waited >= 0.5  # it waited for the holder's commit, then wrote
