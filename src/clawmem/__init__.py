"""clawmem: offline, local-first long-term memory for AI agents.

Plain Markdown is the source of truth; ``.memory/index.sqlite`` is derived and rebuildable.

    import clawmem
    mem = clawmem.open_workspace("~/notes")
    hits = mem.recall("what does Peter think of Rust?", since="30d", k=8).hits
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawmem.errors import ClawmemError

__version__ = "0.1.0"
__all__ = ["ClawmemError", "Memory", "open_workspace", "__version__"]

if TYPE_CHECKING:
    from clawmem.memory import Memory, open_workspace


def __getattr__(name: str) -> object:
    # Imported on first use so that `clawmem --help` and `import clawmem.errors` stay fast.
    if name in ("Memory", "open_workspace"):
        from clawmem import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'clawmem' has no attribute {name!r}")
