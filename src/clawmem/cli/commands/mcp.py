"""``clawmem mcp``: serve the workspace's memory to an agent over MCP (see clawmem.cli.mcp_server)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import WorkspaceOpt, open_mem


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        read_only: Annotated[
            bool,
            typer.Option(
                "--read-only",
                help="Leave out memory_retain: the agent can search and read memory, not write it.",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Serve memory to an agent over MCP on stdio: memory_search, memory_get, memory_retain,
        memory_status and memory_entities.

        Started by the agent (Claude Code, Claude Desktop, Cursor, Codex, OpenClaw, any MCP client),
        not by hand: stdout carries the protocol, stderr the log. Recipes: docs/agents.md.
        """
        import sys

        # The SDK itself is imported inside serve(): it costs about a second no other command pays.
        from clawmem.cli.mcp_server import serve, tools

        mem = open_mem(workspace)
        names = ", ".join(t.name for t in tools(read_only))
        sys.stderr.write(f"clawmem mcp: serving {mem.root} on stdio ({names})\n")
        try:
            serve(mem, read_only=read_only)
        finally:
            mem.close()  # the index connection and the server's own journal (its probe file)
