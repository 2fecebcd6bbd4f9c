"""The index connection a process keeps between recalls (``Indexer.release``): reused while it
is on the live file, and never the reason a recall misses what another process wrote."""

import os
import shutil
from dataclasses import replace

import clawmem
from clawmem.embedders.testing import HashEmbedder
from clawmem.store import db

from .conftest import adopt_index


def _workspace(tmp_path, name="ws"):
    ws = tmp_path / name
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-03-01.md").write_text(
        "# Day\n\n- W @Linh: moved the billing service to Postgres\n- coffee with the team\n"
    )
    return ws


def _open(ws):
    return clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())


def test_recalls_in_one_process_share_one_connection(tmp_path):
    ws = _workspace(tmp_path)
    mem = _open(ws)
    mem.index()
    mem.recall("billing", sync=False)
    kept = mem.indexer._kept
    assert kept is not None
    for mode in ("hybrid", "lexical", "vector"):
        assert mem.recall("billing Postgres", mode=mode, sync=False).hits
        assert mem.indexer._kept is kept
    assert mem.recall("billing").hits  # a recall that syncs first takes the same one
    assert mem.indexer._kept is kept
    mem.close()
    assert mem.indexer._kept is None
    try:
        kept.conn.execute("SELECT 1")
        raise AssertionError("the kept connection is still open after close()")
    except db.sqlite.ProgrammingError:
        pass


def test_what_another_process_writes_is_seen_by_the_kept_connection(tmp_path):
    """The entities' names and the vector counts are remembered on the kept connection while
    the index is unchanged; a commit by another connection (here: another workspace object,
    as the watcher or `clawmem index` would be) must show at the next recall."""
    ws = _workspace(tmp_path)
    reader = _open(ws)
    reader.index()
    before = reader.recall("tell me about Peter", sync=False)
    assert all(h.path != "bank/entities/Peter.md" for h in before.hits)
    assert before.vectors["pending"] == 0

    (ws / "bank" / "entities").mkdir(parents=True)
    (ws / "bank" / "entities" / "Peter.md").write_text("# Peter\n\nBackend lead, likes heron.\n")
    (ws / "memory" / "2025-03-02.md").write_text("# Day\n\n- another note to embed\n")
    writer = clawmem.open_workspace(ws, environ={})
    writer.reconfigure(replace(writer.cfg, vectors=False))
    writer.index()  # lexical only: the new units wait for their vectors

    after = reader.recall("tell me about Peter", sync=False)
    assert after.hits[0].path == "bank/entities/Peter.md"
    assert after.vectors["pending"] > 0
    assert reader.indexer._kept is not None


def test_a_swapped_index_file_is_never_read_through_the_old_connection(tmp_path):
    """A rebuild that renames a new file into place (swap_in's fallback) changes the inode:
    the kept connection still points at the old file and must be closed, not read."""
    ws = _workspace(tmp_path)
    mem = _open(ws)
    mem.index()
    assert not mem.recall("lighthouse", mode="lexical", sync=False).hits
    assert mem.indexer._kept is not None

    other = _workspace(tmp_path, "other")
    (other / "memory" / "2025-03-01.md").write_text("# Day\n\n- painted the lighthouse\n")
    _open(other).index()
    src = other / ".memory" / "index.sqlite"
    conn, _ = db.connect(src)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    live = ws / ".memory" / "index.sqlite"
    shutil.copy(src, ws / ".memory" / "swap.sqlite")
    # Recorded as built here, as sync.swap_in records its new file before the rename.
    os.replace(adopt_index(ws / ".memory" / "swap.sqlite"), live)

    res = mem.recall("lighthouse", mode="lexical", sync=False)
    assert res.hits and "lighthouse" in res.hits[0].text
