"""Named, versioned ways of combining the lexical and vector legs.

The name (with its version) is reported in every result so a change to ranking is visible in
results and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass

RRF = "rrf-v1"
WEIGHTED = "weighted-v1"


@dataclass(frozen=True)
class LegHit:
    chunk_id: int
    rank: int  # 1-based within its leg
    score: float  # lexical: normalised BM25 in (0, 1); vector: cosine similarity in [-1, 1]


def bm25_to_unit(bm25: float) -> float:
    """FTS5's bm25() is *negative* (more negative = better). Map it to (0, 1), monotonically.

    OpenClaw mapped rank r to 1/(1+max(0, r)); r is always negative, so every hit scored 1.0 and
    keyword-only hits could never pass its minimum score. Here x = -bm25 >= 0 and x/(1+x) keeps
    the order and never saturates at a constant.
    """
    x = max(0.0, -bm25)
    return x / (1.0 + x)


def rrf(
    lexical: list[LegHit], vector: list[LegHit], k: int = 60, lexical_weight: float = 1.0
) -> dict[int, float]:
    """Reciprocal rank fusion (Cormack et al., 2009): sum of w/(k + rank) over the legs.

    The lexical leg counts half when it had to be relaxed (no text had every query term): a
    document matching one stray word of a question is weak evidence next to a close vector."""
    scores: dict[int, float] = {}
    for leg, w in ((lexical, lexical_weight), (vector, 1.0)):
        for h in leg:
            scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w / (k + h.rank)
    return scores


def weighted(
    lexical: list[LegHit], vector: list[LegHit], w_vector: float = 0.7, w_text: float = 0.3
) -> dict[int, float]:
    """OpenClaw's classic 0.7·vector + 0.3·text sum, kept for comparison (with a correct text score)."""
    scores: dict[int, float] = {}
    for h in vector:
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w_vector * max(0.0, h.score)
    for h in lexical:
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w_text * h.score
    return scores
