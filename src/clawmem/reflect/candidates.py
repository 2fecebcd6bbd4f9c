"""Which statements can be similar enough to compare: an index of word sets, so that reflect
compares each fact only with the facts that could supersede it or restate it, not with every
later fact (a committed log of 40,000 facts made `clawmem reflect` run for minutes).

Two filters, both exact (a set they leave out can never pass the test they stand for; the
caller still applies the real rule to what they return, so pages are byte-identical to
comparing every pair):

* **Jaccard ≥ p/q** (``JaccardIndex``). Sets ``a`` and ``b`` reach it only when their sizes are
  within a factor q/p of each other and they share at least ``o = ⌈p(|a|+|b|)/(p+q)⌉`` words
  (from ``q·o ≥ p·(|a|+|b|−o)``). With every set's words in one global order (rarest first), two
  sets sharing ``o`` words share one among the first ``|a|−o+1`` words of ``a`` and the first
  ``|b|−o+1`` of ``b`` (the rarest shared word is there in both): the *prefix filter* of
  similarity joins. Facts made of one common word and one rare one ("lives in Porto", "lives in
  Lima") are then looked up by the rare one only.
* **At least k shared words** (``OverlapIndex``), the same filter with ``o = k``.

Items are ints handed out in increasing order; a query returns those at or above ``lowest``.
Integers only, no floats: ``len(a & b) / len(a | b) >= 0.4`` and ``5·o ≥ 2·u`` agree for every
set size a fact can have.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from fractions import Fraction


def word_rank(sets: Iterable[frozenset[str]]) -> dict[str, int]:
    """Each word's place in the global order: rarest first (ties by the word, for a stable
    order; the order changes only how much is looked at, never what is found)."""
    counts: Counter[str] = Counter()
    for s in sets:
        counts.update(s)
    return {w: i for i, w in enumerate(sorted(counts, key=lambda w: (counts[w], w)))}


class _Prefixes:
    def __init__(self, rank: dict[str, int]) -> None:
        self.rank = rank
        # (group, size, word) -> [(item, position of word in the item's ordered set)]
        self.postings: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
        self.sizes: dict[tuple, set[int]] = defaultdict(set)  # (group, word) -> sizes indexed

    def ordered(self, words: frozenset[str]) -> list[str]:
        far = len(self.rank)  # a word never counted sorts last
        return sorted(words, key=lambda w: (self.rank.get(w, far), w))

    def _index(self, group: Hashable, words: frozenset[str], item: int, prefix: int) -> None:
        size = len(words)
        for pos, w in enumerate(self.ordered(words)[:prefix]):
            self.postings[(group, size, w)].append((item, pos))
            self.sizes[(group, w)].add(size)

    def _collect(
        self, group: Hashable, size_b: int, w: str, need_b: int, lowest: int, out: set[int]
    ) -> None:
        post = self.postings.get((group, size_b, w))
        if not post:
            return
        start = bisect_left(post, (lowest, -1)) if lowest else 0
        out.update(item for item, pos in post[start:] if pos < need_b)


class JaccardIndex(_Prefixes):
    """Sets that can reach ``jaccard(a, b) >= num/den`` with a query (see the module docstring)."""

    def __init__(self, threshold: float, rank: dict[str, int]) -> None:
        super().__init__(rank)
        exact = Fraction(str(threshold))  # 0.4 -> 2/5: the threshold as written
        self.num, self.den = exact.numerator, exact.denominator

    def _least(self, size: int) -> int:
        # The fewest shared words a set of this size needs with any partner: ⌈num·size/den⌉.
        return max(1, -(-self.num * size // self.den))

    def add(self, group: Hashable, words: frozenset[str], item: int) -> None:
        if words:
            self._index(group, words, item, len(words) - self._least(len(words)) + 1)

    def query(self, group: Hashable, words: frozenset[str], lowest: int = 0) -> set[int]:
        out: set[int] = set()
        size_a = len(words)
        if not size_a:
            return out
        lo, hi = self._least(size_a), size_a * self.den // self.num
        p, s = self.num, self.num + self.den
        for pos_a, w in enumerate(self.ordered(words)[: size_a - self._least(size_a) + 1]):
            for size_b in self.sizes.get((group, w), ()):
                if not lo <= size_b <= hi:
                    continue
                shared = max(1, -(-p * (size_a + size_b) // s))
                if pos_a < size_a - shared + 1:
                    self._collect(group, size_b, w, size_b - shared + 1, lowest, out)
        return out


class OverlapIndex(_Prefixes):
    """Sets sharing at least ``k`` words with a query."""

    def __init__(self, k: int, rank: dict[str, int]) -> None:
        super().__init__(rank)
        self.k = k

    def add(self, group: Hashable, words: frozenset[str], item: int) -> None:
        if len(words) >= self.k:
            self._index(group, words, item, len(words) - self.k + 1)

    def query(self, group: Hashable, words: frozenset[str], lowest: int = 0) -> set[int]:
        out: set[int] = set()
        if len(words) < self.k:
            return out
        for w in self.ordered(words)[: len(words) - self.k + 1]:
            for size_b in self.sizes.get((group, w), ()):
                self._collect(group, size_b, w, size_b - self.k + 1, lowest, out)
        return out
