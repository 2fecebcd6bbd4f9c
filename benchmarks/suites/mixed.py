"""Recall where users live (issue 45): mixed workspaces, near misses, calibration by kind.

``python -m benchmarks.suites.mixed`` (or ``python -m benchmarks --only mixed``) builds the mixed
workspaces of ``datasets/mixed.py`` (one REALTALK chat spread over daily logs, narrative notes,
``## Retain`` facts, task lists, links, a Claude Code transcript folder and a read scope, plus
MemoryBank notes), runs the real ``clawmem reflect`` on each (entity and opinion pages, episode
pages), indexes them and asks each its answerable, unanswerable and near-miss questions. It
reports, per part (tuning: chats 1 and 3; held out: chats 7 and 8):

* R@1 (the first hit is evidence), MRR and ER@2k (benchmarks/metrics.py) of the answerable
  questions, overall, by the unit kind their evidence was placed in and by REALTALK category
  (3: inference), for clawmem as configured, clawmem without abstention, and the baselines in the
  same run: BM25 and dense (the same embedder's vectors, exact cosine) over clawmem's single
  units (a message, a bullet, a paragraph; the scope's too), and their RRF;
* the share of each kind of question answered (clawmem's default threshold) and the AUROC of the
  best relevance between answerable and near-miss (and unanswerable) questions;
* calibration: reliability bins of every hit's relevance against "is evidence", and the
  expected calibration error (ECE), by question kind and by the kind of unit hit.

It also runs the near-miss probe on REALTALK's own workspaces (``bench-results/work/realtalk``,
shared with ``benchmarks.realtalk``): each chat is asked its own questions and the next chat's
(``relevance.foreign_of``) with that chat's people renamed to this one's.
"""

from __future__ import annotations

import math
import os
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchmarks import metrics as M
from benchmarks.common import (
    REPO,
    WORK,
    embedder_status,
    log,
    replace_section,
    save_results,
)
from benchmarks.datasets.mixed import (
    HELD_OUT,
    SCOPE,
    TUNE,
    MixedWorkspace,
    build_layout,
    load_chat,
    questions_for,
    realtalk_near_miss,
    write,
)
from benchmarks.metrics import Citation, LineLength, auroc, gold_lines, is_evidence
from benchmarks.systems.clawmem import default_threshold, index_clawmem, open_clawmem
from benchmarks.systems.searchers import (
    BM25Searcher,
    Chunk,
    Searcher,
    VectorSearcher,
    cite,
    clawmem_chunks,
)

if TYPE_CHECKING:
    from benchmarks.suites import Settings
    from clawmem import Memory
    from clawmem.embedders.base import Embedder
    from clawmem.recall.results import RecallResult

PART = "mixed"
TITLE = "mixed workspaces and near misses"
HEADING = "## Mixed workspaces and near misses"
EVAL_K = 20
DEPTH = 10  # the hits abstention looks at (= clawmem.recall.pipeline.ABSTAIN_DEPTH)
BUDGETS = (1000, 2000, 4000)
CAL_BINS = tuple(i / 10 for i in range(11))
PAIRS = {1: 3, 3: 1, 7: 8, 8: 7}  # each workspace's partner in its part (unanswerable questions)


# --------------------------------------------------------------------------- building
def prepare(number: int, emb: Embedder | None) -> tuple[MixedWorkspace, Memory]:
    """Write the workspace of chat ``number``, index its scope, index it, reflect, index again.
    Returns the layout and the open ``Memory``."""
    ws = build_layout(number)
    write(ws)
    # Its clawmem.toml reads a scope and a transcript folder outside the workspace, which clawmem
    # ignores until the user approves the file (``clawmem trust``): approved here, in an
    # approvals file of the harness's own, never the user's.
    os.environ.setdefault("CLAWMEM_TRUST_FILE", str(WORK / "work" / "mixed" / "trusted.json"))
    from clawmem.config import trust

    trust.approve(ws.root)
    scope = open_clawmem(ws.scope_root, vectors=emb is not None, embedder=emb)
    index_clawmem(scope, f"mixed {number} scope")
    scope.close()
    mem = open_clawmem(ws.root, vectors=emb is not None, embedder=emb)
    index_clawmem(mem, f"mixed {number}")
    mem.reflect(today=ws.today, now=ws.now)
    index_clawmem(mem, f"mixed {number} after reflect")
    return ws, mem


def line_lengths(ws: MixedWorkspace) -> LineLength:
    """``line_len(path, n)`` over the workspace, its scope (``team:``) and its transcripts (what
    was said on the line, as ``get`` shows it)."""
    lens: dict[str, list[int]] = {}
    for root, prefix in ((ws.root, ""), (ws.scope_root, f"{SCOPE}:")):
        for f in root.rglob("*.md"):
            rel = f.relative_to(root).as_posix()
            lens[prefix + rel] = [len(x) for x in f.read_text(encoding="utf-8").split("\n")]
    said = ws.transcript_text

    def line_len(path: str, n: int) -> int:
        if path.startswith("sessions/"):
            return len(said.get((path, n), ""))
        ls = lens.get(path, [])
        return ls[n - 1] if 0 < n <= len(ls) else 0

    return line_len


_BULLET = re.compile(r"^\s*(?:[-*+]\s+)?")


def unit_baseline(ws: MixedWorkspace) -> tuple[list[Chunk], np.ndarray | None]:
    """clawmem's own units of the workspace and of its scope (cited ``team:…``), with their
    vectors when every one is embedded: what the single-unit baselines search, with no second
    embedding of the same text (a unit is one message, bullet or paragraph)."""
    units: list[Chunk] = []
    blocks: list[np.ndarray] = []
    for root, prefix in ((ws.root, ""), (ws.scope_root, f"{SCOPE}:")):
        chunks, vecs = clawmem_chunks(root / ".memory" / "index.sqlite")
        units += [
            Chunk(len(units) + i, prefix + c.path, c.start_line, c.end_line, c.text)
            for i, c in enumerate(chunks)
        ]
        if vecs is not None:
            blocks.append(vecs)
    # Not every unit has its vector (vectors off, or pending): no dense baseline.
    return units, np.vstack(blocks) if len(blocks) == 2 else None


def line_counts(ws: MixedWorkspace) -> dict[str, int]:
    """How many lines of each kind the workspace, its scope and its transcripts hold."""
    counts: dict[str, int] = {}
    for root, prefix in ((ws.root, ""), (ws.scope_root, f"{SCOPE}:")):
        for f in sorted(root.rglob("*.md")):
            rel = f.relative_to(root).as_posix()
            if rel.startswith(".") or "/." in rel:
                continue
            for line in f.read_text(encoding="utf-8").split("\n"):
                if line.strip() and not line.lstrip().startswith("<!--"):
                    fact = "O" if "- O(" in line[:8] else "W" if "- W @" in line[:8] else None
                    k = unit_kind(prefix + rel, line, fact)
                    counts[k] = counts.get(k, 0) + 1
    counts["transcript"] = len(ws.transcript_text)
    return counts


def unit_kind(path: str, text: str, fact_kind: str | None, heading: str = "") -> str:
    """The kind of unit a hit (or a unit) is, from where it is and what it says."""
    if path.startswith(f"{SCOPE}:"):
        return "scope"
    if path.startswith("sessions/"):
        return "transcript"
    if path.startswith("memory/episodes/"):
        return "episode page"
    if path.startswith("bank/entities/"):
        return "entity page"
    if path.startswith("bank/"):
        return "opinion page"
    if fact_kind == "O":
        return "opinion"
    if fact_kind:
        return "fact"
    if path.startswith("memory/notes/"):
        return "memorybank note"
    if path == "MEMORY.md":
        return "core"
    body = text.lstrip()
    if body.startswith("#"):
        return "heading"
    if body.startswith(("- [ ]", "- [x]")):
        return "task"
    if "[[" in body:
        return "link"
    if "Evening talk" in heading or (body and not body.startswith(("-", "#"))):
        return "note"
    return "log"


class LineRRF(Searcher):
    """Reciprocal rank fusion (k = 60) of the two single-line baselines."""

    def __init__(self, bm25: BM25Searcher, dense: VectorSearcher, rrf_k: int = 60) -> None:
        super().__init__("unit-rrf", "RRF of those two (k = 60)")
        self.bm25, self.dense, self.rrf_k = bm25, dense, rrf_k

    def _search(self, query: str, *, k: int, today: date | None) -> list[Citation]:
        scores: dict[int, float] = {}
        for leg in (self.bm25.ranked(query, 100), self.dense.ranked(query, 100)):
            for rank, i in enumerate(leg, 1):
                scores[i] = scores.get(i, 0.0) + 1.0 / (self.rrf_k + rank)
        best = sorted(scores, key=lambda i: (-scores[i], i))[:k]
        return [cite(self.bm25.chunks[i]) for i in best]


# --------------------------------------------------------------------------- scoring
def _overlaps(cite: tuple[str, int, int], gold: list[list[dict]]) -> bool:
    return any(
        cite[0] == a["path"] and not (cite[2] < a["start"] or cite[1] > a["end"])
        for item in gold
        for a in item
    )


def score_row(cites: list[Citation], q: dict, line_len: LineLength) -> dict:
    row = {
        "kind": q["kind"],
        "category": q["category"],
        "unit_kind": q["unit_kind"],
        "answered": bool(cites),
    }
    if q["gold"]:
        row["r1"] = 1.0 if cites and _overlaps(cites[0], q["gold"]) else 0.0
        row["mrr"] = M.reciprocal_rank(cites, q["gold"])
        for b in BUDGETS:
            row[f"er@{b}"] = M.evidence_recall(cites, q["gold"], line_len, b)
    return row


def _cites(res: RecallResult) -> list[tuple[str, int, int]]:
    return [(h.scoped_path, h.start_line, h.end_line) for h in res.hits]


def _trust_row(number: int, q: dict, res: RecallResult) -> dict:
    """A question's first DEPTH hits without abstention: their features, relevance, whether each
    is evidence and its unit kind (the rows benchmarks/relevance.py fits and checks)."""
    return {
        "chat": number,
        "kind": "own" if q["kind"] == "answerable" else q["kind"],
        "category": q["category"],
        "unit_kind": q["unit_kind"],
        "hits": [
            {
                "features": h.features.to_dict() if h.features is not None else None,
                "relevance": h.relevance,
                "evidence": _overlaps((h.scoped_path, h.start_line, h.end_line), q["gold"]),
                "unit": unit_kind(h.scoped_path, h.text, h.kind, h.heading),
            }
            for h in res.hits[:DEPTH]
        ],
    }


def trust_rows(number: int, emb: Embedder | None, mode: str = "hybrid") -> list[dict]:
    """The relevance rows of one workspace's questions (for fitting on the tuning part)."""
    ws, mem = prepare(number, emb)
    rows = []
    for q in questions_for(ws, build_layout(PAIRS[number])):
        res = mem.recall(
            q["question"], k=DEPTH, mode=mode, today=ws.today, sync=False, min_relevance=0.0
        )
        rows.append(_trust_row(number, q, res))
    mem.close()
    return rows


def run_workspace(number: int, emb: Embedder | None) -> dict:
    ws, mem = prepare(number, emb)
    other = build_layout(PAIRS[number])
    questions = questions_for(ws, other)
    line_len = line_lengths(ws)
    units, vecs = unit_baseline(ws)
    counts = line_counts(ws)
    bm25 = BM25Searcher(units, "unit-bm25", "BM25 over single units (FTS5, any term)")
    dense = rrf = None
    if emb is not None and vecs is not None:
        dense = VectorSearcher(units, vecs, emb, "unit-dense", "dense over single units (cosine)")
        rrf = LineRRF(bm25, dense)
    per_system: dict[str, list[dict]] = {}
    trust: list[dict] = []
    log(f"mixed {number}: {len(questions)} questions, {len(units)} units")
    for q in questions:
        default = mem.recall(q["question"], k=EVAL_K, today=ws.today, sync=False)
        full = mem.recall(q["question"], k=EVAL_K, today=ws.today, sync=False, min_relevance=0.0)
        per_system.setdefault("clawmem-hybrid", []).append(score_row(_cites(default), q, line_len))
        per_system.setdefault("clawmem-hybrid-min0", []).append(
            score_row(_cites(full), q, line_len)
        )
        for s in (bm25, dense, rrf):
            if s is not None:
                cites = s.search(q["question"], k=EVAL_K, today=ws.today)
                per_system.setdefault(s.name, []).append(score_row(cites, q, line_len))
        trust.append(_trust_row(number, q, full))
    threshold = default_threshold(mem)
    status = mem.status()
    mem.close()
    return {
        "chat": number,
        "split": ws.split,
        "threshold": threshold,
        "units": status.chunks,
        "baseline_units": len(units),
        "unit_kinds": counts,
        "questions": {
            k: sum(1 for q in questions if q["kind"] == k)
            for k in ("answerable", "unanswerable", "near_miss")
        },
        "per_system": per_system,
        "trust": trust,
    }


# --------------------------------------------------------------------------- summaries
def summarise(rows: list[dict]) -> dict:
    ans = [r for r in rows if r["kind"] == "answerable"]
    out: dict = {
        "n": len(ans),
        "r1": M.mean(r["r1"] for r in ans),
        "mrr": M.mean(r["mrr"] for r in ans),
        **{f"er@{b}": M.mean(r[f"er@{b}"] for r in ans) for b in BUDGETS},
    }
    for kind in ("answerable", "near_miss", "unanswerable"):
        these = [r for r in rows if r["kind"] == kind]
        out[f"answered_{kind}"] = M.mean(1.0 if r["answered"] else 0.0 for r in these)
    return out


def by(rows: list[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r["kind"] == "answerable":
            groups.setdefault(str(r[key]), []).append(r)
    return {k: summarise(v) for k, v in sorted(groups.items())}


def best(row: dict) -> float:
    vals = [h["relevance"] for h in row["hits"] if h["relevance"] is not None]
    return max(vals) if vals else 0.0


def calibration(pairs: list[tuple[float, bool]], bins: tuple[float, ...] = CAL_BINS) -> dict:
    """Reliability bins (mean relevance against the share that is evidence) and the expected
    calibration error: the bins' gaps weighted by their hits."""
    out, gap = [], 0.0
    for lo, hi in zip(bins[:-1], bins[1:], strict=True):
        inside = [(p, e) for p, e in pairs if lo <= p < hi or (hi == bins[-1] and p == hi)]
        if not inside:
            out.append({"bin": [lo, hi], "n": 0, "predicted": None, "observed": None})
            continue
        pred = M.mean(p for p, _ in inside)
        obs = M.mean(1.0 if e else 0.0 for _, e in inside)
        gap += len(inside) * abs(pred - obs)
        out.append({"bin": [lo, hi], "n": len(inside), "predicted": pred, "observed": obs})
    return {"bins": out, "ece": gap / len(pairs) if pairs else None, "n": len(pairs)}


def trust_summary(rows: list[dict], threshold: float) -> dict:
    own = [best(r) for r in rows if r["kind"] == "own"]
    near = [best(r) for r in rows if r["kind"] == "near_miss"]
    other = [best(r) for r in rows if r["kind"] == "unanswerable"]
    pairs = [
        (h["relevance"], h["evidence"], r["kind"], h.get("unit"))
        for r in rows
        for h in r["hits"]
        if h["relevance"] is not None
    ]
    out: dict = {
        "threshold": threshold,
        "auroc_near_miss": auroc(own, near),
        "auroc_unanswerable": auroc(own, other),
        "calibration": calibration([(p, e) for p, e, _, _ in pairs]),
        "by_question_kind": {
            k: calibration([(p, e) for p, e, kk, _ in pairs if kk == k])
            for k in ("own", "near_miss", "unanswerable")
        },
        "by_unit_kind": {},
    }
    for u in sorted({u for *_, u in pairs if u}):
        out["by_unit_kind"][u] = calibration([(p, e) for p, e, _, uu in pairs if uu == u])
    return out


# --------------------------------------------------------------------------- REALTALK probe
def realtalk_probe(
    emb: Embedder | None, chats: tuple[int, ...] = tuple(range(1, 11)), mode: str = "hybrid"
) -> dict:
    """Each REALTALK chat's own questions and the next chat's with the names swapped."""
    from benchmarks.datasets.realtalk import build, chat_files, convert, foreign_of

    rows: list[dict] = []
    thresholds = {}
    for path in chat_files():
        chat = convert(path)
        if chat.number not in chats:
            continue
        mem = open_clawmem(build(chat), vectors=emb is not None, embedder=emb)
        index_clawmem(mem, f"realtalk-{chat.number}")
        near = realtalk_near_miss(load_chat(chat.number), load_chat(foreign_of(chat.number)))
        lens = {rel: [len(x) for x in text.split("\n")] for rel, text in chat.files.items()}

        def line_len(p: str, n: int, lens: dict[str, list[int]] = lens) -> int:
            ls = lens.get(p, [])
            return ls[n - 1] if 0 < n <= len(ls) else 0

        for kind, qs in (("own", chat.questions), ("near_miss", near)):
            for q in qs:
                res = mem.recall(
                    q["question"],
                    k=EVAL_K,
                    mode=mode,
                    today=chat.today,
                    sync=False,
                    min_relevance=0.0,
                )
                gold = gold_lines(q) if kind == "own" else set()
                row = {
                    "chat": chat.number,
                    "kind": kind,
                    "category": q.get("category"),
                    "question": q["question"] if kind == "near_miss" else None,
                    "hits": [
                        {
                            "features": h.features.to_dict() if h.features else None,
                            "relevance": h.relevance,
                            "evidence": is_evidence(h, gold),
                        }
                        for h in res.hits[:DEPTH]
                    ],
                }
                if kind == "own":
                    cites = _cites(res)
                    row["r1"] = 1.0 if cites and _overlaps(cites[0], q["gold"]) else 0.0
                    row["mrr"] = M.reciprocal_rank(cites, q["gold"])
                    row["er@2000"] = M.evidence_recall(cites, q["gold"], line_len, 2000)
                rows.append(row)
        thresholds[chat.number] = default_threshold(mem)
        mem.close()
        log(f"realtalk near-miss probe: chat {chat.number} ({len(near)} near misses)")
    return {"rows": rows, "thresholds": thresholds}


def probe_summary(rows: list[dict], threshold: float) -> dict:
    own = [best(r) for r in rows if r["kind"] == "own"]
    near = [best(r) for r in rows if r["kind"] == "near_miss"]
    own3 = [best(r) for r in rows if r["kind"] == "own" and r["category"] == 3]

    def share(xs: list[float]) -> float | None:
        return M.mean(1.0 if b >= threshold else 0.0 for b in xs) if xs else None

    out: dict = {
        "own_n": len(own),
        "near_n": len(near),
        "own_answered": share(own),
        "near_answered": share(near),
        "own_answered_cat3": share(own3),
        "auroc": auroc(own, near),
    }
    for label, keep in (("own", lambda r: True), ("cat3", lambda r: r["category"] == 3)):
        these = [r for r in rows if r["kind"] == "own" and keep(r) and "r1" in r]
        out[f"{label}_n"] = len(these)
        for m in ("r1", "mrr", "er@2000"):
            out[f"{label}_{m}"] = M.mean(r[m] for r in these) if these else None
    return out


# --------------------------------------------------------------------------- the run
def run_mixed(
    *, vectors: bool, chats: tuple[int, ...] = TUNE + HELD_OUT, probe: bool = True
) -> dict:
    emb, why = embedder_status() if vectors else (None, "vectors disabled (--no-vectors)")
    spaces = [run_workspace(n, emb) for n in chats]
    out: dict = {
        "vectors": emb is not None,
        "vectors_off_reason": None if emb is not None else why,
        "embedder": emb.identity.key() if emb is not None else None,
        "workspaces": [
            {k: v for k, v in s.items() if k not in ("per_system", "trust")} for s in spaces
        ],
        "splits": {},
    }
    threshold = spaces[0]["threshold"] if spaces else 0.0
    for split, keep in (("tune", TUNE), ("held_out", HELD_OUT)):
        these = [s for s in spaces if s["chat"] in keep]
        if not these:
            continue
        systems = {}
        for name in these[0]["per_system"]:
            rows = [r for s in these for r in s["per_system"][name]]
            systems[name] = {
                "all": summarise(rows),
                "by_unit_kind": by(rows, "unit_kind"),
                "by_category": by(rows, "category"),
            }
        out["splits"][split] = {
            "systems": systems,
            "trust": trust_summary([r for s in these for r in s["trust"]], threshold),
        }
    out["trust_rows"] = [r for s in spaces for r in s["trust"]]
    if probe:
        p = realtalk_probe(emb)
        t = next(iter(p["thresholds"].values()), threshold)
        out["realtalk_probe"] = {
            "threshold": t,
            "tune": probe_summary([r for r in p["rows"] if r["chat"] <= 5], t),
            "held_out": probe_summary([r for r in p["rows"] if r["chat"] > 5], t),
            "examples": [r["question"] for r in p["rows"] if r["kind"] == "near_miss"][:3],
        }
        out["probe_rows"] = p["rows"]
    return out


# --------------------------------------------------------------------------- the report
def _f(x: float | None, nd: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


LABELS = {
    "clawmem-hybrid": "clawmem hybrid (as configured)",
    "clawmem-hybrid-min0": "clawmem hybrid (min_relevance 0)",
    "unit-bm25": "BM25 over single units",
    "unit-dense": "dense over single units (same embedder, same vectors)",
    "unit-rrf": "RRF of those two (k = 60)",
}


def section(r: dict) -> tuple[str, list[dict]]:
    """The report's section for a run's results, and its targets."""
    ran_all = ", ".join("ws-{:02d}".format(w["chat"]) for w in r["workspaces"])
    lines = [
        HEADING,
        "",
        "Where users live (issue 45): `benchmarks/suites/mixed.py` and `benchmarks/datasets/mixed.py` build "
        "workspaces by code from data no one here wrote, each one REALTALK chat whose sessions are "
        "dealt in turn to daily-log bullets, a narrative note with headings, `## Retain` facts "
        "(W, or O for a liking), a task list, wikilinked bullets, a Claude Code transcript in a "
        "`[sessions]` folder, and a read scope (`team:`), plus two MemoryBank users' companion chats "
        "as narrative notes (a third in the scope); the real `clawmem reflect` then writes the entity, "
        "opinion and episode pages. Answerable questions are the chat's REALTALK questions, gold on "
        "the lines their evidence was placed on (a fact's copies on reflect's pages and a transcript "
        "line's quotes on its episode page count too); unanswerable ones are the other workspace's "
        "questions; near misses are another chat's questions about its two people with this "
        "workspace's names swapped in. Tuning part: chats 1 and 3; held out: chats 7 and 8 "
        f"(this run: {ran_all}). "
        "R@1: the first hit is evidence; ER@2k: evidence recall within 2,000 characters; answered: "
        "clawmem returned hits (its default relevance threshold); the baselines never abstain.",
        "",
    ]
    rows = []
    for w in r["workspaces"]:
        q = w["questions"]
        rows.append(
            [
                f"ws-{w['chat']:02d}",
                w["split"].replace("_", " "),
                str(w["units"]),
                ", ".join(f"{k} {v}" for k, v in sorted(w["unit_kinds"].items())),
                str(q["answerable"]),
                str(q["unanswerable"]),
                str(q["near_miss"]),
            ]
        )
    lines += [
        _table(
            [
                "workspace",
                "part",
                "clawmem units",
                "lines by kind",
                "answerable",
                "unanswerable",
                "near miss",
            ],
            rows,
        ),
        "",
    ]
    targets: list[dict] = []
    for split in ("held_out", "tune"):
        s = r["splits"].get(split)
        if not s:
            continue
        ran = ", ".join(str(w["chat"]) for w in r["workspaces"] if w["split"] == split)
        title = ("Held-out" if split == "held_out" else "Tuning") + f" part (chats {ran})"
        rows = []
        for name, m in s["systems"].items():
            a = m["all"]
            rows.append(
                [
                    LABELS.get(name, name),
                    _f(a["r1"]),
                    _f(a["mrr"]),
                    _f(a["er@2000"]),
                    _f(a["er@4000"]),
                    _f(a["answered_answerable"]),
                    _f(a["answered_near_miss"]),
                    _f(a["answered_unanswerable"]),
                ]
            )
        lines += [
            f"### {title}",
            "",
            _table(
                [
                    "system",
                    "R@1",
                    "MRR",
                    "ER@2k",
                    "ER@4k",
                    "answerable answered",
                    "near miss answered",
                    "unanswerable answered",
                ],
                rows,
            ),
            "",
        ]
        names = list(s["systems"])
        kinds = sorted({k for m in s["systems"].values() for k in m["by_unit_kind"]})
        rows = []
        for k in kinds:
            row = [k, str(s["systems"][names[0]]["by_unit_kind"].get(k, {}).get("n", 0))]
            for name in names:
                m = s["systems"][name]["by_unit_kind"].get(k)
                row.append(f"{_f(m['r1'], 2)} / {_f(m['er@2000'], 2)}" if m else "-")
            rows.append(row)
        lines += [
            "By the unit kind the evidence was placed in (R@1 / ER@2k):",
            "",
            _table(["unit kind", "n", *(LABELS.get(n, n) for n in names)], rows),
            "",
        ]
        rows = []
        for c in sorted({k for m in s["systems"].values() for k in m["by_category"]}):
            row = [c, str(s["systems"][names[0]]["by_category"].get(c, {}).get("n", 0))]
            for name in names:
                m = s["systems"][name]["by_category"].get(c)
                row.append(f"{_f(m['r1'], 2)} / {_f(m['er@2000'], 2)}" if m else "-")
            rows.append(row)
        lines += [
            "By REALTALK category (3: inference; R@1 / ER@2k):",
            "",
            _table(["category", "n", *(LABELS.get(n, n) for n in names)], rows),
            "",
        ]
        t = s["trust"]
        lines += [
            f"Relevance (threshold {t['threshold']:g}): AUROC of the best relevance, answerable "
            f"against near-miss questions {_f(t['auroc_near_miss'])}, against unanswerable ones "
            f"{_f(t['auroc_unanswerable'])}. Calibration of every hit among the first {DEPTH} "
            "(no abstention), by question kind and by the kind of unit hit: ECE is the mean gap "
            "between relevance and the share of evidence, weighted by hits.",
            "",
        ]
        rows = [["all hits", str(t["calibration"]["n"]), _f(t["calibration"]["ece"])]]
        for group in ("by_question_kind", "by_unit_kind"):
            for k, c in t[group].items():
                rows.append([k, str(c["n"]), _f(c["ece"])])
        lines += [_table(["hits of", "n", "ECE"], rows), ""]
        rows = [
            [
                f"{b['bin'][0]:.1f}-{b['bin'][1]:.1f}",
                str(b["n"]),
                _f(b["predicted"]),
                _f(b["observed"]),
            ]
            for b in t["calibration"]["bins"]
        ]
        lines += [
            _table(["relevance", "hits", "predicted", "observed"], rows),
            "",
        ]
        if split == "held_out":
            a = s["systems"]["clawmem-hybrid"]["all"]
            targets += [
                {
                    "target": "mixed workspaces, held out: R@1 ≥ 0.80",
                    "value": _f(a["r1"]),
                    "met": a["r1"] >= 0.80,
                    "why": "see benchmarks/analysis.md (mixed workspaces)",
                },
                {
                    "target": "mixed workspaces, held out: ER@2k ≥ 0.90",
                    "value": _f(a["er@2000"]),
                    "met": a["er@2000"] >= 0.90,
                    "why": "see benchmarks/analysis.md (mixed workspaces)",
                },
            ]
    p = r.get("realtalk_probe")
    if p:
        lines += [
            "### Near misses on REALTALK",
            "",
            "Each REALTALK chat (its workspace of `benchmarks.realtalk`) is asked its own questions "
            "and the next chat's questions about that chat's two people with their names replaced "
            "by this chat's (e.g. " + "; ".join(f"“{x}”" for x in p["examples"][:2]) + "): they "
            f"name the memory's own people and ask about events that are not there. Threshold "
            f"{p['threshold']:g} (the default).",
            "",
        ]
        rows = []
        for split, title in (("held_out", "held out (chats 6-10)"), ("tune", "tuning (1-5)")):
            m = p[split]
            for label, name in (("own", "all own questions"), ("cat3", "category 3 (inference)")):
                rows.append(
                    [
                        title,
                        name,
                        str(m[f"{label}_n"]),
                        _f(m[f"{label}_r1"]),
                        _f(m[f"{label}_mrr"]),
                        _f(m[f"{label}_er@2000"]),
                    ]
                )
        cat3 = _table(["chats", "questions", "n", "R@1", "MRR", "ER@2k"], rows)
        rows = []
        for split, title in (("held_out", "held out (chats 6-10)"), ("tune", "tuning (1-5)")):
            m = p[split]
            rows.append(
                [
                    title,
                    str(m["own_n"]),
                    str(m["near_n"]),
                    _f(m["own_answered"]),
                    _f(m["own_answered_cat3"]),
                    _f(m["near_answered"]),
                    _f(m["auroc"]),
                ]
            )
        lines += [
            _table(
                [
                    "chats",
                    "own",
                    "near misses",
                    "own answered",
                    "own answered (category 3)",
                    "near misses answered",
                    "AUROC own vs near miss",
                ],
                rows,
            ),
            "",
        ]
        lines += [
            "clawmem hybrid (no abstention) on the chats' own questions, the inference questions "
            "(REALTALK's category 3: “Does Nicolas have a humanities or technical background?”) "
            "apart; the baselines' figures by category are in the REALTALK section.",
            "",
            cat3,
            "",
        ]
        h = p["held_out"]
        targets += [
            {
                "target": "REALTALK near misses answered ≤ 0.40 (held out)",
                "value": _f(h["near_answered"]),
                "met": (h["near_answered"] or 0) <= 0.40,
                "why": "see benchmarks/analysis.md (near misses)",
            },
            {
                "target": "REALTALK own questions answered ≥ 0.97 (held out, with near misses)",
                "value": _f(h["own_answered"]),
                "met": (h["own_answered"] or 0) >= 0.97,
                "why": "see benchmarks/analysis.md (near misses)",
            },
            {
                "target": "REALTALK AUROC own vs near miss ≥ 0.85 (held out)",
                "value": _f(h["auroc"]),
                "met": (h["auroc"] or 0) >= 0.85,
                "why": "see benchmarks/analysis.md (near misses)",
            },
        ]
    if targets:
        rows = [[t["target"], t["value"], "met" if t["met"] else "**missed**"] for t in targets]
        lines += ["Issue 45's targets here:", "", _table(["target", "this run", ""], rows), ""]
    return "\n".join(lines).rstrip() + "\n", targets


def run(settings: Settings) -> dict:
    """``python -m benchmarks --only mixed``: every workspace and the REALTALK probe, whatever
    the mode (about 2,000 questions; the workspaces' indexes are kept between runs)."""
    return run_mixed(vectors=settings.vectors)


def write_section(section_text: str, out: Path) -> None:
    """Put the section into the report ``out``: in place of its old one, else before the closing
    analysis (``python -m benchmarks`` keeps it when a run did not measure this part)."""
    text = out.read_text(encoding="utf-8") if out.is_file() else ""
    if HEADING + "\n" not in text and "\n## Analysis\n" in text:
        at = text.index("\n## Analysis\n") + 1
        out.write_text(text[:at] + section_text.rstrip("\n") + "\n\n" + text[at:], "utf-8")
    else:
        replace_section(out, HEADING, section_text)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m benchmarks.suites.mixed")
    ap.add_argument("--chats", help="comma-separated workspace chats (default 1,3,7,8)")
    ap.add_argument("--no-probe", action="store_true", help="skip the REALTALK near-miss probe")
    ap.add_argument("--no-vectors", action="store_true")
    ap.add_argument("--json", default=str(WORK / "mixed.json"), help="raw results")
    ap.add_argument(
        "--out",
        default=str(REPO / "docs" / "benchmarks.md"),
        help="the report whose section this run writes ('-': print it)",
    )
    ap.add_argument(
        "--render", metavar="RESULTS_JSON", help="only write the section from saved results"
    )
    args = ap.parse_args(argv)
    if args.render:
        res = json.loads(Path(args.render).read_text(encoding="utf-8"))
        res = res.get(PART, res)  # a whole run's results, or this suite's own
    else:
        chats = tuple(int(x) for x in args.chats.split(",")) if args.chats else TUNE + HELD_OUT
        res = run_mixed(vectors=not args.no_vectors, chats=chats, probe=not args.no_probe)
        save_results("mixed", Path(args.json), res)
    text, _ = section(res)
    if args.out == "-":
        print(text)
    else:
        write_section(text, Path(args.out))
        log(f"mixed: section written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
