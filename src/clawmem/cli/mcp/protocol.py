"""The SDK's low-level server with clawmem's tools: the part both transports share.

Built on the official SDK's low-level server (``mcp`` on PyPI) so that every tool keeps its
hand-written JSON schema, and every failure comes back as a tool error carrying the same
``clawmem: error: …`` text the CLI prints: never a stack trace, never the end of the server.
"""

from __future__ import annotations

import json
import logging
import sys
from functools import partial
from typing import TYPE_CHECKING, Any

from clawmem.cli.mcp.access import GRANT
from clawmem.cli.mcp.catalogue import INSTRUCTIONS

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.lowlevel.server import ServerRequestContext

    from clawmem.cli.mcp.dispatch import Tools
    from clawmem.memory import Memory


def build_server(mem: Memory, bound: Tools, *, remote: bool = False) -> Server[Any]:
    """The SDK's low-level server with clawmem's tools, for either transport. Each call runs
    with the grant of the request (``access.GRANT``: the token gate's, or stdio's own). ``remote``:
    the instructions name the workspace's folder, not its path."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from clawmem import __version__

    def tool_list(may_write: bool) -> list:
        return [
            types.Tool(
                name=t.name,
                title=t.title,
                description=t.description,
                input_schema=t.schema,
                annotations=types.ToolAnnotations(
                    title=t.title,
                    read_only_hint=not t.writes,
                    destructive_hint=False,
                    idempotent_hint=True,
                    open_world_hint=False,
                ),
            )
            for t in bound.specs.values()
            if may_write or not t.writes
        ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(GRANT.get().write))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> types.CallToolResult:
        ok, data = await anyio.to_thread.run_sync(
            partial(bound.call, params.name, params.arguments, GRANT.get())
        )
        if not ok:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(data))], is_error=True
            )
        text = json.dumps(data, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=data
        )

    return Server(
        "clawmem",
        version=__version__,
        title="clawmem memory",
        instructions=INSTRUCTIONS + f"Workspace: {mem.root.name if remote else mem.root}\n",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def log_to_stderr() -> None:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="clawmem mcp: %(levelname)s: %(message)s"
    )
