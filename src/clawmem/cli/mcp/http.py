"""``clawmem mcp --http``: the tools over the SDK's streamable HTTP transport, behind the token
gate (``clawmem.cli.mcp.gate``). Stateless: every request stands alone (no session to hijack or to
run out of), and its answer is one JSON body."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clawmem.cli.mcp.dispatch import Tools
from clawmem.cli.mcp.gate import TokenGate
from clawmem.cli.mcp.protocol import build_server, log_to_stderr
from clawmem.errors import UsageError, WorkspaceError

if TYPE_CHECKING:
    from pathlib import Path

    import uvicorn

    from clawmem.cli.mcp.accesslog import AccessLog
    from clawmem.cli.mcp.tokens import Verifier
    from clawmem.memory import Memory

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
PATH = "/mcp"


def is_loopback(host: str) -> bool:
    import ipaddress

    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[v6]:PORT`` or ``PORT`` (loopback) -> (host, port)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
        if not 0 <= number <= 65535:
            raise ValueError
    except ValueError:
        raise UsageError(
            f"{text!r} is not HOST:PORT", hint="e.g. 127.0.0.1:8765, 0.0.0.0:8765 or [::1]:8765"
        ) from None
    return host, number


def http_app(
    mem: Memory,
    *,
    host: str,
    read_only: bool = False,
    verifier: Verifier,
    access_log: AccessLog | None = None,
    tokenless_write: bool = False,
) -> tuple[TokenGate, Tools]:
    """The ASGI app: the SDK's streamable HTTP transport at ``/mcp`` behind ``TokenGate``.
    Stateless: every request stands alone (no session to hijack or to run out of), and its
    answer is one JSON body."""
    from mcp.server.transport_security import TransportSecuritySettings

    bound = Tools(mem, read_only=read_only)
    server = build_server(mem, bound, remote=True)
    # The SDK's own Host check against DNS rebinding is decided once, at start; whether a token
    # is needed can change at any request, so the gate makes that check itself, for a tokenless
    # loopback server (with tokens, a reverse proxy in front passes its own host name).
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    gate = TokenGate(
        app,
        verifier,
        always_required=not is_loopback(host),
        read_only=read_only,
        cors_origins=mem.cfg.http_cors_origins,
        access_log=access_log,
        tokenless_write=tokenless_write,
    )
    return gate, bound


def serve_http(
    mem: Memory,
    host: str,
    port: int,
    *,
    read_only: bool = False,
    tokenless_write: bool = False,
    announce: Callable[[bool, str], None] | None = None,
) -> None:
    """Serve over streamable HTTP until interrupted. Tokens are required on any address but
    loopback, and on loopback too as soon as a token names this workspace; until then a request
    without one only reads, unless ``tokenless_write``. ``announce(required,
    where the access log goes)`` is called once the server is ready to start."""
    import threading

    import uvicorn

    from clawmem.cli.mcp.accesslog import AccessLog
    from clawmem.cli.mcp.tokens import Verifier

    verifier = Verifier(mem.root)
    if not is_loopback(host) and not verifier.any_for_workspace():
        raise UsageError(
            f"serving on {host} (not loopback) needs a token for this workspace",
            hint=f"create one: clawmem token create --name NAME -w {mem.root}",
        )
    mem.follow_changes()
    if mem.cfg.http_access_log and mem.cfg.http_access_log != "-":
        mem.prepare_memory_dir()  # .memory/ with its .gitignore, as every writer makes it
    access_log = AccessLog(mem.cfg.http_access_log, mem.root, queries=mem.cfg.http_log_queries)
    app, bound = http_app(
        mem,
        host=host,
        read_only=read_only,
        verifier=verifier,
        access_log=access_log,
        tokenless_write=tokenless_write,
    )
    threading.Thread(target=bound.warm_up, name="clawmem-warm-up", daemon=True).start()
    log_to_stderr()
    if announce is not None:
        announce(app.required(), access_log.where)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    server = uvicorn.Server(config)
    gone: list[str] = []
    threading.Thread(
        target=_stop_when_gone, args=(mem.root, server, gone), name="clawmem-root", daemon=True
    ).start()
    try:
        server.run()
    finally:
        access_log.close()
    if gone:
        raise WorkspaceError(
            f"{mem.root}: the workspace folder {gone[0]}; the server stopped",
            hint="start `clawmem mcp --http` in the workspace again once it is back",
        )


def _stop_when_gone(root: Path, server: uvicorn.Server, gone: list[str]) -> None:
    """Stop the server once its workspace folder is removed or replaced (looked at every
    second): it answered every request with an error for as long as it ran."""
    import time

    from clawmem.markdown.workspace import folder_gone, folder_identity

    identity = folder_identity(root)
    while not server.should_exit:
        time.sleep(1.0)
        why = folder_gone(root, identity)
        if why is not None:
            gone.append(why)
            server.should_exit = True
            return
