"""The index's read queries: every SELECT that recall, entities and retain ask of the index.

``index.py`` owns the schema and the writes; this module owns the questions. Filters become SQL
in exactly one place (``filter_sql``), so "recorded in the window, or its stated validity overlaps
it" is written once.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import bm25_topk, fusion, vector_matrix
from .index import Filters, Index
from .textnorm import LexQuery

if TYPE_CHECKING:
    import numpy as np

# The columns of a unit that recall reads, as ``row["name"]``.
COLUMNS = (
    "c.id, c.path, c.start_line, c.end_line, c.heading, c.text, c.kind, c.day, c.entities, "
    "c.confidence, c.valid_from, c.valid_to"
)
_OPEN_START, _OPEN_END = "0000-00-00", "9999-99-99"
MEMORY, SESSIONS = "memory", "sessions"  # the values of Filters.source


# ---------------------------------------------------------------------------- filters


def _recorded_in(lo: str, hi: str) -> tuple[str, list]:
    return "(c.day >= ? AND c.day <= ?)", [lo, hi]


def _window(f: Filters) -> tuple[tuple[str, list], tuple[str, list]]:
    """(recorded in ``f``'s time window, valid during it): each a SQL condition and its args."""
    lo, hi = f.since or _OPEN_START, f.until or _OPEN_END
    return _recorded_in(lo, hi), _valid_in(lo, hi)


def _valid_in(lo: str, hi: str) -> tuple[str, list]:
    # The validity a fact states ("Currently in Marrakech (Nov 27–Dec 1)") overlaps the window.
    return (
        f"(c.valid_from IS NOT NULL AND c.valid_from <= ? AND COALESCE(c.valid_to, '{_OPEN_END}') >= ?)",
        [hi, lo],
    )


def filter_sql(f: Filters) -> tuple[str, list]:
    """``f`` as a WHERE condition over ``chunks c`` (empty when nothing is filtered)."""
    parts, args = [], []
    if f.since or f.until:
        # In the window if recorded in it, or if the validity a fact states overlaps it
        # ("Currently in Marrakech (Nov 27–Dec 1)" written on Nov 20 answers "--since 2025-11-30").
        (recorded, a1), (valid, a2) = _window(f)
        parts.append(f"({recorded} OR {valid})")
        args.extend(a1 + a2)
    if f.facts_only:
        parts.append("c.kind IS NOT NULL")
    if f.kinds:
        kinds = [k for k in f.kinds if k != "chunk"]
        sub = []
        if kinds:
            sub.append(f"c.kind IN ({','.join('?' * len(kinds))})")
            args.extend(kinds)
        if "chunk" in f.kinds:
            sub.append("c.kind IS NULL")
        parts.append("(" + " OR ".join(sub) + ")")
    if f.entity:
        parts.append(
            "(c.id IN (SELECT chunk_id FROM chunk_entities WHERE folded = ?) "
            "OR lower(c.path) = lower(?))"
        )
        args.extend([f.entity.casefold(), f"bank/entities/{f.entity}.md"])
    if f.as_of:
        # Recorded by then (evergreen pages are timeless), and not expired by then.
        parts.append("(c.day IS NULL OR c.day <= ?) AND (c.valid_to IS NULL OR c.valid_to >= ?)")
        args.extend([f.as_of, f.as_of])
    if f.source:
        # Transcripts are the units under sessions/ (sessions.py); everything else is the Markdown.
        glob = "c.path GLOB 'sessions/*'"
        parts.append(glob if f.source == SESSIONS else f"NOT {glob}")
    if f.path_prefix:
        parts.append("c.path LIKE ? ESCAPE '\\'")
        esc = f.path_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        args.append(esc + "%")
    return (" AND ".join(parts), args)


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
        best = bm25_topk.top(index, alternatives.split(" OR "), limit, ranked)
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
    relaxed = False
    if rows and q.all_terms != q.any_terms:
        probe = (
            "SELECT 1 FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? " + (f"AND {where} " if where else "") + "LIMIT 1"
        )
        relaxed = index.conn.execute(probe, (q.all_terms, *args)).fetchone() is None
    return [
        fusion.LegHit(row[0], i, fusion.bm25_to_unit(row[1]), row[0] in strong)
        for i, row in enumerate(rows, 1)
    ], relaxed


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
    total = index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] or 1
    marks = ",".join("?" * len(ids))
    weight: dict[str, float] = {}
    matched: dict[int, float] = {}
    for term in q.terms:
        df = bm25_topk.phrase_rows(index, term)
        weight[term] = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        # Which of the units hold the term: walking its rows costs ~0.2 µs a row; asking FTS5
        # for each unit costs ~0.1 ms a unit (measured at 100k units), so the cheaper one.
        unary = "+" if df <= _WALK_ROWS_PER_UNIT * len(ids) else ""
        for (rowid,) in index.conn.execute(
            f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND {unary}rowid IN ({marks})",
            (term, *ids),
        ):
            matched[rowid] = matched.get(rowid, 0.0) + weight[term]
    whole = sum(weight.values()) or 1.0
    return {cid: matched.get(cid, 0.0) / whole for cid in ids}


# A term's rows are walked (its whole doclist, ``+rowid IN`` keeping SQLite from handing the ids
# to FTS5) when it holds fewer than this many rows per unit asked about; else FTS5 seeks each id.
_WALK_ROWS_PER_UNIT = 500


def _selective(f: Filters) -> bool:
    return bool(
        f.entity or f.path_prefix or len(f.kinds) > 1 or f.facts_only or f.as_of or f.source
    )


def held_vectors(index: Index, f: Filters) -> tuple | None:
    """The index's vectors as this process holds them in memory (vector_matrix.py), when they
    can answer a search under ``f``; else None. (ids, matrix, rows to keep or None): with no
    filter every row counts; under a time window only the rows vec0's KNN would search (units
    recorded in the window, `stored_leg`) and the facts whose stated validity overlaps it, read
    here through ``chunks_day`` and ``chunks_valid``, so one in-memory scan answers what vec0
    and an exact scan answered (at 100k units, ~27 ms of vec0 for a 30-day window). The scan
    itself touches no connection of ``index``, so a thread may run it while the lexical leg
    uses it."""
    if not index.vec.available or _selective(f) or f.kinds:
        return None
    windowed = bool(f.since or f.until)
    # Only unfiltered searches count towards loading the matrix (``vector_matrix.matrix``).
    held = vector_matrix.matrix(index, count=not windowed)
    if held is None or not windowed:
        return None if held is None else (*held, None)
    (recorded, a1), (valid, a2) = _window(f)
    window = [
        r[0]
        for r in index.conn.execute(
            f"SELECT c.id FROM chunks c WHERE {recorded} "
            f"UNION ALL SELECT c.id FROM chunks c WHERE {valid} AND NOT {recorded}",
            a1 + a2 + a1,
        )
    ]
    return (*held, vector_matrix.rows_of(held[0], window))


def held_leg(held: tuple, qvec, limit: int) -> list[fusion.LegHit]:
    """The vector leg from ``held_vectors``: the same exact cosine ranking as vec0's."""
    return scan_hits(held_scan(held, qvec, limit))


def held_scan(held: tuple, qvec, limit: int) -> vector_matrix.Scan:
    """A scan of ``held_vectors`` that several threads may work on (``Scan.work``)."""
    ids, mat, keep = held
    return vector_matrix.Scan(ids, mat, qvec, limit, keep=keep)


def scan_hits(scan: vector_matrix.Scan) -> list[fusion.LegHit]:
    """The vector leg from a scan, once all of it is done."""
    scan.work()  # whatever no thread has taken yet
    return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(scan.best(), 1)]


def vector_leg(index: Index, qvec: np.ndarray, f: Filters, limit: int) -> list[fusion.LegHit]:
    """The ``limit`` units closest to ``qvec`` under ``f``, by cosine."""
    held = held_vectors(index, f)
    if held is not None:
        return held_leg(held, qvec, limit)
    return stored_leg(index, qvec, f, limit)


def stored_leg(index: Index, qvec: np.ndarray, f: Filters, limit: int) -> list[fusion.LegHit]:
    """The vector leg through the index's connection: sqlite-vec's KNN, or an exact NumPy scan
    of the filtered units."""
    import numpy as np  # lazily: lexical-only recall never needs it

    blob = np.asarray(qvec, dtype="<f4").tobytes()
    if index.vec.available and not _selective(f):
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
            (recorded, a1), (valid, a2) = _window(f)
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


def exact_scores(index: Index, qvec, where: str, args: list, table: str) -> list[tuple[int, float]]:
    """Cosine similarity of the query with every embedded unit matching ``where``."""
    import numpy as np

    rows = index.conn.execute(
        f"SELECT c.id, v.embedding FROM chunks c JOIN {table} v ON v.chunk_id = c.id "
        "WHERE c.embedded = 1" + (f" AND {where}" if where else ""),
        args,
    ).fetchall()
    if not rows:
        return []
    mat = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), -1)
    sims = vector_matrix.cosines(mat, np.asarray(qvec, dtype=np.float32))
    return [(r[0], float(s)) for r, s in zip(rows, sims, strict=True)]


# ---------------------------------------------------------------------------- units


def rows_around(index: Index, ids: list[int]) -> dict:
    """The units ``ids`` and their neighbours (id ± 1: a file's units are stored in order), by id."""
    want = sorted({n for cid in ids for n in (cid - 1, cid, cid + 1)})
    rows = {}
    for i in range(0, len(want), 500):
        part = want[i : i + 500]
        for r in index.conn.execute(
            f"SELECT {COLUMNS} FROM chunks c WHERE c.id IN ({','.join('?' * len(part))})", part
        ):
            rows[r[0]] = r
    return rows


def chunks_near(index: Index, row, reach: int = 8) -> dict:
    """The plain chunks of ``row``'s file within ``reach`` ids of it, by id."""
    near = index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.id BETWEEN ? AND ? AND c.path = ? "
        "AND c.kind IS NULL ORDER BY c.id",
        (row["id"] - reach, row["id"] + reach, row["path"]),
    ).fetchall()
    return {r["id"]: r for r in near}


def unit_count(index: Index, f: Filters | None = None) -> int:
    """How many units the index holds (matching ``f``, if given)."""
    where, args = filter_sql(f) if f is not None else ("", [])
    sql = "SELECT count(*) FROM chunks c" + (f" WHERE {where}" if where else "")
    return index.conn.execute(sql, args).fetchone()[0]


def entity_page(index: Index, entity: str):
    """The first unit of ``bank/entities/ENTITY.md`` (any case), or None."""
    # The case-blind match runs over the files table (one row per file), then the chunks come
    # by their path index: lower(path) over every chunk cost ~25-100 ms a recall at 100k units.
    paths = [
        p
        for (p,) in index.conn.execute(
            "SELECT path FROM files WHERE lower(path) = lower(?)", (f"bank/entities/{entity}.md",)
        )
    ]
    if not paths:
        return None
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.path IN ({','.join('?' * len(paths))}) "
        "AND c.kind IS NULL ORDER BY c.start_line LIMIT 1",
        paths,
    ).fetchone()


def transcript_details(
    index: Index, path: str, start: int, end: int
) -> tuple[str | None, str | None]:
    """(session id, when its first message in lines ``start``..``end`` was said) of a transcript."""
    row = index.conn.execute(
        "SELECT f.session_id, min(c.said_at) FROM files f LEFT JOIN chunks c ON c.path = f.path "
        "AND c.start_line BETWEEN ? AND ? WHERE f.path = ?",
        (start, end, path),
    ).fetchone()
    return (row[0], row[1]) if row else (None, None)


# ---------------------------------------------------------------------------- supersession


def fact_id(index: Index, path: str, line: int) -> int | None:
    row = index.conn.execute(
        "SELECT id FROM chunks WHERE path = ? AND start_line = ? AND kind IS NOT NULL",
        (path, line),
    ).fetchone()
    return row[0] if row else None


def later_facts(
    index: Index,
    *,
    kind: str,
    entities: tuple[str, ...],
    after: str,
    as_of: str | None,
    not_text: str,
    limit: int,
) -> list:
    """Facts of ``kind`` mentioning any of ``entities``, recorded after ``after`` (and by
    ``as_of``), newest first: (id, path, start_line, end_line, text, day, entities)."""
    folded = [e.casefold() for e in entities]
    return index.conn.execute(
        "SELECT DISTINCT c.id, c.path, c.start_line, c.end_line, c.text, c.day, c.entities "
        "FROM chunks c "
        "JOIN chunk_entities e ON e.chunk_id = c.id "
        f"WHERE e.folded IN ({','.join('?' * len(folded))}) AND c.kind = ? AND c.day > ? "
        "AND (? IS NULL OR c.day <= ?) AND c.text != ? ORDER BY c.day DESC, c.id DESC "
        "LIMIT ?",
        (*folded, kind, after, as_of, as_of, not_text, limit),
    ).fetchall()


# ---------------------------------------------------------------------------- entities


def entity_pages(index: Index) -> list[str]:
    """Paths of the indexed entity pages (``bank/entities/*.md``)."""
    return [
        p
        for (p,) in index.conn.execute(
            "SELECT path FROM files WHERE path LIKE 'bank/entities/%.md'"
        )
    ]


def entity_names(index: Index) -> list[str]:
    """Every entity name a fact mentions, as written."""
    return [e for (e,) in index.conn.execute("SELECT DISTINCT entity FROM chunk_entities")]


def entity_mentions(index: Index) -> list[tuple[str, str, int, str | None]]:
    """(name, folded name, facts mentioning it, last day mentioned), most mentioned first."""
    return index.conn.execute(
        "SELECT e.entity, e.folded, count(DISTINCT c.id), max(c.day) FROM chunk_entities e "
        "JOIN chunks c ON c.id = e.chunk_id WHERE c.kind IS NOT NULL GROUP BY e.folded "
        "ORDER BY count(DISTINCT c.id) DESC, e.folded"
    ).fetchall()


# ---------------------------------------------------------------------------- facts


def facts_stating(
    index: Index, kind: str, content: str
) -> list[tuple[str, int, str, float | None]]:
    """(path, line, entities, confidence) of every fact of ``kind`` stating exactly ``content``."""
    return index.conn.execute(
        "SELECT path, start_line, entities, confidence FROM chunks WHERE kind = ? AND text = ? "
        "ORDER BY path, start_line",
        (kind, content),
    ).fetchall()


# ---------------------------------------------------------------------------- links

LINK_COLUMNS = (
    "l.src, l.line, l.col, l.syntax, l.type, l.target, l.anchor, l.label, l.text, l.context, "
    "l.dst, l.status, l.candidates"
)


def links_from(index: Index, path: str, lines: tuple[int, int] | None = None) -> list:
    """The links written in ``path`` (within ``lines``, inclusive, if given), in order."""
    sql = f"SELECT {LINK_COLUMNS} FROM links l WHERE l.src = ?"
    args: list = [path]
    if lines is not None:
        sql += " AND l.line BETWEEN ? AND ?"
        args += list(lines)
    return index.conn.execute(sql + " ORDER BY l.line, l.col", args).fetchall()


def links_to(index: Index, path: str) -> list:
    """The links that point at ``path`` (its backlinks), by source and line."""
    return index.conn.execute(
        f"SELECT {LINK_COLUMNS} FROM links l WHERE l.dst = ? ORDER BY l.src, l.line, l.col",
        (path,),
    ).fetchall()


def all_links(index: Index) -> list:
    """Every link of the workspace, by source and line."""
    return index.conn.execute(
        f"SELECT {LINK_COLUMNS} FROM links l ORDER BY l.src, l.line, l.col"
    ).fetchall()


def link_counts(index: Index) -> dict[str, int]:
    """Links in the index: all, resolved, and the broken and ambiguous ones `check` reports
    (a mention of an entity without a page is neither)."""
    row = index.conn.execute(
        "SELECT count(*), sum(status = 'ok'), "
        "sum(status = 'unresolved' AND syntax != 'mention'), sum(status = 'ambiguous') FROM links"
    ).fetchone()
    return {
        "total": row[0],
        "resolved": row[1] or 0,
        "broken": row[2] or 0,
        "ambiguous": row[3] or 0,
    }


def indexed_paths(index: Index) -> list[str]:
    return [p for (p,) in index.conn.execute("SELECT path FROM files ORDER BY path")]


def unit_at(index: Index, path: str, line: int | None = None, heading: str | None = None):
    """The plain unit of ``path`` holding ``line``; else the first unit under a heading that ends
    with ``heading``; else the note's first unit. None if the note has no units."""
    if line is not None:
        row = index.conn.execute(
            f"SELECT {COLUMNS} FROM chunks c WHERE c.path = ? AND c.start_line <= ? "
            "AND c.end_line >= ? ORDER BY c.kind IS NOT NULL, c.start_line LIMIT 1",
            (path, line, line),
        ).fetchone()
        if row is not None:
            return row
    if heading:
        want = heading.casefold()
        for row in index.conn.execute(
            f"SELECT {COLUMNS} FROM chunks c WHERE c.path = ? AND c.kind IS NULL "
            "ORDER BY c.start_line",
            (path,),
        ):
            last = row["heading"].rsplit(" > ", 1)[-1].casefold()
            if last == want:
                return row
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.path = ? ORDER BY c.kind IS NOT NULL, "
        "c.start_line LIMIT 1",
        (path,),
    ).fetchone()
