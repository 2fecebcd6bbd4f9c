"""``clawmem export`` and ``clawmem import``: carry memory out and in (see clawmem.recall.export
and clawmem.ingest.importing)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

import sys
from pathlib import Path
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def export(
        fmt: Annotated[str, typer.Option("--format", help="jsonl | okf (a folder).")] = "jsonl",
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="File (jsonl) or new folder (okf); jsonl: stdout."),
        ] = None,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Export every fact (kind, entities, confidence, dates, citation) as JSONL or as an
        Open Knowledge Format v0.2 folder that other tools read.
        """
        from clawmem.cli.render import err

        mem = open_mem(workspace)
        if fmt == "jsonl" and out is None:
            for line in mem.export_lines():
                sys.stdout.write(line)
            return
        done = mem.export(fmt, out)
        if as_json:
            print_json(done.to_dict())
        else:
            err.print(f"exported {done.facts} facts to {done.path}", markup=False)

    @app.command(name="import")
    def import_(
        source: Annotated[Path, typer.Argument(help="A file or folder to import.")],
        fmt: Annotated[
            str,
            typer.Option(
                "--format", help="auto | jsonl | okf | claude-code | basic-memory | mem0."
            ),
        ] = "auto",
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Import after the preview.")] = False,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Only show what would be imported.")
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Import facts from clawmem JSONL, an OKF folder, Claude Code's auto memory, a
        basic-memory project or a mem0 export: previewed, redacted, each citing its source;
        importing twice adds nothing.
        """
        from clawmem.cli.render import err, out
        from clawmem.errors import UsageError

        mem = open_mem(workspace)
        preview = mem.import_memory(source, fmt=fmt, dry_run=True)
        if dry_run or not yes:
            if not dry_run and (as_json or not sys.stdin.isatty()):
                raise UsageError(
                    "import needs --yes when it cannot ask (no terminal, or --json)",
                    hint="preview with --dry-run, then run again with --yes",
                )
            if as_json and dry_run:
                print_json(preview.to_dict())
                return
            for c in preview.candidates:
                # As the Retain line will read (an opinion's confidence included), and its day.
                head = " ".join(
                    [c.kind + (f"(c={c.confidence:g})" if c.confidence is not None else "")]
                    + ["@" + e for e in c.entities]
                )
                where = f"{c.day}, {c.source}" if c.day else c.source
                out.print(f"{head}: {c.content}  ({where})", markup=False)
            for s in preview.skipped:
                err.print(f"skipped {s}", markup=False)
            err.print(f"{len(preview.candidates)} fact(s) from {preview.format}", markup=False)
            if dry_run:
                return
            if not typer.confirm("Import these facts?", default=False, err=True):
                err.print("nothing was imported")
                raise typer.Exit(1)
        done = mem.import_memory(source, fmt=fmt)
        if as_json:
            print_json(done.to_dict())
            return
        for s in done.skipped:
            err.print(f"skipped {s}", markup=False)
        err.print(
            f"imported {len(done.stored)} fact(s) from {done.format}; "
            f"{len(done.duplicates)} already there",
            markup=False,
        )
