"""The git pre-commit hook: refresh the index, then ``clawmem check``.

``install`` never replaces a hook someone already has:

- no hook yet: we create ``#!/bin/sh`` plus our block;
- a shell hook: our block goes right after its ``#!`` line (not at the end, where an ``exit 0``
  would skip it); the rest of the file is untouched;
- any other hook (Python, Node, a binary): it is renamed to ``pre-commit.clawmem-chained`` and a
  small shell hook runs our block, then ``exec``\\ s it with the same arguments.

The block is delimited by marker lines that also record which of the three it was, so
``uninstall`` can undo exactly that: delete the file we created, cut our lines out (the original
bytes come back unchanged), or rename the chained hook back.

What the block runs, ``clawmem hook run``, exits non-zero only when ``clawmem check`` finds
problems and the hook was installed with ``--strict``: a broken or locked index prints a warning and
lets the commit through, and the shell block itself lets any other exit status through too.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from clawmem.errors import CheckFailed, ClawmemError, LockedError, UsageError, WorkspaceError
from clawmem.files.atomic import write_atomic

HOOK_NAME = "pre-commit"
CHAINED_SUFFIX = ".clawmem-chained"
BEGIN_RE = re.compile(r"^# >>> clawmem hook \((created|inserted|chained)\) >>>$", re.M)
END_LINE = "# <<< clawmem hook <<<"
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"}
# The hook's own exit status that blocks a commit: CheckFailed's, so `git commit` shows why.
BLOCKING_EXIT = CheckFailed.exit_code
# A writer (the watch daemon) holding the index for longer than this is left to finish on its own.
HOOK_LOCK_TIMEOUT = 3.0


@dataclass(frozen=True)
class HookTarget:
    hook: Path  # .../hooks/pre-commit
    toplevel: Path  # the repository's working tree root, where git runs hooks
    workspace_rel: str  # the workspace relative to ``toplevel`` ("." when it is the root)


def _git(args: list[str], cwd: Path) -> str:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
        )
    except FileNotFoundError:
        raise UsageError("git is not installed (or not on PATH)") from None
    if proc.returncode != 0:
        raise WorkspaceError(
            f"{cwd}: not inside a git repository ({proc.stderr.strip() or 'git failed'})",
            hint="run `git init` in the workspace (or a parent folder) first",
        )
    return proc.stdout.strip()


def locate(root: Path) -> HookTarget:
    """The pre-commit hook for the repository holding ``root``; honours ``core.hooksPath``."""
    top = Path(_git(["rev-parse", "--show-toplevel"], root)).resolve()
    # --git-path applies core.hooksPath (relative values are relative to the working tree).
    hooks = _git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], root)
    rel = os.path.relpath(root.resolve(), top)
    return HookTarget(Path(hooks) / HOOK_NAME, top, Path(rel).as_posix())


def _block(mode: str, target: HookTarget, strict: bool, python: str) -> str:
    ws = shlex.quote(target.workspace_rel)
    py = shlex.quote(python)
    run = f"--workspace {ws} hook run" + (" --strict" if strict else "")
    lines = [
        f"# >>> clawmem hook ({mode}) >>>",
        "# Added by `clawmem hook install`; `clawmem hook uninstall` removes exactly this block.",
        "# Refreshes clawmem's index and runs `clawmem check`. Only check findings block a commit,",
        "# and only when installed with --strict; an index problem is a warning.",
        # `|| status=$?` rather than `$?` afterwards: a hook running under `sh -e` must not stop.
        "clawmem_hook_status=0",
        f"if [ -x {py} ]; then",
        f"  {py} -m clawmem {run} || clawmem_hook_status=$?",
        "elif command -v clawmem >/dev/null 2>&1; then",
        f"  clawmem {run} || clawmem_hook_status=$?",
        "else",
        "  echo 'clawmem hook: clawmem not found; index not refreshed' >&2",
        "fi",
        f'if [ "$clawmem_hook_status" -eq {BLOCKING_EXIT} ]; then exit {BLOCKING_EXIT}; fi',
        'if [ "$clawmem_hook_status" -ne 0 ]; then',
        '  echo "clawmem hook: warning: exit status $clawmem_hook_status; commit not blocked" >&2',
        "fi",
    ]
    if mode == "chained":
        lines += [
            "# The pre-commit hook that was here before clawmem's, unchanged:",
            f'exec "$(dirname "$0")/{HOOK_NAME}{CHAINED_SUFFIX}" "$@"',
        ]
    lines.append(END_LINE)
    return "\n".join(lines) + "\n"


def _find_block(text: str) -> tuple[int, int, str] | None:
    """(start, end, mode) of our block in ``text``, ``end`` just past the END line's newline."""
    m = BEGIN_RE.search(text)
    if m is None:
        return None
    end = text.find(END_LINE, m.end())
    if end < 0:
        raise UsageError(
            "the pre-commit hook has clawmem's start marker but not its end marker",
            hint=f"edit the hook by hand: remove the lines from '{m.group(0)}' on",
        )
    end += len(END_LINE)
    if text.startswith("\n", end):
        end += 1
    return m.start(), end, m.group(1)


def _is_shell_script(data: bytes) -> bool:
    first = data.split(b"\n", 1)[0]
    if not first.startswith(b"#!") or b"\n" not in data:
        return False
    try:
        words = first[2:].decode().split()
    except UnicodeDecodeError:
        return False
    if not words:
        return False
    prog = os.path.basename(words[0])
    if prog == "env" and len(words) > 1:
        prog = os.path.basename(words[-1] if words[1].startswith("-") else words[1])
    return prog in SHELLS


def _write(path: Path, text: str, mode: int) -> None:
    """Replace ``path`` atomically: a commit running right now sees the old hook or the new one."""
    write_atomic(path, text.encode("utf-8", "surrogateescape"), mode=mode)


def install(root: Path, *, strict: bool = False, python: str | None = None) -> tuple[str, Path]:
    """Install (or update) the hook. Returns (what was done, hook path)."""
    target = locate(root)
    python = python or sys.executable
    hook = target.hook
    hook.parent.mkdir(parents=True, exist_ok=True)
    if not hook.exists():
        _write(hook, "#!/bin/sh\n" + _block("created", target, strict, python), 0o755)
        return "created", hook
    data = hook.read_bytes()
    mode = hook.stat().st_mode & 0o7777
    text = data.decode("utf-8", "surrogateescape")
    found = _find_block(text)
    if found is not None:
        start, end, how = found
        _write(hook, text[:start] + _block(how, target, strict, python) + text[end:], mode)
        return "updated", hook
    if _is_shell_script(data):
        first, rest = text.split("\n", 1)
        _write(hook, first + "\n" + _block("inserted", target, strict, python) + rest, mode)
        return "inserted", hook
    chained = hook.with_name(HOOK_NAME + CHAINED_SUFFIX)
    if chained.exists():
        raise UsageError(
            f"{chained} exists already",
            hint="it is left from an earlier install; move it back to pre-commit or delete it",
        )
    os.replace(hook, chained)  # keeps its bytes and mode exactly
    _write(hook, "#!/bin/sh\n" + _block("chained", target, strict, python), 0o755)
    return "chained", hook


def uninstall(root: Path) -> tuple[str, Path]:
    """Undo ``install``. Returns (what was done, hook path)."""
    target = locate(root)
    hook = target.hook
    if not hook.exists():
        return "not installed", hook
    data = hook.read_bytes()
    text = data.decode("utf-8", "surrogateescape")
    found = _find_block(text)
    if found is None:
        return "not installed", hook
    start, end, how = found
    rest = text[:start] + text[end:]
    mode = hook.stat().st_mode & 0o7777
    if how == "created":
        if rest == "#!/bin/sh\n":
            hook.unlink()
            return "removed", hook
        _write(hook, rest, mode)  # someone added their own lines after ours: keep them
        return "removed block", hook
    if how == "inserted":
        _write(hook, rest, mode)
        return "removed block", hook
    chained = hook.with_name(HOOK_NAME + CHAINED_SUFFIX)
    if not chained.exists():
        _write(hook, rest, mode)
        return "removed block (the chained hook was already gone)", hook
    if rest != "#!/bin/sh\n":
        raise UsageError(
            f"{hook} was edited after clawmem chained {chained.name}",
            hint=f"merge your edits into {chained.name}, delete {hook.name}, rename it back",
        )
    os.replace(chained, hook)
    return "restored", hook


# --------------------------------------------------------------------------- the hook itself
def _warn(message: str) -> None:
    sys.stderr.write(f"clawmem hook: {message}\n")


def run(workspace: Path | None, *, strict: bool = False) -> int:
    """What the hook runs. Returns the exit status: non-zero only for blocking check findings."""
    from clawmem.memory import open_workspace

    t0 = time.perf_counter()
    try:
        mem = open_workspace(workspace)
        # No embedding: a commit must not wait for a model; watch or the next recall embeds.
        report = mem.index(embed=False, lock_timeout=HOOK_LOCK_TIMEOUT)
    except LockedError as exc:
        _warn(f"warning: index not refreshed: {exc.message}")
    except ClawmemError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        _warn(f"warning: index not refreshed: {exc.message}{hint}")
    except Exception as exc:  # noqa: BLE001 - the index must never block a commit
        _warn(f"warning: index not refreshed: internal error: {type(exc).__name__}: {exc}")
    else:
        changed = report.files_indexed + report.files_removed
        if changed or report.rebuilt:
            _warn(
                f"index refreshed: {report.files_indexed} file(s) indexed, "
                f"{report.files_removed} removed ({time.perf_counter() - t0:.2f} s)"
            )
    return _run_check(workspace, strict)


def _run_check(workspace: Path | None, strict: bool) -> int:
    """``clawmem check`` through the library, in this process (a second interpreter would double
    the hook's time). Strictness is the hook's business: findings block only with --strict."""
    from clawmem.ingest.check import summary
    from clawmem.memory import open_workspace

    try:
        problems = open_workspace(workspace).check()
    except ClawmemError as exc:
        _warn(f"warning: `clawmem check` failed: {exc.message}; not blocking the commit")
        return 0
    except Exception as exc:  # noqa: BLE001 - only findings may block
        _warn(f"warning: `clawmem check` crashed: {type(exc).__name__}: {exc}; not blocking")
        return 0
    for p in problems:
        sys.stderr.write(f"{p['path']}:{p['line']}: {p['message']}\n")
    if not problems:
        return 0
    if strict:
        raise CheckFailed(
            summary(problems),
            hint="fix the lines above (grammar: docs/workspace.md), or commit with --no-verify",
        )
    _warn(f"check found {len(problems)} problem(s) (not blocking: installed without --strict)")
    return 0
