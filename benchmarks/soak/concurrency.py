"""Everything at once, for minutes: writers, a watcher, a reflect, readers, an MCP server.

The workspace is a git repository. Writers: four processes retaining facts (each fact carries a
unique token), an editor rewriting notes (atomic renames and in-place rewrites alternately),
``git checkout -f`` between two branches that differ in a dozen daily logs, ``clawmem reflect``
in a loop, a ``clawmem watch`` daemon, and another program appending a line every 10 ms to the
daily logs the retain processes write (as an editor, an agent's own notes or a script would), and
a logger that keeps one of them open for the whole run, appending 20 lines a second; two of those
logs start with a section after their Retain section (which retain used to rename a new file
over).
Readers: four recall loops (two with the lazy sync)
and an MCP client calling ``memory_search``. Afterwards every fact that ``retain`` returned for is
counted in the Markdown and the index (exactly once each), so is every line the other program
appended (in the Markdown, exactly once: retain must never lose another writer's line), and the
index must equal a rebuild.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .workspace import (
    WORDS,
    child_env,
    clawmem_cmd,
    converges,
    count_fact,
    integrity,
    make_workspace,
    mem,
)


def _git(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True)


def _repo(ws: Path, rnd: random.Random) -> None:
    """Tracked: the 2024 daily logs; branch ``other`` edits ten, deletes three, adds three."""
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "config", "user.email", "soak@example.invalid")
    _git(ws, "config", "user.name", "soak")
    # Written by the soak's own writers: never switched by a checkout.
    (ws / ".git" / "info" / "exclude").write_text(
        ".memory/\nbank/\nMEMORY.md\nmemory/2029-*\nmemory/2030-*\n"
    )
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "main")
    _git(ws, "checkout", "-q", "-b", "other")
    files = sorted((ws / "memory").glob("2024-*.md"))
    for p in rnd.sample(files, 10):
        p.write_text(p.read_text() + f"\nOn the other branch: the {rnd.choice(WORDS)} plan.\n")
    for p in rnd.sample(files, 3):
        p.unlink(missing_ok=True)
    for i in range(3):
        (ws / "memory" / f"2024-12-2{i}.md").write_text(f"# other {i}\n\nBranch-only note.\n")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "other")
    _git(ws, "checkout", "-q", "main")


def _start(kind: str, ws: Path, stop: Path, out: Path, n: int) -> tuple[subprocess.Popen, Path]:
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.soak.workers",
            kind,
            str(ws),
            str(stop),
            str(out),
            str(n),
        ],
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stderr=open(str(out) + ".err", "w"),  # the child owns it
    )
    return p, out


class LockWatch:
    """Who holds the write lock, and for how long: the owner file (``pid N (purpose)``, emptied
    on release) sampled every 5 ms from a thread. Holds shorter than a sample are missed; the
    long ones, which make the waits, are what it is for."""

    def __init__(self, ws: Path, roles: dict[int, str]) -> None:
        self.owner = ws / ".memory" / "write.lock.owner"
        self.roles = roles  # pid -> what that process is in this soak
        self.holds: dict[str, list[float]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _who(self, text: str) -> str:
        words = text.split()
        pid = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        role = self.roles.get(pid) if pid is not None else None
        return role or text.partition("(")[2].rstrip(")") or text

    def _run(self) -> None:
        current, since = "", time.monotonic()
        while not self.stop.is_set():
            try:
                text = self.owner.read_text(encoding="utf-8").strip()
            except OSError:
                text = ""
            now = time.monotonic()
            if text != current:
                if current:
                    self.holds.setdefault(self._who(current), []).append(now - since)
                current, since = text, now
            time.sleep(0.005)

    def figures(self) -> dict:
        out = {}
        for who, h in sorted(self.holds.items(), key=lambda kv: -sum(kv[1])):
            h = sorted(h)
            out[who] = {
                "holds": len(h),
                "total_s": round(sum(h), 1),
                "p50_s": round(h[len(h) // 2], 3),
                "p95_s": round(h[int(len(h) * 0.95)], 3),
                "max_s": round(h[-1], 3),
            }
        return out


def run_concurrency(  # noqa: C901 - the soak steps run in sequence, each checking its own outcome
    work: Path, seconds: float, seed: int, log: Callable[[str], None]
) -> dict[str, Any]:
    rnd = random.Random(seed)
    ws = work / "ws"
    make_workspace(ws, 60, seed=seed)
    _repo(ws, rnd)
    for day in ("2030-01-01", "2030-01-02"):
        (ws / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n## Retain\n- W: the first fact of {day}\n\n## Notes\nwritten by hand\n"
        )
    mem(ws).index()
    stop = work / "stop"
    ops = {"retain": 0, "recall": 0, "mcp_search": 0, "edits": 0, "checkouts": 0, "reflects": 0}
    problems: list[str] = []
    workers = [
        _start("retain", ws, stop, work / f"retain{i}.json", seed * 10 + i) for i in range(4)
    ]
    workers += [_start("recall", ws, stop, work / f"recall{i}.json", i) for i in range(4)]
    workers += [_start("mcp", ws, stop, work / "mcp.json", 0)]
    workers += [_start("append", ws, stop, work / "append.json", seed)]
    workers += [_start("held", ws, stop, work / "held.json", seed)]
    watch_log = open(work / "watch.log", "w")
    watcher = subprocess.Popen(
        clawmem_cmd(ws, "watch", "--debounce-ms", "200", "--reconcile-seconds", "5"),
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stderr=watch_log,
    )
    roles = {p.pid: "retain worker" for p, _ in workers[:4]}
    roles.update({p.pid: "recall with lazy sync" for p, _ in workers[4:8]})
    roles[watcher.pid] = "watch daemon"
    lockwatch = LockWatch(ws, roles)
    lockwatch.thread.start()
    t_end = time.monotonic() + seconds

    def editor() -> None:
        erd = random.Random(seed + 1)
        while time.monotonic() < t_end:
            p = ws / "memory" / f"2029-01-0{erd.randrange(1, 6)}.md"
            text = f"# notes\n\nThe {erd.choice(WORDS)} {erd.choice(WORDS)} edit.\n" * 20
            if erd.random() < 0.5:  # an editor's atomic save
                tmp = p.with_name(f".{p.name}.swp")
                tmp.write_text(text)
                tmp.replace(p)
            else:  # an in-place rewrite
                p.write_text(text)
            ops["edits"] += 1
            time.sleep(erd.uniform(0.05, 0.3))

    def checkouts() -> None:
        branch = "other"
        while time.monotonic() < t_end:
            time.sleep(3)
            r = _git(ws, "checkout", "-q", "-f", branch)
            if r.returncode:
                problems.append(f"git checkout {branch}: {r.stderr.strip()[:200]}")
            ops["checkouts"] += 1
            branch = "main" if branch == "other" else "other"

    def reflects() -> None:
        while time.monotonic() < t_end:
            r = subprocess.run(
                clawmem_cmd(ws, "reflect", "--quiet"),
                capture_output=True,
                text=True,
                env=child_env(),
                stdin=subprocess.DEVNULL,
            )
            if r.returncode != 0:
                problems.append(f"reflect exit {r.returncode}: {r.stderr.strip()[:300]}")
            ops["reflects"] += 1
            time.sleep(2)

    threads = [threading.Thread(target=f) for f in (editor, checkouts, reflects)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.touch()
    lockwatch.stop.set()
    results: dict[str, list[dict]] = {
        "retain": [],
        "recall": [],
        "mcp": [],
        "append": [],
        "held": [],
    }
    for p, out in workers:
        try:
            p.wait(120)
        except subprocess.TimeoutExpired:
            p.kill()
            problems.append(f"{out.name}: did not stop")
            continue
        kind = next(k for k in results if out.name.startswith(k))
        try:
            results[kind].append(json.loads(out.read_text()))
        except (OSError, ValueError):
            err = Path(str(out) + ".err").read_text()[-500:]
            problems.append(f"{out.name}: no figures (exit {p.returncode}): {err}")
    watcher.terminate()
    try:
        watcher.wait(60)
    except subprocess.TimeoutExpired:
        watcher.kill()
        problems.append("the watcher did not stop on SIGTERM")
    watch_log.close()
    watch_text = (work / "watch.log").read_text()
    if "Traceback" in watch_text or watcher.returncode not in (0, None):
        problems.append(f"watcher exit {watcher.returncode}: {watch_text[-400:]}")
    mem(ws).index()
    retained = [t for r in results["retain"] for t in r["retained"]]
    missing = duplicated = 0
    for token in retained:
        md, ix = count_fact(ws, f"{token} about")  # the token, not a longer one
        if md == 0 or ix == 0:
            missing += 1
            problems.append(f"{token}: retained, found {md} time(s) in Markdown, {ix} in the index")
        elif md > 1 or ix > 1:
            duplicated += 1
            problems.append(f"{token}: found {md} time(s) in Markdown, {ix} in the index")
    appended = [t for r in results["append"] for t in r["appended"]]
    logs = "".join(p.read_text(encoding="utf-8") for p in (ws / "memory").glob("2030-01-0*.md"))
    lost_lines = sum(logs.count(f"A note {t} from") != 1 for t in appended)
    if lost_lines:
        problems.append(f"{lost_lines} of {len(appended)} lines another program appended were lost")
    problems += [e for r in results["append"] for e in r["errors"]]
    held = sum(r["held"] for r in results["held"])
    seen = Counter((ws / "memory" / "2030-01-02.md").read_text(encoding="utf-8").splitlines())
    held_lost = sum(
        seen[f"A held note {r['prefix']}{i} from a logger."] != 1
        for r in results["held"]
        for i in range(r["held"])
    )
    if held_lost:
        problems.append(f"{held_lost} of {held} lines of the logger holding the log open were lost")
    problems += [e for r in results["held"] for e in r["errors"]]
    diff = converges(ws, work)
    if diff:
        problems.append(f"after the last sync the index differs from a rebuild: {diff}")
    if integrity(ws) != "ok":
        problems.append("integrity_check failed")
    waits = sorted(w for r in results["retain"] for w in r["lock_waits"])
    ops["retain"] = len(retained)
    ops["recall"] = sum(r["ops"] for r in results["recall"])
    ops["mcp_search"] = sum(r["ops"] for r in results["mcp"])
    if seconds >= 60 and not ops["mcp_search"]:
        problems.append("the MCP client made no call (see mcp-server.log)")
    reader_errors = [e for r in results["recall"] + results["mcp"] for e in r["errors"]]
    writer_errors = [e for r in results["retain"] for e in r["errors"]] + problems
    return {
        "ops": ops,
        "watcher_syncs": watch_text.count(" synced ("),
        "reader_errors": len(reader_errors),
        "writer_errors": len(writer_errors),
        "lock_waits": len(waits),
        "lock_wait_p50_s": round(waits[len(waits) // 2], 3) if waits else None,
        "lock_wait_p95_s": round(waits[int(len(waits) * 0.95)], 3) if waits else None,
        "lock_wait_max_s": round(waits[-1], 3) if waits else None,
        "lock_holders": lockwatch.figures(),
        "facts_retained": len(retained),
        "facts_found": len(retained) - missing - duplicated,
        "facts_missing": missing,
        "facts_duplicated": duplicated,
        "foreign_lines_appended": len(appended),
        "foreign_lines_lost": lost_lines,
        "held_open_lines": held,
        "held_open_lines_lost": held_lost,
        "failures": (reader_errors + writer_errors)[:50],
    }
