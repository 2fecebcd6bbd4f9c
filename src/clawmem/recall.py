"""Recall: lexical and vector candidates, fused, filtered before limits, with exact citations."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from . import db, fusion
from .index import Filters, Index
from .textnorm import LexQuery, build_query, fold

if TYPE_CHECKING:
    import numpy as np

MODES = ("hybrid", "lexical", "vector")


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    snippet: str
    score: float
    kind: str | None  # None for a chunk; W/B/O/S for a fact
    day: str | None
    entities: tuple[str, ...]
    confidence: float | None
    valid_from: str | None
    valid_to: str | None
    lexical_rank: int | None = None
    lexical_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    superseded_by: str | None = None  # citation of a newer fact about the same entity

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_dict(self, explain: bool = False) -> dict:
        d = {
            "type": "fact" if self.kind else "chunk",
            "citation": self.citation,
            "source": self.citation,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 6),
            "heading": self.heading,
            "snippet": self.snippet,
            "timestamp": self.day,
        }
        if self.kind:
            d.update(
                kind=self.kind,
                content=self.text,
                entities=list(self.entities),
                confidence=self.confidence,
                valid_from=self.valid_from,
                valid_to=self.valid_to,
                superseded_by=self.superseded_by,
            )
        if explain:
            d["explain"] = {
                "lexical_rank": self.lexical_rank,
                "lexical_score": None
                if self.lexical_score is None
                else round(self.lexical_score, 6),
                "vector_rank": self.vector_rank,
                "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
            }
        return d


@dataclass
class RecallResult:
    query: str
    mode: str
    ranking: str
    hits: list[Hit]
    empty_reason: str | None = None
    relaxed: bool = False  # the all-terms query found nothing; fewer terms were used
    notes: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # why a leg is off or partial
    vectors: dict = field(default_factory=dict)
    index: dict = field(default_factory=dict)
    filters: dict = field(default_factory=dict)
    budget: dict | None = None
    seconds: float = 0.0

    def to_dict(self, explain: bool = False) -> dict:
        return {
            "query": self.query,
            "mode": self.mode,
            "ranking": self.ranking,
            "results": [h.to_dict(explain) for h in self.hits],
            "count": len(self.hits),
            "empty_reason": self.empty_reason,
            "relaxed": self.relaxed,
            "notes": self.notes,
            "degraded": self.degraded,
            "vectors": self.vectors,
            "index": self.index,
            "filters": self.filters,
            "budget": self.budget,
            "seconds": round(self.seconds, 4),
        }


_COLS = (
    "c.id, c.path, c.start_line, c.end_line, c.heading, c.text, c.kind, c.day, c.entities, "
    "c.confidence, c.valid_from, c.valid_to"
)


def _filter_sql(f: Filters) -> tuple[str, list]:
    parts, args = [], []
    if f.since or f.until:
        # In the window if recorded in it, or if the validity a fact states overlaps it
        # ("Currently in Marrakech (Nov 27–Dec 1)" written on Nov 20 answers "--since 2025-11-30").
        lo, hi = f.since or "0000-00-00", f.until or "9999-99-99"
        parts.append(
            "((c.day >= ? AND c.day <= ?) OR (c.valid_from IS NOT NULL AND c.valid_from <= ? "
            "AND COALESCE(c.valid_to, '9999-99-99') >= ?))"
        )
        args.extend([lo, hi, hi, lo])
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
    if f.path_prefix:
        parts.append("c.path LIKE ? ESCAPE '\\'")
        esc = f.path_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        args.append(esc + "%")
    return (" AND ".join(parts), args)


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
    where, args = _filter_sql(f)
    bm25 = f"bm25(chunks_fts, 1.0, {r.heading_weight:g}, {r.context_weight:g})"
    sql = (
        f"SELECT c.id, {bm25} AS r FROM chunks_fts "
        "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? "
        + (f"AND {where} " if where else "")
        + "ORDER BY r, c.path, c.start_line, c.id LIMIT ?"
    )
    rows = []
    if q.strong:
        rows = index.conn.execute(sql, (f"({q.strong}) AND ({q.any_terms})", *args, limit))
        rows = rows.fetchall()
    seen = {row[0] for row in rows}
    strong = frozenset(seen)
    if len(rows) < limit:
        rest = index.conn.execute(sql, (q.any_terms, *args, limit)).fetchall()
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


def _coverage(index: Index, q: LexQuery, ids: list[int]) -> dict[int, float]:
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
        df = index.conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)
        ).fetchone()[0]
        weight[term] = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        for (rowid,) in index.conn.execute(
            f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})",
            (term, *ids),
        ):
            matched[rowid] = matched.get(rowid, 0.0) + weight[term]
    whole = sum(weight.values()) or 1.0
    return {cid: matched.get(cid, 0.0) / whole for cid in ids}


def vector_leg(index: Index, qvec: np.ndarray, f: Filters, limit: int) -> list[fusion.LegHit]:
    import numpy as np  # lazily: lexical-only recall never needs it

    blob = np.asarray(qvec, dtype="<f4").tobytes()
    selective = bool(f.entity or f.path_prefix or len(f.kinds) > 1 or f.facts_only or f.as_of)
    if index.vec.available and not selective:
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
            # window (few) are scored exactly and merged in.
            lo, hi = f.since or "0000-00-00", f.until or "9999-99-99"
            extra = _exact_scores(
                index,
                qvec,
                "c.valid_from IS NOT NULL AND c.valid_from <= ? AND "
                "COALESCE(c.valid_to, '9999-99-99') >= ? AND NOT (c.day >= ? AND c.day <= ?)"
                + (" AND c.kind = ?" if f.kinds else ""),
                [hi, lo, lo, hi] + ([f.kinds[0]] if f.kinds else []),
                "chunk_vectors",
            )
            scored.extend(extra)
        scored.sort(key=lambda r: (-r[1], r[0]))  # vec0 allows one ORDER BY; ties break by id
        return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(scored[:limit], 1)]
    # Exact scan over the filtered candidates (NumPy): used for selective filters, where the
    # candidate set is small, and when sqlite-vec is unavailable.
    where, args = _filter_sql(f)
    table = index.vector_table() or "chunk_vectors_plain"
    scored = _exact_scores(index, qvec, where, args, table)
    scored.sort(key=lambda r: (-r[1], r[0]))
    return [fusion.LegHit(cid, i, s) for i, (cid, s) in enumerate(scored[:limit], 1)]


def _exact_scores(
    index: Index, qvec, where: str, args: list, table: str
) -> list[tuple[int, float]]:
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
    sims = mat @ np.asarray(qvec, dtype=np.float32)
    return [(r[0], float(s)) for r, s in zip(rows, sims, strict=True)]


def _snippet(text: str, q: LexQuery | None, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    start = 0
    if q is not None:
        folded = fold(text)
        positions = []
        for term in q.terms:
            first = term.strip('"*').split(" ")[0]
            m = re.search(re.escape(first), folded) if first else None
            if m:
                positions.append(m.start())
        if positions and len(folded) == len(text):
            start = max(0, min(positions) - max_chars // 4)
            nl = text.rfind("\n", 0, start)
            start = nl + 1 if nl != -1 and start - nl < max_chars // 4 else start
    cut = text[start : start + max_chars]
    return ("…" if start else "") + cut + ("…" if start + max_chars < len(text) else "")


def _overlaps(a: Hit, kept: list[Hit]) -> bool:
    return any(
        k.path == a.path and not (a.end_line < k.start_line or a.start_line > k.end_line)
        for k in kept
    )


def run_recall(
    index: Index,
    query: str,
    *,
    k: int,
    mode: str,
    filters: Filters,
    embedder=None,
    fusion_name: str = "rrf",
    ranking: fusion.Ranking | None = None,
    candidate_multiplier: int = 4,
    snippet_chars: int = 700,
    decay_half_life_days: float = 0.0,
    today: date | None = None,
    degraded: list[str] | None = None,
) -> RecallResult:
    t0 = time.perf_counter()
    rk = ranking or fusion.Ranking()
    degraded = list(degraded or [])
    name = fusion.WEIGHTED if fusion_name == "weighted" else fusion.RRF
    if ranking is not None and ranking != fusion.Ranking(rrf_k=ranking.rrf_k):
        name += "+custom"
    result = RecallResult(query, mode, name, [], degraded=degraded)
    n_cand = max(k * candidate_multiplier, k)
    q = build_query(query)

    lex: list[fusion.LegHit] = []
    vec: list[fusion.LegHit] = []
    if mode in ("hybrid", "lexical"):
        lex, result.relaxed = lexical_leg(index, q, filters, n_cand, rk)
        if result.relaxed:
            result.notes.append(
                "no result contained every term; showing results that match some of them"
            )
    vector_used = False
    if mode in ("hybrid", "vector"):
        if embedder is None:
            if mode == "vector":
                result.empty_reason = "vector search is unavailable: " + "; ".join(degraded)
        else:
            qvec = embedder.embed_query(query)
            if qvec is None:
                result.degraded.append("the model returned no usable vector for this query")
            else:
                try:
                    vec = vector_leg(index, qvec, filters, n_cand)
                    vector_used = True
                except db.OperationalError as exc:
                    result.degraded.append(f"vector search failed: {exc}")
    if mode == "hybrid" and not vector_used:
        result.ranking = "lexical-bm25"
    elif mode == "lexical":
        result.ranking = "lexical-bm25"
    elif mode == "vector":
        result.ranking = "vector-cosine"

    if mode == "hybrid" and vector_used:
        if rk.coverage_power and lex:
            from dataclasses import replace

            cover = _coverage(index, q, [h.chunk_id for h in lex])
            lex = [replace(h, coverage=cover.get(h.chunk_id, 1.0)) for h in lex]
        scores = (
            fusion.weighted(lex, vec)
            if fusion_name == "weighted"
            else fusion.rrf(
                lex, vec, rk.rrf_k, rk.lexical_weight, rk.vector_weight, rk.coverage_power
            )
        )
    else:
        leg = lex if mode != "vector" else vec
        scores = {h.chunk_id: h.score for h in leg}
    if not scores:
        if result.empty_reason is None:
            result.empty_reason = _why_empty(index, q, filters, mode)
        result.seconds = time.perf_counter() - t0
        return result

    lex_by = {h.chunk_id: h for h in lex}
    vec_by = {h.chunk_id: h for h in vec}
    rows = _rows(index, list(scores))
    ids = [cid for cid in scores if cid in rows]
    today = today or date.today()

    def section(cid: int) -> tuple[str, str]:
        return rows[cid]["path"], rows[cid]["heading"]

    final = {}
    for cid in ids:
        s = scores[cid]
        if rk.neighbour_boost and mode == "hybrid" and vector_used:
            # On fused (RRF) scores only: a single leg's BM25 or cosine scores are on other
            # scales. Units of one file are stored in file order, so neighbours are id ± 1.
            near = [
                scores[n]
                for n in (cid - 1, cid + 1)
                if n in scores and n in rows and section(n) == section(cid) and rows[n]["kind"] is None
            ]
            if near and rows[cid]["kind"] is None:
                s += rk.neighbour_boost * max(near)
        day = rows[cid]["day"]
        if decay_half_life_days > 0 and day and not rows[cid]["path"].startswith("bank/"):
            age = (today - date.fromisoformat(day)).days
            if age > 0:
                s *= math.pow(0.5, age / decay_half_life_days)
        final[cid] = s

    # Stable order: score, then the better lexical rank, then path and line.
    def order_key(c: int):
        lr = lex_by[c].rank if c in lex_by else 10**9
        return (-final[c], lr, rows[c]["path"], rows[c]["start_line"], c)

    ordered = sorted(ids, key=order_key)
    if rk.same_section_factor < 1.0:
        ordered = _diversify(ordered, final, section, rk.same_section_factor)
    # Units holding every identifier and quoted phrase of the query ("DEC-0054", "v2.3.1") come
    # first, in their fused order: a close vector never outranks the exact thing asked for.
    exact = {h.chunk_id for h in lex if h.exact}
    if exact:
        ordered = [c for c in ordered if c in exact] + [c for c in ordered if c not in exact]

    hits: list[Hit] = []
    taken: set[int] = set()  # units already shown, alone or in a group
    for cid in ordered:
        if cid in taken:
            continue
        r = rows[cid]
        lh, vh = lex_by.get(cid), vec_by.get(cid)
        group = [r]
        if rk.hit_min_chars and r["kind"] is None:
            group = _grow(index, r, final, taken, rk.hit_min_chars)
        taken.update(g["id"] for g in group)
        text = "\n".join(g["text"] for g in group)
        hit = Hit(
            path=r["path"],
            start_line=group[0]["start_line"],
            end_line=group[-1]["end_line"],
            heading=r["heading"],
            text=text,
            snippet=_snippet(text, q, snippet_chars),
            score=final[cid],
            kind=r["kind"],
            day=r["day"],
            entities=tuple(r["entities"].split()),
            confidence=r["confidence"],
            valid_from=r["valid_from"],
            valid_to=r["valid_to"],
            lexical_rank=lh.rank if lh else None,
            lexical_score=lh.score if lh else None,
            vector_rank=vh.rank if vh else None,
            vector_score=vh.score if vh else None,
        )
        if _overlaps(hit, hits):
            continue  # overlapping units (a fact inside a list item already shown) add nothing
        hits.append(hit)
        if len(hits) >= k:
            break
    result.hits = hits
    result.seconds = time.perf_counter() - t0
    return result


def _grow(index: Index, row, score: dict, taken: set[int], min_chars: int) -> list:
    """A short unit (a chat message, a checklist item) with the units right next to it, until
    the group is about ``min_chars`` long: one hit then carries the question a reply answers, or
    the reply a question got. Only units on adjacent lines of the same section join (so the
    group's text is exactly its lines), never one already shown, and the better-scored
    neighbour (else the one before) joins first."""
    group = [row]
    size = len(row["text"])
    lo = index.conn.execute(
        f"SELECT {_COLS} FROM chunks c WHERE c.id BETWEEN ? AND ? AND c.path = ? "
        "AND c.kind IS NULL ORDER BY c.id",
        (row["id"] - 8, row["id"] + 8, row["path"]),
    ).fetchall()
    near = {r["id"]: r for r in lo}
    while size < min_chars:
        first, last = group[0], group[-1]
        options = []
        for cand, before in ((near.get(first["id"] - 1), True), (near.get(last["id"] + 1), False)):
            if cand is None or cand["id"] in taken or cand["heading"] != row["heading"]:
                continue
            touching = (
                cand["end_line"] == first["start_line"] - 1
                if before
                else cand["start_line"] == last["end_line"] + 1
            )
            if touching:
                options.append((score.get(cand["id"], 0.0), before, cand))
        if not options:
            break
        _, before, cand = max(options, key=lambda o: (o[0], o[1]))
        group = [cand, *group] if before else [*group, cand]
        size += len(cand["text"]) + 1
    return group


def _rows(index: Index, ids: list[int]) -> dict:
    """The candidates' rows and their neighbours' (id ± 1), by id."""
    want = sorted({n for cid in ids for n in (cid - 1, cid, cid + 1)})
    rows = {}
    for i in range(0, len(want), 500):
        part = want[i : i + 500]
        for r in index.conn.execute(
            f"SELECT {_COLS} FROM chunks c WHERE c.id IN ({','.join('?' * len(part))})", part
        ):
            rows[r[0]] = r
    return rows


def _diversify(ordered: list[int], score: dict, section, factor: float) -> list[int]:
    """Greedy re-ranking: each pick from a section already picked counts ``factor`` times less,
    so questions whose evidence spans days get several short hits rather than one section."""
    shown: dict = {}
    out: list[int] = []
    left = list(ordered)
    while left:
        best = max(left, key=lambda c: (score[c] * factor ** shown.get(section(c), 0)))
        # ties keep the original order (max returns the first)
        out.append(best)
        left.remove(best)
        shown[section(best)] = shown.get(section(best), 0) + 1
        if len(out) >= 200:  # nothing past a page of hits is read
            out += left
            break
    return out


def _why_empty(index: Index, q: LexQuery, f: Filters, mode: str) -> str:
    total = index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    if total == 0:
        return "the index is empty: no memory files were found (MEMORY.md, memory/, bank/)"
    if mode == "lexical" and not q.all_terms:
        return "the query has no searchable terms (only punctuation or one-letter words)"
    if f.active:
        where, args = _filter_sql(f)
        n = index.conn.execute(f"SELECT count(*) FROM chunks c WHERE {where}", args).fetchone()[0]
        if n == 0:
            return "the filters exclude everything: no indexed text matches them"
    if mode == "vector":
        return "no vectors match (vectors may still be pending: run `clawmem index`)"
    if not q.all_terms:
        return "the query has no searchable terms and vector search is off"
    return "no indexed text contains any of the query's terms"


# ---------------------------------------------------------------------------- facts over time

_WORD = re.compile(r"[^\W_]+")


def _content_words(text: str, entities: tuple[str, ...]) -> set[str]:
    from .textnorm import STOPWORDS

    skip = {fold(e) for e in entities}
    return {
        w for w in _WORD.findall(fold(text)) if w not in STOPWORDS and w not in skip and len(w) > 2
    }


# Supersession looks at this many of the newest later facts per hit: enough for any real
# history of one entity, and it keeps recall fast when an entity has thousands of facts.
SUPERSEDE_CANDIDATES = 40


def _vector_of(index: Index, chunk_id: int, cache: dict):
    """One unit's vector by primary-key lookup (``IN (…)`` on vec0 would scan the table)."""
    if chunk_id not in cache:
        table = index.vector_table()
        row = None
        if table:
            try:
                row = index.conn.execute(
                    f"SELECT embedding FROM {table} WHERE chunk_id = ?", (chunk_id,)
                ).fetchone()
            except db.OperationalError:
                row = None
        if row is None:
            cache[chunk_id] = None
        else:
            import numpy as np

            cache[chunk_id] = np.frombuffer(bytes(row[0]), dtype="<f4")
    return cache[chunk_id]


def _similar(va, vb, a_text: str, b_text: str, ents, same_entities: bool, kind: str) -> bool:
    """Whether two facts about the same entity talk about the same thing (so the newer one
    supersedes the older). Vectors when both have one, word overlap otherwise; two opinions held
    about exactly the same entities need only share two topic words ("Rust", "CLI")."""
    if va is not None and vb is not None and float(va @ vb) >= 0.62:
        return True
    wa, wb = _content_words(a_text, ents), _content_words(b_text, ents)
    if not (wa and wb):
        return False
    if kind == "O" and same_entities and len(wa & wb) >= 2:
        return True
    return len(wa & wb) / len(wa | wb) >= 0.4


def _fact_id(index: Index, hit: Hit) -> int | None:
    row = index.conn.execute(
        "SELECT id FROM chunks WHERE path = ? AND start_line = ? AND kind IS NOT NULL",
        (hit.path, hit.start_line),
    ).fetchone()
    return row[0] if row else None


def mark_superseded(index: Index, hits: list[Hit], as_of: str | None) -> list[Hit]:
    """Point each fact at the newest later fact of the same kind about the same entity that
    talks about the same thing (as known at ``as_of``, or now)."""
    from dataclasses import replace

    vectors: dict = {}
    out = []
    for h in hits:
        if not h.kind or not h.entities or not h.day:
            out.append(h)
            continue
        hid = _fact_id(index, h)
        if hid is None:
            out.append(h)
            continue
        folded = [e.casefold() for e in h.entities]
        rows = index.conn.execute(
            "SELECT DISTINCT c.id, c.path, c.start_line, c.end_line, c.text, c.day, c.entities "
            "FROM chunks c "
            "JOIN chunk_entities e ON e.chunk_id = c.id "
            f"WHERE e.folded IN ({','.join('?' * len(folded))}) AND c.kind = ? AND c.day > ? "
            "AND (? IS NULL OR c.day <= ?) AND c.text != ? ORDER BY c.day DESC, c.id DESC "
            "LIMIT ?",
            (*folded, h.kind, h.day, as_of, as_of, h.text, SUPERSEDE_CANDIDATES),
        ).fetchall()
        mine = _vector_of(index, hid, vectors)
        ents = set(h.entities)
        for r in rows:
            if _similar(
                mine,
                _vector_of(index, r[0], vectors),
                h.text,
                r[4],
                h.entities,
                set(r[6].split()) == ents,
                h.kind,
            ):
                h = replace(h, superseded_by=f"{r[1]}#L{r[2]}-L{r[3]}")
                break
        out.append(h)
    return out


# ---------------------------------------------------------------------------- entities


def known_entities(index: Index) -> dict[str, str]:
    """folded name → display name, from fact mentions and entity pages."""
    names: dict[str, str] = {}
    for (path,) in index.conn.execute(
        "SELECT path FROM files WHERE path LIKE 'bank/entities/%.md'"
    ):
        stem = path.rsplit("/", 1)[1][:-3]
        names[stem.casefold()] = stem
    for (ent,) in index.conn.execute("SELECT DISTINCT entity FROM chunk_entities"):
        names.setdefault(ent.casefold(), ent)
    return names


def entities_in_query(index: Index, query: str) -> list[str]:
    """Entities named in a question ("tell me about Peter", "what about @The-Castle?")."""
    words = " " + " ".join(_WORD.findall(fold(query))) + " "
    found = []
    for name in known_entities(index).values():
        spoken = " " + " ".join(_WORD.findall(fold(name))) + " "
        if spoken.strip() and spoken in words:
            found.append(name)
    return sorted(found, key=lambda n: -len(n))


def entity_page_hit(index: Index, entity: str, snippet_chars: int) -> Hit | None:
    row = index.conn.execute(
        f"SELECT {_COLS} FROM chunks c WHERE lower(c.path) = lower(?) AND c.kind IS NULL "
        "ORDER BY c.start_line LIMIT 1",
        (f"bank/entities/{entity}.md",),
    ).fetchone()
    if row is None:
        return None
    return Hit(
        path=row["path"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        heading=row["heading"],
        text=row["text"],
        snippet=_snippet(row["text"], None, snippet_chars),
        score=1.0,
        kind=None,
        day=None,
        entities=(entity,),
        confidence=None,
        valid_from=None,
        valid_to=None,
    )


# ---------------------------------------------------------------------------- token budget


def estimate_tokens(text: str) -> int:
    """About 4 characters per token for English, 1 per character for CJK; never zero."""
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")
    return max(1, (len(text) - cjk + 3) // 4 + cjk)


def _hit_cost(h: Hit) -> int:
    return estimate_tokens(h.citation) + estimate_tokens(h.text) + 4


def pack_budget(hits: list[Hit], budget: int) -> tuple[list[Hit], dict]:
    """Best results first, within about ``budget`` tokens. A fact is whole or absent; a chunk
    that does not fit may be cut at a line boundary, its citation narrowed to the lines kept."""
    from dataclasses import replace

    kept: list[Hit] = []
    used = 0
    dropped = 0
    for h in hits:
        cost = _hit_cost(h)
        if used + cost <= budget:
            kept.append(replace(h, snippet=h.text))
            used += cost
            continue
        if h.kind is None:
            lines = h.text.split("\n")
            take: list[str] = []
            for line in lines:
                trial = replace(h, text="\n".join([*take, line]))
                if used + _hit_cost(trial) > budget:
                    break
                take.append(line)
            if take and any(x.strip() for x in take):
                cut = replace(
                    h,
                    text="\n".join(take),
                    snippet="\n".join(take),
                    end_line=h.start_line + len(take) - 1,
                )
                kept.append(cut)
                used += _hit_cost(cut)
                continue
        dropped += 1
    return kept, {"limit": budget, "used": used, "dropped": dropped}
