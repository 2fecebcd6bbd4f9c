"""Retrieval metrics.

Line-level (agent-memory set). A result is a citation ``(path, start_line, end_line)``; a question's
gold is a list of evidence items, each with alternatives (line ranges), see questions/build.py.

* evidence recall @ budget B characters: walk the ranked results best first and "read" the lines
  each one cites, counting len(line) + 1 characters per line not read before, until B characters
  are spent (a result that does not fit is read up to the budget, line by line). Per item, the
  score is the best fraction of an alternative's lines that were read; the question's score is the
  mean over its items. Averaged over questions.
* recall@k: the fraction of evidence items with an alternative overlapped by one of the first k
  results. MRR: 1 / rank of the first result that overlaps any gold alternative (0 if none in the
  list). Both averaged over questions.

Document-level (SciFact, BEIR): nDCG@10 with the standard log2 discount and graded qrels, and
recall@100, from the ranked list of distinct document ids.

Trust (relevance and abstention): a *row* is one question's first hits, each with the relevance
recall gave it and whether it is evidence, and the question's kind (``own``: asked of the memory
that holds its answer; ``foreign``: asked of one that does not). Calibration compares predicted
relevance with the observed share of evidence per bin; abstention counts the questions answered
at a threshold and how well the best relevance tells own from foreign (AUROC).

Intervals: a mean with its 95% paired percentile bootstrap interval over the questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from clawmem.recall.results import Hit

Citation = tuple[str, int, int]
# The length of line n of a file (without the newline): line_len(path, n).
LineLength = Callable[[str, int], int]


def _gold_lines(alt: dict) -> set[tuple[str, int]]:
    return {(alt["path"], n) for n in range(alt["start"], alt["end"] + 1)}


def lines_read(
    results: Sequence[Citation], line_len: LineLength, budget: int
) -> set[tuple[str, int]]:
    """The (path, line) pairs an agent reads within ``budget`` characters, best result first.
    ``line_len(path, n)`` gives the length of line n of path (without the newline)."""
    read: set[tuple[str, int]] = set()
    spent = 0
    for path, a, b in results:
        for n in range(a, b + 1):
            if (path, n) in read:
                continue
            cost = line_len(path, n) + 1
            if spent + cost > budget:
                return read
            spent += cost
            read.add((path, n))
    return read


def evidence_recall(
    results: Sequence[Citation], gold: list[list[dict]], line_len: LineLength, budget: int
) -> float:
    if not gold:
        return float("nan")
    read = lines_read(results, line_len, budget)
    scores = []
    for item in gold:
        best = 0.0
        for alt in item:
            g = _gold_lines(alt)
            best = max(best, len(g & read) / len(g))
        scores.append(best)
    return sum(scores) / len(scores)


def _overlaps(c: Citation, alt: dict) -> bool:
    return c[0] == alt["path"] and not (c[2] < alt["start"] or c[1] > alt["end"])


def recall_at_k(results: Sequence[Citation], gold: list[list[dict]], k: int) -> float:
    if not gold:
        return float("nan")
    top = list(results[:k])
    found = sum(1 for item in gold if any(_overlaps(c, alt) for c in top for alt in item))
    return found / len(gold)


def reciprocal_rank(results: Sequence[Citation], gold: list[list[dict]]) -> float:
    if not gold:
        return float("nan")
    for rank, c in enumerate(results, 1):
        if any(_overlaps(c, alt) for item in gold for alt in item):
            return 1.0 / rank
    return 0.0


def chars_returned(results: Sequence[Citation], line_len: LineLength) -> int:
    return sum(line_len(p, n) + 1 for p, a, b in results for n in range(a, b + 1))


# --------------------------------------------------------------------------- BEIR-style
def ndcg_at_k(ranked_docs: Sequence[str], qrels: dict[str, int], k: int = 10) -> float:
    dcg = 0.0
    for i, d in enumerate(ranked_docs[:k]):
        rel = qrels.get(d, 0)
        if rel:
            dcg += (2**rel - 1) / math.log2(i + 2)
    ideal = sorted(qrels.values(), reverse=True)[:k]
    idcg = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def doc_recall_at_k(ranked_docs: Sequence[str], qrels: dict[str, int], k: int = 100) -> float:
    rel = {d for d, r in qrels.items() if r > 0}
    if not rel:
        return 0.0
    return len(rel & set(ranked_docs[:k])) / len(rel)


def dedupe_docs(doc_ids: Sequence[str]) -> list[str]:
    """Chunk-level ranking → document ranking: a document ranks where its best chunk does."""
    return list(dict.fromkeys(doc_ids))


def mean(xs: Iterable[float]) -> float:
    xs = [x for x in xs if not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else float("nan")


# ------------------------------------------------------------------------ trust
BINS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def gold_lines(q: dict) -> set[tuple[str, int]]:
    return {
        (g["path"], n) for alts in q["gold"] for g in alts for n in range(g["start"], g["end"] + 1)
    }


def is_evidence(hit: Hit, gold: set[tuple[str, int]]) -> bool:
    return any((hit.path, n) in gold for n in range(hit.start_line, hit.end_line + 1))


def best_relevance(row: dict) -> float | None:
    vals = [h["relevance"] for h in row["hits"] if h["relevance"] is not None]
    return max(vals) if vals else None


def calibration(rows: list[dict], bins: Sequence[float] = BINS) -> list[dict]:
    """Predicted against observed: per relevance bin, the hits in it, their mean relevance and
    the share that are evidence."""
    out = []
    pairs = [
        (h["relevance"], h["evidence"])
        for r in rows
        for h in r["hits"]
        if h["relevance"] is not None
    ]
    for lo, hi in zip(bins[:-1], bins[1:], strict=True):
        inside = [(p, e) for p, e in pairs if lo <= p < hi or (hi == bins[-1] and p == hi)]
        out.append(
            {
                "bin": [lo, hi],
                "n": len(inside),
                "predicted": mean(p for p, _ in inside) if inside else None,
                "observed": mean(1.0 if e else 0.0 for _, e in inside) if inside else None,
            }
        )
    return out


def abstention(rows: list[dict], threshold: float) -> dict:
    """Share of own and foreign questions answered (a best relevance at or above the threshold)
    and how well the best relevance tells them apart (AUROC)."""
    own = [best_relevance(r) or 0.0 for r in rows if r["kind"] == "own"]
    foreign = [best_relevance(r) or 0.0 for r in rows if r["kind"] == "foreign"]
    return {
        "threshold": threshold,
        "own_n": len(own),
        "foreign_n": len(foreign),
        "own_answered": mean(1.0 if b >= threshold else 0.0 for b in own) if own else None,
        "foreign_answered": mean(1.0 if b >= threshold else 0.0 for b in foreign)
        if foreign
        else None,
        "auroc": auroc(own, foreign),
    }


def auroc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    values = np.array(pos + neg)
    ranks = values.argsort(kind="mergesort").argsort() + 1.0
    # ties share their mean rank
    for v in np.unique(values):
        same = values == v
        ranks[same] = ranks[same].mean()
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


# ------------------------------------------------------------------------ intervals
def paired_interval(
    a: list[float], b: list[float] | None = None, *, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """The mean of ``a`` (or of ``a - b``, question by question) with a 95% percentile bootstrap
    interval: the questions are resampled with replacement, the same questions for both systems
    (paired), so the interval shows how much the figure depends on which questions were asked.
    Deterministic (fixed seed), so a re-render gives the same text."""
    x = np.asarray(a, dtype=float) - (np.asarray(b, dtype=float) if b is not None else 0.0)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(x.mean()), float(lo), float(hi)


def interval(m: tuple[float, float, float], signed: bool = False) -> str:
    """A mean and its interval, "0.627 (0.601-0.652)"; a difference signed, "+0.101 (+0.066 to
    +0.135)"."""
    if signed:
        return f"{m[0]:+.3f} ({m[1]:+.3f} to {m[2]:+.3f})"
    return f"{m[0]:.3f} ({m[1]:.3f}-{m[2]:.3f})"
