"""Cold processes side by side (issue 29): what a terminal, an agent's shell call, the prompt hook
or cron pays for one clawmem command, hybrid against lexical, in the same run.

    python -m benchmarks.suites.cold [--size 10000] [--runs 7]

On the synthetic workspace of ``--size`` units (``synth.py``; vectors from the real model's sample
plus noise, as ``speed.py`` fills 10k, so the recall's query is embedded by the real model):

* ``clawmem recall --json``: lexical, hybrid with the resident embedder running, hybrid as the
  first call of a session (no embedder running: this call starts it and embeds its query with
  the NumPy query path meanwhile; and the same with ``CLAWMEM_QUERY_PATH=0``, waiting for the
  embedder), and hybrid with the resident embedder turned off (the process loads the model).
  Wall time, CPU time (user+sys of the process and the children it waited for) and peak RSS of
  each process; lexical and hybrid alternate query by query, the same queries each way.
* ``clawmem context --hook`` (Claude Code's JSON on stdin), lexical and hybrid.
* ``clawmem index`` after one edit (the edit's units embedded).
* Resident memory: the embedder, ``clawmem watch`` (model loaded) and ``clawmem mcp`` after one
  ``memory_search``.

Writes ``WORK/cold.json`` and the ``## Cold start`` section of ``docs/benchmarks.md`` (kept when
the main report is written again, as the embedding-model section is).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import REPO, WORK, log, median, replace_section, save_results, show_section

HEADING = "## Cold start"
SAVED = WORK / "cold.json"

# A small parent for each measured process: ``ru_maxrss`` of a child counts the memory of the
# process it was forked from until it execs, so the benchmark's own (large) process must not be it.
_MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "stdin = sys.stdin.buffer.read() if sys.argv[1] == '1' else None\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[2:], input=stdin, capture_output=True)\n"
    "wall = time.perf_counter() - t0\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "peak = ru.ru_maxrss / 1024\n"
    "sys.stderr.buffer.write(r.stderr)\n"
    "sys.stdout.buffer.write(json.dumps({'wall': wall, 'peak_mb': peak, 'rc': r.returncode,"
    " 'cpu': ru.ru_utime + ru.ru_stime,"
    " 'out': r.stdout.decode('utf-8', 'replace')}).encode())\n"
)


def measured(cmd: list[str], env: dict, stdin: bytes | None = None) -> dict:
    """One process: wall seconds (its own run, not the measuring parent's start), peak RSS, rc,
    stdout."""
    res = subprocess.run(
        [sys.executable, "-c", _MEASURE, "1" if stdin is not None else "0", *cmd],
        input=stdin,
        capture_output=True,
        env=env,
    )
    out = json.loads(res.stdout)
    if out["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}…: {res.stderr.decode()[-500:]}")
    return out


def clawmem(root: Path, *args: str) -> list[str]:
    from benchmarks.suites.speed import cli_cmd

    return [*cli_cmd(), "-w", str(root), *args]


def rss_of(pid: int) -> dict:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
            out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    return out


def stop_embedders(rt: Path) -> None:
    """End every resident embedder in the benchmark's runtime folder (its socket removed)."""
    pids = []
    for lock in rt.glob("embed-*.lock"):
        text = lock.read_text().strip()
        if text.isdigit():
            pids.append(int(text))
    for sock in rt.glob("embed-*.sock"):
        sock.unlink(missing_ok=True)
    deadline = time.monotonic() + 15
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.05)


def embedder_pid(rt: Path) -> int | None:
    for lock in rt.glob("embed-*.lock"):
        text = lock.read_text().strip()
        if text.isdigit() and Path(f"/proc/{text}").exists():
            return int(text)
    return None


def prepare(size: int) -> Path:
    """The synthetic workspace of ``size`` units with every vector in place (``speed.py``'s stub
    vectors: the real model's vectors of a sample, with noise), built once and reused."""
    from benchmarks.datasets.synth import generate
    from benchmarks.suites.speed import child, pending_texts, raw_embed
    from clawmem.memory import open_workspace

    root = WORK / "work" / f"cold-{size}"
    generate(root, size, seed=1)
    mem = open_workspace(root, environ={**os.environ, "CLAWMEM_RESIDENT_EMBEDDER": "0"})
    if mem.index_path.exists():
        idx = mem.open_index()
        counts = idx.vector_counts()
        idx.close()
        if counts["pending"] == 0 and counts["vectors"]:
            return root
    import random

    import numpy as np

    log(f"cold {size}: building the index (stub vectors from a 200-unit sample of the model)")
    child({"op": "index", "workspace": str(root), "embed": "none"})
    texts = pending_texts(root)
    emb = mem.embedder()
    assert emb is not None, mem.embedder_error
    _, base = raw_embed(emb, random.Random(1).sample(texts, min(200, len(texts))), 32)
    base_path = WORK / "cache" / f"cold-base-{size}.npy"
    base_path.parent.mkdir(parents=True, exist_ok=True)
    np.save(base_path, base)
    child({"op": "index", "workspace": str(root), "embed": "stub", "base_vectors": str(base_path)})
    return root


def hook_input(root: Path, prompt: str) -> bytes:
    return json.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(root),
            "prompt": prompt,
        }
    ).encode()


def mcp_rss(root: Path, env: dict, query: str) -> dict:
    """``clawmem mcp`` after the MCP handshake and one ``memory_search``: its resident memory."""
    proc = subprocess.Popen(
        clawmem(root, "mcp"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict) -> None:
        proc.stdin.write(json.dumps(msg).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer(want: int) -> dict:
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("clawmem mcp ended")
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
        )
        answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        t0 = time.perf_counter()
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": query}},
            }
        )
        reply = answer(2)
        first = time.perf_counter() - t0
        data = json.loads(reply["result"]["content"][0]["text"])
        t0 = time.perf_counter()
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": query + " today"}},
            }
        )
        answer(3)
        second = time.perf_counter() - t0
        return {
            **rss_of(proc.pid),
            "first_search_s": first,
            "second_search_s": second,
            "query_by": data.get("vectors", {}).get("query_by"),
        }
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(size: int, runs: int) -> dict:
    from benchmarks.datasets.synth import queries
    from benchmarks.suites.speed import append_section, byte_compile_clawmem, live_watcher

    byte_compile_clawmem()
    root = prepare(size)
    rt = WORK / "rt"
    shutil.rmtree(rt, ignore_errors=True)
    rt.mkdir(mode=0o700, parents=True)
    # Every process of the run (the watcher's too) uses the run's own runtime folder.
    os.environ["CLAWMEM_RUNTIME_DIR"] = str(rt)
    env = {**os.environ}
    off = {**env, "CLAWMEM_RESIDENT_EMBEDDER": "0"}
    qs = queries(runs, seed=7)
    out: dict = {"size": size, "runs": runs, "load_before": os.getloadavg()}
    idx_units = None
    try:
        from clawmem.memory import open_workspace

        idx = open_workspace(root, environ=env).open_index()
        idx_units = idx.vector_counts()["vectors"]
        idx.close()
    except Exception:  # noqa: BLE001 - only a label
        pass
    out["units_with_vectors"] = idx_units

    # The first call of a session: no embedder runs; this recall starts one and embeds its query
    # with the NumPy query path meanwhile (embedders/query_path.py) -- or, with that off, waits
    # for the embedder to load. Alternating, each after every embedder is stopped.
    log(f"cold {size}: first hybrid calls (each starts the resident embedder)")
    no_qp = {**env, "CLAWMEM_QUERY_PATH": "0"}
    first: list[dict] = []
    first_waiting: list[dict] = []
    for q in qs[: max(3, runs)]:
        stop_embedders(rt)
        first.append(measured(clawmem(root, "recall", q, "--json"), env))
        if len(first_waiting) < 3:
            stop_embedders(rt)
            first_waiting.append(measured(clawmem(root, "recall", q, "--json"), no_qp))
    out["hybrid_first_call"] = _summary(first)
    out["hybrid_first_call_waiting"] = _summary(first_waiting)

    log(f"cold {size}: lexical and hybrid (resident embedder running), {runs} each, alternating")
    lex, hyb = [], []
    # The embedder is up and loaded (the first call no longer waits for it: until it has
    # loaded, calls take the NumPy query path).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r = measured(clawmem(root, "recall", qs[0], "--json"), env)
        if str(json.loads(r["out"])["vectors"].get("query_by")).startswith("resident"):
            break
        time.sleep(0.5)
    for q in qs:
        lex.append(measured(clawmem(root, "recall", q, "--mode", "lexical", "--json"), env))
        hyb.append(measured(clawmem(root, "recall", q, "--json"), env))
    out["lexical"] = _summary(lex)
    out["hybrid_resident"] = _summary(hyb)

    log(f"cold {size}: `context --hook`, lexical and hybrid")
    hl, hh = [], []
    for q in qs:
        hl.append(
            measured(
                clawmem(root, "context", "--hook", "--mode", "lexical"), env, hook_input(root, q)
            )
        )
        hh.append(measured(clawmem(root, "context", "--hook"), env, hook_input(root, q)))
    out["hook_lexical"] = _summary(hl, json_out=False)
    out["hook_hybrid"] = _summary(hh, json_out=False)

    log(f"cold {size}: hybrid with the resident embedder off (the process loads the model)")
    out["hybrid_in_process"] = _summary(
        [measured(clawmem(root, "recall", q, "--json"), off) for q in qs[:3]]
    )

    log(f"cold {size}: `clawmem index` after one edit")
    edits = []
    for _ in range(3):
        append_section(root)
        r = measured(clawmem(root, "index", "--json"), env)
        rep = json.loads(r["out"].strip().splitlines()[-1])
        edits.append({**r, "embedded": rep.get("vectors_embedded")})
    out["index_one_edit"] = {
        "median_s": median([e["wall"] for e in edits]),
        "walls": [e["wall"] for e in edits],
        "embedded": [e["embedded"] for e in edits],
        "peak_mb": max(e["peak_mb"] for e in edits),
    }

    log(f"cold {size}: resident memory of the embedder, `clawmem watch` and `clawmem mcp`")
    pid = embedder_pid(rt)
    out["embedder_rss"] = rss_of(pid) if pid else None
    with live_watcher(root, with_model=True) as proc:
        out["watch_rss"] = rss_of(proc.pid)
    out["mcp"] = mcp_rss(root, env, qs[1])
    stop_embedders(rt)
    out["load_after"] = os.getloadavg()
    return out


def _summary(rs: list[dict], *, json_out: bool = True) -> dict:
    walls = [r["wall"] for r in rs]
    out = {
        "median_s": median(walls),
        "walls": walls,
        "peak_mb": max(r["peak_mb"] for r in rs),
        "cpu_median_s": median([r.get("cpu", 0.0) for r in rs]),
    }
    if json_out:
        bys = {json.loads(r["out"]).get("vectors", {}).get("query_by") for r in rs}
        out["query_by"] = sorted(str(b) for b in bys)
    if all("cpu" in r for r in rs):
        out["cpu_s"] = median([r["cpu"] for r in rs])
    return out


def render(d: dict) -> str:
    lex = d["lexical"]["median_s"]

    def row(name: str, part: dict, base: float | None = lex) -> str:
        ratio = f"{part['median_s'] / base:.2f}×" if base else ""
        runs = len(part["walls"])
        spread = f"{min(part['walls']):.2f}-{max(part['walls']):.2f}"
        cpu = f"{part['cpu_s']:.2f} s" if "cpu_s" in part else ""
        return (
            f"| {name} | {part['median_s']:.2f} s ({spread}, {runs} runs) | {ratio} | {cpu} | "
            f"{part['peak_mb']:.0f} MB |"
        )

    la, lb = d["load_before"], d["load_after"]
    lines = [
        HEADING,
        "",
        f"Fresh processes on the {d['size']:,}-unit synthetic workspace "
        f"({d.get('units_with_vectors') or '?'} vectors; `python -m benchmarks.suites.cold`, issue 29). "
        f"Load average {la[0]:.1f} before, {lb[0]:.1f} after (2 cores shared with other work). "
        "Lexical and hybrid ran alternately on the same queries; the ratio is each median over "
        "the lexical recall's median.",
        "",
        "| process | wall time (median, range) | × lexical | CPU (user+sys, median) | peak RSS |",
        "|---|---|---|---|---|",
        row("`clawmem recall --json`, lexical", d["lexical"]),
        row("`clawmem recall --json`, hybrid, resident embedder running", d["hybrid_resident"]),
        row(
            "hybrid, first call (starts the resident embedder; the query by the NumPy query path)",
            d["hybrid_first_call"],
        ),
        *(
            [
                row(
                    "hybrid, first call, query path off (starts the embedder, waits for it)",
                    d["hybrid_first_call_waiting"],
                )
            ]
            if "hybrid_first_call_waiting" in d
            else []
        ),
        row("hybrid, resident embedder off (loads the model itself)", d["hybrid_in_process"]),
        row("`clawmem context --hook`, lexical", d["hook_lexical"]),
        row("`clawmem context --hook`, hybrid", d["hook_hybrid"], d["hook_lexical"]["median_s"]),
        f"| `clawmem index` after one edit ({', '.join(str(e) for e in d['index_one_edit']['embedded'])} "
        f"units embedded) | {d['index_one_edit']['median_s']:.2f} s "
        f"({min(d['index_one_edit']['walls']):.2f}-{max(d['index_one_edit']['walls']):.2f}) | | | "
        f"{d['index_one_edit']['peak_mb']:.0f} MB |",
        "",
        "Resident memory (VmRSS, and the part of it that is the model file's pages, shared "
        "with the page cache):",
        "",
        "| process | RSS | of which file-backed |",
        "|---|---|---|",
    ]
    for name, r in (
        ("resident embedder, after these calls", d.get("embedder_rss")),
        ("`clawmem watch` (model loaded)", d.get("watch_rss")),
        ("`clawmem mcp` after two `memory_search` calls", d.get("mcp")),
    ):
        if r:
            lines.append(f"| {name} | {r['VmRSS']:.0f} MB | {r.get('RssFile', 0):.0f} MB |")
    m = d.get("mcp") or {}
    if m:
        lines += [
            "",
            f"`clawmem mcp`'s searches took {m['first_search_s'] * 1000:.0f} ms and "
            f"{m['second_search_s'] * 1000:.0f} ms (query vectors by: {m.get('query_by')}).",
        ]
    return "\n".join(lines) + "\n"


def write_section(section: str, path: Path) -> None:
    replace_section(path, HEADING, section)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.suites.cold", description=__doc__)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"), help="'-' for none")
    ap.add_argument("--render", help="re-render from a saved JSON, no measurements")
    args = ap.parse_args(argv)
    if args.render:
        data = json.loads(Path(args.render).read_text())
    else:
        data = run(args.size, args.runs)
        save_results("cold", SAVED, data)
    show_section("cold", render(data), args.out, HEADING)


if __name__ == "__main__":
    main()
