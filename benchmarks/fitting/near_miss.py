"""A study of near-miss signals on tuning data (issue 45): does anything known at recall time tell
a question about the memory's own people and an event that is not there ("When did Peter lose
his job as a banker?", asked of notes where Peter never was one) from the questions the memory
can answer, better than the relevance model (``clawmem.recall.relevance``) already does?

``python -m benchmarks.fitting.near_miss`` asks REALTALK's tuning chats (1-5) their own questions
and their near misses (the next chat's questions with this chat's names swapped in), and the mixed
workspaces' tuning part (``benchmarks.datasets.mixed.TUNE``) its answerable and near-miss ones;
keeps each question's first ``DEPTH`` hits (no threshold) with their relevance features, and the
cosine of the question, and of the question without its proper names (``without_names``), to
every unit of the memory (a read scope's too). From those it computes the signals ``SIGNALS``
names: where the best hit's cosine falls among all units' and among the lines of the person the
question names (a near miss meets that person's lines, but none of them should stand out), how
much of the question's content words (not its names) the best hit and the best unit of the whole
memory hold, and whether a hit of the form asked for ("when" → a time) also holds the event's
words. Each is reported alone and added to the best relevance (a question-level logistic model),
and per hit beside the relevance model's nine features (refitted), leaving one chat or workspace
out at a time: AUROC of own against near-miss questions, and near misses answered at the
threshold keeping 99.5% and 97% of own questions answered. REALTALK's chats 6-10 and the mixed
workspaces' held-out part are never read here.

The rows are kept in bench-results/near-miss/ (``--reuse`` reports on them again without asking).
benchmarks/analysis.md says what was found.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmarks.common import WORK, embedder_status, log
from benchmarks.datasets.realtalk import TUNE
from benchmarks.fitting.relevance import FEATURES as BASE  # the relevance model's features
from benchmarks.metrics import auroc

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

DEPTH = 10  # the hits read per question, as the relevance model is fitted on
OUT = WORK / "near-miss"
MIXED = 100  # a mixed workspace's fold number is MIXED + its chat's (chat 1 and workspace 1 differ)


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n else v


@dataclass
class Fold:
    """One chat's or workspace's questions, its units and the cosines of both forms of every
    question to every unit (``full``, ``unnamed``: questions × units)."""

    number: int
    rows: list[dict]
    units: list[dict]
    full: np.ndarray
    unnamed: np.ndarray

    def save(self) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"rows-{self.number}.json").write_text(
            json.dumps({"rows": self.rows, "units": self.units})
        )
        np.savez_compressed(OUT / f"cos-{self.number}.npz", full=self.full, unnamed=self.unnamed)

    @classmethod
    def load(cls, number: int) -> Fold:
        d = json.loads((OUT / f"rows-{number}.json").read_text())
        z = np.load(OUT / f"cos-{number}.npz")
        return cls(number, d["rows"], d["units"], z["full"], z["unnamed"])


def _embed(emb: Embedder, text: str) -> np.ndarray:
    v = emb.embed_query(text)
    if v is None:
        raise SystemExit(f"near miss: the model gave no vector for {text!r}")
    return _unit(np.asarray(v))


def _units_of(mems: list[tuple[str, Memory]]) -> tuple[list[dict], np.ndarray]:
    """Every unit with a vector of the memories (a scope's paths prefixed as hits cite them)."""
    from clawmem.recall.legs import vectors_of

    units, vecs = [], []
    for prefix, mem in mems:
        idx = mem.indexer.open_for_read()
        try:
            rows = idx.conn.execute(
                "SELECT id, path, start_line, end_line, text FROM chunks ORDER BY id"
            ).fetchall()
            stored = vectors_of(idx, [r[0] for r in rows])
        finally:
            mem.indexer.release(idx)
        for uid, path, start, end, text in rows:
            if uid in stored:
                units.append({"path": prefix + path, "start": start, "end": end, "text": text})
                vecs.append(_unit(stored[uid]))
    return units, np.stack(vecs)


def _ask(
    mem: Memory,
    emb: Embedder,
    questions: list[tuple[str, dict]],
    today: date,
    evidence: Callable[[Any, str, dict], bool],
    units: list[dict],
    vecs: np.ndarray,
) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """Each (kind, question)'s first DEPTH hits and its cosines to every unit."""
    from clawmem.text.query import Query, without_names

    by_path: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        by_path.setdefault(u["path"], []).append(i)
    rows, full, unnamed = [], [], []
    for kind, q in questions:
        text = q["question"]
        res = mem.recall(text, k=DEPTH, today=today, sync=False, min_relevance=0.0)
        proper = Query.parse(text, None).proper
        rest = without_names(text, proper) if proper else None
        qv = _embed(emb, text)
        full.append((vecs @ qv).astype(np.float16))
        unnamed.append((vecs @ (_embed(emb, rest) if rest else qv)).astype(np.float16))
        hits = []
        for h in res.hits[:DEPTH]:
            inside = [
                i
                for i in by_path.get(h.scoped_path, [])
                if units[i]["start"] >= h.start_line and units[i]["end"] <= h.end_line
            ]
            hits.append(
                {
                    "features": h.features.to_dict() if h.features is not None else None,
                    "relevance": h.relevance,
                    "evidence": evidence(h, kind, q),
                    "units": inside,
                    "text": h.text,
                }
            )
        rows.append({"kind": kind, "question": text, "proper": list(proper), "hits": hits})
    return rows, np.stack(full), np.stack(unnamed)


def collect(emb: Embedder) -> list[Fold]:
    """The tuning folds, asked anew (REALTALK chats 1-5, then the mixed tuning workspaces)."""
    import os

    from benchmarks.datasets.mixed import (
        SCOPE,
        build_layout,
        load_chat,
        questions_for,
        realtalk_near_miss,
    )
    from benchmarks.datasets.mixed import TUNE as MIXED_TUNE
    from benchmarks.datasets.realtalk import foreign_of
    from benchmarks.fitting.chats import indexed_chats
    from benchmarks.metrics import gold_lines, is_evidence
    from benchmarks.suites import mixed
    from benchmarks.systems.clawmem import open_clawmem

    folds = []
    for chat, _, mem in indexed_chats(TUNE, emb):
        near = realtalk_near_miss(load_chat(chat.number), load_chat(foreign_of(chat.number)))
        qs = [("own", q) for q in chat.questions] + [("near_miss", q) for q in near]
        units, vecs = _units_of([("", mem)])

        def chat_evidence(h: Any, kind: str, q: dict) -> bool:
            return kind == "own" and is_evidence(h, gold_lines(q))

        rows, full, unnamed = _ask(mem, emb, qs, chat.today, chat_evidence, units, vecs)
        folds.append(Fold(chat.number, rows, units, full, unnamed))
        log(f"near miss: chat {chat.number} collected")
    os.environ.setdefault("CLAWMEM_TRUST_FILE", str(WORK / "work" / "mixed" / "trusted.json"))
    for n in MIXED_TUNE:
        ws, mem = mixed.prepare(n, emb)
        scope = open_clawmem(ws.scope_root, vectors=True, embedder=emb)
        try:
            units, vecs = _units_of([("", mem), (f"{SCOPE}:", scope)])
        finally:
            scope.close()
        asked = [
            ("own" if q["kind"] == "answerable" else q["kind"], q)
            for q in questions_for(ws, build_layout(mixed.PAIRS[n]))
            if q["kind"] in ("answerable", "near_miss")
        ]

        def ws_evidence(h: Any, kind: str, q: dict) -> bool:
            return kind == "own" and mixed._overlaps(
                (h.scoped_path, h.start_line, h.end_line), q["gold"]
            )

        rows, full, unnamed = _ask(mem, emb, asked, ws.today, ws_evidence, units, vecs)
        mem.close()
        folds.append(Fold(MIXED + n, rows, units, full, unnamed))
        log(f"near miss: mixed workspace {n} collected")
    return folds


# ------------------------------------------------------------------------------------- signals


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


class Memo:
    """What the signals read of a fold's units, computed once: their stemmed words, document
    frequencies and speakers."""

    def __init__(self, fold: Fold) -> None:
        from clawmem.recall.answer_match import _WORD, _stem
        from clawmem.text.speakers import said
        from clawmem.text.textnorm import fold as fold_text

        self.words = [set(_WORD.findall(fold_text(u["text"]))) for u in fold.units]
        self.stems = [{_stem(w) for w in ws} for ws in self.words]
        self.df: dict[str, int] = {}
        for st in self.stems:
            for w in st:
                self.df[w] = self.df.get(w, 0) + 1
        self.n = len(fold.units)
        speakers = [said(u["text"]) for u in fold.units]
        self.speaker = [fold_text(s.name) if s is not None else None for s in speakers]

    def idf(self, stem: str) -> float:
        df = self.df.get(stem, 0)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))


def signals(row: dict, full: np.ndarray, unnamed: np.ndarray, memo: Memo) -> dict[str, float]:
    """The question-level signals of one question (``SIGNALS``)."""
    from clawmem.recall.answer_match import asked, line_features
    from clawmem.text.query import Query

    full, unnamed = full.astype(np.float32), unnamed.astype(np.float32)
    hits = [h for h in row["hits"] if h["features"] is not None and h["units"]]
    s = {"best relevance": _logit(max((h["relevance"] for h in row["hits"]), default=0.0))}
    names = {w for n in row["proper"] for w in n.split()}
    person = [
        i for i in range(memo.n) if memo.speaker[i] in names or names & memo.words[i]
    ] if names else []  # fmt: skip
    spoke = [i for i in range(memo.n) if memo.speaker[i] in names] if names else []
    others = [i for i in range(memo.n) if memo.speaker[i] is not None and i not in set(spoke)]
    for label, cos in (("", full), (" unnamed", unnamed)):
        best = max((max(cos[u] for u in h["units"]) for h in hits), default=0.0)
        mean, sd = float(cos.mean()), float(cos.std()) + 1e-6
        top = np.sort(cos)[::-1]
        s[f"best hit's z among all units{label}"] = (best - mean) / sd
        s[f"best unit's z among all units{label}"] = (float(top[0]) - mean) / sd
        s[f"best unit less the next ten{label}"] = float(top[0] - top[1:11].mean())
        if len(person) >= 5:
            pc = cos[person]
            s[f"best hit's z among the person's units{label}"] = (best - float(pc.mean())) / (
                float(pc.std()) + 1e-6
            )
            s[f"best hit over the person's 95th percentile{label}"] = best - float(
                np.quantile(pc, 0.95)
            )
        else:
            s[f"best hit's z among the person's units{label}"] = 0.0
            s[f"best hit over the person's 95th percentile{label}"] = 0.0
        s[f"the person's best line less another's{label}"] = (
            float(cos[spoke].max() - cos[others].max()) if spoke and others else 0.0
        )
    a = asked(Query.parse(row["question"], None))
    content = a.content
    lines = [line_features(a, h["text"]) for h in hits]
    best_un = [max(float(unnamed[u]) for u in h["units"]) for h in hits]
    if content and hits:
        weight = [memo.idf(c) for c in content]

        def held(stems: set[str]) -> float:
            return sum(w for w, c in zip(weight, content, strict=True) if c in stems) / sum(weight)

        hit = max(held(memo.stems[u]) for h in hits for u in h["units"])
        anywhere = max(held(st) for st in memo.stems)
        s["content words the best hit holds"] = hit
        s["content words the best unit of the memory holds"] = anywhere
        s["… the best hit's less the memory's"] = hit - anywhere
        s["content words no unit holds"] = sum(
            w for w, c in zip(weight, content, strict=True) if c not in memo.df
        ) / sum(weight)
    else:
        for k in (
            "content words the best hit holds",
            "content words the best unit of the memory holds",
            "… the best hit's less the memory's",
            "content words no unit holds",
        ):
            s[k] = 0.0
    s["form asked for × content words held"] = max(
        (f["answers_form"] * f["content_share"] for f in lines), default=0.0
    )
    s["form asked for × unnamed cosine"] = max(
        (f["answers_form"] * c for f, c in zip(lines, best_un, strict=True)), default=0.0
    )
    s["form asked for, said by the person, × content words"] = max(
        (f["answers_form"] * f["said_by_asked"] * f["content_share"] for f in lines), default=0.0
    )
    return s


def hit_features(row: dict, full: np.ndarray, unnamed: np.ndarray, memo: Memo) -> list[dict]:
    """Per hit: the relevance model's features and each hit's cosine as a z-score among all
    units (``z``) and among the person's (``person z``), for both forms of the question."""
    names = {w for n in row["proper"] for w in n.split()}
    person = [
        i for i in range(memo.n) if memo.speaker[i] in names or names & memo.words[i]
    ] if names else []  # fmt: skip
    out = []
    for h in row["hits"]:
        if h["features"] is None or not h["units"]:
            continue
        x = {k: float(h["features"][k]) for k in BASE if k != "log_rank"}
        x["log_rank"] = math.log(max(1, h["features"]["rank"]))
        for label, cos in (("", full.astype(np.float32)), (" unnamed", unnamed.astype(np.float32))):
            v = max(float(cos[u]) for u in h["units"])
            x[f"z{label}"] = (v - float(cos.mean())) / (float(cos.std()) + 1e-6)
            pc = cos[person] if len(person) >= 5 else cos
            x[f"person z{label}"] = (v - float(pc.mean())) / (float(pc.std()) + 1e-6)
        out.append({"x": x, "evidence": h["evidence"]})
    return out


# ------------------------------------------------------------------------------------- fitting


def _fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Logistic regression by Newton's method, L2 on the weights but the intercept (column 0)."""
    w = np.zeros(X.shape[1])
    pen = np.r_[0.0, np.full(X.shape[1] - 1, l2)]
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -30, 30)))
        step = np.linalg.solve(
            (X * (p * (1 - p))[:, None]).T @ X + np.diag(pen), X.T @ (p - y) + pen * w
        )
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def summary(scored: list[tuple[str, float]]) -> str:
    """AUROC own against near miss, and near misses answered at 99.5% / 97% own answered."""
    own = sorted(v for k, v in scored if k == "own")
    near = [v for k, v in scored if k == "near_miss"]
    parts = [f"AUROC {auroc(own, near) or 0.0:.3f}"]
    for share in (0.995, 0.97):
        t = own[int(math.floor((1 - share) * len(own)))]
        parts.append(
            f"near misses answered at {share:.1%} own: {np.mean([v >= t for v in near]):.3f}"
        )
    return "  ".join(parts)


def question_level(q: list[tuple[int, str, dict]], feats: list[str]) -> list[tuple[str, float]]:
    """Leave one fold out: a logistic model of "own question" on standardised ``feats``."""
    scored = []
    for fold in sorted({f for f, _, _ in q}):
        train = [(k, s) for f, k, s in q if f != fold]
        X = np.array([[s[n] for n in feats] for _, s in train])
        mu, sd = X.mean(0), X.std(0) + 1e-9
        w = _fit(
            np.c_[np.ones(len(X)), (X - mu) / sd], np.array([k == "own" for k, _ in train], float)
        )
        for f, k, s in q:
            if f == fold:
                x = (np.array([s[n] for n in feats]) - mu) / sd
                scored.append((k, float(w[0] + x @ w[1:])))
    return scored


def hit_level(h: list[tuple[int, str, list[dict]]], feats: list[str]) -> list[tuple[str, float]]:
    """Leave one fold out: the relevance model refitted per hit on ``feats``; a question scores
    its best hit."""
    scored = []
    for fold in sorted({f for f, _, _ in h}):
        rows = [
            (x, e) for f, _, hs in h if f != fold for x, e in ((y["x"], y["evidence"]) for y in hs)
        ]
        X = np.array([[1.0, *(x[n] for n in feats)] for x, _ in rows])
        w = _fit(X, np.array([e for _, e in rows], float))
        for f, k, hs in h:
            if f == fold:
                z = [
                    w[0] + sum(wi * y["x"][n] for wi, n in zip(w[1:], feats, strict=True))
                    for y in hs
                ]
                scored.append((k, max(z, default=-30.0)))
    return scored


def report(folds: list[Fold]) -> None:
    for part, keep in (
        ("REALTALK chats 1-5", lambda n: n < MIXED),
        ("mixed, tuning", lambda n: n >= MIXED),
    ):
        chosen = [f for f in folds if keep(f.number)]
        if not chosen:
            continue
        q, h = [], []
        for f in chosen:
            memo = Memo(f)
            for i, r in enumerate(f.rows):
                if r["hits"]:
                    q.append((f.number, r["kind"], signals(r, f.full[i], f.unnamed[i], memo)))
                    h.append((f.number, r["kind"], hit_features(r, f.full[i], f.unnamed[i], memo)))
        n_own = sum(k == "own" for _, k, _ in q)
        print(f"\n## {part}: {n_own} own, {len(q) - n_own} near-miss questions with hits\n")
        print(
            f"{'shipped best relevance':60s} {summary([(k, s['best relevance']) for _, k, s in q])}"
        )
        print(
            f"{'best relevance refitted (question level)':60s} {summary(question_level(q, ['best relevance']))}"
        )
        for name in q[0][2]:
            if name != "best relevance":
                print(f"{'+ ' + name:60s} {summary(question_level(q, ['best relevance', name]))}")
        print(f"{'alone (a sign can be either way):':60s}")
        for name in q[0][2]:
            alone = summary([(k, s[name]) for _, k, s in q]).split("  ")[0]
            print(f"{'  ' + name:60s} {alone}")
        print(f"{'per hit: the nine features refitted':60s} {summary(hit_level(h, list(BASE)))}")
        for extra in (
            ["z"],
            ["z unnamed"],
            ["person z"],
            ["person z unnamed"],
            ["z", "z unnamed", "person z", "person z unnamed"],
        ):
            print(
                f"{'per hit: + ' + ', '.join(extra):60s} {summary(hit_level(h, [*BASE, *extra]))}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reuse", action="store_true", help="report on the rows kept last time")
    args = ap.parse_args()
    if args.reuse:
        folds = [Fold.load(int(p.stem.split("-")[1])) for p in sorted(OUT.glob("rows-*.json"))]
    else:
        emb, why = embedder_status()
        if emb is None:
            raise SystemExit(f"near miss: the study needs the embedding model: {why}")
        folds = collect(emb)
        for f in folds:
            f.save()
    report(folds)


if __name__ == "__main__":
    main()
