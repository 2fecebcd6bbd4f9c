"""The gate in front of the HTTP endpoint: who may call, what the call may reach, which web pages
may ask, and one line in the access log for every request.

- **Tokens.** Any address but loopback always needs one; a loopback server needs one as soon as a
  token names its workspace, checked at every request (the store is re-read when it changes), so
  creating or revoking a token applies to a running server at once. Until then a request
  without one only reads (any user of the machine can reach a loopback port; writing without a
  token needs ``--tokenless-write``). A refusal is 401 with a
  JSON-RPC error whose message says why (the SDK's client shows it) and never repeats what was
  presented. A valid token sets the request's ``access.Grant``: what it names, nothing more.
- **Browsers.** A tokenless loopback server answers only requests whose ``Host`` is loopback and
  whose ``Origin``, if any, is loopback or allowed (a web page that makes the browser call it,
  DNS rebinding included, is refused). CORS is answered from the ``http_cors_origins`` allow-list:
  a preflight from an allowed origin gets its headers (and no 401: a preflight carries no token);
  one from another origin is refused without them.
- **The access log** (``accesslog``): time, token name, method, tool, status, outcome.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clawmem.cli.mcp.access import GRANT, Grant
from clawmem.errors import ClawmemError
from clawmem.text import untrusted_json

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from clawmem.cli.mcp.accesslog import AccessLog
    from clawmem.cli.mcp.tokens import Token, Verifier

log = logging.getLogger("clawmem.mcp")

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
# Kept of a request's body and of an answer's, to name the method and the outcome in the log.
PEEK_BYTES = 256 * 1024
CORS_HEADERS = [
    (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id",
    ),
    (b"access-control-max-age", b"600"),
]
CORS_EXPOSE = (
    b"access-control-expose-headers",
    b"mcp-session-id, mcp-protocol-version, www-authenticate",
)
UNAUTHORIZED = -32001  # a JSON-RPC server error code: the request was not authorized


@dataclass
class _Seen:
    """What one request said and got, for its line in the access log."""

    body: bytearray
    answer: bytearray
    status: int = 0


class TokenGate:
    def __init__(
        self,
        app: ASGIApp,
        verifier: Verifier,
        *,
        always_required: bool,
        read_only: bool,
        cors_origins: tuple[str, ...] = (),
        access_log: AccessLog | None = None,
        tokenless_write: bool = False,
    ) -> None:
        self.app = app
        self.tokenless_write = tokenless_write
        self.verifier = verifier
        self.always_required = always_required
        self.read_only = read_only
        self.cors_origins = frozenset(o.rstrip("/") for o in cors_origins)
        self.access_log = access_log

    def required(self) -> bool:
        """Whether this request needs a token: always off loopback, and on loopback once one
        names the workspace (asked again at every request)."""
        if self.always_required:
            return True
        try:
            return self.verifier.any_for_workspace()
        except ClawmemError:
            log.exception("the token store cannot be read; requiring a token")
            return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        seen = _Seen(bytearray(), bytearray())
        origin = _header(scope, b"origin")
        allowed = origin is not None and self._allowed(origin)
        send = _watching(send, seen, origin if allowed else None)
        who = "-"
        try:
            if scope.get("method") == "OPTIONS" and origin is not None:
                await _preflight(send, origin if allowed else None)
                return
            token: Token | None = None
            required = self.required()
            if required or _bearer(scope) is not None:
                token, why = self._token(scope)
                if token is None:
                    await _read_some(receive, seen)  # the method, for the log line
                    await _refuse(send, why)
                    return
                who = token.name
            elif not _loopback_host(_header(scope, b"host")):
                await _plain(send, 421, "a tokenless loopback server answers loopback hosts only")
                return
            elif origin is not None and not allowed and not _loopback_origin(origin):
                await _plain(send, 403, f"origin {origin} is not allowed (http_cors_origins)")
                return
            grant = Grant(
                # Without a token, only with --tokenless-write: a loopback port is open to every
                # user of the machine, not only to the one who started the server.
                write=not self.read_only
                and (token.write if token is not None else self.tokenless_write),
                scopes=frozenset(token.scopes) if token else frozenset(),
                sessions=token.sessions if token else False,
                remote=True,
                who=who,
            )
            reset = GRANT.set(grant)
            try:
                await self.app(scope, _peeking(receive, seen), send)
            finally:
                GRANT.reset(reset)
        finally:
            self._log(scope, who, seen, started)

    def _allowed(self, origin: str) -> bool:
        return "*" in self.cors_origins or origin.rstrip("/") in self.cors_origins

    def _token(self, scope: Scope) -> tuple[Token | None, str]:
        secret = _bearer(scope)
        if secret is None:
            return None, "no token was sent (Authorization: Bearer <token>)"
        if not secret:
            return None, "the Authorization header is not Bearer <token>"
        try:
            token = self.verifier.verify(secret)
        except ClawmemError:
            log.exception("the token store cannot be read; refusing every request")
            return None, "the server cannot read its token store"
        if token is None:
            return None, "the token is not valid here (unknown, revoked, or for another workspace)"
        return token, ""

    def _log(self, scope: Scope, who: str, seen: _Seen, started: float) -> None:
        if self.access_log is None:
            return
        method, tool, query = _request_of(bytes(seen.body))
        if scope.get("method") == "OPTIONS":
            method = "OPTIONS"
        try:
            self.access_log.write(
                who=who,
                method=method,
                tool=tool,
                status=seen.status,
                result=_outcome(seen.status, bytes(seen.answer)),
                started=started,
                query=query,
            )
        except OSError:
            log.exception("the access log cannot be written")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _bearer(scope: Scope) -> str | None:
    value = _header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, secret = value.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


def _loopback_host(host: str | None) -> bool:
    if not host:
        return False
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOOPBACK_HOSTS


def _loopback_origin(origin: str) -> bool:
    _, sep, rest = origin.partition("://")
    return bool(sep) and _loopback_host(rest.split("/", 1)[0])


def _peeking(receive: Receive, seen: _Seen) -> Receive:
    async def peek() -> Message:
        message = await receive()
        if message["type"] == "http.request" and len(seen.body) < PEEK_BYTES:
            seen.body += message.get("body", b"")[: PEEK_BYTES - len(seen.body)]
        return message

    return peek


async def _read_some(receive: Receive, seen: _Seen) -> None:
    """Up to ``PEEK_BYTES`` of a refused request's body: never all of a huge one."""
    more = True
    while more and len(seen.body) < PEEK_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen.body += message.get("body", b"")[: PEEK_BYTES - len(seen.body)]
        more = bool(message.get("more_body", False))


def _watching(send: Send, seen: _Seen, cors_origin: str | None) -> Send:
    """``send`` that notes the status and the start of the answer, and adds the CORS headers
    of an allowed origin to every answer."""

    async def watch(message: Message) -> None:
        if message["type"] == "http.response.start":
            seen.status = int(message["status"])
            if cors_origin is not None:
                headers = list(message.get("headers", []))
                headers += [
                    (b"access-control-allow-origin", cors_origin.encode("latin-1")),
                    (b"vary", b"Origin"),
                    CORS_EXPOSE,
                ]
                message = {**message, "headers": headers}
        elif message["type"] == "http.response.body" and len(seen.answer) < PEEK_BYTES:
            seen.answer += message.get("body", b"")[: PEEK_BYTES - len(seen.answer)]
        await send(message)

    return watch


async def _respond(
    send: Callable[[Message], Awaitable[None]],
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _preflight(send: Send, origin: str | None) -> None:
    """A CORS preflight: the allowed origin's headers, or a refusal without them."""
    if origin is None:
        await _plain(send, 403, "this origin is not allowed (http_cors_origins)")
        return
    await _respond(send, 204, b"", CORS_HEADERS)


async def _plain(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await _respond(send, status, body, [(b"content-type", b"application/json")])


async def _refuse(send: Send, why: str) -> None:
    """401 with a JSON-RPC error: the SDK's client raises it with this message (a bare 401 became
    "Server returned an error response")."""
    message = f"unauthorized: {why}; a valid clawmem token for this workspace is required"
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": UNAUTHORIZED,
                "message": message,
                "data": {"hint": "clawmem token create --name NAME -w WORKSPACE"},
            },
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Bearer realm="clawmem"'),
    ]
    await _respond(send, 401, body, headers)


def _request_of(body: bytes) -> tuple[str | None, str | None, str | None]:
    """(JSON-RPC method, tool, query) of a request's body, as far as it was kept. Read as JSON
    from outside is read (``untrusted_json``): a body of 100,000 nested lists raised
    RecursionError here, after the answer, and the request left no line in the access log (a
    token guessed that way, refused or not, was never logged)."""
    try:
        data: Any = untrusted_json.loads(body)
    except ValueError:
        return None, None, None
    if not isinstance(data, dict):
        return None, None, None
    method = data.get("method") if isinstance(data.get("method"), str) else None
    params = data.get("params")
    params = params if isinstance(params, dict) else {}
    tool = params.get("name") if method == "tools/call" else None
    args = params.get("arguments")
    args = args if isinstance(args, dict) else {}
    query = args.get("query") if isinstance(args.get("query"), str) else None
    return method, tool if isinstance(tool, str) else None, query


def _outcome(status: int, answer: bytes) -> str:
    if status == 401:
        return "refused"
    if status >= 400:
        return "error"
    try:
        data: Any = untrusted_json.loads(answer)
    except ValueError:
        return "ok" if status < 300 else "error"  # an empty 202, or a body longer than kept
    if isinstance(data, dict) and "error" in data:
        return "error"
    result = data.get("result") if isinstance(data, dict) else None
    if isinstance(result, dict) and result.get("isError"):
        return "tool-error"
    return "ok"
