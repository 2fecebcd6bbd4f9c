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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Citation = tuple[str, int, int]


def _gold_lines(alt: dict) -> set[tuple[str, int]]:
    return {(alt["path"], n) for n in range(alt["start"], alt["end"] + 1)}


def lines_read(results: Sequence[Citation], line_len, budget: int) -> set[tuple[str, int]]:
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
    results: Sequence[Citation], gold: list[list[dict]], line_len, budget: int
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


def chars_returned(results: Sequence[Citation], line_len) -> int:
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


def mean(xs) -> float:
    xs = [x for x in xs if not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else float("nan")
