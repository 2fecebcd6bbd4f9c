"""Everyday size, no step back (issue 43 point 5): in-process hybrid recall p50 of two source
trees (a release before and this one), alternating child processes in one run, each on its own
copy of an indexed workspace (REALTALK chat 1's, 476 units) indexed by its own code first, the
first 40 of its questions.

    python -m benchmarks.suites.everyday_ab WORKSPACE BEFORE_SRC THIS_SRC [ROUNDS]

Prints a JSON summary (p50/p90 wall, p50 CPU, per tree); ``benchmarks.scale`` shows it when its
saved JSON has it (``everyday``)."""

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time, os
import clawmem
root, qs = sys.argv[1], json.loads(sys.argv[2])
env = dict(os.environ); env.pop("CLAWMEM_WORKSPACE", None)
mem = clawmem.open_workspace(root, environ=env)
for q in qs[:3]:
    mem.recall(q, mode="hybrid", sync=False)
lat, cpu = [], []
for q in qs:
    t0, c0 = time.perf_counter(), time.process_time()
    mem.recall(q, mode="hybrid", sync=False)
    lat.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
print(json.dumps({"lat": lat, "cpu": cpu}))
"""


def main() -> None:
    src = Path(sys.argv[1])
    trees = {"main-before": sys.argv[2], "this": sys.argv[3]}
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    # A copy of the workspace for each tree, indexed by that tree's own code first: two trees
    # of different schema versions cannot share one index (the newer one would rebuild it).
    copies = {name: Path(f"/tmp/everyday-ws-{name}") for name in trees}
    for name, ws in copies.items():
        shutil.rmtree(ws, ignore_errors=True)
        shutil.copytree(src, ws)
        env = {**os.environ, "PYTHONPATH": trees[name], "CLAWMEM_RESIDENT_EMBEDDER": "0"}
        subprocess.run(
            [sys.executable, "-m", "clawmem", "-w", str(ws), "index", "--quiet"],
            env=env,
            check=True,
        )
    sys.path.insert(0, sys.argv[3])
    sys.path.insert(0, str(Path(sys.argv[3]).parent))
    from benchmarks.suites.realtalk import chat_files, convert

    chat = convert(chat_files()[0])
    qs = [q["question"] for q in chat.questions][:40]
    res: dict[str, dict[str, list[float]]] = {k: {"lat": [], "cpu": []} for k in trees}
    load0 = os.getloadavg()
    for r in range(rounds):
        order = list(trees) if r % 2 == 0 else list(trees)[::-1]
        for name in order:
            env = {**os.environ, "PYTHONPATH": trees[name], "CLAWMEM_RESIDENT_EMBEDDER": "0"}
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(copies[name]), json.dumps(qs)],
                env=env,
                capture_output=True,
                text=True,
            )
            if out.returncode:
                print(out.stderr[-2000:])
                return
            d = json.loads(out.stdout.strip().splitlines()[-1])
            for k in ("lat", "cpu"):
                res[name][k] += d[k]
    summary = {
        "units_ws": str(src),
        "questions": len(qs),
        "rounds": rounds,
        "load": [load0, os.getloadavg()],
    }
    for name, d in res.items():
        lat = sorted(d["lat"])
        cpu = sorted(d["cpu"])
        summary[name] = {
            "p50_ms": statistics.median(lat) * 1000,
            "p90_ms": lat[int(0.9 * len(lat))] * 1000,
            "cpu_p50_ms": statistics.median(cpu) * 1000,
            "n": len(lat),
        }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
