"""``clawmem reflect``: entity pages, opinions and MEMORY.md proposals from the facts."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json

if TYPE_CHECKING:
    from clawmem.reflect.results import ReflectResult


def register(app: typer.Typer) -> None:
    @app.command()
    def reflect(
        since: Annotated[
            str | None,
            typer.Option(
                "--since",
                help="Only entity pages with facts recorded since then (7d, 2025-11-20 …); "
                "default: every page whose facts changed.",
            ),
        ] = None,
        today: Annotated[
            str | None,
            typer.Option(
                "--today",
                help="Reflect as of YYYY-MM-DD: later logs are not read (default: today).",
            ),
        ] = None,
        dry_run: Annotated[
            bool,
            typer.Option(
                "--dry-run",
                "-n",
                help="Write nothing; print the unified diff of what would change.",
            ),
        ] = False,
        apply: Annotated[
            bool,
            typer.Option(
                "--apply",
                help="Also append the pending proposals to the end of MEMORY.md.",
            ),
        ] = False,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="Overwrite hand edits inside generated sections.",
            ),
        ] = False,
        explain: Annotated[
            bool,
            typer.Option(
                "--explain",
                help="Show why each opinion's confidence moved, and each proposal.",
            ),
        ] = False,
        llm: Annotated[
            Path | None,
            typer.Option(
                "--llm",
                help="A GGUF chat model for a one-paragraph summary per entity (optional).",
            ),
        ] = None,
        wait: Annotated[
            float,
            typer.Option(
                "--wait",
                help="Seconds to wait for another writer (retain, index) to finish.",
            ),
        ] = 60.0,
        as_json: JsonOpt = False,
        quiet: Annotated[
            bool,
            typer.Option(
                "--quiet",
                "-q",
                help="Print nothing but errors.",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Turn recent facts into entity pages, tracked opinions and MEMORY.md proposals.

        Idempotent and safe from cron: a run with no new facts changes nothing; hand edits
        inside generated sections stop it (exit 10) unless --force."""
        from clawmem.text.timeexpr import parse_date

        day = parse_date(today) if today else None
        result = open_mem(workspace).reflect(
            since=since,
            today=day,
            dry_run=dry_run,
            apply=apply,
            force=force,
            llm=llm,
            lock_timeout=wait,
        )
        if as_json:
            print_json(result.to_dict())
            return
        for w in result.warnings:
            sys.stderr.write(f"clawmem reflect: warning: {w}\n")
        if quiet:
            return
        if dry_run:
            sys.stdout.write(result.diff())
        else:
            for c in result.written():
                n = c.new_facts
                extra = f" ({n} new source{'s' if n != 1 else ''})" if n else ""
                sys.stdout.write(f"{c.status} {c.path}{extra}\n")
        if explain:
            sys.stdout.write(explain_text(result))
        # With --dry-run stdout is the diff alone, so that it can go to `patch` or a file.
        (sys.stderr if dry_run else sys.stdout).write(result.summary_line() + "\n")


def explain_text(result: "ReflectResult") -> str:
    lines = []
    for rep in result.opinions:
        op = rep.opinion
        moved = (
            f"{rep.previous:.2f} → {op.confidence:.2f}"
            if rep.previous is not None and rep.previous != op.confidence
            else f"{op.confidence:.2f}"
        )
        flag = " (changed)" if rep.changed else ""
        lines.append(f"opinion {rep.heading[4:]}: c={moved}{flag}")
        for s in op.steps:
            lines.append(f"  {s.fact.day or 'undated'}  {s.fact.cite}  {s.reason}")
            if s.joined:
                lines.append(f"  {'':10}  joined: {s.joined}")
    for p in result.proposals:
        lines.append(f"proposal: {p.text} — {p.why}")
    for p in result.applied:
        lines.append(f"applied to MEMORY.md: {p.text}")
    return "".join(x + "\n" for x in lines)
