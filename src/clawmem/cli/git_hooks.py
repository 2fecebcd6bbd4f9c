"""clawmem's git hooks and merge driver (the agents' hooks are `flush --hook` and `context --hook`).

- ``pre-commit``: refresh the index, then ``clawmem check``;
- ``post-merge``, ``post-checkout``, ``post-rewrite`` (after a pull, a checkout, a rebase): bring
  the index up to date with the files git just changed, without embedding (so no model load);
- the merge driver ``clawmem`` (``merge.clawmem.driver`` in the repository's config, named by
  the workspace's ``.gitattributes``): daily logs and generated sections merge without conflicts
  (the rules are ``clawmem.markdown.merging``'s).

``install`` never replaces a hook someone already has:

- no hook yet: we create ``#!/bin/sh`` plus our block;
- a shell hook: our block goes right after its ``#!`` line (not at the end, where an ``exit 0``
  would skip it); the rest of the file is untouched;
- any other hook (Python, Node, a binary, or a link to a hook elsewhere): it is renamed to
  ``<hook>.clawmem-chained`` and a small shell hook runs our block, then ``exec``\\ s it with
  the same arguments.

The block is delimited by marker lines that also record which of the three it was, so
``uninstall`` can undo exactly that: delete the file we created, cut our lines out (the original
bytes come back unchanged), or rename the chained hook back.

What the pre-commit block runs, ``clawmem hook run``, exits non-zero only when ``clawmem check``
finds problems and the hook was installed with ``--strict``: a broken or locked index prints a
warning and lets the commit through, and the shell block itself lets any other exit status through
too. The other hooks run ``clawmem hook sync``, which never fails (git has already done its work;
a post-checkout hook's exit status would become ``git checkout``'s).
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
from typing import TYPE_CHECKING

from clawmem.errors import (
    CheckFailed,
    ClawmemError,
    InputError,
    LockedError,
    UsageError,
    WorkspaceError,
)
from clawmem.files.atomic import write_atomic

if TYPE_CHECKING:
    from clawmem.memory import Memory

HOOK_NAME = "pre-commit"
# After these, files in the working tree changed under the index's feet.
SYNC_HOOKS = ("post-merge", "post-checkout", "post-rewrite")
HOOKS = (HOOK_NAME, *SYNC_HOOKS)
DRIVER = "clawmem"  # merge.clawmem.driver; .gitattributes says `merge=clawmem`
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
    hooks: Path  # the folder git runs hooks from (.git/hooks, or core.hooksPath)
    toplevel: Path  # the repository's working tree root, where git runs hooks
    workspace_rel: str  # the workspace relative to ``toplevel`` ("." when it is the root)

    @property
    def hook(self) -> Path:
        return self.hooks / HOOK_NAME


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
    """The hooks of the repository holding ``root``; honours ``core.hooksPath``."""
    top = Path(_git(["rev-parse", "--show-toplevel"], root)).resolve()
    # --git-path applies core.hooksPath (relative values are relative to the working tree).
    hooks = _git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], root)
    rel = os.path.relpath(root.resolve(), top)
    return HookTarget(Path(hooks), top, Path(rel).as_posix())


def _block(name: str, mode: str, target: HookTarget, strict: bool, python: str) -> str:
    if name == HOOK_NAME:
        lines = _commit_lines(mode, target, strict, python)
    else:
        lines = _sync_lines(name, mode, target, python)
    if mode == "chained":
        lines += [
            f"# The {name} hook that was here before clawmem's, unchanged:",
            f'exec "$(dirname "$0")/{name}{CHAINED_SUFFIX}" "$@"',
        ]
    lines.append(END_LINE)
    return "\n".join(lines) + "\n"


def _sync_lines(name: str, mode: str, target: HookTarget, python: str) -> list[str]:
    ws = shlex.quote(target.workspace_rel)
    py = shlex.quote(python)
    run = f'--workspace {ws} hook sync {name} "$@"'
    return [
        f"# >>> clawmem hook ({mode}) >>>",
        "# Added by `clawmem hook install`; `clawmem hook uninstall` removes exactly this block.",
        "# Brings clawmem's index up to date with the files git just changed (no embedding).",
        f"if [ -x {py} ]; then",
        f"  {py} -m clawmem {run} || :",
        "elif command -v clawmem >/dev/null 2>&1; then",
        f"  clawmem {run} || :",
        "fi",
    ]


def _commit_lines(mode: str, target: HookTarget, strict: bool, python: str) -> list[str]:
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
    return lines


def _find_block(text: str, name: str = HOOK_NAME) -> tuple[int, int, str] | None:
    """(start, end, mode) of our block in ``text``, ``end`` just past the END line's newline."""
    m = BEGIN_RE.search(text)
    if m is None:
        return None
    end = text.find(END_LINE, m.end())
    if end < 0:
        raise UsageError(
            f"the {name} hook has clawmem's start marker but not its end marker",
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


def install(
    root: Path, *, strict: bool = False, python: str | None = None
) -> list[tuple[str, Path]]:
    """Install (or update) every hook and register the merge driver. Returns (what was done,
    path) per hook, then for the driver (the repository's config file)."""
    target = locate(root)
    python = python or sys.executable
    target.hooks.mkdir(parents=True, exist_ok=True)
    done = [(_install_one(name, target, strict, python), target.hooks / name) for name in HOOKS]
    done.append(register_driver(root, python))
    return done


def _install_one(name: str, target: HookTarget, strict: bool, python: str) -> str:
    hook = target.hooks / name
    if not hook.exists():
        _write(hook, "#!/bin/sh\n" + _block(name, "created", target, strict, python), 0o755)
        return "created"
    data = hook.read_bytes()
    mode = hook.stat().st_mode & 0o7777
    text = data.decode("utf-8", "surrogateescape")
    found = _find_block(text, name)
    if found is not None:
        start, end, how = found
        new = text[:start] + _block(name, how, target, strict, python) + text[end:]
        if new == text:
            return "exists"
        _write(hook, new, mode)
        return "updated"
    # A linked hook (.git/hooks/pre-commit -> ../../scripts/pre-commit, a team's tracked hook)
    # is chained, the link itself moved aside: inserting our block wrote a copy over the link,
    # and uninstall left that copy, so the team's later changes to the script never ran.
    if _is_shell_script(data) and not hook.is_symlink():
        first, rest = text.split("\n", 1)
        _write(hook, first + "\n" + _block(name, "inserted", target, strict, python) + rest, mode)
        return "inserted"
    chained = hook.with_name(name + CHAINED_SUFFIX)
    if chained.exists():
        raise UsageError(
            f"{chained} exists already",
            hint=f"it is left from an earlier install; move it back to {name} or delete it",
        )
    os.replace(hook, chained)  # keeps its bytes and mode exactly
    _write(hook, "#!/bin/sh\n" + _block(name, "chained", target, strict, python), 0o755)
    return "chained"


def uninstall(root: Path) -> list[tuple[str, Path]]:
    """Undo ``install``. Returns (what was done, path) per hook, then for the driver."""
    target = locate(root)
    done = [(_uninstall_one(name, target), target.hooks / name) for name in HOOKS]
    done.append(unregister_driver(root))
    return done


def _uninstall_one(name: str, target: HookTarget) -> str:
    hook = target.hooks / name
    if not hook.exists():
        return "not installed"
    data = hook.read_bytes()
    text = data.decode("utf-8", "surrogateescape")
    found = _find_block(text, name)
    if found is None:
        return "not installed"
    start, end, how = found
    rest = text[:start] + text[end:]
    mode = hook.stat().st_mode & 0o7777
    if how == "created":
        if rest == "#!/bin/sh\n":
            hook.unlink()
            return "removed"
        _write(hook, rest, mode)  # someone added their own lines after ours: keep them
        return "removed block"
    if how == "inserted":
        _write(hook, rest, mode)
        return "removed block"
    chained = hook.with_name(name + CHAINED_SUFFIX)
    if not chained.exists():
        _write(hook, rest, mode)
        return "removed block (the chained hook was already gone)"
    if rest != "#!/bin/sh\n":
        raise UsageError(
            f"{hook} was edited after clawmem chained {chained.name}",
            hint=f"merge your edits into {chained.name}, delete {hook.name}, rename it back",
        )
    os.replace(chained, hook)
    return "restored"


# --------------------------------------------------------------------------- the merge driver
# The driver's exit status when it wrote the merge with conflict markers in it. Not 1: Python
# exits 1 when it cannot import clawmem, and the command below must tell "merged, with conflicts"
# from "did not run" (which leaves our side in place, the other side's lines nowhere).
DRIVER_CONFLICT = 12


def driver_command(python: str) -> str:
    """What git runs to merge a file whose attributes say ``merge=clawmem`` (a shell command).

    Like the hooks, it survives a moved or deleted environment: the Python that ran ``init``,
    else ``clawmem`` on the PATH; where neither merges, git's own line merge writes its
    conflict markers into the file, so a conflict git reports always shows both sides."""
    py = shlex.quote(python)
    args = "%O %A %B %P"
    return (
        f"s=127; if [ -x {py} ]; then {py} -m clawmem merge-driver {args}; s=$?; fi; "
        f"if [ $s -ne 0 ] && [ $s -ne {DRIVER_CONFLICT} ] && command -v clawmem >/dev/null 2>&1;"
        f" then clawmem merge-driver {args}; s=$?; fi; "
        f"case $s in 0) exit 0;; {DRIVER_CONFLICT}) exit 1;; esac; "
        'echo "clawmem: the merge driver did not run (exit $s); git\'s own merge for" %P >&2; '
        "git merge-file -L ours -L base -L theirs %A %O %B"
    )


def register_driver(root: Path, python: str | None = None) -> tuple[str, Path]:
    """Set ``merge.clawmem.*`` in the repository's own config (not shared by clones: each clone
    runs ``clawmem init`` or ``clawmem hook install``)."""
    config = Path(_git(["rev-parse", "--path-format=absolute", "--git-path", "config"], root))
    command = driver_command(python or sys.executable)
    current = _git_config(root, "--get", f"merge.{DRIVER}.driver")
    if current == command:
        return "driver exists", config
    _git_config(root, f"merge.{DRIVER}.name", "clawmem: append-only logs, generated sections")
    _git_config(root, f"merge.{DRIVER}.driver", command)
    return ("driver updated" if current else "driver registered"), config


def unregister_driver(root: Path) -> tuple[str, Path]:
    config = Path(_git(["rev-parse", "--path-format=absolute", "--git-path", "config"], root))
    if _git_config(root, "--get", f"merge.{DRIVER}.driver") is None:
        return "driver not registered", config
    _git_config(root, "--remove-section", f"merge.{DRIVER}")
    return "driver removed", config


def _git_config(root: Path, *args: str) -> str | None:
    """``git config --local ARGS``; None where git says the key is not set (exit 1)."""
    proc = subprocess.run(
        ["git", "config", "--local", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if proc.returncode == 1 and args[0] == "--get":
        return None
    if proc.returncode != 0:
        raise WorkspaceError(f"git config {' '.join(args[:1])} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


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
        sys.stderr.write(f"{p.path}:{p.line}: {p.message}\n")
    if not problems:
        return 0
    if strict:
        raise CheckFailed(
            summary(problems),
            hint="fix the lines above (grammar: docs/workspace.md), or commit with --no-verify",
        )
    _warn(f"check found {len(problems)} problem(s) (not blocking: installed without --strict)")
    return 0


# --------------------------------------------------------------------- after a merge or checkout
def _rebasing(root: Path) -> bool:
    """A rebase is under way: its post-rewrite hook syncs once it is done."""
    try:
        out = _git(["rev-parse", "--git-path", "rebase-merge", "--git-path", "rebase-apply"], root)
    except ClawmemError:
        return False
    return any((root / line).exists() for line in out.splitlines() if line)


def sync(workspace: Path | None, event: str, args: list[str]) -> int:
    """What post-merge, post-checkout and post-rewrite run: the index catches up with the files
    git changed, without embedding (no model load; watch or the next recall embeds). After a
    merge or a rebase, first the generated sections it left as two clones' union are rewritten
    from the merged facts where that needs no model (``reflect.merged``). Never fails: git has
    done its work, and a problem is a warning."""
    from clawmem.memory import open_workspace

    if event == "post-rewrite" and args[:1] == ["amend"]:
        return 0  # an amended commit changes no file in the working tree
    t0 = time.perf_counter()
    try:
        mem = open_workspace(workspace)
        if event == "post-checkout" and _rebasing(mem.root):
            return 0
        if event != "post-checkout":  # a checkout shows a commit as it is; it rewrites nothing
            _rewrite_merged(mem, event)
        report = mem.index(embed=False, lock_timeout=HOOK_LOCK_TIMEOUT)
    except ClawmemError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        _warn(f"warning: index not refreshed after {event}: {exc.message}{hint}")
        return 0
    except Exception as exc:  # noqa: BLE001 - git has already done its work
        _warn(f"warning: index not refreshed after {event}: internal error: {exc!r}")
        return 0
    changed = report.files_indexed + report.files_removed
    if changed or report.rebuilt:
        _warn(
            f"index refreshed after {event}: {report.files_indexed} file(s) indexed, "
            f"{report.files_removed} removed ({time.perf_counter() - t0:.2f} s)"
        )
    return 0


def _pages(pages: list[str]) -> str:
    return ", ".join(pages[:3]) + (", …" if len(pages) > 3 else "")


def _rewrite_merged(mem: Memory, event: str) -> None:
    """The generated sections the merge left as a union: rewritten now where no model is needed
    (left in the working tree, to commit), else named for ``clawmem reflect``."""
    try:
        done = mem.rewrite_merged(lock_timeout=HOOK_LOCK_TIMEOUT)
    except ClawmemError as exc:
        _warn(f"warning: generated sections merged from two clones not rewritten: {exc.message}")
        return
    if done.rewritten and mem.cfg.git_autocommit:
        from clawmem.files.gitcommit import commit_files

        why_not = commit_files(
            mem.root,
            done.rewritten,
            "clawmem: rewrite generated sections merged from two clones",
            after_merge=event == "post-merge",
        )
        _warn(
            f"rewrote {len(done.rewritten)} generated section(s) merged from two clones "
            f"({_pages(done.rewritten)}) from the merged facts; "
            + (why_not or "committed ([git] autocommit)")
        )
    elif done.rewritten:
        _warn(
            f"rewrote {len(done.rewritten)} generated section(s) merged from two clones "
            f"({_pages(done.rewritten)}) from the merged facts; commit them"
        )
    if done.left:
        _warn(
            f"{len(done.left)} generated section(s) merged from two clones ({_pages(done.left)}); "
            "`clawmem reflect` rewrites them"
        )


def merge_driver(base: Path, ours: Path, theirs: Path, relpath: str) -> int:
    """What git runs for a file whose attributes say ``merge=clawmem``: the merge goes to
    ``ours``; 0 when clean, ``DRIVER_CONFLICT`` when it holds conflict markers (git then reports
    the conflict as usual)."""
    from clawmem.files.gitmerge import conflict_hunks, merge_file
    from clawmem.markdown.merging import merge, owns

    raws = [
        _version(p, relpath, which)
        for p, which in (
            (base, "the common ancestor's version (%O)"),
            (ours, "our version (%A)"),
            (theirs, "their version (%B)"),
        )
    ]
    try:
        texts = [raw.decode("utf-8") for raw in raws]
    except UnicodeDecodeError:  # not a text clawmem understands: git's own merge, in place
        return _git_merge(base, ours, theirs)
    if not owns(relpath):  # a file the repository's .gitattributes gave it that is not clawmem's
        return _git_merge(base, ours, theirs)
    merged = merge(relpath, texts[0], texts[1], texts[2], merge_file, conflict_hunks)
    # A line `clawmem forget` forgot here does not come back with a clone that still has it:
    # git runs the driver at the top of the work tree, where .clawmem/forgotten lives.
    from clawmem.markdown.forgotten import load as forgotten_lines

    text = forgotten_lines(Path.cwd()).blank(merged.text)
    try:
        write_atomic(ours, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(
            f"{ours}: cannot write the merge of {relpath} ({exc.strerror or exc})",
            hint="check that the folder is writable and the disk not full, then merge again",
        ) from None
    return DRIVER_CONFLICT if merged.conflicts else 0


def _git_merge(base: Path, ours: Path, theirs: Path) -> int:
    """git's own merge of the three versions, into ``ours``."""
    proc = subprocess.run(
        ["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs"]
        + [str(ours), str(base), str(theirs)],
        capture_output=True,
        check=False,
    )
    return DRIVER_CONFLICT if proc.returncode else 0


def _version(path: Path, relpath: str, which: str) -> bytes:
    """One of the three versions git hands the driver, read without following a link or
    waiting on a FIFO; one that cannot be read is a one-line error (the driver's command then
    falls back to git's own merge), never an internal error."""
    from clawmem.files import safe_open

    try:
        raw = safe_open.read_bytes(path)
        why = "no such file"
    except ClawmemError:  # UnsafePathError: a link, a folder, a FIFO
        raw, why = None, "not a plain file"
    except OSError as exc:
        raw, why = None, exc.strerror or str(exc)
    if raw is None:
        raise InputError(
            f"{path}: cannot read {which} of {relpath}: {why}",
            hint="git runs `clawmem merge-driver %O %A %B %P` with the paths of three plain "
            "files; run `clawmem hook install` if .git/config names it otherwise",
        )
    return raw
