"""Shared plumbing: paths, timing, the embedder, and a persistent cache of computed vectors."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder

REPO = Path(__file__).resolve().parents[1]
# The evaluation data lives beside the repository (../shared/eval); $CLAWMEM_BENCH_EVAL overrides.
EVAL = Path(os.environ.get("CLAWMEM_BENCH_EVAL", REPO.parent / "shared" / "eval"))
# Everything the harness builds (workspaces, indexes, caches, raw JSON) goes here (git-ignored).
WORK = Path(os.environ.get("CLAWMEM_BENCH_WORK", REPO / "bench-results"))
QUESTIONS = Path(__file__).resolve().parent / "questions"


def log(msg: str) -> None:
    sys.stderr.write(f"[bench {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


@contextmanager
def timer() -> Iterator[Callable[[], float]]:
    """``with timer() as t: ...`` then ``t()`` is the elapsed seconds."""
    t0 = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - t0
    end.append(time.perf_counter())


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank-free linear interpolation percentile (p in [0, 100])."""
    if not values:
        return float("nan")
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine() -> dict:
    try:
        import sqlean

        sqlite_v = sqlean.sqlite_version
    except ImportError:  # pragma: no cover
        sqlite_v = sqlite3.sqlite_version
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "sqlite": sqlite_v,
    }


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- the embedder
_EMBEDDER: list[tuple[Embedder | None, str | None]] = []


def embedder_status() -> tuple[Embedder | None, str | None]:
    """clawmem's default embedder (loaded once), or (None, why it is unavailable)."""
    if _EMBEDDER:
        return _EMBEDDER[0]
    try:
        from clawmem.config import Config
        from clawmem.embedders.model_choice import load_embedder

        # Exactly what a workspace without settings loads: the bundled default model, unless
        # $CLAWMEM_BENCH_MODEL names another GGUF (e.g. to compare models in the same harness).
        other = os.environ.get("CLAWMEM_BENCH_MODEL")
        cfg = Config(model=other) if other else Config()
        _EMBEDDER.append((load_embedder(REPO, cfg), None))
    except Exception as exc:  # noqa: BLE001 - any failure means: report and run lexical only
        _EMBEDDER.append((None, f"{type(exc).__name__}: {exc}"))
    return _EMBEDDER[0]


class VectorCache:
    """Vectors the harness computed itself (baselines, raw throughput), keyed by embedder and text
    hash, persisted in ``bench-results/cache/vectors.sqlite`` so reruns do not embed again.

    clawmem's own vectors are never taken from here: clawmem keeps them in its index (and its
    ``embedding_cache``), which the harness keeps between runs for the same reason.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or WORK / "cache" / "vectors.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors(embedder TEXT, sha256 TEXT, vector BLOB, "
            "PRIMARY KEY(embedder, sha256))"
        )
        self.hits = 0
        self.computed = 0
        self.embed_seconds = 0.0

    def embed(
        self,
        emb: Embedder,
        texts: Sequence[str],
        *,
        batch: int = 32,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts`` (rows L2-normalised float32; zero rows for unembeddable texts)."""
        key = emb.identity.key()
        dims = emb.identity.dims
        out = np.zeros((len(texts), dims), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        hashes = [sha(t) for t in texts]
        for i in range(0, len(texts), 500):
            part = list(dict.fromkeys(hashes[i : i + 500]))
            rows = self.conn.execute(
                f"SELECT sha256, vector FROM vectors WHERE embedder = ? AND sha256 IN "
                f"({','.join('?' * len(part))})",
                (key, *part),
            ).fetchall()
            found = {h: np.frombuffer(v, dtype="<f4") for h, v in rows}
            for j in range(i, min(i + 500, len(texts))):
                v = found.get(hashes[j])
                if v is not None:
                    out[j] = v
                    self.hits += 1
                else:
                    missing.setdefault(hashes[j], []).append(j)
        todo = list(missing)
        for b in range(0, len(todo), batch):
            part = todo[b : b + batch]
            t0 = time.perf_counter()
            res = emb.embed_documents([texts[missing[h][0]] for h in part])
            self.embed_seconds += time.perf_counter() - t0
            with self.conn:
                for h, v in zip(part, res.vectors, strict=True):
                    vec = np.zeros(dims, dtype=np.float32) if v is None else np.asarray(v, "<f4")
                    self.conn.execute(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", (key, h, vec.tobytes())
                    )
                    for j in missing[h]:
                        out[j] = vec
            self.computed += len(part)
            if progress:
                progress(min(b + batch, len(todo)), len(todo))
        return out

    def close(self) -> None:
        self.conn.close()


def save_results(label: str, path: Path, data: dict) -> None:
    """A benchmark's raw results as JSON at ``path`` (its section is rendered from them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    log(f"{label}: results in {path}")


def show_section(label: str, section: str, out: str, heading: str) -> None:
    """A benchmark's section printed (``out`` "-") or written into the report ``out``."""
    if out == "-":
        print(section)
    else:
        replace_section(Path(out), heading, section)
        log(f"{label}: section written to {out}")


def replace_section(path: Path, heading: str, section: str) -> None:
    """Replace (or append) the section of the report ``path`` that starts with ``heading``
    (``## Cold start``) with ``section``: each benchmark writes its own part of
    docs/benchmarks.md and leaves the others as they are."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find(heading + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("\n" + text[end + 1 :] if end >= 0 else "")
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
