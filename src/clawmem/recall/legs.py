"""The two search legs over the index: lexical (BM25 over the folded text, ``bm25_topk`` on a large
index) and vector (sqlite-vec KNN, or an exact scan of the vectors a process holds,
``vector_matrix``), each returning candidates already filtered by ``store.queries.filter_sql``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from clawmem.recall import bm25_topk, copies, fusion
from clawmem.store import term_bounds, term_lists, vector_lists, vector_matrix
from clawmem.store.index import Filters, Index
from clawmem.store.queries import filter_sql, time_window
from clawmem.text.textnorm import LexQuery

if TYPE_CHECKING:
    import numpy as np

    from clawmem.embedders.base import Vector
    from clawmem.text.query import Query

# ---------------------------------------------------------------------------- the two legs


def lexical_leg(
    index: Index,
    q: LexQuery,
    f: Filters,
    limit: int,
    ranking: fusion.Ranking | None = None,
) -> tuple[list[fusion.LegHit], bool]:
    """BM25 over the normalised text, any term matching (IDF weighs them). Units holding every
    identifier and quoted phrase of the query come first. Returns (hits, relaxed): ``relaxed``
    says that no unit holds every term of the query."""
    if not q.any_terms:
        return [], False
    r = ranking or fusion.Ranking()
    where, args = filter_sql(f)
    bm25 = f"bm25(chunks_fts, 1.0, {r.heading_weight:g}, {r.context_weight:g})"
    sql = (
        f"SELECT c.id, {bm25} AS r FROM chunks_fts "
        "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? "
        + (f"AND {where} " if where else "")
        + "ORDER BY r, c.path, c.start_line, c.id LIMIT ?"
    )

    def ranked(match: str) -> list:
        if not where:
            quick = _ranked_fts_only(index, bm25, match, limit)
            if quick is not None:
                return quick
        return index.conn.execute(sql, (match, *args, limit)).fetchall()

    def ranked_any(alternatives: str) -> list:
        """``ranked(alternatives)``, scoring only the rows that can make the list when a large
        index holds the query's words in many rows (bm25_topk)."""
        # Phrases are quoted letters and digits, so " OR " only ever joins them.
        weights = (1.0, r.heading_weight, r.context_weight)
        phrases = alternatives.split(" OR ")
        best = None
        if not where and weights == bm25_topk.term_bounds.WEIGHTS:
            # The terms' impact-ordered lists, where they can answer (they know no filters).
            best = bm25_topk.from_lists(index, phrases, limit)
        if best is None:
            best = bm25_topk.top(index, phrases, limit, ranked, weights)
        if best is None:
            return ranked(alternatives)
        return _tie_ordered(index, best, limit) if best else []

    rows = []
    if q.strong:
        # A unit holds an identifier when its own text or heading does: its neighbours' text (the
        # context column) informs ranking, but "DEC-0054" said next door is not said here.
        rows = ranked(f"{{body heading}} : ({q.strong}) AND ({q.any_terms})")
    seen = {row[0] for row in rows}
    strong = frozenset(seen)
    if len(rows) < limit:
        rest = ranked_any(q.any_terms)
        rows += [row for row in rest if row[0] not in seen][: limit - len(rows)]
    proposed = _proposals(index, q, where, args, limit, r)
    if proposed:
        rows, strong = _with_proposals(rows, strong, proposed, limit)
    relaxed = False
    if rows and q.all_terms != q.any_terms:
        relaxed = not any(
            index.conn.execute(
                f"SELECT 1 FROM {t} JOIN chunks c ON c.id = {t}.rowid WHERE {t} MATCH ? "
                + (f"AND {where} " if where else "")
                + "LIMIT 1",
                (q.all_terms, *args),
            ).fetchone()
            for t in ("chunks_fts", "proposals_fts")
        )
    return [
        fusion.LegHit(row[0], i, fusion.bm25_to_unit(row[1]), row[0] in strong)
        for i, row in enumerate(rows, 1)
    ], relaxed


# A fact proposal (memory/proposals/) restates the message it cites, so its lexical row lives
# apart, in proposals_fts (store/schema.py): in chunks_fts its words would change the statistics
# every other unit is scored with. Found there, it is scored as its source is in chunks_fts,
# under the same MATCH (bm25() reads the whole table's statistics whatever rows it is asked
# about), so it takes the place its source has (ranking folds the two: recall/copies.py) or
# would have when filters leave the source out. A proposal whose source is gone, or holds none
# of the words it matched (a name only in its entities), is scored alone (``_scored_alone``).


@dataclass(frozen=True)
class _Proposed:
    id: int
    score: float  # bm25(), as its source's row (else as its own row would be in chunks_fts)
    exact: bool  # holds the query's identifiers and quoted phrases, as ``strong`` rows do
    source: int | None


def _proposals(
    index: Index, q: LexQuery, where: str, args: list, limit: int, r: fusion.Ranking
) -> list[_Proposed]:
    """The proposals matching ``q`` under the filters (at most ``limit``), each with the score
    its source has in chunks_fts."""
    if not q.any_terms:
        return []
    w = f"1.0, {r.heading_weight:g}, {r.context_weight:g}"
    found = index.conn.execute(
        f"SELECT c.id, c.path, c.text, bm25(proposals_fts, {w}) AS r FROM proposals_fts "
        "JOIN chunks c ON c.id = proposals_fts.rowid WHERE proposals_fts MATCH ? "
        + (f"AND {where} " if where else "")
        + "ORDER BY r, c.path, c.start_line, c.id LIMIT ?",
        (q.any_terms, *args, limit),
    ).fetchall()
    if not found:
        return []

    def scores(table: str, match: str, ids: Collection[int]) -> dict[int, float]:
        if not ids:
            return {}
        return dict(
            index.conn.execute(
                f"SELECT rowid, bm25({table}, {w}) FROM {table} WHERE {table} MATCH ? "
                f"AND rowid IN ({','.join('?' * len(ids))})",
                (match, *ids),
            ).fetchall()
        )

    strong_match = f"{{body heading}} : ({q.strong}) AND ({q.any_terms})" if q.strong else ""
    exact = scores("proposals_fts", strong_match, [f[0] for f in found]) if strong_match else {}
    source = {f[0]: copies.proposal_source(index, f[1], f[2]) for f in found}
    srcs = {s for s in source.values() if s is not None}
    as_any = scores("chunks_fts", q.any_terms, srcs)
    as_strong = scores("chunks_fts", strong_match, srcs) if exact else {}
    out = []
    for pid, _path, _text, _own in found:
        src = source[pid]
        theirs = (as_strong if pid in exact else as_any).get(src) if src is not None else None
        if theirs is None:
            theirs = _scored_alone(index, pid, q.any_terms, r)
        out.append(_Proposed(pid, float(theirs), pid in exact, src))
    return out


def _scored_alone(index: Index, pid: int, any_terms: str, r: fusion.Ranking) -> float:
    """bm25() of the proposal ``pid`` for ``any_terms`` as if its row were in chunks_fts (its
    counts and length, chunks_fts's IDF and average length) without changing it: for a proposal
    with no source to score it as (its source not indexed, or holding none of the words). Its
    neighbours' text is left out, and a phrase of several words counts as often as its rarest
    word: close to bm25(), not equal (proposals_fts's own scores are on another scale: its
    few rows give most words an IDF near zero)."""
    from clawmem.store.index import fts_values

    row = index.conn.execute(
        "SELECT text, heading, entities FROM chunks WHERE id = ?", (pid,)
    ).fetchone()
    n_rows, avgdl = term_lists.averages(index.conn)
    if row is None or not n_rows or not avgdl:
        return 0.0
    body, head, _ = fts_values(row[0], row[1], row[2].split(), "")
    tf, dl = term_bounds.counts([(pid, body, head, "")])
    weights = (1.0, r.heading_weight, r.context_weight)
    norm = bm25_topk.K1 * (1 - term_bounds.B + term_bounds.B * dl.get(pid, 0) / avgdl)
    score = 0.0
    phrases = any_terms.split(" OR ")  # quoted letters and digits, joined by " OR " only
    for phrase, toks in term_bounds.phrase_tokens(phrases).items():
        counts = [tf.get((t, pid)) for t in toks]
        if not toks or any(c is None for c in counts):
            continue
        f = min(sum(w * n for w, n in zip(weights, c, strict=True)) for c in counts if c)
        idf = bm25_topk.idf(n_rows, bm25_topk.phrase_rows(index, phrase))
        score += idf * f * (bm25_topk.K1 + 1) / (f + norm)
    return -score


def _with_proposals(
    rows: list, strong: frozenset[int], proposed: list[_Proposed], limit: int
) -> tuple[list, frozenset[int]]:
    """``rows`` ((id, bm25), the strong ones first, each part best first) with each proposal
    placed by its score in its part, after rows of equal score, and cut at ``limit`` units: a
    proposal whose source is among the rows rides on it (ranking folds the two) and is not
    counted."""
    n_strong = sum(1 for row in rows if row[0] in strong)
    head, tail = list(rows[:n_strong]), list(rows[n_strong:])
    for p in sorted(proposed, key=lambda p: (p.score, p.id)):
        part = head if p.exact else tail
        at = len(part)
        while at and part[at - 1][1] > p.score:
            at -= 1
        part.insert(at, (p.id, p.score))
    ids = {row[0] for row in rows}
    rides = {p.id for p in proposed if p.source in ids}
    out, counted = [], 0
    for row in head + tail:
        if counted == limit and row[0] not in rides:
            break
        out.append(row)
        counted += row[0] not in rides
    return out, strong | {p.id for p in proposed if p.exact}


# Rows fetched beyond the limit by the FTS-only ranking, to see where ties around the cut end;
# grown while a run of equal scores crosses it (short, repetitive units tie often).
_TIE_SLACK = 64
_TIE_SLACK_MAX = 4096


def _places(index: Index, ids: list[int]) -> dict[int, tuple[str, int]]:
    """(path, start line) of each unit id: the lexical ranking's tie-break."""
    return {
        r[0]: (r[1], r[2])
        for r in index.conn.execute(
            f"SELECT id, path, start_line FROM chunks WHERE id IN ({','.join('?' * len(ids))})",
            ids,
        )
    }


def _tie_ordered(index: Index, rows: list, limit: int) -> list:
    """The best ``limit`` of (id, bm25) rows in the ranking's order: score, path, line, id."""
    ids = [r[0] for r in rows]
    where = _places(index, ids)
    rows = sorted(rows, key=lambda r: (r[1], *where.get(r[0], ("", 0)), r[0]))
    return [(r[0], r[1]) for r in rows[:limit]]


def _ranked_fts_only(index: Index, bm25: str, match: str, limit: int) -> list | None:
    """The unfiltered lexical ranking without joining every matching row to ``chunks``: FTS5
    ranks alone, and only the best ``limit + _TIE_SLACK`` rows are looked up for the tie-break
    (path, line, id). Exactly the joined query's answer, or None when a run of equal scores
    crosses even the largest slack (then the caller runs the joined query). At 100k units a
    common term matches tens of thousands of rows; the join cost ~20% of the leg."""
    want = limit + _TIE_SLACK
    while True:
        top = index.conn.execute(
            f"SELECT rowid, {bm25} AS r FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY r LIMIT ?",
            (match, want),
        ).fetchall()
        if len(top) < want or top[-1][1] > top[limit - 1][1]:
            break
        # Rows tied with the last kept one may lie beyond what was fetched: fetch more.
        if want >= _TIE_SLACK_MAX:
            return None
        want = min(want * 8, _TIE_SLACK_MAX)
    if not top:
        return []
    ids = [r[0] for r in top]
    where = _places(index, ids)
    if len(where) < len(ids):
        return None  # an FTS row without its unit (never expected): the join decides
    found = list(top)
    found.sort(key=lambda r: (r[1], *where[r[0]], r[0]))
    return [(r[0], r[1]) for r in found[:limit]]


def coverage(index: Index, q: LexQuery, ids: list[int]) -> dict[int, float]:
    """The share of the query's meaning each unit holds: the IDF-weighted fraction of the query's
    terms it matches (in any column). "a feline resting on a rug" matching only "rest" (of the
    evening) holds little of the question, however rare "rest" is; fusion weighs it so."""
    if len(q.terms) < 2 or not ids:
        return {}
    weight: dict[str, float] = {}
    matched: dict[int, float] = {}
    # A workspace without fact proposals has an empty proposals_fts: asking it costs a query a
    # term and finds nothing.
    tables = ["chunks_fts"]
    if bm25_topk.has_rows(index, "proposals_fts"):
        tables.append("proposals_fts")
    for term, (w, df) in _term_weights(index, q).items():
        weight[term] = w
        # The rows the lexical leg scored from the terms' lists it knows already (at 1M units
        # FTS5 answers ~0.1 ms a unit for a common word); FTS5 is asked about the others.
        known, held = bm25_topk.known_holders(index, term)
        for cid in held.intersection(ids):
            matched[cid] = matched.get(cid, 0.0) + w
        ask = [cid for cid in ids if cid not in known]
        for table in tables:  # a proposal's words are in the second
            some = ask if table == "chunks_fts" else ids
            if not some:
                continue
            # Which of the units hold the term: walking its rows costs ~0.2 µs a row; asking
            # FTS5 for each unit costs ~0.1 ms a unit (measured at 100k units): the cheaper one.
            unary = "+" if df <= _WALK_ROWS_PER_UNIT * len(some) else ""
            marks = ",".join("?" * len(some))
            for (rowid,) in index.conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND {unary}rowid IN ({marks})",
                (term, *some),
            ):
                matched[rowid] = matched.get(rowid, 0.0) + w
    whole = sum(weight.values()) or 1.0
    return {cid: matched.get(cid, 0.0) / whole for cid in ids}


def _term_weights(index: Index, q: LexQuery) -> dict[str, tuple[float, int]]:
    """Each query term's IDF weight and how many rows hold it."""
    total = bm25_topk.fts_rows(index) or 1  # the N of phrase_rows (not proposals' rows)
    out = {}
    for term in q.terms:
        df = bm25_topk.phrase_rows(index, term)
        out[term] = (math.log(1.0 + (total - df + 0.5) / (df + 0.5)), df)
    return out


def seen_share(index: Index, q: LexQuery) -> float:
    """The IDF-weighted share of the query's terms that some unit holds: 1.0 when the memory has
    every word of the question, 0.28 for "a feline resting on a rug" in a workspace that never
    wrote "feline" or "rug" (only "rest"). The rest of the question only the vector leg can
    match."""
    weights = _term_weights(index, q)
    whole = sum(w for w, _ in weights.values())
    return sum(w for w, df in weights.values() if df) / whole if whole else 1.0


def without_unheld_form_terms(index: Index, query: Query) -> Query:
    """``query`` without the terms that name the form of what it asks and no unit holds
    (``Query.form_terms``: the "due" of "when is the report due?", the "wrong" of "what went
    wrong with …"; rrf-v21). They match nothing, so the lexical leg ranks alike without them;
    kept, they counted as words the memory never wrote: the lexical leg's weight shrank
    (``seen_share``, ×0.57 for "when is the latency report due?" in notes that say "by
    Friday"), every unit's coverage fell and relevance read them as ``unseen``. A term some
    unit holds stays ("the deadline is Friday"), and so does a query left with no other term."""
    if not query.form_terms:
        return query
    q = query.lex
    gone = {t for t in query.form_terms if bm25_topk.phrase_rows(index, t) == 0}
    kept = tuple(t for t in q.terms if t not in gone)
    if not gone or not kept:
        return query
    alternatives = [t for t in (q.any_terms or "").split(" OR ") if t not in gone]
    lex = LexQuery(
        terms=kept,
        all_terms=" AND ".join(kept),
        any_terms=" OR ".join(alternatives),
        strong=q.strong,
        dropped=(*q.dropped, *sorted(gone)),
    )
    return replace(query, lex=lex, form_terms=())


# A term's rows are walked (its whole doclist, ``+rowid IN`` keeping SQLite from handing the ids
# to FTS5) when it holds fewer than this many rows per unit asked about; else FTS5 seeks each id.
_WALK_ROWS_PER_UNIT = 500


def _selective(f: Filters) -> bool:
    return bool(
        f.entity or f.path_prefix or len(f.kinds) > 1 or f.facts_only or f.as_of or f.source
    )


def held_vectors(index: Index, f: Filters, *, count: bool = True) -> tuple | None:
    """The index's vectors as this process holds them in memory (vector_matrix.py), when they
    can answer a search under ``f``; else None. (ids, matrix, codes or None, rows to keep or
    None; codes: ``vector_matrix.Codes``, from CODES_MIN_ROWS rows on): with no
    filter every row counts; under a time window only the rows vec0's KNN would search (units
    recorded in the window, `stored_leg`) and the facts whose stated validity overlaps it, read
    here through ``chunks_day`` and ``chunks_valid``, so one in-memory scan answers what vec0
    and an exact scan answered (at 100k units, ~27 ms of vec0 for a 30-day window). The scan
    itself touches no connection of ``index``, so a thread may run it while the lexical leg
    uses it. ``count=False``: this search does not count towards loading the matrix (a second
    search within one recall: a one-shot CLI must not start a load)."""
    if not index.vec.available or _selective(f) or f.kinds:
        return None
    windowed = bool(f.since or f.until)
    # Only unfiltered searches count towards loading the matrix (``vector_matrix.matrix``).
    held = vector_matrix.matrix(index, count=count and not windowed)
    if held is None or not windowed:
        return None if held is None else (*held, None)
    (recorded, a1), (valid, a2) = time_window(f)
    window = [
        r[0]
        for r in index.conn.execute(
            f"SELECT c.id FROM chunks c WHERE {recorded} "
            f"UNION ALL SELECT c.id FROM chunks c WHERE {valid} AND NOT {recorded}",
            a1 + a2 + a1,
        )
    ]
    return (*held, vector_matrix.rows_of(held[0], window))


def vector_search(index: Index) -> str:
    """How this process ranks an unfiltered vector search of ``index`` now, for ``recall --json``
    (``vectors.search``): an approximate first pass must be visible."""
    held = vector_matrix.held_state(index.path)
    remote = index.read_memo.get(_REMOTE)
    if held is None and remote is not None and remote[0]:
        return "the resident embedder's copy of the vectors"
    if held is None:
        return "sqlite-vec" if index.vec.available else "exact scan"
    rows, codes = held
    if rows >= vector_matrix.LISTS_MIN_ROWS:
        return (
            f"held in memory: int8 copy, {vector_lists.PROBE_SHARE:.0%} of {rows:,} rows "
            f"scored, then exact cosine of the best {vector_lists.POOL_PER_HIT} per hit"
        )
    if codes:
        return (
            f"held in memory: binary codes, then exact cosine of the nearest "
            f"{vector_matrix.pool_for(rows, 80):,} of {rows:,}"
        )
    return f"held in memory: exact scan of {rows:,}"


def held_leg(held: tuple, qvec: Vector, limit: int) -> list[fusion.LegHit] | None:
    """The vector leg from ``held_vectors``: the same exact cosine ranking as vec0's."""
    return scan_hits(held_scan(held, qvec, limit))


def held_scan(held: tuple, qvec: Vector, limit: int) -> vector_matrix.Scan | vector_lists.ListsScan:
    """A scan of ``held_vectors`` that several threads may work on (``Scan.work``)."""
    ids, mat, codes, keep = held
    if isinstance(mat, vector_lists.Lists):
        return vector_lists.ListsScan(mat, qvec, limit, keep)
    return vector_matrix.Scan(ids, mat, qvec, limit, keep=keep, codes=codes)


def scan_hits(
    scan: vector_matrix.Scan | vector_lists.ListsScan,
) -> list[fusion.LegHit] | None:
    """The vector leg from a scan, once all of it is done; None when the index changed under a
    compressed copy (the caller ranks through the index's connection instead)."""
    scan.work()  # whatever no thread has taken yet
    best = scan.best()
    if best is None:
        return None
    return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(best, 1)]


def vector_leg(
    index: Index, qvec: Vector, f: Filters, limit: int, *, count: bool = True, remote: object = None
) -> list[fusion.LegHit]:
    """The ``limit`` units closest to ``qvec`` under ``f``, by cosine (``count``: as for
    ``held_vectors``; ``remote``: as for ``stored_leg``)."""
    held = held_vectors(index, f, count=count)
    if held is not None:
        hits = held_leg(held, qvec, limit)
        if hits is not None:
            return hits
    return stored_leg(index, qvec, f, limit, remote=remote)


def vectors_of(index: Index, ids: list[int]) -> dict[int, np.ndarray]:
    """The stored vectors of the units ``ids`` (float32, as embedded), of those that have one:
    one lookup by id, whatever the index's size."""
    import numpy as np

    table = index.vector_table()
    if table is None or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = index.conn.execute(
        f"SELECT chunk_id, embedding FROM {table} WHERE chunk_id IN ({marks})", ids
    ).fetchall()
    return {r[0]: np.frombuffer(bytes(r[1]), dtype="<f4") for r in rows}


VEC0_MAX_K = 4096  # sqlite-vec's limit on a KNN query's k
_REMOTE = "vector_remote"  # the index's read_memo entry: how the last remote search went


def stored_leg(
    index: Index,
    qvec: Vector,
    f: Filters,
    limit: int,
    remote: object = None,
    answered: tuple | None = None,
) -> list[fusion.LegHit]:
    """The vector leg through the index's connection: sqlite-vec's KNN, or an exact NumPy scan
    of the filtered units; for a large index without filters, first the resident embedder's
    copy of its vectors (``remote``: the recall's embedder, when it can ask one; ``answered``:
    its answer, (hits or None, why), when the vector leg's thread asked it already)."""
    if answered is None:
        ask = remote_search(index, f, limit, remote)
        answered = ask(qvec) if ask is not None else None
    if answered is not None:
        hits = _remote_hits(index, answered)
        if hits is not None:
            return hits
    blob = _query_blob(qvec)
    # sqlite-vec's KNN refuses k above VEC0_MAX_K; a larger list (recall -k 2000 asks for 8000
    # candidates) is scored exactly instead, rather than losing the vector leg.
    if index.vec.available and not _selective(f) and limit <= VEC0_MAX_K:
        # Time and kind filters run inside sqlite-vec's KNN scan (metadata columns).
        cond, args = ["embedding MATCH ?", "k = ?"], [blob, limit]
        if f.since:
            cond.append("day >= ?")
            args.append(f.since)
            cond.append("evergreen = 0")
        if f.until:
            cond.append("day <= ?")
            args.append(f.until)
            cond.append("evergreen = 0")
        if f.kinds:
            cond.append("kind = ?")
            args.append("" if f.kinds[0] == "chunk" else f.kinds[0])
        rows = index.conn.execute(
            f"SELECT chunk_id, distance FROM chunk_vectors WHERE {' AND '.join(cond)} "
            "ORDER BY distance",
            args,
        ).fetchall()
        scored = [(r[0], 1.0 - float(r[1])) for r in rows]
        if f.since or f.until:
            # vec0 filters on the recorded day only; facts whose stated validity overlaps the
            # window (few, found through the partial index chunks_valid) are scored exactly
            # and merged in.
            (recorded, a1), (valid, a2) = time_window(f)
            where = f"{valid} AND NOT {recorded}" + (" AND c.kind = ?" if f.kinds else "")
            extra_args = a2 + a1 + ([f.kinds[0]] if f.kinds else [])
            ids = [
                r[0]
                for r in index.conn.execute(
                    f"SELECT c.id FROM chunks c WHERE {where}", extra_args
                ).fetchall()
            ]
            if ids:
                marks = ",".join("?" * len(ids))
                scored.extend(exact_scores(index, qvec, f"c.id IN ({marks})", ids, "chunk_vectors"))
        scored.sort(key=lambda r: (-r[1], r[0]))  # vec0 allows one ORDER BY; ties break by id
        return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(scored[:limit], 1)]
    # Exact scan over the filtered candidates (NumPy): used for selective filters, where the
    # candidate set is small, and when sqlite-vec is unavailable.
    where, args = filter_sql(f)
    table = index.vector_table() or "chunk_vectors_plain"
    scored = exact_scores(index, qvec, where, args, table)
    scored.sort(key=lambda r: (-r[1], r[0]))
    return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(scored[:limit], 1)]


def remote_search(
    index: Index, f: Filters, limit: int, remote: object
) -> Callable[[Vector], tuple] | None:
    """How to ask the resident embedder's copy of the index's vectors for this search (a
    function of the query's vector, answering (hits or None, why)), or None when it is not
    asked: filters, a list longer than vec0's, an index below ``REMOTE_MIN_ROWS``. It touches no
    connection, so the vector leg's thread may ask while the lexical leg ranks."""
    if remote is None or f.active or limit > VEC0_MAX_K or not index.vec.available:
        return None
    search = getattr(remote, "search_vectors", None)
    if search is None or index.vector_counts()["vectors"] < vector_matrix.REMOTE_MIN_ROWS:
        return None
    path = index.path
    return lambda qvec: search(path, qvec, limit)


def _remote_hits(index: Index, answered: tuple) -> list[fusion.LegHit] | None:
    """The vector leg from the resident embedder's answer, or None (vec0 answers; why is kept
    for ``vector_notes``)."""
    found, why = answered
    index.read_memo[_REMOTE] = (found is not None, why)
    if found is None:
        return None
    return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(found, 1)]


def vector_notes(index: Index) -> list[str]:
    """What ``recall --json`` must say of this recall's vector leg: that the resident embedder
    could not answer it for a large index (vec0 scanned every vector instead)."""
    ok, why = index.read_memo.get(_REMOTE, (True, ""))
    if ok:
        return []
    return [f"vector leg: sqlite-vec scanned every vector; the resident embedder's copy: {why}"]


def _query_blob(qvec: Vector) -> bytes:
    """The query's vector as sqlite-vec takes it (little-endian float32). A vector from another
    process comes as an ``array.array("f")``: a cold hybrid recall then never imports NumPy
    (~60 ms of its ~0.2 s)."""
    import array
    import sys

    if isinstance(qvec, array.array) and qvec.typecode == "f" and sys.byteorder == "little":
        return qvec.tobytes()
    import numpy as np

    return np.asarray(qvec, dtype="<f4").tobytes()


# A filtered exact scan of at most this many units in a process without NumPy is scored in
# Python (a few ms; importing NumPy for it costs 60-150 ms of a cold process: the prompt hook's
# search of MEMORY.md alone).
_PLAIN_SCAN_MAX = 256


def exact_scores(
    index: Index, qvec: Vector, where: str, args: list, table: str
) -> list[tuple[int, float]]:
    """Cosine similarity of the query with every embedded unit matching ``where``."""
    rows = index.conn.execute(
        f"SELECT c.id, v.embedding FROM chunks c JOIN {table} v ON v.chunk_id = c.id "
        "WHERE c.embedded = 1" + (f" AND {where}" if where else ""),
        args,
    ).fetchall()
    if not rows:
        return []
    import sys

    if len(rows) <= _PLAIN_SCAN_MAX and "numpy" not in sys.modules:
        import array
        import operator

        q = [float(x) for x in qvec]
        out = []
        for r in rows:
            vec = array.array("f", bytes(r[1]))
            if sys.byteorder != "little":
                vec.byteswap()
            out.append((r[0], sum(map(operator.mul, vec, q))))
        return out
    import numpy as np

    mat = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), -1)
    sims = vector_matrix.cosines(mat, np.asarray(qvec, dtype=np.float32))
    return [(r[0], float(s)) for r, s in zip(rows, sims, strict=True)]
