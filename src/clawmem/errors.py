"""One error hierarchy for clawmem.

Every failure a user can cause or fix is a ``ClawmemError``. The CLI catches
them in exactly one place (``cli.main``), prints ``clawmem: error: …`` plus a
hint on stderr, and exits with the class's ``exit_code``. Library callers get
the same exceptions with the same messages.
"""

from __future__ import annotations

# An error is one line (and its hint one more), whatever the user typed: a line break in an echoed
# value ("invalid date \"\\nC\"") is shown escaped, never broken onto a line of its own.
_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def one_line(text: str) -> str:
    return text.translate(_BREAKS)


class ClawmemError(Exception):
    """Base class. ``message`` says what went wrong and where; ``hint`` says how to fix it.

    Errors speak the library's language. Where a message or hint names a parameter of the call
    (``allow_secret``), it is written ``{param}`` and ``param`` is set: a shell around the library
    (the CLI, the MCP server) says it in its own words with ``in_words`` (``--allow-secret``)."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, *, param: str | None = None) -> None:
        self.param = param
        self._text = (one_line(message), hint and one_line(hint))
        self.message, self.hint = self._said(param)
        super().__init__(self.message)

    def _said(self, name: str | None) -> tuple[str, str | None]:
        message, hint = self._text
        if self.param is None or name is None:
            return message, hint
        return message.replace("{param}", name), hint and hint.replace("{param}", name)

    def in_words(self, names: dict[str, str], sep: str = " ") -> tuple[str, str | None]:
        """(message, hint) with the parameter called ``names[param]`` (as is if absent)."""
        if self.param is None or self.param not in names:
            return self.message, self.hint
        return self._said(names[self.param])

    def recast(self, cls: type[ClawmemError]) -> ClawmemError:
        """The same message and hint as another kind of error (a bad value given as an option
        is a usage error, the same text found in a file an input error)."""
        message, hint = self._text
        return cls(message, hint, param=self.param)

    def __str__(self) -> str:
        return self.message


class UsageError(ClawmemError):
    """Bad arguments or options: the command line itself is wrong."""

    exit_code = 2


class BadArgument(UsageError):
    """One argument of a library call is out of range: ``k=0: must be at least 1`` (the CLI says
    ``-k 0: must be at least 1``)."""

    def __init__(self, param: str, value: object, problem: str, hint: str | None = None) -> None:
        super().__init__(f"{param}={value}: {problem}", hint, param=param)
        self.value = value
        self.problem = problem

    def in_words(self, names: dict[str, str], sep: str = " ") -> tuple[str, str | None]:
        name = names.get(self.param or "")
        if name is None:
            return self.message, self.hint
        if not name:  # a positional argument: its value says which
            return f"{self.value}: {self.problem}", self.hint
        return f"{name}{sep}{self.value}: {self.problem}", self.hint


class WorkspaceError(ClawmemError):
    """No workspace found, or a path that is not allowed (outside the workspace, not a memory file)."""

    exit_code = 3


class UnsafePathError(WorkspaceError):
    """A file clawmem would open is a link, or its index folder is not the user's own real
    folder (files/safe_open.py): refused, never followed."""


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


class SetupBroken(ClawmemError):
    """``clawmem doctor`` found something broken in the install or the workspace's setup."""

    exit_code = 11
