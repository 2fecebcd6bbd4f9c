"""OpenClaw's classic hybrid memory search, re-implemented faithfully as the baseline to beat.

As described in ../shared/seeds/002_* and 003_* (and OpenClaw's
src/memory/{internal,hybrid,manager}.ts of that time):

* files: MEMORY.md / memory.md and memory/**/*.md; ``extra_paths`` adds more (the benchmark passes
  bank/ so both systems see the same Markdown);
* ``chunkMarkdown``: lines accumulated up to maxChars = 400 tokens × 4 = 1,600 characters (a longer
  line is cut into 1,600-character segments); on overflow the chunk is flushed and trailing lines
  are carried over until they reach overlapChars = 80 × 4 = 320 characters; no notion of headings;
* keyword leg: FTS5 (default ``unicode61`` tokenizer) over the chunk text; the query keeps only
  ``[A-Za-z0-9_]+`` tokens, each quoted, joined with AND (no token → no keyword search);
  ``textScore = 1 / (1 + max(0, rank))`` on the raw, negative FTS5 ``bm25()`` rank, i.e. always 1.0;
* vector leg: cosine similarity between the query vector and each chunk's vector (exact scan, as
  sqlite-vec's ``vec_distance_cosine``), score = 1 − distance; vectors come from clawmem's embedder
  on the raw chunk text;
* candidates = min(200, max(1, floor(6 × 4))) = 24 from each leg; merged by chunk id with
  score = 0.7 × vectorScore + 0.3 × textScore; kept if score ≥ minScore 0.35; the first 6 returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder

try:
    import sqlean as sqlite
except ImportError:  # pragma: no cover
    import sqlite3 as sqlite  # type: ignore[no-redef]

TOKENS = 400
OVERLAP = 80
MAX_RESULTS = 6
MIN_SCORE = 0.35
CANDIDATE_MULTIPLIER = 4
VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3


@dataclass(frozen=True)
class OcChunk:
    path: str
    start_line: int
    end_line: int
    text: str


def chunk_markdown(
    content: str, tokens: int = TOKENS, overlap: int = OVERLAP
) -> list[tuple[int, int, str]]:
    """Port of OpenClaw's ``chunkMarkdown`` (line-based, no structure): (start, end, text)."""
    lines = content.split("\n")
    max_chars = max(32, tokens * 4)
    overlap_chars = max(0, overlap * 4)
    chunks: list[tuple[int, int, str]] = []
    current: list[tuple[str, int]] = []
    current_chars = 0

    def flush() -> None:
        if not current:
            return
        chunks.append((current[0][1], current[-1][1], "\n".join(x[0] for x in current)))

    def carry_overlap() -> None:
        nonlocal current, current_chars
        if overlap_chars <= 0 or not current:
            current, current_chars = [], 0
            return
        acc = 0
        kept: list[tuple[str, int]] = []
        for entry in reversed(current):
            acc += len(entry[0]) + 1
            kept.insert(0, entry)
            if acc >= overlap_chars:
                break
        current = kept
        current_chars = sum(len(e[0]) + 1 for e in kept)

    for i, line in enumerate(lines):
        line_no = i + 1
        segments = (
            [""] if not line else [line[s : s + max_chars] for s in range(0, len(line), max_chars)]
        )
        for seg in segments:
            size = len(seg) + 1
            if current_chars + size > max_chars and current:
                flush()
                carry_overlap()
            current.append((seg, line_no))
            current_chars += size
    flush()
    return chunks


def build_fts_query(raw: str) -> str | None:
    toks = [t.strip() for t in re.findall(r"[A-Za-z0-9_]+", raw) if t.strip()]
    if not toks:
        return None
    return " AND ".join('"' + t.replace('"', "") + '"' for t in toks)


def bm25_rank_to_score(rank: float) -> float:
    normalized = max(0.0, rank) if np.isfinite(rank) else 999.0
    return 1.0 / (1.0 + normalized)


def list_memory_files(root: Path, extra_paths: tuple[str, ...] = ()) -> list[str]:
    out = []
    for name in ("MEMORY.md", "memory.md"):
        if (root / name).is_file():
            out.append(name)
    for top in ("memory", *extra_paths):
        base = root / top
        if base.is_dir():
            out.extend(
                sorted(p.relative_to(root).as_posix() for p in base.rglob("*.md") if p.is_file())
            )
    return list(dict.fromkeys(out))


class OpenClawIndex:
    """An in-memory OpenClaw index of one workspace (its own SQLite + FTS5, exact vector scan)."""

    def __init__(self, root: Path, *, extra_paths: tuple[str, ...] = ("bank",)) -> None:
        self.root = root
        self.chunks: list[OcChunk] = []
        for rel in list_memory_files(root, extra_paths):
            text = (root / rel).read_text(encoding="utf-8")
            for a, b, body in chunk_markdown(text):
                self.chunks.append(OcChunk(rel, a, b, body))
        self.conn = sqlite.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, id UNINDEXED)")
        with self.conn:
            self.conn.executemany(
                "INSERT INTO chunks_fts(rowid, text, id) VALUES (?, ?, ?)",
                [(i, c.text, i) for i, c in enumerate(self.chunks)],
            )
        self.vectors: np.ndarray | None = None
        self.embedder: Embedder | None = None

    def attach_vectors(self, embedder: Embedder, vectors: np.ndarray) -> None:
        self.embedder = embedder
        self.vectors = vectors

    def keyword(self, query: str, limit: int) -> list[tuple[int, float]]:
        expr = build_fts_query(query)
        if expr is None:
            return []
        try:
            rows = self.conn.execute(
                "SELECT rowid, bm25(chunks_fts) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? "
                "ORDER BY rank ASC LIMIT ?",
                (expr, limit),
            ).fetchall()
        except sqlite.OperationalError:
            return []  # OpenClaw: searchKeyword(...).catch(() => [])
        return [(int(r[0]), bm25_rank_to_score(float(r[1]))) for r in rows]

    def vector(self, qvec: np.ndarray, limit: int) -> list[tuple[int, float]]:
        if self.vectors is None or not np.any(qvec):
            return []
        sims = self.vectors @ np.asarray(qvec, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[:limit]
        return [(int(i), float(sims[i])) for i in order]

    def search(
        self,
        query: str,
        *,
        max_results: int = MAX_RESULTS,
        min_score: float = MIN_SCORE,
        qvec: np.ndarray | None = None,
    ) -> list[tuple[OcChunk, float]]:
        cleaned = query.strip()
        if not cleaned:
            return []
        candidates = min(200, max(1, int(max_results * CANDIDATE_MULTIPLIER)))
        kw = self.keyword(cleaned, candidates)
        if qvec is None and self.embedder is not None:
            qvec = self.embedder.embed_query(cleaned)
        vec = self.vector(qvec, candidates) if qvec is not None else []
        merged: dict[int, list[float]] = {}
        for cid, s in vec:
            merged[cid] = [s, 0.0]
        for cid, s in kw:
            merged.setdefault(cid, [0.0, 0.0])[1] = s
        scored = [(cid, VECTOR_WEIGHT * v + TEXT_WEIGHT * t) for cid, (v, t) in merged.items()]
        scored.sort(key=lambda x: -x[1])  # JS sort is stable; insertion order breaks ties
        return [(self.chunks[c], s) for c, s in scored if s >= min_score][:max_results]
