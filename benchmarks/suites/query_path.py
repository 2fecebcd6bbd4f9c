"""The NumPy query path against llama.cpp, on every question of every evaluation set (issue 29).

    python -m benchmarks.suites.query_path [--docs 300] [--cold-runs 5] [--out docs/benchmarks.md]

A cold process that finds no embedder ready embeds its query with ``embedders/query_path.py``
(its own unigram tokenizer and a NumPy BERT on the GGUF's weights) instead of loading llama.cpp.
Its vectors must be llama.cpp's: for each text, the token ids (windows included) must be
identical and the cosine at least ``MIN_COSINE``. Checked on:

* every question: REALTALK (all chats), the agent-memory sets in ``benchmarks/questions``
  (agent_memory, authored, multilingual queries), MemoryBank's probing questions, SciFact's
  queries; embedded as queries (``query: `` prefix);
* a sample of documents (``passage: ``): REALTALK messages, the multilingual notes, SciFact
  abstracts (the long ones run through the windows of texts past the model's context).

Any text where the two differ is a failure (exit status 1), not a figure. Also measured: ms per
query each way (in-process, model loaded / cache open), and a cold process's first query vector
(``python -c``: import, open, embed) each way, with peak RSS. Writes ``WORK/query_path.json``
and the ``## Cold start: the NumPy query path`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

# NumPy's BLAS on one thread, as in the cold process the query path serves (set before anything
# here imports NumPy: benchmarks.common does). On a loaded machine two threads spin-waiting made
# each forward pass 3-10x slower.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from benchmarks.common import EVAL, REPO, WORK, log, median, save_results, show_section  # noqa: E402

if TYPE_CHECKING:
    from benchmarks.datasets.realtalk import Chat
    from clawmem.embedders.llama import LlamaEmbedder
    from clawmem.embedders.query_path import QueryPathEmbedder

HEADING = "## Cold start: the NumPy query path"
SAVED = WORK / "query_path.json"
QUESTIONS = REPO / "benchmarks" / "questions"
# The default model's layers are 4-bit: llama.cpp rounds each matrix product's input to int8
# blocks, which the NumPy path imitates (numpy_bert._q8_0) but not bit for bit (0.99987-1.0 on
# tests/test_query_path.py's texts); with float32 layers every text reached 0.9999.
MIN_COSINE = 0.9998
COLD_QUERY = "what did we decide about the deployment schedule?"

_COLD = (
    "import json, resource, sys, time\n"
    "t0 = time.perf_counter()\n"
    "from pathlib import Path\n"
    "from clawmem.embedders.model_identity import identity_of\n"
    "path, way = Path(sys.argv[1]), sys.argv[2]\n"
    "ident = identity_of(path)\n"
    "if way == 'numpy':\n"
    "    from clawmem.embedders.query_path import QueryPathEmbedder\n"
    "    emb = QueryPathEmbedder.open(path, ident)\n"
    "else:\n"
    "    from clawmem.embedders.llama import LlamaEmbedder\n"
    "    emb = LlamaEmbedder(path)\n"
    "v = emb.embed_query(sys.argv[3])\n"
    "wall = time.perf_counter() - t0\n"
    "ru = resource.getrusage(resource.RUSAGE_SELF)\n"
    # VmHWM, not ru_maxrss: that one keeps the peak of the (large) process this one was forked
    # from, across the exec.
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "print(json.dumps({'wall': wall, 'cpu': ru.ru_utime + ru.ru_stime,"
    " 'peak_mb': int(hwm) / 1024}))\n"
    "sys.stdout.flush()\n"
    "import os; os._exit(0)\n"
)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def texts(n_docs: int) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(questions by set, documents by set)."""
    from benchmarks.suites.realtalk import chat_files, convert

    questions: dict[str, list[str]] = {}
    docs: dict[str, list[str]] = {}
    chats = [convert(p) for p in chat_files()]
    questions["REALTALK"] = [q["question"] for c in chats for q in c.questions]
    messages = [m for c in chats for m in _messages(c)]
    for name in ("agent_memory", "authored"):
        questions[name] = [q["question"] for q in _jsonl(QUESTIONS / f"{name}.jsonl")]
    multi = _jsonl(QUESTIONS / "multilingual.jsonl")
    questions["multilingual"] = [q["query"] for q in multi]
    probing = _jsonl(EVAL / "memorybank" / "probing_questions_en.jsonl")
    questions["MemoryBank"] = [q for row in probing for qs in row.values() for q in qs]
    questions["SciFact"] = [q["text"] for q in _jsonl(EVAL / "scifact" / "queries.jsonl")]

    rng = random.Random(29)
    per = max(1, n_docs // 3)
    docs["REALTALK messages"] = rng.sample(messages, min(per, len(messages)))
    docs["multilingual notes"] = sorted({q["note"] for q in multi})[:per]
    corpus = _jsonl(EVAL / "scifact" / "corpus.jsonl")
    docs["SciFact abstracts"] = [
        (d.get("title", "") + " " + d.get("text", "")).strip()
        for d in rng.sample(corpus, min(per, len(corpus)))
    ]
    return questions, docs


def _messages(chat: Chat) -> list[str]:
    out = []
    for m in chat.messages:
        text = m.get("text") if isinstance(m, dict) else getattr(m, "text", None)
        if isinstance(text, str) and text.strip():
            out.append(text)
    return out


def check(
    groups: dict[str, list[str]], llama: LlamaEmbedder, fast: QueryPathEmbedder, *, query: bool
) -> dict:
    """Per set: texts, id mismatches, min cosine, ms per text each way."""
    import numpy as np

    prefix = llama._query_prefix if query else llama._document_prefix
    out = {}
    for name, items in groups.items():
        worst, t_llama, t_fast, windowed = 1.0, 0.0, 0.0, 0
        bad: list[str] = []
        for n, text in enumerate(items):
            if n and n % 250 == 0:
                log(f"query_path: {name}: {n}/{len(items)}, {len(bad)} bad, min {worst:.7f}")
            want, _ = llama._tokenize(llama._prepare(prefix + text))
            got = fast.windows(text, query=query)
            windowed += len(want) > 1
            if want != got:
                bad.append(text[:80])
            t0 = time.perf_counter()
            a = llama.embed_query(text) if query else llama.embed_documents([text]).vectors[0]
            t1 = time.perf_counter()
            b = fast.embed_texts([text], query=query)[0]
            t2 = time.perf_counter()
            t_llama += t1 - t0
            t_fast += t2 - t1
            cos = float(np.dot(np.asarray(a, np.float64), np.asarray(b, np.float64)))
            worst = min(worst, cos)
            if cos < MIN_COSINE:
                bad.append(f"cosine {cos:.6f}: {text[:80]}")
        out[name] = {
            "texts": len(items),
            "windowed": windowed,
            "mismatches": len(bad),
            "examples": bad[:5],
            "min_cosine": worst,
            "ms_llama": 1000 * t_llama / max(1, len(items)),
            "ms_numpy": 1000 * t_fast / max(1, len(items)),
        }
        log(f"query_path: {name}: {len(items)} texts, {len(bad)} bad, min cosine {worst:.7f}")
    return out


def cold(model: Path, runs: int, query: str) -> dict:
    """A fresh process's first query vector each way, alternating: wall, CPU and peak RSS."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out: dict[str, list[dict]] = {"numpy": [], "llama.cpp": []}
    for _ in range(runs):
        for way in out:
            arg = "numpy" if way == "numpy" else "llama"
            r = subprocess.run(
                [sys.executable, "-c", _COLD, str(model), arg, query],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            out[way].append(json.loads(r.stdout.strip().splitlines()[-1]))
    return {
        way: {
            "median_s": median([r["wall"] for r in rs]),
            "walls": [r["wall"] for r in rs],
            "cpu_s": median([r["cpu"] for r in rs]),
            "peak_mb": max(r["peak_mb"] for r in rs),
        }
        for way, rs in out.items()
    }


def run(n_docs: int, cold_runs: int) -> dict:
    from clawmem.embedders.default import default_model_path
    from clawmem.embedders.llama import LlamaEmbedder
    from clawmem.embedders.model_identity import inspect_gguf
    from clawmem.embedders.query_path import QueryPathEmbedder, ensure

    model = default_model_path()
    _, sha = inspect_gguf(model)
    t0 = time.perf_counter()
    why = ensure(model, sha)
    built = time.perf_counter() - t0
    if why:
        raise SystemExit(f"query_path: the default model is not supported: {why}")
    llama = LlamaEmbedder(model)
    fast = QueryPathEmbedder.open(model, llama.identity)
    if isinstance(fast, str):
        raise SystemExit(f"query_path: {fast}")
    questions, docs = texts(n_docs)
    out: dict = {"load_before": os.getloadavg(), "cache_ready_s": built}
    out["questions"] = check(questions, llama, fast, query=True)
    out["documents"] = check(docs, llama, fast, query=False)
    llama.close()
    log(f"query_path: cold processes, {cold_runs} each way")
    out["cold"] = cold(model, cold_runs, COLD_QUERY)
    out["load_after"] = os.getloadavg()
    return out


def render(d: dict) -> str:
    la, lb = d["load_before"], d["load_after"]
    lines = [
        HEADING,
        "",
        "A cold process whose query finds no watcher and no resident embedder ready embeds it "
        "with `embedders/query_path.py` (a unigram tokenizer over a SQLite vocabulary, a NumPy "
        "BERT on the GGUF's memory-mapped weights) instead of loading llama.cpp "
        "(`python -m benchmarks.suites.query_path`). Checked against llama.cpp on every question of "
        "every evaluation set and a sample of documents: identical token ids (windows "
        f"included) and cosine ≥ {MIN_COSINE} required of every text. Load average "
        f"{la[0]:.1f} before, {lb[0]:.1f} after (2 cores shared with other work).",
        "",
        "| texts | embedded as | count | over 512 tokens | id or cosine failures | min cosine "
        "| ms each, llama.cpp | ms each, NumPy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, label in (("questions", "query"), ("documents", "passage")):
        for name, r in d[kind].items():
            lines.append(
                f"| {name} | {label} | {r['texts']} | {r['windowed']} | {r['mismatches']} | "
                f"{r['min_cosine']:.7f} | {r['ms_llama']:.1f} | {r['ms_numpy']:.1f} |"
            )
    c = d["cold"]
    lines += [
        "",
        "A fresh process's first query vector (import, open, embed; median of "
        f"{len(c['numpy']['walls'])}, alternating):",
        "",
        "| way | wall (median, range) | CPU | peak RSS |",
        "|---|---|---|---|",
    ]
    for way in ("numpy", "llama.cpp"):
        r = c[way]
        lines.append(
            f"| {'NumPy query path' if way == 'numpy' else 'llama.cpp (model load)'} | "
            f"{r['median_s']:.2f} s ({min(r['walls']):.2f}-{max(r['walls']):.2f}) | "
            f"{r['cpu_s']:.2f} s | {r['peak_mb']:.0f} MB |"
        )
    lines += [
        "",
        f"Building the cache from the GGUF (once per model file, off any query's path): "
        f"{d['cache_ready_s']:.1f} s{' (it was there already)' if d['cache_ready_s'] < 0.5 else ''}.",
    ]
    return "\n".join(lines) + "\n"


def failures(d: dict) -> int:
    return sum(r["mismatches"] for kind in ("questions", "documents") for r in d[kind].values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.suites.query_path", description=__doc__)
    ap.add_argument("--docs", type=int, default=300, help="documents sampled (three sets)")
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"), help="'-' for none")
    ap.add_argument("--render", help="re-render from a saved JSON, no measurements")
    ap.add_argument("--cold-only", action="store_true", help="measure the cold processes again")
    args = ap.parse_args(argv)
    if args.render:
        data = json.loads(Path(args.render).read_text())
    elif args.cold_only:  # the checks of a saved run kept, the cold processes measured again
        from clawmem.embedders.default import default_model_path

        data = json.loads(SAVED.read_text())
        data["load_before"] = os.getloadavg()
        data["cold"] = cold(default_model_path(), args.cold_runs, COLD_QUERY)
        data["load_after"] = os.getloadavg()
        SAVED.write_text(json.dumps(data, indent=1))
    else:
        data = run(args.docs, args.cold_runs)
        save_results("query_path", SAVED, data)
    show_section("query_path", render(data), args.out, HEADING)
    bad = failures(data)
    if bad:
        log(f"query_path: {bad} text(s) differ from llama.cpp")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
