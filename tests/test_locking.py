"""locking.py: the one lock implementation behind the write lock and the watcher's lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawmem.errors import LockedError
from clawmem.files.locking import acquire, is_held, read_owner, write_lock

HOLDER = (
    "import sys, time; from pathlib import Path; from clawmem.files.locking import acquire\n"
    "held = acquire(Path(sys.argv[1]), timeout=5, purpose='test holder')\n"
    "print('held', flush=True); time.sleep(60)\n"
)


def _holder(path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_a_held_lock_is_seen_named_and_refused(tmp_path):
    path = tmp_path / "x.lock"
    p = _holder(path)
    try:
        assert is_held(path) is True
        owner = read_owner(path)
        assert owner is not None and owner.pid == p.pid and owner.text.endswith("(test holder)")
        t0 = time.monotonic()
        assert acquire(path, timeout=0.3) is None
        assert 0.25 < time.monotonic() - t0 < 3
    finally:
        p.kill()
        p.wait()


def test_a_killed_holders_lock_is_free_and_reported_as_taken_over(tmp_path):
    path = tmp_path / "x.lock"
    p = _holder(path)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert is_held(path) is False  # the kernel dropped it
    held = acquire(path, timeout=0)
    assert held is not None and held.previous is not None and held.previous.pid == p.pid
    assert read_owner(path).pid == os.getpid()
    held.release()
    held.release()  # idempotent
    assert read_owner(path) is None  # emptied: nobody named
    again = acquire(path, timeout=0)
    assert again is not None and again.previous is None  # a clean release leaves no "took over"
    again.release()


def test_write_lock_names_the_holder_when_it_times_out(tmp_path):
    mem = tmp_path / ".memory"
    mem.mkdir()
    p = _holder(mem / "write.lock")
    try:
        with pytest.raises(LockedError, match=rf"being written by pid {p.pid} \(test holder\)"):
            with write_lock(mem, timeout=0.2):
                pass
    finally:
        p.kill()
        p.wait()
    with write_lock(mem, timeout=1, purpose="after"):
        assert read_owner(mem / "write.lock").text == f"pid {os.getpid()} (after)"


LOOPER = (
    "import sys, time; from pathlib import Path; from clawmem.files.locking import write_lock\n"
    "mem, t_end = Path(sys.argv[1]), time.monotonic() + float(sys.argv[2])\n"
    "with write_lock(mem, purpose='looper'):\n"
    "    print('held', flush=True); time.sleep(0.1)\n"
    "while time.monotonic() < t_end:\n"
    "    with write_lock(mem, purpose='looper'):\n"  # taken again at once, as retain in a loop
    "        time.sleep(0.1)\n"
)


def test_a_waiting_writer_gets_the_lock_before_a_holder_that_takes_it_again(tmp_path):
    # The soak's concurrency part: four processes retaining in a loop starved a `reflect` until
    # it gave up after 60 s. A holder that releases and at once asks again must queue behind a
    # writer that was already waiting, not win every race against its polling.
    mem = tmp_path / ".memory"
    mem.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen(
        [sys.executable, "-c", LOOPER, str(mem), "15"], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        waits = []
        for _ in range(3):  # unfair, the waiter sometimes won a race; three times it did not
            t0 = time.monotonic()
            with write_lock(mem, timeout=6, purpose="waiter"):
                waits.append(time.monotonic() - t0)
                assert p.poll() is None  # the looper still runs: we were let in, not left over
            time.sleep(0.2)
        assert max(waits) < 3, waits  # a hold of 0.1 s, then our turn (generous under load)
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("command", ["retain", "index"])
def test_the_model_is_loaded_before_the_write_lock_is_taken(hash_indexed, monkeypatch, command):
    # A cold `clawmem retain` held the write lock 3.5 s of its 5.2 s, loading the model inside
    # it (0.3 s once loaded before): every other writer waited for this process's start-up.
    import clawmem.embedders.model_choice
    from clawmem.embedders.testing import HashEmbedder
    from clawmem.memory import open_workspace

    held_while_loading = []

    def load(root, cfg):
        held_while_loading.append(is_held(root / ".memory" / "write.lock"))
        return HashEmbedder()

    monkeypatch.setattr(clawmem.embedders.model_choice, "load_embedder", load)
    monkeypatch.setattr(
        clawmem.embedders.model_choice,
        "configured_identity",
        lambda root, cfg: HashEmbedder().identity,
    )
    # The model loaded in this process (the resident embedder, issue 29, would serve the few
    # vectors of an edit from another process, and then nothing loads here at all).
    mem = open_workspace(hash_indexed, environ={"CLAWMEM_RESIDENT_EMBEDDER": "0"})
    if command == "retain":
        mem.retain("The lock test fact.", entities=["Peter"])
    else:
        # `index` loads the model only for text to embed (test_index_model_load.py), so some.
        with open(hash_indexed / "memory" / "2025-11-04.md", "a", encoding="utf-8") as fh:
            fh.write("\n## Lock test\n\nThe lock test note.\n")
        report = mem.index()
        assert report.embedded > 0 and report.pending == 0
    assert held_while_loading == [False]
