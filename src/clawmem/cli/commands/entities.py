"""``clawmem entities``: who and what the facts are about (see clawmem.recall.entities)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated, Any

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def entities(
        name: Annotated[
            str | None,
            typer.Argument(help="One entity (Peter or @Peter): its page and its facts."),
        ] = None,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """List entities with their fact counts, last mention and page; with NAME, that entity's
        page and the facts that mention it, newest first.
        """
        from clawmem.cli.render import err, escape, fact_line, out

        if name is not None:
            detail = open_mem(workspace).entity(name)
            if as_json:
                print_json(detail.to_dict())
                return
            d: dict[str, Any] = detail.to_dict()
            page = f"{d['page']} ({d['page_lines']} lines)" if d["page"] else "(no page)"
            out.print(f"[bold]@{escape(d['entity'])}[/bold]  page {escape(page)}")
            for h in d["facts"]:
                out.print(fact_line(h))
            if d["total"] > d["shown"]:
                err.print(
                    f"[dim]{d['shown']} of {d['total']} facts shown; "
                    f"`clawmem facts --entity {d['entity']} --all` lists every one[/dim]"
                )
            return
        rows = open_mem(workspace).entities()
        if as_json:
            print_json([r.to_dict() for r in rows])
            return
        if not rows:
            err.print(
                'no entities yet: `clawmem retain "…" --entity NAME` (or @NAME in a Retain '
                "fact) makes one",
                markup=False,
            )
        for r in rows:
            page = r.page or "(no page)"
            out.print(
                f"@{r.entity:<20} {r.facts:>4} facts  last {r.last_mention or '—':<10}  {page}",
                markup=False,
            )
