"""The systems under test, behind one interface:
``search(query, k, today) -> [(path, start, end)]``.

* ``clawmem-hybrid|lexical|vector``: ``Memory.recall`` in-process (no sync per query);
* ``bm25``: plain BM25 (FTS5 ``bm25()``, k1 = 1.2, b = 0.75, ``unicode61 remove_diacritics 2``,
  no stemming, any-term query) over clawmem's own chunks;
* ``vector``: exact cosine over clawmem's own chunk vectors (same chunks, same embedder);
* ``openclaw``: the classic OpenClaw algorithm (benchmarks/systems/openclaw.py): its own chunks and index,
  clawmem's embedder;
* ``qmd``: the QMD CLI's BM25 ``search`` (a cold process per query), when installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchmarks.common import WORK, VectorCache, log
from benchmarks.systems.openclaw import OpenClawIndex

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

try:
    import sqlean as sqlite
except ImportError:  # pragma: no cover
    import sqlite3 as sqlite  # type: ignore[no-redef]

Citation = tuple[str, int, int]


@dataclass
class Searcher:
    name: str
    label: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def warm(self, query: str) -> None:
        """One untimed query first: loads models and warms caches, so latencies are steady-state."""
        self.search(query, k=5)
        self.latencies.clear()
        self.errors.clear()

    def search(self, query: str, *, k: int, today: date | None = None) -> list[Citation]:
        t0 = time.perf_counter()
        try:
            out = self._search(query, k=k, today=today)
        except Exception as exc:  # noqa: BLE001 - a failing query is a result, not a crash
            self.errors.append(f"{query[:60]!r}: {type(exc).__name__}: {exc}")
            out = []
        self.latencies.append(time.perf_counter() - t0)
        return out

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        raise NotImplementedError


class ClawmemSearcher(Searcher):
    """clawmem as configured (its relevance threshold included: a question it abstains on
    returns nothing); ``min_relevance=0`` shows every hit, however weak."""

    def __init__(self, mem: Memory, mode: str, min_relevance: float | None = None) -> None:
        name, label = f"clawmem-{mode}", f"clawmem {mode}"
        if min_relevance is not None:
            name += f"-min{min_relevance:g}"
            label += f" (min_relevance {min_relevance:g})"
        super().__init__(name, label)
        self.mem = mem
        self.mode = mode
        self.min_relevance = min_relevance
        self.rankings: dict[str, int] = {}
        self.empty_reasons: dict[str, int] = {}
        self.last_relaxed = False

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        res = self.mem.recall(
            query, k=k, mode=self.mode, today=today, sync=False, min_relevance=self.min_relevance
        )
        self.last_relaxed = bool(res.relaxed)
        self.rankings[res.ranking] = self.rankings.get(res.ranking, 0) + 1
        if not res.hits and res.empty_reason:
            key = res.empty_reason[:80]
            self.empty_reasons[key] = self.empty_reasons.get(key, 0) + 1
        return [(h.path, h.start_line, h.end_line) for h in res.hits]

    def degraded(self) -> bool:
        """True when a vector/hybrid run never actually used vectors (model missing)."""
        return self.mode != "lexical" and set(self.rankings) <= {"lexical-bm25"}


@dataclass(frozen=True)
class Chunk:
    id: int
    path: str
    start_line: int
    end_line: int
    text: str


def clawmem_chunks(index_path: Path) -> tuple[list[Chunk], np.ndarray | None]:
    """clawmem's plain chunks (not Retain facts) and, if present, their vectors (rows aligned)."""
    from clawmem.store import db

    conn, vec = db.connect(index_path, readonly=True)
    try:
        rows = conn.execute(
            "SELECT id, path, start_line, end_line, text, embedded FROM chunks "
            "WHERE kind IS NULL ORDER BY id"
        ).fetchall()
        chunks = [Chunk(r[0], r[1], r[2], r[3], r[4]) for r in rows]
        vectors = None
        if rows and all(r[5] == 1 for r in rows):
            table = "chunk_vectors" if vec.available else "chunk_vectors_plain"
            got = {}
            for cid, blob in conn.execute(f"SELECT chunk_id, embedding FROM {table}"):
                got[cid] = np.frombuffer(bytes(blob), dtype="<f4")
            if all(c.id in got for c in chunks):
                vectors = np.stack([got[c.id] for c in chunks]).astype(np.float32)
        return chunks, vectors
    finally:
        conn.close()


_WORD = re.compile(r"\w+", re.UNICODE)


class BM25Searcher(Searcher):
    """Textbook BM25 over clawmem's chunks: what a plain SQLite FTS5 index gives."""

    def __init__(
        self, chunks: list[Chunk], name: str = "bm25", label: str = "BM25 (plain FTS5)"
    ) -> None:
        super().__init__(name, label)
        self.chunks = chunks
        self.conn = sqlite.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
        )
        with self.conn:
            self.conn.executemany(
                "INSERT INTO t(rowid, body) VALUES (?, ?)",
                [(i, c.text) for i, c in enumerate(chunks)],
            )

    def ranked(self, query: str, k: int) -> list[int]:
        """Positions in ``chunks``, best first."""
        toks = list(dict.fromkeys(t.lower() for t in _WORD.findall(query)))
        if not toks:
            return []
        expr = " OR ".join('"' + t.replace('"', "") + '"' for t in toks)
        rows = self.conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?", (expr, k)
        ).fetchall()
        return [r[0] for r in rows]

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        return [cite(self.chunks[i]) for i in self.ranked(query, k)]


class VectorSearcher(Searcher):
    def __init__(
        self,
        chunks: list[Chunk],
        vectors: np.ndarray,
        embedder: Embedder,
        name: str = "vector",
        label: str = "vectors alone (exact cosine)",
    ) -> None:
        super().__init__(name, label)
        self.chunks = chunks
        self.vectors = vectors
        self.embedder = embedder

    def ranked(self, query: str, k: int) -> list[int]:
        """Positions in ``chunks``, best first."""
        q = self.embedder.embed_query(query)
        if q is None:
            return []
        sims = self.vectors @ np.asarray(q, dtype=np.float32)
        return [int(i) for i in np.argsort(-sims, kind="stable")[:k]]

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        return [cite(self.chunks[i]) for i in self.ranked(query, k)]


def cite(c: Chunk) -> Citation:
    return (c.path, c.start_line, c.end_line)


class OpenClawSearcher(Searcher):
    def __init__(
        self,
        root: Path,
        embedder: Embedder | None,
        cache: VectorCache | None,
        *,
        uncapped: bool = False,
        index: OpenClawIndex | None = None,
    ) -> None:
        name = "openclaw-uncapped" if uncapped else "openclaw"
        label = (
            "OpenClaw fusion, no cap/threshold"
            if uncapped
            else "OpenClaw classic (6 results, minScore 0.35)"
        )
        super().__init__(name, label)
        self.uncapped = uncapped
        t0 = time.perf_counter()
        self.index = index or OpenClawIndex(root)
        self.index_seconds = time.perf_counter() - t0
        if index is None and embedder is not None and cache is not None:
            texts = [c.text for c in self.index.chunks]
            log(f"openclaw baseline: {len(texts)} chunks to embed (cached vectors reused)")
            vecs = cache.embed(embedder, texts)
            self.index.attach_vectors(embedder, vecs)
        elif index is None:
            self.notes.append("no embedder: keyword leg only (every hit scores 0.3 < 0.35)")

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        if self.uncapped:
            hits = self.index.search(query, max_results=k, min_score=-1.0)
        else:
            hits = self.index.search(query)
        return [(c.path, c.start_line, c.end_line) for c, _ in hits]


# --------------------------------------------------------------------------- QMD
def find_qmd() -> Path | None:
    """The qmd executable: $CLAWMEM_BENCH_QMD, bench-results/qmd/node_modules/.bin, or PATH."""
    env = os.environ.get("CLAWMEM_BENCH_QMD")
    cands = [Path(env)] if env else []
    cands.append(WORK / "qmd" / "node_modules" / ".bin" / "qmd")
    which = shutil.which("qmd")
    if which:
        cands.append(Path(which))
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


class QMD:
    """One QMD index per workspace, with HOME/XDG pointed into bench-results (never ~)."""

    def __init__(self, exe: Path, name: str) -> None:
        self.exe = exe
        self.name = name
        home = WORK / "qmd" / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PATH": f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "NO_COLOR": "1",
        }

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.exe), "--index", self.name, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def db_path(self) -> Path:
        return Path(self.env["XDG_CACHE_HOME"]) / "qmd" / f"{self.name}.sqlite"

    def reset(self) -> None:
        self.run("collection", "remove", self.name, timeout=120)  # its config outlives the database
        for suffix in ("", "-wal", "-shm"):
            p = Path(f"{self.db_path()}{suffix}")
            if p.exists():
                p.unlink()

    def index(self, root: Path) -> float:
        self.reset()
        t0 = time.perf_counter()
        res = self.run("collection", "add", str(root), "--name", self.name, "--mask", "**/*.md")
        secs = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"qmd collection add failed: {res.stderr[-500:]}")
        return secs


_HUNK = re.compile(r"@@ -(\d+),(\d+) @@")


class QMDSearcher(Searcher):
    def __init__(self, qmd: QMD, root: Path) -> None:
        super().__init__("qmd", "QMD search (BM25, CLI)")
        self.qmd = qmd
        # QMD reports lower-cased paths; map them back to the workspace's spelling.
        self.paths = {
            p.relative_to(root).as_posix().lower(): p.relative_to(root).as_posix()
            for p in root.rglob("*.md")
            if ".memory" not in p.parts
        }
        self.no_results = 0

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        res = self.qmd.run("search", "--json", "-n", str(k), query, timeout=120)
        out = res.stdout.strip()
        if not out.startswith("["):
            self.no_results += 1
            return []
        cites = []
        for item in json.loads(out):
            rel = item["file"].split("://", 1)[-1].split("/", 1)[-1]
            path = self.paths.get(rel.lower(), rel)
            m = _HUNK.search(item.get("snippet", ""))
            if m:
                a, n = int(m.group(1)), int(m.group(2))
                cites.append((path, a, max(a, a + n - 1)))
            else:
                cites.append((path, 1, 1))
        return cites
