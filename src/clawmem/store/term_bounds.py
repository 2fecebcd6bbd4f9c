"""The most each indexed term can add to a row's BM25 score, kept beside the full-text index.

``recall/bm25_topk.py`` prunes the lexical leg with one bound per query phrase: the most the
phrase can add to any row's ``bm25()``. Without this table that bound is ``idf * (k1 + 1)``, the
limit as a term's count in a row grows without end; a real row holding "kyoto" once adds about
half of it. So a common term looked able to lift a row past the cut on its own, and every row
holding it was scored (at 1M units, 19k rows for "kyoto" alone: 80% of that query's time).

For each term, ``gmax`` is the largest ``tfw * (k1 + 1) / (tfw + k1 * (1 - b + b * dl / A))``
over the rows that ever held it: ``tfw`` the term's column-weighted count in the row, ``dl`` the
row's length in tokens, ``A`` one reference average length (meta ``term_bounds``, with the column
weights the bounds hold for). A phrase then adds at most
``idf * min(k1 + 1, gmax * max(1, avgdl / A))`` to any row, whatever the index's average length
has become since (the length term of a row's denominator shrinks by at most that factor), and a
phrase of several tokens at most what its least bounded token may (it occurs no more often than
any of them, in a row of the same length). A deleted row only lowers the real maximum, so the
bounds stay safe without being touched on delete.

Every row chunks_fts receives passes through ``note`` in the same transaction, which cuts it with
FTS5's own tokenizer (an in-memory FTS5 table of the same configuration), so the terms are
exactly the index's. An index holds the table from its creation (schema 8); an index whose
bounds were made for other column weights, or has none, gets the generic bound.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from clawmem.store import db, term_lists

# bm25()'s constants (fts5_aux.c) and the column weights of the recall ranking's defaults
# (fusion.Ranking: body, heading, context), which tests/test_term_bounds.py holds equal.
K1 = 1.2
B = 0.75
WEIGHTS = (1.0, 0.4, 0.5)
# chunks_fts's tokenizer (schema.py): the in-memory table must cut words exactly as it does.
TOKENIZE = "porter unicode61 remove_diacritics 0"
META_KEY = "term_bounds"

_tok_lock = threading.Lock()
_tok_conn: db.Connection | None = None


def _tokenizer() -> db.Connection:
    """An in-memory FTS5 table with chunks_fts's tokenizer, and its one-row-per-token view.
    Apart from the index's connection, so a reader never writes (nor opens a transaction)."""
    global _tok_conn
    if _tok_conn is None:
        conn = db.sqlite.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.execute(
            f"CREATE VIRTUAL TABLE tok USING fts5(body, heading, context, tokenize='{TOKENIZE}')"
        )
        conn.execute("CREATE VIRTUAL TABLE tok_inst USING fts5vocab(tok, instance)")
        _tok_conn = conn
    return _tok_conn


@contextmanager
def _cut(rows: Sequence[tuple[int, str, str, str]]) -> Iterator[db.Connection]:
    """The tokenizer's table holding ``rows`` (rowid, body, heading, context) for the block,
    one caller at a time; emptied after (rolled back), so it is empty between calls."""
    with _tok_lock:
        conn = _tokenizer()
        conn.execute("BEGIN")
        try:
            conn.executemany(
                "INSERT INTO tok(rowid, body, heading, context) VALUES (?, ?, ?, ?)", rows
            )
            yield conn
        finally:
            conn.execute("ROLLBACK")


def tokenize(rows: Sequence[tuple[int, str, str, str]]) -> list[tuple[str, int, str, int]]:
    """(term, rowid, column, count) for ``rows`` (rowid, body, heading, context), cut as
    chunks_fts cuts them."""
    with _cut(rows) as conn:
        # One row a token; counted here (SQLite's GROUP BY over the view doubles the time).
        counts = Counter(conn.execute("SELECT term, doc, col FROM tok_inst"))
    return [(t, d, c, n) for (t, d, c), n in counts.items()]


def _instances(
    rows: Sequence[tuple[int, str, str, str]], terms: Sequence[str] | None = None
) -> tuple[list[tuple[str, int, str, int]], dict[int, int]]:
    """((term, rowid, column, offset) of each token of ``rows`` (rowid, body, heading, context)
    that is one of ``terms`` (all of them if None), {rowid: tokens}), cut as chunks_fts cuts
    them: the offsets FTS5 matches a phrase's tokens at, and the lengths bm25() reads."""
    sql = "SELECT term, doc, col, offset FROM tok_inst"
    if terms is not None:
        sql += f" WHERE term IN ({','.join('?' * len(terms))})"
    with _cut(rows) as conn:
        found = conn.execute(sql, list(terms or ())).fetchall()
        sizes = conn.execute("SELECT id, sz FROM tok_docsize").fetchall()
    return found, {d: term_lists.varints_sum(bytes(sz)) for d, sz in sizes}


def phrase_sequences(phrases: Iterable[str]) -> dict[str, list[str]]:
    """The terms of each quoted phrase ('"edge proxy"') in their order, as chunks_fts cuts it:
    what a row must hold at consecutive offsets of one column to hold the phrase."""
    phrases = list(phrases)
    rows = [(i + 1, p.strip('"').replace('""', '"'), "", "") for i, p in enumerate(phrases)]
    at: dict[int, list[tuple[int, str]]] = {}
    for term, doc, _col, offset in _instances(rows)[0]:
        at.setdefault(doc, []).append((offset, term))
    return {p: [t for _, t in sorted(at.get(i + 1, []))] for i, p in enumerate(phrases)}


def phrase_counts(
    rows: Sequence[tuple[int, str, str, str]], sequences: dict[str, list[str]]
) -> tuple[dict[tuple[str, int], list[int]], dict[tuple[str, int], list[int]], dict[int, int]]:
    """({(phrase, rowid): [body, heading, context] counts}, {(term, rowid): counts} of the
    phrases' terms, {rowid: tokens}) of ``rows`` (rowid, body, heading, context), cut as
    chunks_fts cuts them: a phrase counted once at each offset where its terms follow one
    another in a column, as FTS5 counts its instances (bm25() weighs each by its column)."""
    terms = sorted({t for seq in sequences.values() for t in seq})
    found, dl = _instances(rows, terms)
    cells: dict[tuple[int, str], dict[int, str]] = {}
    tf: dict[tuple[str, int], list[int]] = {}
    for term, doc, col, offset in found:
        cells.setdefault((doc, col), {})[offset] = term
        tf.setdefault((term, doc), [0, 0, 0])[_COLUMN[col]] += 1
    out: dict[tuple[str, int], list[int]] = {}
    for (doc, col), held in cells.items():
        for phrase, seq in sequences.items():
            n = sum(
                all(held.get(o + i) == t for i, t in enumerate(seq))
                for o, first in held.items()
                if first == seq[0]
            )
            if n:
                out.setdefault((phrase, doc), [0, 0, 0])[_COLUMN[col]] += n
    return out, tf, dl


def reference(conn: db.Connection) -> dict | None:
    """The meta record {"avgdl": A, "weights": [body, heading, context]}, or None when this
    index keeps no bounds."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    except db.OperationalError:
        return None
    return json.loads(row[0]) if row else None


def _set_reference(conn: db.Connection, avgdl: float, weights: Sequence[float]) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (META_KEY, json.dumps({"avgdl": avgdl, "weights": list(weights)})),
    )


_COLUMN = {"body": 0, "heading": 1, "context": 2}


def counts(
    rows: Sequence[tuple[int, str, str, str]],
) -> tuple[dict[tuple[str, int], list[int]], dict[int, int]]:
    """({(term, rowid): [body, heading, context] counts}, {rowid: tokens}) of ``rows`` (rowid,
    body, heading, context), cut as chunks_fts cuts them."""
    tf: dict[tuple[str, int], list[int]] = {}
    dl: dict[int, int] = {}
    for term, doc, col, n in tokenize(rows):
        tf.setdefault((term, doc), [0, 0, 0])[_COLUMN[col]] += n
        dl[doc] = dl.get(doc, 0) + n
    return tf, dl


def note(conn: db.Connection, rows: Sequence[tuple[int, str, str, str]]) -> None:
    """Raise the bounds for ``rows`` (rowid, body, heading, context), just given to chunks_fts,
    inside the caller's transaction, and put them in their terms' lists (term_lists.py). The
    first rows an index receives set its reference length."""
    if not rows:
        return
    tf, dl = counts(rows)
    ref = reference(conn)
    if ref is None:
        ref = {"avgdl": max(sum(dl.values()) / max(len(dl), 1), 1.0), "weights": list(WEIGHTS)}
        _set_reference(conn, ref["avgdl"], ref["weights"])
    a, w = float(ref["avgdl"]), ref["weights"]
    best: dict[str, float] = {}
    for (term, doc), (body, head, ctx) in tf.items():
        tfw = w[0] * body + w[1] * head + w[2] * ctx
        if tfw <= 0:
            continue
        g = tfw * (K1 + 1.0) / (tfw + K1 * (1.0 - B + B * dl[doc] / a))
        if g > best.get(term, 0.0):
            best[term] = g
    conn.executemany(
        "INSERT INTO term_bounds(term, gmax) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET gmax = max(gmax, excluded.gmax)",
        best.items(),
    )
    term_lists.add(conn, tf, dl)


# ---------------------------------------------------------------- FTS5's own statistics


def averages(conn: db.Connection) -> tuple[int, float]:
    """(rows, average row length in tokens) as bm25() reads them (term_lists.averages)."""
    return term_lists.averages(conn)


def idf(n_rows: int, hits: int) -> float:
    """FTS5's IDF, as bm25() computes it (never below 1e-6)."""
    value = math.log((n_rows - hits + 0.5) / (hits + 0.5)) if n_rows else 0.0
    return value if value > 0 else 1e-6


# ---------------------------------------------------------------- reading them


def phrase_tokens(phrases: Iterable[str]) -> dict[str, list[str]]:
    """The terms each quoted phrase ('"kyoto"', '"edge proxy"') is cut into, as chunks_fts
    cuts it (each as often as it occurs, in no order)."""
    phrases = list(phrases)
    rows = [(i + 1, p.strip('"').replace('""', '"'), "", "") for i, p in enumerate(phrases)]
    tokens: dict[int, list[str]] = {}
    for term, doc, _col, n in tokenize(rows):
        tokens.setdefault(doc, []).extend([term] * n)
    return {p: tokens.get(i + 1, []) for i, p in enumerate(phrases)}


def phrase_bounds(
    conn: db.Connection, phrases: Iterable[str], weights: Sequence[float], avgdl: float
) -> dict[str, float]:
    """For each quoted phrase ('"kyoto"', '"edge proxy"'), the most its normalised impact
    ``tfw * (k1 + 1) / (tfw + k1 * (1 - b + b * dl / avgdl))`` can be in any row now (its
    bm25() contribution is that times its IDF); phrases with no bound are left out (the caller
    uses ``k1 + 1``)."""
    ref = reference(conn)
    if ref is None or [float(x) for x in ref["weights"]] != [float(x) for x in weights]:
        return {}
    phrases = list(phrases)
    cut = phrase_tokens(phrases)
    tokens = {i + 1: cut[p] for i, p in enumerate(phrases) if cut.get(p)}
    every = sorted({t for ts in tokens.values() for t in ts})
    if not every:
        return {}
    marks = ",".join("?" * len(every))
    g = dict(conn.execute(f"SELECT term, gmax FROM term_bounds WHERE term IN ({marks})", every))
    drift = max(1.0, avgdl / float(ref["avgdl"])) if ref["avgdl"] else math.inf
    out = {}
    for i, p in enumerate(phrases):
        ts = tokens.get(i + 1)
        if not ts or any(t not in g for t in ts):
            continue  # a token no row ever held: the phrase matches nothing anyway
        out[p] = min(K1 + 1.0, min(g[t] for t in ts) * drift)
    return out


def rebuild(conn: db.Connection, weights: Sequence[float] = WEIGHTS) -> int:
    """Recompute every term's bound from chunks_fts as it stands, in one transaction: each
    term's largest single-term ``bm25()`` divided by its IDF, at the index's current average
    length. For an index made before the table (the benchmarks' saved 1M-unit workspace): the
    same bounds ``note`` would have kept, made from the index instead of its rows. Returns the
    number of terms."""
    n_rows, avgdl = averages(conn)
    wsql = ", ".join(f"{x:g}" for x in weights)
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_bounds_vocab "
        "USING fts5vocab(main, chunks_fts, row)"
    )
    vocab = conn.execute("SELECT term, doc FROM temp.term_bounds_vocab").fetchall()
    # A term the tokenizer would cut into something else if queried (the stemmer run twice)
    # cannot be asked for alone: it gets no bound (the generic one), never a wrong one.
    same: set[int] = set()
    for start in range(0, len(vocab), 10_000):
        rows = [(i + 1, t, "", "") for i, (t, _) in enumerate(vocab[start : start + 10_000], start)]
        cut: dict[int, list[str]] = {}
        for term, doc, _col, _n in tokenize(rows):
            cut.setdefault(doc - 1, []).append(term)
        same.update(i for i, ts in cut.items() if ts == [vocab[i][0]])
    out = []
    for i, (term, df) in enumerate(vocab):
        if i not in same:
            continue
        phrase = '"' + term.replace('"', '""') + '"'
        row = conn.execute(
            f"SELECT bm25(chunks_fts, {wsql}) AS r FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY r LIMIT 1",
            (phrase,),
        ).fetchone()
        if row is not None:
            # A hair over: the division must never make a bound smaller than bm25()'s own figure.
            out.append((term, -row[0] / idf(n_rows, df) * (1 + 1e-9)))
    with conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS term_bounds "
            "(term TEXT PRIMARY KEY, gmax REAL NOT NULL) WITHOUT ROWID"
        )
        conn.execute("DELETE FROM term_bounds")
        conn.executemany("INSERT INTO term_bounds(term, gmax) VALUES (?, ?)", out)
        _set_reference(conn, avgdl, weights)
    return len(out)
