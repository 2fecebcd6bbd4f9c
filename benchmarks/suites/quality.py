"""Recall quality: the agent-memory question set and SciFact, clawmem against the baselines."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks import metrics as M
from benchmarks.common import WORK, VectorCache, embedder_status, log, median, percentile
from benchmarks.datasets.workspaces import (
    build_agentmem,
    build_scifact,
    load_scifact,
    scifact_subset,
)
from benchmarks.metrics import abstention, calibration
from benchmarks.questions.build import load as load_questions
from benchmarks.systems.clawmem import DEPTH, default_threshold, index_clawmem, open_clawmem
from benchmarks.systems.searchers import (
    QMD,
    BM25Searcher,
    ClawmemSearcher,
    OpenClawSearcher,
    QMDSearcher,
    Searcher,
    VectorSearcher,
    clawmem_chunks,
    find_qmd,
)

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

BUDGETS = (1000, 2000, 4000)
EVAL_K = 20  # results asked for when scoring; evidence recall reads them best first
DEFAULT_K = (
    6  # what an agent gets by default (clawmem k, OpenClaw maxResults): for no-answer questions
)


def make_searchers(
    mem: Memory,
    root: Path,
    *,
    emb: Embedder | None,
    cache: VectorCache,
    with_qmd: bool,
    qmd_name: str,
    uncapped: bool,
    with_openclaw: bool = True,
) -> tuple[list[Searcher], dict]:
    """Every system over one workspace. Returns (searchers, setup info). ``with_openclaw=False``
    leaves out the OpenClaw-style baselines (their chunks are embedded separately: on the whole
    of SciFact that is another hour of embedding on two cores)."""
    info: dict = {}
    vectors_ok = emb is not None and mem.embedder() is not None
    searchers: list[Searcher] = []
    modes = ["hybrid", "lexical", "vector"] if vectors_ok else ["lexical"]
    for mode in modes:
        searchers.append(ClawmemSearcher(mem, mode))
    chunks, vecs = clawmem_chunks(mem.index_path)
    info["clawmem_chunks"] = len(chunks)
    searchers.append(BM25Searcher(chunks))
    if vectors_ok and vecs is not None and emb is not None:
        searchers.append(VectorSearcher(chunks, vecs, emb))
    if with_openclaw:
        oc = OpenClawSearcher(root, emb if vectors_ok else None, cache)
        info["openclaw_chunks"] = len(oc.index.chunks)
        info["openclaw_index_seconds"] = oc.index_seconds
        searchers.append(oc)
        if uncapped:
            searchers.append(OpenClawSearcher(root, None, None, uncapped=True, index=oc.index))
    else:
        info["openclaw"] = "left out (--no-openclaw)"
    if with_qmd:
        exe = find_qmd()
        if exe is None:
            info["qmd"] = "not installed (npm i @tobilu/qmd bun in bench-results/qmd, see README)"
        else:
            q = QMD(exe, qmd_name)
            try:
                info["qmd_index_seconds"] = q.index(root)
                info["qmd_db_bytes"] = q.db_path().stat().st_size if q.db_path().exists() else None
                searchers.append(QMDSearcher(q, root))
                info["qmd"] = str(exe)
            except Exception as exc:  # noqa: BLE001
                info["qmd"] = f"failed: {exc}"
    return searchers, info


# --------------------------------------------------------------------------- agent memory
def run_agentmem(*, vectors: bool, with_qmd: bool, limit: int | None = None) -> dict:
    root = build_agentmem(WORK / "work" / "agentmem")
    emb, why = embedder_status() if vectors else (None, "vectors disabled (--no-vectors)")
    mem = open_clawmem(root, vectors=emb is not None)
    idx = index_clawmem(mem, "agentmem")
    cache = VectorCache()
    searchers, info = make_searchers(
        mem,
        root,
        emb=emb,
        cache=cache,
        with_qmd=with_qmd,
        qmd_name="clawmem-bench-agentmem",
        uncapped=False,
    )
    questions = load_questions()
    if limit:
        questions = questions[:limit]
    files: dict[str, list[int]] = {}

    def line_len(path: str, n: int) -> int:
        if path not in files:
            try:
                text = (root / path).read_text(encoding="utf-8")
            except OSError:
                text = ""
            files[path] = [len(x) for x in text.split("\n")]
        lens = files[path]
        return lens[n - 1] if 0 < n <= len(lens) else 0

    if vectors and emb is not None:
        # The default ranking without abstention: what the relevance threshold costs.
        searchers.insert(1, ClawmemSearcher(mem, "hybrid", min_relevance=0.0))
    for s in searchers:
        s.warm("warm-up query about the payments service")
    per_q: dict[str, list[dict]] = {s.name: [] for s in searchers}
    log(f"agentmem: {len(questions)} questions × {len(searchers)} systems")
    for q in questions:
        today = date.fromisoformat(q["today"]) if q.get("today") else None
        for s in searchers:
            res = s.search(q["question"], k=EVAL_K, today=today)
            row = {"id": q["id"], "category": q["category"]}
            if q["gold"]:
                for b in BUDGETS:
                    row[f"er@{b}"] = M.evidence_recall(res, q["gold"], line_len, b)
                row["r@5"] = M.recall_at_k(res, q["gold"], 5)
                row["r@10"] = M.recall_at_k(res, q["gold"], 10)
                row["mrr"] = M.reciprocal_rank(res, q["gold"])
            else:
                default = res[:DEFAULT_K]
                row["returned"] = len(default)
                row["chars"] = M.chars_returned(default, line_len)
            if isinstance(s, ClawmemSearcher) and s.mode != "vector":
                row["relaxed"] = s.last_relaxed
            per_q[s.name].append(row)

    systems = []
    for s in searchers:
        rows = per_q[s.name]
        answerable = [r for r in rows if "mrr" in r]
        none = [r for r in rows if "mrr" not in r]
        summary: dict[str, object] = {
            "name": s.name,
            "label": s.label,
            **{f"er@{b}": M.mean(r[f"er@{b}"] for r in answerable) for b in BUDGETS},
            "r@5": M.mean(r["r@5"] for r in answerable),
            "r@10": M.mean(r["r@10"] for r in answerable),
            "mrr": M.mean(r["mrr"] for r in answerable),
            "none_empty": (sum(1 for r in none if r["returned"] == 0) / len(none))
            if none
            else None,
            "none_chars": M.mean(r["chars"] for r in none) if none else None,
            "p50_ms": median(s.latencies) * 1000,
            "p95_ms": percentile(s.latencies, 95) * 1000,
            "errors": s.errors[:5],
            "n_errors": len(s.errors),
            "notes": s.notes,
        }
        if isinstance(s, ClawmemSearcher):
            summary["rankings"] = s.rankings
            if s.degraded():
                summary["notes"] = [*s.notes, "vectors were not used (degraded to lexical)"]
            if none and "relaxed" in none[0]:
                summary["relaxed_none"] = sum(1 for r in none if r["relaxed"]) / len(none)
                summary["relaxed_answerable"] = sum(1 for r in answerable if r["relaxed"]) / len(
                    answerable
                )
        if isinstance(s, QMDSearcher):
            summary["no_results"] = s.no_results
        cats = {}
        for cat in sorted({r["category"] for r in rows}):
            rs = [r for r in rows if r["category"] == cat]
            if cat == "none":
                cats[cat] = {
                    "n": len(rs),
                    "empty": sum(1 for r in rs if r["returned"] == 0) / len(rs),
                    "chars": M.mean(r["chars"] for r in rs),
                }
            else:
                cats[cat] = {
                    "n": len(rs),
                    "er@2000": M.mean(r["er@2000"] for r in rs),
                    "r@10": M.mean(r["r@10"] for r in rs),
                    "mrr": M.mean(r["mrr"] for r in rs),
                }
        summary["categories"] = cats
        systems.append(summary)
    cache_info = {
        "hits": cache.hits,
        "computed": cache.computed,
        "embed_seconds": cache.embed_seconds,
    }
    cache.close()
    return {
        "trust": _agentmem_trust(mem, questions),
        "workspace": str(root),
        "questions": len(questions),
        "answerable": sum(1 for q in questions if q["gold"]),
        "vectors": emb is not None,
        "vectors_off_reason": None if emb is not None else why,
        "index": idx,
        "setup": info,
        "baseline_vector_cache": cache_info,
        "systems": systems,
        "per_question": per_q,
    }


def _agentmem_trust(mem: Memory, questions: list[dict]) -> dict:
    """Relevance on this set (``metrics``: trust): calibration of the first ten hits of the
    answerable questions, and how many answerable and no-answer questions get hits by default."""
    rows = []
    for q in questions:
        today = date.fromisoformat(q["today"]) if q.get("today") else None
        res = mem.recall(q["question"], k=DEPTH, today=today, sync=False, min_relevance=0.0)
        hits = []
        for h in res.hits:
            lines = set(range(h.start_line, h.end_line + 1))
            evidence = any(
                g["path"] == h.path and lines & set(range(g["start"], g["end"] + 1))
                for item in q["gold"] or []
                for g in item
            )
            hits.append({"relevance": h.relevance, "evidence": evidence})
        rows.append({"kind": "own" if q["gold"] else "foreign", "hits": hits})
    threshold = default_threshold(mem)
    return {
        "threshold": threshold,
        "abstention": abstention(rows, threshold),
        "calibration": calibration([r for r in rows if r["kind"] == "own"]),
    }


# --------------------------------------------------------------------------- SciFact
def run_scifact(
    *,
    vectors: bool,
    with_qmd: bool,
    n_queries: int | None,
    n_docs: int | None,
    tag: str,
    with_openclaw: bool = True,
) -> dict:
    corpus, queries, qrels = load_scifact("test")
    doc_ids, qids = scifact_subset(corpus, queries, qrels, n_queries=n_queries, n_docs=n_docs)
    root = build_scifact(WORK / "work" / f"scifact-{tag}", corpus, doc_ids)
    emb, why = embedder_status() if vectors else (None, "vectors disabled (--no-vectors)")
    mem = open_clawmem(root, vectors=emb is not None)
    idx = index_clawmem(mem, f"scifact-{tag}")
    cache = VectorCache()
    searchers, info = make_searchers(
        mem,
        root,
        emb=emb,
        cache=cache,
        with_qmd=with_qmd,
        qmd_name=f"clawmem-bench-scifact-{tag}",
        uncapped=True,
        with_openclaw=with_openclaw,
    )
    if emb is not None and any(s.name == "clawmem-hybrid" for s in searchers):
        # The default ranking without abstention: what the relevance threshold costs here.
        searchers.insert(1, ClawmemSearcher(mem, "hybrid", min_relevance=0.0))
    log(
        f"scifact-{tag}: {len(qids)} queries × {len(searchers)} systems "
        f"over {len(doc_ids)} abstracts"
    )
    for s in searchers:
        s.warm("warm-up query about protein folding")

    def doc_of(path: str) -> str:
        return path.rsplit("/", 1)[-1].removesuffix(".md")

    out_systems = []
    for s in searchers:
        nd, r100, r10 = [], [], []
        for qid in qids:
            k = 100 if s.name != "openclaw" else 6
            if s.name in ("bm25", "vector"):
                k = 400  # chunk-level lists; several chunks may belong to one abstract
            res = s.search(queries[qid], k=k)
            docs = M.dedupe_docs([doc_of(p) for p, _, _ in res])[:100]
            nd.append(M.ndcg_at_k(docs, qrels[qid], 10))
            r10.append(M.doc_recall_at_k(docs, qrels[qid], 10))
            r100.append(M.doc_recall_at_k(docs, qrels[qid], 100))
        out = {
            "name": s.name,
            "label": s.label,
            "ndcg@10": M.mean(nd),
            "recall@10": M.mean(r10),
            "recall@100": M.mean(r100),
            "p50_ms": median(s.latencies) * 1000,
            "p95_ms": percentile(s.latencies, 95) * 1000,
            "n_errors": len(s.errors),
            "errors": s.errors[:5],
            "notes": s.notes,
        }
        if isinstance(s, ClawmemSearcher):
            out["rankings"] = s.rankings
            if s.degraded():
                out["notes"] = [*s.notes, "vectors were not used (degraded to lexical)"]
        if isinstance(s, QMDSearcher):
            out["no_results"] = s.no_results
        out_systems.append(out)
    cache_info = {
        "hits": cache.hits,
        "computed": cache.computed,
        "embed_seconds": cache.embed_seconds,
    }
    cache.close()
    return {
        "tag": tag,
        "workspace": str(root),
        "queries": len(qids),
        "docs": len(doc_ids),
        "full": n_queries is None and n_docs is None,
        "vectors": emb is not None,
        "vectors_off_reason": None if emb is not None else why,
        "index": idx,
        "setup": info,
        "baseline_vector_cache": cache_info,
        "systems": out_systems,
    }
