"""SIGKILL at random moments of every command that writes, then check what it left.

Each round picks a target (full rebuild, incremental sync, retain, reflect, the watcher), gives it
work, starts it as a user would (``python -m clawmem ...``) and kills it after a seeded random
delay inside its measured running time. Then, in this order:

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
import time
from datetime import date
from pathlib import Path

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


def _next_run(ws: Path, target: str, token: str) -> None:
    """The same command again, uninterrupted (in this process: the same library code)."""
    m = mem(ws)
    if target == "rebuild":
        m.index(force=True)
    elif target == "retain":
        m.retain(f"The {token} count was checked.", entities=["Peter"], day=RETAIN_DAY)
    elif target == "reflect":
        m.reflect(today=TODAY)
    m.index()


def run_kills(work: Path, seconds: float, seed: int, log) -> dict:
    rnd = random.Random(seed)
    ws = work / "ws"
    make_workspace(ws, 40, seed=seed)
    (ws / "memory" / f"{RETAIN_DAY}.md").write_text(f"# {RETAIN_DAY}\n\nMorning notes.\n")
    mem(ws).index()
    # How long each target runs uninterrupted, so that kills land while it works.
    duration: dict[str, float] = {}
    t0 = time.monotonic()
    subprocess.run(clawmem_cmd(ws, "--version"), capture_output=True, env=child_env())
    startup = time.monotonic() - t0  # kills before clawmem's own code runs test nothing
    for target in TARGETS:
        if target == "watch":
            duration[target] = startup + 2.0
            continue
        t0 = time.monotonic()
        r = subprocess.run(
            clawmem_cmd(ws, *_args(target, "warmup")),
            capture_output=True,
            text=True,
            env=child_env(),
        )
        assert r.returncode == 0, r.stderr
        duration[target] = time.monotonic() - t0
    expected = {"warmup"}  # retained facts, each must be found exactly once
    absent: set[str] = set()  # killed before writing: must be found nowhere
    fig = {
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
        delay = rnd.uniform(startup * 0.9, max(duration[target], startup) * 1.05)
        p = subprocess.Popen(
            clawmem_cmd(ws, *_args(target, token)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=child_env(),
        )
        time.sleep(delay)
        alive = p.poll() is None
        if alive:
            p.kill()
            fig["kills"] += 1
            fig["by_target"][target] += 1
        else:
            fig["exited_before_kill"] += 1
        p.wait()
        fig["rounds"] += 1
        fig["kills_mid_rebuild"] += bool(list((ws / ".memory").glob("index.sqlite.rebuild-*")))

        def fail(what: str, key: str, r=round_, t=target, d=delay) -> None:
            fig[key] += 1
            fig["failures"].append(f"round {r} ({t}, killed at {d:.2f} s): {what}")
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
            _next_run(ws, target, f"{token}next")
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
    fig["durations_s"] = {k: round(v, 2) for k, v in duration.items()}
    fig["startup_s"] = round(startup, 2)
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
    others_b = {k: v for k, v in before.items() if k != key}
    others_m = {k: v for k, v in mid.items() if k != key}
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
