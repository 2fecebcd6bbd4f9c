"""``python -m benchmarks`` — run the benchmarks and write docs/benchmarks.md.

python -m benchmarks --quick             # every table on subsets, < 5 min once caches are warm
python -m benchmarks --full              # SciFact in full, synthetic 1k/10k/100k chunks
python -m benchmarks --quick --only agentmem,scifact --no-qmd --no-vectors
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from benchmarks.common import REPO, WORK, embedder_status, log, machine, replace_section


@dataclass(frozen=True)
class Mode:
    """What --quick and --full measure."""

    scifact: dict[str, int | None]  # n_queries, n_docs: a subset (None: all)
    sizes: list[int]  # synthetic workspaces of the speed part, in chunks
    real_embed_max: int  # the largest size indexed with the real model
    sample: int  # recall queries timed per size


QUICK = Mode({"n_queries": 30, "n_docs": 100}, [1000], real_embed_max=0, sample=32)
FULL = Mode(
    {"n_queries": None, "n_docs": None}, [1000, 10_000, 100_000], real_embed_max=1000, sample=200
)


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            # Untracked files (a results folder, a link to it) change nothing that is measured.
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return out + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def _old_section(out: Path, heading: str | None = None) -> str | None:
    """The report's ``heading`` section (``## Embedding models`` by default) as it stands."""
    from benchmarks.suites import embedders

    heading = heading or embedders.HEADING
    text = out.read_text(encoding="utf-8") if out.is_file() else ""
    start = text.find(heading + "\n")
    if start < 0:
        return None
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start : end + 1]


# What the numbers mean, written by people after a run (the report's last section).
ANALYSIS = REPO / "benchmarks" / "analysis.md"


def _write_report(out: Path, report: str) -> None:
    """Write the report. The embedding-model comparison (``python -m benchmarks.suites.embedders``, a
    separate run: it embeds everything with two models) keeps its section: rendered from its saved
    results when they are here, else carried over as it was. So does the flush benchmark's
    (``python -m benchmarks.suites.flush``); the cold start, the query path's check and the 1M units
    are carried over as they were."""
    from benchmarks.suites import cold, embedders, flush, mixed, proposals, query_path, scale

    old = _old_section(out)
    # Sections of runs of their own kept as they were: the cold start (``benchmarks.suites.cold``), the
    # NumPy query path's check (``benchmarks.suites.query_path``) and the 1M units (``benchmarks.scale``).
    # So is the fact proposals' (``benchmarks.suites.proposals --section``).
    kept = [
        (h, _old_section(out, h))
        for h in (cold.HEADING, query_path.HEADING, scale.HEADING, proposals.HEADING)
    ]
    old_flush = _old_section(out, flush.HEADING)
    # A registered suite's section that this run did not write (e.g. ``--only realtalk``) is
    # kept as it was: the mixed workspaces' (``benchmarks.suites.mixed``).
    old_mixed = None if mixed.HEADING + "\n" in report else _old_section(out, mixed.HEADING)
    out.write_text(report, encoding="utf-8")
    for heading, section in kept:
        if section:
            replace_section(out, heading, section)
    if old_mixed:
        mixed.write_section(old_mixed, out)
    _section_from_run(out, flush, WORK / "flush.json", old_flush)
    _section_from_run(out, embedders, WORK / "embedders.json", old)


def _section_from_run(out: Path, part: ModuleType, saved: Path, old: str | None) -> None:
    """A section written by a benchmark run of its own (``part``: its module, with ``render``
    and ``write_section``): rendered from the run's saved JSON, else kept as it was."""
    try:
        if saved.is_file():
            part.write_section(part.render(json.loads(saved.read_text())), out)
            return
    except (KeyError, ValueError) as exc:  # an incomplete run: keep the old section
        log(f"{part.HEADING} not rendered from {saved} ({exc!r})")
    if old:
        part.write_section(old, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="subsets (default)")
    g.add_argument("--full", action="store_true", help="SciFact in full; 1k/10k/100k chunks")
    from benchmarks.suites import BUILT_IN, Settings, registered

    suites = registered()
    every = [*BUILT_IN, *suites]
    ap.add_argument(
        "--only",
        default=",".join(every),
        help="comma-separated: " + ", ".join(every),
    )
    ap.add_argument("--sizes", help="speed sizes, e.g. 1000,10000 (overrides the mode)")
    ap.add_argument(
        "--scifact",
        metavar="QUERIES,DOCS",
        help="SciFact subset size, e.g. 100,1000 (overrides the mode; relevant abstracts kept)",
    )
    ap.add_argument(
        "--realtalk-tag",
        help="REALTALK's workspaces under bench-results/work/realtalk-TAG/ (default: realtalk/), "
        "e.g. to keep the indexes of a second model apart",
    )
    ap.add_argument(
        "--scifact-tag",
        help="name of the SciFact workspace under bench-results/work/ (default: the size), e.g. "
        "to keep the index of a second model (CLAWMEM_MODEL) apart",
    )
    ap.add_argument(
        "--codes-from",
        type=int,
        metavar="ROWS",
        help="held vectors ranked by binary codes + exact rescoring from ROWS rows on "
        "(vector_matrix.CODES_MIN_ROWS; 0: always), to measure what the codes cost in quality",
    )
    ap.add_argument(
        "--codes-pool",
        metavar="MIN,PER_HIT",
        help="with --codes-from: the pool rescored exactly, at least MIN rows and PER_HIT per hit "
        "asked for, and no share of the rows (vector_matrix.POOL_MIN, POOL_PER_HIT, POOL_SHARE; "
        "default 2000,16 and 1%%)",
    )
    ap.add_argument(
        "--lists-from",
        type=int,
        metavar="ROWS",
        help="held vectors as the compressed copy (int8 rows in inverted lists, exact rescoring) "
        "from ROWS rows on (vector_matrix.LISTS_MIN_ROWS; 0: always), loaded at the first vector "
        "search, to measure what the copy costs in quality",
    )
    ap.add_argument(
        "--lists-probe",
        type=float,
        metavar="SHARE",
        help="with --lists-from: the share of rows a query scores, with no minimum "
        "(vector_lists.PROBE_SHARE; PROBE_MIN 0)",
    )
    ap.add_argument("--no-vectors", action="store_true", help="lexical only (no embedding model)")
    ap.add_argument("--no-qmd", action="store_true", help="skip QMD even when it is installed")
    ap.add_argument(
        "--no-openclaw",
        action="store_true",
        help="SciFact without the OpenClaw-style baselines (they embed the corpus a second time)",
    )
    ap.add_argument(
        "--out",
        default=str(REPO / "docs" / "benchmarks.md"),
        help="Markdown report to write ('-' for none)",
    )
    ap.add_argument(
        "--json", default=None, help="raw results (default bench-results/results-MODE.json)"
    )
    ap.add_argument(
        "--render",
        metavar="RESULTS_JSON",
        nargs="+",
        help="only re-render the report from saved results files (no measurements); with "
        "several, each part comes from the last file that has it",
    )
    args = ap.parse_args(argv)
    if args.render:
        from benchmarks.report import merge, render

        merged = merge([json.loads(Path(p).read_text()) for p in args.render])
        if ANALYSIS.is_file():
            merged["analysis"] = ANALYSIS.read_text(encoding="utf-8").strip()
        _write_report(Path(args.out), render(merged))
        log(f"report: {args.out} (rendered from {', '.join(args.render)})")
        return 0

    mode = "full" if args.full else "quick"
    cfg = FULL if args.full else QUICK
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    bad = only - set(every)
    if bad:
        ap.error(f"--only: unknown part(s) {sorted(bad)}")
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else cfg.sizes
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    # The settings that change what is measured are part of the command that reproduces it.
    env = " ".join(
        f"{k}={os.environ[k]}"
        for k in ("CLAWMEM_MODEL", "CLAWMEM_BENCH_MODEL")
        if os.environ.get(k)
    )
    cmd = (env + " " if env else "") + "python -m benchmarks "
    cmd += " ".join(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    results: dict = {
        "meta": {
            "command": cmd.strip(),
            "mode": mode,
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "commit": _commit(),
            "machine": machine(),
            "load_start": _load(),
        }
    }
    if args.codes_from is not None:
        from clawmem.store import vector_matrix

        vector_matrix.CODES_MIN_ROWS = args.codes_from
        results["meta"]["codes_from"] = args.codes_from
        if args.codes_pool:
            vector_matrix.POOL_MIN, vector_matrix.POOL_PER_HIT = (
                int(x) for x in args.codes_pool.split(",")
            )
            vector_matrix.POOL_SHARE = 0.0  # the pool as given, whatever the rows
        results["meta"]["codes_pool"] = [
            vector_matrix.POOL_MIN,
            vector_matrix.POOL_PER_HIT,
            vector_matrix.POOL_SHARE,
        ]
    if args.lists_from is not None:
        from clawmem.store import vector_lists, vector_matrix

        vector_matrix.LISTS_MIN_ROWS = args.lists_from
        vector_matrix.LOAD_AT_SEARCH = 1
        if args.lists_probe is not None:
            vector_lists.PROBE_SHARE, vector_lists.PROBE_MIN = args.lists_probe, 0
        results["meta"]["lists"] = {
            "from": args.lists_from,
            "probe_share": vector_lists.PROBE_SHARE,
            "probe_min": vector_lists.PROBE_MIN,
            "pool": [vector_lists.POOL_MIN, vector_lists.POOL_PER_HIT],
            "lists_per_sqrt": vector_lists.LISTS_PER_SQRT,
        }
    vectors = not args.no_vectors
    if vectors:
        emb, why = embedder_status()
        if emb is None:
            log(f"embedding model unavailable ({why}): lexical systems only")
        else:
            results["meta"]["embedder"] = emb.identity.key()
    from benchmarks.suites import quality, realtalk, speed

    if "realtalk" in only:
        log("== REALTALK")
        results["realtalk"] = realtalk.run_realtalk(
            vectors=vectors,
            folder=f"realtalk-{args.realtalk_tag}" if args.realtalk_tag else "realtalk",
        )
    if "agentmem" in only:
        log("== agent-memory question set")
        results["agentmem"] = quality.run_agentmem(vectors=vectors, with_qmd=not args.no_qmd)
    if "scifact" in only:
        log("== SciFact")
        sc = dict(cfg.scifact)
        if args.scifact:
            nq, nd = (int(x) for x in args.scifact.split(","))
            sc = {"n_queries": nq, "n_docs": nd}
        results["scifact"] = quality.run_scifact(
            vectors=vectors,
            with_qmd=not args.no_qmd,
            n_queries=sc["n_queries"],
            n_docs=sc["n_docs"],
            tag=args.scifact_tag or (f"{sc['n_queries']}-{sc['n_docs']}" if args.scifact else mode),
            with_openclaw=not args.no_openclaw,
        )
    if "speed" in only:
        log("== speed")
        results["speed"] = speed.run_speed(
            sizes,
            real_embed_max=cfg.real_embed_max,
            sample=cfg.sample,
            with_qmd=not args.no_qmd,
        )
    settings = Settings(mode=mode, vectors=vectors, with_qmd=not args.no_qmd)
    for part, suite in suites.items():
        if part in only:
            log(f"== {suite.TITLE}")
            results[part] = suite.run(settings)
    results["meta"]["seconds"] = time.perf_counter() - t0
    results["meta"]["load_end"] = _load()

    out_json = Path(args.json) if args.json else WORK / f"results-{mode}.json"
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(results, indent=1, default=str))
    log(f"raw results: {out_json}")
    if args.out != "-":
        from benchmarks.report import render

        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        if ANALYSIS.is_file():
            results["analysis"] = ANALYSIS.read_text(encoding="utf-8").strip()
        _write_report(Path(args.out), render(results))
        log(f"report: {args.out}")
    log(f"done in {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
