"""The watcher's journal: a recall skips its stat pass only when a live watcher vouches, and a
watcher that is behind, killed or stopped never makes a recall miss an edit.

Every watcher here is a real `python -m clawmem watch` process (tests/test_watch.py's Daemon).
"Vouched" is checked against the truth on disk: whenever the journal answers clean, every memory
file on disk must be in the index with its current content hash.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from clawmem.embedders.resident import protocol
from clawmem.ingest import journal
from clawmem.memory import open_workspace
from clawmem.store.index import Index

from .conftest import cli
from .test_watch import daemons, stop_process, wait_until  # noqa: F401 - daemons is a fixture

pytestmark = [
    pytest.mark.usefixtures("lexical"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only"),
]


def ask(ws: Path) -> tuple[bool, str]:
    mem = open_workspace(ws)
    return journal.ask(mem.memory_dir, journal.scan_key(mem.root, mem.cfg))


def index_matches_disk(ws: Path) -> bool:
    """Every memory file on disk (as the scan defines them) is in the index with this content,
    and nothing else is."""
    mem = open_workspace(ws)
    disk = {
        f.relpath: hashlib.sha256((ws / f.relpath).read_bytes()).hexdigest()
        for f in mem.scan().files
    }
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        states = {p: s[2] for p, s in idx.file_states().items()}
    finally:
        idx.close()
    if states != disk:
        print(
            {
                p: (states.get(p), disk.get(p))
                for p in set(states) | set(disk)
                if states.get(p) != disk.get(p)
            }
        )
    return states == disk


def recall(ws: Path, query: str):
    res = open_workspace(ws).recall(query, mode="lexical", k=10)
    return [h.path for h in res.hits], res.index


def start_caught_up(ws: Path, daemons, *args: str):  # noqa: F811
    assert cli("--workspace", str(ws), "index", "--quiet").code == 0
    d = daemons(ws, *args)
    wait_until(lambda: ask(ws)[0], timeout=20)
    return d


def test_a_caught_up_watcher_vouches_and_recall_skips_the_stat_pass(ws, daemons):  # noqa: F811
    start_caught_up(ws, daemons, "--debounce-ms", "100")
    paths, index = recall(ws, "Peter")
    assert paths and index["fresh_by"] == "watcher" and index["stale_files"] == 0


def test_edits_adds_deletes_renames_between_recalls_are_never_missed(ws, daemons):  # noqa: F811
    # A long debounce: the watcher lags every change by 2 s, so each recall right after a change
    # meets a journal that knows it is behind.
    start_caught_up(ws, daemons, "--debounce-ms", "2000")
    mem = ws / "memory"
    steps = [
        ("edit", lambda: (mem / "2025-11-06.md").write_text("# x\n\nThe ibex contract.\n"), "ibex"),
        ("add", lambda: (mem / "new.md").write_text("# n\n\nA quokka arrived.\n"), "quokka"),
        ("rename", lambda: (mem / "new.md").rename(mem / "renamed.md"), "quokka"),
        ("delete", lambda: (mem / "renamed.md").unlink(), "quokka"),
        ("new folder", lambda: _new_folder(mem), "narwhal"),
    ]
    for name, change, word in steps:
        change()
        ok, why = ask(ws)
        assert not ok and "not caught up" in why, (name, why)
        paths, index = recall(ws, word)
        assert index["fresh_by"] == "stat scan", name
        expected = {
            "edit": ["memory/2025-11-06.md"],
            "add": ["memory/new.md"],
            "rename": ["memory/renamed.md"],
            "delete": [],
            "new folder": ["memory/2024/old.md"],
        }[name]
        assert paths == expected, (name, paths)
        # Once the watcher has synced, it vouches again and recall trusts it.
        wait_until(lambda: ask(ws)[0], timeout=20)
        paths, index = recall(ws, word)
        assert index["fresh_by"] == "watcher" and paths == expected, (name, paths)


def _new_folder(mem: Path) -> None:
    (mem / "2024").mkdir()
    (mem / "2024" / "old.md").write_text("# old\n\nA narwhal sighting.\n")


# Pairs of words of one length: a memo rewritten with the second is the same size as with the first.
SAME_SIZE_WORDS = ["alpaca", "bonobo", "caiman", "dingos", "egrets", "ferret", "gibbon", "hyenas"]


def rewrite_alike(p: Path, text: str, mtime: int) -> bool:
    """Write ``text`` (the same size as what ``p`` held) and, while still within one coarse clock
    tick of ``mtime`` would be plausible, give it that mtime back: (size, mtime) then cannot tell
    the two versions apart. True when it did."""
    p.write_text(text)
    if time.time_ns() - mtime < 1_000_000_000:
        os.utime(p, ns=(p.stat().st_atime_ns, mtime))
        return True
    return False


def test_same_second_same_size_edits_are_never_missed(ws, daemons):  # noqa: F811
    start_caught_up(ws, daemons, "--debounce-ms", "0")
    p = ws / "memory" / "2025-11-06.md"
    words = SAME_SIZE_WORDS
    forged = 0
    for first, second in zip(words[::2], words[1::2], strict=True):
        p.write_text(f"# x\n\nThe {first} memo.\n")
        mtime = p.stat().st_mtime_ns
        assert recall(ws, first)[0] == ["memory/2025-11-06.md"], first
        forged += rewrite_alike(p, f"# x\n\nThe {second} memo.\n", mtime)
        assert recall(ws, second)[0] == ["memory/2025-11-06.md"], second
        assert recall(ws, first)[0] == [], first
        wait_until(lambda: ask(ws)[0], timeout=20)
        paths, index = recall(ws, second)
        assert index["fresh_by"] == "watcher" and paths == ["memory/2025-11-06.md"], second
    assert forged  # at least one edit really was indistinguishable by (size, mtime)


@pytest.mark.parametrize("debounce", ["0", "30"])
def test_whenever_the_journal_vouches_the_index_matches_the_disk(ws, daemons, debounce):  # noqa: F811
    """Random changes in quick succession, asking right after each: a 'clean' answer with the
    index behind the disk would be a recall that misses an edit."""
    start_caught_up(ws, daemons, "--debounce-ms", debounce)
    rng = random.Random(int(debounce) + 16)
    mem = ws / "memory"
    names = [f"f{i}.md" for i in range(6)]
    vouched = 0
    for step in range(60):
        name = rng.choice(names)
        p = mem / name
        op = rng.choice(["write", "append", "delete", "rename", "mkdir"])
        if op == "write" or not p.exists():
            p.write_text(f"# {name}\n\nstep {step:03d}\n")
        elif op == "append":
            with p.open("a") as fh:
                fh.write(f"- more {step}\n")
        elif op == "delete":
            p.unlink()
        elif op == "rename":
            p.rename(mem / rng.choice(names))
        else:
            sub = mem / f"d{step}"
            sub.mkdir()
            (sub / "x.md").write_text(f"in a new folder {step}\n")
        if rng.random() < 0.5:
            time.sleep(rng.choice([0.0, 0.01, 0.05, 0.2]))
        ok, why = ask(ws)
        if ok:
            vouched += 1
            assert index_matches_disk(ws), (step, op, name)
    wait_until(lambda: ask(ws)[0], timeout=20)
    assert index_matches_disk(ws)
    print(f"\njournal vouched {vouched} of 60 times right after a change (debounce {debounce})")


def test_a_killed_watcher_never_vouches(ws, daemons):  # noqa: F811
    d = start_caught_up(ws, daemons, "--debounce-ms", "100")
    d.stop(signal.SIGKILL)
    assert (ws / ".memory" / journal.SOCKET_NAME).exists()  # left behind by the kill
    ok, why = ask(ws)
    assert not ok and "not running" in why
    (ws / "memory" / "2025-11-06.md").write_text("# x\n\nThe ibex contract.\n")
    paths, index = recall(ws, "ibex")
    assert paths == ["memory/2025-11-06.md"]
    assert index["fresh_by"] == "stat scan" and "not running" in index["watcher_note"]


def test_a_stopped_watcher_costs_a_timeout_then_the_stat_pass(ws, daemons):  # noqa: F811
    d = start_caught_up(ws, daemons, "--debounce-ms", "100")
    stop_process(d.proc.pid)  # returns once every thread is stopped: only then can none answer
    try:
        (ws / "memory" / "2025-11-06.md").write_text("# x\n\nThe ibex contract.\n")
        t0 = time.monotonic()
        paths, index = recall(ws, "ibex")
        assert time.monotonic() - t0 < 5
        assert paths == ["memory/2025-11-06.md"]
        assert index["fresh_by"] == "stat scan" and "did not answer" in index["watcher_note"]
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)


def test_a_symlinked_memory_file_is_never_vouched_for(ws, daemons):  # noqa: F811
    (ws / "notes").mkdir()
    (ws / "notes" / "target.md").write_text("# t\n\nA tapir.\n")
    (ws / "memory" / "link.md").symlink_to(ws / "notes" / "target.md")
    assert cli("--workspace", str(ws), "index", "--quiet").code == 0
    d = daemons(ws, "--debounce-ms", "100")
    d.wait_log(r"synced \(start\)")
    time.sleep(0.3)
    ok, why = ask(ws)
    assert not ok and "symlinked memory file" in why
    # The target lives outside every watched folder: an edit there has no event, and the stat
    # pass is what finds it.
    (ws / "notes" / "target.md").write_text("# t\n\nA wombat.\n")
    paths, index = recall(ws, "wombat")
    assert paths == ["memory/link.md"] and index["fresh_by"] == "stat scan"


def test_status_shows_the_journal_and_recall_json_says_how_it_knew(ws, daemons):  # noqa: F811
    import json

    assert cli("--workspace", str(ws), "index", "--quiet").code == 0
    d = daemons(ws, "--debounce-ms", "100", "--poll")
    d.wait_log(r"watching ")
    wait_until(lambda: (ws / ".memory" / "watch.json").exists())
    # With file events off there is no journal: status says so, and recall stats the files.
    r = cli("--workspace", str(ws), "status")
    assert "journal off (file events off): recalls stat every file" in r.out
    r = cli("--workspace", str(ws), "recall", "Peter", "--json")
    assert json.loads(r.out)["index"]["fresh_by"] == "stat scan"


def test_a_question_waits_for_the_changes_made_before_it_not_for_writers_to_stop(tmp_path):
    """The token rule: a reader asking again with its first question's token is vouched for once
    a sync that began after that question's changes has completed, even though newer changes
    keep arriving (four writers in a loop never let a watcher be "caught up" with everything: a
    recall waited its full 2 s every time). A question without a token still needs everything."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    mem = open_workspace(ws)
    j = journal.Journal(mem.root, mem.memory_dir, mem.cfg)  # the real class; no socket needed
    j.caught_up(j.begin())
    assert j.verdict()[0] is True
    j._event()  # a change before the question
    clean, why, token = j.verdict()
    assert not clean and "changes since" in why
    started = j.begin()  # a sync starts after it...
    j.syncing = True
    j._event()  # ...and a newer change comes in while it runs
    assert j.verdict(token)[0] is False  # not done yet
    j.caught_up(started)  # the sync completes
    j.syncing = False
    assert j.verdict(token) == (True, "", token)  # the question's changes are in
    assert j.verdict()[0] is False  # but not everything read so far
    assert j.verdict(10**9)[0] is False  # a token from elsewhere is capped at what was read


def test_a_watcher_busy_embedding_says_so_at_once_instead_of_queueing_every_recall(tmp_path):
    """Query vectors wait for the watcher's one model on threads of their own; beyond
    journal.MAX_EMBEDDING of them a recall is told at once that the watcher is busy (it then
    embeds its query itself) rather than adding one more thread that would time out."""
    import threading

    from clawmem.embedders.testing import HashEmbedder

    class Gated(HashEmbedder):
        """The real test embedder, held up until the gate opens (a model busy indexing)."""

        def __init__(self) -> None:
            super().__init__()
            self.gate = threading.Event()

        def embed_query(self, text):
            self.gate.wait(10)
            return super().embed_query(text)

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    mem = open_workspace(ws)
    mem.memory_dir.mkdir()  # the watcher's folder, as `clawmem watch` makes it
    emb = Gated()
    j = journal.Journal(mem.root, mem.memory_dir, mem.cfg, embedder=lambda: emb)
    j.start()
    try:
        key = emb.identity.key()
        answers: list = []

        def ask(text: str) -> None:
            answers.append(protocol.ask_vector(mem.memory_dir, key, text, timeout=10))

        waiting = [
            threading.Thread(target=ask, args=(f"q{i}",)) for i in range(journal.MAX_EMBEDDING)
        ]
        for t in waiting:
            t.start()
        deadline = time.monotonic() + 10
        while j._embedding._value > 0 and time.monotonic() < deadline:  # all of them queued
            time.sleep(0.01)
        started = time.monotonic()
        raw, why = protocol.ask_vector(mem.memory_dir, key, "one more", timeout=10)
        assert raw is None and "busy" in why
        assert time.monotonic() - started < 1.0  # told at once, not after a timeout
        emb.gate.set()
        for t in waiting:
            t.join(10)
        assert len(answers) == journal.MAX_EMBEDDING
        assert all(raw is not None and len(raw) == 4 * emb.identity.dims for raw, _ in answers)
        raw, why = protocol.ask_vector(mem.memory_dir, key, "after", timeout=10)  # room again
        assert raw is not None, why
    finally:
        j.close()


def test_a_client_sending_a_byte_at_a_time_does_not_hold_the_journal(tmp_path):
    """The journal answers on one thread. Its socket took one second for each read, not for the
    question: a client sending a byte every 0.8 s held that thread (no event drained, no other
    recall answered) for as long as it kept sending. And the socket was made with the umask:
    with umask 002 another user of the group could connect. It is the owner's alone (0600)."""
    import socket
    import stat
    import threading

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    mem = open_workspace(ws)
    mem.memory_dir.mkdir()
    old = os.umask(0o002)
    try:
        j = journal.Journal(mem.root, mem.memory_dir, mem.cfg)
        j.start()
    finally:
        os.umask(old)
    try:
        sock_path = mem.memory_dir / journal.SOCKET_NAME
        mode = stat.S_IMODE(os.stat(sock_path).st_mode)
        stop = threading.Event()  # never set: the client sends until the journal hangs up
        closed: list[float] = []

        def trickle() -> None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(sock_path))
            started = time.monotonic()
            try:
                while time.monotonic() - started < 6 and not stop.wait(0.8):
                    s.sendall(b"[")
            except OSError:  # the journal closed it
                closed.append(time.monotonic() - started)
            finally:
                s.close()

        slow = threading.Thread(target=trickle)
        slow.start()
        time.sleep(0.3)
        started = time.monotonic()
        answer = journal.ask_token(mem.memory_dir, journal.scan_key(mem.root, mem.cfg), timeout=3.0)
        waited = time.monotonic() - started
        slow.join(10)
        # Answered (by the journal: its pid) once the slow client's second ran out.
        assert answer.pid == os.getpid() and waited < 3.0, (waited, answer)
        assert closed and closed[0] < 4.0
        assert mode == 0o600
    finally:
        j.close()
