"""Calling a tool: look it up, check its arguments, run it on the workspace, and turn any failure
into the text the CLI would print. Shared by both transports; never raises.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

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
