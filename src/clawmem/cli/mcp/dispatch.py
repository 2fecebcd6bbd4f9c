"""Calling a tool: look it up, check its arguments, run it on the workspace, and turn any failure
into the text the CLI would print. Shared by both transports; never raises.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from clawmem.cli.mcp import remote
from clawmem.cli.mcp.access import LOCAL, Grant
from clawmem.cli.mcp.arguments import validate_arguments
from clawmem.cli.mcp.catalogue import tools
from clawmem.errors import ClawmemError, UsageError

if TYPE_CHECKING:
    from clawmem.memory import Memory

log = logging.getLogger("clawmem.mcp")

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
            except Exception:  # logged: a warm-up must never take the server down
                log.exception("warming up the embedding model failed")

    def call(self, name: str, args: dict | None, grant: Grant = LOCAL) -> tuple[bool, dict | str]:
        """(ok, JSON object) or (False, the CLI's error text). Never raises. ``grant``: what the
        request may reach (``access``): a read-only grant sees memory_retain as unknown; a remote
        one gets no absolute path back (``remote``)."""
        spec = self.specs.get(name)
        if spec is not None and spec.writes and not grant.write:
            spec = None
        try:
            if spec is None:
                names = [n for n, t in self.specs.items() if grant.write or not t.writes]
                hint = "tools: " + ", ".join(names)
                if name == "memory_retain" and self.read_only:
                    hint = "the server was started with --read-only"
                elif name == "memory_retain" and grant.who == "-":
                    hint = (
                        "without a token this server only reads; `clawmem token create --write` "
                        "makes one that writes (or start it with --tokenless-write)"
                    )
                elif name == "memory_retain" and not grant.write:
                    hint = "this token may only read; `clawmem token create --write` makes one that writes"
                raise UsageError(f"unknown tool {name!r}", hint=hint)
            clean = validate_arguments(spec, args)
            with self._lock:
                data = spec.run(self.mem, clean, grant)
                if grant.remote:
                    data = remote.answer(data, self._places(grant), ours=name == "memory_status")
                return True, data
        except ClawmemError as exc:
            text = error_text(exc)
        except Exception as exc:  # logged: the boundary reports it and keeps serving
            log.exception("tool %s failed", name)
            text = (
                f"clawmem: error: internal error: {type(exc).__name__}: {exc}\n"
                "  hint: this is a bug in clawmem; the server's log (stderr) has the traceback"
            )
        if grant.remote:
            with self._lock:
                text = remote.text(text, self._places(grant), ours=True)
        return False, text

    def _places(self, grant: Grant) -> list[tuple[str, str]]:
        """The workspace's places on disk and what a remote client sees instead: only those the
        grant reaches. Named for every configured scope and transcript folder, an absolute path
        in a call ("/home/me/team/MEMORY.md: outside the workspace") came back as
        "team:MEMORY.md", telling a token without the scope its name and where it lives; any
        other path is cut to its last part (``remote.text``)."""
        from clawmem.config import parse_scopes
        from clawmem.transcripts.sessions import folders

        try:
            scopes = parse_scopes(self.mem.cfg, self.mem.root)
        except ClawmemError:
            scopes = {}
        scopes = {name: path for name, path in scopes.items() if grant.reaches_scope(name)}
        sessions = folders(self.mem.root, self.mem.cfg) if grant.sessions else []
        return remote.places(self.mem.root, scopes, sessions)
