"""Commit the files clawmem just wrote (``[git] autocommit = true`` in clawmem.toml).

A workspace shared through git, written by agents that hold no clone of their own (a remote
agent over HTTP, a cron job): each fact retained is committed at once, so the clone never sits
on uncommitted work that a person has to notice. Only the named files go into the commit
(``git commit -- PATH``): what a person staged is left staged, not swept in. Pushing is left to
the recipe in docs/operations.md (a timer that pulls and pushes): a tool call must not wait for
the network or fail on a remote that moved.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# The pre-commit hook runs in the commit (a person's checks too): a slow one must not hang retain.
COMMIT_TIMEOUT = 60.0


def commit_files(root: Path, relpaths: list[str], message: str) -> str | None:
    """Commit exactly ``relpaths`` (relative to ``root``) with ``message``. None when committed;
    otherwise why not, in one line (never raises: the file is written whatever git says)."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=COMMIT_TIMEOUT,
            check=False,
        )

    try:
        inside = git("rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return "not committed: the workspace is not in a git repository"
        added = git("add", "--", *relpaths)
        if added.returncode != 0:
            return f"not committed: git add failed: {_last_line(added)}"
        done = git("commit", "-q", "-m", message, "--", *relpaths)
    except FileNotFoundError:
        return "not committed: git is not installed (or not on PATH)"
    except subprocess.TimeoutExpired:
        return f"not committed: git commit took over {COMMIT_TIMEOUT:.0f} s"
    if done.returncode != 0:
        return f"not committed: git commit failed: {_last_line(done)}"
    return None


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"
