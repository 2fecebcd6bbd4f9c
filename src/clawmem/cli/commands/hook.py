"""``clawmem hook install | uninstall | run``: the git pre-commit hook (see clawmem.cli.hook)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import WorkspaceOpt


def register(app: typer.Typer) -> None:
    hook_app = typer.Typer(
        help="A git pre-commit hook that refreshes the index and runs `clawmem check`.",
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
        """Add the hook to the workspace's git repository, keeping any hook already there."""
        from clawmem.cli import hook
        from clawmem.cli.commands import open_mem

        mem = open_mem(workspace)
        action, path = hook.install(mem.root, strict=strict)
        text = {
            "created": "created",
            "inserted": "added clawmem's block to the existing hook",
            "updated": "updated clawmem's block in",
            "chained": "chained the existing hook (kept as pre-commit.clawmem-chained) from",
        }[action]
        print(f"clawmem hook: {text} {path}" + (" (--strict)" if strict else ""))

    @hook_app.command("uninstall")
    def uninstall(workspace: WorkspaceOpt = None) -> None:
        """Remove exactly what `hook install` added (an existing hook comes back byte for byte)."""
        from clawmem.cli import hook
        from clawmem.cli.commands import open_mem

        mem = open_mem(workspace)
        action, path = hook.uninstall(mem.root)
        print(f"clawmem hook: {action}: {path}")

    @hook_app.command("run")
    def run(
        strict: Annotated[
            bool, typer.Option("--strict", help="Exit 9 when `clawmem check` finds problems.")
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """What the installed hook runs: refresh the index (no embedding), then `clawmem check`."""
        from clawmem.cli import hook
        from clawmem.cli.commands import current_workspace

        code = hook.run(current_workspace(workspace), strict=strict)
        if code:
            raise typer.Exit(code)

    app.add_typer(hook_app, name="hook")
