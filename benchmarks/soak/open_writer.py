"""Programs that keep a daily log open while clawmem writes it: does any of their lines get lost?

Issue 40: when a daily log had a section after ``## Retain``, retain renamed a new file over the
log, and a program holding the log open (a logger, an editor's autosave, a shell group
``{ echo a; sleep 0.03; echo b; } >> log``) went on writing into the deleted file. A Python
writer appending 250 lines a second lost 3,967 of 4,044 lines beside a retain loop; the shell
group lost 29 of 826. Retain now only ever appends (files/cas.py, ingest/retain.py).

Two writers, each beside a retain loop or beside ``clawmem watch``, on a log that starts with a
section after its Retain section (the case that was renamed over):

* ``held``: one process opens the log once and appends at least 200 lines a second, flushing
  each, for the whole run;
* ``grouped``: a shell loop of ``{ echo a; sleep 0.03; echo b; } >> log``.

Every line carries a unique token; afterwards each must be in the log exactly once.

    python -m benchmarks.soak.open_writer --seconds 30      # figures for docs/reliability.md

``tests/test_foreign_writer.py`` runs the same measurement for a few seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAY = "2031-02-03"
HEAD = f"# {DAY}\n\n## Retain\n- W: the first fact of the day\n\n## Notes\nwritten by hand\n"

# Opens the log once and keeps it open: >= 200 lines a second, each flushed at once.
HELD = """
import os, sys, time
path, stop, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
n, t0 = 0, time.monotonic()
with open(path, "a", encoding="utf-8") as fh:
    while not os.path.exists(stop):
        fh.write(f"held line {n} from a logger\\n")
        fh.flush()
        n += 1
        lag = t0 + n / rate - time.monotonic()
        if lag > 0:
            time.sleep(lag)
print(n)
"""

# A shell group: the log is opened once for both echoes, 30 ms apart.
GROUPED = """
i=0
while [ ! -e "$2" ]; do
  { echo "grouped $i a"; sleep 0.03; echo "grouped $i b"; } >> "$1"
  i=$((i+1))
done
echo $i
"""

# Retains into the log in a loop (the library, vectors off: as fast as retain goes).
RETAIN_LOOP = """
import os, sys
from clawmem import open_workspace
ws, stop, day = sys.argv[1], sys.argv[2], sys.argv[3]
m = open_workspace(ws, environ={"CLAWMEM_VECTORS": "0"})
n = 0
while not os.path.exists(stop):
    m.retain(f"retained fact number {n} of the loop", day=day)
    n += 1
print(n)
"""


def _env() -> dict[str, str]:
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root / "src"), str(root), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "CLAWMEM_VECTORS": "0"}


def make_workspace(ws: Path) -> Path:
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n")
    log = ws / "memory" / f"{DAY}.md"
    log.write_text(HEAD, encoding="utf-8")
    return log


def measure(ws: Path, writer: str, beside: str, seconds: float) -> dict:
    """Run ``writer`` ("held" at 250 lines/s, or "grouped") on the day's log for ``seconds``
    beside ``beside`` ("retain": a retain loop into the same log; "watch": ``clawmem watch``);
    the lines written, lost (or doubled), and what the other side did."""
    log = ws / "memory" / f"{DAY}.md"
    first_inode = os.stat(log).st_ino  # a log only appended to is the same file at the end
    stop = ws.parent / f"stop-{writer}-{beside}"
    stop.unlink(missing_ok=True)
    env = _env()
    subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "index"],
        env=env,
        capture_output=True,
        check=True,
    )
    if beside == "retain":
        other = subprocess.Popen(
            [sys.executable, "-c", RETAIN_LOOP, str(ws), str(stop), DAY],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    else:
        other = subprocess.Popen(
            [sys.executable, "-m", "clawmem", "-w", str(ws), "watch", "--debounce-ms", "50"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    if writer == "held":
        cmd = [sys.executable, "-c", HELD, str(log), str(stop), "250"]
    else:
        cmd = ["bash", "-c", GROUPED, "grouped", str(log), str(stop)]
    w = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(seconds)
    stop.touch()
    written = int(w.communicate(timeout=60)[0].strip() or 0)
    if beside == "watch":
        time.sleep(0.5)
        other.terminate()
    out, err = other.communicate(timeout=120)
    text = log.read_text(encoding="utf-8")
    lines = text.splitlines()
    counts: dict[str, int] = {}
    for ln in lines:
        counts[ln] = counts.get(ln, 0) + 1
    if writer == "held":
        expected = [f"held line {n} from a logger" for n in range(written)]
    else:
        expected = [f"grouped {i} {ab}" for i in range(written) for ab in ("a", "b")]
    lost = sum(counts.get(e, 0) != 1 for e in expected)
    side = {"retain": "retains", "watch": "syncs"}[beside]
    done = int(out.strip() or 0) if beside == "retain" else err.count(" synced (")
    failed = "Traceback" in err or (beside == "retain" and other.returncode != 0)
    retained = sum(ln.startswith("- W: retained fact number") for ln in lines)
    return {
        "writer": writer,
        "beside": beside,
        "seconds": seconds,
        "lines_written": len(expected),
        "lines_lost": lost,
        side: done,
        "facts_in_log": retained if beside == "retain" else None,
        "inode_kept": os.stat(log).st_ino == first_inode,
        "error": err[-400:] if failed else "",
    }


def run(seconds: float, work: Path) -> list[dict]:
    out = []
    for writer in ("held", "grouped"):
        for beside in ("retain", "watch"):
            ws = work / f"{writer}-{beside}" / "ws"
            make_workspace(ws)
            out.append(measure(ws, writer, beside, seconds))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="clawmem-open-writer-") as tmp:
        figures = run(args.seconds, Path(tmp))
    for f in figures:
        sys.stderr.write(
            f"{f['writer']:8} beside {f['beside']:7}: {f['lines_lost']} of {f['lines_written']} "
            f"lines lost; {f.get('retains', f.get('syncs'))} {'retains' if 'retains' in f else 'syncs'}"
            f"; same inode: {f['inode_kept']}\n"
        )
    print(json.dumps(figures, indent=1))
    return 1 if any(f["lines_lost"] or f["error"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
