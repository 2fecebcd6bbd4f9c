"""The lexical leg's best rows without ranking every row that holds a query term.

At 100k units a question's everyday words ("cost", "review") each match a tenth to nearly half
of the rows, and FTS5's ``bm25()`` must score every row its MATCH expression yields (~1.5-2 µs
a row here, most of the leg's time). Yet a phrase can add at most ``idf * (k1 + 1)`` to a row's
score, whatever its frequency, the column weights and the row's length (fts5_aux.c). So once
``limit`` rows are known to score at least θ, a row whose phrases' bounds add up to less than θ
cannot make the list and need not be scored: MaxScore, done with FTS5's own queries.

1. Each phrase's row count gives its IDF exactly as ``bm25()`` computes it. A phrase no row
   holds adds nothing to any score and is left out.
2. A probe ranks the rows holding every phrase (``a AND b AND c``). Its ``limit``-th score is a
   lower bound θ of the whole ranking's (those rows are among all rows; when too few rows hold
   every phrase, the rows holding all but the weakest are ranked on those phrases alone, whose
   scores are lower bounds of their real ones).
3. The rows that could still reach θ are ranked: those holding a phrase whose bound alone
   reaches θ, and, among the rest, those holding enough of the weaker phrases together.

Exactness rests on one property of FTS5: ``bm25()`` counts a phrase in a row only when the
phrase's own node of the expression sits on that row. In ``a OR (b AND c)``, a row holding
``a`` and ``b`` but not ``c`` is scored without ``b``. So every query here is a conjunction of
disjunctions (with NOT), naming each phrase exactly once: each row it yields then has exactly
the score the whole ``a OR b OR c`` gives it. tests/test_lexical.py compares every answer with
the whole OR's, ids and scores.

Where the index keeps its terms' impact-ordered lists (store/term_lists.py, from MIN_ROWS rows),
an unfiltered question is first ranked from them (``from_lists``), without bm25(): its words'
best rows read first until the bounds prove the top k, then scored exactly. A phrase of several
words in many rows ("edge proxy" in 146,000 of 1M units) is bounded by its words' counts and
counted in the text of the few rows that bound leaves able to enter (``with_compounds``). The
plan above answers what the lists cannot (a prefix, a filter, other weights).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from clawmem.store import term_bounds, term_lists
from clawmem.store.index import Index

if TYPE_CHECKING:
    import numpy as np

# FTS5's bm25() k1 (fts5_aux.c).
K1 = 1.2
# Below this many rows holding a query phrase, counting and probing cost more than they save:
# bm25() then scores every row (on SciFact's 7k units a lower bar made the leg 20% slower).
MIN_ROWS = 20000

Ranked = list  # (rowid, bm25) rows, best (most negative) first
Ranker = Callable[[str], Ranked]  # a MATCH expression -> its best rows, exactly ranked


def fts_rows(index: Index) -> int:
    """FTS5's own row count (the N of its IDF): the first varint of the averages record."""
    row = index.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0
    value = 0
    for i, byte in enumerate(bytes(row[0])[:9]):  # SQLite's varint: 7 bits a byte, big-endian
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


def idf(n_rows: int, hits: int) -> float:
    """FTS5's IDF, as bm25() computes it (never below 1e-6)."""
    value = math.log((n_rows - hits + 0.5) / (hits + 0.5)) if n_rows else 0.0
    return value if value > 0 else 1e-6


def _row_counts(index: Index) -> dict:
    """The remembered phrase counts of ``index``, emptied when anything committed since."""
    conn = index.conn
    version = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    memo = index.read_memo.setdefault("phrase_rows", {})
    if memo.get(None) != version:
        memo.clear()
        memo[None] = version
    return memo


def known_holders(index: Index, phrase: str) -> tuple[set[int], set[int]]:
    """(rows whose holding ``phrase`` is known, those of them that hold it), from the lexical
    leg's scoring (``from_lists``) while the index is unchanged: the coverage step asks the same
    question of the same rows (legs.coverage), which FTS5 answers a row at a time."""
    memo = index.read_memo.get("phrase_rows")
    if not memo or ("holds", phrase) not in memo:
        return set(), set()  # nothing told (every index below MIN_ROWS): no version to check
    held = _row_counts(index).get(("holds", phrase))
    return held if held is not None else (set(), set())


def _know_holders(index: Index, phrase: str, rows: Iterable[int], holding: Iterable[int]) -> None:
    known, held = _row_counts(index).setdefault(("holds", phrase), (set(), set()))
    known.update(rows)
    held.update(holding)


def has_rows(index: Index, table: str) -> bool:
    """Whether the FTS5 ``table`` holds any row, remembered while the index is unchanged (a
    workspace without fact proposals has an empty proposals_fts)."""
    assert table in ("chunks_fts", "proposals_fts")  # spelled into the SQL
    memo = _row_counts(index)
    if ("any row", table) not in memo:
        memo[("any row", table)] = (
            index.conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        )
    return memo[("any row", table)]


def phrase_rows(index: Index, phrase: str) -> int:
    """How many rows hold ``phrase``, remembered while the index is unchanged (recall's lexical
    leg, its coverage step and relevance all ask)."""
    memo = _row_counts(index)
    if phrase not in memo:
        memo[phrase] = index.conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
        ).fetchone()[0]
    return memo[phrase]


def _any(phrases: list[str]) -> str:
    return " OR ".join(phrases)


def top(
    index: Index,
    phrases: list[str],
    limit: int,
    ranked: Ranker,
    weights: tuple[float, float, float] = term_bounds.WEIGHTS,
) -> Ranked | None:
    """The best ``limit`` rows of ``phrases`` OR'ed, ranked by bm25() with the column
    ``weights``: ``ranked`` applied to the queries that can hold them, merged. None when pruning
    would not pay; the caller then ranks the whole OR."""
    if len(phrases) < 2:
        return None
    n_rows = fts_rows(index)
    if n_rows < MIN_ROWS:
        return None
    hits = {p: phrase_rows(index, p) for p in phrases}
    live = [p for p in phrases if hits[p]]
    if not live:
        return []
    if len(live) < 2 or sum(hits[p] for p in live) < MIN_ROWS:
        return ranked(_any(live))
    # The most a phrase adds to a row's score, a hair over so rounding never prunes a row: its
    # IDF times the most its frequency and the row's length can make of it (term_bounds.py;
    # k1 + 1 where the index keeps no bound for it).
    impact = term_bounds.phrase_bounds(
        index.conn, live, weights, term_bounds.averages(index.conn)[1]
    )
    bound = {p: idf(n_rows, hits[p]) * impact.get(p, K1 + 1.0) * (1 + 1e-9) + 1e-12 for p in live}
    live.sort(key=lambda p: (-bound[p], p))  # strongest (rarest) first

    theta, known = _probe(live, limit, ranked)
    if theta is None:
        return None
    strong = [p for p in live if bound[p] >= theta]
    weak = [p for p in live if bound[p] < theta]
    plan: list[tuple[str, int]] = []  # (query, most rows it can yield)
    if strong:
        if weak:
            plan += [
                (f"({_any(strong)}) AND ({_any(weak)})", sum(hits[p] for p in strong)),
                (f"({_any(strong)}) NOT ({_any(weak)})", 0),  # counted with the line above
            ]
        else:
            plan.append((_any(strong), sum(hits[p] for p in strong)))
    for i, w in enumerate(weak):
        later = weak[i + 1 :]
        if not later or bound[w] + sum(bound[p] for p in later) < theta:
            break  # rows holding only weak phrases from here on cannot reach θ
        before = strong + weak[:i]
        q = f"({w}) AND ({_any(later)})" + (f" NOT ({_any(before)})" if before else "")
        plan.append((q, min(hits[w], sum(hits[p] for p in later))))
    reused = f"({live[0]}) AND ({live[1]})" if known is not None else None
    postings = sum(hits[p] for p in live)
    plan_cost = sum(_cost(postings, rows) for q, rows in plan if q != reused)
    if plan_cost >= _cost(postings, min(n_rows, postings)):
        return ranked(_any(live))  # the plan would score nearly every row anyway
    found: dict[int, float] = {}
    for q, _ in plan:
        rows = known if known is not None and q == reused else ranked(q)
        for rowid, score in rows:
            found[rowid] = score
    return list(found.items())


# What a bm25()-ranked FTS5 query costs, measured at 100k units (µs): bm25() first counts each
# phrase's rows for its IDF (~0.07 a posting), the expression then walks every phrase's postings
# with their positions (~0.3 a posting, whatever AND, OR or NOT makes of them), and bm25() scores
# each row the expression yields (~1.7 a row). A query names every phrase, so each one the plan
# adds pays the walk again: more, smaller queries are not always cheaper.
_US_PER_POSTING = 0.37
_US_PER_ROW = 1.7


def _cost(postings: int, rows: int) -> float:
    return _US_PER_POSTING * postings + _US_PER_ROW * rows


def _probe(live: list[str], limit: int, ranked: Ranker) -> tuple[float | None, Ranked | None]:
    """(θ, the probe's rows when the probe was the whole ``(a) AND (b)``).

    The two rarest phrases' rows are the cheapest to walk and the likeliest to score high; on
    those two phrases alone their scores are lower bounds of the real ones, so the ``limit``-th
    is a lower bound of the whole ranking's. With fewer rows, the rarest phrase's own."""
    for probe in (f"({live[0]}) AND ({live[1]})", live[0]):
        rows = ranked(probe)
        if len(rows) >= limit:
            return -rows[limit - 1][1], rows if probe != live[0] and len(live) == 2 else None
    return None, None


# ---------------------------------------------------------------- from the terms' lists

# A phrase the lists cannot answer (several words, a prefix) is ranked whole by bm25(), up to
# this many rows; a phrase of several listed words in more rows is bounded by its words
# (``with_compounds``), and a prefix in more rows sends the question back to the plan above.
LIST_FTS_ROWS = 5000
# A question naming a phrase of several words in many rows counts it in at most this many rows'
# text (``with_compounds``, 0.07-0.15 ms a row at 1M); past it bm25() ranks the question, and
# what was spent (at most ~150 ms) is lost. A phrase of more words is left to bm25() as well.
_COUNTED_MAX = 1024
_WORDS_MAX = 32
# Up to this many rows to look up in a term's unread tiers, only the parts spanning them are
# read; more, and every unread part is (one query).
_FEW = 256


def from_lists(index: Index, phrases: list[str], limit: int) -> Ranked | None:
    """The best ``limit`` rows of ``phrases`` OR'ed, with their bm25() scores at the ranking's
    column weights, read from the terms' impact-ordered lists (store/term_lists.py) instead of
    bm25(): exactly the rows and scores (within the last bits) the whole OR gives, with every
    row tied at the cut. None when the lists cannot answer or would not pay: the caller ranks
    with bm25() (``top``). Unfiltered questions only: the lists know no filters.

    Each listed term's tiers are read best first, always the tier whose bound is highest; each
    row read gets its exact contribution. θ, the ``limit``-th best score so far, is a lower bound
    of the answer's; once the bounds of the tiers not yet read add up to less than θ, no row
    unread can reach it, and a row read can only if its score plus the bounds of the terms it was
    not yet seen with can. Those rows are looked up in the rest of their terms' lists and scored
    exactly, the phrases added in the question's order as bm25() adds them."""
    q = _ListQuery.plan(index, phrases)
    if q is None or not q.live:
        return None if q is None else []
    if q.compound:
        got = q.with_compounds(index, limit)
        if got is None:
            return None
        best, holders = got
    else:
        q.read_until_proved(limit)
        best, holders = q.exact(q.candidates(), limit)
    rows = [d for d, _ in best]
    for p in phrases:
        if p in holders:
            _know_holders(index, p, rows, holders[p])
        elif p not in q.live and p in q.counted:  # in no row of chunks_fts
            _know_holders(index, p, rows, ())
    return best


class _ListQuery:
    """One question ranked from the lists: its phrases, their IDFs, what has been read."""

    def __init__(self, index: Index, avgdl: float, drift: float) -> None:
        import numpy as np

        self.index = index
        self.conn, self.avgdl, self.drift = index.conn, avgdl, drift
        self.live: list[str] = []
        self.counted: set[str] = set()  # phrases whose row count is certain (0: in no row)
        self.single: dict[str, int] = {}  # a phrase of one listed term -> the term's id
        self.idf: dict[str, float] = {}
        self.tiers: dict[int, list[tuple[int, int, float]]] = {}
        self.weight: dict[int, float] = {}  # each listed term: the IDFs of the phrases naming it
        self.exact_rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # bm25()'s phrases
        # A phrase of several listed words in many rows (``with_compounds``): its words (term,
        # id), and its terms in order (what a row must hold one after another).
        self.compound: dict[str, list[tuple[str, int]]] = {}
        self.sequences: dict[str, list[str]] = {}
        (top_id,) = self.conn.execute("SELECT max(id) FROM chunks").fetchone()
        self.size = int(top_id or 0) + 1
        self.acc = np.zeros(self.size)  # each row's score from what has been read: a lower bound
        self.bits = np.zeros(0, np.uint8)  # the listed terms each row was read with (``plan``)
        self.seen = np.zeros(self.size, bool)
        self.order: list[np.ndarray] = []  # the rows read, each once
        self.read: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.next: dict[int, int] = {}
        self.theta = 0.0
        self.best = np.zeros(0, np.int64)  # the best ``limit`` rows so far (θ: their least)
        self.in_best = np.zeros(self.size, bool)  # ``best`` as a mask
        self.rest_max: dict[int, list[float]] = {}  # each term: its tiers' largest g from i on

    @classmethod
    def plan(cls, index: Index, phrases: list[str]) -> _ListQuery | None:
        conn = index.conn
        ref = term_lists.reference(conn)
        if ref is None or not ref["ok"] or not phrases:
            return None
        n_rows, avgdl = term_bounds.averages(conn)
        if n_rows < MIN_ROWS:
            return None
        import numpy as np  # only past MIN_ROWS: a small index's lexical recall never loads it

        cut = term_bounds.phrase_tokens(phrases)
        words = {p: ts[0] for p, ts in cut.items() if len(ts) == 1 and not p.endswith("*")}
        several = {t for p, ts in cut.items() if len(ts) > 1 and not p.endswith("*") for t in ts}
        ids = term_lists.term_ids(conn, set(words.values()) | several)
        q = cls(index, avgdl, max(1.0, avgdl / float(ref["avgdl"])))
        hits: dict[str, int] = {}
        for p in phrases:
            if p not in words:
                hits[p] = phrase_rows(index, p)
                q.counted.add(p)
                continue
            tid = ids.get(words[p])
            if tid is not None:
                q.counted.add(p)
            if tid is not None and tid not in q.tiers:
                q.tiers[tid] = term_lists.tiers(conn, tid)
            hits[p] = sum(n for _, n, _ in q.tiers[tid]) if tid is not None else 0
            if hits[p]:
                q.single[p] = ids[words[p]]
        # A listed term's row count is the sum of its parts' (kept in the transaction that
        # changes chunks_fts): the count bm25() and ``phrase_rows`` take. Remembered for the
        # coverage step, which would otherwise count a common word's rows in FTS5 again (at 1M
        # units ~5-30 ms a word).
        counts = _row_counts(index)
        for p, w in words.items():
            if w in ids:
                counts.setdefault(p, hits[p])
        q.live = [p for p in phrases if hits[p]]
        if q.live and sum(hits[p] for p in q.live) < MIN_ROWS:
            return None  # bm25() over every row costs little
        for p in q.live:
            if p in q.single or hits[p] <= LIST_FTS_ROWS:
                continue
            # A phrase of several words in many rows: bounded by its words' lists, counted in
            # the few rows that can make the list (``with_compounds``); a prefix cannot be.
            ts = cut.get(p, [])
            if p.endswith("*") or not 2 <= len(ts) <= _WORDS_MAX or any(t not in ids for t in ts):
                return None
            q.compound[p] = [(t, ids[t]) for t in ts]
            for _, tid in q.compound[p]:
                if tid not in q.tiers:
                    q.tiers[tid] = term_lists.tiers(conn, tid)
        if q.compound:
            q.sequences = term_bounds.phrase_sequences(q.compound)
        q.idf = {p: idf(n_rows, hits[p]) for p in q.live}
        for p, t in q.single.items():
            q.weight[t] = q.weight.get(t, 0.0) + q.idf[p]
        if len(q.weight) > 63:
            return None
        width = next(
            w for w in ("u1", "u2", "u4", "u8") if len(q.weight) <= 8 * np.dtype(w).itemsize
        )
        q.bits = np.zeros(q.size, width)
        q.read = {t: [] for t in q.weight}
        q.next = dict.fromkeys(q.weight, 0)
        return q

    def _bit(self, j: int) -> np.ndarray:
        """Term ``j``'s bit, in the width of ``bits``."""
        import numpy as np

        return np.array(1 << j, self.bits.dtype)

    def _saw(self, d: np.ndarray) -> None:
        new = d[~self.seen[d]]
        self.seen[new] = True
        self.order.append(new)

    def _bound(self, t: int) -> float:
        """The most term ``t`` adds to a row not yet read with it: the largest impact of its
        unread tiers (their largest, not the next one's: a bound that needs no tier order)."""
        # The largest g of tiers i.. for every i, made once a term (read_until_proved asks after
        # every tier read: the max over the rest each time was ~1 ms a common question).
        most = self.rest_max.get(t)
        if most is None:
            most = [0.0] * (len(self.tiers[t]) + 1)
            for i in range(len(self.tiers[t]) - 1, -1, -1):
                most[i] = max(self.tiers[t][i][2], most[i + 1])
            self.rest_max[t] = most
        if self.next[t] >= len(self.tiers[t]):
            return 0.0
        return self.weight[t] * most[self.next[t]] * self.drift * (1 + 1e-9) + 1e-12

    def read_until_proved(self, limit: int) -> None:
        """Rank the phrases bm25() answers whole, then read the listed terms' tiers, the one of
        highest bound first, until the unread tiers cannot lift a row unread to θ."""
        self._rank_whole(limit)
        terms = list(self.weight)
        while True:
            rem = {t: self._bound(t) for t in terms}
            if not any(rem.values()) or (
                len(self.best) >= limit and sum(rem.values()) < self.theta
            ):
                return
            t = max(terms, key=lambda t: rem[t])
            d, f, n = term_lists.read(self.conn, t, self.tiers[t][self.next[t]][0])
            self.next[t] += 1
            self.read[t].append((d, f, n))
            self.acc[d] += self.weight[t] * term_lists.impact(f, n, self.avgdl)
            self.bits[d] |= self._bit(terms.index(t))
            self._saw(d)
            self._raise_theta(d, limit)

    def _rank_whole(self, limit: int) -> None:
        """Rank with bm25() each phrase the lists do not answer (a few rows each)."""
        import numpy as np

        wsql = ", ".join(f"{x:g}" for x in term_bounds.WEIGHTS)
        for p in self.live:
            if p in self.single or p in self.compound:
                continue
            rows = self.conn.execute(
                f"SELECT rowid, bm25(chunks_fts, {wsql}) FROM chunks_fts WHERE chunks_fts MATCH ?",
                (p,),
            ).fetchall()
            d = np.array([r[0] for r in rows], np.int64)
            s = -np.array([r[1] for r in rows], np.float64)
            self.exact_rows[p] = (d, s)
            self.acc[d] += s
            self._saw(d)
            self._raise_theta(d, limit)

    def _raise_theta(self, touched: np.ndarray, limit: int) -> None:
        """θ after the rows ``touched`` gained score: the best ``limit`` rows so far can only be
        the best before or rows just touched, so only those are ranked."""
        import numpy as np

        # The rows touched not already among the best (a tier's or a phrase's rows are distinct
        # rowids, as ``acc[d] +=`` assumes): the pool holds each row once, as a union would,
        # without sorting every row touched. θ is the ``limit``-th best score over every row
        # read, whichever of the rows tied with it are kept.
        fresh = touched[~self.in_best[touched]]
        pool = np.concatenate((self.best, fresh))
        if len(pool) > limit:
            scores = self.acc[pool]
            keep = np.argpartition(scores, len(pool) - limit)[len(pool) - limit :]
            pool = pool[keep]
        self.in_best[self.best] = False
        self.in_best[pool] = True
        self.best = pool
        if len(pool) >= limit:
            self.theta = float(self.acc[pool].min())

    def candidates(self) -> np.ndarray:
        """The rows read whose score so far plus the bounds of the terms they were not read with
        reaches θ (ascending rowids)."""
        import numpy as np

        if not self.order:
            return np.zeros(0, np.int64)
        everyone = np.concatenate(self.order)
        have = self.bits[everyone]
        upper = self.acc[everyone].copy()
        for j, t in enumerate(self.weight):
            upper += np.where(have & self._bit(j), 0.0, self._bound(t))
        return np.sort(everyone[upper >= self.theta * (1 - 1e-9) - 1e-12])

    def exact(self, cand: np.ndarray, limit: int) -> tuple[Ranked, dict[str, list[int]]]:
        """The candidates' bm25() scores, the best ``limit`` and every row tied with them: each
        candidate's count and length for each listed term from the tiers read, then from the
        parts of the unread tiers that span a candidate not yet read with the term. And which
        of those rows hold each live phrase (a listed term: its count is not 0)."""
        import numpy as np

        if not len(cand):
            return [], {}
        at = np.full(self.size, -1, np.int32)
        at[cand] = np.arange(len(cand))
        tfw = {t: np.zeros(len(cand), np.int64) for t in self.weight}
        lens = np.zeros(len(cand), np.int64)
        for j, t in enumerate(self.weight):
            parts = list(self.read[t])
            missing = cand[(self.bits[cand] & self._bit(j)) == 0]
            if len(missing) and self.next[t] < len(self.tiers[t]):
                tier = self.tiers[t][self.next[t]][0]
                if len(missing) <= _FEW:
                    parts.append(term_lists.read_spanning(self.conn, t, tier, missing))
                else:
                    parts.append(term_lists.read_from(self.conn, t, tier))
            for d, f, n in parts:
                i = at[d]
                m = i >= 0
                tfw[t][i[m]] = f[m]
                lens[i[m]] = n[m]
        # bm25(): the phrases added in the question's order, each as fts5_aux.c computes it.
        score = np.zeros(len(cand))
        norm = K1 * ((1 - term_bounds.B) + (term_bounds.B * lens.astype(np.float64)) / self.avgdl)
        for p in self.live:
            if p in self.single:
                f64 = tfw[self.single[p]].astype(np.float64) / 10.0
                score += self.idf[p] * ((f64 * (K1 + 1.0)) / (f64 + norm))
            else:
                d, s = self.exact_rows[p]
                got = np.zeros(self.size)
                got[d] = s
                score += got[cand]
        keep = np.ones(len(cand), bool)
        if len(cand) > limit:
            kth = np.partition(score, len(cand) - limit)[len(cand) - limit]
            keep = score >= kth * (1 - 1e-12)
            cand, score = cand[keep], score[keep]
        holders = {}
        for p in self.live:
            if p in self.single:
                holders[p] = cand[tfw[self.single[p]][keep] > 0].tolist()
            else:
                holders[p] = cand[np.isin(cand, self.exact_rows[p][0])].tolist()
        best = [(int(d), -float(s)) for d, s in zip(cand.tolist(), score.tolist(), strict=True)]
        return best, holders

    def with_compounds(
        self, index: Index, limit: int
    ) -> tuple[Ranked, dict[str, list[int]]] | None:
        """What ``exact`` gives, for a question naming a phrase of several words in many rows
        ("edge proxy" in 146,000 of 1M): the lists know each word's count in a row, not the
        phrase's. A row's phrase count is at most its least word's in every column (each
        instance of the phrase is an instance of each of its words there), and a row holds the
        phrase only if it holds every word, so each row's score has an upper bound from its
        words' counts and a lower bound without the phrase. Every listed word's rows are read
        whole; the rows are then scored exactly, the highest upper bound first, the phrase
        counted in their text (``Index.lexical_rows``, cut by FTS5's tokenizer), until the
        ``limit``-th exact score is above every upper bound left. None when that would count
        the phrase in more than ``_COUNTED_MAX`` rows, or the text does not give the counts and
        lengths the lists hold: the caller ranks with bm25()."""
        import numpy as np

        self._rank_whole(limit)
        lists, tfw, lens = self._read_whole()
        score, open_rows, high = self._bounds(lists, tfw, lens)
        # θ: the ``limit``-th best lower bound, a lower bound of the ``limit``-th score. Count the
        # compounds in the rows still able to reach it, the highest bound first, a batch at a
        # time (each raises θ), until none is.
        counts = {p: np.zeros(self.size, np.uint16) for p in self.compound}
        best = np.flatnonzero(score > 0)
        counted, batch = 0, limit + limit // 4
        while True:
            theta = 0.0
            if len(best) >= limit:
                kth = len(best) - limit
                best = best[np.argpartition(score[best], kth)[kth:]]
                theta = float(score[best].min())
            able = np.flatnonzero(high >= theta * (1 - 1e-9) - 1e-12)
            if not len(able):
                break
            if counted + min(batch, len(able)) > _COUNTED_MAX:
                return None
            if len(able) > batch:
                able = able[np.argpartition(-high[able], batch)[:batch]]
            ids = open_rows[able]
            got = self._count(index, ids, lens, tfw)
            if got is None:
                return None
            counted += len(ids)
            batch *= 2
            for p, c in got.items():
                counts[p][ids] = c
            score[ids] = self._exact(ids, tfw, lens, counts)
            high[able] = -np.inf  # exact now
            best = np.union1d(best, ids[score[ids] > 0])
        keep = np.flatnonzero(score > 0)  # a row holding none of the phrases: no match
        if len(keep) > limit:
            kth = np.partition(score[keep], len(keep) - limit)[len(keep) - limit]
            keep = keep[score[keep] >= kth * (1 - 1e-12)]
        holders = {
            p: keep[tfw[self.single[p]][keep] > 0].tolist()
            if p in self.single
            else keep[counts[p][keep] > 0].tolist()
            if p in self.compound
            else keep[np.isin(keep, self.exact_rows[p][0])].tolist()
            for p in self.live
        }
        ranked = [
            (int(d), -float(s)) for d, s in zip(keep.tolist(), score[keep].tolist(), strict=True)
        ]
        return ranked, holders

    def _read_whole(
        self,
    ) -> tuple[
        dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], dict[int, np.ndarray], np.ndarray
    ]:
        """Each listed word's rows, whole (every tier): (its lists, its count in tenths by
        rowid, each row's length by rowid)."""
        import numpy as np

        terms = set(self.weight) | {t for ws in self.compound.values() for _, t in ws}
        tfw: dict[int, np.ndarray] = {}
        lens = np.zeros(self.size, np.uint16)
        lists: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for t in terms:
            d, f, n = term_lists.read_from(self.conn, t, self.tiers[t][0][0])
            lists[t] = (d, f, n)
            tfw[t] = np.zeros(self.size, np.uint16)
            tfw[t][d] = f
            lens[d] = n
        return lists, tfw, lens

    def _bounds(
        self,
        lists: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
        tfw: dict[int, np.ndarray],
        lens: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(each row's score without the compounds, by rowid; the rows holding every word of a
        compound; their upper bounds). The first adds the phrases in the question's order as
        bm25() does (adding a compound's 0 later leaves a sum as it is): exact for a row
        holding no compound, a lower bound for the rest. A compound adds at most what its
        words' least count would."""
        import numpy as np

        score = np.zeros(self.size)
        for p in self.live:
            if p in self.single:
                d, f, n = lists[self.single[p]]
                score[d] += self._part(p, f, n)
            elif p not in self.compound:
                d, s = self.exact_rows[p]
                score[d] += s
        extra: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for p, ws in self.compound.items():
            every = np.zeros(self.size, np.uint8)
            for _, t in ws:
                every[lists[t][0]] += 1
            rows = np.flatnonzero(every == len(ws))
            least = np.min([tfw[t][rows] for _, t in ws], axis=0)
            extra[p] = (rows, self._part(p, least, lens[rows]) * (1 + 1e-9) + 1e-12)
        if len(extra) == 1:
            ((open_rows, most),) = extra.values()
            return score, open_rows, score[open_rows] + most
        open_rows = np.unique(np.concatenate([rows for rows, _ in extra.values()]))
        high = score[open_rows]
        for rows, most in extra.values():
            high[np.searchsorted(open_rows, rows)] += most
        return score, open_rows, high

    def _part(self, p: str, tfw10: np.ndarray, dl: np.ndarray) -> np.ndarray:
        """Phrase ``p``'s part of rows' bm25() scores from its counts (tenths) and their lengths,
        as fts5_aux.c computes it (``exact`` does the same)."""
        import numpy as np

        f64 = tfw10.astype(np.float64) / 10.0
        norm = K1 * ((1 - term_bounds.B) + (term_bounds.B * dl.astype(np.float64)) / self.avgdl)
        return self.idf[p] * ((f64 * (K1 + 1.0)) / (f64 + norm))

    def _exact(
        self,
        ids: np.ndarray,
        tfw: dict[int, np.ndarray],
        lens: np.ndarray,
        counts: dict[str, np.ndarray],
    ) -> np.ndarray:
        """The bm25() scores of rows ``ids`` whose compounds are counted: every phrase's part,
        added in the question's order."""
        import numpy as np

        total = np.zeros(len(ids))
        for p in self.live:
            if p in self.single:
                total += self._part(p, tfw[self.single[p]][ids], lens[ids])
            elif p in self.compound:
                total += self._part(p, counts[p][ids], lens[ids])
            else:
                d, s = self.exact_rows[p]
                got = dict(zip(d.tolist(), s.tolist(), strict=True))
                total += np.array([got.get(x, 0.0) for x in ids.tolist()])
        return total

    def _count(
        self, index: Index, ids: np.ndarray, lens: np.ndarray, tfw: dict[int, np.ndarray]
    ) -> dict[str, np.ndarray] | None:
        """Each compound's column-weighted count (in tenths, as the lists keep their words') in
        the rows ``ids``, from their text as chunks_fts was given it; None when that text does
        not have the lengths and word counts the lists hold for these rows."""
        import numpy as np

        values = index.lexical_rows(ids.tolist())
        if len(values) != len(ids):
            return None
        found, tf, dl = term_bounds.phrase_counts(values, self.sequences)
        tenths = term_lists.TENTHS
        for d in ids.tolist():
            if dl.get(d, 0) != lens[d]:
                return None
            for ws in self.compound.values():
                for term, t in ws:
                    n = tf.get((term, d), (0, 0, 0))
                    if sum(w * x for w, x in zip(tenths, n, strict=True)) != tfw[t][d]:
                        return None
        out = {}
        for p in self.compound:
            out[p] = np.array(
                [
                    sum(w * x for w, x in zip(tenths, found.get((p, d), (0, 0, 0)), strict=True))
                    for d in ids.tolist()
                ],
                np.int64,
            )
        return out
