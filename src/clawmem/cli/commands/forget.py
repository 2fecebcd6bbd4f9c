"""``clawmem forget``: take lines out of memory for good, after a preview (see
clawmem.reflect.forget)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

import sys
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def forget(
        citations: Annotated[
            list[str] | None,
            typer.Argument(help="Citations to forget, as recall prints them (path#Lx-Ly)."),
        ] = None,
        entity: Annotated[
            str | None,
            typer.Option(
                "--entity", "-e", help="Forget an entity: its facts, its @mentions and its page."
            ),
        ] = None,
        query: Annotated[
            str | None,
            typer.Option("--query", "-q", help="Forget the best hits of this recall (previewed)."),
        ] = None,
        k: Annotated[int, typer.Option("-k", help="With --query: how many hits.")] = 3,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Forget without asking (after the preview).")
        ] = False,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Only show what would be forgotten.")
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Forget lines for good: shows exactly which lines of which files go, then blanks them
        in the Markdown, drops their index rows and vectors, regenerates the pages that repeated
        them and keeps them out of every rebuild, merge, reflect and flush. Transcript lines are
        forgotten by tombstone (.clawmem/forgotten).
        """
        from clawmem.cli.render import err, print_forget
        from clawmem.errors import UsageError

        mem = open_mem(workspace)
        targets = list(citations or [])
        if query:
            hits = mem.recall(query, k=k)
            for h in hits.hits:
                if h.scope is None:
                    targets.append(h.citation)
                else:
                    err.print(f"[dim]{h.citation}: a read scope's line; not forgotten here[/dim]")
            if not targets and not entity:
                raise UsageError(
                    f"nothing to forget: no hit for {query!r}",
                    hint="check with `clawmem recall`, then forget a citation",
                )
        preview = mem.forget(targets, entity=entity, dry_run=True)
        if preview.plan.empty:
            if as_json:
                print_json(preview.to_dict())
            else:
                err.print("nothing to forget: the lines named are empty")
            return
        if dry_run:
            if as_json:
                print_json(preview.to_dict())
            else:
                print_forget(preview)
            return
        if not yes:
            if as_json or not sys.stdin.isatty():
                raise UsageError(
                    "forget needs --yes when it cannot ask (no terminal, or --json)",
                    hint="preview with --dry-run, then run again with --yes",
                )
            print_forget(preview)
            if not typer.confirm("Forget these lines?", default=False, err=True):
                err.print("nothing was forgotten")
                raise typer.Exit(1)
        done = mem.forget(targets, entity=entity)
        if as_json:
            print_json(done.to_dict())
        else:
            print_forget(done)
