"""Fitting and checking recall's relevance (``clawmem.recall.relevance``) on tuning data.

``python -m benchmarks.relevance`` indexes REALTALK's tuning chats (1-5), asks each its own
questions, the questions of the next tuning chat (``foreign``: about other people's lives, so
no hit is evidence) and the same questions with that chat's people renamed to this one's
(``near_miss``: the memory's own people, events that are not there; never evidence); the mixed
workspaces' tuning part (``benchmarks.suites.mixed``, chats 1 and 3: daily logs, notes, facts,
tasks, links, transcripts, a read scope and reflect's pages, with their answerable, unanswerable
and near-miss questions); and SciFact's training claims over its whole corpus (every claim has its
evidence there: a second kind of memory, where a claim often writes a gene or a measure otherwise
than its abstract). It fits a logistic model of "this hit is evidence" on the features of the
first ``DEPTH`` hits of every question, once with the vector leg (per embedding model, on all of
these) and once lexical only (REALTALK's own and next-chat questions and SciFact: ``LEXICAL_FEATURES``
says why), and prints the coefficients as the Python to paste into
``clawmem/recall/relevance.py`` and the threshold that keeps ``OWN_ANSWERED`` of each tuning set's
answerable questions answered. REALTALK's chats 6-10, the mixed workspaces' chats 7 and 8 and
SciFact's test claims are never read here; the suites ``realtalk``, ``mixed`` and ``quality``
report on them with the fitted numbers. SciFact's whole corpus is indexed once into
bench-results/work/scifact-full (the same index ``python -m benchmarks --full`` uses; embedding
it takes about 40 minutes on two idle cores).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder

from benchmarks.common import embedder_status, log
from benchmarks.datasets.realtalk import TUNE, foreign_of
from benchmarks.fitting.chats import indexed_chats
from benchmarks.metrics import abstention, best_relevance, calibration
from benchmarks.systems.clawmem import DEPTH, index_clawmem, open_clawmem, rows_of

# The features in the order of the fitted weights (log_rank stands for log of the hit's place).
FEATURES = (
    "coverage",
    "bm25",
    "cosine",
    "log_rank",
    "unseen",
    "unknown_names",
    "top_cosine",
    "unknown_proper",
    "speakers",
)
# The lexical model reads no unit's speakers and is fitted on REALTALK's own and next-chat
# questions and SciFact only (lexical-v4): with the near misses and the mixed workspaces added,
# its threshold for 99.5% of own questions answered fell to 0 (it would never abstain).
LEXICAL_FEATURES = ("coverage", "bm25", "log_rank", "unseen", "unknown_names", "unknown_proper")
# The threshold keeps this share of the tuning chats' own questions answered (one in 200 refused:
# the held-out chats refuse more than the tuning chats, which the fit has seen), rounded down to
# two decimals, a number a person can read and set.
OWN_ANSWERED = 0.995
# of the models printed (v2 was tried and not kept: benchmarks/analysis.md)
VERSION = "v5"
LEXICAL_VERSION = "v4"


def collect_scifact(emb: Embedder | None, mode: str = "hybrid") -> list[dict]:
    """One row per SciFact training claim over the whole corpus: its first DEPTH hits' features,
    a hit being evidence when its abstract is one of the claim's."""
    from benchmarks.common import WORK
    from benchmarks.datasets.workspaces import build_scifact, load_scifact

    corpus, queries, qrels = load_scifact("train")
    root = build_scifact(WORK / "work" / "scifact-full", corpus, sorted(corpus))
    mem = open_clawmem(root, vectors=True, embedder=emb)
    index_clawmem(mem, "scifact-full")
    out = []
    for qid in sorted(qrels, key=int):
        res = mem.recall(queries[qid], k=DEPTH, mode=mode, sync=False, min_relevance=0.0)
        out.append(
            {
                "chat": "scifact",
                "kind": "own",
                "category": None,
                "hits": [
                    {
                        "features": h.features.to_dict() if h.features is not None else None,
                        "relevance": h.relevance,
                        "evidence": h.path.rsplit("/", 1)[-1].removesuffix(".md") in qrels[qid],
                    }
                    for h in res.hits
                ],
            }
        )
    log(f"relevance: SciFact's {len(out)} training claims ({mode}) collected")
    return out


def collect(
    chats: tuple[int, ...], emb: Embedder | None, mode: str = "hybrid", near: bool = True
) -> list[dict]:
    """Each REALTALK chat's own questions, the next chat's (``foreign``) and, with ``near``, the
    next chat's with this chat's names swapped in (``near_miss``)."""
    from benchmarks.datasets.mixed import load_chat, realtalk_near_miss

    rows: list[dict] = []
    for chat, every, mem in indexed_chats(chats, emb):
        n = chat.number
        rows += rows_of(mem, chat, chat.questions, "own", mode)
        rows += rows_of(mem, chat, every[foreign_of(n)].questions, "foreign", mode)
        if near:
            swapped = realtalk_near_miss(load_chat(n), load_chat(foreign_of(n)))
            rows += rows_of(mem, chat, swapped, "near_miss", mode)
        log(f"relevance: chat {n} ({mode}) collected")
    return rows


def collect_mixed(emb: Embedder | None, mode: str = "hybrid") -> list[dict]:
    """The mixed workspaces' tuning part: every question's first DEPTH hits (own, unanswerable
    and near-miss questions; only an own question's hits can be evidence)."""
    from benchmarks.datasets.mixed import TUNE as MIXED_TUNE
    from benchmarks.suites.mixed import trust_rows

    rows = [r for n in MIXED_TUNE for r in trust_rows(n, emb, mode)]
    log(f"relevance: mixed workspaces {MIXED_TUNE} ({mode}) collected")
    return rows


def design(rows: list[dict], names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for r in rows:
        for h in r["hits"]:
            f = h["features"]
            if f is None:
                continue
            x = {**f, "log_rank": math.log(max(1, f["rank"]))}
            xs.append([1.0, *(x[n] for n in names)])
            ys.append(1.0 if h["evidence"] else 0.0)
    return np.array(xs), np.array(ys)


def fit(rows: list[dict], names: tuple[str, ...], l2: float = 1.0) -> tuple[float, dict]:
    """Logistic regression by Newton's method, a light L2 penalty on the weights (not the
    intercept). Returns (intercept, {feature: weight})."""
    X, y = design(rows, names)
    w = np.zeros(X.shape[1])
    pen = np.r_[0.0, np.full(len(names), l2)]
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-X @ w))
        grad = X.T @ (p - y) + pen * w
        hess = (X * (p * (1 - p))[:, None]).T @ X + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), {n: float(v) for n, v in zip(names, w[1:], strict=True)}


def threshold_for(rows: list[dict], share: float = OWN_ANSWERED) -> float:
    """The largest threshold (rounded down to 2 decimals) that keeps ``share`` of the own
    questions answered."""
    best = sorted(b for r in rows if r["kind"] == "own" and (b := best_relevance(r)) is not None)
    if not best:
        return 0.0
    cut = best[int(math.floor((1.0 - share) * len(best)))]
    return math.floor(cut * 100) / 100


def _as_foreign(rows: list[dict], kind: str) -> list[dict]:
    """``rows``' own questions and those of ``kind`` as foreign ones (``metrics.abstention``
    reads those two kinds)."""
    return [
        {**r, "kind": "foreign"} if r["kind"] == kind else r
        for r in rows
        if r["kind"] in ("own", kind)
    ]


def _code(name: str, intercept: float, weights: dict, threshold: float) -> str:
    body = ", ".join(f'"{k}": {v:.4f}' for k, v in weights.items())
    return f'Model("{name}", {intercept:.4f}, {{{body}}}, threshold={threshold:g})'


def _rescored(rows: list[dict], intercept: float, weights: dict) -> list[dict]:
    """``rows`` with every hit's relevance under the given coefficients (as recall would score
    them once they are pasted in), so the threshold is chosen on the fitted model itself."""
    from clawmem.recall.relevance import Features, Model

    model = Model("fit", intercept, weights)
    for r in rows:
        for h in r["hits"]:
            if h["features"] is not None:
                h["relevance"] = model.probability(Features(**h["features"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.relevance")
    ap.add_argument("--l2", type=float, default=1.0)
    args = ap.parse_args(argv)
    emb, why = embedder_status()
    if emb is None:
        raise SystemExit(f"no embedder: {why}")
    hybrid = collect(TUNE, emb) + collect_mixed(emb)
    lexical = collect(TUNE, emb, mode="lexical", near=False)
    sci_hybrid = collect_scifact(emb)
    sci_lexical = collect_scifact(emb, mode="lexical")
    b0, w = fit(hybrid + sci_hybrid, FEATURES, args.l2)
    l0, lw = fit(lexical + sci_lexical, LEXICAL_FEATURES, args.l2)
    thresholds = {}
    for label, rows, sci, (i, ws) in (
        ("hybrid", hybrid, sci_hybrid, (b0, w)),
        ("lexical", lexical, sci_lexical, (l0, lw)),
    ):
        _rescored(rows + sci, i, ws)
        chats = [r for r in rows if "unit_kind" not in r]
        mixed = [r for r in rows if "unit_kind" in r]
        t = min(threshold_for(part) for part in (chats, mixed, sci) if part)
        thresholds[label] = t
        print(f"# {label}: threshold for {OWN_ANSWERED:.1%} of each set answered: {t}")
        print("#    REALTALK", abstention(chats, t))
        print("#    REALTALK near misses", abstention(_as_foreign(chats, "near_miss"), t))
        if mixed:
            print("#    mixed, unanswerable", abstention(_as_foreign(mixed, "unanswerable"), t))
            print("#    mixed, near misses", abstention(_as_foreign(mixed, "near_miss"), t))
        print("#    SciFact", abstention(sci, t))
        for b in calibration(rows + sci):
            print("#   ", b)
    print(
        "# fitted on REALTALK chats",
        ",".join(map(str, TUNE)),
        "(own, next-chat and, for hybrid, near-miss questions), for hybrid the mixed",
        "workspaces' tuning part, and SciFact's training claims by python -m benchmarks.relevance",
    )
    lexical_code = _code("lexical-" + LEXICAL_VERSION, l0, lw, thresholds["lexical"])
    hybrid_code = _code("hybrid-e5-" + VERSION, b0, w, thresholds["hybrid"])
    print(f"LEXICAL = {lexical_code}")
    print(f'BY_EMBEDDER = {{"{emb.identity.key()}": {hybrid_code}}}')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
