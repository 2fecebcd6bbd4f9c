"""The index's read queries: every SELECT that recall, entities, graph, status and retain ask of
the index, except the search legs' own (``recall/legs.py``).

``store/index.py`` owns the schema and the writes; this module owns the questions. Filters become
SQL in exactly one place (``filter_sql``), so "recorded in the window, or its stated validity
overlaps it" is written once.
"""

from __future__ import annotations

import heapq
import json
from itertools import islice
from typing import TYPE_CHECKING

from clawmem.markdown.workspace import ENTITY_DIR, TRANSCRIPT_PREFIX, entity_page_path
from clawmem.store.index import Filters, Index

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from sqlite3 import Row  # sqlean's rows are the standard library's

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


def time_window(f: Filters) -> tuple[tuple[str, list], tuple[str, list]]:
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
        (recorded, a1), (valid, a2) = time_window(f)
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
        args.extend([f.entity.casefold(), entity_page_path(f.entity)])
    if f.as_of:
        # Recorded by then (evergreen pages are timeless), and not expired by then.
        parts.append("(c.day IS NULL OR c.day <= ?) AND (c.valid_to IS NULL OR c.valid_to >= ?)")
        args.extend([f.as_of, f.as_of])
    if f.source:
        # Transcripts are the units under sessions/ (sessions.py); everything else is the Markdown.
        glob = f"c.path GLOB '{TRANSCRIPT_PREFIX}*'"
        parts.append(glob if f.source == SESSIONS else f"NOT {glob}")
    if f.path_prefix:
        parts.append("c.path LIKE ? ESCAPE '\\'")
        esc = f.path_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        args.append(esc + "%")
    return (" AND ".join(parts), args)


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


def units_under(index: Index, ids: list[int], prefix: str) -> dict[int, Row]:
    """The units among ``ids`` whose path starts with ``prefix`` (a folder, ending in "/"), by
    id."""
    rows: dict[int, Row] = {}
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        for r in index.conn.execute(
            f"SELECT {COLUMNS} FROM chunks c WHERE c.id IN ({','.join('?' * len(part))}) "
            "AND substr(c.path, 1, ?) = ?",
            [*part, len(prefix), prefix],
        ):
            rows[r[0]] = r
    return rows


def chunks_near(index: Index, row: Row, reach: int = 8) -> dict[int, Row]:
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


def entity_page(index: Index, entity: str) -> Row | None:
    """The first unit of ``bank/entities/ENTITY.md`` (any case), or None."""
    # The case-blind match runs over the files table (one row per file), then the chunks come
    # by their path index: lower(path) over every chunk cost ~25-100 ms a recall at 100k units.
    paths = [
        p
        for (p,) in index.conn.execute(
            "SELECT path FROM files WHERE lower(path) = lower(?)", (entity_page_path(entity),)
        )
    ]
    if not paths:
        return None
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.path IN ({','.join('?' * len(paths))}) "
        "AND c.kind IS NULL ORDER BY c.start_line LIMIT 1",
        paths,
    ).fetchone()


def page_units(index: Index, path: str, limit: int) -> list[Row]:
    """The first ``limit`` plain units (not facts) of the note ``path``, in line order."""
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.path = ? AND c.kind IS NULL "
        "ORDER BY c.start_line LIMIT ?",
        (path, limit),
    ).fetchall()


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
    ``as_of``), newest first (day, then id), each once, ``not_text`` left out: (id, path,
    start_line, end_line, text, day, entities).

    Supersession asks this for every fact hit. Each entity's facts are read newest first from
    its index (``chunk_entities_facts``), only as many as the answer needs, and merged; ordering
    them by ``chunks.day`` instead looked up every unit of the entity (at 1M units ~940, 5-20 ms)
    whatever the limit."""
    conn = index.conn
    lists = [
        map(
            tuple,
            conn.execute(
                "SELECT day, chunk_id FROM chunk_entities WHERE folded = ? AND kind = ? AND day > ? "
                "AND (? IS NULL OR day <= ?) ORDER BY day DESC, chunk_id DESC",
                (folded, kind, after, as_of, as_of),
            ),
        )
        for folded in dict.fromkeys(e.casefold() for e in entities)
    ]
    ids = _distinct_ids(heapq.merge(*lists, reverse=True))
    out: list = []
    while len(out) < limit:
        batch = list(islice(ids, limit - len(out)))
        if not batch:
            break
        rows = {
            r["id"]: r
            for r in conn.execute(
                "SELECT c.id, c.path, c.start_line, c.end_line, c.text, c.day, c.entities "
                f"FROM chunks c WHERE c.id IN ({','.join('?' * len(batch))})",
                batch,
            )
        }
        out += [rows[i] for i in batch if i in rows and rows[i]["text"] != not_text]
    return out


def _distinct_ids(merged: Iterable[tuple[str, int]]) -> Iterator[int]:
    """The ids of (day, id) rows merged newest first, each once (a fact naming two of the
    entities is in both lists)."""
    seen: set[int] = set()
    for _, cid in merged:
        if cid not in seen:
            seen.add(cid)
            yield cid


def facts_about(index: Index, entities: tuple[str, ...], limit: int) -> list:
    """(path, start_line, end_line, text, entities) of the newest facts mentioning any of
    ``entities`` (without entities: the newest facts that mention none)."""
    cols = "c.path, c.start_line, c.end_line, c.text, c.entities"
    if not entities:
        return index.conn.execute(
            f"SELECT {cols} FROM chunks c WHERE c.kind IS NOT NULL AND c.entities = '' "
            "ORDER BY c.day IS NULL, c.day DESC, c.id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    folded = [e.casefold() for e in entities]
    return index.conn.execute(
        f"SELECT DISTINCT {cols}, c.day, c.id FROM chunks c JOIN chunk_entities e "
        f"ON e.chunk_id = c.id WHERE e.folded IN ({','.join('?' * len(folded))}) "
        "AND c.kind IS NOT NULL ORDER BY c.day IS NULL, c.day DESC, c.id DESC LIMIT ?",
        (*folded, limit),
    ).fetchall()


def fact_row(index: Index, path: str, line: int) -> Row | None:
    """The fact at ``path`` line ``line`` (``COLUMNS``), or None."""
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.path = ? AND c.start_line = ? "
        "AND c.kind IS NOT NULL",
        (path, line),
    ).fetchone()


def corrected_lines(index: Index, paths: Iterable[str]) -> set[tuple[str, int]]:
    """(path, line) of every fact in ``paths`` that some ``supersedes [[path#Lline]]`` note
    names, in one query: recall asks ``corrected_by`` only for these (most hits have none)."""
    wanted = sorted(set(paths))
    if not wanted:
        return set()
    marks = ",".join("?" * len(wanted))
    out: set[tuple[str, int]] = set()
    for dst, anchor in index.conn.execute(
        f"SELECT dst, anchor FROM links WHERE type = 'supersedes' AND dst IN ({marks})", wanted
    ):
        first = (anchor or "").removeprefix("L").split("-")[0]
        if first.isdigit():
            out.add((dst, int(first)))
    return out


def corrected_by(index: Index, path: str, line: int, as_of: str | None) -> tuple | None:
    """The fact whose ``supersedes [[path#Lline]]`` note names this fact (markdown/
    supersession.py), newest first, recorded by ``as_of``: (path, start_line, end_line), or None."""
    return index.conn.execute(
        "SELECT f.path, f.start_line, f.end_line FROM links l JOIN chunks f ON f.path = l.src "
        "AND f.kind IS NOT NULL AND f.start_line = (SELECT max(g.start_line) FROM chunks g "
        "WHERE g.path = l.src AND g.kind IS NOT NULL AND g.start_line < l.line) "
        "WHERE l.type = 'supersedes' AND l.dst = ? AND (l.anchor = ? OR l.anchor LIKE ?) "
        "AND (? IS NULL OR f.day IS NULL OR f.day <= ?) "
        "ORDER BY f.day IS NULL, f.day DESC, f.id DESC LIMIT 1",
        (path, f"L{line}", f"L{line}-%", as_of, as_of),
    ).fetchone()


# ---------------------------------------------------------------------------- entities


def entity_pages(index: Index) -> list[str]:
    """Paths of the indexed entity pages (``bank/entities/*.md``)."""
    return [
        p
        for (p,) in index.conn.execute(
            "SELECT path FROM files WHERE path LIKE ?", (f"{ENTITY_DIR}/%.md",)
        )
    ]


def unsearchable(index: Index) -> list[tuple[str, str]]:
    """(path, why) of every memory file recorded with no units because its content could not
    be read as Markdown (not UTF-8, binary: ``sync._not_markdown``), by path. Every recall
    asks, so the answer is kept while the index is unchanged."""
    memo = index.memo("unsearchable")
    if "files" not in memo:
        found = []
        for path, raw in index.conn.execute(
            "SELECT path, problems FROM files WHERE problems LIKE '%not indexed: %' ORDER BY path"
        ):
            for p in json.loads(raw):
                message = str(p.get("message", ""))
                if message.startswith("not indexed: "):
                    found.append((path, message.removeprefix("not indexed: ")))
        memo["files"] = found
    return list(memo["files"])


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


def facts_matching(index: Index, f: Filters, *, min_confidence: float | None = None) -> list:
    """Every fact ``f`` keeps (``COLUMNS``), newest first: by the day recorded (undated last),
    then by path and line, latest line first."""
    where, args = filter_sql(f)
    conds = ["c.kind IS NOT NULL"] + ([where] if where else [])
    if min_confidence is not None:
        conds.append("c.confidence IS NOT NULL AND c.confidence >= ?")
        args = [*args, min_confidence]
    return index.conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE {' AND '.join(conds)} "
        "ORDER BY c.day IS NULL, c.day DESC, c.path DESC, c.start_line DESC",
        args,
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


def unit_at(
    index: Index, path: str, line: int | None = None, heading: str | None = None
) -> Row | None:
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
