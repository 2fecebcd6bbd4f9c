"""``clawmem mcp``: the workspace's memory as Model Context Protocol tools over stdio.

Built on the official SDK's low-level server (``mcp`` on PyPI) so that every tool has a
hand-written JSON schema an LLM can fill in, and every failure comes back as a tool error carrying
the same ``clawmem: error: …`` text the CLI prints: never a stack trace, never the end of the
server. One ``Memory`` serves the whole process, so the embedding model loads once (warmed up in
the background at start); each call opens the index, syncs what changed on disk (the same lazy
sync as the CLI) and closes it, so other clawmem processes and a watcher can run beside it.

The tools and their arguments are plain data (``TOOLS``) and ``call_tool`` is plain Python, so
they can be checked without the protocol; ``serve`` wires them to the SDK.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from clawmem.errors import ClawmemError, InputError, UsageError
from clawmem.markdown.kinds import KINDS
from clawmem.recall.pipeline import KINDS as RECALL_KINDS
from clawmem.recall.pipeline import MODES, SOURCES

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.lowlevel.server import ServerRequestContext
    from starlette.types import ASGIApp, Receive, Scope, Send

    from clawmem.cli.tokens import Token, Verifier
    from clawmem.memory import Memory

log = logging.getLogger("clawmem.mcp")

MAX_QUERY_CHARS = 4_000
MAX_TEXT_CHARS = 4_000
MAX_SHORT_CHARS = 200


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    schema: dict
    run: Callable[[Memory, dict], dict]  # (the workspace, validated arguments) -> JSON object
    writes: bool = False


def _short(description: str) -> dict:
    return {"type": "string", "maxLength": MAX_SHORT_CHARS, "description": description}


# ------------------------------------------------------------------------------ the tools


def _search(mem: Memory, a: dict) -> dict:
    kind = a.get("kind")
    res = mem.recall(
        a["query"],
        k=a.get("k"),
        mode=a.get("mode", "hybrid"),
        since=a.get("since"),
        until=a.get("until"),
        kind=[kind] if isinstance(kind, str) else kind,
        entity=a.get("entity"),
        path=a.get("path"),
        as_of=a.get("as_of"),
        budget=a.get("budget"),
        source=a.get("source"),
        expand=bool(a.get("expand", False)),
        min_relevance=a.get("min_relevance"),
    )
    return res.to_dict()


def _get(mem: Memory, a: dict) -> dict:
    # A citation from memory_search works as it is: memory/2025-11-27.md#L12-L20.
    return mem.get(a["path"], from_line=a.get("from"), lines=a.get("lines")).to_dict()


def _retain(mem: Memory, a: dict) -> dict:
    try:
        return mem.retain(
            a["text"],
            kind=a.get("kind", "W"),
            confidence=a.get("confidence"),
            entities=a.get("entities") or [],
            day=a.get("date"),
        ).to_dict()
    except InputError as exc:
        if exc.param != "allow_secret":
            raise
        # The tool has no argument to insist with (docs/agents.md): an agent is never the one
        # to decide that a credential goes into files that are often committed. A person can.
        raise InputError(
            exc.message,
            hint="retain it without the credential (say where it is kept, not what it is); "
            "a person can store one with `clawmem retain --allow-secret`",
        ) from None


def _status(mem: Memory, a: dict) -> dict:
    return mem.status().to_dict()


def _entities(mem: Memory, a: dict) -> dict:
    rows = [r.to_dict() for r in mem.entities()]
    return {"entities": rows, "count": len(rows)}


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_search",
        title="Search long-term memory",
        description=(
            "Search the user's long-term memory (Markdown notes, daily logs, entity pages and "
            "retained facts) and get the best passages with citations. Use it before answering "
            "anything about people, projects, decisions, preferences or past events. Lexical and "
            "semantic at once: exact names and identifiers (DEC-0054, payment_processor) and "
            "paraphrases both work, in any language. Each result has `citation` "
            "(path#Lstart-Lend, pass it to memory_get to read more), `snippet`, `score`, "
            "`timestamp` (the day it was recorded), `relevance` (the estimated probability, 0-1, that "
            "it is evidence for the query: below 0.1 it most likely is not), and for a retained "
            "fact `kind`, `content`, "
            "`entities`, `confidence`, `superseded_by`; a result reached through a link (expand) has "
            "`via`. When no result is relevant enough (none reaches min_relevance) there are no "
            "results and `empty_reason` says so with the best relevance: memory has nothing on it, "
            "answer without it. `empty_reason` also says why nothing was found otherwise; "
            "`degraded` says what was off (for example vectors). The JSON is the same as "
            "`clawmem recall --json`."
        ),
        schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What to look for: a question, names, identifiers or keywords.",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "How many results (default 6).",
                },
                "since": _short(
                    "Only what was recorded on or after this: 30d, 2w, 3m, 1y, 2025-11, 2025-11-27."
                ),
                "until": _short("Only what was recorded on or before this; same forms as since."),
                "kind": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(RECALL_KINDS)},
                    "description": (
                        "Only these kinds: W world fact, B the agent's own experience, O opinion, "
                        "S summary, chunk (plain notes that are not facts)."
                    ),
                },
                "entity": _short(
                    "Only facts mentioning this entity (Peter or @Peter), plus its page."
                ),
                "as_of": _short(
                    "YYYY-MM-DD: answer as of that day (later facts are ignored, facts superseded by "
                    "then are marked)."
                ),
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100_000,
                    "description": "Pack the best results into about this many tokens.",
                },
                "path": _short(
                    "Only files under this workspace path prefix, e.g. memory/ or bank/."
                ),
                "mode": {
                    "type": "string",
                    "enum": list(MODES),
                    "description": "hybrid (default), lexical only, or vector only.",
                },
                "source": {
                    "type": "string",
                    "enum": list(SOURCES),
                    "description": (
                        "all (default), memory (the notes) or sessions (what was said in "
                        "conversations, when transcripts are configured)."
                    ),
                },
                "expand": {
                    "type": "boolean",
                    "description": (
                        "Also return notes one link away ([[wikilinks]], Markdown links, "
                        "@mentions) from the best hits, after them; each carries `via`: the link "
                        "that reached it."
                    ),
                },
                "min_relevance": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": (
                        "Return no results unless one reaches this relevance (default: the "
                        "workspace's min_relevance setting, else the fitted model's threshold, "
                        "0.07 for hybrid recall with the default model, 0.01 lexical); 0 returns "
                        "every result however weak."
                    ),
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        run=_search,
    ),
    ToolSpec(
        name="memory_get",
        title="Read lines of a memory file",
        description=(
            "Read lines of a memory file in the workspace, e.g. to see the context around a "
            "memory_search citation. `path` is a workspace-relative Markdown file "
            "(memory/2025-11-27.md, MEMORY.md, bank/entities/Peter.md) or a citation "
            "(memory/2025-11-27.md#L12-L20). Files outside the workspace are refused. Returns "
            "`text`, `citation`, `from`, `to` and `total_lines`."
        ),
        schema={
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1_000,
                    "description": "Workspace-relative file, or a citation path#Lstart-Lend.",
                },
                "from": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line, 1-based (default 1, or the citation's start).",
                },
                "lines": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines (default: to the end, or the citation's range).",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        run=_get,
    ),
    ToolSpec(
        name="memory_retain",
        title="Remember a fact",
        description=(
            "Store one durable, self-contained fact in long-term memory: it is appended to the "
            "day's log (memory/YYYY-MM-DD.md) under '## Retain' and is searchable as soon as this "
            "returns. Write it so it makes sense on its own months later (names, not pronouns; "
            "dates where they matter). Kinds: W objective fact about the world, B something you "
            "(the agent) did or experienced, O an opinion or preference with a confidence, S a "
            "summary. Name the people and things it is about in `entities`. An identical fact is "
            "not stored twice (`stored` false, `duplicate_of` its citation). Text that looks "
            "like a password, key or token is refused. Returns the stored line and its citation."
        ),
        schema={
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "The fact, one self-contained statement, one line.",
                },
                "kind": {
                    "type": "string",
                    "enum": list(KINDS),
                    "description": "W world (default), B experience, O opinion, S summary.",
                },
                "entities": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": MAX_SHORT_CHARS},
                    "maxItems": 20,
                    "description": 'Who or what it is about, e.g. ["Peter", "warelay"].',
                },
                "confidence": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Opinions (kind O) only: how sure, 0.0 to 1.0.",
                },
                "date": _short("The day it belongs to, YYYY-MM-DD (default today)."),
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        run=_retain,
        writes=True,
    ),
    ToolSpec(
        name="memory_status",
        title="Memory index status",
        description=(
            "The state of the memory index: files and chunks indexed, files changed on disk since "
            "the last sync, vectors (model, indexed, pending, or why they are off), the watcher, "
            "and malformed facts. Use it when search results look stale or degraded."
        ),
        schema={"type": "object", "properties": {}, "additionalProperties": False},
        run=_status,
    ),
    ToolSpec(
        name="memory_entities",
        title="Entities in memory",
        description=(
            "Who and what the remembered facts are about: each entity with its number of facts, "
            "the day it was last mentioned, and its page (bank/entities/NAME.md) if it has one. "
            "Use the names with memory_search's `entity` filter."
        ),
        schema={"type": "object", "properties": {}, "additionalProperties": False},
        run=_entities,
    ),
)

INSTRUCTIONS = """\
clawmem is this user's long-term memory: a folder of Markdown notes (MEMORY.md, daily logs in \
memory/, entity pages in bank/entities/) searched offline.
- Before answering about people, projects, decisions, preferences or past events, call \
memory_search; cite what you use by its citation (path#Lstart-Lend). Read around a hit with \
memory_get.
- When you learn something durable (a decision, a preference, a fact about a person or project, \
something you did that worked or failed), store it with memory_retain: one self-contained \
statement, the right kind (W/B/O/S), the entities it is about, a confidence for opinions. Do not \
store secrets or transient chatter.
"""


def tools(read_only: bool = False) -> list[ToolSpec]:
    return [t for t in TOOLS if not (read_only and t.writes)]


# ------------------------------------------------------------------------------ arguments

_TYPES: dict[str, tuple[type[Any], ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
    "boolean": (bool,),
}
_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "array": "a list",
    "boolean": "true or false",
}


def _describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_arguments(spec: ToolSpec, args: dict | None) -> dict:
    """Type-check ``args`` against the tool's schema; values are checked by the library itself
    (so the messages are the CLI's). Raises ``UsageError`` with a one-line message."""
    if args is not None and not isinstance(args, dict):
        raise UsageError(f"{spec.name}: arguments must be an object, got {_describe(args)}")
    given: dict[str, Any] = dict(args or {})
    props = spec.schema["properties"]
    where = spec.name
    unknown = sorted(set(given) - set(props))
    if unknown:
        known = ", ".join(props) or "none"
        raise UsageError(f"{where}: unknown argument {unknown[0]!r}", hint=f"arguments: {known}")
    for name in spec.schema.get("required", []):
        if given.get(name) is None:
            raise UsageError(f"{where}: {name!r} is required")
    out: dict = {}
    for name, value in given.items():
        if value is None:
            continue  # an LLM often sends null for "not given"
        rule = props[name]
        want = rule["type"]
        if want == "array" and isinstance(value, str):
            value = [value]  # "kind": "W" for ["W"]
        if want == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if (isinstance(value, bool) and want != "boolean") or not isinstance(value, _TYPES[want]):
            raise UsageError(
                f"{where}: {name!r} must be {_TYPE_WORDS[want]}, got {_describe(value)}"
            )
        if want == "integer" and rule.get("maximum") is not None and value > rule["maximum"]:
            # The schema's maximum is the tool's promise to the agent (k at most 50); the
            # library takes more, so the tool checks it. Minimums are the library's messages.
            raise UsageError(f"{where}: {name!r} is {value}; the maximum is {rule['maximum']}")
        if want == "string":
            limit = rule.get("maxLength")
            if limit and len(value) > limit:
                raise UsageError(
                    f"{where}: {name!r} is {len(value):,} characters; the limit is {limit:,}",
                    hint="shorten it: search with the key words, not a whole document",
                )
            if rule.get("minLength") and not value.strip():
                raise UsageError(f"{where}: {name!r} is empty")
        if want == "array":
            limit = rule.get("maxItems")
            if limit and len(value) > limit:
                raise UsageError(f"{where}: {name!r} has {len(value)} items; the limit is {limit}")
            item_type = rule["items"]["type"]
            for item in value:
                if not isinstance(item, _TYPES[item_type]):
                    raise UsageError(
                        f"{where}: every item of {name!r} must be {_TYPE_WORDS[item_type]}, "
                        f"got {_describe(item)}"
                    )
                cap = rule["items"].get("maxLength")
                if cap and len(item) > cap:
                    raise UsageError(
                        f"{where}: an item of {name!r} is longer than {cap} characters"
                    )
        out[name] = value
    return out


# The library's parameter names that the tools call otherwise (memory_get's "from").
ARGUMENTS = {"from_line": "from"}


def error_text(exc: ClawmemError) -> str:
    """What the CLI prints on stderr for this error, naming the tool's arguments."""
    message, hint = exc.in_words(ARGUMENTS, sep="=")
    text = f"clawmem: error: {message}"
    if hint:
        text += f"\n  hint: {hint}"
    return text


class Tools:
    """The tools bound to one workspace. Calls are serialised: the library is synchronous and a
    ``Memory`` is not meant to be shared between threads at once."""

    def __init__(self, mem: Memory, *, read_only: bool = False) -> None:
        self.mem = mem
        self.read_only = read_only
        self.specs = {t.name: t for t in tools(read_only)}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Start the resident embedder (or load the model) now, so the first search does not
        pay for it."""
        with self._lock:
            try:
                self.mem.warm_up()
            except Exception:  # noqa: BLE001 - a warm-up must never take the server down
                log.exception("warming up the embedding model failed")

    def call(
        self, name: str, args: dict | None, *, may_write: bool = True
    ) -> tuple[bool, dict | str]:
        """(ok, JSON object) or (False, the CLI's error text). Never raises. ``may_write``: the
        caller's token allows memory_retain (a read-only token sees the tool as unknown)."""
        spec = self.specs.get(name)
        if spec is not None and spec.writes and not may_write:
            spec = None
        try:
            if spec is None:
                names = [n for n, t in self.specs.items() if may_write or not t.writes]
                hint = "tools: " + ", ".join(names)
                if name == "memory_retain" and self.read_only:
                    hint = "the server was started with --read-only"
                elif name == "memory_retain" and not may_write:
                    hint = "this token may only read; `clawmem token create --write` makes one that writes"
                raise UsageError(f"unknown tool {name!r}", hint=hint)
            clean = validate_arguments(spec, args)
            with self._lock:
                return True, spec.run(self.mem, clean)
        except ClawmemError as exc:
            return False, error_text(exc)
        except Exception as exc:  # noqa: BLE001 - the boundary: report it, keep serving
            log.exception("tool %s failed", name)
            return False, (
                f"clawmem: error: internal error: {type(exc).__name__}: {exc}\n"
                "  hint: this is a bug in clawmem; the server's log (stderr) has the traceback"
            )


# ------------------------------------------------------------------------------ the protocol

# What the request being served may do: "write" (every tool) or "read" (no memory_retain). Set per
# HTTP request from its token (``TokenGate``); stdio has one client, trusted like the CLI.
GRANT: contextvars.ContextVar[str] = contextvars.ContextVar("clawmem_grant", default="write")


def _server(mem: Memory, bound: Tools) -> Server[Any]:
    """The SDK's low-level server with clawmem's tools, for either transport."""
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
        return types.ListToolsResult(tools=tool_list(GRANT.get() == "write"))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> types.CallToolResult:
        may_write = GRANT.get() == "write"
        ok, data = await anyio.to_thread.run_sync(
            partial(bound.call, params.name, params.arguments, may_write=may_write)
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
        instructions=INSTRUCTIONS + f"Workspace: {mem.root}\n",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _log_to_stderr() -> None:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="clawmem mcp: %(levelname)s: %(message)s"
    )


def serve(mem: Memory, *, read_only: bool = False) -> None:
    """Serve the workspace's memory over stdio until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    # A server lives for a whole agent session: it follows the files' changes itself, so a call
    # with nothing changed skips the stat pass of every file even with no `clawmem watch`.
    mem.follow_changes()
    bound = Tools(mem, read_only=read_only)
    server = _server(mem, bound)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            async with anyio.create_task_group() as tg:
                # Abandoned, not awaited, if the client leaves while the model is still loading.
                tg.start_soon(
                    partial(anyio.to_thread.run_sync, abandon_on_cancel=True), bound.warm_up
                )
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()

    _log_to_stderr()
    anyio.run(main)


# ------------------------------------------------------------------------------ over HTTP

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


def http_app(
    mem: Memory,
    *,
    host: str,
    read_only: bool = False,
    verifier: Verifier,
    required: bool = True,
) -> tuple[TokenGate, Tools]:
    """The ASGI app: the SDK's streamable HTTP transport at ``/mcp`` behind ``TokenGate``.
    Stateless: every request stands alone (no session to hijack or to run out of), and its
    answer is one JSON body."""
    from mcp.server.transport_security import TransportSecuritySettings

    bound = Tools(mem, read_only=read_only)
    server = _server(mem, bound)
    # The SDK checks the Host header on loopback against DNS rebinding (a web page that makes a
    # browser call the local server). With tokens that attack has nothing to send, and a reverse
    # proxy in front passes its own host name: the check stays for a tokenless loopback server.
    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=False) if required else None
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=security,
    )
    return TokenGate(app, verifier, required=required, read_only=read_only), bound


def serve_http(
    mem: Memory,
    host: str,
    port: int,
    *,
    read_only: bool = False,
    announce: Callable[[bool], None] | None = None,
) -> None:
    """Serve over streamable HTTP until interrupted. Tokens are required on any address but
    loopback, and on loopback too once a token names this workspace."""
    import threading

    import uvicorn

    from clawmem.cli.tokens import Verifier

    verifier = Verifier(mem.root)
    has_tokens = verifier.any_for_workspace()
    if not is_loopback(host) and not has_tokens:
        raise UsageError(
            f"serving on {host} (not loopback) needs a token for this workspace",
            hint=f"create one: clawmem token create --name NAME -w {mem.root}",
        )
    required = has_tokens or not is_loopback(host)
    mem.follow_changes()
    app, bound = http_app(mem, host=host, read_only=read_only, verifier=verifier, required=required)
    threading.Thread(target=bound.warm_up, name="clawmem-warm-up", daemon=True).start()
    _log_to_stderr()
    if announce is not None:
        announce(required)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run()
