"""A long-running process's own journal (``Memory.follow_changes``, what ``clawmem mcp`` turns on):
a read with nothing changed skips its stat pass, and no change made between reads is ever missed.

Every change is made on real files, the way an editor, a shell or another clawmem process makes
it; "vouched" is checked against the truth on disk (tests/test_journal.py's ``index_matches_disk``)
every time the journal answers for a read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawmem.memory import open_workspace

from .conftest import cli
from .test_journal import SAME_SIZE_WORDS, index_matches_disk, rewrite_alike, start_caught_up
from .test_watch import daemons  # noqa: F401 - a fixture

TEXT = {"capture_output": True, "text": True, "check": True}

pytestmark = [
    pytest.mark.usefixtures("lexical"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only"),
]


def following(ws: Path):
    assert cli("--workspace", str(ws), "index", "--quiet").code == 0
    mem = open_workspace(ws)
    mem.follow_changes()
    return mem


def find(mem, query: str) -> tuple[list[str], dict]:
    res = mem.recall(query, mode="lexical", k=10)
    paths = list(dict.fromkeys(h.path for h in res.hits))
    if res.index["fresh_by"] == "own journal":
        assert index_matches_disk(mem.root), "the journal vouched for an index behind the files"
    return paths, res.index


def test_a_second_read_with_nothing_changed_stats_no_file(ws, monkeypatch):
    mem = following(ws)
    first = find(mem, "Peter")
    assert first[1]["fresh_by"] == "stat scan"  # the journal starts: one comparison first
    # Prove that no file is statted: a stat pass from here on fails the test.
    import clawmem.ingest.indexing

    def no_stat_pass(*a, **k):
        raise AssertionError("a read statted every file although nothing changed")

    monkeypatch.setattr(clawmem.ingest.indexing, "plan_fresh", no_stat_pass)
    second = find(mem, "Peter")
    assert second == (first[0], {**first[1], "fresh_by": "own journal", "watcher_note": None})
    mem.close()
    assert not list((ws / ".memory").glob("probe-*")), "close() leaves no probe file behind"


def test_edits_adds_deletes_renames_between_reads_are_never_missed(ws):
    mem = following(ws)
    assert find(mem, "Peter")[0]
    m = ws / "memory"
    steps = [
        ("edit", lambda: (m / "2025-11-06.md").write_text("# x\n\nThe ibex contract.\n"), "ibex"),
        ("add", lambda: (m / "new.md").write_text("# n\n\nA quokka arrived.\n"), "quokka"),
        ("rename", lambda: (m / "new.md").rename(m / "renamed.md"), "quokka"),
        ("delete", lambda: (m / "renamed.md").unlink(), "quokka"),
        ("new folder", lambda: _new_folder(m, "2024", "narwhal"), "narwhal"),
        ("in the new folder", lambda: _append(m / "2024" / "old.md", "A walrus too."), "walrus"),
        ("core file", lambda: _append(ws / "MEMORY.md", "Peter keeps a tapir."), "tapir"),
        ("folder renamed", lambda: (m / "2024").rename(m / "archive"), "narwhal"),
        ("in the renamed folder", lambda: _append(m / "archive" / "old.md", "An okapi."), "okapi"),
        ("bank appears", lambda: _new_folder(ws, "bank", "axolotl", "page.md"), "axolotl"),
    ]
    expected = {
        "edit": ["memory/2025-11-06.md"],
        "add": ["memory/new.md"],
        "rename": ["memory/renamed.md"],
        "delete": [],
        "new folder": ["memory/2024/old.md"],
        "in the new folder": ["memory/2024/old.md"],
        "core file": ["MEMORY.md"],
        "folder renamed": ["memory/archive/old.md"],
        "in the renamed folder": ["memory/archive/old.md"],
        "bank appears": ["bank/page.md"],
    }
    for name, change, word in steps:
        change()
        paths, index = find(mem, word)
        assert index["fresh_by"] == "stat scan" and paths == expected[name], (name, paths)
        # Nothing changed since: the journal vouches, and the answer is the same.
        paths, index = find(mem, word)
        assert index["fresh_by"] == "own journal" and paths == expected[name], (name, paths)


def _new_folder(parent: Path, name: str, word: str, file: str = "old.md") -> None:
    (parent / name).mkdir(exist_ok=True)
    (parent / name / file).write_text(f"# old\n\nA {word} sighting.\n")


def _append(path: Path, line: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\n{line}\n")


def test_same_second_same_size_edits_are_never_missed(ws):
    mem = following(ws)
    p = ws / "memory" / "2025-11-06.md"
    words = SAME_SIZE_WORDS
    forged = 0
    for first, second in zip(words[::2], words[1::2], strict=True):
        p.write_text(f"# x\n\nThe {first} memo.\n")
        mtime = p.stat().st_mtime_ns
        assert find(mem, first)[0] == ["memory/2025-11-06.md"], first
        assert find(mem, first)[1]["fresh_by"] == "own journal"
        forged += rewrite_alike(p, f"# x\n\nThe {second} memo.\n", mtime)
        assert find(mem, second)[0] == ["memory/2025-11-06.md"], second
        paths, index = find(mem, first)
        assert paths == [] and index["fresh_by"] == "own journal", first
    assert forged


def test_changes_by_another_clawmem_process_are_never_missed(ws):
    mem = following(ws)
    assert find(mem, "Peter")[0]
    r = cli("--workspace", str(ws), "retain", "Peter adopted a capybara", "--date", "2025-11-30")
    assert r.code == 0, r.err
    paths, index = find(mem, "capybara")
    assert paths == ["memory/2025-11-30.md"]
    again = {**index, "fresh_by": "own journal", "watcher_note": None}
    assert find(mem, "capybara") == (paths, again)
    # A rebuild by another process swaps a new index in: still the files' content.
    assert cli("--workspace", str(ws), "index", "--force", "--quiet").code == 0
    assert find(mem, "capybara")[0] == paths


def test_events_lost_to_an_overflowing_queue_are_never_missed(ws):
    """The kernel drops events when the queue is full and says so once; between two reads an
    idle server may well see that (a checkout, a sync tool). A folder created while events were
    lost must still be followed afterwards."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"max_queued_events is {limit}: too many events to overflow in a test")
    mem = following(ws)
    assert find(mem, "Peter")[0]
    noise = [ws / "memory" / "noise-a.md", ws / "memory" / "noise-b.md"]
    for n in noise:
        n.write_text("# noise\n")
    fds = [os.open(n, os.O_WRONLY) for n in noise]
    try:
        for i in range(limit + 10):  # alternating files: the kernel merges identical events only
            os.write(fds[i % 2], b"x")
        _new_folder(ws / "memory", "lost", "pangolin")  # its creation is an event that was lost
    finally:
        for fd in fds:
            os.close(fd)
    paths, index = find(mem, "pangolin")
    assert paths == ["memory/lost/old.md"] and index["fresh_by"] == "stat scan"
    assert find(mem, "pangolin")[1]["fresh_by"] == "own journal"
    _append(ws / "memory" / "lost" / "old.md", "A lemur as well.")
    paths, index = find(mem, "lemur")
    assert paths == ["memory/lost/old.md"] and index["fresh_by"] == "stat scan"


def test_beside_a_watcher_neither_takes_the_others_probe(ws, daemons):  # noqa: F811
    start_caught_up(ws, daemons, "--debounce-ms", "2000")
    mem = following(ws)
    assert find(mem, "Peter")[1]["fresh_by"] in ("watcher", "own journal")
    assert find(mem, "Peter")[1]["fresh_by"] == "own journal"
    _append(ws / "memory" / "2025-11-06.md", "A gecko on the wall.")
    # The watcher waits 2 s before syncing; this read syncs the file itself, and says how (on a
    # machine slow enough for the watcher to have synced first, the watcher vouches instead).
    paths, index = find(mem, "gecko")
    assert paths == ["memory/2025-11-06.md"]
    assert index["fresh_by"] == "watcher" or (
        index["fresh_by"] == "stat scan" and "not caught up" in index["watcher_note"]
    ), index
    assert find(mem, "gecko") == (paths, {**index, "fresh_by": "own journal", "watcher_note": None})


def test_a_killed_servers_probe_is_removed_by_the_next_one(ws):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **TEXT)
    left = ws / ".memory" / f"probe-{int(dead.stdout)}-7f00"
    mem = following(ws)  # the index exists: .memory/ too
    left.touch()
    find(mem, "Peter")
    assert not left.exists()
    assert [p.name for p in (ws / ".memory").glob("probe-*")] == [mem.indexer._own.probe_name]


def test_where_it_cannot_follow_reads_stat_and_say_why(ws):
    (ws / "memory" / "real.md").write_text("# r\n\nA marmot.\n")
    os.symlink(ws / "memory" / "real.md", ws / "memory" / "link.md")
    mem = following(ws)
    for _ in range(2):
        paths, index = find(mem, "marmot")
        assert index["fresh_by"] == "stat scan"
        assert "own journal: a symlinked memory file" in index["watcher_note"]


def test_a_removed_index_folder_is_rebuilt_and_followed_again(ws):
    mem = following(ws)
    find(mem, "Peter")
    assert find(mem, "Peter")[1]["fresh_by"] == "own journal"
    shutil.rmtree(ws / ".memory")  # index, probe and all: "the index is disposable"
    assert find(mem, "Peter")[0]  # rebuilt first
    first = find(mem, "Peter")
    assert first[1]["fresh_by"] == "stat scan" and "journal failed" in first[1]["watcher_note"]
    assert find(mem, "Peter")[1]["fresh_by"] == "stat scan"  # a new journal's first comparison
    assert find(mem, "Peter")[1]["fresh_by"] == "own journal"
    _append(ws / "memory" / "2025-11-06.md", "A heron by the river.")
    assert find(mem, "heron")[0] == ["memory/2025-11-06.md"]
