"""One error hierarchy for clawmem.

Every failure a user can cause or fix is a ``ClawmemError``. The CLI catches
them in exactly one place (``cli.main``), prints ``clawmem: error: …`` plus a
hint on stderr, and exits with the class's ``exit_code``. Library callers get
the same exceptions with the same messages.
"""

from __future__ import annotations


class ClawmemError(Exception):
    """Base class. ``message`` says what went wrong and where; ``hint`` says how to fix it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(ClawmemError):
    """Bad arguments or options: the command line itself is wrong."""

    exit_code = 2


class WorkspaceError(ClawmemError):
    """No workspace found, or a path that is not allowed (outside the workspace, not a memory file)."""

    exit_code = 3


class ConfigError(ClawmemError):
    """``clawmem.toml`` or an environment override is invalid."""

    exit_code = 4


class StoreError(ClawmemError):
    """The derived index cannot be opened, written or rebuilt."""

    exit_code = 5


class ModelError(ClawmemError):
    """The embedding model is missing, corrupt, or not an embedding model."""

    exit_code = 6


class InputError(ClawmemError):
    """User content (a Markdown file, a fact, a query file) is malformed."""

    exit_code = 7


class LockedError(ClawmemError):
    """Another clawmem process holds the write lock for this workspace."""

    exit_code = 8


class ReflectConflict(ClawmemError):
    """``reflect`` would overwrite a hand edit of a section it generated (or its markers are broken)."""

    exit_code = 10


class CheckFailed(ClawmemError):
    """``clawmem check`` found problems in the workspace."""

    exit_code = 9
