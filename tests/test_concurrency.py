"""Many readers, one writer: recall keeps answering while the index is synced and rebuilt.

Readers are separate processes running the library's recall in a loop (as an agent's tool calls
would, minus the interpreter start-up); writers are `python -m clawmem index` processes.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchmarks.soak.workspace import make_workspace

from clawmem.errors import LockedError
from clawmem.memory import open_workspace
from clawmem.store import db

pytestmark = pytest.mark.usefixtures("lexical")

READER = r"""
import json, sys, time
from pathlib import Path
from clawmem.memory import open_workspace

ws, stop, out, sync = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "sync"
mem = open_workspace(ws)
n = ok = 0
errors, empty = [], []
first_new = None
Path(str(out) + ".ready").touch()
while not stop.exists():
    n += 1
    try:
        r = mem.recall("payment ledger", mode="lexical", k=3, sync=sync)
        if r.hits:
            ok += 1
        else:
            empty.append(r.empty_reason)
        if first_new is None and mem.recall("zebracrossing", mode="lexical", k=1, sync=False).hits:
            first_new = time.time()
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
out.write_text(json.dumps({"n": n, "ok": ok, "errors": errors[:5], "n_errors": len(errors),
                           "empty": empty[:5], "first_new": first_new}))
"""


def clawmem(ws: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clawmem", "--workspace", str(ws), *args],
        capture_output=True,
        text=True,
        **kw,
    )


def start_readers(ws: Path, tmp: Path, modes: list[str]):
    stop = tmp / "stop"
    procs = []
    for i, mode in enumerate(modes):
        out = tmp / f"reader{i}.json"
        procs.append(
            (
                subprocess.Popen(
                    [sys.executable, "-c", READER, str(ws), str(stop), str(out), mode]
                ),
                out,
            )
        )
    deadline = time.monotonic() + 30
    while not all(Path(str(out) + ".ready").exists() for _, out in procs):
        assert time.monotonic() < deadline, "readers did not start"
        time.sleep(0.05)
    return stop, procs


def stop_readers(stop: Path, procs) -> list[dict]:
    stop.touch()
    results = []
    for p, out in procs:
        assert p.wait(60) == 0
        results.append(json.loads(out.read_text()))
    return results


def integrity(ws: Path) -> str:
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def test_readers_keep_answering_during_syncs_and_rebuilds(tmp_path):
    ws = tmp_path / "ws"
    make_workspace(ws, 60)
    assert clawmem(ws, "index", "--quiet").returncode == 0
    # Two plain readers and one that syncs lazily (it competes for the write lock).
    stop, procs = start_readers(ws, tmp_path, ["nosync", "nosync", "sync"])
    try:
        rnd = random.Random(3)
        for round_ in range(2):
            r = clawmem(ws, "index", "--force", "--quiet")
            assert r.returncode == 0, r.stderr
            for p in rnd.sample(sorted((ws / "memory").glob("*.md")), 20):
                with open(p, "a", encoding="utf-8") as fh:
                    fh.write(f"\nRound {round_} payment ledger note.\n")
            r = clawmem(ws, "index", "--quiet")
            assert r.returncode == 0, r.stderr
        t_start = time.time()
        (ws / "memory" / "2025-12-01.md").write_text("# x\n\nThe zebracrossing decision.\n")
        r = clawmem(ws, "index", "--force", "--quiet")
        t_done = time.time()
        assert r.returncode == 0, r.stderr
        time.sleep(0.5)
    finally:
        results = stop_readers(stop, procs)
    for res in results:
        assert res["n_errors"] == 0, res["errors"]
        assert res["ok"] == res["n"] and res["n"] >= 20, res
        # The new file is seen once the rebuild is swapped in (or, by the reader that syncs
        # lazily, once it synced it itself): never before it existed, and without restarting.
        assert res["first_new"] is not None
        assert t_start < res["first_new"] < t_done + 0.5
    assert integrity(ws) == "ok"
    print(f"\nrecalls during 5 writes: {[r['n'] for r in results]}, all answered")


def test_two_writers_never_interleave(tmp_path):
    ws = tmp_path / "ws"
    make_workspace(ws, 50)
    assert clawmem(ws, "index", "--quiet").returncode == 0
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "clawmem", "--workspace", str(ws), "index", *extra, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for extra in (["--force"], ["--force"], [])
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1] for o in outs]
    assert integrity(ws) == "ok"
    # The index holds exactly the files on disk, each once, with their current hashes.
    import hashlib

    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    rows = dict(conn.execute("SELECT path, sha256 FROM files").fetchall())
    conn.close()
    disk = {
        p.relative_to(ws).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in ws.rglob("*.md")
        if ".memory" not in p.parts
    }
    assert rows == disk


def _hold_lock(ws: Path, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from clawmem.files.locking import write_lock\n"
            "with write_lock(Path(sys.argv[1]), purpose='clawmem reflect'):\n"
            f"    print('locked', flush=True); time.sleep({seconds})",
            str(ws / ".memory"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_a_second_writer_waits_for_the_first(ws):
    assert clawmem(ws, "index", "--quiet").returncode == 0
    holder = _hold_lock(ws, 1.5)
    t0 = time.monotonic()
    r = clawmem(ws, "index", "--json")
    waited = time.monotonic() - t0
    holder.wait()
    assert r.returncode == 0, r.stderr
    assert waited >= 1.0  # it waited for the holder instead of writing beside it


def test_a_writer_that_cannot_wait_gets_a_clear_locked_error(ws):
    mem = open_workspace(ws)
    mem.index()
    holder = _hold_lock(ws, 1.5)
    try:
        with pytest.raises(LockedError) as err:
            mem.index(lock_timeout=0.5)
        assert f"being written by pid {holder.pid} (clawmem reflect)" in err.value.message
        assert err.value.hint and err.value.exit_code == 8
        # Readers are not writers: recall still answers while the lock is held.
        res = mem.recall("Peter", mode="lexical")
        assert res.hits
    finally:
        holder.wait()


def test_recall_while_another_process_holds_the_lock_says_results_may_be_old(ws):
    mem = open_workspace(ws)
    mem.index()
    (ws / "memory" / "2025-11-03.md").write_text("# x\n\nThe caracal plan.\n")
    holder = _hold_lock(ws, 1.0)
    try:
        res = mem.recall("Peter", mode="lexical")
        assert res.hits
        assert any("another process is writing the index" in n for n in res.notes)
    finally:
        holder.wait()
    assert os.path.exists(ws / ".memory" / "index.sqlite")
