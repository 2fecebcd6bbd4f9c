"""``clawmem init [PATH]``: start a workspace (see clawmem.markdown.scaffold), with its git
hooks and merge driver when it lives in a git repository (see clawmem.cli.git_hooks)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from pathlib import Path
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, print_json, state


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        path: Annotated[
            Path | None,
            typer.Argument(
                help="The workspace folder (default: --workspace, else the workspace this "
                "folder is in, else here)."
            ),
        ] = None,
        git: Annotated[
            bool,
            typer.Option(
                "--git", help="Make it a git repository first (`git init`) if it is not in one."
            ),
        ] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Start a workspace, or finish setting one up (safe to run again, and in every clone).

        Creates what is missing: MEMORY.md, memory/, bank/entities/, a commented clawmem.toml, a
        .gitignore that keeps .memory/ out and a .gitattributes with clawmem's merge rules; in a
        git repository (or with --git) also the git hooks and the merge driver. It never
        overwrites a file, and says what it did.
        """
        import os
        import subprocess
        import sys

        from rich.markup import escape

        from clawmem.cli import git_hooks
        from clawmem.cli.render import out
        from clawmem.errors import UsageError, WorkspaceError
        from clawmem.markdown.scaffold import init_workspace
        from clawmem.markdown.workspace import enclosing_root

        root = (path or state["workspace"] or Path.cwd()).expanduser().absolute()
        if path is None and state["workspace"] is None:
            # "Finish setting up this one" from a folder inside it (memory/, bank/entities/)
            # means the workspace around it, not a second one nested in its memory.
            found = enclosing_root(root.resolve())
            if found is not None and found != root.resolve():
                sys.stderr.write(
                    f"clawmem init: {root} is inside the workspace {found}: setting up that one "
                    "(`clawmem init .` starts a new workspace here)\n"
                )
                root = found
        if root.exists() and not root.is_dir():
            raise UsageError(f"{root}: not a folder", hint="give a folder to create or fill")
        try:
            steps = [(s.path, s.action, s.detail) for s in init_workspace(root)]
        except OSError as exc:  # a folder it may not create: say where, not "internal error"
            where = exc.filename or root
            raise WorkspaceError(
                f"{where}: cannot create the workspace ({exc.strerror or exc})",
                hint="pick a folder you can write, or create it first",
            ) from None
        try:
            target = git_hooks.locate(root)
        except WorkspaceError:
            target = None
        if target is None and git:
            proc = subprocess.run(["git", "init", "-q", str(root)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise WorkspaceError(f"{root}: git init failed: {proc.stderr.strip()}")
            steps.append((".git/", "created", "git init"))
            target = git_hooks.locate(root)
        if target is not None:
            for action, where in git_hooks.install(root):
                shown = os.path.relpath(where, root) if where.is_relative_to(root) else str(where)
                if action.startswith("driver "):  # the merge driver, in the repository's config
                    action, shown = action.removeprefix("driver "), f"{shown} (merge driver)"
                steps.append((shown, action, ""))
        if as_json:
            print_json(
                {
                    "workspace": str(root),
                    "git": target is not None,
                    "steps": [{"path": p, "action": a, "detail": d} for p, a, d in steps],
                }
            )
            return
        for p, a, d in steps:
            note = f"  [dim]({escape(d)})[/dim]" if d and a != "exists" else ""
            out.print(f"{a:<8} {escape(p)}{note}", highlight=False)
        if target is None:
            out.print(
                "[dim]not a git repository: run `clawmem init --git` (or `git init`, then "
                "`clawmem init` again) to share it between machines[/dim]"
            )
        out.print(f"workspace ready: {escape(str(root))}", highlight=False)
