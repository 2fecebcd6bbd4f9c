"""`clawmem proposals list | accept ID | reject ID`: facts proposed from conversations and notes,
reviewed (see clawmem.reflect.proposal_review)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json

proposals_app = typer.Typer(
    help="Review the facts flush and reflect proposed from conversations and notes.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(proposals_app, name="proposals")


@proposals_app.command("list")
def list_(
    status: Annotated[
        str,
        typer.Option("--status", help="pending, accepted, rejected or all."),
    ] = "pending",
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """The proposals with their id, Retain line, confidence and the line they cite."""
    from clawmem.cli.render import out

    rows = open_mem(workspace).list_proposals(status=None if status == "all" else status)
    if as_json:
        print_json([r.to_dict() for r in rows])
        return
    for r in rows:
        p = r.proposal
        mark = "" if r.status == "pending" else f" [{r.status}]"
        out.print(f"{p.id}{mark} {p.line}", markup=False)
        out.print(f"  {p.day}, confidence {p.confidence:.2f}, from {p.source}", markup=False)
    if not rows:
        out.print(f"no {status} proposals", markup=False)


@proposals_app.command("accept")
def accept(
    ids: Annotated[list[str], typer.Argument(help="Proposal ids (or unique prefixes).")],
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Retain each proposal's line, with its citation as the fact's note."""
    from clawmem.cli.render import out

    mem = open_mem(workspace)
    done = [mem.accept_proposal(i) for i in ids]
    if as_json:
        print_json([d.to_dict() for d in done])
        return
    for d in done:
        out.print(f"accepted {d.id}: retained {d.retained}: {d.line_text}", markup=False)


@proposals_app.command("reject")
def reject(
    ids: Annotated[list[str], typer.Argument(help="Proposal ids (or unique prefixes).")],
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Mark each proposal rejected: its line is never proposed again."""
    from clawmem.cli.render import out

    mem = open_mem(workspace)
    done = [mem.reject_proposal(i) for i in ids]
    if as_json:
        print_json([d.to_dict() for d in done])
        return
    for d in done:
        out.print(f"rejected {d.id}: {d.line_text}", markup=False)
