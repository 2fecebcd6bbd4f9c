"""What one request may reach: the grant a transport gives each call, and the rules that read it.

stdio has one client, the agent that started the process, trusted like the CLI: every tool, every
read scope, the transcripts, absolute paths in answers. Over HTTP a request reaches exactly what
its token names (``clawmem token create --scope NAME --sessions --write``): the workspace itself,
the read scopes it names, the conversation transcripts only with ``--sessions``, and nothing that
says where the workspace lives on the server's disk (``clawmem.cli.mcp.remote``).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from clawmem.errors import UsageError


@dataclass(frozen=True)
class Grant:
    write: bool  # memory_retain
    scopes: frozenset[str] | None  # the read scopes it reaches; None: every one configured
    sessions: bool  # conversation transcripts (sessions/…)
    remote: bool  # answers leave the machine: workspace-relative paths only
    who: str = "-"  # the token's name, for the access log

    def reaches_scope(self, name: str) -> bool:
        return self.scopes is None or name in self.scopes


LOCAL = Grant(write=True, scopes=None, sessions=True, remote=False, who="stdio")

# The grant of the request being served: set per HTTP request by the token gate, read by the tools.
GRANT: contextvars.ContextVar[Grant] = contextvars.ContextVar("clawmem_grant", default=LOCAL)

TOKEN_HINT = "a token names what it reaches: `clawmem token create --scope NAME --sessions`"


def search_source(grant: Grant, source: str | None) -> str | None:
    """memory_search's ``source`` as this grant may ask it: without transcripts, the notes only."""
    if grant.sessions:
        return source
    if source == "sessions":
        raise UsageError("this token does not reach conversation transcripts", hint=TOKEN_HINT)
    return "memory"


def search_scopes(grant: Grant, configured: list[str]) -> list[str] | None:
    """The read scopes a search asks (None: all of them)."""
    if grant.scopes is None:
        return None
    return [name for name in configured if name in grant.scopes]


def check_get(grant: Grant, path: str) -> None:
    """memory_get of a transcript or of a read scope's file only where the grant reaches it. A
    scope's name that the grant does not reach is refused whether the workspace has that scope or
    not, so the refusal says nothing about what is configured."""
    from clawmem.transcripts.sessions import is_transcript_path

    name, sep, rest = path.partition(":")
    if sep and "/" not in name:  # team:memory/x.md, a read scope's file
        if not grant.reaches_scope(name):
            raise UsageError(f"{path}: this token does not reach scope {name!r}", hint=TOKEN_HINT)
        path = rest  # team:sessions/…, the scope's transcript, needs --sessions too
    if is_transcript_path(path.split("#", 1)[0].lstrip("./")) and not grant.sessions:
        raise UsageError("this token does not reach conversation transcripts", hint=TOKEN_HINT)
