"""The auto-inject block: a few cited memory lines to put in front of an agent's turn.

After GoClaw's auto-injector: a trivial message ("ok", "thanks!", "hi there") costs nothing; any
other message is recalled against memory, only lines above a relevance threshold are kept, the core
``MEMORY.md`` lines come first, and the whole block fits a small token budget (about 200 tokens).
Every line carries its citation (``path#Lnn``) so the agent can verify it or read around it with
``get``. When nothing is relevant the block is empty and the caller injects nothing.

Relevance is per line, in [0, 1], the larger of:
- the vector leg's similarity of the line's chunk to the message (when vectors are on), measured
  against a null level: raw cosines mean different things for different models (MiniLM puts
  unrelated text near 0.1, multilingual-e5 near 0.8), so the message is also compared with a few
  sentences about nothing in particular, and a cosine counts by how far it rises from their mean
  toward 1 (``(cos - null) / (1 - null)``). Unrelated notes then score about 0.3 or less with
  either model, related ones 0.3 to 0.7;
- a lexical match score: each meaningful word of the message found in the line counts 0.25, a
  specific one (an identifier such as ``DEC-0054`` or ``payment_processor``, an ``@mention``, or the
  name of a known entity) counts 0.5, capped at 1. With the default threshold of 0.3 a line needs
  two ordinary words of the message, or one specific word.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from clawmem.errors import BadArgument, ClawmemError
from clawmem.files import safe_open
from clawmem.files.atomic import write_atomic
from clawmem.ingest.indexing import Indexer
from clawmem.text import untrusted_json
from clawmem.text.query import Query
from clawmem.text.shown_path import shown_path
from clawmem.text.textnorm import fold, word_tokens

if TYPE_CHECKING:
    from pathlib import Path

    from clawmem.embedders.base import VectorSource

DEFAULT_BUDGET = 200
DEFAULT_MIN_SCORE = 0.3
DEFAULT_CANDIDATES = 8
MAX_MESSAGE_CHARS = 20_000  # a pasted log is not a question; its head is enough to match on
CORE_FILES = ("MEMORY.md", "memory.md")
HEADER = "Relevant memory (clawmem; each line cites path#line, read more with memory_get):"

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class ContextLine:
    citation: str  # path#Lnn or path#Lnn-Lmm
    path: str
    line: int
    end_line: int
    text: str  # the lines as written (list marker removed, wrapped lines joined)
    score: float  # relevance in [0, 1]
    source: str  # "core" (MEMORY.md), "fact" (a ## Retain line), or "note"
    kind: str | None = None  # W/B/O/S for a fact
    timestamp: str | None = None
    lexical: float = 0.0  # the lexical part of the score


@dataclass
class ContextResult:
    message: str
    lines: list[ContextLine] = field(default_factory=list)
    skipped: str | None = None  # why recall was not run (a trivial message)
    empty_reason: str | None = None  # why recall found nothing relevant enough
    match_count: int = 0  # relevant lines found, before the budget
    top_score: float = 0.0
    budget: dict = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def injected(self) -> bool:
        return bool(self.lines)

    def render(self) -> str:
        """The block to inject: empty when nothing is relevant."""
        if not self.lines:
            return ""
        return "\n".join([HEADER, *(_render_line(ln) for ln in self.lines)])

    def to_dict(self) -> dict:
        return {
            "message": self.message,
            "injected": self.injected,
            "skipped": self.skipped,
            "empty_reason": self.empty_reason,
            "match_count": self.match_count,
            "top_score": round(self.top_score, 4),
            "lines": [
                {**asdict(ln), "score": round(ln.score, 4), "lexical": round(ln.lexical, 4)}
                for ln in self.lines
            ],
            "text": self.render(),
            "budget": self.budget,
            "degraded": self.degraded,
            "seconds": round(self.seconds, 4),
        }


def _render_line(ln: ContextLine) -> str:
    return f"- [{ln.citation}] {ln.text}"


def _is_identifier(word: str) -> bool:
    return any(ch.isdigit() for ch in word) or "_" in word or "-" in word


def _specific_words(asked: Query, entities: set[str]) -> set[str]:
    """The message's words that make it specific: an identifier, an @mention, a known entity."""
    return {
        w for w in asked.topic_words if _is_identifier(w) or w in asked.mentions or w in entities
    }


def trivial_reason(words: Sequence[str], specific: set[str]) -> str | None:
    """Why the message needs no memory, or None. Fewer than three meaningful words is trivial,
    unless one of them is specific (an identifier, an @mention, a known entity)."""
    if specific or len(words) >= 3:
        return None
    if not words:
        return "trivial message: no meaningful words"
    return f"trivial message: {len(words)} meaningful word(s) ({', '.join(words)}), fewer than 3"


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _matches(word: str, toks: set[str]) -> bool:
    if word in toks:
        return True
    if len(word) < 4:
        return False
    # A crude stem: words that differ only in the last two letters of the shorter one match
    # ("invoice" and "invoices", "reply" and "replies", "deploy" and "deployed").
    return any(
        len(t) >= 4 and _common_prefix(word, t) >= max(4, min(len(word), len(t)) - 2) for t in toks
    )


def lexical_score(line: str, words: Sequence[str], specific: set[str]) -> float:
    """How well ``line`` names the message's ``words`` (``Query.topic_words``): 0.25 a word,
    0.5 a specific one, at most 1."""
    toks = set(word_tokens(line))
    score = sum(0.5 if w in specific else 0.25 for w in words if _matches(w, toks))
    return min(1.0, score)


def _clean(line: str) -> str:
    return _BULLET.sub("", line).strip()


# Sentences about nothing a memory is likely to hold: the message's similarity to them is the
# level below which a cosine means "unrelated" for the model in use.
NULL_PROBES = (
    "The recipe calls for two cups of flour and a pinch of salt.",
    "The train to the coast leaves from platform four at noon.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "The museum is closed on Mondays and public holidays.",
    "He scored twice in the second half of the match.",
    "Tomorrow will be cloudy with light rain in the afternoon.",
    "The violin was made in Cremona in the eighteenth century.",
    "Penguins huddle together to survive the Antarctic winter.",
)
# embedder identity -> the probes' vectors (lists of floats)
_probe_vectors: dict[str, list[list[float]] | None] = {}


def _null_level(ix: Indexer, message: str) -> float | None:
    """The message's mean cosine to NULL_PROBES, or None when vectors are off. The message's
    vector comes from wherever the recall's came from (the model loaded here, a watcher, the
    resident embedder: ``EmbedderSupply.query_embedder``), and eight dot products need no NumPy: a
    prompt hook that imported it for them would pay ~60-100 ms of every prompt."""
    emb = ix.supply.query_embedder()
    if emb is None:
        return None
    key = emb.identity.key()
    if key not in _probe_vectors:
        _probe_vectors[key] = _load_probes(ix, emb, key)
    probes, q = _probe_vectors[key], emb.embed_query(message)
    if not probes or q is None:
        return None
    qs = [float(x) for x in q]
    if len(probes[0]) != len(qs):  # a cache of another length than the model's: embed them
        probes = _probe_vectors[key] = _load_probes(ix, emb, key, fresh=True) or []
        if not probes:
            return None
    return sum(sum(a * b for a, b in zip(p, qs, strict=True)) for p in probes) / len(probes)


def _load_probes(
    ix: Indexer, emb: VectorSource, key: str, fresh: bool = False
) -> list[list[float]] | None:
    """The probes' vectors for this model: embedding them costs about half a second, so a hook
    that runs on every prompt reads them from .memory/ (derived data, like the index)."""
    import hashlib
    import json

    digest = hashlib.sha256("\n".join([key, *NULL_PROBES]).encode()).hexdigest()[:16]
    path = ix.memory_dir / f"context-probes-{digest}.json"
    cached = None if fresh else _cached_probes(path)
    if cached is not None:
        return cached
    vecs = [
        [round(float(x), 6) for x in v]
        for v in emb.embed_documents(NULL_PROBES).vectors
        if v is not None
    ]
    if not vecs:
        return None
    try:
        write_atomic(path, json.dumps(vecs))
    except OSError:
        pass  # a read-only workspace: embed them again next time
    return vecs


def _cached_probes(path: Path) -> list[list[float]] | None:
    """The probes' vectors kept in ``path``, or None. Derived data in .memory/, which a cloned
    repository may commit: read as outside JSON, and used only when it is one vector per probe,
    all of one length (one of another length than the model's, or nested 200,000 deep, made
    every prompt's context an internal error)."""
    try:
        cached = untrusted_json.loads(safe_open.read_bytes(path) or b"")
        rows = [[float(x) for x in row] for row in cached]
    except (OSError, ValueError, TypeError, ClawmemError):
        return None
    return rows if len(rows) == len(NULL_PROBES) and len({len(r) for r in rows}) == 1 else None


def vector_relevance(cosine: float | None, null: float | None) -> float:
    """A cosine as relevance in [0, 1]: how far it rises from the null level toward 1."""
    if cosine is None or null is None or null >= 1.0:
        return 0.0
    return min(1.0, max(0.0, (cosine - null) / (1.0 - null)))


def _estimate_tokens(text: str) -> int:
    from clawmem.recall.pipeline import estimate_tokens

    return estimate_tokens(text)


def build_context(
    ix: Indexer,
    message: str,
    *,
    budget: int = DEFAULT_BUDGET,
    min_score: float = DEFAULT_MIN_SCORE,
    candidates: int = DEFAULT_CANDIDATES,
    mode: str = "hybrid",
    today: date | None = None,
    min_relevance: float | None = None,
) -> ContextResult:
    """The auto-inject block for ``message`` from the workspace of ``ix``. When
    recall finds nothing relevant enough (``min_relevance``, default the workspace's setting),
    the block is empty and ``empty_reason`` says why."""
    t0 = time.perf_counter()
    if budget < 1:
        raise BadArgument("budget", budget, "must be a positive number of tokens")
    if not 0.0 <= min_score <= 1.0:
        raise BadArgument("min_score", min_score, "must be between 0 and 1")
    if candidates < 1:
        raise BadArgument("candidates", candidates, "must be at least 1")
    message = message[:MAX_MESSAGE_CHARS]
    res = ContextResult(message=message, budget={"limit": budget, "used": 0, "dropped": 0})
    # The message, read once (no filter fixes the time: a time it names is looked for): the
    # trivial test, both searches below (and each read scope's) and the lines' scores take it.
    asked = Query.parse(message, today or date.today())
    words = asked.topic_words
    entities: set[str] = set()
    if words:
        # Entity names make a short message specific ("where is Peter?"); a cheap indexed query.
        from clawmem.recall.entities import list_entities

        entities = {fold(e.entity) for e in list_entities(ix)}
    specific = _specific_words(asked, entities)
    res.skipped = trivial_reason(words, specific)
    if res.skipped:
        res.seconds = time.perf_counter() - t0
        return res

    # Imported here: a trivial message returns above without the recall pipeline's imports.
    from clawmem.recall.scopes import recall_with_scopes as recall

    hits = recall(ix, asked, k=candidates, mode=mode, today=today, min_relevance=min_relevance)
    res.degraded = list(hits.degraded)
    if hits.weak_hits:
        # Recall abstained: memory holds nothing relevant enough to put before the turn.
        res.empty_reason = hits.empty_reason
        res.seconds = time.perf_counter() - t0
        return res
    if hits.empty_reason and not hits.hits:
        res.degraded.append(hits.empty_reason)
    results = hits.to_dict(explain=True, shown=False)["results"]
    core = next((name for name in CORE_FILES if (ix.root / name).is_file()), None)
    if core is not None:
        # The core file competes with every note for k places; ask it separately so a relevant
        # core line is never crowded out (synced already by the recall above, whose relevance
        # decided that memory has something to say).
        in_core = recall(
            ix, asked, k=3, mode=mode, path=core, sync=False, today=today, min_relevance=0.0
        )
        results = in_core.to_dict(explain=True, shown=False)["results"] + results
    null = _null_level(ix, asked.text) if hits.vectors.get("state") in ("ok", "partial") else None
    found = _relevant_lines(ix, results, words, specific, min_score, core, null)
    res.match_count = len(found)
    res.top_score = max((ln.score for ln in found), default=0.0)
    # The core file first when it has something relevant, then the rest by relevance, then rank.
    found.sort(key=lambda ln: (ln.source != "core", -round(ln.score, 6)))
    used = _estimate_tokens(HEADER)
    kept: list[ContextLine] = []
    for ln in found:
        cost = _estimate_tokens(_render_line(ln)) + 1
        if used + cost > budget:
            res.budget["dropped"] += 1
            continue
        kept.append(ln)
        used += cost
    res.lines = kept
    res.budget["used"] = used if kept else 0
    res.seconds = time.perf_counter() - t0
    return res


def _relevant_lines(
    ix: Indexer,
    results: list[dict],
    words: Sequence[str],
    specific: set[str],
    min_score: float,
    core: str | None,
    null: float | None,
) -> list[ContextLine]:
    """The lines of the recalled hits that pass the threshold, in recall order, no repeats."""
    from clawmem.recall.copies import cited_source

    found: list[ContextLine] = []
    seen: set[tuple[str, int]] = set()
    # Lines some hit holds: a page line restating one of them (copies.py) is left for its source,
    # which says the same with the fact's own citation ("tell me about Kate": her page leads,
    # and her facts follow).
    held = {
        (hit["path"], n)
        for hit in results
        if not hit.get("scope")
        for n in range(hit["start_line"], hit["end_line"] + 1)
    }
    for hit in results:
        if hit.get("superseded_by"):
            continue  # a newer fact says otherwise: not worth a line of a small budget
        vec = vector_relevance(hit["explain"]["vector_score"], null)
        if hit["type"] == "fact":
            units = [(hit["start_line"], hit["start_line"], _fact_text(hit))]
        else:
            units = _chunk_units(ix, hit)
        source = "core" if hit["path"] == core else ("fact" if hit["type"] == "fact" else "note")
        best: list[ContextLine] = []
        for start, end, text in units:
            if any((shown_path(hit["path"]), n) in seen for n in range(start, end + 1)):
                continue
            if len(word_tokens(text)) < 3:
                continue  # "evidence:", "- [x] done": nothing to read on its own
            if not hit.get("scope") and cited_source(hit["path"], text) in held:
                continue
            lex = lexical_score(text, words, specific)
            score = max(vec, lex)
            if score < min_score:
                continue
            span = f"L{start}" if start == end else f"L{start}-L{end}"
            best.append(
                ContextLine(
                    citation=f"{shown_path(hit['path'])}#{span}",
                    path=shown_path(hit["path"]),
                    line=start,
                    end_line=end,
                    text=text,
                    score=score,
                    source=source,
                    kind=hit.get("kind"),
                    timestamp=hit.get("timestamp"),
                    lexical=lex,
                )
            )
        # From one chunk, the units that name the message best, at most three.
        best.sort(key=lambda ln: (-ln.lexical, ln.line))
        for ln in best[:3]:
            seen.update((ln.path, n) for n in range(ln.line, ln.end_line + 1))
            found.append(ln)
    return found


def _fact_text(hit: dict) -> str:
    conf = f"(c={hit['confidence']:g})" if hit.get("confidence") is not None else ""
    ents = " ".join(f"@{e}" for e in hit.get("entities") or [])
    head = f"{hit['kind']}{conf}" + (f" {ents}" if ents else "")
    when = f" ({hit['timestamp']})" if hit.get("timestamp") else ""
    return f"{head}: {hit['content']}{when}"


_END = (".", "!", "?", ":", ";", "。", "！", "？")


def _chunk_units(ix: Indexer, hit: dict) -> list[tuple[int, int, str]]:
    """A chunk hit cut into citable units (first line, last line, text): a list item with its
    wrapped lines, or a line of prose joined with the next while the sentence runs on (at most
    three lines). Headings, blanks and code fences are left out."""
    from clawmem.errors import ClawmemError
    from clawmem.recall.lines import get_lines

    try:
        got = get_lines(
            ix,
            hit["path"],
            from_line=hit["start_line"],
            lines=hit["end_line"] - hit["start_line"] + 1,
        )
    except ClawmemError:
        return []  # the file changed or went away since it was indexed: nothing to cite
    units: list[tuple[int, int, str]] = []
    cur: list = []  # [start, end, text]
    for i, raw in enumerate(got.text.split("\n")):
        lineno = hit["start_line"] + i
        stripped = raw.strip()
        skip = not stripped or stripped.startswith(("#", "```", "|"))
        starts_item = bool(_BULLET.match(raw))
        if cur and (skip or starts_item or cur[2].endswith(_END) or lineno - cur[0] >= 3):
            units.append(tuple(cur))
            cur = []
        if skip:
            continue
        text = _clean(raw)
        if cur:
            cur[1], cur[2] = lineno, f"{cur[2]} {text}"
        else:
            cur = [lineno, lineno, text]
    if cur:
        units.append(tuple(cur))
    return units
