"""``clawmem mcp``: serve the workspace's memory to an agent over MCP, on stdio or streamable
HTTP (see clawmem.cli.mcp); ``clawmem token``: the HTTP server's access tokens (see
clawmem.cli.mcp.tokens)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json, state

if TYPE_CHECKING:
    from clawmem.cli.mcp.tokens import Token


def _unknown_scopes(folders: list[Path], scopes: list[str]) -> list[tuple[str, Path]]:
    """The scopes a new token names that a workspace of it does not configure (a typo reaches
    nothing, silently): those held back until `clawmem trust` count as configured."""
    import re

    from clawmem.config import load_config
    from clawmem.errors import ClawmemError

    missing = []
    for folder in folders:
        try:
            cfg = load_config(folder)
        except ClawmemError:  # a broken clawmem.toml says so at every other command
            continue
        named = {entry.partition("=")[0] for entry in cfg.read_scopes}
        named |= {m.group(1) for s in cfg.held_back if (m := re.match(r"\[scopes\] (\S+) =", s))}
        missing += [(scope, folder) for scope in scopes if scope not in named]
    return missing


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        read_only: Annotated[
            bool,
            typer.Option(
                "--read-only",
                help="Leave out the tools that write (memory_retain, memory_update, memory_forget, "
                "memory_files, accepting or rejecting proposals): the agent can search and read "
                "memory, not write it.",
            ),
        ] = False,
        http: Annotated[
            str | None,
            typer.Option(
                "--http",
                metavar="HOST:PORT",
                help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio. Any address "
                "but loopback requires tokens (`clawmem token create`).",
            ),
        ] = None,
        tokenless_write: Annotated[
            bool,
            typer.Option(
                "--tokenless-write",
                help="With --http on loopback and no token yet: let requests without a token "
                "write too (memory_retain, memory_update, memory_forget, memory_files, accepting "
                "or rejecting proposals). Every user of this machine can "
                "reach a loopback port; by default they only read.",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Serve memory to an agent over MCP: memory_search, memory_get, memory_retain,
        memory_status, memory_entities, memory_list, memory_history, memory_update,
        memory_forget, memory_files, and memory_proposals with memory_proposal_accept and
        memory_proposal_reject.

        On stdio it is started by the agent (Claude Code, Claude Desktop, Cursor, Codex, OpenClaw,
        any MCP client), not by hand: stdout carries the protocol, stderr the log. With --http it
        is a server that remote agents reach with a token. Recipes: docs/agents.md.
        """
        import sys

        # The SDK itself is imported inside serve() and serve_http(): it costs about a second no other command pays.
        from clawmem.cli.mcp.catalogue import tools
        from clawmem.cli.mcp.http import parse_address, serve_http
        from clawmem.cli.mcp.stdio import serve

        mem = open_mem(workspace)
        names = ", ".join(t.name for t in tools(read_only))
        try:
            if http is None:
                sys.stderr.write(f"clawmem mcp: serving {mem.root} on stdio ({names})\n")
                serve(mem, read_only=read_only)
                return
            host, port = parse_address(http)
            shown = f"[{host}]" if ":" in host else host

            def announce(required: bool, access_log: str) -> None:
                writes = tokenless_write and not read_only
                how = (
                    "token required"
                    if required
                    else "no token needed on loopback until one is created; without one "
                    + ("it writes too" if writes else "it only reads")
                )
                # The tools a caller without a token is served: naming the writers beside "it
                # only reads" read as if they were served too.
                served = names if required or writes else ", ".join(t.name for t in tools(True))
                sys.stderr.write(
                    f"clawmem mcp: serving {mem.root} at http://{shown}:{port}/mcp ({how}; "
                    f"{served}; access log: {access_log})\n"
                )

            serve_http(
                mem,
                host,
                port,
                read_only=read_only,
                tokenless_write=tokenless_write,
                announce=announce,
            )
        finally:
            mem.close()  # the index connection and the server's own journal (its probe file)

    token_app = typer.Typer(
        help="Access tokens for `clawmem mcp --http`: each opens some workspaces, to read or to "
        "write. Stored hashed in $CLAWMEM_TOKENS_FILE (default: tokens.json in your config "
        "folder).",
        no_args_is_help=True,
    )

    @token_app.command("create")
    def create(
        name: Annotated[str, typer.Option("--name", help="What the token is for, e.g. laptop.")],
        write: Annotated[
            bool,
            typer.Option(
                "--write",
                help="Allow the tools that write: memory_retain, memory_update, memory_forget, "
                "memory_files, accepting and rejecting proposals (default: read only).",
            ),
        ] = False,
        scopes: Annotated[
            list[str] | None,
            typer.Option(
                "--scope",
                help="A read scope of the workspace it reaches, by name (repeatable; default: "
                "none, the workspace itself only).",
            ),
        ] = None,
        sessions: Annotated[
            bool,
            typer.Option(
                "--sessions",
                help="Reach conversation transcripts too (memory_search source sessions, "
                "memory_get of sessions/…; default: the notes only).",
            ),
        ] = False,
        workspaces: Annotated[
            list[Path] | None,
            typer.Option(
                "--workspace",
                "-w",
                help="A workspace it opens (repeatable; default: the current workspace).",
            ),
        ] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Create a token and print its secret, once: only its hash is kept.

        A token reaches exactly what it names: its workspaces, the read scopes named with
        --scope and, with --sessions, conversation transcripts. A running server honours it at
        once.
        """
        import sys

        from clawmem.cli.mcp import tokens
        from clawmem.markdown.workspace import find_root

        folders = [find_root(w) for w in workspaces or []] or [find_root(state["workspace"])]
        token, secret = tokens.create(
            name, folders, write=write, scopes=list(scopes or []), sessions=sessions
        )
        if as_json:
            print_json({**token.public(), "secret": secret})
            return
        print(secret)
        sys.stderr.write(
            f"clawmem token: created {token.id} ({token.name}, "
            f"{'read and write' if token.write else 'read only'}) for "
            f"{', '.join(token.workspaces)}{_reach(token)}; the secret above is shown only now\n"
        )
        for scope, folder in _unknown_scopes(folders, list(scopes or [])):
            sys.stderr.write(
                f"clawmem token: note: {folder} has no read scope {scope!r} ([scopes] in its "
                "clawmem.toml); the token reaches one of that name once it is configured\n"
            )

    @token_app.command("list")
    def list_(as_json: JsonOpt = False) -> None:
        """The tokens: id, name, workspaces, read or write, when created (never the secret)."""
        from clawmem.cli.mcp import tokens

        rows = [t.public() for t in tokens.list_tokens()]
        if as_json:
            print_json({"tokens": rows, "store": str(tokens.store_path())})
            return
        if not rows:
            print("no tokens")
            return
        # Columns padded to their widest cell (a name may be any length), under a header.
        table = [("ID", "NAME", "ACCESS", "CREATED", "WORKSPACES")]
        for r in rows:
            access = "write" if r["write"] else "read"
            # What it reaches beyond its workspaces: +scope:team, +sessions.
            access += "".join(f"+scope:{s}" for s in r["scopes"]) + (
                "+sessions" if r["sessions"] else ""
            )
            table.append((r["id"], r["name"], access, r["created"], ", ".join(r["workspaces"])))
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        for row in table:
            cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=False)]
            print("  ".join([*cells, row[4]]))

    @token_app.command("revoke")
    def revoke(
        which: Annotated[str, typer.Argument(help="The token's id (tok_…) or name.")],
    ) -> None:
        """Revoke a token: a running server refuses it from its next request on."""
        from clawmem.cli.mcp import tokens

        token = tokens.revoke(which)
        print(f"clawmem token: revoked {token.id} ({token.name})")

    app.add_typer(token_app, name="token")


def _reach(token: "Token") -> str:
    """What a token reaches beyond its workspaces, in words."""
    parts = [f"scope {s}" for s in token.scopes] + (["transcripts"] if token.sessions else [])
    return f", reaching {' and '.join(parts)} too" if parts else ""
