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
"""

from __future__ import annotations

import math
from collections.abc import Callable

from clawmem.store import term_bounds
from clawmem.store.index import Index

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


def phrase_rows(index: Index, phrase: str) -> int:
    """How many rows hold ``phrase``, remembered while the index is unchanged (recall's lexical
    leg and its coverage step both ask)."""
    conn = index.conn
    version = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    memo = index.read_memo.setdefault("phrase_rows", {})
    if memo.get(None) != version:
        memo.clear()
        memo[None] = version
    if phrase not in memo:
        memo[phrase] = conn.execute(
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
