"""clawmem: offline, local-first long-term memory for AI agents.

Plain Markdown is the source of truth; ``.memory/index.sqlite`` is derived and rebuildable.
"""

from .errors import ClawmemError
from .memory import Memory, open_workspace

__version__ = "0.1.0"
__all__ = ["ClawmemError", "Memory", "open_workspace", "__version__"]
