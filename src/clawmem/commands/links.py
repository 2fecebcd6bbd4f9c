"""``clawmem links`` and ``clawmem graph``: the links between notes (see clawmem.graph)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from . import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def links(
        note: Annotated[
            str,
            typer.Argument(
                help="A memory file (bank/entities/Peter.md) or a note name as a link writes it "
                "(Peter, @Peter)."
            ),
        ],
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Show a note's outgoing links and its backlinks, with types, lines and context."""
        from ..render import links_human

        data = open_mem(workspace).links(note)
        if as_json:
            print_json(data)
        else:
            links_human(data)
