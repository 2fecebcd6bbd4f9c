"""Choosing the ranking's numbers on the tuning split of REALTALK (chats 1-5) only.

``python -m benchmarks.tune`` indexes the tuning chats (as ``benchmarks.realtalk`` does), then
scores a grid of ``clawmem.recall.fusion.Ranking`` variants by evidence recall within 2,000 characters
(ER@2k) and prints them best first. The held-out chats 6-10 are never read here: the report in
docs/benchmarks.md gives their numbers for the defaults chosen this way.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from benchmarks import metrics as M
from benchmarks.common import embedder_status, log
from benchmarks.datasets.realtalk import TUNE, build, chat_files, convert
from benchmarks.metrics import interval, paired_interval
from benchmarks.systems.clawmem import open_with
from clawmem.recall.fusion import Ranking

if TYPE_CHECKING:
    from benchmarks.datasets.realtalk import Chat
    from clawmem.embedders.base import Embedder, EmbedResult
    from clawmem.memory import Memory


class QueryCache:
    """The real embedder, with query vectors remembered: a grid asks the same questions often."""

    def __init__(self, emb: Embedder) -> None:
        self.emb = emb
        self.identity = emb.identity
        self.memo: dict[str, object] = {}

    def embed_query(self, text: str) -> Any:
        if text not in self.memo:
            self.memo[text] = self.emb.embed_query(text)
        return self.memo[text]

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        return self.emb.embed_documents(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.emb, name)


# A split: each chat, clawmem opened on it, and its files' line lengths (metrics.LineLength).
Split: TypeAlias = "list[tuple[Chat, Memory, dict[str, list[int]]]]"


def load_split(emb: Embedder | None) -> Split:
    out: Split = []
    for path in chat_files():
        chat = convert(path)
        if chat.number not in TUNE:
            continue
        root = build(chat)
        mem = open_with(root, emb)
        mem.index()
        lens = {rel: [len(x) for x in text.split("\n")] for rel, text in chat.files.items()}
        out.append((chat, mem, lens))
    return out


def score(split: Split, ranking: Ranking, mode: str = "hybrid", budget: int = 2000) -> dict:
    ers, r10 = [], []
    for chat, mem, lens in split:

        def line_len(p: str, n: int, lens: dict[str, list[int]] = lens) -> int:
            ls = lens.get(p, [])
            return ls[n - 1] if 0 < n <= len(ls) else 0

        for q in chat.questions:
            res = mem.recall(
                q["question"], k=20, mode=mode, today=chat.today, sync=False, ranking=ranking
            )
            cites = [(h.path, h.start_line, h.end_line) for h in res.hits]
            ers.append(M.evidence_recall(cites, q["gold"], line_len, budget))
            r10.append(M.recall_at_k(cites, q["gold"], 10))
    return {"er": M.mean(ers), "r10": M.mean(r10), "per_question": ers}


GRID: dict[str, list[float]] = {
    "lexical_weight": [0.6, 0.8, 1.0],
    "vector_weight": [1.0],
    "rrf_k": [20, 60],
    "context_weight": [0.0, 0.1, 0.25],
    "neighbour_boost": [0.0, 0.15, 0.3],
    "same_section_factor": [1.0, 0.85],
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tune")
    ap.add_argument(
        "--grid", default=None, help='JSON grid instead of GRID, e.g. {"rrf_k": [10, 60]}'
    )
    args = ap.parse_args(argv)
    grid = dict(GRID)
    if args.grid:
        import json

        # The given keys replace the grid; every other number stays at its default.
        grid = json.loads(args.grid)
    emb, why = embedder_status()
    if emb is None:
        raise SystemExit(f"no embedder: {why}")
    split = load_split(QueryCache(emb))
    base = Ranking()
    for mode in ("lexical", "vector"):
        s = score(split, base, mode)
        log(f"{mode}: ER@2k {s['er']:.4f} R@10 {s['r10']:.4f}")
    default = score(split, base)
    log(f"defaults: ER@2k {default['er']:.4f} R@10 {default['r10']:.4f}")
    rows = []
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        # Ranking's fields are ints and floats; the grid (JSON) gives either: Ranking checks them.
        setting: dict[str, Any] = dict(zip(keys, values, strict=True))
        r = replace(base, **setting)
        s = score(split, r)
        # The gain over the defaults on the same questions, with its 95% bootstrap interval: a
        # gain whose interval takes in zero is this split's noise, not a finding.
        gain = interval(paired_interval(s["per_question"], default["per_question"]), signed=True)
        rows.append((s["er"], s["r10"], gain, r))
        log(f"{s['er']:.4f} {s['r10']:.4f} {gain} {dict(zip(keys, values, strict=True))}")
    rows.sort(key=lambda x: -x[0])
    print("best first (tuning split, hybrid, ER@2k, R@10, gain over the defaults):")
    for er, r10, gain, r in rows[:15]:
        print(f"{er:.4f} {r10:.4f} {gain} {r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
