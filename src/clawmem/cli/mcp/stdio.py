"""``clawmem mcp`` on stdio: one client, the agent that started the process, trusted like the CLI.
stdout carries the protocol, stderr the log."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from clawmem.cli.mcp.dispatch import Tools
from clawmem.cli.mcp.protocol import build_server, log_to_stderr

if TYPE_CHECKING:
    from clawmem.memory import Memory


def serve(mem: Memory, *, read_only: bool = False) -> None:
    """Serve the workspace's memory over stdio until the client closes the connection, then
    answer what it asked before closing it (``_answer_before_leaving``)."""
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
                async with _answer_before_leaving(read_stream, write_stream) as (reads, writes):
                    await server.run(reads, writes, server.create_initialization_options())
                tg.cancel_scope.cancel()

    log_to_stderr()
    try:
        anyio.run(main)
    except* BrokenPipeError:
        # The client closed our stdout: it is gone, and with it the server's purpose. Not an
        # internal error; stdout points at /dev/null so that exiting flushes nothing into it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


# How long a server whose client closed stdin keeps answering the requests it had read before.
# A recall takes under a second, indexing a large workspace minutes; past this the answers are
# given up, so that a server never outlives its client by long.
DRAIN_S = 300.0


@asynccontextmanager
async def _answer_before_leaving(
    read_stream: Any, write_stream: Any
) -> AsyncIterator[tuple[Any, Any]]:
    """The streams the server is given in place of stdio's: the same messages, except that the
    end of stdin reaches the server only once every request read before it has its answer on
    stdout. The SDK cancels the requests in flight when its input ends, which is right for a
    client that went away; but a client that only stopped asking (a script piping its requests
    in, ``printf … | clawmem mcp``) still reads stdout, and it lost the answer to its last
    request. A client that closed stdout too is gone: nothing is waited for."""
    import anyio
    from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

    to_server, reads = anyio.create_memory_object_stream[Any](0)
    writes, from_server = anyio.create_memory_object_stream[Any](0)
    asked: set[object] = set()
    client_gone = anyio.Event()
    forwarded = anyio.Event()

    async def inbound() -> None:
        async with to_server:
            async for item in read_stream:
                if isinstance(getattr(item, "message", None), JSONRPCRequest):
                    asked.add(item.message.id)
                await to_server.send(item)
            with anyio.move_on_after(DRAIN_S):
                while asked and not client_gone.is_set():
                    await anyio.sleep(0.02)

    async def outbound() -> None:
        try:
            async with from_server, write_stream:  # stdout closes after the server's last word
                async for item in from_server:
                    if isinstance(item.message, JSONRPCResponse | JSONRPCError):
                        asked.discard(item.message.id)
                    await write_stream.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            client_gone.set()  # stdout is closed: the client is gone
            async for _ in from_server:  # the server's last words, for no one
                pass
        finally:
            forwarded.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        try:
            yield reads, writes
        finally:
            await writes.aclose()  # the server has stopped: what it wrote is forwarded
            with anyio.move_on_after(5):
                await forwarded.wait()
            tg.cancel_scope.cancel()
