"""Measurements that need a fresh process (cold start, peak memory): run as
``python -m benchmarks.suites.child '{"op": "index", ...}'``; prints one JSON line.

ops:
* ``index``: delete ``.memory``, then ``Memory.index()`` with ``embed`` = ``none`` (lexical only),
  ``real`` (clawmem's embedder, timed from the inside) or ``stub`` (vectors made from a file of real
  vectors, see ``StubEmbedder``). Reports wall seconds, seconds spent inside the embedder, the
  index report, database bytes, and peak RSS (``ru_maxrss``) of this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import sqlite3

    from clawmem.embedders.base import Embedder, EmbedderIdentity, EmbedResult


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent in ``embed_documents``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.model_path = inner.model_path
        self.max_tokens = inner.max_tokens
        self.seconds = 0.0
        self.calls = 0
        self.texts = 0

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - t0
            self.calls += 1
            self.texts += len(texts)

    def embed_query(self, text: str) -> np.ndarray | None:
        return self.inner.embed_query(text)

    def close(self) -> None:
        self.inner.close()


class StubEmbedder:
    """Stands in for the model when filling 10k–100k synthetic chunks with vectors.

    Every text gets a *real* vector of the model (one of a sample of synthetic chunks embedded by
    the real model in the same run), chosen by the text's hash, plus small seeded noise, then
    L2-normalised. It claims the real model's identity so the index is queried with the real model.
    What it does not cost is the model's time: that is measured separately and added as an
    estimate, never reported as measured.
    """

    def __init__(self, identity: EmbedderIdentity, base: np.ndarray, noise: float = 0.05) -> None:
        from clawmem.embedders.base import EmbedResult

        self._result = EmbedResult
        self.identity = identity
        self.model_path = Path("stub")
        self.max_tokens = 512
        self.base = base.astype(np.float32)
        self.noise = noise
        self.seconds = 0.0
        self.texts = 0

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        t0 = time.perf_counter()
        out: list[np.ndarray | None] = []
        for t in texts:
            h = int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
            rng = np.random.default_rng(h)
            noise = np.asarray(rng.normal(0, self.noise, self.base.shape[1]), dtype=np.float32)
            v = self.base[h % len(self.base)] + noise
            out.append(v / np.linalg.norm(v))
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        return self._result(vectors=out, truncated=0)

    def embed_query(
        self, text: str
    ) -> np.ndarray | None:  # pragma: no cover - recall uses the real model
        raise RuntimeError("the stub embedder does not embed queries")

    def close(self) -> None:
        pass


def peak_rss_kb() -> int:
    """Peak resident memory of this process image. ``ru_maxrss`` is not used: on Linux it keeps
    the parent's high-water mark across fork+exec; ``VmHWM`` starts afresh at exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def table_bytes(conn: sqlite3.Connection) -> dict[str, int]:
    """Bytes per table (with its indexes and shadow tables), from SQLite's dbstat, if built in."""
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except Exception:  # noqa: BLE001 - dbstat is optional
        return {}
    groups: dict[str, int] = {}
    for name, size in rows:
        key = name
        for base in ("chunk_vectors", "chunks_fts", "embedding_cache", "chunk_entities", "files"):
            if name.startswith(base) or name == f"sqlite_autoindex_{base}_1":
                key = base
                break
        else:
            if name.startswith("chunks") or name.startswith("sqlite_autoindex_chunks"):
                key = "chunks"
        groups[key] = groups.get(key, 0) + int(size)
    return dict(sorted(groups.items(), key=lambda kv: -kv[1]))


def db_bytes(root: Path) -> int:
    total = 0
    for p in (root / ".memory").glob("index.sqlite*"):
        total += p.stat().st_size
    return total


def op_index(args: dict[str, Any]) -> dict[str, Any]:
    import clawmem
    from clawmem.store import db as cdb

    root = Path(args["workspace"])
    if args.get("fresh", True) and (root / ".memory").exists():
        shutil.rmtree(root / ".memory")
    env = dict(os.environ)
    env["CLAWMEM_VECTORS"] = "0" if args["embed"] == "none" else "1"
    env.pop("CLAWMEM_WORKSPACE", None)
    t_import = time.perf_counter()
    mem = clawmem.open_workspace(root, environ=env)
    timed: TimedEmbedder | StubEmbedder | None = None
    if args["embed"] in ("real", "stub"):
        from clawmem.embedders.model_choice import load_embedder

        real = load_embedder(root, mem.cfg)
        if args["embed"] == "real":
            timed = TimedEmbedder(real)
        else:
            timed = StubEmbedder(real.identity, np.load(args["base_vectors"]))
        mem.reconfigure(mem.cfg, embedder=timed)  # the harness's embedder; index() unchanged
    load_s = time.perf_counter() - t_import
    prof = None
    if args.get("profile"):
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    rep = mem.index(embed=args["embed"] != "none")
    wall = time.perf_counter() - t0
    profile_text = None
    if prof is not None:
        import io
        import pstats

        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
        profile_text = "\n".join(ln for ln in buf.getvalue().splitlines() if ln.strip())
    # Checkpoint so the file size on disk is the size of the data (not data + WAL).
    conn, _ = cdb.connect(root / ".memory" / "index.sqlite")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    counts = {
        "chunks": conn.execute("SELECT count(*) FROM chunks WHERE kind IS NULL").fetchone()[0],
        "facts": conn.execute("SELECT count(*) FROM chunks WHERE kind IS NOT NULL").fetchone()[0],
        "vectors": conn.execute("SELECT count(*) FROM chunks WHERE embedded = 1").fetchone()[0],
        "cache_entries": conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0],
    }
    tables = table_bytes(conn)
    conn.close()
    return {
        "op": "index",
        "embed": args["embed"],
        "wall_seconds": wall,
        "setup_seconds": load_s,
        "embed_seconds": timed.seconds if timed is not None else 0.0,
        "embedded_texts": timed.texts if timed is not None else 0,
        "report": rep.to_dict(),
        "counts": counts,
        "db_bytes": db_bytes(root),
        "table_bytes": tables,
        "maxrss_kb": peak_rss_kb(),
        "profile": profile_text,
    }


def main() -> None:
    args = json.loads(sys.argv[1])
    ops = {"index": op_index}
    out = ops[args["op"]](args)
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
