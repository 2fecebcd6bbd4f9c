"""``clawmem flush``: write a conversation's episode page and index it now, before an agent
compacts its context (see clawmem.reflect.flush)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from pathlib import Path
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def flush(
        transcript: Annotated[
            Path | None,
            typer.Argument(help="The transcript (*.jsonl); with --hook, named by the hook's JSON."),
        ] = None,
        hook: Annotated[
            bool,
            typer.Option(
                "--hook",
                help="Run as an agent hook (Claude Code PreCompact/SessionEnd, OpenClaw): read the "
                "hook's JSON on stdin; print nothing and exit 0 whatever happens, with what "
                "happened in .memory/flush.log.",
            ),
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Write or update a conversation's episode page (memory/episodes/) and index its
        transcript up to its end, whether or not its folder is configured; no model is loaded
        (vectors come with the next `clawmem index` or `watch`)."""
        import sys

        from clawmem.errors import ClawmemError, UsageError

        if hook:
            from clawmem.files import locking

            # Silent: not even the notice of waiting for the write lock (the log says it).
            locking.on_wait = None
            text = sys.stdin.read()
            try:
                mem = open_mem(workspace)
            except ClawmemError as exc:
                # No workspace, so no .memory/ to log in: one line where the agent keeps its
                # hooks' output, and exit 0 all the same (a hook must not block the agent).
                sys.stderr.write(f"clawmem flush: nothing flushed: {exc.message}\n")
                return
            from clawmem.reflect.flush import flush_from_hook

            res = flush_from_hook(mem.indexer, text)
            if as_json and res is not None:
                print_json(res.to_dict())
            return
        if transcript is None:
            raise UsageError(
                "give a TRANSCRIPT, or --hook to read the hook's JSON on stdin",
                hint="e.g. clawmem flush ~/.claude/projects/-home-me-code-app/SESSION.jsonl",
            )
        done = open_mem(workspace).flush(transcript)
        if as_json:
            print_json(done.to_dict())
        else:
            from clawmem.cli.render import out

            out.print(f"clawmem flush: {done.summary()} ({done.seconds:.2f} s)", markup=False)
