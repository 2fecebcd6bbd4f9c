"""``clawmem mcp`` on stdio: one client, the agent that started the process, trusted like the CLI.
stdout carries the protocol, stderr the log."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from clawmem.cli.mcp.dispatch import Tools
from clawmem.cli.mcp.protocol import build_server, log_to_stderr

if TYPE_CHECKING:
    from clawmem.memory import Memory


def serve(mem: Memory, *, read_only: bool = False) -> None:
    """Serve the workspace's memory over stdio until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    # A server lives for a whole agent session: it follows the files' changes itself, so a call
    # with nothing changed skips the stat pass of every file even with no `clawmem watch`.
    mem.follow_changes()
    bound = Tools(mem, read_only=read_only)
    server = build_server(mem, bound)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            async with anyio.create_task_group() as tg:
                # Abandoned, not awaited, if the client leaves while the model is still loading.
                tg.start_soon(
                    partial(anyio.to_thread.run_sync, abandon_on_cancel=True), bound.warm_up
                )
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()

    log_to_stderr()
    anyio.run(main)
