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
from clawmem.locking import acquire, is_held, read_owner, write_lock

HOLDER = (
    "import sys, time; from pathlib import Path; from clawmem.locking import acquire\n"
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
