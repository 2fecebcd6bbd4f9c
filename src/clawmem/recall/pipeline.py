"""The recall pipeline: from a question to cited hits, in one pass over one open index.

    arguments → filters → lazy sync → vector state → ranking (ranking.py; with a time named in the
    question, two rankings fused) → the entity's page first → next lines joined → messages by
    what they answer → supersession → as-of order → token budget → staleness → one
    ``RecallResult``

Filters (time, kind, entity, path, as-of) apply inside the ranking, before any limit; everything
after it only reorders, marks or trims the hits it found.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

from clawmem.errors import BadArgument, InputError, StoreError, UsageError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.kinds import CHUNK
from clawmem.markdown.kinds import KINDS as FACT_KINDS
from clawmem.markdown.supersession import KINDS as SUPERSEDABLE
from clawmem.markdown.supersession import Statement, supersedes
from clawmem.recall import answer_match, copies, entities, legs, passages
from clawmem.recall.fusion import Ranking
from clawmem.recall.graph import linked_hits
from clawmem.recall.ranking import Ranked, rank, snippet
from clawmem.recall.results import Hit, RecallResult
from clawmem.store import db, queries
from clawmem.store.index import Filters, Index
from clawmem.text.query import Query
from clawmem.text.shown_path import shown_path
from clawmem.text.textnorm import require_text
from clawmem.text.timeexpr import TimeRange, parse_date, parse_since, parse_until

if TYPE_CHECKING:
    from clawmem.embedders.base import EmbedResult, Vector, VectorSource
    from clawmem.markdown.workspace import Scan
    from clawmem.recall.relevance import Model

MODES = ("hybrid", "lexical", "vector")
KINDS = (*FACT_KINDS, CHUNK)

# Supersession looks at this many of the newest later facts per hit: enough for any real
# history of one entity, and it keeps recall fast when an entity has thousands of facts.
SUPERSEDE_CANDIDATES = 40

# Whether to abstain is decided on this many of the first hits, whatever k (a question answered
# at -k 20 is answered at -k 1 too).
ABSTAIN_DEPTH = 10
# Hits made beyond the cut: room for the entity page and the notes linking to it, which move
# later hits down a few places.
SLACK = 8
# The note that says the entity's page leads the hits (a merge of lists keeps it first).
PAGE_NOTE = "entity: "
ALL = 1_000_000  # every hit the candidates make (with --as-of)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", hint="use one of: " + ", ".join(MODES))


def _check_text(**texts: str | None) -> None:
    for param, value in texts.items():
        require_text(value, param)


def read_question(
    query: str | Query,
    *,
    today: date | None,
    since: str | None = None,
    until: str | None = None,
    as_of: str | None = None,
) -> Query:
    """The question of a request, read once (``Query.parse``). A time it names is looked for only
    when no time filter was given (a filter fixes the time). A ``Query`` the request read already
    (a read scope's search, ``context``'s second search) is taken as it is, less the entities
    another index resolved for it: each index resolves its own (``entities.resolve``)."""
    if isinstance(query, Query):
        return replace(query, entities=())
    return Query.parse(query, None if since or until or as_of else (today or date.today()))


def _checked_numbers(
    k: int, budget: int | None, threshold: float | None
) -> tuple[int, float | None]:
    if k < 1:
        raise BadArgument("k", k, "must be at least 1")
    if budget is not None and budget < 1:
        raise BadArgument("budget", budget, "must be a positive number of tokens")
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise BadArgument("min_relevance", threshold, "must be between 0 and 1")
    return k, threshold


def recall(
    ix: Indexer,
    query: str | Query,
    *,
    k: int | None = None,
    mode: str = "hybrid",
    since: str | None = None,
    until: str | None = None,
    kind: str | list[str] | None = None,
    entity: str | None = None,
    path: str | None = None,
    as_of: str | None = None,
    budget: int | None = None,
    sync: bool = True,
    today: date | None = None,
    ranking: Ranking | None = None,
    source: str | None = None,
    expand: bool = False,
    min_relevance: float | None = None,
    scopes: Collection[str] | None = None,
    join_lines: bool = True,
) -> RecallResult:
    """Search memory. Filters (time, kind, entity, path, as-of, source) apply before ranking
    limits; ``source`` is "memory" (the Markdown), "sessions" (transcripts) or "all" (None).
    ``budget`` packs the best results into about that many tokens. ``ranking`` overrides the
    ranking's numbers (for experiments; results then name it ``…+custom``). ``expand`` adds
    the notes one link away from the best hits, after them, each marked with the link that
    reached it (``Hit.via``). When no hit's relevance (relevance.py) reaches ``min_relevance``
    (default: the ``min_relevance`` setting; 0 turns it off), the result has no hits, its
    ``empty_reason`` says so and names the best relevance, and ``weak_hits`` holds what was
    found. The hits of ``k=n`` are always the first n hits of ``k=m`` for n < m <= the
    ``candidates`` setting (80); a larger ``k`` ranks a deeper pool. ``scopes``: which of the
    workspace's read scopes are asked too (None: all; ``recall.scopes.recall_with_scopes``, the
    facade's recall, reads it; this workspace's own search does not depend on it).
    ``join_lines`` False leaves lines next to each other apart (``passages``) and the messages
    in their fused order (``answer_match``): a caller merging this list with others' joins and
    re-orders them on the merged list."""
    _check_mode(mode)
    today = today or date.today()
    # The question, read once per request (text/query.py): everything below reads ``q``'s fields.
    q = read_question(query, today=today, since=since, until=until, as_of=as_of)
    _check_text(entity=entity, path=path)
    k_given = k is not None
    k, threshold = _checked_numbers(
        ix.cfg.k if k is None else k,
        budget,
        ix.cfg.min_relevance if min_relevance is None else min_relevance,
    )
    filters = replace(
        filters_of(today, since, until, kind, entity, path, as_of), source=source_of(source)
    )

    notes: list[str] = []
    # A recall that ranks by vectors embeds what an earlier sync left pending (a git hook's).
    scan, idx = ix.sync_for_read(notes, embed=mode != "lexical") if sync else (None, None)
    if idx is None:
        if not ix.index_path.exists():
            res = RecallResult(q.text, mode, "none", [])
            res.empty_reason = "no index yet: run `clawmem index` (the workspace may be read-only)"
            return res
        try:
            idx = ix.open_for_read()
        except db.DatabaseError as exc:
            raise StoreError(
                f"{ix.index_path}: {exc}", hint="run `clawmem index --force`"
            ) from None
    t0 = time.perf_counter()
    try:
        degraded, vectors, emb = _vector_state(ix, idx, mode)
        if emb is not None:
            emb = _QueryOnce(emb)  # a time-hinted recall ranks twice: embed the query once
        # With a budget, rank more candidates than k and let the packer choose.
        want = max(k, 20) if budget and not k_given else k
        rk = ranking or Ranking(rrf_k=ix.cfg.rrf_k)

        def search_with(f: Filters) -> Ranked:
            return rank(
                idx,
                q,
                mode=mode,
                filters=f,
                embedder=emb,
                fusion_name=ix.cfg.fusion,
                ranking=rk,
                # k-independent up to ``candidates`` (80): the first hits of -k n and -k m agree
                # for n < m <= 80; a longer list needs a deeper pool (-k 200 has 200 hits).
                candidates=max(ix.cfg.candidates, want),
                snippet_chars=ix.cfg.snippet_chars,
                decay_half_life_days=ix.cfg.decay_half_life_days,
                today=today,
                degraded=degraded,
            )

        weak: list[Hit] = []
        best: float | None = None
        try:
            if _page_may_lead(filters) and not filters.entity:
                q = entities.resolve(idx, q)  # the known entities it names, for the page
            ranked = (
                search_with(filters)
                if q.time_hint is None
                else _time_hinted(search_with, filters, q.time_hint, rk)
            )
            # Every step below is computed on the same k-independent list and only then cut
            # to ``want``: the first hits never depend on how many were asked for. The page
            # and the linked notes shift later hits by a few places (SLACK); the as-of order
            # moves superseded facts after every other hit, so it needs all of them.
            depth = ALL if filters.as_of else max(want, ABSTAIN_DEPTH) + SLACK
            hits = ranked.take(depth)
            page = _entity_page(idx, q, filters, ix.cfg.snippet_chars, rk)
            if page is not None:
                if ranked.features_of is not None:
                    page = replace(page, features=ranked.features_of(_page_unit(idx, page)))
                hits = [page, *[h for h in hits if not _overlap(h, page)]]
                ranked.notes.append(f"{PAGE_NOTE}{page.entities[0]} (page {page.path})")
            if join_lines:
                hits = _next_lines_joined(
                    q, hits, rk, ranked.ranking, page is not None, ix.cfg.snippet_chars
                )
                hits = answer_first(q, hits, rk, mode, ranked.ranking, page is not None)
            hits = linked_hits(
                idx,
                hits,
                entity_page=page,
                expand=expand,
                filters=filters,
                k=want,
                snippet_chars=ix.cfg.snippet_chars,
            )
            if filters.as_of:
                hits = mark_superseded(idx, hits, filters.as_of)
                hits = [h for h in hits if h.superseded_by is None] + [
                    h for h in hits if h.superseded_by is not None
                ]
            hits = _scored(hits, ranked.relevance_model)
            if threshold is None:  # unset: the fitted model's own (vector mode has none)
                model = ranked.relevance_model
                threshold = model.threshold if model is not None else 0.0
            best = max(
                (h.relevance for h in hits[:ABSTAIN_DEPTH] if h.relevance is not None),
                default=None,
            )
            if not expand:
                hits = hits[:want]
            if threshold > 0 and best is not None and best < threshold:
                weak, hits = hits, []
                ranked.empty_reason = (
                    f"no relevant memory: the best hit's relevance is {best:.3f}, below the "
                    f"threshold min_relevance={threshold:g} (lower it, or 0 to show every hit)"
                )
            if not filters.as_of:
                hits = corrections_first(idx, mark_superseded(idx, hits, None))
                hits = hits if expand else hits[:want]
            hits = [_said(idx, h) if h.origin == "sessions" else h for h in hits]
            hits, packed = _within_budget(ranked, hits, budget)
            ranked.notes.extend(_kept_by_validity(hits, filters))
        except db.DatabaseError as exc:
            raise StoreError(
                f"{ix.index_path}: {exc}", hint="run `clawmem index --force` to rebuild it"
            ) from None
        if emb is not None and mode != "lexical":
            vectors["query_by"] = getattr(emb, "query_by", "this process")
            vectors["search"] = legs.vector_search(idx)
            ranked.degraded.extend(legs.vector_notes(idx))
            if getattr(emb, "error", None):
                vectors.update(state="off", reason=emb.error)
                ranked.degraded.append(f"vector search off: {emb.error}")
        ranked.degraded.extend(_unsearchable(ix, idx, scan))
        stale_files = None  # not checked: the caller asked for no sync (a stat of every file)
        if sync:
            stale_files = ix.stale_files(scan, idx)
        if stale_files:
            ranked.degraded.append(
                f"index is stale: {stale_files} file(s) changed on disk were not synced"
            )
    finally:
        ix.release(idx)
    return RecallResult(
        q.text,
        mode,
        ranked.ranking,
        hits,
        empty_reason=ranked.empty_reason,
        relevance={
            "model": ranked.relevance_model.name if ranked.relevance_model else None,
            "threshold": threshold,
            "best": None if best is None else round(best, 4),
        },
        weak_hits=weak,
        relaxed=ranked.relaxed,
        notes=notes + ranked.notes,
        degraded=ranked.degraded,
        vectors=vectors,
        index={
            "path": str(ix.index_path),
            "stale_files": stale_files,
            # "watcher": a live `clawmem watch` vouched for every file; "stat scan": each file
            # was compared (watcher_note says why the watcher was not trusted, if one runs).
            "fresh_by": ix.freshness[0] if sync else None,
            "watcher_note": ix.freshness[1] if sync else None,
        },
        filters={
            "since": filters.since,
            "until": filters.until,
            "kind": list(filters.kinds),
            "entity": filters.entity,
            "path": filters.path_prefix,
            "as_of": filters.as_of,
            "source": filters.source or "all",
        },
        budget=packed,
        seconds=time.perf_counter() - t0,
    )


def _within_budget(
    ranked: Ranked, hits: list[Hit], budget: int | None
) -> tuple[list[Hit], dict | None]:
    """The hits that fit ``budget`` (all without one) and the packing's account; a budget
    that leaves nothing says so in ``empty_reason`` (the budget emptied it, not the search)."""
    if not budget:
        return hits, None
    kept, packed = pack_budget(hits, budget)
    if hits and not kept:
        ranked.empty_reason = budget_emptied(hits[0], budget)
    return kept, packed


def _kept_by_validity(hits: list[Hit], f: Filters) -> list[str]:
    """A note naming the facts recorded outside the time window but kept because the validity
    each states overlaps it (``queries.filter_sql``): "Lives in Hanoi (from March 2025)" written
    in 2025 is still true in a window of last week, and a reader should see why it is there."""
    if not (f.since or f.until):
        return []
    lo, hi = f.since or "0000-00-00", f.until or "9999-99-99"
    kept = []
    for h in hits:
        if h.kind is None or h.valid_from is None or (h.day and lo <= h.day <= hi):
            continue
        when = f"recorded {h.day}" if h.day else "undated"
        valid = f"to {h.valid_to}" if h.valid_to else "open-ended"
        kept.append(f"{h.citation} ({when}; valid from {h.valid_from}, {valid})")
    if not kept:
        return []
    return [
        f"kept though recorded outside the window {f.since or '…'} to {f.until or '…'}, because "
        f"the validity they state overlaps it: {'; '.join(kept)}"
    ]


def filters_of(
    today: date,
    since: str | None,
    until: str | None,
    kind: str | list[str] | None,
    entity: str | None,
    path: str | None,
    as_of: str | None,
) -> Filters:
    """The recall arguments that restrict what is searched, as one ``Filters`` (also read by
    ``clawmem facts``, which lists what the same filters keep)."""
    kinds: tuple[str, ...] = ()
    if kind:
        raw = [kind] if isinstance(kind, str) else list(kind)
        # A letter or a name, as `retain --kind opinion` takes it: "world" is W.
        by_name = {name: letter for letter, name in FACT_KINDS.items()} | {CHUNK: CHUNK}
        kinds = tuple(by_name.get(x.strip().lower(), x.strip().upper()) for x in raw)
        bad = [x for x in kinds if x not in KINDS]
        if bad:
            raise BadArgument(
                "kind",
                bad[0],
                "unknown kind",
                hint="use W, B, O, S (world, experience, opinion, observation) or chunk",
            )
    try:
        first = parse_since(since, today).isoformat() if since else None
        last = parse_until(until, today).isoformat() if until else None
        if first and last and first > last:
            # An empty window is a mistake on the command line, not an answer ("the filters
            # exclude everything" sent people looking at their notes).
            raise BadArgument(
                "since",
                since,
                f"starts on {first}, after the window's end ({until} ends on {last})",
                hint="swap the two days: the window runs from the earlier to the later",
            )
        return Filters(
            since=first,
            until=last,
            kinds=kinds,
            entity=entity.lstrip("@") if entity else None,
            path_prefix=path,
            as_of=parse_date(as_of).isoformat() if as_of else None,
        )
    except InputError as exc:
        raise exc.recast(UsageError) from None  # a bad argument value, not a bad file


SOURCES = ("memory", "sessions", "all")


def source_of(source: str | None) -> str | None:
    if source is None or source == "all":
        return None
    if source not in SOURCES:
        raise BadArgument("source", source, "unknown source", hint="use memory, sessions or all")
    return source


def _said(idx: Index, h: Hit) -> Hit:
    """A transcript's hit with its session id and the time its first message was said."""
    session_id, said_at = queries.transcript_details(idx, h.path, h.start_line, h.end_line)
    return replace(h, session_id=session_id, said_at=said_at)


def _vector_state(
    ix: Indexer, idx: Index, mode: str
) -> tuple[list[str], dict, VectorSource | None]:
    """(degraded reasons, vectors summary, embedder or None) for a recall."""
    degraded: list[str] = []
    counts = idx.vector_counts()
    state = {
        "backend": idx.vec.backend,
        "sqlite_vec": idx.vec.version or None,
        "indexed": counts["vectors"],
        "pending": counts["pending"],
        "state": "ok",
        "reason": None,
    }
    if not idx.vec.available:
        degraded.append(f"sqlite-vec unavailable, using an exact NumPy scan: {idx.vec.reason}")
    if mode == "lexical":
        state["state"] = "unused"
        return degraded, state, None
    emb = ix.supply.for_query(idx.get_meta("embedder"))
    if emb is None:
        state.update(state="off", reason=ix.supply.error)
        degraded.append(f"vector search off: {ix.supply.error}")
        return degraded, state, None
    if idx.get_meta("embedder") != emb.identity.key():
        why = (
            f"the index's vectors were built by {idx.get_meta('embedder') or 'no model'}, "
            f"the configured model is {emb.identity.key()}: run `clawmem index`"
        )
        state.update(state="mismatch", reason=why)
        degraded.append(f"vector search off: {why}")
        return degraded, state, None
    # Which model's vectors answer (the built-in default's layout is part of its name).
    state["model"] = emb.identity.model
    if counts["pending"]:
        state.update(state="partial", reason=f"vectors: {counts['pending']} pending")
        degraded.append(f"vectors: {counts['pending']} pending; run `clawmem index` to embed them")
    return degraded, state, emb


class _QueryOnce:
    """An embedder that embeds each query text once (documents pass straight through)."""

    def __init__(self, embedder: VectorSource) -> None:
        self._embedder = embedder
        self.identity = embedder.identity
        self._memo: dict[str, Vector | None] = {}

    def embed_query(self, text: str) -> Vector | None:
        if text not in self._memo:
            self._memo[text] = self._embedder.embed_query(text)
        return self._memo[text]

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        return self._embedder.embed_documents(texts)

    def __getattr__(self, name: str) -> object:
        return getattr(self._embedder, name)


# The time-hinted fusion reads this many hits of each ranking; the unrestricted ranking's later
# hits follow, in their order. A fixed depth: the fused order does not depend on k.
TIME_FUSE_DEPTH = 20


def _time_hinted(
    search_with: Callable[[Filters], Ranked], filters: Filters, hint: TimeRange, rk: Ranking
) -> Ranked:
    """A time named in the question ("on 29 Dec 2023", "last week") is a preference, not a
    filter: people talk about a day on the next one, and a question may date the wrong
    session. Search the window (widened by ``rk.time_slack_days``) and everywhere, and fuse
    the two rankings, so dated hits rise and nothing outside the window is lost."""
    slack = timedelta(days=rk.time_slack_days)
    since = until = None
    if hint.start:
        try:
            since = (hint.start - slack).isoformat()
        except OverflowError:  # the first days of year 1
            since = hint.start.isoformat()
    if hint.end:
        try:
            until = (hint.end + slack).isoformat()
        except OverflowError:
            until = hint.end.isoformat()
    window = replace(filters, since=since, until=until)
    near = search_with(window)
    wide = search_with(filters)
    near_hits = near.take(TIME_FUSE_DEPTH)
    if not near_hits:
        return wide
    fused: dict[str, float] = {}
    by_cite: dict[str, Hit] = {}
    for hits, w in ((near_hits, rk.time_weight), (wide.take(TIME_FUSE_DEPTH), 1.0)):
        for rank_, h in enumerate(hits, 1):
            fused[h.citation] = fused.get(h.citation, 0.0) + w / (rk.rrf_k + rank_)
            by_cite.setdefault(h.citation, h)
    order = sorted(fused, key=lambda c: -fused[c])  # stable: near's order breaks ties
    head = [replace(by_cite[c], score=fused[c]) for c in order]

    def rest() -> Iterator[Hit]:
        # The unrestricted ranking's later hits, scored as if only that ranking had them.
        place = TIME_FUSE_DEPTH
        while True:
            more = wide.take(place + 1)
            if len(more) <= place:
                return
            h = more[place]
            place += 1
            if h.citation not in fused and not any(_overlap(h, x) for x in head):
                yield replace(h, score=1.0 / (rk.rrf_k + place))

    out = Ranked(
        wide.ranking,
        relaxed=wide.relaxed,
        notes=wide.notes,
        degraded=wide.degraded,
        empty_reason=wide.empty_reason,
        relevance_model=wide.relevance_model,
        source=itertools.chain(head, rest()),
        features_of=wide.features_of,
    )
    out.notes.append(
        f"the question names a time: hits from {window.since or '…'} to {window.until or '…'}"
        " rank higher"
    )
    return out


def _next_lines_joined(
    q: Query, hits: list[Hit], rk: Ranking, ranking: str, page_leads: bool, snippet_chars: int
) -> list[Hit]:
    """rrf-v15: lines next to each other among the first hits as one (passages.py), on the
    k-independent list (before ``--expand`` cuts it to k), before relevance reads their places;
    rank fusion only (the weighted fusion is the classic baseline, kept as it was). The
    entity's page keeps its lead."""
    if not ranking.startswith("rrf-"):
        return hits
    keep = 1 if page_leads else 0
    return passages.join_next_lines(hits, rk.join_depth, q, snippet_chars, keep=keep)


def answer_first(
    q: Query, hits: list[Hit], rk: Ranking, mode: str, ranking: str, page_leads: bool
) -> list[Hit]:
    """rrf-v16: the messages among the first hits re-ordered by whether each can answer what the
    question asks (answer_match.py), after the lines next to each other were joined, on the
    k-independent list, before relevance reads their places; hybrid rank fusion only. The
    entity's page keeps its lead, and a short question with an identifier or a quoted phrase
    keeps exact-first's order (ranking.py: the units holding it come first)."""
    if mode != "hybrid" or not ranking.startswith("rrf-"):
        return hits
    if q.lex.strong and (q.quoted or len(q.lex.terms) <= rk.exact_first_max_terms):
        return hits
    keep = 1 if page_leads else 0
    if rk.answer_depth:
        hits = answer_match.reorder(q, hits, rk.answer_depth, keep=keep)
    if rk.form_depth:  # rrf-v19/v20: facts and notes' lines holding the time, number, cause
        hits = answer_match.form_first(q, hits, rk.form_depth, keep=keep)
    return hits


def _scored(hits: list[Hit], model: Model | None) -> list[Hit]:
    """Each hit's relevance from its features at its final place in the list."""
    if model is None:
        return hits
    out = []
    for place, h in enumerate(hits, 1):
        if h.features is not None:
            f = replace(h.features, rank=place)
            h = replace(h, features=f, relevance=model.probability(f))
        out.append(h)
    return out


def _page_unit(idx: Index, page: Hit) -> int:
    row = queries.unit_at(idx, page.path, page.start_line)
    return row["id"] if row is not None else -1


def _unsearchable(ix: Indexer, idx: Index, scan: Scan | None) -> list[str]:
    """What every answer says of the memory files it cannot hold: one clawmem cannot read (not
    UTF-8, binary), or one the scan left out whole (over max_file_bytes, …), with the fix,
    rather than let them be silently invisible. Files past max_files are counted, not named: a
    workspace over the cap by thousands would put a line for each in every answer."""
    notes: list[str] = []
    over_cap: list[str] = []
    for where, why in [*queries.unsearchable(idx), *ix.left_out(scan, idx)]:
        if why.startswith("over max_files"):
            over_cap.append(why)
        else:
            # A file named with a credential is shown redacted, as in every citation.
            notes.append(f"{shown_path(where)} is not searchable: {why}")
    if over_cap:
        notes.append(
            f"{len(over_cap):,} files are not searchable: {over_cap[0]} "
            "(`clawmem status` lists them)"
        )
    return notes


# ---------------------------------------------------------------------------- entity first


def _page_may_lead(filters: Filters) -> bool:
    """Whether an entity's page may lead the hits under ``filters``."""
    if filters.since or filters.until or filters.facts_only:
        return False  # a time window was asked for; an undated page is not in it
    if filters.source == "sessions":
        return False  # only what was said in conversations was asked for
    if filters.kinds and "chunk" not in filters.kinds:
        return False  # only facts were asked for
    return True


def _entity_page(
    idx: Index, q: Query, filters: Filters, snippet_chars: int, rk: Ranking
) -> Hit | None:
    """ "Tell me about Peter": the entity's own page leads, then the facts about it. A question
    that asks something of the entity ("Where was Peter on 3 Dec 2025?": more than
    ``Ranking.entity_page_max_terms`` words besides its names and dates) is ranked as it is: its
    answer is a line, and the page takes part in the ranking as any note does."""
    if not _page_may_lead(filters):
        return None
    if not filters.entity:
        asked = [t for t in q.lex.terms if t not in q.names and t not in q.dates]
        if len(asked) > rk.entity_page_max_terms:
            return None
    names = [filters.entity] if filters.entity else q.entities
    for name in names[:1]:
        return entity_page_hit(idx, name, snippet_chars)
    return None


# Units of a generated page the lead hit may span (see ``entity_page_hit``).
PAGE_LEAD_UNITS = 12


def entity_page_hit(index: Index, entity: str, snippet_chars: int) -> Hit | None:
    row = queries.entity_page(index, entity)
    if row is None:
        return None
    fields: dict = {}
    if copies.cited_source(row["path"], row["text"]) is not None:
        # A page reflect wrote with no words of its own starts with a copy of one fact: leading
        # with that line answered "tell me about Kate" with one of her facts, shown again as
        # its source's hit right after. The lead is then the page itself: its lines from the
        # first, as many as the snippet holds, under the page's title.
        units = queries.page_units(index, row["path"], PAGE_LEAD_UNITS)
        taken = [units[0]]
        used = len(units[0]["text"])
        for u in units[1:]:
            used += 1 + len(u["text"])
            if used > snippet_chars:
                break
            taken.append(u)
        text = "\n".join(u["text"] for u in taken)
        fields = {
            "end_line": taken[-1]["end_line"],
            "text": text,
            "heading": row["heading"].split(" > ", 1)[0],
        }
    else:
        text = row["text"]
    # The page of the entity itself: not a fact, and undated, whatever its file's date.
    return Hit.from_row(
        row,
        score=1.0,
        snippet=snippet(text, None, snippet_chars),
        **fields,
        kind=None,
        day=None,
        entities=(entity,),
        confidence=None,
        valid_from=None,
        valid_to=None,
    )


def _overlap(h: Hit, page: Hit) -> bool:
    return h.path == page.path and h.start_line <= page.end_line and h.end_line >= page.start_line


# ---------------------------------------------------------------------------- supersession


def mark_superseded(index: Index, hits: list[Hit], as_of: str | None) -> list[Hit]:
    """Point each fact at the newest later fact that supersedes it (supersession.py), as known
    at ``as_of`` (or now)."""
    out = []
    named = queries.corrected_lines(index, (h.path for h in hits if h.kind and h.scope is None))
    for h in hits:
        if h.kind and h.scope is None and (h.path, h.start_line) in named:
            newest = _corrected(index, h.path, h.start_line, as_of)
            if newest is not None:  # a correction the Markdown states (clawmem correct)
                out.append(replace(h, superseded_by=newest))
                continue
        if h.kind not in SUPERSEDABLE or not h.entities or not h.day:
            out.append(h)
            continue
        if queries.fact_id(index, h.path, h.start_line) is None:
            out.append(h)
            continue
        mine = Statement.of(h.kind, h.day, h.entities, h.text)
        for r in queries.later_facts(
            index,
            kind=h.kind,
            entities=h.entities,
            after=h.day,
            as_of=as_of,
            not_text=h.text,
            limit=SUPERSEDE_CANDIDATES,
        ):
            if supersedes(Statement.of(h.kind, r["day"], r["entities"].split(), r["text"]), mine):
                h = replace(h, superseded_by=f"{r['path']}#L{r['start_line']}-L{r['end_line']}")
                break
        out.append(h)
    return out


def corrections_first(index: Index, hits: list[Hit]) -> list[Hit]:
    """Each fact a person corrected (``clawmem correct``) is preceded by its correction: the
    answer to what memory now holds comes first, the old statement right after it, marked
    ``superseded_by``. (A fact superseded by the rule alone keeps its place: the rule is a
    judgement, a correction is a statement.) Each step looks only at hits before it, so the
    first n hits of a longer list are still those of a shorter one."""
    out: list[Hit] = []
    shown: set[str] = set()
    named = queries.corrected_lines(index, (h.path for h in hits if h.kind and h.scope is None))
    for h in hits:
        newest = (
            _corrected(index, h.path, h.start_line, None)
            if h.kind and h.scope is None and (h.path, h.start_line) in named
            else None
        )
        if newest is not None and newest not in shown:
            path, _, lines = newest.partition("#L")
            row = queries.fact_row(index, path, int(lines.split("-")[0]))
            if row is not None:
                new = Hit.from_row(row, score=h.score, snippet=row["text"], relevance=h.relevance)
                out.append(new)
                shown.add(new.citation)
        if h.citation not in shown:
            out.append(h)
            shown.add(h.citation)
    return out


# How many corrections of corrections recall follows to the newest statement.
CORRECTION_CHAIN = 20


def _corrected(index: Index, path: str, line: int, as_of: str | None) -> str | None:
    """Citation of the newest fact in the chain of explicit corrections that starts at this
    fact (``supersedes [[path#Lline]]`` notes), as known at ``as_of``; None when none names it."""
    newest = None
    for _ in range(CORRECTION_CHAIN):
        row = queries.corrected_by(index, path, line, as_of)
        if row is None:
            break
        path, line, end = row[0], row[1], row[2]
        newest = f"{path}#L{line}-L{end}"
    return newest


# ---------------------------------------------------------------------------- token budget


def estimate_tokens(text: str) -> int:
    """About 4 characters per token for English, 1 per character for CJK; never zero."""
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")
    return max(1, (len(text) - cjk + 3) // 4 + cjk)


def _hit_cost(h: Hit) -> int:
    return estimate_tokens(h.citation) + estimate_tokens(h.text) + 4


def smallest_budget(hit: Hit) -> int:
    """The least budget that keeps ``hit`` (as the first hit): a fact whole, a chunk up to its
    first line with text (``pack_budget`` cuts a chunk at a line boundary)."""
    if hit.kind is not None:
        return _hit_cost(hit)
    lines = hit.text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines) - 1)
    return _hit_cost(replace(hit, text="\n".join(lines[: first + 1])))


def budget_emptied(first: Hit, budget: int) -> str:
    """Why a budget left no hit: the budget did it, not the search; and what would do."""
    return (
        f"the token budget ({budget}) is smaller than what the best hit ({first.citation}) "
        f"needs: a budget of {smallest_budget(first)} or more shows it"
    )


def pack_budget(hits: list[Hit], budget: int) -> tuple[list[Hit], dict]:
    """Best results first, within about ``budget`` tokens. A fact is whole or absent; a chunk
    that does not fit may be cut at a line boundary, its citation narrowed to the lines kept."""
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


__all__ = ["MODES", "Hit", "RecallResult", "recall", "pack_budget", "estimate_tokens"]
