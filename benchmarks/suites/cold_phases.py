"""Where one cold ``clawmem recall`` spends its time: ``python -m benchmarks.suites.cold_phases
-w WORKSPACE recall QUERY --json`` runs the real command in this process, timing its phases, and
writes them to stderr as one JSON line (``benchmarks/suites/scale.py``'s cold processes).

Phases (wall and this thread's CPU, ms): the imports of the CLI and the recall modules; the
freshness check with the opening of the index (``Indexer.sync_for_read``: a ``stat`` per file
unless a watcher vouches); the lexical leg (NumPy's import and the terms' lists at 1M); the
vector leg's remote part (``legs.stored_leg``: the resident embedder's scan, a round trip);
the whole recall (``pipeline.recall``); the process until exit (``total``, from this module's
first line: the interpreter's own start is not in it)."""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import atexit  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

marks: dict[str, list[float]] = {}


def _timed(owner: Any, name: str, label: str) -> None:
    fn: Callable[..., Any] = getattr(owner, name)

    def timed(*a: Any, **k: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            m = marks.setdefault(label, [0.0, 0.0])
            m[0] += (time.perf_counter() - t) * 1000
            m[1] += (time.thread_time() - c) * 1000

    setattr(owner, name, timed)


def _report() -> None:
    t = os.times()
    out = {k: {"wall_ms": v[0], "cpu_ms": v[1]} for k, v in marks.items()}
    out["total"] = {
        "wall_ms": (time.perf_counter() - _T0) * 1000,
        "cpu_ms": (t.user + t.system) * 1000,
    }
    sys.stderr.write("PHASES " + json.dumps(out) + "\n")


def main() -> None:
    t, c = time.perf_counter(), time.thread_time()
    from clawmem.cli import app
    from clawmem.ingest import indexing
    from clawmem.recall import legs, pipeline

    marks["imports"] = [(time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000]
    _timed(indexing.Indexer, "sync_for_read", "freshness")
    _timed(legs, "lexical_leg", "lexical")
    _timed(legs, "stored_leg", "vector_remote")
    _timed(pipeline, "recall", "recall")
    atexit.register(_report)
    sys.argv = ["clawmem", *sys.argv[1:]]
    app.main()


if __name__ == "__main__":
    main()
