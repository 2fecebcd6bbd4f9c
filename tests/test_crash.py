"""Crash safety, for real: SIGKILL at random moments, a full disk, a read-only index folder.

After every failure the index must still answer from a consistent state (``PRAGMA
integrity_check`` ok, recall returns hits), the next run must complete, and clawmem must never
have changed a Markdown file. The kill delays are seeded, so a failure can be replayed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchmarks.soak.resources import fill, read_only, small_disk

from clawmem.memory import open_workspace
from clawmem.store import db

from .conftest import built_once, copy_indexed
from .test_concurrency import make_workspace

pytestmark = pytest.mark.usefixtures("lexical")

SEED = 20251127


def clawmem_cmd(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "clawmem", "--workspace", str(ws), *args]


def run(ws: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(clawmem_cmd(ws, *args), capture_output=True, text=True, **kw)


def markdown(ws: Path) -> dict[str, str]:
    """Hash of every file in the workspace outside .memory/ (what clawmem must never change)."""
    out = {}
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws)
        if p.is_file() and rel.parts[0] != ".memory":
            out[rel.as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def assert_consistent(ws: Path, query: str = "payment ledger") -> None:
    """The index on disk, as a reader finds it right now: intact, and answering."""
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n_files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        assert n_files > 0
    finally:
        conn.close()
    res = open_workspace(ws).recall(query, mode="lexical", k=3, sync=False)
    assert res.hits, res.empty_reason


def index_matches_disk(ws: Path) -> None:
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    rows = dict(conn.execute("SELECT path, sha256 FROM files").fetchall())
    conn.close()
    disk = {k: v for k, v in markdown(ws).items() if k.endswith(".md") and "/." not in "/" + k}
    assert rows == disk


def timed(ws: Path, *args: str) -> float:
    t0 = time.monotonic()
    r = run(ws, *args)
    assert r.returncode == 0, r.stderr
    return time.monotonic() - t0


def kill_at(ws: Path, args: list[str], delay: float) -> bool:
    """Start ``clawmem ARGS``, SIGKILL it after ``delay`` s. True if it was still running."""
    p = subprocess.Popen(
        clawmem_cmd(ws, *args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    alive = p.poll() is None
    if alive:
        p.kill()  # SIGKILL: no handler, no cleanup, no flush
    p.wait()
    return alive


@pytest.fixture(scope="module")
def big_template(tmp_path_factory) -> Path:
    """300 generated daily logs, indexed once (copied per test)."""

    def build(folder: Path) -> None:
        make_workspace(folder / "ws", 300)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
        env["CLAWMEM_VECTORS"] = "0"
        cmd = clawmem_cmd(folder / "ws", "index", "--quiet")
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr

    return built_once(tmp_path_factory, "big", build) / "ws"


@pytest.fixture
def big(big_template, tmp_path) -> Path:
    ws = tmp_path / "ws"
    copy_indexed(big_template, ws)
    return ws


# --------------------------------------------------------------------------- SIGKILL
def test_sigkill_during_full_rebuilds(big):
    rnd = random.Random(SEED)
    before = markdown(big)
    duration = timed(big, "index", "--force", "--no-embed", "--quiet")
    killed = mid_rebuild = rounds = 0
    # Kill at a random moment of a run as long as the one timed above; a run that finished first
    # is not a kill. Go on until enough kills, not for a set share: on a loaded machine a run's
    # length varies, and a share asserted over a fixed number of rounds failed by chance.
    while rounds < 24 and (killed < 6 or mid_rebuild < 3):
        rounds += 1
        if kill_at(big, ["index", "--force", "--no-embed", "--quiet"], rnd.uniform(0.2, duration)):
            killed += 1
        # A kill between "started writing the new index" and "swapped it in" leaves its file.
        mid_rebuild += bool(list((big / ".memory").glob("index.sqlite.rebuild-*")))
        assert_consistent(big)
    assert markdown(big) == before
    assert killed >= 6 and mid_rebuild >= 3, (rounds, killed, mid_rebuild)
    # The next run completes and cleans up after the killed ones.
    r = run(big, "index", "--json")
    assert r.returncode == 0, r.stderr
    assert not list((big / ".memory").glob("index.sqlite.rebuild-*"))
    assert_consistent(big)
    index_matches_disk(big)
    print(f"\nfull rebuild ({duration:.1f} s): {killed} kills, {mid_rebuild} mid-rebuild, survived")


def _edit(ws: Path, rnd: random.Random, n: int, round_: int) -> None:
    files = sorted((ws / "memory").glob("*.md"))
    for p in rnd.sample(files, n):
        lines = p.read_text(encoding="utf-8").splitlines()
        lines.insert(rnd.randrange(len(lines)), f"Round {round_} payment ledger edit.")
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rnd.choice(files).unlink()
    (ws / "memory" / f"2030-01-{round_ + 1:02}.md").write_text(f"# new\n\nround {round_}\n")


def test_sigkill_during_incremental_syncs(big):
    rnd = random.Random(SEED + 1)
    _edit(big, rnd, 150, 99)
    duration = timed(big, "index", "--no-embed", "--quiet")
    killed = partial = round_ = 0
    while round_ < 20 and (killed < 5 or partial < 2):  # enough kills, as above
        round_ += 1
        _edit(big, rnd, 150, round_)
        before = markdown(big)  # what the test wrote; clawmem must leave it exactly so
        stale_before = _stale(big)
        if kill_at(big, ["index", "--no-embed", "--quiet"], rnd.uniform(0.2, duration * 1.2)):
            killed += 1
        stale_after = _stale(big)
        partial += 0 < stale_after < stale_before  # killed half-way through the files
        assert_consistent(big)
        assert markdown(big) == before
    assert killed >= 5 and partial >= 2, (round_, killed, partial)
    r = run(big, "index", "--json")
    assert r.returncode == 0, r.stderr
    assert_consistent(big)
    index_matches_disk(big)
    # What the interrupted syncs left equals a rebuild from scratch.
    conn, _ = db.connect(big / ".memory" / "index.sqlite", readonly=True)
    synced = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    conn.close()
    fresh = big.parent / "fresh"
    shutil.copytree(big, fresh, ignore=shutil.ignore_patterns(".memory"))
    assert run(fresh, "index", "--quiet").returncode == 0
    conn, _ = db.connect(fresh / ".memory" / "index.sqlite", readonly=True)
    assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == synced
    conn.close()
    print(f"\nincremental sync ({duration:.1f} s): {killed} kills, {partial} half-way, survived")


def _stale(ws: Path) -> int:
    s = open_workspace(ws).status()
    ch = s.changed_on_disk
    return len(ch["added"]) + len(ch["modified"]) + len(ch["deleted"])


def test_sigkill_during_retain_leaves_the_fact_whole_or_absent(tmp_path):
    if subprocess.run(clawmem_cmd(tmp_path, "retain", "--help"), capture_output=True).returncode:
        pytest.skip("this clawmem has no `retain` command")
    ws = tmp_path / "ws"
    make_workspace(ws, 40)
    assert run(ws, "index", "--quiet").returncode == 0
    log = ws / "memory" / "2025-12-01.md"
    log.write_text("# 2025-12-01\n\nMorning notes.\n\n## Retain\n- W @Peter: In Hanoi.\n")

    def heron(n: int) -> list[str]:
        return ["retain", f"The heron count was {n}.", "--kind", "W", "--entity", "Peter",
                "--date", "2025-12-01"]  # fmt: skip

    # Kill times fall within the quickest of three runs: a first run can take several times
    # a later one's (a quiet, fast machine ran later retains in under 0.2 s, and no kill
    # landed), and a loaded machine's runs vary.
    durations = []
    for n in (0, -1, -2):
        t0 = time.monotonic()
        r = run(ws, *heron(n), "--json")
        durations.append(time.monotonic() - t0)
        assert r.returncode == 0, r.stderr
        if n == 0:
            template = json.loads(r.stdout)["line_text"]
    assert "heron count was 0." in template
    duration = min(durations)
    rnd = random.Random(SEED + 2)
    killed = rounds = 0
    # Rounds go on (up to 30) until 5 kills have landed mid-run.
    for i in range(1, 31):
        if i > 10 and killed >= 5:
            break
        rounds += 1
        old = log.read_text(encoding="utf-8").splitlines()
        others = markdown(ws)
        others.pop("memory/2025-12-01.md")
        killed += kill_at(ws, heron(i), rnd.uniform(0.03, 0.9 * duration))
        new = log.read_text(encoding="utf-8").splitlines()  # valid UTF-8, whole lines
        added = [line for line in new if line not in old]
        assert [line for line in old if line not in new] == []  # nothing lost
        assert added in ([], [template.replace("was 0.", f"was {i}.")]), added
        leftovers = [p.name for p in log.parent.iterdir() if p.name.startswith(".")]
        assert all(re.fullmatch(r"\.2025-12-01\.md\..+\.tmp", n) for n in leftovers), leftovers
        current = markdown(ws)
        current.pop("memory/2025-12-01.md")
        assert {k: v for k, v in current.items() if "/." not in "/" + k} == {
            k: v for k, v in others.items() if "/." not in "/" + k
        }
        assert_consistent(ws)
    assert killed >= 5, (killed, durations)
    print(
        f"\nretain ({duration:.2f} s, the quickest of {len(durations)}): {killed} kills in {rounds} rounds"
    )
    r = run(ws, "index", "--json")
    assert r.returncode == 0, r.stderr
    index_matches_disk(ws)


# --------------------------------------------------------------------------- full disk
def assert_clear_error(r: subprocess.CompletedProcess) -> None:
    assert r.returncode not in (0, 70), (r.returncode, r.stderr)  # 70: an internal error
    assert r.stderr.startswith("clawmem: error: "), r.stderr
    assert "Traceback" not in r.stderr


def test_a_full_disk_is_a_clear_error_and_keeps_the_old_index(tmp_path):
    with small_disk(tmp_path / "disk", "6m") as disk:
        if disk is None:
            return _full_disk_by_rlimit(tmp_path)
        ws = disk / "ws"
        make_workspace(ws, 80)
        assert run(ws, "index", "--quiet").returncode == 0
        before = markdown(ws)
        size = (ws / ".memory" / "index.sqlite").stat().st_size
        filler = fill(disk, size // 3)

        # A rebuild needs a second copy of the index: there is no room for it.
        r = run(ws, "index", "--force", "--no-embed")
        assert_clear_error(r)
        assert re.search(r"disk|space|full", r.stderr, re.I), r.stderr
        assert_consistent(ws)
        assert markdown(ws) == before

        # Reads still answer from the old index.
        r = run(ws, "recall", "payment ledger", "--json", "--no-sync")
        assert r.returncode == 0 and json.loads(r.stdout)["results"], r.stderr

        # An incremental sync with the disk completely full.
        (ws / "memory" / "2030-01-01.md").write_text("# x\n\nThe gannet colony.\n" * 200)
        fill(disk, 0)
        r = run(ws, "index", "--no-embed")
        assert_clear_error(r)
        # SQLite cannot even map a WAL index (-shm) on a completely full disk, so a read may fail
        # too; if it does, it must say so clearly and change nothing.
        r = run(ws, "recall", "payment ledger", "--json")
        if r.returncode != 0:
            assert_clear_error(r)

        # Space again: the old index is intact, and the next run completes and cleans up.
        for p in disk.glob("filler-*"):
            p.unlink()
        assert_consistent(ws)
        now = markdown(ws)
        assert now == {**before, "memory/2030-01-01.md": now["memory/2030-01-01.md"]}
        r = run(ws, "index", "--json")
        assert r.returncode == 0, r.stderr
        assert not list((ws / ".memory").glob("index.sqlite.rebuild-*"))
        assert_consistent(ws)
        assert ["memory/2030-01-01.md"] == [
            h.path for h in open_workspace(ws).recall("gannet", mode="lexical", sync=False).hits
        ][:1]
        del filler


def _full_disk_by_rlimit(tmp_path: Path) -> None:
    """No tmpfs: cap the size of any file the child writes (RLIMIT_FSIZE; Python ignores the
    SIGXFSZ this raises, so writes fail with EFBIG like on a full disk)."""
    import resource

    ws = tmp_path / "ws"
    make_workspace(ws, 80)
    assert run(ws, "index", "--quiet").returncode == 0
    size = (ws / ".memory" / "index.sqlite").stat().st_size

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size // 3, size // 3))

    r = subprocess.run(
        clawmem_cmd(ws, "index", "--force", "--no-embed"),
        capture_output=True,
        text=True,
        preexec_fn=cap,
    )
    assert_clear_error(r)
    assert_consistent(ws)


# --------------------------------------------------------------------------- read-only .memory
def test_a_read_only_index_folder_is_a_clear_error_and_reads_still_work(tmp_path):
    ws = tmp_path / "ws"
    make_workspace(ws, 40)
    assert run(ws, "index", "--quiet").returncode == 0
    before = markdown(ws)
    with read_only(ws / ".memory") as ok:
        if not ok:
            pytest.skip("cannot make a folder read-only here (not root, no mount)")
        with pytest.raises(OSError):
            (ws / ".memory" / "probe").write_text("x")
        (ws / "memory" / "2030-01-01.md").write_text("# x\n\nThe bittern count.\n")
        for args in (["index"], ["index", "--force"]):
            r = run(ws, *args)
            assert_clear_error(r)
            assert re.search(r"read-only|permission|cannot write", r.stderr, re.I), r.stderr
        r = run(ws, "recall", "payment ledger", "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["results"]
        r = run(ws, "status", "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["clean"] is False
        # retain cannot take the write lock: a clear error (was exit 70, an internal error)
        log = ws / "memory" / "2024-01-03.md"
        old = log.read_bytes()
        r = run(ws, "retain", "The read-only fact.", "--date", "2024-01-03")
        assert_clear_error(r)
        assert "cannot take the write lock" in r.stderr, r.stderr
        assert log.read_bytes() == old
        assert_consistent(ws)
    now = markdown(ws)
    assert now == {**before, "memory/2030-01-01.md": now["memory/2030-01-01.md"]}
    r = run(ws, "index", "--json")
    assert r.returncode == 0, r.stderr
    index_matches_disk(ws)
