"""``python -m benchmarks.soak --minutes 30 --seed 1``: the soak, with its figures.

The time is shared in the ratio kills 70 : concurrency 15 : bad input 8 after what the resource
checks take (kills are the costliest figure to gather: about 3.5 s a round). The resource
checks take what they take: a few minutes with ``--hold-seconds 30``; so does the secret
planting (``secrets.py``, about a minute) and the hostile clone (``hostile.py``: links a cloned
repository commits, half a minute). Exit status 1
when a figure that must be zero is not (``--json`` keeps every figure and failure).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MUST_BE_ZERO = {
    "kills": [
        "corruptions",
        "no_answer",
        "markdown_damaged",
        "not_converged",
        "leftover_temp_files",
        "lost_facts",
        "duplicated_facts",
    ],
    "concurrency": [
        "reader_errors",
        "writer_errors",
        "facts_missing",
        "facts_duplicated",
        "foreign_lines_lost",
        "held_open_lines_lost",
    ],
    "fuzz": ["crashes", "bad_rejections", "markdown_changed", "model_path_failures"],
    "resources": ["failures"],
    "secrets": ["secrets_found", "accepted_without_flag", "false_positives"],
    "hostile": ["outside_entries_changed", "crashes"],
}


def log(msg: str) -> None:
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} {msg}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    ap.add_argument("--minutes", type=float, default=30.0, help="total time (default 30)")
    ap.add_argument("--seed", type=int, default=1, help="the seed of every random choice")
    ap.add_argument(
        "--parts",
        default="kills,concurrency,fuzz,resources,secrets,hostile",
        help="comma-separated subset of kills,concurrency,fuzz,resources,secrets,hostile",
    )
    ap.add_argument(
        "--hold-seconds",
        type=float,
        default=30.0,
        help="how long another process holds the database in the resources part (default 30)",
    )
    ap.add_argument("--json", type=Path, help="write every figure and failure here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument(
        "--render",
        type=Path,
        metavar="SOAK_JSON",
        help="print the figures of a --json file as docs/reliability.md's tables, and exit",
    )
    args = ap.parse_args(argv)
    if args.render:
        from .report import render

        print(render(json.loads(args.render.read_text(encoding="utf-8"))), end="")
        return 0
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(MUST_BE_ZERO)
    if unknown:
        ap.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    # The secret planting takes what it takes (about a minute), outside the budget.
    # So does the hostile clone (a few dozen commands, half a minute).
    share = {
        "kills": 0.70,
        "concurrency": 0.15,
        "fuzz": 0.08,
        "resources": 0.1,
        "secrets": 0.0,
        "hostile": 0.0,
    }
    total = sum(share[p] for p in parts if p not in ("resources", "secrets", "hostile")) or 1.0
    budget = args.minutes * 60 * (1 - (0.1 if "resources" in parts else 0))
    work = Path(tempfile.mkdtemp(prefix="clawmem-soak-"))
    out: dict = {
        "command": "python -m benchmarks.soak " + " ".join(argv or sys.argv[1:]),
        "seed": args.seed,
        "minutes": args.minutes,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_before": os.getloadavg(),
        "commit": _commit(),
    }
    t0 = time.monotonic()
    # The load average every 30 s: on a shared machine it is what the figures were measured under.
    loads: list[float] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(30):
            loads.append(round(os.getloadavg()[0], 2))

    threading.Thread(target=sample, daemon=True).start()
    try:
        for part in parts:
            seconds = budget * share[part] / total
            log(f"{part}: {seconds:.0f} s")
            t_part = time.monotonic()
            if part == "kills":
                from .kills import run_kills

                fig = run_kills(work / part, seconds, args.seed, log)
            elif part == "concurrency":
                from .concurrency import run_concurrency

                fig = run_concurrency(work / part, seconds, args.seed, log)
            elif part == "fuzz":
                from .fuzz import run_fuzz

                fig = run_fuzz(work / part, seconds, args.seed, log)
            elif part == "hostile":
                from .hostile import run_hostile

                fig = run_hostile(work / part, log)
            elif part == "secrets":
                from .secrets import realtalk_messages, run_secrets

                fig = run_secrets(work / part, args.seed, log, real_messages=realtalk_messages())
            else:
                from .resources import run_resources

                fig = run_resources(work / part, args.hold_seconds, log)
            fig["seconds"] = round(time.monotonic() - t_part, 1)
            out[part] = fig
            log(f"{part}: " + json.dumps({k: v for k, v in fig.items() if k != "failures"}))
    finally:
        out["seconds"] = round(time.monotonic() - t0, 1)
        out["load_after"] = os.getloadavg()
        sampling.set()
        out["load_1min_every_30s"] = loads
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        if args.json:
            args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    bad = {
        f"{part}.{key}": out[part][key]
        for part in parts
        for key in MUST_BE_ZERO[part]
        if out[part].get(key)
    }
    print(json.dumps(out, indent=1))
    if bad:
        log("FAILED: " + ", ".join(f"{k} = {v}" for k, v in bad.items()))
        return 1
    log(f"passed: every figure that must be zero is zero ({out['seconds']:.0f} s)")
    return 0


def _commit() -> str:
    try:
        r = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        )
        return r.stdout.strip()
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
