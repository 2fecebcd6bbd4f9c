"""Seeded workspaces and the checks every part of the soak runs against them."""

from __future__ import annotations

import datetime
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawmem.memory import open_workspace
from clawmem.store import db

if TYPE_CHECKING:
    from collections.abc import Iterable

    from clawmem.memory import Memory

WORDS = (
    "payment ledger invoice castle marrakech birthday deploy rollback baileys socket whatsapp "
    "summary decision migration postgres sqlite index vector embedding cache review release "
    "hotfix gateway retry timeout budget travel flight hotel dinner garden coffee piano river"
).split()
ENTITIES = ["Peter", "Andy", "Kenji", "Linh", "warelay"]
# Lexical only: the soak exercises storage, locking and recovery, not the model, and a model load
# per killed process would leave a few dozen kills in the time of hundreds.
LEXICAL = {"CLAWMEM_VECTORS": "0"}


def make_workspace(root: Path, n_files: int, *, seed: int = 7, sections: int = 6) -> None:
    """A seeded workspace of ``n_files`` daily logs with headings and Retain facts."""
    rnd = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "bank" / "entities").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# Core\n\n- Peter prefers short replies.\n")
    for e in ENTITIES:
        (root / "bank" / "entities" / f"{e}.md").write_text(f"# {e}\n\nAbout {e}.\n")
    day0 = datetime.date(2024, 1, 1)
    for i in range(n_files):
        day = day0 + datetime.timedelta(days=i)
        lines = [f"# {day.isoformat()}", ""]
        for s in range(sections):
            words = " ".join(rnd.choice(WORDS) for _ in range(50))
            lines += [f"## Topic {s} {rnd.choice(WORDS)}", "", f"{words} marker{i}x{s}.", ""]
        lines.append("## Retain")
        for f in range(3):
            words = " ".join(rnd.choice(WORDS) for _ in range(10))
            lines.append(f"- {rnd.choice('WBO')} @{rnd.choice(ENTITIES)}: {words} fact{i}x{f}.")
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a clawmem child: ours, lexical, and this checkout's clawmem first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
    env.update(LEXICAL)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra or {})
    return env


def clawmem_cmd(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "clawmem", "--workspace", str(ws), *args]


def run(ws: Path, *args: str, timeout: float = 300, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        clawmem_cmd(ws, *args),
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def mem(ws: Path) -> Memory:
    return open_workspace(ws, environ=dict(LEXICAL))


def markdown(ws: Path) -> dict[str, bytes]:
    """Every file outside .memory/ and .git/: what clawmem must leave whole. Not the temporary
    copies of ``write_atomic`` (``.NAME.XXXX.tmp``) or a rewrite's second name of its page
    (``.NAME.XXXX.held``): a kill before the rename leaves one beside the untouched file, and
    ``leftovers`` checks that the next run removes it."""
    out = {}
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws)
        if rel.parts[0] in (".memory", ".git") or not p.is_file() or p.is_symlink():
            continue
        if TEMP.search(p.name):
            continue
        out[rel.as_posix()] = p.read_bytes()
    return out


def digest(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}


def integrity(ws: Path) -> str:
    """``PRAGMA integrity_check`` of the index as a reader finds it now ("ok", or what is wrong)."""
    path = ws / ".memory" / "index.sqlite"
    if not path.exists():
        return "ok"  # killed before its first swap: nothing to be corrupt
    conn, _ = db.connect(path, readonly=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def answers(ws: Path, query: str = "payment ledger") -> bool:
    """The index answers a recall (lexical, without syncing first)."""
    if not (ws / ".memory" / "index.sqlite").exists():
        return True
    return bool(mem(ws).recall(query, mode="lexical", k=3, sync=False).hits)


def index_dump(ws: Path) -> dict:
    """What the index holds, in a form that a clean rebuild must reproduce exactly."""
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        files = _rows(conn.execute("SELECT path, sha256, day, lines, problems FROM files"))
        chunks = _rows(
            conn.execute(
                "SELECT path, start_line, end_line, heading, text, sha256, day, kind, confidence,"
                " valid_from, valid_to, entities FROM chunks"
            )
        )
        ents = _rows(
            conn.execute(
                "SELECT c.path, c.start_line, e.entity FROM chunk_entities e"
                " JOIN chunks c ON c.id = e.chunk_id"
            )
        )
        fts = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    finally:
        conn.close()
    return {"files": files, "chunks": chunks, "entities": ents, "fts_rows": fts}


def files_match(ws: Path) -> str | None:
    """None if the index's files are exactly the Markdown files on disk, with their hashes."""
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        rows = {p: h for p, h in conn.execute("SELECT path, sha256 FROM files")}
    finally:
        conn.close()
    disk = {
        k: v
        for k, v in digest(markdown(ws)).items()
        if k.endswith(".md") and k.split("/")[0] in ("memory", "bank") or k == "MEMORY.md"
    }
    if rows == disk:
        return None
    diff = sorted(k for k in set(rows) | set(disk) if rows.get(k) != disk.get(k))
    return f"files: index and disk differ on {diff[:5]}"


def _rows(cursor: Iterable[Iterable[Any]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in cursor), key=repr)


def converges(ws: Path, scratch: Path) -> str | None:
    """None if the index equals what a clean rebuild of the same Markdown produces, else what
    differs (the caller has synced it first)."""
    fresh = scratch / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(ws, fresh, ignore=shutil.ignore_patterns(".memory", ".git"), symlinks=True)
    mem(fresh).index()
    a, b = index_dump(ws), index_dump(fresh)
    shutil.rmtree(fresh, ignore_errors=True)
    for key in a:
        if a[key] != b[key]:
            only_a = (
                set(map(repr, a[key])) - set(map(repr, b[key])) if key != "fts_rows" else a[key]
            )
            only_b = (
                set(map(repr, b[key])) - set(map(repr, a[key])) if key != "fts_rows" else b[key]
            )
            return f"{key}: index has {str(only_a)[:300]}; a rebuild has {str(only_b)[:300]}"
    return None


# A killed writer's temporary copy (.NAME.XXXX.tmp), a killed rewrite's second name of the page
# (.NAME.XXXX.held, files/rewrite.py), a killed rebuild's index: none may outlive the next run.
TEMP = re.compile(r"^\..+\.(?:tmp|held)$|^index\.sqlite\.rebuild-")


def leftovers(ws: Path) -> list[str]:
    """Temporary files a killed writer may leave; none may survive the next run."""
    return sorted(
        p.relative_to(ws).as_posix()
        for p in ws.rglob("*")
        if ".git" not in p.relative_to(ws).parts and TEMP.search(p.name)
    )


def count_fact(ws: Path, token: str) -> tuple[int, int]:
    """How often the fact carrying ``token`` is in the daily logs' Markdown and in the index."""
    in_md = 0
    for p in (ws / "memory").glob("*.md"):
        in_md += p.read_text(encoding="utf-8", errors="replace").count(token)
    conn, _ = db.connect(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        in_ix = conn.execute(
            "SELECT count(*) FROM chunks WHERE kind IS NOT NULL AND path LIKE 'memory/%'"
            " AND instr(text, ?) > 0",
            (token,),
        ).fetchone()[0]
    finally:
        conn.close()
    return in_md, in_ix
