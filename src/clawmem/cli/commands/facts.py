"""``clawmem facts``: the facts memory holds, without a question (see clawmem.recall.facts_list)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated, Any

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def facts(
        entity: Annotated[
            str | None, typer.Option("--entity", "-e", help="Only facts mentioning @ENTITY.")
        ] = None,
        kind: Annotated[
            list[str] | None,
            typer.Option("--kind", help="W, B, O or S, or its name (opinion); repeatable."),
        ] = None,
        since: Annotated[
            str | None, typer.Option("--since", help="30d, 2w, 2025-11, 2025-11-27 …")
        ] = None,
        until: Annotated[str | None, typer.Option("--until", help="Same forms as --since.")] = None,
        as_of: Annotated[
            str | None, typer.Option("--as-of", help="What was known and valid on YYYY-MM-DD.")
        ] = None,
        path: Annotated[
            str | None, typer.Option("--path", help="Only files under this path prefix.")
        ] = None,
        min_confidence: Annotated[
            float | None,
            typer.Option("--min-confidence", help="Only opinions at least this confident, 0-1."),
        ] = None,
        current: Annotated[
            bool, typer.Option("--current", help="Leave out facts a newer fact supersedes.")
        ] = False,
        limit: Annotated[
            int, typer.Option("--limit", "-n", help="Show at most this many (newest first).")
        ] = 50,
        show_all: Annotated[bool, typer.Option("--all", help="Show every match.")] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """List facts without a question, newest first, filtered by entity, kind, time,
        confidence or path.
        """
        from clawmem.cli.render import print_fact_list

        result = open_mem(workspace).facts(
            entity=entity,
            kind=kind,
            since=since,
            until=until,
            as_of=as_of,
            path=path,
            min_confidence=min_confidence,
            include_superseded=not current,
            limit=None if show_all else limit,
        )
        if as_json:
            print_json(result.to_dict())
            return
        print_fact_list(result)

    @app.command()
    def history(
        target: Annotated[
            str, typer.Argument(help="A fact's citation (path#Lx-Lx), or an entity (@Peter).")
        ],
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """How a fact came to be: the statements it replaced and that replaced it, each with
        when it was recorded and who wrote it (retain, correct, an MCP token, flush, import, or
        a hand edit and its git commit). For an entity: every fact about it, oldest first.
        """
        from clawmem.cli.render import escape, fact_line, out

        h = open_mem(workspace).history(target)
        if as_json:
            print_json(h.to_dict())
            return
        d: dict[str, Any] = h.to_dict()
        for step in d["steps"]:
            who = step["writer"] + (f", {step['written_at']}" if step["written_at"] else "")
            if step["commit"]:
                who += f"; git {step['commit']}"
            out.print(fact_line(step))
            out.print(f"   [dim]written by {escape(who)}[/dim]")
