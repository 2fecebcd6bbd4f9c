"""A hostile clone: a repository that commits links where clawmem keeps its files (issue 40).

git checks out symbolic links as links. Each repository here is a small workspace that commits
one kind of link out of it (every file of ``.memory/`` a link to a precious file; ``.memory``
itself a link to a folder; ``memory/episodes`` a link; an episode page a link), cloned with real
git. In each clone the commands a user and an agent run (recall, index, status, retain, reflect,
``flush --hook`` with a real payload, check, get, context) run as processes; afterwards not one
byte outside the workspace may have changed (a tree of sentinel files hashed before and after),
and no command may have crashed (a traceback, or an exit without clawmem's one-line error).
``tests/test_hostile_clone.py`` does the same with watch and the git hooks too.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .workspace import child_env, clawmem_cmd

# Every file clawmem keeps in .memory/ (and some it may keep one day), each committed as a link.
# tests/test_hostile_clone.py plants the same ones.
MEMORY_FILES = (
    "write.lock",
    "write.lock.owner",
    "write.lock.queue",
    "watch.lock",
    "watch.lock.owner",
    "watch.json",
    "watch.sock",
    "flush.log",
    "index.sqlite",
    "index.sqlite-wal",
    "index.sqlite-shm",
    "index.sqlite-journal",
    ".gitignore",
    "transcripts.json",
    "graph.html",
)
SID = "5b1d2c3e-0000-4000-8000-00000000abcd"


def sentinel(outside: Path) -> dict[str, str]:
    """Every entry under ``outside``: a file's sha256 and mode, a folder, a link's target."""
    seen = {}
    for folder, dirs, files in os.walk(outside):
        for name in dirs + files:
            p = Path(folder) / name
            rel = str(p.relative_to(outside))
            if p.is_symlink():
                seen[rel] = "link " + os.readlink(p)
            elif p.is_dir():
                seen[rel] = "dir"
            else:
                seen[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
                seen[rel + " mode"] = oct(p.stat().st_mode)
    return seen


def _transcript(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, (kind, text) in enumerate(
        [("user", "Which database for the ledger?"), ("assistant", "We decided on Postgres 16.")]
    ):
        lines.append(
            {
                "type": kind,
                "sessionId": SID,
                "uuid": f"u-{n}",
                "timestamp": f"2026-03-01T10:00:0{n}.000Z",
                "message": {"role": kind, "content": text},
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _plants(outside: Path) -> dict:
    def memory_links(repo: Path) -> None:
        (repo / ".memory").mkdir()
        for name in MEMORY_FILES:
            os.symlink(outside / "targets" / name, repo / ".memory" / name)

    def memory_dir(repo: Path) -> None:
        os.symlink(outside / "state", repo / ".memory")

    def episode_folder(repo: Path) -> None:
        os.symlink(outside / "episodes", repo / "memory" / "episodes")

    def episode_page(repo: Path) -> None:
        (repo / "memory" / "episodes").mkdir()
        os.symlink(outside / "page.md", repo / "memory" / "episodes" / f"2026-03-01-{SID}.md")

    return {
        ".memory full of links": memory_links,
        ".memory a link": memory_dir,
        "episode folder a link": episode_folder,
        "episode page a link": episode_page,
    }


def run_hostile(work: Path, log: Callable[[str], None]) -> dict[str, Any]:
    outside = work / "outside"
    (outside / "targets").mkdir(parents=True)
    for name in MEMORY_FILES:
        (outside / "targets" / name).write_text(f"precious {name}\n")
    (outside / "state").mkdir()
    (outside / "state" / "keep.txt").write_text("mine\n")
    (outside / "episodes").mkdir()
    (outside / "page.md").write_text("# my page\n\nprivate words\n")
    transcript = work / "agent" / "proj" / f"{SID}.jsonl"
    _transcript(transcript)
    env = {**child_env(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(work / "gitconfig")}
    (work / "gitconfig").write_text("[user]\n\tname = s\n\temail = s@example.invalid\n")
    before = sentinel(outside)
    failures: list[str] = []
    commands = 0
    for i, (name, plant) in enumerate(_plants(outside).items()):
        src = work / f"src-{i}"
        (src / "memory").mkdir(parents=True)
        (src / "MEMORY.md").write_text("# Memory\n\n- We use Postgres for the ledger.\n")
        (src / "memory" / "2026-03-01.md").write_text("# 2026-03-01\n\n## Retain\n- W: postgres\n")
        plant(src)
        subprocess.run(["git", "init", "-q"], cwd=src, env=env, check=True)
        subprocess.run(["git", "add", "-A", "-f"], cwd=src, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "hostile"], cwd=src, env=env, check=True)
        clone = work / f"clone-{i}"
        subprocess.run(["git", "clone", "-q", str(src), str(clone)], env=env, check=True)
        payload = json.dumps(
            {"transcript_path": str(transcript), "hook_event_name": "PreCompact", "cwd": str(clone)}
        )
        for args, stdin in (
            (("recall", "postgres", "--mode", "lexical"), None),
            (("index",), None),
            (("status",), None),
            (("retain", "The ledger moved to Postgres 17.", "--date", "2026-03-02"), None),
            (("reflect",), None),
            (("flush", "--hook"), payload),
            (("check",), None),
            (("get", "MEMORY.md"), None),
            (("context", "what database do we use?"), None),
        ):
            commands += 1
            r = subprocess.run(
                clawmem_cmd(clone, *args),
                input=stdin,
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            if "Traceback" in r.stderr or (r.returncode and "clawmem: error:" not in r.stderr):
                failures.append(f"{name}: {' '.join(args)}: exit {r.returncode}: {r.stderr[-300:]}")
    after = sentinel(outside)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        failures.append(f"changed outside the workspace: {', '.join(changed)}")
    log(f"hostile: {len(_plants(outside))} clones, {commands} commands, {len(changed)} changed")
    return {
        "clones": len(_plants(outside)),
        "commands": commands,
        "outside_entries_changed": len(changed),
        "crashes": len(failures) - (1 if changed else 0),
        "failures": failures[:50],
    }
