"""``clawmem entities``: who and what the facts are about (see clawmem.recall.entities)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def entities(as_json: JsonOpt = False, workspace: WorkspaceOpt = None) -> None:
        """List entities with their fact counts, last mention and page."""
        from clawmem.cli.render import out

        rows = open_mem(workspace).entities()
        if as_json:
            print_json([r.to_dict() for r in rows])
            return
        for r in rows:
            page = r.page or "(no page)"
            out.print(
                f"@{r.entity:<20} {r.facts:>4} facts  last {r.last_mention or '—':<10}  {page}",
                markup=False,
            )
