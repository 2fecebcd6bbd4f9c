"""``clawmem retain``: append a fact to a daily log's ## Retain section (see clawmem.ingest.retain)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def retain(
        text: Annotated[str, typer.Argument(help="The fact, one self-contained statement.")],
        kind: Annotated[
            str, typer.Option("--kind", help="W world, B experience, O opinion, S observation.")
        ] = "W",
        confidence: Annotated[
            float | None, typer.Option("--confidence", "-c", help="Opinions only: 0.0–1.0.")
        ] = None,
        entity: Annotated[
            list[str] | None,
            typer.Option("--entity", "-e", help="Entity it is about (repeatable)."),
        ] = None,
        day: Annotated[
            str | None,
            typer.Option("--date", help="Daily log to write to, YYYY-MM-DD (default today)."),
        ] = None,
        allow_secret: Annotated[
            bool,
            typer.Option("--allow-secret", help="Store text that looks like a credential anyway."),
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Append a fact to today's (or --date's) ## Retain section; recallable on return."""
        from clawmem.cli.render import err, out

        res = open_mem(workspace).retain(
            text,
            kind=kind,
            confidence=confidence,
            entities=entity or [],
            day=day,
            allow_secret=allow_secret,
        )
        if as_json:
            print_json(res.to_dict())
        elif res.stored:
            out.print(f"retained {res.source}: {res.line_text}", markup=False)
            if res.git is not None and res.git != "committed":
                err.print(f"clawmem: warning: {res.path} {res.git}", markup=False)
        else:
            err.print(f"already retained at {res.duplicate_of}; not appended again", markup=False)
