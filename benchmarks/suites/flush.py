"""``python -m benchmarks.suites.flush``: what `clawmem flush --hook` costs the agent that waits for it.

Issue 34's target: a flush of a 2,000-message session within 1 s, the model never loaded. A
Claude Code hook runs a fresh process, so every figure is the wall time of one
`python -m clawmem flush --hook` process fed the PreCompact payload on stdin, as Claude Code feeds
it (and, beside it, the time the flush itself reported, without Python's start and imports).

The transcript is synthetic and seeded (this module writes it; no evaluation data): N user and
assistant messages in Claude Code's format, a tool call with its result after every other user
message, thinking blocks, a summary line, timestamps a few seconds apart. The workspace is a copy
of `fixtures/workspace/` indexed with vectors (by the deterministic test embedder: the flush
never embeds, but it keeps the index's vector space, so the index must have one); the
transcript's folder is not configured, as in the recipe.

Measured, median of --runs fresh processes:

- the first flush (no page yet, the transcript not indexed: all of it is read);
- the same again (nothing new: the page is unchanged, nothing is indexed);
- the next compaction: 10% more messages appended, then flushed.

Baselines in the same run: Python's own start (`python -c pass`), clawmem's (`--version`), and
`clawmem index --no-embed` of the same transcript with its folder configured (what indexing it
costs without the episode page).

Run: ``python -m benchmarks.suites.flush [--messages 2000] [--runs 5] [--out docs/benchmarks.md]``.
The section it writes is kept by ``python -m benchmarks`` (``__main__._write_report``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import REPO, WORK, log, machine, median, replace_section
from clawmem.config import trust

HEADING = "## Flush at compaction"
TARGET_S = 1.0
WORDS = (
    "the payments service refund webhook test flaky timeout redis staging deploy branch merge "
    "config database migration schema index query latency cache worker queue retry backoff "
    "logging metrics alert dashboard kubernetes pod container image build pipeline release "
    "version python typescript function module class error exception trace stack fix patch "
    "Peter Kenji pay-fsn1 test_refund_webhook DEC-0054 remember decided prefer"
).split()


def _sentence(r: random.Random, n: int | None = None) -> str:
    words = [r.choice(WORDS) for _ in range(n or r.randint(6, 22))]
    return " ".join(words).capitalize() + "."


class Transcript:
    """A seeded Claude Code transcript, written line by line."""

    def __init__(self, path: Path, seed: int = 34) -> None:
        self.path = path
        self.r = random.Random(seed)
        self.sid = f"5e551011-0000-4000-8000-{seed:012d}"
        self.t = 1_767_261_600.0  # 2026-01-01T10:00:00Z
        self.parent: str | None = None
        self.n = 0
        self._lines = [json.dumps({"type": "summary", "summary": "Payments", "leafUuid": "x"})]

    def _line(self, kind: str, message: dict, **extra: object) -> None:
        self.n += 1
        self.t += self.r.randint(2, 40)
        uid = f"{self.sid[:8]}-0000-4000-8000-{self.n:012d}"
        at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.t))
        self._lines.append(
            json.dumps(
                {
                    "parentUuid": self.parent,
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": "/home/me/code/payments-service",
                    "sessionId": self.sid,
                    "version": "2.0.14",
                    "gitBranch": "main",
                    "type": kind,
                    "message": message,
                    "uuid": uid,
                    "timestamp": at,
                    **extra,
                }
            )
        )
        self.parent = uid

    def messages(self, n: int) -> None:
        """Append ``n`` user and assistant messages (and the tool lines between them)."""
        r = self.r
        for i in range(n):
            if i % 2 == 0:
                text = " ".join(_sentence(r) for _ in range(r.randint(1, 4)))
                self._line("user", {"role": "user", "content": text})
                if r.random() < 0.5:
                    tid = f"toolu_{self.n:020d}"
                    use = {
                        "type": "tool_use",
                        "id": tid,
                        "name": "Bash",
                        "input": {"command": "pytest"},
                    }
                    think = {"type": "thinking", "thinking": _sentence(r, 30), "signature": "Eq"}
                    self._line("assistant", {"role": "assistant", "content": [think, use]})
                    out = "\n".join(_sentence(r, 12) for _ in range(r.randint(10, 60)))
                    result = {"tool_use_id": tid, "type": "tool_result", "content": out}
                    self._line(
                        "user",
                        {"role": "user", "content": [result]},
                        toolUseResult={"stdout": out, "stderr": ""},
                    )
            else:
                text = " ".join(_sentence(r) for _ in range(r.randint(2, 8)))
                blocks = [{"type": "text", "text": text}]
                self._line("assistant", {"role": "assistant", "content": blocks})

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(self._lines) + "\n", encoding="utf-8")

    def payload(self) -> str:
        return json.dumps(
            {
                "session_id": self.sid,
                "transcript_path": str(self.path),
                "cwd": "/home/me/code/payments-service",
                "permission_mode": "default",
                "hook_event_name": "PreCompact",
                "trigger": "auto",
                "custom_instructions": "",
            }
        )


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return {**env, **extra}


CPU: dict[str, list[float]] = {}  # CPU seconds (user + system) of each measured process, by name


def _timed(
    args: list[str], stdin: str = "", env: dict | None = None, name: str = ""
) -> tuple[float, str]:
    """Wall time of one process (and its CPU time under ``CPU[name]``): on two cores shared with
    other jobs the wall time swells with the load, the CPU time much less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, env=env or _env())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{args}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    if name:
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        CPU.setdefault(name, []).append(cpu)
    return wall, proc.stdout


def _template(folder: Path) -> Path:
    """The fixture workspace indexed with vectors (the test embedder), copied for each run."""
    ws = folder / "template"
    if not (ws / ".memory" / "index.sqlite").exists():
        shutil.rmtree(ws, ignore_errors=True)
        shutil.copytree(REPO / "fixtures" / "workspace", ws)
        code = (
            "import clawmem\nfrom clawmem.embedders.testing import HashEmbedder\n"
            f"clawmem.open_workspace({str(ws)!r}, embedder=HashEmbedder()).index()\n"
        )
        _timed([sys.executable, "-c", code])
    return ws


def _copy(template: Path, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(template, dest)
    return dest


def _flush(ws: Path, t: Transcript, name: str) -> tuple[float, dict]:
    args = [sys.executable, "-m", "clawmem", "-w", str(ws), "flush", "--hook", "--json"]
    wall, out = _timed(args, t.payload(), name=name)
    if not out.strip():
        raise RuntimeError(f"nothing flushed: {(ws / '.memory' / 'flush.log').read_text()[-500:]}")
    return wall, json.loads(out)


def run(messages: int, runs: int) -> dict:
    folder = WORK / "flush"
    folder.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    template = _template(folder)
    t = Transcript(folder / "home" / ".claude" / "projects" / "-home-me-code-payments" / "s.jsonl")
    t.messages(messages)
    t.write()
    lines = len(t._lines)
    size = t.path.stat().st_size
    first, again, grown = [], [], []
    inproc: dict[str, list[float]] = {"first": [], "again": [], "grown": []}
    pages = set()
    for i in range(runs):
        ws = _copy(template, folder / "ws")
        tr = Transcript(t.path, seed=34)  # the same transcript, rewritten for each run
        tr.messages(messages)
        tr.write()
        wall, res = _flush(ws, tr, "first")
        assert res["messages"] == messages and res["page_status"] == "written", res
        first.append(wall)
        inproc["first"].append(res["seconds"])
        pages.add(res["page"])
        wall, res = _flush(ws, tr, "again")
        assert res["page_status"] == "unchanged" and res["units_added"] == 0, res
        again.append(wall)
        inproc["again"].append(res["seconds"])
        tr.messages(messages // 10)
        tr.write()
        wall, res = _flush(ws, tr, "grown")
        assert res["messages"] == messages + messages // 10, res
        grown.append(wall)
        inproc["grown"].append(res["seconds"])
        log(f"flush run {i + 1}/{runs}: {first[-1]:.2f} / {again[-1]:.2f} / {grown[-1]:.2f} s")
    # Baselines, in the same run.
    python = [_timed([sys.executable, "-c", "pass"], name="python")[0] for _ in range(runs)]
    version = [
        _timed([sys.executable, "-m", "clawmem", "--version"], name="clawmem_version")[0]
        for _ in range(runs)
    ]
    index = []
    for _ in range(runs):
        ws = _copy(template, folder / "ws")
        (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{t.path.parent.parent}"]\n')
        trust.approve(ws)  # the transcripts folder is outside the workspace: our own setting
        t.write()
        args = [sys.executable, "-m", "clawmem", "-w", str(ws), "index", "--no-embed", "--json"]
        index.append(_timed(args, name="index_no_embed")[0])
    shutil.rmtree(folder / "ws", ignore_errors=True)
    return {
        "messages": messages,
        "transcript_lines": lines,
        "transcript_bytes": size,
        "runs": runs,
        "first": first,
        "again": again,
        "grown": grown,
        "in_process": inproc,
        "cpu": CPU,
        "python": python,
        "clawmem_version": version,
        "index_no_embed": index,
        "load": [load_start, os.getloadavg()],
        "machine": machine(),
        "at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }


def _ms(values: list[float]) -> str:
    m = median(values)
    return f"{m * 1000:.0f} ms" if m < 1 else f"{m:.2f} s"


def render(res: dict) -> str:
    n = res["messages"]
    first = median(res["first"])
    met = "met" if first <= TARGET_S else "**missed**"
    load = " / ".join(" ".join(f"{x:.2f}" for x in la) for la in res["load"])
    cpu, inproc = res["cpu"], res["in_process"]

    def row(what: str, key: str, inside: str = "") -> str:
        return f"| {what} | {_ms(res[key])} | {_ms(cpu[key])} | {inside} |"

    return "\n".join(
        [
            HEADING,
            "",
            f"`python -m benchmarks.suites.flush` ({res['at']}; load average at start / end {load}; "
            f"{res['machine'].get('cpu', '')}, {res['machine'].get('cores')} cores): a seeded "
            f"synthetic Claude Code transcript of {n:,} messages ({res['transcript_lines']:,} "
            "lines with the tool calls and results between them, "
            f"{res['transcript_bytes'] / 1e6:.1f} MB), flushed by a fresh "
            "`clawmem flush --hook` process fed the PreCompact payload, into a copy of the "
            "fixture workspace indexed with vectors; the transcript's folder is not configured. "
            f"Median of {res['runs']} runs: the process's wall time, its CPU time (user + "
            "system: what the load on a shared machine inflates least) and the time the flush "
            "reported itself, without Python's start and imports. The model is never loaded "
            "(tests/test_flush.py checks that llama.cpp is not even imported).",
            "",
            "| what | wall time | CPU time | in-process |",
            "|---|---|---|---|",
            row(
                f"first flush of {n:,} messages (page written, transcript indexed whole)",
                "first",
                _ms(inproc["first"]),
            ),
            row("the same again (nothing new: nothing written)", "again", _ms(inproc["again"])),
            row(f"the next compaction: {n // 10:,} messages more", "grown", _ms(inproc["grown"])),
            row("baseline: `python -c pass`", "python"),
            row("baseline: `clawmem --version`", "clawmem_version"),
            row(
                "baseline: `clawmem index --no-embed` of the same transcript, its folder "
                "configured (no episode page)",
                "index_no_embed",
            ),
            "",
            f"Target: a flush of a {n:,}-message session within {TARGET_S:.0f} s (wall time of "
            f"the first flush): {met} ({first:.2f} s; CPU {median(cpu['first']):.2f} s).",
            "",
        ]
    )


def write_section(section: str, path: Path) -> None:
    replace_section(path, HEADING, section)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.suites.flush", description=__doc__)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"), help="'-' for none")
    ap.add_argument("--json", default=str(WORK / "flush.json"))
    ap.add_argument("--render", help="re-render from a saved JSON, no measurements")
    args = ap.parse_args(argv)
    if args.render:
        res = json.loads(Path(args.render).read_text(encoding="utf-8"))
    else:
        res = run(args.messages, args.runs)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=1), encoding="utf-8")
    section = render(res)
    print(section)
    if args.out != "-":
        write_section(section, Path(args.out))


if __name__ == "__main__":
    main()
