"""Recall never answers from a stale index: files edited, added, deleted and renamed between
recalls are seen by the next recall, including an edit that leaves size and mtime as they were
(a second write in the same clock tick as the sync that read the first)."""

import json
import os

import pytest

import clawmem
from clawmem.ingest.sync import RACY_META, RACY_NS
from clawmem.store.index import Index


@pytest.fixture
def mem(tmp_path, lexical):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- the core file\n")
    for d in range(1, 4):
        (ws / "memory" / f"2025-03-0{d}.md").write_text(f"# Day {d}\n\n- ordinary note {d}\n")
    m = clawmem.open_workspace(ws, environ={"CLAWMEM_VECTORS": "0"})
    m.index()
    return m


def _found(mem, word: str) -> list[str]:
    res = mem.recall(word, mode="lexical")
    assert res.index["stale_files"] == 0
    return sorted({h.path for h in res.hits if word in h.text.lower()})


def _racy(mem) -> dict:
    idx = Index.open(mem.index_path, readonly=True)
    try:
        return json.loads(idx.get_meta(RACY_META) or "{}")
    finally:
        idx.close()


def test_edit_add_delete_rename_between_recalls(mem):
    ws = mem.root
    day2 = ws / "memory" / "2025-03-02.md"
    assert _found(mem, "walrus") == []
    day2.write_text(day2.read_text() + "- a walrus on the beach\n")  # edit
    assert _found(mem, "walrus") == ["memory/2025-03-02.md"]
    (ws / "memory" / "2025-03-04.md").write_text("# Day 4\n\n- a narwhal\n")  # add
    assert _found(mem, "narwhal") == ["memory/2025-03-04.md"]
    day2.unlink()  # delete
    assert _found(mem, "walrus") == []
    (ws / "memory" / "2025-03-04.md").rename(ws / "memory" / "2025-03-05.md")  # rename
    assert _found(mem, "narwhal") == ["memory/2025-03-05.md"]
    (ws / "memory" / "sub").mkdir()  # a new folder with a file in it
    (ws / "memory" / "sub" / "2025-03-06.md").write_text("- an orca\n")
    assert _found(mem, "orca") == ["memory/sub/2025-03-06.md"]


def test_a_same_tick_edit_of_the_same_size_is_seen(mem):
    """The second write keeps size and mtime (as a write within the file system's timestamp
    granularity does): only the content differs, and recall still sees it."""
    day1 = mem.root / "memory" / "2025-03-01.md"
    day1.write_text("# Day 1\n\n- the password hint is zebra\n")
    assert _found(mem, "zebra") == ["memory/2025-03-01.md"]  # synced: read within a tick
    assert "memory/2025-03-01.md" in _racy(mem)
    st = day1.stat()
    day1.write_text("# Day 1\n\n- the password hint is yakka\n")  # same size
    os.utime(day1, ns=(st.st_atime_ns, st.st_mtime_ns))  # same tick: mtime unchanged
    assert day1.stat().st_size == st.st_size
    assert _found(mem, "yakka") == ["memory/2025-03-01.md"]
    assert _found(mem, "zebra") == []
    # `clawmem index` sees it too, and `status` calls the index clean only once it is.
    day1.write_text("# Day 1\n\n- the password hint is quoll\n")
    os.utime(day1, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert mem.status().clean is False
    rep = mem.index()
    assert rep.files_indexed == 1
    assert mem.status().clean is True


def test_racy_files_settle_once_read_long_after_their_last_write(mem):
    """The hash check is for recently written files only: a file read more than RACY_NS after
    its mtime leaves the racy set, so the check stays as cheap as the stat pass."""
    day3 = mem.root / "memory" / "2025-03-03.md"
    day3.write_text(day3.read_text() + "- a fresh line\n")
    mem.index()
    assert "memory/2025-03-03.md" in _racy(mem)
    old = day3.stat().st_mtime_ns - 2 * RACY_NS
    os.utime(day3, ns=(old, old))  # its last write is now long past (stat moved: re-read)
    (mem.root / "memory" / "2025-03-02.md").write_text("# Day 2\n\n- another edit\n")
    mem.index()
    racy = _racy(mem)
    assert "memory/2025-03-03.md" not in racy
    assert "memory/2025-03-02.md" in racy  # this one was just written


def test_an_old_file_is_never_hashed(mem, monkeypatch):
    """Nothing recently written, nothing racy: the freshness check reads no file content."""
    for p in (mem.root / "memory").glob("*.md"):
        old = p.stat().st_mtime_ns - 2 * RACY_NS
        os.utime(p, ns=(old, old))
    old = (mem.root / "MEMORY.md").stat().st_mtime_ns - 2 * RACY_NS
    os.utime(mem.root / "MEMORY.md", ns=(old, old))
    mem.index()
    assert _racy(mem) == {}
    from clawmem.ingest import sync

    def no_reads(*a, **k):
        raise AssertionError("a file's content was read by the freshness check")

    monkeypatch.setattr(sync, "_content_differs", no_reads)
    assert _found(mem, "ordinary") == sorted(f"memory/2025-03-0{d}.md" for d in range(1, 4))
