"""Each term's rows in impact order, with their lengths, kept beside the full-text index.

``recall/bm25_topk.py`` ranks the lexical leg's best rows at a large index from these lists
instead of bm25() (issue 43): bm25() must walk every row of every common word of a question,
with its positions, and score each row the expression yields (a word in 42% of 1M rows costs
~28 ms of CPU before a single row is scored). Here a term's rows are kept in *tiers* of their
impact, best first, so a question reads its words' best rows first and stops once the bounds
prove its top k.

A row's impact for a term is ``g = tfw * (k1 + 1) / (tfw + k1 * (1 - b + b * dl / A))``: ``tfw``
the term's column-weighted count in the row (body 1, heading 0.4, context 0.5: the ranking's
weights), ``dl`` the row's length in tokens (all columns, as bm25() counts it) and ``A`` a
reference average length (meta ``term_lists``, the index's when the lists were made). bm25() adds ``idf * g``
at the index's current average length; ``g`` there is at most ``g`` at ``A`` times
``max(1, avgdl / A)`` (term_bounds.py says why), so the largest ``g`` of a tier bounds every row
in it. Tier ``j`` holds the rows whose ``g`` at ``A`` lies in ``((k1 + 1) * r^(j+1), (k1 + 1) *
r^j]`` (r = ``RATIO``, the last tier everything below).

Table ``term_lists``: one row per *part* of a tier, at most ``PART`` rows of the index sorted by
rowid, three little-endian arrays: rowids (uint32), ``tfw * 10`` (uint16: the weights are
tenths) and ``dl`` (uint16). ``terms`` numbers the terms. A part says its first and last rowid,
its row count (a term's row count, its IDF's, is their sum) and its largest ``g`` (never lowered
when a row leaves: still a bound).

A term's newest rows wait in its *tail* (tier ``TAIL``, one part, any impact: read like a tier
whose bound is its largest impact) until ``PART`` of them go to their tiers: a batch of rows then
costs a statement or two per term, not per term and tier.

An index keeps no lists below ``FROM_ROWS`` rows (bm25_topk.MIN_ROWS: no question is ranked
from them there, so everyday indexes pay nothing); the batch whose rowids reach it makes them
from the index (``_build``, as ``rebuild`` does). From then on every row chunks_fts receives
passes through ``add`` (from term_bounds.note, which has just cut it with FTS5's own tokenizer)
and every row it loses through ``forget``, in the same transaction; a full rebuild makes a new
index and with it new lists. An index whose rows do not
fit the arrays (a rowid past 2^32, a row of 65,536 tokens) says so in its meta record and is
ranked by bm25() alone.
"""

from __future__ import annotations

import bisect
import json
import sys
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING

from clawmem.store import db

if TYPE_CHECKING:
    import numpy as np

K1 = 1.2
B = 0.75
# The ranking's column weights (term_bounds.WEIGHTS) in tenths: tfw * 10 is then an integer.
TENTHS = (10, 4, 5)
TIERS = 64
RATIO = 0.95
# An index keeps no lists below this many rows (bm25_topk.MIN_ROWS: below it no question is
# ranked from them, so everyday indexes pay nothing for them).
FROM_ROWS = 20_000
# A term's newest rows wait in one part of this tier, whatever their impact, until PART of them
# go to their tiers (``_to_tail``); read like any tier, its bound the largest impact in it.
TAIL = -1
PART = 1024  # rows a part holds: what a new row costs to write (one part rewritten per term)
META_KEY = "term_lists"
_U16 = 65535
_U32 = (1 << 32) - 1


def reference(conn: db.Connection) -> dict | None:
    """The meta record {"avgdl": A, "ok": bool}, or None when this index keeps no lists."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    except db.OperationalError:
        return None
    return json.loads(row[0]) if row else None


def averages(conn: db.Connection) -> tuple[int, float]:
    """(rows, average row length in tokens) as bm25() reads them: chunks_fts's averages record
    (its first varint the row count, then each column's total tokens)."""
    row = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0.0
    data, values, i = bytes(row[0]), [], 0
    while i < len(data):
        value = 0
        for j in range(9):  # SQLite's varint: 7 bits a byte, big-endian; the 9th byte whole
            byte = data[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    n_rows = values[0] if values else 0
    return n_rows, (sum(values[1:]) / n_rows if n_rows else 0.0)


def _set_reference(conn: db.Connection, avgdl: float, ok: bool) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (META_KEY, json.dumps({"avgdl": avgdl, "ok": ok})),
    )


# Tier j's lower edge is (k1 + 1) * RATIO^(j+1); ascending, for bisect and numpy alike.
_EDGES = [(K1 + 1.0) * RATIO**j for j in range(TIERS - 1, 0, -1)]


def g_of(tfw10: int, dl: int, avgdl: float) -> float:
    """A row's impact ``g`` for a term, from ``tfw * 10`` and the row's length."""
    tfw = tfw10 / 10.0
    return tfw * (K1 + 1.0) / (tfw + K1 * (1.0 - B + B * dl / avgdl))


def tier_of_g(g: float) -> int:
    """The tier of impact ``g``: how many tier edges lie at or above it (compared, never
    computed by a logarithm: the writer and numpy's reader agree to the last bit)."""
    return len(_EDGES) - bisect.bisect_left(_EDGES, g)


def impact(tfw10: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
    """``g_of`` over arrays (float64): the same operations in the same order."""
    tfw = tfw10.astype("f8") / 10.0
    return tfw * (K1 + 1.0) / (tfw + K1 * (1.0 - B + B * dl.astype("f8") / avgdl))


def tier_of(g: np.ndarray) -> np.ndarray:
    """``tier_of_g`` over an array."""
    import numpy as np

    return len(_EDGES) - np.searchsorted(np.array(_EDGES), g, "left")


def _term_ids(conn: db.Connection, terms: Iterable[str], create: bool) -> dict[str, int]:
    terms = list(terms)
    out: dict[str, int] = {}
    for start in range(0, len(terms), 500):
        chunk = terms[start : start + 500]
        if create:
            conn.executemany("INSERT OR IGNORE INTO terms(term) VALUES (?)", [(t,) for t in chunk])
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT term, id FROM terms WHERE term IN ({marks})", chunk))
    return out


def term_ids(conn: db.Connection, terms: Iterable[str]) -> dict[str, int]:
    """The id of each of ``terms`` some row holds or held (a term never seen has none)."""
    return _term_ids(conn, terms, create=False)


# ---------------------------------------------------------------- writing


Postings = list[tuple[int, int, int]]  # (rowid, tfw * 10, length), ascending rowids


def add(conn: db.Connection, tf: dict[tuple[str, int], list[int]], dl: dict[int, int]) -> None:
    """Put rows just given to chunks_fts into their terms' lists, inside the caller's
    transaction. ``tf``: (term, rowid) -> [body, heading, context] counts; ``dl``: rowid ->
    tokens (term_bounds.counts). An index keeps no lists until its rowids reach ``FROM_ROWS``;
    the batch that takes them there makes the lists from the index (``_build``). Plain Python: an index
    written by a lexical recall's sync never loads numpy."""
    if not tf:
        return
    ref = reference(conn)
    if ref is None:
        # The largest rowid stands for the row count: FTS5 writes its own count at the
        # transaction's end, and counting chunks would cost a scan of it on every batch.
        (top,) = conn.execute("SELECT max(id) FROM chunks").fetchone()
        if (top or 0) >= FROM_ROWS:
            _build(conn, max(averages(conn)[1], sum(dl.values()) / len(dl)))
        return
    if not ref["ok"]:
        return
    ids = _term_ids(conn, sorted({t for t, _ in tf}), create=True)
    groups: dict[int, Postings] = {}
    for (term, doc), (body, head, ctx) in tf.items():
        w = TENTHS[0] * body + TENTHS[1] * head + TENTHS[2] * ctx
        if not (0 <= doc <= _U32 and w <= _U16 and dl[doc] <= _U16):
            _set_reference(conn, ref["avgdl"], False)  # the lexical leg falls back to bm25()
            return
        groups.setdefault(ids[term], []).append((doc, w, dl[doc]))
    for tid, rows in sorted(groups.items()):
        _to_tail(conn, tid, sorted(rows), ref["avgdl"])


def _to_tail(conn: db.Connection, term: int, rows: Postings, avgdl: float) -> None:
    """Rows join their term's tail (tier ``TAIL``: its newest rows, whatever their impact, one
    part); a tail of PART rows goes to the tiers. A batch of rows then costs one or two
    statements per term, not per term and tier: most of what indexing a row costs here."""
    tail = conn.execute(
        f"SELECT {_PART_COLUMNS} FROM term_lists WHERE term = ? AND tier = ?", (term, TAIL)
    ).fetchone()
    g = max(g_of(w, n, avgdl) for _, w, n in rows)
    if tail is not None and rows[0][0] > tail[2] and tail[3] + len(rows) < PART:
        _extend(conn, (tail[0], *tail[3:8]), rows, g)  # the usual append
        return
    merged = rows if tail is None else sorted(_postings(tail) + rows)
    if len(merged) < PART:
        if tail is None:
            _write(conn, term, TAIL, None, merged, g)
        else:
            _write(conn, term, TAIL, tail[0], merged, max(g, float(tail[4])))
        return
    if tail is not None:
        conn.execute("DELETE FROM term_lists WHERE id = ?", (tail[0],))
    tiers: dict[int, Postings] = {}
    for r in merged:
        tiers.setdefault(tier_of_g(g_of(r[1], r[2], avgdl)), []).append(r)
    for tier, part in sorted(tiers.items()):
        _insert(conn, term, tier, part, avgdl)


def forget(conn: db.Connection, tf: dict[tuple[str, int], list[int]], dl: dict[int, int]) -> None:
    """Take rows chunks_fts just lost out of their terms' lists, inside the caller's
    transaction: ``tf`` and ``dl`` as ``add`` takes them, cut from the values chunks_fts was
    told to delete (term_bounds.counts)."""
    ref = reference(conn)
    if not tf or ref is None or not ref["ok"]:
        return
    ids = term_ids(conn, {t for t, _ in tf})
    for (term, doc), (body, head, ctx) in tf.items():
        if term in ids:
            w = TENTHS[0] * body + TENTHS[1] * head + TENTHS[2] * ctx
            _remove(conn, ids[term], tier_of_g(g_of(w, dl[doc], ref["avgdl"])), doc)


_PART_COLUMNS = "id, first, last, n, gmax, docs, tfw, dl"


def _part_at(conn: db.Connection, term: int, tier: int, d: int) -> tuple | None:
    """The part of (term, tier) whose rows ``d`` falls among: the last one starting at or before
    ``d``, else the first."""
    q = f"SELECT {_PART_COLUMNS} FROM term_lists WHERE term = ? AND tier = ? "
    row = conn.execute(q + "AND first <= ? ORDER BY first DESC LIMIT 1", (term, tier, d)).fetchone()
    if row is None:
        row = conn.execute(q + "ORDER BY first LIMIT 1", (term, tier)).fetchone()
    return tuple(row) if row is not None else None


def _next_first(conn: db.Connection, term: int, tier: int, first: int) -> int | None:
    row = conn.execute(
        "SELECT first FROM term_lists WHERE term = ? AND tier = ? AND first > ? "
        "ORDER BY first LIMIT 1",
        (term, tier, first),
    ).fetchone()
    return None if row is None else int(row[0])


# array's 4-byte unsigned code (uint32 on every platform Python supports, "L" on a few).
_U4 = "I" if array("I").itemsize == 4 else "L"


def _postings(part: tuple) -> Postings:
    docs, tfw, lens = array(_U4), array("H"), array("H")
    docs.frombytes(part[5])
    tfw.frombytes(part[6])
    lens.frombytes(part[7])
    if sys.byteorder == "big":
        for a in (docs, tfw, lens):
            a.byteswap()
    return list(zip(docs, tfw, lens, strict=True))


def _blob(code: str, values: Iterable[int]) -> bytes:
    a = array(code, values)
    if sys.byteorder == "big":
        a.byteswap()
    return a.tobytes()


def _extend(conn: db.Connection, part: tuple, rows: Postings, g: float) -> None:
    """Append ``rows`` (newer than every row of the part, ``g`` their largest impact) to the
    part ``(id, n, gmax, docs, tfw, dl)``: its blobs extended as they are, no row decoded."""
    pid, n, gmax, docs, tfw, dl = part
    conn.execute(
        "UPDATE term_lists SET last = ?, n = ?, gmax = ?, docs = ?, tfw = ?, dl = ? WHERE id = ?",
        (
            rows[-1][0],
            n + len(rows),
            max(float(gmax), g),
            bytes(docs) + _blob(_U4, (r[0] for r in rows)),
            bytes(tfw) + _blob("H", (r[1] for r in rows)),
            bytes(dl) + _blob("H", (r[2] for r in rows)),
            pid,
        ),
    )


def _write(
    conn: db.Connection, term: int, tier: int, part_id: int | None, rows: Postings, gmax: float
) -> None:
    """Store sorted rows as parts of at most PART rows: the first in ``part_id`` (None: a new
    part; no rows deletes it), the rest as new parts."""
    if not rows:
        if part_id is not None:
            conn.execute("DELETE FROM term_lists WHERE id = ?", (part_id,))
        return
    for s in range(0, len(rows), PART):
        chunk = rows[s : s + PART]
        values = (
            term,
            tier,
            chunk[0][0],
            chunk[-1][0],
            len(chunk),
            gmax,
            _blob(_U4, (r[0] for r in chunk)),
            _blob("H", (r[1] for r in chunk)),
            _blob("H", (r[2] for r in chunk)),
        )
        if s == 0 and part_id is not None:
            conn.execute(
                "UPDATE term_lists SET term = ?, tier = ?, first = ?, last = ?, n = ?, gmax = ?, "
                "docs = ?, tfw = ?, dl = ? WHERE id = ?",
                (*values, part_id),
            )
        else:
            conn.execute(
                "INSERT INTO term_lists(term, tier, first, last, n, gmax, docs, tfw, dl) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )


def _insert(conn: db.Connection, term: int, tier: int, rows: Postings, avgdl: float) -> None:
    last = conn.execute(
        "SELECT id, last, n, gmax, docs, tfw, dl FROM term_lists WHERE term = ? AND tier = ? "
        "ORDER BY first DESC LIMIT 1",
        (term, tier),
    ).fetchone()
    if last is None or rows[0][0] > last[1]:
        # The usual case: rows newer than every row of the tier. The last part grows (its
        # blobs extended as they are, no row decoded) or, full, a new part starts. Two
        # statements: this is most of what indexing a row costs here.
        g = max(g_of(w, n, avgdl) for _, w, n in rows)
        if last is None or last[2] >= PART:
            _write(conn, term, tier, None, rows, g)
            return
        room = rows[: PART - last[2]]
        _extend(conn, (last[0], *last[2:7]), room, g)
        if len(room) < len(rows):
            rest = rows[len(room) :]
            _write(conn, term, tier, None, rest, max(g_of(w, n, avgdl) for _, w, n in rest))
        return
    i = 0
    while i < len(rows):
        part = _part_at(conn, term, tier, rows[i][0])
        if part is None:
            _write(conn, term, tier, None, rows[i:], max(g_of(w, n, avgdl) for _, w, n in rows[i:]))
            return
        nxt = _next_first(conn, term, tier, part[1])
        j = len(rows) if nxt is None else bisect.bisect_left(rows, (nxt,))
        j = max(j, i + 1)  # before the first part: it joins the first part
        new = rows[i:j]
        g = max(g_of(w, n, avgdl) for _, w, n in new)
        if part[3] >= PART and new[0][0] > part[2]:
            # A full part and rows after it (the usual append): a new part, the old one intact.
            _write(conn, term, tier, None, new, g)
        else:
            _write(conn, term, tier, part[0], sorted(_postings(part) + new), max(part[4], g))
        i = j


def _remove(conn: db.Connection, term: int, tier: int, d: int) -> None:
    parts = [_part_at(conn, term, tier, d)]
    if parts[0] is None or not (parts[0][1] <= d <= parts[0][2]):
        # Not where its impact puts it (it cannot be, but a list must never keep a row that
        # left): every part of the term that spans it.
        parts = [
            tuple(r)
            for r in conn.execute(
                f"SELECT {_PART_COLUMNS}, tier FROM term_lists "
                "WHERE term = ? AND first <= ? AND last >= ?",
                (term, d, d),
            )
        ]
    for part in parts:
        if part is None:
            continue
        rows = _postings(part)
        keep = [r for r in rows if r[0] != d]
        if len(keep) < len(rows):
            _write(conn, term, part[8] if len(part) > 8 else tier, part[0], keep, part[4])
            return


# ---------------------------------------------------------------- reading


def tiers(conn: db.Connection, term: int) -> list[tuple[int, int, float]]:
    """(tier, rows, largest g at the reference length) of each non-empty tier, best first."""
    return [
        (int(t), int(n), float(g))
        for t, n, g in conn.execute(
            "SELECT tier, sum(n), max(gmax) FROM term_lists WHERE term = ? GROUP BY tier "
            "ORDER BY tier",
            (term,),
        )
    ]


def _gather(
    rows: Iterable[tuple[bytes, bytes, bytes]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    # Each column's blobs joined as bytes, then read as one array: a common word's unread tiers
    # are hundreds of parts, and three small arrays a part cost more than the join (read-only
    # arrays: no caller writes into them).
    got = list(rows)
    docs, tfw, lens = zip(*got, strict=True) if got else ((), (), ())
    return (
        np.frombuffer(b"".join(docs), "<u4"),
        np.frombuffer(b"".join(tfw), "<u2"),
        np.frombuffer(b"".join(lens), "<u2"),
    )


def read(conn: db.Connection, term: int, tier: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One tier's rows: (rowids, tfw * 10, lengths) as uint32, uint16, uint16 arrays."""
    return _gather(
        conn.execute(
            "SELECT docs, tfw, dl FROM term_lists WHERE term = ? AND tier = ?", (term, tier)
        )
    )


def read_from(
    conn: db.Connection, term: int, tier: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of every tier from ``tier`` on, as ``read`` gives them: one query."""
    return _gather(
        conn.execute(
            "SELECT docs, tfw, dl FROM term_lists WHERE term = ? AND tier >= ?", (term, tier)
        )
    )


def read_spanning(
    conn: db.Connection, term: int, tier: int, want: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the parts of ``term`` from ``tier`` on whose rowid range holds one of
    ``want`` (sorted): what looking a few rows up needs, without reading the rest."""
    import numpy as np

    spans = conn.execute(
        "SELECT tier, first, last FROM term_lists WHERE term = ? AND tier >= ?", (term, tier)
    ).fetchall()
    if not spans:
        return _gather([])
    a = np.array(spans, np.int64)
    held = np.searchsorted(want, a[:, 2], "right") > np.searchsorted(want, a[:, 1], "left")
    return _gather(
        conn.execute(
            "SELECT docs, tfw, dl FROM term_lists WHERE term = ? AND tier = ? AND first = ?",
            (term, int(k), int(f)),
        ).fetchone()
        for k, f in a[held][:, :2].tolist()
    )


# ---------------------------------------------------------------- from the index alone


def varints_sum(data: bytes) -> int:
    """The sum of a docsize record's varints (one per column): a row's length in tokens."""
    if max(data, default=0) < 0x80:  # every column under 128 tokens: one byte each
        return sum(data)
    total, value = 0, 0
    for byte in data:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            total, value = total + value, 0
    return total


def _lengths(conn: db.Connection, size: int) -> np.ndarray:
    """Each row's length in tokens, as bm25() reads it: the sum of chunks_fts_docsize's
    varints (one per column)."""
    import numpy as np

    out = np.zeros(size, np.int64)
    for rowid, blob in conn.execute("SELECT id, sz FROM chunks_fts_docsize"):
        out[rowid] = varints_sum(bytes(blob))
    return out


def rebuild(conn: db.Connection) -> int:
    """Make every term's lists from chunks_fts as it stands, in one transaction (an index made
    before the lists: the benchmarks' saved 1M-unit workspace), at the index's average row
    length. The same lists ``add`` would have kept. Returns the number of terms."""
    with conn:
        return _build(conn, averages(conn)[1])


def _build(conn: db.Connection, avgdl: float) -> int:
    """``rebuild`` inside the caller's transaction, with ``avgdl`` as the reference length."""
    import numpy as np

    from clawmem.store import schema

    (top,) = conn.execute("SELECT max(id) FROM chunks").fetchone()
    lengths = _lengths(conn, int(top or 0) + 1)
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_lists_rows "
        "USING fts5vocab(main, chunks_fts, row)"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_lists_inst "
        "USING fts5vocab(main, chunks_fts, instance)"
    )
    vocab = [t for (t,) in conn.execute("SELECT term FROM temp.term_lists_rows")]
    tenths = (
        f"CASE col WHEN 'body' THEN {TENTHS[0]} WHEN 'heading' THEN {TENTHS[1]} "
        f"ELSE {TENTHS[2]} END"
    )
    avgdl = max(avgdl, 1.0)
    ok = bool(lengths.max(initial=0) <= _U16) and len(lengths) - 1 <= _U32
    for statement in schema.TERM_LISTS_DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("DELETE FROM term_lists")
    conn.execute("DELETE FROM terms")
    for term in vocab if ok else []:
        tid = conn.execute("INSERT INTO terms(term) VALUES (?) RETURNING id", (term,)).fetchone()[0]
        rows = conn.execute(
            f"SELECT doc, {tenths} FROM temp.term_lists_inst WHERE term = ?", (term,)
        ).fetchall()
        if not rows:
            continue
        a = np.array(rows, np.int64)
        doc, w = a[:, 0], a[:, 1]
        order = np.argsort(doc, kind="stable")
        doc, w = doc[order], w[order]
        starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
        doc, tfw = doc[starts], np.add.reduceat(w, starts)
        if tfw.max() > _U16:
            ok = False
            break
        lens = lengths[doc]
        g = impact(tfw, lens, avgdl)
        tier = tier_of(g)
        for k in np.unique(tier).tolist():
            m = tier == k
            d, f, n, gmax = doc[m], tfw[m], lens[m], float(g[m].max())
            conn.executemany(
                "INSERT INTO term_lists(term, tier, first, last, n, gmax, docs, tfw, dl) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        tid,
                        k,
                        int(d[s]),
                        int(d[s : s + PART][-1]),
                        len(d[s : s + PART]),
                        gmax,
                        d[s : s + PART].astype("<u4").tobytes(),
                        f[s : s + PART].astype("<u2").tobytes(),
                        n[s : s + PART].astype("<u2").tobytes(),
                    )
                    for s in range(0, len(d), PART)
                ],
            )
    if not ok:
        conn.execute("DELETE FROM term_lists")
        conn.execute("DELETE FROM terms")
    _set_reference(conn, avgdl, ok)
    return len(vocab) if ok else 0
