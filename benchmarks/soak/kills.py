"""SIGKILL at random moments of every command that writes, then check what it left.

Each round picks a target (full rebuild, incremental sync, retain, reflect, the watcher), gives it
work, starts it as a user would (``python -m clawmem ...``, through ``victim``, which records
which phase the process is in) and kills it at a seeded random fraction of the target's running
time as measured during the soak (a running estimate from uninterrupted runs of the same
command, so that kills keep landing across the whole command when the machine's load changes).
Then, in this order:

1. right after the kill: ``PRAGMA integrity_check`` is ok and the index answers a recall;
2. every Markdown byte is the old or the new content: rebuild, sync and watch change no Markdown;
   retain adds its one whole line or nothing; each file reflect touches is either as before or
   exactly as the uninterrupted run writes it;
3. the next run of the same command completes, and no temporary file survives it;
4. after a sync the index equals a clean rebuild of the same Markdown (``workspace.converges``);
5. every fact retained is in the Markdown and in the index exactly once (lost or duplicated: 0).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from .victim import PHASES, read_marks
from .workspace import (
    ENTITIES,
    WORDS,
    answers,
    child_env,
    clawmem_cmd,
    converges,
    count_fact,
    files_match,
    integrity,
    leftovers,
    make_workspace,
    markdown,
    mem,
)

TARGETS = ("rebuild", "sync", "retain", "reflect", "watch")
RETAIN_DAY = "2025-12-01"
TODAY = date(2025, 12, 31)


def _edit(ws: Path, rnd: random.Random, round_: int) -> None:
    """What a user does between two syncs: edits, a deletion, a new file."""
    files = sorted((ws / "memory").glob("2024-*.md"))
    for p in rnd.sample(files, min(len(files), 25)):
        lines = p.read_text(encoding="utf-8").splitlines()
        lines.insert(rnd.randrange(1, len(lines)), f"Round {round_} {rnd.choice(WORDS)} edit.")
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if len(files) > 40:
        rnd.choice(files).unlink()
    day = f"2024-{rnd.randrange(1, 13):02}-{rnd.randrange(1, 29):02}"
    new = ws / "memory" / f"{day}.md"
    if not new.exists():
        new.write_text(f"# {day}\n\nNew in round {round_}: the {rnd.choice(WORDS)} plan.\n")


def _new_facts(ws: Path, rnd: random.Random, round_: int) -> None:
    """Facts written by hand, for reflect to turn into entity pages and opinions."""
    day = f"2025-11-{rnd.randrange(1, 29):02}"
    log = ws / "memory" / f"{day}.md"
    text = log.read_text(encoding="utf-8") if log.exists() else f"# {day}\n"
    if "## Retain" not in text:
        text += "\n## Retain\n"
    for i in range(3):
        kind = rnd.choice("WBO")
        conf = f"(c={rnd.choice(['0.6', '0.8', '0.9'])})" if kind == "O" else ""
        ent = rnd.choice(ENTITIES)
        text += f"- {kind}{conf} @{ent}: {rnd.choice(WORDS)} {rnd.choice(WORDS)} r{round_}f{i}.\n"
    log.write_text(text, encoding="utf-8")


def _args(target: str, token: str) -> list[str]:
    if target == "rebuild":
        return ["index", "--force", "--quiet"]
    if target == "sync":
        return ["index", "--quiet"]
    if target == "retain":
        fact = f"The {token} count was checked."
        return ["retain", fact, "--entity", "Peter", "--date", RETAIN_DAY]
    if target == "reflect":
        return ["reflect", "--today", TODAY.isoformat(), "--quiet"]
    return ["watch", "--debounce-ms", "100"]


def _victim_cmd(ws: Path, marks: Path, *args: str) -> list[str]:
    """``python -m clawmem --workspace WS ARGS`` through ``victim``, which marks its phases."""
    return [sys.executable, "-m", "benchmarks.soak.victim", str(marks), *clawmem_cmd(ws, *args)[3:]]


class Durations:
    """How long each target takes now, and when each of its phases begins.

    Load on a shared machine changes by a factor of several within minutes; a duration measured
    once at the start sends kills before the victim writes anything once the load rises. So the
    next run of a killed command, which the checks need anyway, is run as a timed process every
    third round of its target (the others run in this process, which is cheaper): the median of
    the last three such runs is the target's duration, and the phases the last one marked (with
    their start times) are where aimed kills go (``moment``)."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {t: [] for t in TARGETS}
        self.phases: dict[str, list[tuple[str, float, float]]] = {t: [] for t in TARGETS}
        self.starts: list[float] = []

    def add(self, target: str, seconds: float, marks: list[tuple[str, float]]) -> None:
        self.samples[target] = [*self.samples[target][-2:], seconds]
        start = next((t for ph, t in marks if ph == "before writing"), None)
        if start is not None:
            self.starts = [*self.starts[-4:], start]
            # (phase, from, to) for every phase from the command's start to its end
            ends = [t for _, t in marks[1:]] + [seconds]
            spans = [(ph, t, e) for (ph, t), e in zip(marks, ends, strict=True)]
            self.phases[target] = [sp for sp in spans if sp[1] >= start and sp[0] != "finished"]

    def duration(self, target: str) -> float:
        s = sorted(self.samples[target])
        return s[len(s) // 2]

    def aim(
        self, target: str, u_mode: float, u_phase: float, u_occ: float, u_pos: float
    ) -> tuple[str, int, float]:
        """Where to kill, from four seeded fractions: (phase, its occurrence, seconds after it
        began), or ("anywhere", 0, seconds after the start).

        Half the kills land anywhere between 0.9 x the start of clawmem's code and 1.05 x the
        duration (where the time goes). The other half pick one of the phases the last timed run
        passed through (each phase as likely as any other, then one of its occurrences), and the
        soak kills that far into it after the victim marks it, so that phases lasting
        milliseconds (a rename, a swap, an index transaction) are hit too: a delay from the
        start could not aim at them, the start-up alone varies by more than they last."""
        start = sorted(self.starts)[len(self.starts) // 2]
        spans = self.phases[target]
        if u_mode < 0.5 or not spans:
            lo, hi = start * 0.9, max(self.duration(target), start) * 1.05
            return "anywhere", 0, lo + u_pos * (hi - lo)
        names = list(dict.fromkeys(ph for ph, _, _ in spans))
        name = names[min(int(u_phase * len(names)), len(names) - 1)]
        occ = [(t0, t1) for ph, t0, t1 in spans if ph == name]
        k = min(int(u_occ * len(occ)), len(occ) - 1)
        t0, t1 = occ[k]
        return name, k + 1, u_pos * (t1 - t0)


def _kill_at(
    p: subprocess.Popen, marks: Path, aim: tuple[str, int, float], t_start: float, limit: float
) -> None:
    """Sleep until the aimed moment (the victim's ``k``-th mark of the phase, plus the offset;
    or the offset from the start), then SIGKILL the victim if it still runs."""
    phase, k, offset = aim
    if phase != "anywhere":
        deadline = t_start + limit
        while p.poll() is None and time.monotonic() < deadline:
            if sum(ph == phase for _, ph in read_marks(marks)) >= k:
                break
            time.sleep(0.001)
        t_start = time.monotonic()
    time.sleep(max(0.0, t_start + offset - time.monotonic()))
    if p.poll() is None:
        p.kill()


def _timed_run(
    ws: Path, work: Path, target: str, token: str
) -> tuple[float, list[tuple[str, float]]]:
    """The target's command uninterrupted, as a process: (seconds, its marks from its start).
    The watcher, a daemon, runs until it has synced at start (and written its state, which
    removes a temporary copy a killed watcher left), then is stopped with SIGTERM."""
    marks = work / "marks-timed"
    marks.unlink(missing_ok=True)
    t0 = time.monotonic()
    cmd = _victim_cmd(ws, marks, *_args(target, token))
    if target == "watch":
        p = subprocess.Popen(
            cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            text=True, env=child_env(),
        )  # fmt: skip
        assert p.stderr is not None
        lines = []
        for line in p.stderr:  # the daemon logs each sync on stderr
            lines.append(line)
            if "synced (start)" in line or "error" in line:
                break
        seconds = time.monotonic() - t0 + 1.5  # and some idle time, where events arrive
        p.terminate()
        rest = p.communicate(timeout=120)[1]
        if not any("synced (start)" in line for line in lines):
            raise RuntimeError(f"watch did not sync: {''.join(lines)[-300:]}{rest[-300:]}")
    else:
        r = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            timeout=600,
        )
        seconds = time.monotonic() - t0
        if r.returncode != 0:
            raise RuntimeError(f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return seconds, [(ph, t - t0) for t, ph in read_marks(marks)]


def _next_run(
    ws: Path, work: Path, target: str, token: str, durations: Durations, timed: bool
) -> None:
    """The same command again, uninterrupted: as a timed process (``timed``, and the watcher
    always: a daemon's next run is the daemon), else in this process (the same library code);
    then a sync."""
    if timed or target == "watch":
        seconds, marks = _timed_run(ws, work, target, token)
        if timed:
            durations.add(target, seconds, marks)
    else:
        m = mem(ws)
        if target == "rebuild":
            m.index(force=True)
        elif target == "retain":
            m.retain(f"The {token} count was checked.", entities=["Peter"], day=RETAIN_DAY)
        elif target == "reflect":
            m.reflect(today=TODAY)
    mem(ws).index()


def run_kills(work: Path, seconds: float, seed: int, log: Callable[[str], None]) -> dict[str, Any]:  # noqa: C901 - the soak steps run in sequence, each checking its own outcome
    rnd = random.Random(seed)
    ws = work / "ws"
    make_workspace(ws, 40, seed=seed)
    (ws / "memory" / f"{RETAIN_DAY}.md").write_text(f"# {RETAIN_DAY}\n\nMorning notes.\n")
    mem(ws).index()
    # How long each target runs uninterrupted, so that kills land while it works (re-measured
    # during the run: ``Durations``).
    work.mkdir(parents=True, exist_ok=True)
    durations = Durations()
    for target in TARGETS:
        durations.add(target, *_timed_run(ws, work, target, "warmup"))
    initial = {t: durations.samples[t][-1] for t in TARGETS}
    expected = {"warmup"}  # retained facts, each must be found exactly once
    absent: set[str] = set()  # killed before writing: must be found nowhere
    # The figures, of several kinds (counts, lists, per-target tables): the soak's JSON.
    fig: dict[str, Any] = {
        "kills": 0,
        "rounds": 0,
        "exited_before_kill": 0,
        "by_target": {t: 0 for t in TARGETS},
        "corruptions": 0,
        "no_answer": 0,
        "markdown_damaged": 0,
        "not_converged": 0,
        "leftover_temp_files": 0,
        "lost_facts": 0,
        "duplicated_facts": 0,
        "kills_mid_rebuild": 0,
        "rebuild_comparisons": 0,
        # Where each kill landed, per target: the phase the victim had marked last.
        "kill_points": {t: {} for t in TARGETS},
        # Each kill's moment as a fraction of the running time measured last (0: Popen).
        "kill_fractions": {t: [] for t in TARGETS},
        "aimed_at_a_phase": 0,
        "failures": [],
    }
    t_end = time.monotonic() + seconds
    round_ = 0
    while time.monotonic() < t_end:
        round_ += 1
        target = TARGETS[(round_ - 1) % len(TARGETS)]
        token = f"heron{seed}r{round_}"
        if target in ("sync", "watch"):
            _edit(ws, rnd, round_)
        elif target == "reflect":
            _new_facts(ws, rnd, round_)
        before = markdown(ws)
        # The seeded choices are fractions; the moment is where they fall in the times measured
        # now (so the same seed makes the same choices under any load).
        aim = durations.aim(target, rnd.random(), rnd.random(), rnd.random(), rnd.random())
        aimed = aim[0]
        marks = work / "marks"
        marks.unlink(missing_ok=True)
        t_start = time.monotonic()
        p = subprocess.Popen(
            _victim_cmd(ws, marks, *_args(target, token)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=child_env(),
        )
        _kill_at(p, marks, aim, t_start, limit=durations.duration(target) * 3 + 5)
        alive = p.returncode is None
        p.wait()
        delay = time.monotonic() - t_start
        seen = read_marks(marks)
        phase = seen[-1][1] if seen else PHASES[0]
        if alive and phase != "finished":
            fig["kills"] += 1
            fig["by_target"][target] += 1
            points = fig["kill_points"][target]
            points[phase] = points.get(phase, 0) + 1
            fig["kill_fractions"][target].append(round(delay / durations.duration(target), 3))
            fig["aimed_at_a_phase"] += aimed != "anywhere"
        else:  # it had finished (its exit raced the kill): a run, not a kill
            fig["exited_before_kill"] += 1
        fig["rounds"] += 1
        fig["kills_mid_rebuild"] += bool(list((ws / ".memory").glob("index.sqlite.rebuild-*")))

        def fail(
            what: str,
            key: str,
            r: int = round_,
            t: str = target,
            d: float = delay,
            ph: str = phase,
            a: str = aimed,
        ) -> None:
            fig[key] += 1
            fig["failures"].append(
                f"round {r} ({t}, killed at {d:.2f} s in {ph!r}, aimed at {a!r}): {what}"
            )
            log(f"  FAIL {fig['failures'][-1]}")

        status = integrity(ws)
        if status != "ok":
            fail(f"integrity_check: {status[:200]}", "corruptions")
        elif not answers(ws):
            fail("the index answers no recall", "no_answer")
        mid = markdown(ws)
        bad = _markdown_problem(target, before, mid, token)
        if target == "retain" and bad is None:
            (expected if token in mid[f"memory/{RETAIN_DAY}.md"].decode() else absent).add(token)
        try:
            # Each target's duration is re-measured every third time it comes round.
            timed = (round_ - 1) // len(TARGETS) % 3 == 2
            _next_run(ws, work, target, f"{token}next", durations, timed)
            if target == "retain":
                expected.add(f"{token}next")
        except Exception as exc:  # noqa: BLE001 - a figure, with its message
            fail(f"the next run failed: {type(exc).__name__}: {exc}", "not_converged")
            continue
        if target == "reflect" and bad is None:
            after = markdown(ws)
            torn = [k for k, v in mid.items() if v != before.get(k) and v != after.get(k)]
            if torn:
                bad = f"reflect left files neither old nor new: {torn[:5]}"
        if bad:
            fail(bad, "markdown_damaged")
        left = leftovers(ws)
        if left:
            fail(f"temporary files after the next run: {left[:5]}", "leftover_temp_files")
            for name in left:  # counted once; clear them so later rounds report their own
                (ws / name).unlink(missing_ok=True)
        # Every round: the index's files are exactly the files on disk, with their hashes.
        # Every fourth round, and the last: the whole index equals a clean rebuild (the costly
        # check; the state it checks carries every earlier round's effects).
        diff = files_match(ws)
        if diff is None and (round_ % 4 == 0 or time.monotonic() >= t_end):
            diff = converges(ws, work)
            fig["rebuild_comparisons"] += 1
        if diff:
            fail(f"index differs from a clean rebuild: {diff}", "not_converged")
            mem(ws).index(force=True)
        if round_ % 10 == 0:
            log(f"  kills: round {round_}, {fig['kills']} kills, {len(fig['failures'])} failures")
    for token in sorted(expected):
        md, ix = count_fact(ws, f"The {token} count")
        if md == 0 or ix == 0:
            fig["lost_facts"] += 1
            fig["failures"].append(f"fact {token}: lost (Markdown {md}, index {ix})")
        elif md > 1 or ix > 1:
            fig["duplicated_facts"] += 1
            fig["failures"].append(f"fact {token}: duplicated (Markdown {md}, index {ix})")
    for token in sorted(absent):
        md, ix = count_fact(ws, f"The {token} count")
        if md or ix:
            fig["duplicated_facts"] += 1
            fig["failures"].append(f"fact {token}: killed before writing, yet found ({md}, {ix})")
    fig["facts_retained"] = len(expected)
    fig["durations_s"] = {k: round(v, 2) for k, v in initial.items()}
    fig["durations_last_s"] = {
        t: round(sorted(v)[len(v) // 2], 2) for t, v in durations.samples.items()
    }
    fig["startup_s"] = round(sorted(durations.starts)[len(durations.starts) // 2], 2)
    fig["kill_points"] = {
        t: {ph: pts[ph] for ph in PHASES if ph in pts} for t, pts in fig["kill_points"].items()
    }
    shutil.rmtree(ws, ignore_errors=True)
    return fig


def _markdown_problem(
    target: str, before: dict[str, bytes], mid: dict[str, bytes], token: str
) -> str | None:
    if target in ("rebuild", "sync", "watch", "reflect"):
        if target != "reflect" and mid != before:
            changed = sorted(k for k in set(before) | set(mid) if before.get(k) != mid.get(k))
            return f"{target} changed Markdown: {changed[:5]}"
        if target == "reflect":
            gone = sorted(set(before) - set(mid))
            return f"reflect deleted {gone[:5]}" if gone else None
        return None
    # retain: the day's log keeps every old line in order and gains one whole line, or nothing.
    key = f"memory/{RETAIN_DAY}.md"
    # Who wrote the fact (.clawmem/writers, read by `clawmem history`) may gain lines: appended
    # only, never rewritten.
    writers = ".clawmem/writers"
    if not mid.get(writers, b"").startswith(before.get(writers, b"")):
        return "retain rewrote .clawmem/writers"
    others_b = {k: v for k, v in before.items() if k not in (key, writers)}
    others_m = {k: v for k, v in mid.items() if k not in (key, writers)}
    if others_b != others_m:
        return "retain changed another file"
    try:
        old = before[key].decode("utf-8").splitlines()
        new = mid[key].decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return "retain left invalid UTF-8"
    if not mid[key].endswith(b"\n"):
        return "retain left a last line without its newline"
    added = [line for line in new if line not in old]
    if [line for line in old if line not in new]:
        return "retain lost a line"
    if added and (len(added) != 1 or f"The {token} count was checked." not in added[0]):
        return f"retain added {added!r}"
    if len(new) != len(old) + len(added):
        return "retain duplicated a line"
    return None
