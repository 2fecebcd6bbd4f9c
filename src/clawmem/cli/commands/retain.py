"""``clawmem retain``: append a fact to a daily log's ## Retain section (see clawmem.ingest.retain)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from clawmem.ingest.retain import Retained

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def retain(
        text: Annotated[
            str,
            typer.Argument(
                help="The fact, one self-contained statement; or the fact as a Retain line, "
                '"O(c=0.9) @Peter: prefers short replies".'
            ),
        ],
        kind: Annotated[
            str | None,
            typer.Option(
                "--kind",
                help="W world (default), B experience, O opinion, S observation.",
            ),
        ] = None,
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
        supersedes: Annotated[
            str | None,
            typer.Option(
                "--supersedes",
                help="The citation of a fact this one corrects (see `clawmem correct`).",
            ),
        ] = None,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Append a fact to today's (or --date's) ## Retain section; recallable on return."""
        res = open_mem(workspace).retain(
            text,
            kind=kind,
            confidence=confidence,
            entities=entity or [],
            day=day,
            allow_secret=allow_secret,
            supersedes=supersedes,
        )
        show_retained(res, as_json)

    @app.command()
    def correct(
        citation: Annotated[
            str, typer.Argument(help="The wrong fact's citation, as recall prints it.")
        ],
        text: Annotated[str, typer.Argument(help="The right statement.")],
        kind: Annotated[
            str | None, typer.Option("--kind", help="W, B, O or S (default: the old fact's).")
        ] = None,
        confidence: Annotated[
            float | None,
            typer.Option("--confidence", "-c", help="Opinions: 0.0-1.0 (default: the old one's)."),
        ] = None,
        entity: Annotated[
            list[str] | None,
            typer.Option("--entity", "-e", help="Entities (default: the old fact's); repeatable."),
        ] = None,
        allow_secret: Annotated[
            bool,
            typer.Option("--allow-secret", help="Store text that looks like a credential anyway."),
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Correct a fact: retain the right statement today, marked as superseding the old one.
        The old line stays; recall marks it superseded, and --as-of an earlier day still shows it.
        """
        res = open_mem(workspace).correct(
            citation,
            text,
            kind=kind,
            confidence=confidence,
            entities=entity,
            allow_secret=allow_secret,
        )
        show_retained(res, as_json)


def show_retained(res: "Retained", as_json: bool) -> None:
    from clawmem.cli.render import err, out

    if as_json:
        print_json(res.to_dict())
        return
    if res.stored:
        out.print(f"retained {res.source}: {res.line_text}", markup=False)
        if res.supersedes:
            out.print(f"  supersedes {res.supersedes}", markup=False)
        if res.git is not None and res.git != "committed":
            err.print(f"clawmem: warning: {res.path} {res.git}", markup=False)
    else:
        err.print(f"already retained at {res.duplicate_of}; not appended again", markup=False)
    for similar in res.similar:
        err.print(f"note: a similar fact is already stored at {similar}", markup=False)
