"""``clawmem hook install | uninstall | run | sync`` and ``clawmem merge-driver``: clawmem's git
hooks and merge driver (see clawmem.cli.git_hooks)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from pathlib import Path
from typing import Annotated

import typer

from clawmem.cli.commands import WorkspaceOpt


def register(app: typer.Typer) -> None:
    hook_app = typer.Typer(
        help="Git hooks: pre-commit refreshes the index and runs `clawmem check`; post-merge, "
        "post-checkout and post-rewrite bring the index up to date after a pull, checkout or "
        "rebase. `install` also registers the merge driver.",
        no_args_is_help=True,
    )

    @hook_app.command("install")
    def install(
        strict: Annotated[
            bool,
            typer.Option(
                "--strict",
                help="Let `clawmem check` findings block the commit (never the index itself).",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Add the hooks to the workspace's git repository, keeping any hook already there, and
        register clawmem's merge driver in its config."""
        from clawmem.cli import git_hooks
        from clawmem.cli.commands import open_mem

        mem = open_mem(workspace)
        words = {
            "created": "created",
            "inserted": "added clawmem's block to the existing hook",
            "updated": "updated clawmem's block in",
            "exists": "up to date:",
            "driver registered": "registered the merge driver in",
            "driver updated": "updated the merge driver in",
            "driver exists": "merge driver already registered in",
            "chained": "chained the existing hook (kept as NAME.clawmem-chained) from",
        }
        for action, path in git_hooks.install(mem.root, strict=strict):
            text = words.get(action, action).replace("NAME", path.name)
            suffix = " (--strict)" if strict and path.name == git_hooks.HOOK_NAME else ""
            print(f"clawmem hook: {text} {path}{suffix}")

    @hook_app.command("uninstall")
    def uninstall(workspace: WorkspaceOpt = None) -> None:
        """Remove exactly what `hook install` added (an existing hook comes back byte for byte)."""
        from clawmem.cli import git_hooks
        from clawmem.cli.commands import open_mem

        mem = open_mem(workspace)
        for action, path in git_hooks.uninstall(mem.root):
            action = action.replace("driver ", "merge driver ")
            print(f"clawmem hook: {action}: {path}")

    @hook_app.command("run")
    def run(
        strict: Annotated[
            bool, typer.Option("--strict", help="Exit 9 when `clawmem check` finds problems.")
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """What the installed hook runs: refresh the index (no embedding), then `clawmem check`."""
        from clawmem.cli import git_hooks
        from clawmem.cli.commands import current_workspace

        code = git_hooks.run(current_workspace(workspace), strict=strict)
        if code:
            raise typer.Exit(code)

    @hook_app.command(
        "sync", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def sync(
        event: Annotated[
            str,
            typer.Argument(help="The hook that runs it: post-merge, post-checkout, post-rewrite."),
        ],
        args: Annotated[
            list[str] | None, typer.Argument(help="The hook's own arguments, as git gave them.")
        ] = None,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """What the post-merge, post-checkout and post-rewrite hooks run: sync the index with the
        files git changed, without embedding. Always exits 0."""
        from clawmem.cli import git_hooks
        from clawmem.cli.commands import current_workspace

        git_hooks.sync(current_workspace(workspace), event, list(args or []))

    app.add_typer(hook_app, name="hook")

    @app.command("merge-driver")
    def merge_driver(
        base: Annotated[Path, typer.Argument(help="The common ancestor's version (git's %O).")],
        ours: Annotated[Path, typer.Argument(help="Our version (%A); the merge is written here.")],
        theirs: Annotated[Path, typer.Argument(help="Their version (%B).")],
        path: Annotated[str, typer.Argument(help="The file's path in the repository (%P).")],
    ) -> None:
        """What git runs to merge a file clawmem owns (set up by `clawmem init`).

        Registered in .git/config by `clawmem init` or `hook install` and named by .gitattributes:
        daily logs keep both sides' lines, a fact retained on both sides once; generated sections
        never conflict; MEMORY.md lines added on both sides are both kept. Exit 12: the merge
        holds conflict markers (hand-written text conflicts, as in any merge). Exit 7: a version
        it cannot read (missing, a folder, a FIFO), named in one line; git's own merge then runs.
        """
        from clawmem.cli import git_hooks

        code = git_hooks.merge_driver(base, ours, theirs, path)
        if code:
            raise typer.Exit(code)
