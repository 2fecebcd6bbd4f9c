"""Commit the files clawmem just wrote (``[git] autocommit = true`` in clawmem.toml).

A workspace shared through git, written by agents that hold no clone of their own (a remote
agent over HTTP, a cron job): each fact retained is committed at once, so the clone never sits
on uncommitted work that a person has to notice. Only the named files go into the commit
(``git commit -- PATH``): what a person staged is left staged, not swept in. Pushing is left to
the recipe in docs/operations.md (a timer that pulls and pushes): a tool call must not wait for
the network or fail on a remote that moved.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

# The pre-commit hook runs in the commit (a person's checks too): a slow one must not hang retain.
COMMIT_TIMEOUT = 60.0


def _git(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=COMMIT_TIMEOUT,
        check=False,
        env=env,
    )


def commit_files(
    root: Path, relpaths: list[str], message: str, *, after_merge: bool = False
) -> str | None:
    """Commit exactly ``relpaths`` (relative to ``root``) with ``message``. None when committed;
    otherwise why not, in one line (never raises: the file is written whatever git says).

    ``after_merge``: called from the post-merge hook, where git still has ``MERGE_HEAD`` (it
    removes it once the hook is done), so ``git commit`` would take the finished merge for one
    in progress. The commit is then made with git's plumbing, on top of the merge commit."""
    try:
        inside = _git(root, "rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return "not committed: the workspace is not in a git repository"
        if after_merge and _git(root, "rev-parse", "-q", "--verify", "MERGE_HEAD").returncode == 0:
            return _commit_on_merge(root, relpaths, message)
        added = _git(root, "add", "--", *relpaths)
        if added.returncode != 0:
            return f"not committed: git add failed: {_last_line(added)}"
        done = _git(root, "commit", "-q", "-m", message, "--", *relpaths)
    except FileNotFoundError:
        return "not committed: git is not installed (or not on PATH)"
    except subprocess.TimeoutExpired:
        return f"not committed: git commit took over {COMMIT_TIMEOUT:.0f} s"
    if done.returncode != 0:
        return f"not committed: git commit failed: {_last_line(done)}"
    return None


def _commit_on_merge(root: Path, relpaths: list[str], message: str) -> str | None:
    """A commit of ``relpaths`` on top of the merge commit just made: its tree is HEAD's with
    these files as they are now (built in a temporary index, so nothing else a person staged is
    swept in), then the branch moves to it, and the files are staged as committed."""
    head = _git(root, "rev-parse", "HEAD").stdout.strip()
    parents = _git(root, "rev-parse", "HEAD^@").stdout.split()
    merging = _git(root, "rev-parse", "MERGE_HEAD").stdout.strip()
    if merging not in parents:  # a merge still being resolved: never commit on top of it
        return "not committed: a merge is in progress"
    with tempfile.TemporaryDirectory(prefix="clawmem-commit-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        steps = [
            ("read-tree", "HEAD"),
            ("update-index", "--add", "--", *relpaths),
            ("write-tree",),
        ]
        proc = None
        for step in steps:
            proc = _git(root, *step, env=env)
            if proc.returncode != 0:
                return f"not committed: git {step[0]} failed: {_last_line(proc)}"
    assert proc is not None
    tree = proc.stdout.strip()
    made = _git(root, "commit-tree", tree, "-p", head, "-m", message)
    if made.returncode != 0:
        return f"not committed: git commit-tree failed: {_last_line(made)}"
    commit = made.stdout.strip()
    moved = _git(root, "update-ref", "-m", f"commit: {message}", "HEAD", commit, head)
    if moved.returncode != 0:
        return f"not committed: git update-ref failed: {_last_line(moved)}"
    _git(root, "add", "--", *relpaths)  # the real index agrees with the new commit
    return None


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"
