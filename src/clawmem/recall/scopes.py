"""Read scopes: other workspaces this one reads (``[scopes]`` in clawmem.toml, e.g. a team's).

Recall asks each scope the same question, with the same filters, on the scope's own index as it
is: never synced, because clawmem writes nothing into a read scope, its ``.memory/`` included (a
stale or missing index is reported in ``degraded``, with the command that fixes it). Each of a
scope's hits carries the scope's name, so its citation (``team:memory/2025-11-27.md#L3-L3``) reads
back with ``get``. Scores of two indexes are not comparable, but each hit's relevance is: the same
fitted model calibrates it, as a probability, on every index. So the lists are merged by
relevance, each keeping its own order (``fuse``), this workspace's hit first on a tie; without
relevance (vector mode) they are fused by reciprocal rank.
"""

from __future__ import annotations

from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import Any

from clawmem.config import SCOPE_NAME, load_config, parse_scopes, scopes_origin, trust
from clawmem.errors import ClawmemError, WorkspaceError
from clawmem.ingest.indexing import Indexer
from clawmem.recall import passages, relevance
from clawmem.recall.fusion import Ranking
from clawmem.recall.pipeline import (
    PAGE_NOTE,
    answer_first,
    budget_emptied,
    pack_budget,
    read_question,
    recall,
)
from clawmem.recall.results import Hit, RecallResult
from clawmem.text.query import Query

# The usual reciprocal-rank constant: with a handful of lists, rank decides, not the list.
RRF_K = 60


def split_scope(path: str, scopes: dict[str, Path]) -> tuple[str | None, str]:
    """``team:memory/x.md`` -> ("team", "memory/x.md") when ``team`` is a scope."""
    name, sep, rest = path.partition(":")
    if sep and name in scopes:
        return name, rest
    return None, path


def unknown_scope(ix: Indexer, path: str, scopes: dict[str, Path]) -> None:
    """Raise WorkspaceError when ``path`` names a read scope that is not configured
    (``nope:memory/x.md``), listing the known ones; return when it is a path of this workspace
    (one with a colon in a file name, or a scope-like prefix that is a folder here)."""
    name, sep, rest = path.partition(":")
    if not sep or not SCOPE_NAME.fullmatch(name) or (ix.root / path).exists():
        return
    known = ", ".join(sorted(scopes)) if scopes else "none are configured"
    raise WorkspaceError(
        f"{path}: unknown scope {name!r} (known scopes: {known})",
        hint=f"read scopes are set in {scopes_origin(ix.cfg)} (docs/workspace.md); "
        f"a file of this workspace is named without a scope: {rest}",
    )


# ``recall``'s signature and documentation: it takes the same arguments and passes them on.
@wraps(recall)
def recall_with_scopes(ix: Indexer, query: str | Query, **kwargs: Any) -> RecallResult:
    # ``recall`` over this workspace and its read scopes (those ``scopes`` names), fused; the
    # question read once for all of them.
    only = kwargs.pop("scopes", None)
    q = read_question(query, **{k: kwargs.get(k) for k in ("today", "since", "until", "as_of")})
    scopes = {
        name: root
        for name, root in parse_scopes(ix.cfg, ix.root).items()
        if only is None or name in only
    }
    if not scopes:
        own = recall(ix, q, **kwargs)
        if ix.cfg.held_back:  # scopes or transcripts the user has not approved (config/trust.py)
            own.degraded.append(trust.note(ix.cfg.held_back))
        return own
    # Lines next to each other are joined, and messages re-ordered (answer_match.py), on the
    # merged list, not in each list (a scope's fourth hit may be the merged list's ninth); each
    # list brings at least the hits those read, so the first hits do not depend on k.
    k_asked = kwargs.get("k")
    k = k_asked or ix.cfg.k
    inner = {**kwargs, "join_lines": False}
    rk = _ranking(kwargs)
    depth = max(rk.join_depth, rk.answer_depth, rk.form_depth)
    raised = k < depth and not (kwargs.get("budget") and k_asked is None)
    if raised:
        inner["k"] = depth
    own = recall(ix, q, **inner)
    if ix.cfg.held_back:
        own.degraded.append(trust.note(ix.cfg.held_back))
    lists: list[list[Hit]] = [own.hits]
    models: dict[str | None, str | None] = {None: own.relevance.get("model")}
    for name, root in scopes.items():
        hits, problem, model = _scope_hits(ix, name, root, q, inner)
        if problem:
            own.degraded.append(f"scope {name} ({root}): {problem}")
        lists.append(hits)
        models[name] = model
    want = k if raised else max(k, len(own.hits))
    merged = at_merged_places(fuse(lists), models)
    if own.ranking.startswith("rrf-"):
        page_leads = any(n.startswith(PAGE_NOTE) for n in own.notes)
        merged = passages.join_next_lines(
            merged, rk.join_depth, q, ix.cfg.snippet_chars, keep=1 if page_leads else 0
        )
        merged = answer_first(q, merged, rk, kwargs.get("mode", "hybrid"), own.ranking, page_leads)
    hits = merged[:want]
    budget = kwargs.get("budget")
    if budget:
        before = hits
        hits, own.budget = pack_budget(hits, budget)
        if before and not hits:
            own.empty_reason = budget_emptied(before[0], budget)
    own.hits = hits
    if hits:
        own.empty_reason = None
    own.notes.append("scopes searched: " + ", ".join(scopes))
    return own


def _ranking(kwargs: dict) -> Ranking:
    """The ranking's numbers a recall with these arguments uses (the defaults, or an
    experiment's)."""
    return kwargs.get("ranking") or Ranking()


def _scope_hits(
    ix: Indexer, name: str, root: Path, query: Query, kwargs: dict
) -> tuple[list[Hit], str | None, str | None]:
    """The scope's hits, what went wrong (or None) and the name of the relevance model that
    scored them."""
    if not root.is_dir():
        return [], f"not found; fix {scopes_origin(ix.cfg)}", None
    if not (root / ".memory" / "index.sqlite").exists():
        return [], f"not indexed; run `clawmem -w {root} index`", None
    mode = kwargs.get("mode", "hybrid")
    # The model this process loaded serves the scope too when its index was built with it; a
    # scope indexed with another model answers lexically and says so.
    shared = ix.supply.embedder() if mode != "lexical" else None
    try:
        scope_ix = Indexer(root, load_config(root), embedder=shared)
        res = recall(scope_ix, query, **{**kwargs, "sync": False})
    except ClawmemError as exc:
        return [], exc.message, None
    problem = "; ".join(res.degraded) or None
    return [replace(h, scope=name) for h in res.hits], problem, res.relevance.get("model")


def at_merged_places(hits: list[Hit], models: dict[str | None, str | None]) -> list[Hit]:
    """``hits`` (merged) with each one's relevance read again at its place in the merged list.
    Relevance reads the hit's place (``Features.rank``: a third hit is evidence less often than
    a first), and each list placed its hits among its own only: a scope's first hit, shown
    second, was scored as a first. On the mixed workspaces' tuning part (a read scope beside the
    workspace) the expected calibration error of the first ten hits went from 0.042 to 0.020
    (docs/benchmarks.md). The order is not changed, and the first hit keeps its relevance (it
    is first in its own list too), so whether recall answers is not either. ``models``: the
    relevance model's name of each list, by scope name (None: this workspace)."""
    out = []
    for place, h in enumerate(hits, 1):
        model = relevance.model_named(models.get(h.scope))
        if model is not None and h.features is not None and h.features.rank < place:
            f = replace(h.features, rank=place)
            h = replace(h, features=f, relevance=model.probability(f))
        out.append(h)
    return out


def fuse(lists: list[list[Hit]]) -> list[Hit]:
    """The ranked lists as one, by calibrated relevance: a hit of one workspace comes before a
    hit of another when its relevance is higher, but never before a hit its own ranking put
    above it. Each hit's key is the lowest relevance down to it in its list (the list's order
    is kept, and a weak first hit does not carry stronger ones of another list below it); the
    keys merge, the first list first on a tie, then by rank. Issue 45: a team fact at
    relevance 0.64 came after a local page at 0.16 when the lists were interleaved by rank.
    Lists without relevance (vector mode) are fused by reciprocal rank."""
    if any(h.relevance is None for hits in lists for h in hits):
        return _rank_fused(lists)
    keyed = []
    for li, hits in enumerate(lists):
        low = 1.0
        for rank, hit in enumerate(hits, start=1):
            low = min(low, hit.relevance or 0.0)
            keyed.append((-low, li, rank, hit))
    keyed.sort(key=lambda t: (t[0], t[1], t[2]))
    return [hit for *_, hit in keyed]


def _rank_fused(lists: list[list[Hit]]) -> list[Hit]:
    """Reciprocal-rank fusion of ranked lists; the first list wins ties."""
    scored = []
    for li, hits in enumerate(lists):
        for rank, hit in enumerate(hits, start=1):
            scored.append((-1.0 / (RRF_K + rank), li, rank, hit))
    scored.sort(key=lambda t: (t[0], t[1], t[2]))
    return [hit for *_, hit in scored]
