"""Ranking: from a query to the top hits, on one open index.

The lexical leg (BM25) and the vector leg (cosine) each bring candidates (``queries.py``); they are
fused by the named, versioned ``fusion.Ranking``; a unit is nudged up by its neighbours and down by
its age (if configured); the order is diversified across sections; short units grow into the
lines around them; and each hit carries a snippet and its citation. Filters are applied inside
the legs, before any limit.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as replace_hit
from datetime import date
from functools import partial
from typing import TYPE_CHECKING

from clawmem.markdown import proposal_ledger
from clawmem.markdown.workspace import TRANSCRIPT_PREFIX
from clawmem.recall import aggregate, copies, fusion, legs, relevance
from clawmem.recall.results import PROPOSAL_PREFIX, Hit
from clawmem.store import db, queries
from clawmem.store.index import Filters, Index
from clawmem.text import spelling
from clawmem.text.query import Query
from clawmem.text.textnorm import LexQuery, fold, tokens

if TYPE_CHECKING:
    from sqlite3 import Row

    from clawmem.embedders.base import Vector, VectorSource

# How many units each leg brings to fusion, whatever the number of hits asked for: ranking a
# depth that grew with k made the first hits of ``-k 2`` and ``-k 10`` differ (a unit found deep
# in one leg gains that leg's share only when the other leg's list is long enough to hold it).
# 80 is what every benchmark ranked at k = 20 before (4 x 20).
DEFAULT_CANDIDATES = 80


@dataclass
class Ranked:
    """One ranking of the candidates: its hits, best first, made as they are read (``take``),
    and what the recall result will say about them."""

    ranking: str  # the ranking's name and version, or the single leg used
    relaxed: bool = False
    notes: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    empty_reason: str | None = None
    relevance_model: relevance.Model | None = None  # the fitted model that scores the hits
    source: Iterator[Hit] | None = None
    made: list[Hit] = field(default_factory=list)
    # The relevance features of any unit of the index for this question (an entity's page).
    features_of: Callable[[int], relevance.Features] | None = None

    def take(self, n: int) -> list[Hit]:
        """The first ``n`` hits (fewer when the candidates run out)."""
        while len(self.made) < n and self.source is not None:
            nxt = next(self.source, None)
            if nxt is None:
                self.source = None
                break
            self.made.append(nxt)
        return self.made[:n]


class _VectorLeg:
    """The query's embedding and, when this process holds the vectors in memory, their scan, on
    a thread of their own while the lexical leg ranks. llama.cpp's decode, numpy's scan and SQLite
    all release the GIL, so on two cores the two legs run side by side (at 100k units a
    question of ~15 tokens takes ~25 ms to embed and the scan ~15 ms; the lexical leg about
    25). The caller's thread, its lexical work done, takes a share of the scan (``help``)
    instead of waiting. A scan through the index's connection (sqlite-vec, filters) runs after
    the lexical leg, on the caller's thread: one connection serves one thread at a time. The
    resident embedder's copy of a large index's vectors is asked on this thread (it needs no
    connection), so that round trip overlaps the lexical leg too.
    ``also``: a second text to embed on the same thread (``_content_leg``'s), while the caller
    scans: an embedder's query path keeps per-thread state, so a recall embeds on one thread."""

    def __init__(
        self,
        index: Index,
        embedder: VectorSource,
        query: str,
        f: Filters,
        limit: int,
        *,
        threaded: bool,
        also: str | None = None,
    ) -> None:
        self._box: list = []
        self.also_vec = None  # ``also``'s vector, once ``wait`` returned
        self._scan = None
        self._embedded = threading.Event()  # the query's vector exists (or never will)
        held = legs.held_vectors(index, f)
        # The resident embedder's copy of a large index's vectors, asked on this thread beside
        # the lexical leg rather than after it (a round trip of ~60-100 ms at 1M units).
        ask = legs.remote_search(index, f, limit, embedder) if held is None and threaded else None
        self.remote: tuple | None = None  # its answer, (hits or None, why), once ``wait`` returned

        def work() -> None:
            try:
                qvec = embedder.embed_query(query)
                hits = None
                if qvec is not None and ask is not None:
                    self.remote = ask(qvec)
                if qvec is not None and held is not None:
                    self._scan = legs.held_scan(held, qvec, limit)
                    self._embedded.set()
                # The second text while the caller's thread scans (``help``).
                self.also_vec = embedder.embed_query(also) if also and qvec is not None else None
                if self._scan is not None:
                    hits = legs.scan_hits(self._scan)
                self._box.append((True, (qvec, hits)))
            except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
                self._box.append((False, exc))
            finally:
                self._embedded.set()

        self._thread = None
        if threaded:
            self._thread = threading.Thread(target=work, name="clawmem-vector-leg", daemon=True)
            self._thread.start()
        else:
            work()

    def help(self) -> None:
        """Score blocks of the scan on the caller's thread until none is left (waits for the
        query's embedding first: the caller has nothing else to do)."""
        if self._thread is None:
            return
        self._embedded.wait()
        if self._scan is not None:
            self._scan.work()

    def wait(self) -> tuple:
        """(the query's vector or None, the held vectors' hits or None)."""
        if self._thread is not None:
            self.help()
            self._thread.join()
        ok, value = self._box[0]
        if not ok:
            raise value
        return value


def snippet(text: str, q: LexQuery | None, max_chars: int) -> str:
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


def overlaps(a: Hit, kept: list[Hit]) -> bool:
    return any(
        k.path == a.path and not (a.end_line < k.start_line or a.start_line > k.end_line)
        for k in kept
    )


def rank(
    index: Index,
    query: Query,
    *,
    mode: str,
    filters: Filters,
    embedder: VectorSource | None = None,
    fusion_name: str = "rrf",
    ranking: fusion.Ranking | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    snippet_chars: int = 700,
    decay_half_life_days: float = 0.0,
    today: date | None = None,
    degraded: list[str] | None = None,
) -> Ranked:
    """Every hit for ``query`` under ``filters``, best first, made as they are read
    (``Ranked.take``): each leg's best ``candidates`` units, fused, boosted by their neighbours,
    decayed by age, diversified, grown to a readable size, each with its relevance. ``query`` is
    read only through its parsed fields (``text.query.Query``): nothing here parses it again.

    Nothing here depends on how many hits the caller wants: the legs always bring the same
    ``candidates`` units, so the first n hits are the same whether n or m > n are read."""
    rk = ranking or fusion.Ranking()
    degraded = list(degraded or [])
    name = fusion.WEIGHTED if fusion_name == "weighted" else fusion.RRF
    if ranking is not None and ranking != fusion.Ranking(rrf_k=ranking.rrf_k):
        name += "+custom"
    result = Ranked(name, degraded=degraded)
    n_cand = max(1, candidates)
    q = query.lex

    # A question asking for all of something about someone: its text without the names, for a
    # third leg (``_content_leg``; rank fusion only).
    content = None
    if mode == "hybrid" and fusion_name != "weighted" and rk.aggregate_content_weight:
        content = aggregate.without_names_if_asked(query)
    lex, vec, cover, vector_used, content_vec = _run_legs(
        index, query, mode, filters, embedder, n_cand, rk, result, also=content
    )
    # A proposal counts as the message it restates, in each leg (copies.fold_into_sources);
    # ``proposed``: {the message: the citations of the proposals folded into it}.
    fold = _ProposalFold(index, filters, [h.chunk_id for h in (*lex, *vec)])
    lex, vec = fold.leg(lex), fold.leg(vec)
    fold.coverage(cover)
    # A question with words the memory never wrote ("a feline resting on a rug"): only the
    # vector leg can match them, so the lexical leg, matching what is left ("rest"), counts less.
    seen = legs.seen_share(index, q) if _weighs_unseen(mode, vector_used, rk, q) else 1.0
    scores = _fused(lex, vec, cover, q, mode, vector_used, fusion_name, rk, seen)
    if scores and vector_used and content_vec is not None:
        _content_leg(index, content_vec, filters, n_cand, rk, scores, embedder, fold)
        result.notes.append(f"asks for all of something: also ranked as {content!r}")
    if not scores:
        if result.empty_reason is None:
            result.empty_reason = _why_empty(index, q, filters, mode)
        return result

    lex_by = {h.chunk_id: h for h in lex}
    vec_by = {h.chunk_id: h for h in vec}
    rows = queries.rows_around(index, list(scores))
    ids = [cid for cid in scores if cid in rows]

    def section(cid: int) -> tuple[str, str]:
        return rows[cid]["path"], rows[cid]["heading"]

    today = today or date.today()
    fused = mode == "hybrid" and vector_used  # both legs' ranks made the scores
    final = _final_scores(
        ids,
        scores,
        rows,
        rk,
        boosted=fused,
        today=today,
        decay_half_life_days=decay_half_life_days,
    )

    # Stable order: score, then the better vector rank (rrf-v8: two units whose ranks in the
    # legs are swapped tie exactly, and the leg that reads meaning decides: "where is Peter?"
    # gets where he is, not the line that matched only his name best), then the better lexical
    # rank, then path and line.
    def order_key(c: int) -> tuple[float, int, int, str, int, int]:
        lr = lex_by[c].rank if c in lex_by else 10**9
        vr = vec_by[c].rank if c in vec_by else 10**9
        return (-final[c], vr, lr, rows[c]["path"], rows[c]["start_line"], c)

    # What relevance knows about the question as a whole (how much of it the memory has never
    # seen; a name the candidates spell another way is known), and which fitted model reads it.
    asked = relevance.question(
        index,
        query,
        lambda: _names_written(rows[c] for c in ids),
        lambda: _speaks_of_people(rows[c] for c in ids),
    )
    _boost_people(final, ids, rows, query, asked.spelled, rk)
    _lower_questions(final, ids, rows, rk, fused, query)
    # A question asking for all of something may spread its hits and keep them short.
    section_factor, min_chars = rk.same_section_factor, rk.hit_min_chars
    if query.asks_for_all:
        section_factor, min_chars = rk.aggregate_section_factor, rk.aggregate_min_chars

    ordered = sorted(ids, key=order_key)
    if section_factor < 1.0:
        ordered = _diversify(ordered, final, section, section_factor)
    # A question asking for all of something: the order is spread over distinct items
    # (aggregate.py).
    if query.asks_for_all and fused:
        ordered = _spread_out(index, ordered, final, rk)
    # Units holding every identifier and quoted phrase of the query ("DEC-0054", "v2.3.1") come
    # first, in their fused order: a close vector never outranks the exact thing asked for. A
    # long question that names an identifier in passing is ranked as it is fused
    # (``Ranking.exact_first_max_terms``); a quoted phrase always comes first.
    exact = {h.chunk_id for h in lex if h.exact}
    if exact and (query.quoted or len(q.terms) <= rk.exact_first_max_terms):
        ordered = _exact_first(ordered, exact, rows, rk, query.names)

    # A page line restating one fact never shows before the fact it cites (copies.py): the
    # source takes the place right before it, with the copy's evidence of relevance when the
    # legs brought none of its own (the two say the same thing).
    aged = partial(_aged, rows=rows, rk=rk, today=today, half_life=decay_half_life_days)
    ordered, copies_of = _sources_first(
        index, ordered, rows, ids, filters, final, lex_by, vec_by, cover, rk, aged, fold
    )
    copy_ids = {c for folded in copies_of.values() for c in folded}

    top_cosine = max((h.score for h in vec), default=0.0)
    # No model was fitted on the vector leg alone: vector mode's hits have no relevance, and it
    # never abstains (the hybrid model, reading no BM25, refused good answers there).
    model = None
    if mode != "vector":
        model = relevance.model_for(
            embedder.identity.key() if vector_used and embedder is not None else None
        )
    result.relevance_model = model

    def features(cid: int, place: int) -> relevance.Features:
        lh, vh = lex_by.get(cid), vec_by.get(cid)
        if cid not in cover and len(q.terms) >= 2:
            cover.update(legs.coverage(index, q, [cid]))
        return relevance.Features(
            coverage=cover.get(cid, 1.0 if lh is not None else 0.0),
            bm25=lh.score if lh else 0.0,
            cosine=vh.score if vh else 0.0,
            rank=place,
            unseen=asked.unseen,
            unknown_names=asked.unknown_names,
            top_cosine=top_cosine,
            unknown_proper=asked.unknown_proper,
            speakers=_several_speakers(index, rows, cid),
        )

    def hits() -> Iterator[Hit]:
        shown: list[Hit] = []
        taken: set[int] = set()  # units already shown, alone or in a group
        for cid in ordered:
            if cid in taken or cid in copy_ids:
                continue
            r = rows[cid]
            lh, vh = lex_by.get(cid), vec_by.get(cid)
            group = [r]
            if min_chars and r["kind"] is None:
                group = _grow(index, r, final, taken, min_chars)
            taken.update(g["id"] for g in group)
            text = "\n".join(g["text"] for g in group)
            hit = Hit.from_row(
                r,
                score=final[cid],
                snippet=snippet(text, q, snippet_chars),
                start_line=group[0]["start_line"],
                end_line=group[-1]["end_line"],
                text=text,
                lexical_rank=lh.rank if lh else None,
                lexical_score=lh.score if lh else None,
                vector_rank=vh.rank if vh else None,
                vector_score=vh.score if vh else None,
                proposals=tuple(fold.proposed.get(cid, ())),
                copies=tuple(fold.kept_from.get(cid, ()))
                + tuple(
                    f"{rows[c]['path']}#L{rows[c]['start_line']}-L{rows[c]['end_line']}"
                    for c in copies_of.get(cid, ())
                ),
            )
            if overlaps(hit, shown):
                continue  # overlapping units (a fact inside a list item already shown) add nothing
            f = features(cid, len(shown) + 1)
            score = model.probability(f) if model is not None else None
            hit = replace_hit(hit, relevance=score, features=f)
            shown.append(hit)
            yield hit

    result.source = hits()
    result.features_of = lambda cid: features(cid, 1)
    return result


def _several_speakers(index: Index, rows: dict, cid: int) -> float:
    """Relevance's ``speakers``: 1.0 when the unit holds lines of two or more people. An entity's
    page led in by the pipeline may be no candidate of the legs, so not among ``rows``."""
    row = rows.get(cid) or queries.rows_around(index, [cid]).get(cid)
    return 1.0 if row is not None and aggregate.speakers(row["text"]) >= 2 else 0.0


def _run_legs(
    index: Index,
    query: Query,
    mode: str,
    filters: Filters,
    embedder: VectorSource | None,
    n_cand: int,
    rk: fusion.Ranking,
    result: Ranked,
    also: str | None = None,
) -> tuple[list[fusion.LegHit], list[fusion.LegHit], dict[int, float], bool, Vector | None]:
    """Each leg's candidates (the vector leg on a thread while the lexical one ranks), the
    lexical hits' coverage of the question, whether the vector leg ran, and the vector of
    ``also`` (embedded on the vector leg's thread) or None; what went wrong and which ranking
    the hits have are noted on ``result``."""
    q = query.lex
    lex: list[fusion.LegHit] = []
    vec: list[fusion.LegHit] = []
    vector = None
    if mode in ("hybrid", "vector") and embedder is not None:
        vector = _VectorLeg(
            index, embedder, query.text, filters, n_cand, threaded=mode == "hybrid", also=also
        )
    if mode in ("hybrid", "lexical"):
        lex, result.relaxed = legs.lexical_leg(index, q, filters, n_cand, rk)
        if result.relaxed:
            result.notes.append(
                "no result contained every term; showing results that match some of them"
            )
    # How much of the question each lexical hit holds: fusion weighs it, and so does relevance.
    # Computed while the vector leg's thread still works (it needs only the lexical hits).
    cover: dict[int, float] = legs.coverage(index, q, [h.chunk_id for h in lex]) if lex else {}
    vector_used = False
    if mode == "vector" and embedder is None:
        result.empty_reason = "vector search is unavailable: " + "; ".join(result.degraded)
    if vector is not None:
        qvec, held = vector.wait()
        if qvec is None:
            result.degraded.append("the model returned no usable vector for this query")
        else:
            try:
                vec = (
                    held
                    if held is not None
                    else legs.stored_leg(
                        index, qvec, filters, n_cand, remote=embedder, answered=vector.remote
                    )
                )
                vector_used = True
            except db.OperationalError as exc:
                result.degraded.append(f"vector search failed: {exc}")
    if mode == "hybrid" and not vector_used:
        result.ranking = "lexical-bm25"
    elif mode == "lexical":
        result.ranking = "lexical-bm25"
    elif mode == "vector":
        result.ranking = "vector-cosine"

    also_vec = vector.also_vec if vector is not None and vector_used else None
    return lex, vec, cover, vector_used, also_vec


def _weighs_unseen(mode: str, vector_used: bool, rk: fusion.Ranking, q: LexQuery) -> bool:
    """Whether the lexical leg's weight depends on how much of the question the memory holds."""
    return mode == "hybrid" and vector_used and bool(rk.unseen_power) and len(q.terms) >= 2


def _exact_first(
    ordered: list[int], exact: set[int], rows: dict, rk: fusion.Ranking, named: tuple[str, ...] = ()
) -> list[int]:
    """The units holding every identifier first, in their order; among them the Retain facts
    first (rrf-v8, ``rk.exact_facts_first``): a fact is the statement kept about the identifier
    ("DEC-0054: from 2025-11-20 payments-service deploys to ..."), the narrative and checklists
    around it only mention it. Among the facts, one whose subject is an identifier asked about
    (it opens the fact: "DEC-0054: …", "v2.3.1 fixes …") comes before one that names it in
    passing ("I wrote DEC-0054 and a Helm chart …"; rrf-v10). Other units keep their order:
    an abstract that opens with a gene's name is no statement about it more than the next."""
    first = [c for c in ordered if c in exact]
    if rk.exact_facts_first:
        facts = [c for c in first if rows[c]["kind"]]
        about = [c for c in facts if _opens_with(rows[c]["text"], named)]
        first = about + [c for c in facts if c not in about] + [c for c in first if c not in facts]
    return first + [c for c in ordered if c not in exact]


def _opens_with(text: str, named: tuple[str, ...]) -> bool:
    """Whether ``text``'s first words are one of ``named`` (folded, words joined by a space),
    whole words only: "dec 005" does not open "DEC-0054: …"."""
    words = " ".join(tokens(text)[:4]) + " "
    return any(words.startswith(n + " ") for n in named)


def _fused(
    lex: list[fusion.LegHit],
    vec: list[fusion.LegHit],
    cover: dict[int, float],
    q: LexQuery,
    mode: str,
    vector_used: bool,
    fusion_name: str,
    rk: fusion.Ranking,
    seen: float = 1.0,
) -> dict[int, float]:
    """The legs' candidates fused into one score each (a single leg's own scores otherwise).
    ``seen``: the share of the question's words the memory holds (legs.seen_share); the
    lexical leg counts in proportion to ``seen ** rk.unseen_power``, and a unit's coverage is
    of the words it could match."""
    if mode == "hybrid" and vector_used:
        if rk.coverage_power and len(q.terms) >= 2:
            from dataclasses import replace

            lex = [
                replace(h, coverage=min(1.0, cover.get(h.chunk_id, 1.0) / (seen or 1.0)))
                for h in lex
            ]
        lexical_weight = rk.lexical_weight * seen**rk.unseen_power
        scores = (
            fusion.weighted(lex, vec)
            if fusion_name == "weighted"
            else fusion.rrf(lex, vec, rk.rrf_k, lexical_weight, rk.vector_weight, rk.coverage_power)
        )
    else:
        leg = lex if mode != "vector" else vec
        scores = {h.chunk_id: h.score for h in leg}
    return scores


class _ProposalFold:
    """Which of a recall's candidates are proposals (memory/proposals/) of another unit, and
    that unit: in each leg a proposal counts as its source (copies.fold_into_sources), and its
    citation rides on the source's hit (``proposed``). A source found through a proposal
    is its candidate, unless filters are set and it is not already one (it would have to pass
    them): then the proposal stays a hit of its own, as when its source is gone."""

    def __init__(self, index: Index, f: Filters, ids: list[int]) -> None:
        self.index, self.filters, self.found = index, f, set(ids)
        self.source: dict[int, int] = {}
        self.proposed: dict[int, list[str]] = {}
        # A message whose proposal, found among the candidates, was accepted counts as the fact
        # it was kept as (copies.kept_fact): {the message: the fact}, {the fact: the message's
        # citation}.
        self.kept: dict[int, int] = {}
        self.kept_from: dict[int, list[str]] = {}
        self._read(ids)

    def _read(self, ids: list[int]) -> None:
        rejected: frozenset[str] | None = None  # the ledger, read once a proposal is found
        for pid, r in queries.units_under(self.index, sorted(ids), PROPOSAL_PREFIX).items():
            src = copies.proposal_source(self.index, r["path"], r["text"])
            if src is None or (self.filters.active and src not in self.found):
                continue
            fact = copies.kept_fact(self.index, r["text"])
            if fact is not None:
                self.kept[src] = fact
            if self._keep(src):
                self.source[pid] = self.source[src]  # decided: a citation on the fact no more
                continue
            self.source[pid] = src
            if rejected is None:
                # The workspace of this index (.memory/ is always its root's).
                rejected = proposal_ledger.rejected_ids(self.index.path.parent.parent)
            if copies.proposal_id(r["text"]) in rejected:
                continue  # still the message's copy, but no longer proposed: a person said no
            self.proposed.setdefault(src, []).append(
                f"{r['path']}#L{r['start_line']}-L{r['end_line']}"
            )
        for cid in ids:
            if cid in self.kept:
                self._keep(cid)

    def stands_for(self, unit: int, rows: dict) -> int:
        """The unit that stands for ``unit`` in the hits: the fact a message was kept as (its
        row added to ``rows``), else ``unit`` itself."""
        fact = self.kept.get(unit)
        if fact is None or not self._keep(unit):
            return unit
        if fact not in rows:
            row = queries.units_under(self.index, [fact], "").get(fact)
            if row is None:
                return unit
            rows[fact] = row
        return fact

    def _keep(self, message: int) -> bool:
        """Count ``message`` as the fact its proposal was kept as, if it was and that fact may
        be a hit (with filters set, only a fact already among the candidates: it passed them)."""
        fact = self.kept.get(message)
        if fact is None or (self.filters.active and fact not in self.found):
            return False
        if self.source.get(message) != fact:
            self.source[message] = fact
            r = queries.units_under(self.index, [message], "").get(message)
            if r is not None:
                self.kept_from.setdefault(fact, []).append(
                    f"{r['path']}#L{r['start_line']}-L{r['end_line']}"
                )
        return True

    def leg(self, hits: list[fusion.LegHit], more: bool = False) -> list[fusion.LegHit]:
        """``hits`` with each proposal counted as its source; ``more``: a later leg's hits,
        read for proposals first."""
        if more:
            new = [h.chunk_id for h in hits if h.chunk_id not in self.found]
            self.found.update(new)
            self._read(new)
        return copies.fold_into_sources(hits, self.source)

    def coverage(self, cover: dict[int, float]) -> None:
        """A source covers as much of the question as its best-covering proposal."""
        for pid, src in self.source.items():
            if pid in cover:
                cover[src] = max(cover.get(src, 0.0), cover.pop(pid))


def _content_leg(
    index: Index,
    qvec: Vector,
    filters: Filters,
    n_cand: int,
    rk: fusion.Ranking,
    scores: dict[int, float],
    remote: object,
    fold: _ProposalFold,
) -> None:
    """A question asking for all of something about someone: the vector leg again, against
    ``qvec``, the question without its names (``aggregate.without_names_if_asked``), added to
    ``scores`` as a third RRF leg of weight ``rk.aggregate_content_weight``. It ranks the same
    fixed number of candidates, so the order stays independent of k. A one-shot process asks
    the resident embedder's copy of the vectors, as the main vector leg does (``remote``)."""
    # One recall, one counted search: this one never starts loading the vectors into memory.
    found = legs.vector_leg(index, qvec, filters, n_cand, count=False, remote=remote)
    for h in fold.leg(found, more=True):
        w = rk.aggregate_content_weight / (rk.rrf_k + h.rank)
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w


def _spread_out(
    index: Index, ordered: list[int], final: dict[int, float], rk: fusion.Ranking
) -> list[int]:
    """``ordered`` (best first) for a question asking for all of something: the first
    ``rk.aggregate_spread_depth`` units are re-ordered by maximal marginal relevance over their
    stored vectors (``aggregate.spread_out``). Computed on the whole fixed pool, so the order
    never depends on k."""
    if not rk.aggregate_spread_weight:
        return ordered
    depth = rk.aggregate_spread_depth
    head = ordered[:depth]
    vectors = legs.vectors_of(index, head)
    return aggregate.spread_out(head, final, vectors, rk.aggregate_spread_weight) + ordered[depth:]


def _final_scores(
    ids: list[int],
    scores: dict[int, float],
    rows: dict,
    rk: fusion.Ranking,
    *,
    boosted: bool,
    today: date,
    decay_half_life_days: float,
) -> dict[int, float]:
    """Fused scores nudged by their neighbours (``boosted``: on fused scores only), below a
    note for a transcript, and decayed by age."""

    def section(cid: int) -> tuple[str, str]:
        return rows[cid]["path"], rows[cid]["heading"]

    final = {}
    for cid in ids:
        s = scores[cid]
        if rk.neighbour_boost and boosted:
            # On fused (RRF) scores only: a single leg's BM25 or cosine scores are on other
            # scales. Units of one file are stored in file order, so neighbours are id ± 1.
            near = [
                scores[n]
                for n in (cid - 1, cid + 1)
                if n in scores
                and n in rows
                and section(n) == section(cid)
                and rows[n]["kind"] is None
            ]
            if near and rows[cid]["kind"] is None:
                s += rk.neighbour_boost * max(near)
        if s > 0 and rows[cid]["path"].startswith(TRANSCRIPT_PREFIX):
            s *= rk.transcript_factor  # below a curated note saying the same thing
        day = rows[cid]["day"]
        if decay_half_life_days > 0 and day and not rows[cid]["path"].startswith("bank/"):
            age = (today - date.fromisoformat(day)).days
            if age > 0:
                s *= math.pow(0.5, age / decay_half_life_days)
        final[cid] = s

    return final


def _sources_first(
    index: Index,
    ordered: list[int],
    rows: dict,
    ids: list[int],
    f: Filters,
    final: dict[int, float],
    lex_by: dict[int, fusion.LegHit],
    vec_by: dict[int, fusion.LegHit],
    cover: dict[int, float],
    rk: fusion.Ranking,
    aged: Callable[[int, float], float],
    fold: _ProposalFold,
) -> tuple[list[int], dict[int, list[int]]]:
    """``ordered`` with each copy's source right before it (copies.sources_first), when
    ``rk.sources_first``, and {source: its copies} for the copies folded into their source's
    hit (copies.folded), when ``rk.fold_copies``. A source that was no candidate gets its
    copy's score, aged as its own would be (``aged``: the decay by its day); a candidate keeps
    its own. A source moved up takes its copy's score, and its copy's leg hits where the legs
    brought none of its own: the two say the same thing, so the copy's evidence of relevance is
    the source's."""
    if not rk.sources_first:
        return ordered, {}
    known: dict[int, int | None] = {}

    def source_of(cid: int) -> int | None:
        if cid not in known:
            src = _source_unit(index, rows, ids, cid, f)
            known[cid] = None if src is None else fold.stands_for(src, rows)
        return known[cid]

    ordered, moved = copies.sources_first(ordered, source_of)
    for src, copy in moved.items():
        if src not in final:
            final[src] = aged(src, final[copy])
        if src not in lex_by and copy in lex_by:
            lex_by[src] = lex_by[copy]
            cover.setdefault(src, cover.get(copy, 1.0))
        if src not in vec_by and copy in vec_by:
            vec_by[src] = vec_by[copy]
    return ordered, (copies.folded(ordered, source_of) if rk.fold_copies else {})


def _aged(
    cid: int, score: float, *, rows: dict, rk: fusion.Ranking, today: date, half_life: float
) -> float:
    """``score`` as unit ``cid``'s final score: aged by its day, as ``_final_scores`` ages."""
    return _final_scores(
        [cid], {cid: score}, rows, rk, boosted=False, today=today, decay_half_life_days=half_life
    )[cid]


def _source_unit(index: Index, rows: dict, ids: list[int], cid: int, f: Filters) -> int | None:
    """The unit that the page line ``cid`` restates (copies.cited_source), or None. A candidate
    when it is one; else, without filters, read from the index and added to ``rows`` (with a
    filter it would have to pass them: it is left out instead)."""
    r = rows[cid]
    cited = copies.cited_source(r["path"], r["text"])
    if cited is None:
        return None
    path, line = cited
    for other in ids:
        o = rows[other]
        if o["path"] == path and o["start_line"] <= line <= o["end_line"]:
            return other
    if f.active:
        return None
    row = queries.unit_at(index, path, line)
    if row is None or not row["start_line"] <= line <= row["end_line"]:
        return None
    rows[row["id"]] = row
    return row["id"]


def _names_written(rows: Iterable) -> Iterator[str]:
    """The names the given units use: who said them, the names in their text
    (text/spelling.py) and their @mentions."""
    for r in rows:
        if (said_by := aggregate.speaker(r["text"])) is not None:
            yield said_by
        yield from spelling.names_in(r["text"])
        yield from (fold(e) for e in (r["entities"] or "").split())


def _speaks_of_people(rows: Iterable) -> bool:
    """Whether any of the given units is about people: someone's chat line or an @mention."""
    return any(r["entities"] or aggregate.is_chat_line(r["text"]) for r in rows)


def _boost_people(
    final: dict[int, float],
    ids: list[int],
    rows: dict,
    query: Query,
    spelled: dict[str, str],
    rk: fusion.Ranking,
) -> None:
    """A question naming a person: their own lines and the facts about them count more (under
    the name as the notes spell it, when the question spells it another way)."""
    if rk.person_boost:
        people = set(query.names) | set(spelled.values())
        for cid in ids if people else ():
            about = {fold(e) for e in (rows[cid]["entities"] or "").split()}
            if aggregate.speaker(rows[cid]["text"]) in people or about & people:
                final[cid] *= 1.0 + rk.person_boost


def _lower_questions(
    final: dict[int, float],
    ids: list[int],
    rows: dict,
    rk: fusion.Ranking,
    fused: bool,
    query: Query,
) -> None:
    """A message that only asks is rarely an answer: its score counts ``rk.question_factor``
    (rrf-v11: every hybrid question, rrf-v6 only one asking for all of something). A note's own
    open question ("- [ ] who signs off the rounding?") cannot answer a question asking who,
    when, where, how many or why (``Query.asks``): it counts ``rk.open_question_factor``
    (rrf-v18); for any other question it may be what is looked for ("what is still open on the
    rounding?"). Only on ``fused`` scores: the lexical leg alone keeps BM25's order ("how are
    you?" may be what is looked for there)."""
    if not fused:
        return
    for cid in ids:
        text = rows[cid]["text"]
        if rk.question_factor != 1.0 and aggregate.only_asks(text):
            final[cid] *= rk.question_factor
        elif query.asks is not None and rk.open_question_factor != 1.0:
            if aggregate.open_question(text):
                final[cid] *= rk.open_question_factor


def _grow(index: Index, row: Row, score: dict, taken: set[int], min_chars: int) -> list:
    """A short unit (a chat message, a checklist item) with the units right next to it, until
    the group is about ``min_chars`` long: one hit then carries the question a reply answers, or
    the reply a question got. Only units on adjacent lines of the same section join (so the
    group's text is exactly its lines), never one already shown, and the better-scored
    neighbour (else the one before) joins first."""
    group = [row]
    size = len(row["text"])
    near = queries.chunks_near(index, row)
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


def _diversify(
    ordered: list[int], score: dict, section: Callable[[int], tuple[str, str]], factor: float
) -> list[int]:
    """Greedy re-ranking: each pick from a section already picked counts ``factor`` times less,
    so questions whose evidence spans days get several short hits rather than one section."""
    shown: dict = {}
    out: list[int] = []
    left = list(ordered)
    while left:
        best = max(left, key=lambda c: score[c] * factor ** shown.get(section(c), 0))
        # ties keep the original order (max returns the first)
        out.append(best)
        left.remove(best)
        shown[section(best)] = shown.get(section(best), 0) + 1
        if len(out) >= 200:  # nothing past a page of hits is read
            out += left
            break
    return out


def _why_empty(index: Index, q: LexQuery, f: Filters, mode: str) -> str:
    if queries.unit_count(index) == 0:
        if index.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone():
            # A new workspace: its MEMORY.md holds only the template's comments.
            return (
                "the index is empty: the memory files hold no text yet (`clawmem retain "
                '"…"`, or write in MEMORY.md or memory/YYYY-MM-DD.md)'
            )
        return "the index is empty: no memory files were found (MEMORY.md, memory/, bank/)"
    if mode == "lexical" and not q.all_terms:
        return "the query has no searchable terms (only punctuation or one-letter words)"
    if f.active:
        if queries.unit_count(index, f) == 0:
            if f.source == "sessions" and not queries.unit_count(index, Filters(source="sessions")):
                # The first `--source sessions` of a workspace: say what to set up, not "filters".
                return (
                    "no conversation transcripts are indexed: list their folders under [sessions] "
                    "paths in clawmem.toml, or `clawmem flush` one (docs/sessions.md)"
                )
            return "the filters exclude everything: no indexed text matches them"
    if mode == "vector":
        return "no vectors match (vectors may still be pending: run `clawmem index`)"
    if not q.all_terms:
        return "the query has no searchable terms and vector search is off"
    return "no indexed text contains any of the query's terms"
