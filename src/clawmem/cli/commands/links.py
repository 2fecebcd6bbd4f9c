"""``clawmem links`` and ``clawmem graph``: the links between notes (see clawmem.recall.graph)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


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
        from clawmem.cli.render import links_human

        data = open_mem(workspace).links(note)
        # The human form is drawn from the JSON one, as for recall.
        if as_json:
            print_json(data.to_dict())
        else:
            links_human(data.to_dict())

    @app.command()
    def graph(
        fmt: Annotated[
            str, typer.Option("--format", "-f", help="html | mermaid | dot | json")
        ] = "html",
        output: Annotated[
            str | None,
            typer.Option(
                "--output",
                "-o",
                help="Where to write it ('-' for stdout). Default: .memory/graph.html for html, "
                "stdout for the others.",
            ),
        ] = None,
        mentions: Annotated[
            bool,
            typer.Option(
                "--mentions/--no-mentions", help="Include @mentions as links (they are many)."
            ),
        ] = True,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Draw the graph of notes, entity pages and links: an offline HTML page (pan, zoom,
        labels, link types), or Mermaid / DOT text for docs."""
        import sys
        from pathlib import Path

        from clawmem.cli.graphview import FORMATS, to_dot, to_html, to_json, to_mermaid
        from clawmem.errors import UsageError
        from clawmem.files.atomic import write_atomic

        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
        mem = open_mem(workspace)
        graph = mem.graph(mentions=mentions)
        data = graph.to_dict()
        render = {"html": to_html, "mermaid": to_mermaid, "dot": to_dot, "json": to_json}[fmt]
        text = render(data)
        if output is None and fmt != "html":
            output = "-"
        if output == "-":
            sys.stdout.write(text)
            return
        target = Path(output) if output else mem.memory_dir / "graph.html"
        if output is None:
            mem.prepare_memory_dir()
        write_atomic(target, text)
        sys.stderr.write(
            f"clawmem graph: {len(graph.nodes)} notes, {len(graph.edges)} links → {target}\n"
        )
        sys.stdout.write(f"{target}\n")
