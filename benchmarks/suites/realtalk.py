"""The REALTALK suite: clawmem and baselines on real 21-day conversations (the data and its
conversion into daily logs: ``benchmarks/datasets/realtalk.py``).

Baselines, on the same workspaces and the same embedder as clawmem, over *single messages*:
BM25 (FTS5 ``bm25()``, any term, ``unicode61 remove_diacritics 2``), dense (exact cosine of each
bullet's text) and their reciprocal rank fusion (k = 60). Chats 1–5 are the tuning split, 6–10
the held-out split; results are reported for both and for all ten.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from benchmarks import metrics as M
from benchmarks.common import VectorCache, embedder_status, log, median, percentile
from benchmarks.datasets.realtalk import (
    HELD_OUT,
    TUNE,
    Chat,
    build,
    chat_files,
    convert,
    foreign_of,
)
from benchmarks.metrics import Citation, abstention, calibration
from benchmarks.systems.clawmem import default_threshold, index_clawmem, open_with, rows_of
from benchmarks.systems.searchers import (
    BM25Searcher,
    Chunk,
    ClawmemSearcher,
    Searcher,
    VectorSearcher,
    cite,
)

BUDGETS = (1000, 2000, 4000)
EVAL_K = 20
K_SMALL = 3  # the k-stability check compares the hits of k=3 with the first 3 of k=EVAL_K


# --------------------------------------------------------------------------- baselines
def message_chunks(chat: Chat) -> list[Chunk]:
    """Each message as a one-line unit, for the generic baselines in systems.py."""
    return [Chunk(i, m.path, m.line, m.line, m.text) for i, m in enumerate(chat.messages)]


class MessageRRF(Searcher):
    def __init__(self, bm25: BM25Searcher, dense: VectorSearcher, rrf_k: int = 60) -> None:
        super().__init__("msg-rrf", "RRF of those two (k = 60)")
        self.bm25, self.dense, self.rrf_k = bm25, dense, rrf_k

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        scores: dict[int, float] = {}
        for leg in (self.bm25.ranked(query, 100), self.dense.ranked(query, 100)):
            for rank, i in enumerate(leg, 1):
                scores[i] = scores.get(i, 0.0) + 1.0 / (self.rrf_k + rank)
        best = sorted(scores, key=lambda i: (-scores[i], i))[:k]
        return [cite(self.bm25.chunks[i]) for i in best]


# --------------------------------------------------------------------------- the run
def run_realtalk(
    *, vectors: bool, chats: tuple[int, ...] | None = None, folder: str = "realtalk"
) -> dict:
    emb, why = embedder_status() if vectors else (None, "vectors disabled (--no-vectors)")
    cache = VectorCache()
    per_q: dict[str, list[dict]] = {}
    labels: dict[str, str] = {}
    latencies: dict[str, list[float]] = {}
    setup = []
    every = {c.number: c for c in (convert(p) for p in chat_files())}
    trust_rows: list[dict] = []  # relevance and abstention (metrics: trust)
    k_checked = k_broken = 0
    for number in sorted(every):
        chat = every[number]
        if chats and chat.number not in chats:
            continue
        root = build(chat, folder)
        mem = open_with(root, emb)
        idx = index_clawmem(mem, f"realtalk-{chat.number}")
        searchers: list[Searcher] = []
        modes = ["hybrid", "lexical", "vector"] if emb is not None else ["lexical"]
        searchers += [ClawmemSearcher(mem, m) for m in modes]
        # The same ranking without abstention: what the relevance threshold costs.
        searchers.append(ClawmemSearcher(mem, modes[0], min_relevance=0.0))
        units = message_chunks(chat)
        bm25 = BM25Searcher(units, "msg-bm25", "BM25 over single messages (FTS5, any term)")
        searchers.append(bm25)
        if emb is not None:
            vecs = cache.embed(emb, [u.text for u in units])
            dense = VectorSearcher(
                units, vecs, emb, "msg-dense", "dense over single messages (exact cosine)"
            )
            searchers += [dense, MessageRRF(bm25, dense)]
        setup.append(
            {
                "chat": chat.number,
                "name": chat.name,
                "files": len(chat.files),
                "messages": len(chat.messages),
                "questions": len(chat.questions),
                "units": mem.status().chunks,
                "index_seconds": idx.get("wall_seconds"),
            }
        )
        lens = {rel: [len(x) for x in text.split("\n")] for rel, text in chat.files.items()}

        def line_len(p: str, n: int, lens: dict[str, list[int]] = lens) -> int:
            ls = lens.get(p, [])
            return ls[n - 1] if 0 < n <= len(ls) else 0

        for s in searchers:
            s.warm("warm-up question about a trip")
            labels[s.name] = s.label
        log(f"realtalk chat {chat.number}: {len(chat.questions)} questions × {len(searchers)}")
        for q in chat.questions:
            for s in searchers:
                res = s.search(q["question"], k=EVAL_K, today=chat.today)
                row = {"chat": chat.number, "category": q["category"]}
                for b in BUDGETS:
                    row[f"er@{b}"] = M.evidence_recall(res, q["gold"], line_len, b)
                row["r@5"] = M.recall_at_k(res, q["gold"], 5)
                row["r@10"] = M.recall_at_k(res, q["gold"], 10)
                row["mrr"] = M.reciprocal_rank(res, q["gold"])
                row["chars"] = M.chars_returned(res, line_len)
                row["lines"] = sum(b - a + 1 for _, a, b in res) / max(1, len(res))
                per_q.setdefault(s.name, []).append(row)
        for s in searchers:
            latencies.setdefault(s.name, []).extend(s.latencies)
        # Relevance and abstention: the chat's own questions, and the next chat's (foreign).
        trust_rows += rows_of(mem, chat, chat.questions, "own")
        trust_rows += rows_of(mem, chat, every[foreign_of(chat.number)].questions, "foreign")
        # k-stability on every question: the first K_SMALL hits of k=EVAL_K are those of k=K_SMALL.
        for q in chat.questions:
            args: dict[str, Any] = dict(today=chat.today, sync=False, min_relevance=0.0)
            small = mem.recall(q["question"], k=K_SMALL, **args).hits
            large = mem.recall(q["question"], k=EVAL_K, **args).hits[:K_SMALL]
            k_checked += 1
            if [(h.citation, h.score) for h in small] != [(h.citation, h.score) for h in large]:
                k_broken += 1
    cache.close()

    def summarise(rows: list[dict]) -> dict:
        out = {f"er@{b}": M.mean(r[f"er@{b}"] for r in rows) for b in BUDGETS}
        out.update(
            {
                "r@5": M.mean(r["r@5"] for r in rows),
                "r@10": M.mean(r["r@10"] for r in rows),
                "mrr": M.mean(r["mrr"] for r in rows),
                "chars": M.mean(r["chars"] for r in rows),
                "lines_per_hit": M.mean(r["lines"] for r in rows),
                "n": len(rows),
            }
        )
        return out

    systems = []
    for name, rows in per_q.items():
        systems.append(
            {
                "name": name,
                "label": labels[name],
                "all": summarise(rows),
                "tune": summarise([r for r in rows if r["chat"] in TUNE]),
                "held_out": summarise([r for r in rows if r["chat"] in HELD_OUT]),
                "p50_ms": median(latencies[name]) * 1000,
                "p95_ms": percentile(latencies[name], 95) * 1000,
            }
        )
    threshold = default_threshold(mem)
    trust: dict = {"threshold": threshold, "k_checked": k_checked, "k_broken": k_broken}
    for split, keep in (("tune", TUNE), ("held_out", HELD_OUT), ("all", TUNE + HELD_OUT)):
        rows = [r for r in trust_rows if r["chat"] in keep]
        if not rows:
            continue
        trust[split] = {
            "abstention": abstention(rows, threshold),
            "calibration": calibration([r for r in rows if r["kind"] == "own"]),
            "calibration_with_foreign": calibration(rows),
        }
    return {
        "vectors": emb is not None,
        "vectors_off_reason": None if emb is not None else why,
        "embedder": emb.identity.key() if emb is not None else None,
        "trust": trust,
        "setup": setup,
        "questions": sum(s["questions"] for s in setup),
        "systems": systems,
        "per_question": per_q,
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchmarks.realtalk")
    ap.add_argument("--chats", help="comma-separated chat numbers (default: all ten)")
    ap.add_argument("--no-vectors", action="store_true")
    args = ap.parse_args(argv)
    chats = tuple(int(x) for x in args.chats.split(",")) if args.chats else None
    res = run_realtalk(vectors=not args.no_vectors, chats=chats)
    print(f"{'system':<16} {'split':<9} ER@1k  ER@2k  ER@4k  R@5    R@10   MRR    chars")
    for s in res["systems"]:
        for split in ("tune", "held_out", "all"):
            m = s[split]
            if not m["n"]:
                continue
            print(
                f"{s['name']:<16} {split:<9} {m['er@1000']:.3f}  {m['er@2000']:.3f}  "
                f"{m['er@4000']:.3f}  {m['r@5']:.3f}  {m['r@10']:.3f}  {m['mrr']:.3f}  "
                f"{m['chars']:.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
