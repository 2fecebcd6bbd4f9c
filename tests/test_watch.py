"""`clawmem watch` and keeping the index fresh: the daemon run as users run it.

Every daemon here is a real `python -m clawmem watch` process on a copy of the fixture workspace;
its stderr goes to a file the tests read. Changes are checked through the library's recall with
``sync=False``, so a hit proves the *daemon* indexed the change (a lazy sync would hide it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clawmem.memory import open_workspace

from .conftest import cli, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")


class Daemon:
    """One `clawmem watch` process with its log in a file."""

    def __init__(self, ws: Path, *args: str, log: Path | None = None) -> None:
        self.ws = ws
        self.log_path = log or ws.parent / f"watch-{time.monotonic_ns()}.log"
        self._fh = open(self.log_path, "w")  # closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clawmem", "--workspace", str(ws), "watch", *args],
            stdout=subprocess.DEVNULL,
            stderr=self._fh,
            env=dict(os.environ),
        )

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def syncs(self) -> list[str]:
        return [line for line in self.log.splitlines() if " synced (" in line]

    def wait_log(self, pattern: str, timeout: float = 15.0, count: int = 1) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log
            if len(re.findall(pattern, text)) >= count:
                return text
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} (x{count}) in the watch log:\n{self.log}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._fh.close()
        return code


@pytest.fixture
def daemons():
    started: list[Daemon] = []

    def start(ws: Path, *args: str) -> Daemon:
        d = Daemon(ws, *args)
        started.append(d)
        return d

    yield start
    for d in started:
        if d.proc.poll() is None:
            d.stop(signal.SIGKILL)


def hits(ws: Path, query: str) -> list[str]:
    """Paths recall finds *without* syncing first: what the index on disk says right now."""
    res = open_workspace(ws).recall(query, mode="lexical", k=10, sync=False)
    return list(dict.fromkeys(h.path for h in res.hits))


def stop_process(pid: int, timeout: float = 10.0) -> None:
    """SIGSTOP ``pid`` and wait until the kernel shows every one of its threads stopped: kill()
    returns before a thread running on another CPU has stopped, and on a loaded virtual machine a
    stopped watcher was seen answering a question asked after the signal."""
    os.kill(pid, signal.SIGSTOP)

    def stopped() -> bool:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue  # a thread that has just exited
            if stat[stat.rindex(")") + 2] not in "Tt":
                return False
        return True

    wait_until(stopped, timeout=timeout, step=0.005)


def wait_until(predicate, timeout: float = 10.0, step: float = 0.05) -> float:
    """Seconds until ``predicate()`` held; fails after ``timeout``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            return time.monotonic() - t0
        time.sleep(step)
    raise AssertionError(f"condition not met within {timeout} s")


def settled_syncs(d: Daemon, quiet: float = 0.5) -> int:
    """The number of syncs logged, once no new one has appeared for ``quiet`` seconds."""
    n, since = len(d.syncs()), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.05)
        if len(d.syncs()) != n:
            n, since = len(d.syncs()), time.monotonic()
    return n


def status(ws: Path) -> dict:
    """`clawmem status --json` through the real entry point (in-process: much faster)."""
    r = cli("--workspace", str(ws), "status", "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


# --------------------------------------------------------------------------- the daemon
def test_a_saved_file_is_recallable_within_seconds_with_the_default_debounce(ws, daemons):
    d = daemons(ws)
    d.wait_log(r"synced \(start\)")
    t0 = time.monotonic()
    (ws / "memory" / "2025-12-01.md").write_text("# Dec 1\n\nThe quokka rollout began.\n")
    took = wait_until(lambda: "memory/2025-12-01.md" in hits(ws, "quokka"), timeout=8)
    print(f"\nsave -> recallable with debounce_ms=1500: {time.monotonic() - t0:.2f} s")
    assert took < 5.0
    assert d.stop() == 0


def test_edits_atomic_saves_renames_and_deletions(ws, daemons):
    d = daemons(ws, "--debounce-ms", "200")
    d.wait_log(r"synced \(start\)")
    mem_dir = ws / "memory"

    # A plain in-place edit (append).
    with open(mem_dir / "2025-11-03.md", "a", encoding="utf-8") as fh:
        fh.write("\nThe axolotl budget was approved.\n")
    wait_until(lambda: hits(ws, "axolotl") == ["memory/2025-11-03.md"])

    # An editor's atomic save: write a temp file beside it, then rename over the original.
    target = mem_dir / "2025-11-04.md"
    tmp = mem_dir / ".2025-11-04.md.swp"
    tmp.write_text(target.read_text(encoding="utf-8") + "\nPangolin migration is done.\n")
    os.replace(tmp, target)
    wait_until(lambda: hits(ws, "pangolin") == ["memory/2025-11-04.md"])

    # A rename: the old path disappears from results, the new one answers.
    os.rename(mem_dir / "2025-11-04.md", mem_dir / "2025-11-09.md")
    wait_until(lambda: hits(ws, "pangolin") == ["memory/2025-11-09.md"])

    # A deletion.
    (mem_dir / "2025-11-03.md").unlink()
    wait_until(lambda: hits(ws, "axolotl") == [])

    # A new folder with a file in it (bank/ is watched recursively).
    (ws / "bank" / "projects").mkdir()
    (ws / "bank" / "projects" / "okapi.md").write_text("# Okapi\n\nThe okapi service.\n")
    wait_until(lambda: hits(ws, "okapi") == ["bank/projects/okapi.md"])

    # Files that are not memory files never cause a sync. (The daemon logs a sync after its
    # commit, which the hits above may already see: count once its log has been quiet a moment.)
    n = settled_syncs(d)
    (ws / "notes.txt").write_text("not memory\n")
    (mem_dir / "draft.txt").write_text("not markdown\n")
    time.sleep(0.8)
    assert len(d.syncs()) == n
    assert d.stop() == 0
    assert "Traceback" not in d.log


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=ws,
        check=True,
        capture_output=True,
    )


def test_a_git_checkout_of_hundreds_of_files_gives_one_sync(ws, daemons):
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "base")
    _git(ws, "checkout", "-q", "-b", "burst")
    for i in range(300):
        (ws / "memory" / "burst").mkdir(exist_ok=True)
        (ws / "memory" / "burst" / f"note-{i:03}.md").write_text(f"# Note {i}\n\nburstword{i}\n")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "300 files")
    _git(ws, "checkout", "-q", "main")

    d = daemons(ws, "--debounce-ms", "700")
    d.wait_log(r"synced \(start\)")
    base = len(d.syncs())
    _git(ws, "checkout", "-q", "burst")
    wait_until(lambda: hits(ws, "burstword299") == ["memory/burst/note-299.md"], timeout=10)
    time.sleep(1.0)  # anything still queued would show up as a second sync now
    after_checkout = d.syncs()[base:]
    assert len(after_checkout) == 1, after_checkout
    assert "300 file(s) indexed" in after_checkout[0]

    _git(ws, "checkout", "-q", "main")
    wait_until(lambda: hits(ws, "burstword5") == [], timeout=10)
    time.sleep(1.0)
    back = d.syncs()[base + 1 :]
    assert len(back) == 1 and "300 removed" in back[0], back
    assert d.stop() == 0


def test_refuses_to_start_twice_on_one_workspace(ws, daemons):
    d = daemons(ws)
    d.wait_log(r"watching ")
    second = subprocess.run(
        [sys.executable, "-m", "clawmem", "--workspace", str(ws), "watch"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 8  # LockedError
    assert second.stderr.startswith(f"clawmem: error: {ws}: already watched by pid {d.proc.pid}")
    assert "hint:" in second.stderr
    assert d.proc.poll() is None  # the first one is unaffected
    assert d.stop() == 0


def test_a_lock_left_by_a_killed_daemon_is_taken_over(ws, daemons):
    first = daemons(ws)
    first.wait_log(r"synced \(start\)")
    first.stop(signal.SIGKILL)
    owner = ws / ".memory" / "watch.lock.owner"
    assert owner.read_text() == f"pid {first.proc.pid} (clawmem watch)\n"  # stale: a dead process
    assert status(ws)["watcher"].startswith("not running")

    second = daemons(ws)
    second.wait_log(rf"took over the watch lock of pid {first.proc.pid}")
    second.wait_log(r"synced \(start\)")
    assert owner.read_text() == f"pid {second.proc.pid} (clawmem watch)\n"
    assert status(ws)["watcher"].startswith(f"running (pid {second.proc.pid}), last sync ")
    assert second.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stops_cleanly_on_sigterm_and_ctrl_c(ws, daemons, sig):
    d = daemons(ws)
    d.wait_log(r"synced \(start\)")
    t0 = time.monotonic()
    assert d.stop(sig) == 0
    assert time.monotonic() - t0 < 3.0
    assert re.search(rf"stopped \({sig.name}\) after 1 sync\(s\)", d.log)
    assert "Traceback" not in d.log
    assert (ws / ".memory" / "watch.lock.owner").read_text() == ""  # released, not naming us
    s = status(ws)["watcher"]
    assert s.startswith("not running (last sync ") and str(d.proc.pid) in s


def test_status_shows_the_running_watcher_and_its_last_sync(ws, daemons):
    assert status(ws)["watcher"] == "not running"  # none ever ran here
    d = daemons(ws)
    d.wait_log(r"synced \(start\)")
    s = status(ws)
    assert re.fullmatch(rf"running \(pid {d.proc.pid}\), last sync \d\d:\d\d:\d\d", s["watcher"])
    human = cli_subprocess("--workspace", str(ws), "status").out
    assert f"watcher     running (pid {d.proc.pid})" in human
    assert d.stop() == 0


def test_the_log_is_readable(ws, daemons):
    d = daemons(ws, "--debounce-ms", "200")
    d.wait_log(r"synced \(start\)")
    (ws / "memory" / "2025-12-02.md").write_text("# x\n\nnew\n")
    d.wait_log(r"synced \(\d+ file event\(s\)\)")
    assert d.stop() == 0
    lines = d.log.splitlines()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
    assert all(re.match(stamp, line) for line in lines), lines
    assert re.search(stamp + rf"watching {re.escape(str(ws))} \(debounce 200 ms", d.log)
    sync = [line for line in lines if "event(s)" in line][0]
    assert re.search(r"1 file\(s\) indexed, \d+ chunks\+facts in \d+\.\d\d s$", sync), sync


# --------------------------------------------------------------------------- missed events
def test_the_stat_scan_catches_changes_without_file_events(ws, daemons):
    # --poll: no file events at all (a network file system); only the periodic stat scan.
    d = daemons(ws, "--poll", "--reconcile-seconds", "1")
    d.wait_log(r"synced \(start\)")
    t0 = time.monotonic()
    (ws / "memory" / "2025-12-03.md").write_text("# x\n\nThe narwhal memo.\n")
    # The watcher's scan first: a recall before it would sync the file itself (its own stat
    # scan), leaving the watcher nothing to find.
    d.wait_log(r"stat scan: 1 file\(s\) differ from the index", timeout=6)
    wait_until(lambda: hits(ws, "narwhal") == ["memory/2025-12-03.md"], timeout=6)
    assert time.monotonic() - t0 < 4.0
    assert "stat scan: 1 file(s) differ from the index" in d.log
    assert d.stop() == 0


def test_a_dead_file_watcher_is_noticed_restarted_and_reconciled(ws):
    """In-process, so the test can break the observer thread the way a lost inotify fd would."""
    from clawmem.ingest.watch import Watcher

    mem = open_workspace(ws)
    lines: list[str] = []
    w = Watcher(mem.indexer, debounce_s=0.1, reconcile_s=0.5, log=lines.append)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        wait_until(lambda: any("synced (start)" in x for x in lines))
        dead = w.observer
        dead.stop()  # events stop arriving; nothing tells the loop
        dead.join()
        (ws / "memory" / "2025-12-04.md").write_text("# x\n\nThe tapir ledger.\n")
        wait_until(lambda: hits(ws, "tapir") == ["memory/2025-12-04.md"], timeout=5)
        # The journal's own inotify events can bring the file in before the next health check
        # (every reconcile period) notices the dead observer: wait for that check, not a race.
        wait_until(lambda: any("the file watcher stopped; restarting it" in x for x in lines), 5)
        assert w.observer is not None and w.observer is not dead and w.observer.is_alive()
        # ... and the restarted watcher delivers events again.
        (ws / "memory" / "2025-12-05.md").write_text("# x\n\nThe ocelot plan.\n")
        wait_until(lambda: hits(ws, "ocelot") == ["memory/2025-12-05.md"], timeout=5)
    finally:
        w.request_stop()
        t.join(10)
    assert not t.is_alive()


def test_waits_for_another_writer_instead_of_crashing(ws, daemons):
    d = daemons(ws, "--debounce-ms", "100")
    d.wait_log(r"synced \(start\)")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from clawmem.files.locking import write_lock\n"
            "with write_lock(Path(sys.argv[1]), purpose='test holder'):\n"
            "    print('locked', flush=True); time.sleep(2.5)",
            str(ws / ".memory"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    (ws / "memory" / "2025-12-06.md").write_text("# x\n\nThe wombat audit.\n")
    d.wait_log(rf"waiting: .*being written by pid {holder.pid} \(test holder\)", timeout=10)
    assert hits(ws, "wombat") == []
    holder.wait(10)
    wait_until(lambda: hits(ws, "wombat") == ["memory/2025-12-06.md"], timeout=10)
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_a_failing_sync_is_logged_and_retried(ws, daemons):
    d = daemons(ws, "--debounce-ms", "100", "--reconcile-seconds", "1")
    d.wait_log(r"synced \(start\)")
    # Make the index path a directory: every write fails until it is put back.
    index = ws / ".memory" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.mkdir()
    (ws / "memory" / "2025-12-07.md").write_text("# x\n\nThe gecko file.\n")
    d.wait_log(r"error: sync failed: ", timeout=10)
    watcher = status(ws)["watcher"]
    assert "running (pid" in watcher and "last attempt failed" in watcher, watcher
    index.rmdir()
    wait_until(
        lambda: (
            (ws / ".memory" / "index.sqlite").is_file()
            and hits(ws, "gecko") == ["memory/2025-12-07.md"]
        ),
        timeout=15,
    )
    assert d.proc.poll() is None
    assert d.stop() == 0


# --------------------------------------------------------------------------- vectors
def test_watch_embeds_new_chunks(tmp_path, monkeypatch, daemons):
    from clawmem.embedders.default import default_model_available

    ok, why = default_model_available()
    if not ok:
        pytest.skip(why)
    monkeypatch.delenv("CLAWMEM_VECTORS")
    ws = tmp_path / "small"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Core\n\nPeter likes short replies.\n")
    d = daemons(ws, "--debounce-ms", "200")
    d.wait_log(r"synced \(start\)", timeout=120)  # may convert the model on first use
    (ws / "memory" / "2025-12-08.md").write_text("# x\n\nThe cat sat on the warm laptop.\n")
    d.wait_log(r"synced \(\d+ file event\(s\)\).*vector\(s\) embedded", timeout=30)
    s = status(ws)
    assert s["vectors"]["pending"] == 0 and s["vectors"]["indexed"] >= 2
    res = open_workspace(ws).recall("feline", mode="vector", k=1, sync=False).to_dict()
    assert res["results"], res
    assert res["results"][0]["path"] == "memory/2025-12-08.md"
    assert d.stop() == 0


# --------------------------------------------------------------------------- without a daemon
CHANGES = ["append", "same-size edit", "new file", "delete", "rename", "new folder", "touch only"]


def _change(ws: Path, change: str) -> None:
    p = ws / "memory" / "2025-11-05.md"
    text = p.read_text(encoding="utf-8")
    if change == "append":
        p.write_text(text + "\nmore\n", encoding="utf-8")
    elif change == "same-size edit":
        p.write_text(text.replace("a", "b", 1), encoding="utf-8")
        assert p.stat().st_size == len(text.encode())
    elif change == "new file":
        (ws / "bank" / "entities" / "Zoe.md").write_text("# Zoe\n")
    elif change == "delete":
        p.unlink()
    elif change == "rename":
        p.rename(ws / "memory" / "2025-11-15.md")
    elif change == "new folder":
        (ws / "memory" / "2024").mkdir()
        (ws / "memory" / "2024" / "2024-01-01.md").write_text("# old\n")
    elif change == "touch only":
        os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10**9))


def test_status_never_says_clean_when_files_differ(ws, tmp_path):
    import shutil

    for n, change in enumerate(CHANGES):
        w = tmp_path / f"case{n}"
        shutil.copytree(ws, w)
        assert cli("--workspace", str(w), "index", "--quiet").code == 0
        assert status(w)["clean"] is True
        _change(w, change)
        s = status(w)
        # Even a touch that changed no byte says stale: status only trusts what it can prove.
        assert s["clean"] is False and s["state"].startswith("stale: "), (change, s["state"])
        changed = s["changed_on_disk"]
        assert changed["added"] or changed["modified"] or changed["deleted"], change
        # A read syncs first (lazy sync), after which status is clean again.
        r = cli("--workspace", str(w), "recall", "Peter", "--json")
        assert r.code == 0, r.err
        assert status(w)["clean"] is True, change


def test_recall_answers_a_fresh_edit_without_any_index_command(ws):
    r = cli_subprocess("--workspace", str(ws), "index", "--quiet")
    assert r.code == 0, r.err
    (ws / "memory" / "2025-11-06.md").write_text("# x\n\nThe ibex contract was signed.\n")
    res = json.loads(cli_subprocess("--workspace", str(ws), "recall", "ibex", "--json").out)
    assert [h["path"] for h in res["results"]] == ["memory/2025-11-06.md"]
    assert any("synced 1 changed file(s) first" in n for n in res["notes"])
    assert res["index"]["stale_files"] == 0


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_watcher_whose_workspace_is_removed_or_replaced_stops(ws, daemons, how):
    """A watcher outlived its workspace: `rm -rf` of the folder left it running for ever, and its
    next state write (write_atomic makes the folders it writes in) brought the folder back with a
    fresh, empty index. It stops within a few seconds, exit 3 with one line naming the folder,
    and writes nothing there."""
    d = daemons(ws, "--debounce-ms", "100")
    d.wait_log(r"synced \(start\)")
    if how == "removed":
        shutil.rmtree(ws)
    else:
        ws.rename(ws.with_name("moved"))
        ws.mkdir()  # another folder of that name: not the one watched
    assert d.proc.wait(15) == 3
    lines = [line for line in d.log.splitlines() if line.startswith("clawmem: error:")]
    # Replaced: the watcher may look between the rename and the mkdir, and see it removed.
    said = "removed" if how == "removed" else "(removed|replaced by another folder)"
    assert len(lines) == 1 and re.fullmatch(
        rf"clawmem: error: {re.escape(str(ws))}: the workspace folder was {said}; "
        "the watcher stopped",
        lines[0],
    ), d.log
    time.sleep(1.0)
    assert not ws.exists() if how == "removed" else list(ws.iterdir()) == []


def _watched_inodes(pid: int) -> set[int]:
    """The inodes a process's inotify descriptors watch (Linux: fdinfo's "inotify wd:… ino:…")."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            text = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        found |= {int(m, 16) for m in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", text, re.M)}
    return found


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="reads inotify in /proc")
def test_a_memory_folder_linked_out_of_the_workspace_is_not_watched(ws, daemons, tmp_path):
    """A cloned repository may commit `memory` as a link to `/`: watch put a recursive inotify
    watch on every folder there (listing them all, and using up the user's inotify watches).
    It watches nothing through a link out of the workspace."""
    outside = tmp_path / "elsewhere"
    (outside / "deep" / "deeper").mkdir(parents=True)
    shutil.rmtree(ws / "memory")
    (ws / "memory").symlink_to(outside, target_is_directory=True)
    d = daemons(ws)
    # Its first sync comes after every watch is placed (a fixed sleep after "watching" saw none
    # yet on a loaded machine, or only the root's: the checks below would then pass on no watch).
    d.wait_log(r"synced \(start\)", timeout=60)
    watched = _watched_inodes(d.proc.pid)
    assert watched, "the watch has no inotify watch at all: the test would not see one"
    for folder in (outside, outside / "deep", outside / "deep" / "deeper"):
        assert folder.stat().st_ino not in watched, folder
    assert ws.stat().st_ino in watched
