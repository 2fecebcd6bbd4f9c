"""Speed, size and memory on seeded synthetic workspaces.

For each size (chunks): generate the workspace, then
1. lexical full index in a fresh process (measured at full scale): seconds, chunks/s, peak RSS;
2. raw embedder throughput on the same units (clawmem's exact embed texts): all of them where
   ``real_embed`` is set, else a seeded sample (per-unit time → an *estimate* for the rest); the
   single-sequence baseline on part of those texts, and the batched embedder again on exactly them;
3. full index with vectors in a fresh process: with the real model where ``real_embed`` is set
   (overhead = index time / raw embedding time − 1, both measured in this run), else with the stub
   embedder (real vectors of the sample, reused with noise, at no model cost: it measures
   everything except the model), whose total is reported as pipeline + estimated embedding;
4. database bytes per chunk against raw Markdown bytes + float32 vectors;
5. incremental sync after appending a section to one daily log (real model for its new chunks),
   and the no-change sync (what a pre-commit hook pays);
6. in-process recall latency p50/p95 for lexical, vector and hybrid (with and without the
   per-recall sync check), and wall time of the ``clawmem recall`` command from a cold process;
7. QMD's index time, database size and cold ``search`` latency, when installed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmarks.common import REPO, WORK, embedder_status, log, median, percentile
from benchmarks.datasets.synth import generate, queries

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

CLI_REPEATS = 5
N_QUERIES = 40


def child(args: dict, timeout: float = 6 * 3600) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run(
        [sys.executable, "-m", "benchmarks.suites.child", json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
    )
    if res.returncode != 0:
        raise RuntimeError(f"child {args['op']} failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def pending_texts(root: Path) -> list[str]:
    """The exact texts clawmem embeds for this workspace (units of a lexical-only index)."""
    from clawmem.store.index import Index

    idx = Index.open(root / ".memory" / "index.sqlite", readonly=True)
    try:
        n = idx.pending_count()
        return [r[1] for r in idx.pending(n)]
    finally:
        idx.close()


def raw_embed(emb: Embedder, texts: list[str], batch: int) -> tuple[float, np.ndarray]:
    """Seconds for the model alone to embed ``texts`` in clawmem's batch size, and the vectors."""
    vecs: list[np.ndarray] = []
    t0 = time.perf_counter()
    for i in range(0, len(texts), batch):
        res = emb.embed_documents(texts[i : i + batch])
        vecs.extend(
            v if v is not None else np.zeros(emb.identity.dims, np.float32) for v in res.vectors
        )
    return time.perf_counter() - t0, np.stack(vecs).astype(np.float32)


def raw_single(emb: Embedder, texts: list[str]) -> dict:
    """The model one sequence per decode (no packing, no lanes): the baseline that clawmem's
    batched indexing is measured against in the same run."""
    t0 = time.perf_counter()
    for t in texts:
        emb.embed_documents([t])
    s = time.perf_counter() - t0
    return {"units": len(texts), "seconds": s, "per_unit_s": s / len(texts)}


def freshness_check(mem: Memory, n: int = 15) -> dict:
    """What every recall pays before ranking when nothing changed: the lazy sync's comparison of
    the workspace with the index, and the staleness check (``Indexer.sync_for_read`` +
    ``stale_files``), p50 over ``n`` runs; with the CPU time, less sensitive to load."""
    ix = mem.indexer
    walls, cpus = [], []
    files = 0
    for _ in range(n):
        notes: list[str] = []
        t0, c0 = time.perf_counter(), time.process_time()
        sc, idx = ix.sync_for_read(notes)
        stale = ix.stale_files(sc, idx) if idx is not None else None
        if idx is not None:
            idx.close()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    fresh_by = ix.freshness[0]
    # The floor of any full stat pass: one os.stat per file, nothing else.
    paths = [str(mem.root / f.relpath) for f in ix.scan().files]
    files = len(paths)
    t0 = time.process_time()
    for p in paths:
        os.stat(p)
    floor = time.process_time() - t0
    return {
        "p50_ms": median(walls) * 1000,
        "cpu_p50_ms": median(cpus) * 1000,
        "files": files,
        "stale_files": stale,
        "stat_floor_cpu_ms": floor * 1000,
        "fresh_by": fresh_by,
    }


@contextmanager
def live_watcher(
    root: Path, timeout: float = 300.0, *, with_model: bool = False
) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``clawmem watch`` on ``root``, caught up (its journal vouches), for the freshness
    check a recall pays while a watcher runs: ``--no-embed`` with vectors off, or, with
    ``with_model``, with its model loaded (it embeds recalls' queries)."""
    from clawmem.embedders.resident import protocol
    from clawmem.ingest import journal
    from clawmem.memory import open_workspace

    env = {**os.environ} if with_model else {**os.environ, "CLAWMEM_VECTORS": "0"}
    mem = open_workspace(root, environ=env)
    key = journal.scan_key(mem.root, mem.cfg)
    model = mem.open_index().get_meta("embedder") if with_model else None
    proc = subprocess.Popen(
        [*cli_cmd(), "--workspace", str(root), "watch", *([] if with_model else ["--no-embed"])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )

    def ready() -> bool:
        if not journal.ask(mem.memory_dir, key)[0]:
            return False
        return model is None or protocol.ask_vector(mem.memory_dir, model, "ready?")[0] is not None

    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"clawmem watch on {root} never caught up")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def many_files(root: Path, n_files: int, units_per_file: int, seed: int = 3) -> dict:
    """A workspace of ``n_files`` small daily logs (``units_per_file`` bullets each): the shape
    where the per-file cost of the freshness check shows (issue #16: 100k units in 18k files)."""
    from benchmarks.datasets.synth import PEOPLE, PROJECTS, TOPICS, VERBS

    marker = root / "files.json"
    want = {"n_files": n_files, "units_per_file": units_per_file, "seed": seed}
    if marker.is_file() and json.loads(marker.read_text()) == want:
        return want
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(seed)
    for i in range(n_files):
        project = PROJECTS[i % len(PROJECTS)]
        day = f"{2000 + i // 372}-{(i // 31) % 12 + 1:02d}-{i % 31 + 1:02d}"
        folder = root / "memory" / project
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"# {day} {project}", ""]
        for _ in range(units_per_file):
            lines.append(
                f"- {rng.choice(PEOPLE)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} "
                f"{rng.choice(TOPICS)} for {project} ({rng.randrange(10_000)})"
            )
            lines.append("")
        (folder / f"{day}-{i}.md").write_text("\n".join(lines), encoding="utf-8")
    marker.write_text(json.dumps(want))
    return want


def rss_mb() -> dict:
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


def md_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.md") if ".memory" not in p.parts)


def cli_cmd() -> list[str]:
    exe = shutil.which("clawmem")
    return [exe] if exe else [sys.executable, "-m", "clawmem"]


def byte_compile_clawmem() -> None:
    """Write clawmem's ``.pyc`` files, as pip does when it installs the package. Cold-process
    timings otherwise depend on the shell: under ``PYTHONDONTWRITEBYTECODE=1`` a source tree's
    missing or stale ``.pyc`` files are never written, so every process compiles those modules
    again (seen on issue 16: the checkout's recall, indexing and journal were compiled by each
    cold `clawmem recall`, 20-40 ms of it at load 4.8)."""
    import compileall

    import clawmem

    compileall.compile_dir(str(Path(clawmem.__file__).parent), quiet=1)


def cold_cli(root: Path, qs: list[str], mode: str) -> dict:
    walls = []
    query_by = None
    for q in qs:
        t0 = time.perf_counter()
        res = subprocess.run(
            [*cli_cmd(), "-w", str(root), "recall", q, "--mode", mode, "--json"],
            capture_output=True,
            text=True,
        )
        walls.append(time.perf_counter() - t0)
        if res.returncode != 0:
            return {"error": res.stderr[-500:]}
        query_by = json.loads(res.stdout).get("vectors", {}).get("query_by")
        if sum(walls) > 60 and len(walls) >= 3:
            break  # slow at this size: three runs are enough for a median
    return {
        "median_s": median(walls),
        "max_s": max(walls),
        "runs": len(walls),
        "query_by": query_by,
    }


def import_profile(root: Path, q: str) -> dict:
    """Where a cold lexical `clawmem recall` spends its import time (python -X importtime)."""
    base = [sys.executable, "-X", "importtime", "-m", "clawmem"]
    res = subprocess.run(
        [*base, "-w", str(root), "recall", q, "--mode", "lexical", "--json"],
        capture_output=True,
        text=True,
    )
    top: list[tuple[int, str]] = []
    total = 0
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.split("|")
        try:
            cum = int(parts[1])
        except ValueError:
            continue
        name = parts[2].rstrip()
        if not name.startswith("  ") and name.strip():
            total += cum
            top.append((cum, name.strip()))
    top.sort(reverse=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"])
    bare = time.perf_counter() - t0
    return {
        "imports_ms": total / 1000,
        "top": [(n, c / 1000) for c, n in top[:8]],
        "bare_python_s": bare,
    }


def recall_latency(
    mem: Memory,
    qs: list[str],
    mode: str,
    *,
    sync: bool,
    repeats: int = 2,
    budget_s: float = 90.0,
    **filters: Any,
) -> dict:
    """p50/p95 over ``repeats`` passes of ``qs`` (after one untimed warm-up recall). When a recall
    is slow (large workspaces), fewer queries are timed so one mode stays within ``budget_s``; the
    number of timed recalls is reported. ``filters``: recall's own (``since=...``)."""
    from clawmem.store import vector_matrix

    mem.recall(qs[0], mode=mode, sync=sync, **filters)  # warm caches and the model
    vector_matrix.wait()  # a recalling process holds the vectors in memory from here on
    t0 = time.perf_counter()
    mem.recall(qs[0], mode=mode, sync=sync, **filters)
    one = time.perf_counter() - t0
    n = max(5, min(len(qs) * repeats, int(budget_s / max(one, 1e-3))))
    plan = [q for _ in range(repeats) for q in qs][:n]
    lat = []
    for q in plan:
        t0 = time.perf_counter()
        res = mem.recall(q, mode=mode, sync=sync, **filters)
        lat.append(time.perf_counter() - t0)
    return {
        "p50_ms": median(lat) * 1000,
        "p95_ms": percentile(lat, 95) * 1000,
        "n": len(lat),
        "ranking": res.ranking,
    }


PARTS = {
    # (file suffix, function): what it is, in the report
    ("clawmem/workspace.py", "scan"): "workspace scan (stat of every file)",
    ("clawmem/index.py", "counts"): "Index.counts() (COUNT(*) queries)",
    ("clawmem/ranking.py", "rank"): "ranking.rank (both legs, fusion, rows)",
    ("clawmem/search.py", "lexical_leg"): "  lexical leg (FTS5)",
    ("clawmem/bm25_topk.py", "top"): "    its pruned ranking (bm25_topk)",
    ("clawmem/search.py", "coverage"): "  coverage of the lexical hits",
    # The query's embedding and a scan of vectors held in memory run on a thread of their own
    # (ranking._VectorLeg), which cProfile does not see: only what rank still waits for.
    ("clawmem/ranking.py", "wait"): "  waiting for the vector leg's thread",
    ("clawmem/search.py", "stored_leg"): "  vector leg (sqlite-vec)",
    ("clawmem/embedders/llama.py", "embed_query"): "  query embedding",
    ("clawmem/recall.py", "mark_superseded"): "mark_superseded",
    ("clawmem/memory.py", "recall"): "Memory.recall, total",
}


def profile_recall(mem: Memory, q: str, mode: str, *, sync: bool, n: int = 5) -> tuple[str, dict]:
    """One recall's time split into its parts (cProfile, cumulative), and the top functions."""
    import cProfile
    import io
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        mem.recall(q, mode=mode, sync=sync)
    pr.disable()
    st = pstats.Stats(pr)
    parts: dict[str, float] = {}
    # pstats.Stats keeps its table in .stats, which typeshed does not declare.
    table = st.stats  # type: ignore[attr-defined]
    for (fname, _line, func), (_cc, _nc, _tt, ct, _callers) in table.items():
        for (suffix, name), label in PARTS.items():
            if func == name and fname.replace("\\", "/").endswith(suffix):
                parts[label] = parts.get(label, 0.0) + ct * 1000 / n
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("cumulative").print_stats(14)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    ordered = {label: round(parts[label], 1) for label in PARTS.values() if label in parts}
    return "\n".join(lines[:40]), ordered


def cold_index(root: Path) -> dict:
    """One `clawmem index --json` in a new process: its wall time and what it reported."""
    t0 = time.perf_counter()
    res = subprocess.run(
        [*cli_cmd(), "-w", str(root), "index", "--json"], capture_output=True, text=True
    )
    out: dict[str, object] = {"wall_s": time.perf_counter() - t0, "rc": res.returncode}
    try:
        rep = json.loads(res.stdout.strip().splitlines()[-1])
        out.update(embedded=rep.get("vectors_embedded"), files_indexed=rep.get("files_indexed"))
    except (ValueError, IndexError):
        out["error"] = res.stderr[-300:]
    return out


def append_section(root: Path) -> Path:
    files = sorted((root / "memory").rglob("*.md"))
    target = files[len(files) // 2]
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(
            f"\n## Late note {time.time_ns()}\n\nPeter asked for the summary of the backup "
            "review; restic on castle-01 is fine, the NAS is at 71% and needs a bigger disk.\n"
        )
    return target


def run_size(
    n_chunks: int, *, real_embed: bool, sample: int, with_qmd: bool, seed: int = 1
) -> dict:
    from benchmarks.systems.clawmem import open_clawmem

    root = WORK / "work" / f"synth-{n_chunks}"
    log(f"speed {n_chunks}: generating workspace")
    manifest = generate(root, n_chunks, seed)
    out: dict = {"n_chunks_target": n_chunks, "manifest": manifest, "workspace": str(root)}
    emb, why = embedder_status()

    log(f"speed {n_chunks}: lexical full index (fresh process)")
    lex = child({"op": "index", "workspace": str(root), "embed": "none"})
    out["lexical"] = lex
    units = lex["counts"]["chunks"] + lex["counts"]["facts"]
    out["units"] = units
    out["md_bytes"] = md_bytes(root)
    if emb is None:
        out["vectors_off_reason"] = why
        return out

    texts = pending_texts(root)
    batch = 32
    if real_embed:
        log(f"speed {n_chunks}: raw embedder on all {len(texts)} units")
        raw_s, vecs = raw_embed(emb, texts, batch)
        out["raw_embed"] = {
            "units": len(texts),
            "seconds": raw_s,
            "per_unit_s": raw_s / len(texts),
            "measured_on": "all units",
        }
        base = vecs
        measured = texts
    else:
        rng = random.Random(seed)
        pick = rng.sample(texts, min(sample, len(texts)))
        log(f"speed {n_chunks}: raw embedder on a seeded sample of {len(pick)} units")
        raw_s, base = raw_embed(emb, pick, batch)
        out["raw_embed"] = {
            "units": len(pick),
            "seconds": raw_s,
            "per_unit_s": raw_s / len(pick),
            "measured_on": f"seeded sample of {len(pick)} of {len(texts)} units",
        }
        measured = pick
    # The single-sequence baseline runs on texts the batched figure was measured on (all units
    # where the model indexes them all, else part of the seeded sample: before, 10k and 100k drew
    # the two samples apart), and the batched embedder is timed again on exactly those texts
    # right after: the ratio of the two is the same work done both ways.
    rng1 = random.Random(seed + 1)
    single = rng1.sample(measured, min(100 if real_embed else 60, len(measured)))
    log(f"speed {n_chunks}: raw single-sequence embedder on {len(single)} units")
    out["raw_single"] = raw_single(emb, single)
    same_s, _ = raw_embed(emb, single, batch)
    out["raw_embed_same_texts"] = {
        "units": len(single),
        "seconds": same_s,
        "per_unit_s": same_s / len(single),
    }
    base_path = WORK / "cache" / f"base-{n_chunks}.npy"
    base_path.parent.mkdir(parents=True, exist_ok=True)
    np.save(base_path, base)

    log(f"speed {n_chunks}: full index with stub vectors (pipeline without the model)")
    stub = child(
        {"op": "index", "workspace": str(root), "embed": "stub", "base_vectors": str(base_path)}
    )
    out["stub"] = stub
    est_embed = out["raw_embed"]["per_unit_s"] * stub["embedded_texts"]
    pipeline = stub["wall_seconds"] - stub["embed_seconds"]
    out["estimate"] = {
        "pipeline_seconds": pipeline,
        "embed_seconds_est": est_embed,
        "total_seconds_est": pipeline + est_embed,
        "overhead_est": pipeline / est_embed if est_embed else None,
    }
    if real_embed:
        log(f"speed {n_chunks}: full index with the real model (fresh process)")
        real = child({"op": "index", "workspace": str(root), "embed": "real"})
        out["real"] = real
        out["overhead_measured"] = real["wall_seconds"] / out["raw_embed"]["seconds"] - 1
        out["units_per_s_measured"] = units / real["wall_seconds"]

    single_ups = 1 / out["raw_single"]["per_unit_s"]
    index_ups = (
        out["units_per_s_measured"] if real_embed else units / out["estimate"]["total_seconds_est"]
    )
    out["throughput"] = {
        "single_sequence_units_per_s": single_ups,
        "index_units_per_s": index_ups,
        "index_measured": bool(real_embed),
        "speedup_vs_single": index_ups / single_ups,
        # The embedder alone, batched against one sequence at a time, on the same texts.
        "embedder_speedup_same_texts": out["raw_single"]["per_unit_s"]
        / out["raw_embed_same_texts"]["per_unit_s"],
    }
    vec_bytes = (stub["counts"]["vectors"]) * emb.identity.dims * 4
    out["size"] = {
        "db_bytes": stub["db_bytes"],
        "md_bytes": out["md_bytes"],
        "vector_bytes": vec_bytes,
        "ratio": stub["db_bytes"] / (out["md_bytes"] + vec_bytes),
        "bytes_per_unit": stub["db_bytes"] / units,
        "lexical_db_bytes": lex["db_bytes"],
    }

    # In-process work on the index with vectors (stub-filled or real; the model is the real one).
    mem = open_clawmem(root, vectors=True)
    mem.reconfigure(mem.cfg)  # the real model, loaded by the first recall
    qs = queries(N_QUERIES)
    t0 = time.perf_counter()
    mem.recall(qs[0], mode="hybrid", sync=False)
    out["first_recall_s"] = time.perf_counter() - t0  # loads the model once
    lat = {}
    for mode in ("lexical", "vector", "hybrid"):
        lat[mode] = recall_latency(mem, qs, mode, sync=False)
        lat[f"{mode}+sync"] = recall_latency(
            mem, qs[:15], mode, sync=True, repeats=1, budget_s=30.0
        )
    # What an agent asks most (`recall "…" --since 30d`): the workspace's last 30 days.
    idx = mem.open_index()
    last = idx.conn.execute("SELECT max(day) FROM chunks").fetchone()[0]
    idx.close()
    since = (date.fromisoformat(last) - timedelta(days=29)).isoformat()
    lat["hybrid, last 30 days"] = recall_latency(mem, qs, "hybrid", sync=False, since=since)
    out["recall"] = lat
    out["freshness"] = freshness_check(mem)
    out["recall_process_rss_mb"] = rss_mb()
    slow = lat["hybrid"]["p50_ms"] > 2000
    out["profile_hybrid"], out["recall_parts_ms"] = profile_recall(
        mem, qs[0], "hybrid", sync=False, n=2 if slow else 5
    )

    # Incremental sync: no change, then one edited file.
    t0 = time.perf_counter()
    r0 = mem.index()
    out["sync_nochange_s"] = time.perf_counter() - t0
    target = append_section(root)
    from benchmarks.suites.child import TimedEmbedder

    inner = mem.embedder()
    assert inner is not None  # vectors are on here (open_clawmem above)
    timed = TimedEmbedder(inner)
    mem.reconfigure(mem.cfg, embedder=timed)
    t0 = time.perf_counter()
    r1 = mem.index()
    wall = time.perf_counter() - t0
    out["sync_one_file"] = {
        "file": target.relative_to(root).as_posix(),
        "wall_s": wall,
        "embed_s": timed.seconds,
        "without_embedding_s": wall - timed.seconds,
        "embedded": r1.embedded,
        "reused": r1.reused,
        "nochange_report": {"files_indexed": r0.files_indexed},
    }
    # A deleted file's vectors wait in the embedding cache (for an undo), and every later sync
    # checks each cache entry against the index: a sync with nothing changed, then, with them.
    gone = sorted((root / "memory").rglob("*.md"))[1]
    text = gone.read_bytes()
    gone.unlink()
    mem.index()
    idx = mem.open_index()
    cached = idx.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    idx.close()
    t0 = time.perf_counter()
    mem.index()
    out["sync_nochange_cached"] = {"cache_entries": cached, "wall_s": time.perf_counter() - t0}
    gone.write_bytes(text)
    mem.index()
    # The same from a cold process, as a pre-commit hook runs it: `clawmem index` after one edit,
    # then once more with nothing changed (what a hook or cron pays most of the time).
    append_section(root)
    out["sync_one_file_cold_cli"] = cold_index(root)
    out["sync_nochange_cold_cli"] = cold_index(root)

    log(f"speed {n_chunks}: cold `clawmem recall` processes")
    cq = qs[:CLI_REPEATS]
    out["cold_cli"] = {m: cold_cli(root, cq, m) for m in ("lexical", "hybrid")}
    # The same hybrid recall with a `clawmem watch` running, which embeds the query with the
    # model it keeps loaded (and vouches for freshness): what an agent's hook pays with one.
    try:
        with live_watcher(root, with_model=True):
            out["cold_cli"]["hybrid_watched"] = cold_cli(root, cq, "hybrid")
    except RuntimeError as exc:
        out["cold_cli"]["hybrid_watched"] = {"error": str(exc)}
    out["cold_cli_imports"] = import_profile(root, cq[0])
    if n_chunks == min(_SIZES_SEEN or [n_chunks]):
        log(f"speed {n_chunks}: profiled lexical index (for the report; its wall time is not used)")
        prof = child({"op": "index", "workspace": str(root), "embed": "none", "profile": True})
        out["index_profile"] = prof["profile"]

    if with_qmd:
        out["qmd"] = qmd_speed(root, qs, n_chunks)
    return out


def qmd_speed(root: Path, qs: list[str], n: int) -> dict:
    from benchmarks.systems.searchers import QMD, find_qmd

    exe = find_qmd()
    if exe is None:
        return {"skipped": "qmd not installed"}
    q = QMD(exe, f"clawmem-bench-synth-{n}")
    try:
        secs = q.index(root)
    except Exception as exc:  # noqa: BLE001
        return {"error": str(exc)}
    walls = []
    found = 0
    for query in qs[:10]:
        t0 = time.perf_counter()
        res = q.run("search", "--json", "-n", "6", query)
        walls.append(time.perf_counter() - t0)
        found += res.stdout.strip().startswith("[")
    return {
        "index_seconds": secs,
        "db_bytes": q.db_path().stat().st_size,
        "cold_search_median_s": median(walls),
        "queries_with_results": f"{found}/{len(walls)}",
    }


_SIZES_SEEN: list[int] = []


def run_many_files(n_files: int = 18_000, units_per_file: int = 6) -> dict:
    """The freshness check on 100k units spread over 18k files (lexical index: the check
    compares files, not vectors)."""
    from benchmarks.systems.clawmem import open_clawmem

    root = WORK / "work" / f"files-{n_files}"
    log(f"speed: {n_files} small files ({units_per_file} units each)")
    out: dict = {"workspace": many_files(root, n_files, units_per_file)}
    lex = child({"op": "index", "workspace": str(root), "embed": "none"})
    out["units"] = lex["counts"]["chunks"] + lex["counts"]["facts"]
    out["lexical_index_s"] = lex["wall_seconds"]
    mem = open_clawmem(root, vectors=False)
    out["freshness"] = freshness_check(mem)
    qs = queries(15)
    out["recall_lexical_sync"] = recall_latency(mem, qs, "lexical", sync=True, repeats=1)
    log(f"speed: {n_files} small files, with a live `clawmem watch`")
    try:
        with live_watcher(root):
            out["freshness_watched"] = freshness_check(mem)
            out["recall_lexical_sync_watched"] = recall_latency(
                mem, qs, "lexical", sync=True, repeats=1
            )
    except (OSError, RuntimeError) as exc:
        out["freshness_watched_error"] = str(exc)
    # A long-running process (``clawmem mcp``) without a watcher follows the files itself: its
    # first read starts the journal and stats every file once, later ones stat nothing.
    log(f"speed: {n_files} small files, the process's own journal (no watcher)")
    own = open_clawmem(root, vectors=False)
    own.follow_changes()
    first = freshness_check(own, n=1)["p50_ms"]
    out["freshness_own_journal"] = {**freshness_check(own), "first_read_ms": first}
    out["recall_lexical_sync_own_journal"] = recall_latency(
        own, qs, "lexical", sync=True, repeats=1
    )
    own.close()
    return out


def run_speed(sizes: list[int], *, real_embed_max: int, sample: int, with_qmd: bool) -> dict:
    _SIZES_SEEN[:] = sizes
    byte_compile_clawmem()
    res: dict = {"sizes": []}
    for n in sizes:
        res["sizes"].append(
            run_size(n, real_embed=n <= real_embed_max, sample=sample, with_qmd=with_qmd)
        )
    if max(sizes) >= 100_000:
        res["many_files"] = run_many_files()
    return res
