"""Fitting ``clawmem.recall.answer_match``'s weights on tuning data.

``python -m benchmarks.fitting.answer_match`` asks REALTALK's tuning chats (1-5) their own
questions and the mixed workspaces' tuning part (``benchmarks.datasets.mixed.TUNE``) its
answerable ones, with today's order (``Ranking(answer_depth=0)``: the re-ordering off, so the
rows are what it re-orders; the lines next to each other already joined), computes
``answer_match.FEATURES`` of each question's first ``DEPTH`` hits with the product's own code, and
fits a logistic model of "this hit is evidence" on the messages among them
(``answer_match.is_message``: the only hits the product moves; Newton's method on standardised
features, L2 ``--l2`` on the weights, not the intercept). It prints the ``Model`` to paste into
``clawmem/recall/answer_match.py``, and, leaving one tuning workspace or chat out at a time (fit
on the others, re-order the left-out one's messages among the places they hold in its first
``DEPTH``, every other hit in place), R@1 and MRR before and after on each part. REALTALK's
chats 6-10 and the mixed workspaces' held-out part are never read here;
``benchmarks.suites.mixed`` and ``python -m benchmarks --only realtalk`` report on them with the
pasted weights.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchmarks.common import WORK, embedder_status, log
from benchmarks.datasets.realtalk import TUNE
from benchmarks.fitting.chats import indexed_chats

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder

DEPTH = 5  # the hits whose messages are re-ordered (fusion.Ranking.answer_depth)
POOL = 20  # the hits read for the best fused score (recall makes at least 18)


def _rows(res, question: str, today, evidence) -> dict:  # type: ignore[no-untyped-def]
    from clawmem.recall import answer_match
    from clawmem.text.query import Query

    a = answer_match.asked(Query.parse(question, today))
    best = max((h.score for h in res.hits), default=0.0)
    head = res.hits[:DEPTH]
    return {
        "msg": [answer_match.is_message(h) for h in head],
        "x": [
            [answer_match.features(a, h.text, i, h.score, best)[n] for n in answer_match.FEATURES]
            for i, h in enumerate(head, 1)
        ],
        "y": [1.0 if evidence(h) else 0.0 for h in head],
    }


def collect(emb: Embedder | None) -> list[dict]:
    """Every tuning question's first DEPTH hits under today's order, with features and labels;
    each row names its fold (``r1``..``r5``, ``m1``, ``m3``)."""
    import os

    from benchmarks.datasets.mixed import TUNE as MIXED_TUNE
    from benchmarks.datasets.mixed import build_layout, questions_for
    from benchmarks.metrics import gold_lines, is_evidence
    from benchmarks.suites import mixed
    from clawmem.recall.fusion import Ranking

    os.environ.setdefault("CLAWMEM_TRUST_FILE", str(WORK / "work" / "mixed" / "trusted.json"))
    today_order = Ranking(answer_depth=0)
    rows: list[dict] = []
    for chat, _, mem in indexed_chats(TUNE, emb):
        n = chat.number
        for q in chat.questions:
            gold = gold_lines(q)
            res = mem.recall(
                q["question"], k=POOL, today=chat.today, sync=False, min_relevance=0.0,
                ranking=today_order,
            )  # fmt: skip
            row = _rows(res, q["question"], chat.today, lambda h, g=gold: is_evidence(h, g))
            rows.append({"fold": f"r{n}", **row})
        log(f"answer match: chat {n} collected")
    for n in MIXED_TUNE:
        ws, mem = mixed.prepare(n, emb)
        for q in questions_for(ws, build_layout(mixed.PAIRS[n])):
            if q["kind"] != "answerable" or not q["gold"]:
                continue
            res = mem.recall(
                q["question"], k=POOL, today=ws.today, sync=False, min_relevance=0.0,
                ranking=today_order,
            )  # fmt: skip

            def ev(h, gold=q["gold"]) -> bool:  # type: ignore[no-untyped-def]
                return mixed._overlaps((h.scoped_path, h.start_line, h.end_line), gold)

            rows.append({"fold": f"m{n}", **_rows(res, q["question"], ws.today, ev)})
        mem.close()
        log(f"answer match: mixed workspace {n} collected")
    return rows


def fit(rows: list[dict], l2: float = 1.0) -> tuple[float, np.ndarray]:
    """(intercept, weights) on the raw features of the messages: a logistic fit on standardised
    ones."""
    X = np.array([x for r in rows for x, m in zip(r["x"], r["msg"], strict=True) if m], dtype=float)
    y = np.array([v for r in rows for v, m in zip(r["y"], r["msg"], strict=True) if m], dtype=float)
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    beta = np.zeros(Z.shape[1])
    pen = np.r_[np.full(X.shape[1], l2), 0.0]
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(Z @ beta, -30, 30)))
        grad = Z.T @ (p - y) + pen * beta
        hess = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    w = beta[:-1] / sd
    return float(beta[-1] - (beta[:-1] * mu / sd).sum()), w


def _firsts(r: dict, order: list[int]) -> tuple[float, float]:
    labels = [r["y"][i] for i in order]
    r1 = float(bool(labels) and labels[0] > 0)
    mrr = next((1.0 / i for i, v in enumerate(labels, 1) if v > 0), 0.0)
    return r1, mrr


def reordered(r: dict, b: float, w: np.ndarray) -> list[int]:
    """The places of one question's first hits after the product's re-ordering: its messages
    by score among the places they hold (a tie keeps the earlier), every other hit in place."""
    slots = [i for i, m in enumerate(r["msg"]) if m]
    s = {i: b + float(np.dot(w, r["x"][i])) for i in slots}
    order = list(range(len(r["x"])))
    for slot, i in zip(slots, sorted(slots, key=lambda i: (-s[i], i)), strict=True):
        order[slot] = i
    return order


def left_out(rows: list[dict], l2: float) -> dict[str, tuple[float, float, float, float, int]]:
    """Per part ("m", "r"): R@1 and MRR within the first DEPTH hits, today's order and
    re-ordered, each fold scored by a model fitted on the others, and the questions."""
    out: dict[str, list] = {"m": [], "r": []}
    for fold in sorted({r["fold"] for r in rows}):
        b, w = fit([r for r in rows if r["fold"] != fold], l2)
        for r in rows:
            if r["fold"] == fold and r["x"]:
                out[fold[0]].append(
                    (*_firsts(r, list(range(len(r["x"])))), *_firsts(r, reordered(r, b, w)))
                )
    return {part: (*np.array(v).mean(0).round(3).tolist(), len(v)) for part, v in out.items() if v}


def main(argv: list[str] | None = None) -> int:
    from clawmem.recall.answer_match import ANSWER_MATCH, FEATURES

    ap = argparse.ArgumentParser(prog="python -m benchmarks.fitting.answer_match")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument(
        "--rows",
        type=Path,
        help="keep the collected rows in this JSON file and "
        "read them from it when it exists (to try another --l2 without asking again)",
    )
    args = ap.parse_args(argv)
    if args.rows is not None and args.rows.exists():
        rows = json.loads(args.rows.read_text("utf-8"))
    else:
        emb, _ = embedder_status()
        if emb is None:
            raise SystemExit("answer match: the embedding model is needed (hybrid recall)")
        rows = collect(emb)
        if args.rows is not None:
            args.rows.write_text(json.dumps(rows), "utf-8")
    for part, (r1, mrr, r1_new, mrr_new, n) in left_out(rows, args.l2).items():
        name = "mixed" if part == "m" else "REALTALK"
        print(f"left out, {name} ({n} questions): R@1 {r1} -> {r1_new}, MRR {mrr} -> {mrr_new}")
    b, w = fit(rows, args.l2)
    body = "".join(f'\n        "{n}": {v:.4f},' for n, v in zip(FEATURES, w, strict=True))
    print(
        f"MODEL = Model(\n    name=ANSWER_MATCH,\n    intercept={b:.4f},\n    weights={{{body}\n    }},\n)"
    )
    msgs = sum(sum(r["msg"]) for r in rows)
    print(f"# {ANSWER_MATCH}: {msgs} messages among the first hits of {len(rows)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
