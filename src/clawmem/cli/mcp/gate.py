"""The token gate in front of the HTTP endpoint: who may call, and what the call may do."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from clawmem.cli.mcp.protocol import GRANT
from clawmem.errors import ClawmemError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from clawmem.cli.mcp.tokens import Token, Verifier

log = logging.getLogger("clawmem.mcp")


class TokenGate:
    """ASGI middleware in front of the MCP endpoint: a request without a valid token for this
    workspace is answered 401 before anything reads the workspace; a valid one sets ``GRANT``.
    The answer never repeats what was presented."""

    def __init__(
        self, app: ASGIApp, verifier: Verifier, *, required: bool, read_only: bool
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.required = required
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        grant = "read" if self.read_only else "write"
        if self.required or _bearer(scope) is not None:
            token = self._token(scope)
            if token is None:
                await _refuse(send)
                return
            if not token.write:
                grant = "read"
        reset = GRANT.set(grant)
        try:
            await self.app(scope, receive, send)
        finally:
            GRANT.reset(reset)

    def _token(self, scope: Scope) -> Token | None:
        secret = _bearer(scope)
        if not secret:
            return None
        try:
            return self.verifier.verify(secret)
        except ClawmemError:
            log.exception("the token store cannot be read; refusing every request")
            return None


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, secret = value.decode("latin-1").partition(" ")
            return secret.strip() if scheme.lower() == "bearer" else ""
    return None


async def _refuse(send: Send) -> None:
    body = json.dumps(
        {
            "error": "unauthorized",
            "error_description": "a valid clawmem token for this workspace is required "
            "(Authorization: Bearer <token>; `clawmem token create`)",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="clawmem"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
