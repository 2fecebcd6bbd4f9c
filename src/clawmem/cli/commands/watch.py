"""``clawmem watch``: the foreground daemon that keeps the index fresh (see clawmem.ingest.watch)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import WorkspaceOpt


def register(app: typer.Typer) -> None:
    @app.command("watch")
    def watch(
        debounce_ms: Annotated[
            int | None,
            typer.Option(
                "--debounce-ms", help="Quiet time before a sync (default: config debounce_ms)."
            ),
        ] = None,
        reconcile_seconds: Annotated[
            float | None,
            typer.Option(
                "--reconcile-seconds",
                help="Period of the stat scan that catches missed events (default: config "
                "reconcile_seconds, 30).",
            ),
        ] = None,
        poll: Annotated[
            bool,
            typer.Option(
                "--poll",
                help="No file events, only the periodic stat scan (network file systems).",
            ),
        ] = False,
        no_embed: Annotated[
            bool, typer.Option("--no-embed", help="Lexical index only; leave vectors pending.")
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Watch the memory files and sync the index as they change (foreground; Ctrl-C stops).

        Logs one line per sync on stderr. One watcher per workspace (.memory/watch.lock);
        `clawmem status` shows whether it runs and when it last synced."""
        import dataclasses

        from clawmem.cli.commands import open_mem
        from clawmem.errors import UsageError
        from clawmem.ingest.watch import run_watch

        mem = open_mem(workspace)
        changes: dict = {}
        if debounce_ms is not None:
            if debounce_ms < 0:
                raise UsageError(f"--debounce-ms {debounce_ms}: must be 0 or more")
            changes["debounce_ms"] = debounce_ms
        if reconcile_seconds is not None:
            if reconcile_seconds <= 0:
                raise UsageError(f"--reconcile-seconds {reconcile_seconds:g}: must be more than 0")
            changes["reconcile_seconds"] = reconcile_seconds
        if changes:
            # Config is frozen; the daemon reads these two from it like every other setting.
            mem.cfg = dataclasses.replace(
                mem.cfg,
                sources={**mem.cfg.sources, **{k: "command line" for k in changes}},
                **changes,
            )
        run_watch(mem.indexer, use_events=not poll, embed=not no_embed)
