"""clawmem as the suites and the fitting use it: a workspace opened with the harness's one loaded
model, indexed with progress in the log, and the rows of relevance measures (``metrics``: trust)
from its first hits."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.common import log
from benchmarks.metrics import gold_lines, is_evidence

if TYPE_CHECKING:
    from benchmarks.datasets.realtalk import Chat
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

DEPTH = 10  # = clawmem.recall.pipeline.ABSTAIN_DEPTH: the hits abstention looks at


def open_clawmem(root: Path, vectors: bool, embedder: Embedder | None = None) -> Memory:
    """clawmem on ``root`` with the workspace's defaults; ``embedder`` (the harness's one loaded
    model) is shared between workspaces instead of loading the same model again for each."""
    import clawmem

    env = dict(os.environ)
    env["CLAWMEM_VECTORS"] = "1" if vectors else "0"
    env.pop("CLAWMEM_WORKSPACE", None)
    return clawmem.open_workspace(root, environ=env, embedder=embedder if vectors else None)


def index_clawmem(mem: Memory, label: str) -> dict:
    t0 = time.perf_counter()
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 20 and total:
            last[0] = time.perf_counter()
            log(f"{label}: {stage} {done}/{total}")

    rep = mem.index(progress=progress)
    d = rep.to_dict()
    d["wall_seconds"] = time.perf_counter() - t0
    log(
        f"{label}: indexed in {d['wall_seconds']:.1f}s (embedded {d['vectors_embedded']}, "
        f"reused {d['vectors_reused']}, pending {d['vectors_pending']})"
    )
    return d


def open_with(root: Path, emb: Embedder | None) -> Memory:
    """clawmem on ``root`` with the vector leg when ``emb`` (a loaded model) is given."""
    return open_clawmem(root, vectors=emb is not None, embedder=emb)


def default_threshold(mem: Memory) -> float:
    """The threshold a recall with the workspace's defaults applies: ``min_relevance`` when it is
    set, else the fitted model's own (what a user of this workspace gets)."""
    return mem.recall("a question about a trip", k=1, sync=False).relevance["threshold"]


def rows_of(
    mem: Memory, chat: Chat, questions: list[dict], kind: str, mode: str = "hybrid"
) -> list[dict]:
    """One row per question: its kind (own/foreign) and its first DEPTH hits' features and labels."""
    out = []
    for q in questions:
        res = mem.recall(
            q["question"], k=DEPTH, mode=mode, today=chat.today, sync=False, min_relevance=0.0
        )
        gold = gold_lines(q) if kind == "own" else set()
        out.append(
            {
                "chat": chat.number,
                "kind": kind,
                "category": q.get("category"),
                "hits": [
                    {
                        "features": h.features.to_dict() if h.features is not None else None,
                        "relevance": h.relevance,
                        "evidence": is_evidence(h, gold),
                    }
                    for h in res.hits
                ],
            }
        )
    return out
