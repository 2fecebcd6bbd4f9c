"""Turning the evaluation data into clawmem workspaces (deterministically: same input, same bytes).

* ``agentmem``: ``fixtures/workspace/`` copied as is, plus the MemoryBank daily chat logs of 15
  users converted to ``memory/<User>/YYYY-MM-DD.md`` (one namespace per user, one workspace).
* ``scifact``: one Markdown file per abstract, ``memory/scifact/<doc-id>.md``, title as
  ``# heading``.
"""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from collections.abc import Iterable
from pathlib import Path

from benchmarks.common import EVAL, REPO

FIXTURE = REPO / "fixtures" / "workspace"
MEMORYBANK = EVAL / "memorybank" / "memory_bank_en.json"
SCIFACT = EVAL / "scifact"


def user_slug(name: str) -> str:
    return "-".join(name.split())


def memorybank_files() -> dict[str, str]:
    """relpath -> Markdown text of every MemoryBank daily log."""
    data = json.loads(MEMORYBANK.read_text(encoding="utf-8"))
    files: dict[str, str] = {}
    for raw_user, entry in data.items():
        name = (entry.get("name") or raw_user).strip()
        slug = user_slug(name)
        for day, exchanges in sorted(entry["history"].items()):
            lines = [f"# {name}: {day}", "", f"Chat log with {name}, day {day}.", ""]
            for ex in exchanges:
                q = " ".join(ex["query"].split())
                r = " ".join(ex["response"].split())
                lines.append(f"{name}: {q}")
                lines.append(f"Assistant: {r}")
                lines.append("")
            files[f"memory/{slug}/{day}.md"] = "\n".join(lines).rstrip("\n") + "\n"
    return files


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")


def agentmem_files() -> dict[str, str]:
    files = {}
    for p in sorted(FIXTURE.rglob("*.md")):
        files[p.relative_to(FIXTURE).as_posix()] = p.read_text(encoding="utf-8")
    files.update(memorybank_files())
    return files


def build_agentmem(root: Path) -> Path:
    """Create or refresh the agent-memory workspace at ``root`` (files rewritten only if changed,
    so an existing index stays valid and its vectors are reused)."""
    return fill(root, agentmem_files())


def fill(root: Path, files: dict[str, str]) -> Path:
    """Make ``root`` hold exactly ``files`` (path -> text): Markdown files not among them are
    removed, and files are rewritten only if changed, so an existing index stays valid."""
    root.mkdir(parents=True, exist_ok=True)
    _remove_strays(root, files)
    write_files(root, files)
    return root


def _remove_strays(root: Path, files: dict[str, str]) -> None:
    for p in list(root.rglob("*.md")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        if rel not in files:
            p.unlink()


# --------------------------------------------------------------------------- SciFact
# SciFact: the corpus (id -> (title, abstract)), the queries (id -> text), and their relevant
# documents (query id -> document id -> grade).
Corpus = dict[str, tuple[str, str]]
Qrels = dict[str, dict[str, int]]


def load_scifact(split: str = "test") -> tuple[Corpus, dict[str, str], Qrels]:
    corpus: Corpus = {}
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[str(d["_id"])] = (d.get("title") or "", d.get("text") or "")
    queries: dict[str, str] = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            queries[str(d["_id"])] = d["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(SCIFACT / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    queries = {q: queries[q] for q in qrels}
    return corpus, queries, qrels


def scifact_doc_path(doc_id: str) -> str:
    return f"memory/scifact/{doc_id}.md"


def scifact_markdown(title: str, text: str) -> str:
    """Title as a heading, the abstract as one paragraph hard-wrapped at 100 characters (as the
    fixture notes are). Unwrapped, an abstract is one line of up to 10,000 characters; one of
    exactly 1,600 characters (the default chunk cap) makes clawmem's chunker loop forever (a core
    bug, reported), so wrapping also keeps the benchmark runnable."""
    body = textwrap.fill(
        " ".join(text.split()), width=100, break_long_words=False, break_on_hyphens=False
    )
    return f"# {' '.join(title.split())}\n\n{body}\n"


def scifact_subset(
    corpus: Corpus,
    queries: dict[str, str],
    qrels: Qrels,
    *,
    n_queries: int | None,
    n_docs: int | None,
    seed: int = 7,
) -> tuple[list[str], list[str]]:
    """(doc ids, query ids) for a run. ``None`` means all. A subset keeps the chosen queries'
    relevant documents and fills up to ``n_docs`` with a seeded random sample of the rest."""
    qids = sorted(queries, key=lambda q: int(q) if q.isdigit() else q)
    if n_queries is not None and n_queries < len(qids):
        qids = sorted(random.Random(seed).sample(qids, n_queries), key=lambda q: int(q))
    if n_docs is None:
        return sorted(corpus), qids
    rel = sorted({d for q in qids for d in qrels[q] if d in corpus})
    rest = sorted(set(corpus) - set(rel))
    fill = random.Random(seed + 1).sample(rest, max(0, n_docs - len(rel)))
    return sorted(rel + fill), qids


def build_scifact(root: Path, corpus: Corpus, doc_ids: Iterable[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    files = {scifact_doc_path(d): scifact_markdown(*corpus[d]) for d in doc_ids}
    _remove_strays(root, files)
    write_files(root, files)
    return root


def fresh_copy(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".memory"))
    return dst
