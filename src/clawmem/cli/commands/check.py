"""``clawmem check``: malformed Retain facts and broken links, for people and pre-commit hooks
(see clawmem.ingest.check)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def check(
        as_json: JsonOpt = False,
        hook: Annotated[
            bool, typer.Option("--hook", help="Output for a git pre-commit hook.")
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Find malformed Retain facts and broken links; exits 9 if there are any (pre-commit hook)."""
        import sys

        from clawmem.errors import CheckFailed
        from clawmem.ingest.check import summary
        from clawmem.text.visible import visible

        problems = open_mem(workspace).check()
        if as_json:
            print_json([p.to_dict() for p in problems])
        else:
            for p in problems:
                d = p.to_dict()  # the file's name as every command shows it (redacted)
                # (control characters written out: a name from a clone reaches a terminal)
                sys.stdout.write(visible(f"{d['path']}:{p.line}: {p.message}") + "\n")
        if problems:
            raise CheckFailed(
                summary(problems),
                # With --json the lines are in the JSON on stdout, not above.
                hint=f"fix the lines {'listed' if as_json else 'above'}; the grammar is in "
                "docs/workspace.md",
            )
        if not as_json and not hook:
            sys.stdout.write("clawmem check: no problems\n")
