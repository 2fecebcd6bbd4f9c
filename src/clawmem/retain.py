"""Writing facts: ``clawmem retain`` appends one bullet to a day's ``## Retain`` section.

The daily log is the source of truth, so the write is careful: everything already in the file is
kept byte for byte (only the new line is inserted), the new content goes to a temporary file that
is fsynced and renamed over the original (a crash leaves the old file or the new one, never half
of one), an exact duplicate is not appended twice, and text that looks like a credential is
refused unless the caller insists.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .errors import InputError
from .facts import Fact, format_fact, retain_insert_index

# Credential shapes worth refusing by default (a memory file is plain text in git).
_SECRETS = [
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "a GitHub token",
        re.compile(
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"
        ),
    ),
    ("an OpenAI/Anthropic-style API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b")),
    (
        "a JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ),
    (
        "a password or token assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b"
            r"\s*[:=]\s*['\"]?[^\s'\"]{8,}"
        ),
    ),
]


def looks_like_secret(text: str) -> str | None:
    """What kind of credential ``text`` seems to contain, or None."""
    for what, pattern in _SECRETS:
        if pattern.search(text):
            return what
    return None


@dataclass(frozen=True)
class Placement:
    text: str  # the whole new file content
    line: int  # 1-based line of the new fact
    created_file: bool
    created_section: bool


def place_fact(existing: str | None, fact: Fact, day: date) -> Placement:
    """Pure: where the fact goes in the day's log and what the file becomes."""
    if existing is None:
        head = f"# {day.isoformat()}\n\n## Retain\n"
        return Placement(head + format_fact(fact) + "\n", 4, True, True)
    eol = "\r\n" if "\r\n" in existing else "\n"
    lines = existing.splitlines(keepends=True)
    at = retain_insert_index(lines)
    if at is None:
        # No Retain section yet: add one at the end, separated by a blank line.
        prefix = existing
        if prefix and not prefix.endswith(("\n", "\r")):
            prefix += eol
        if prefix.strip() and not prefix.endswith(eol * 2):
            prefix += eol
        body = f"## Retain{eol}{format_fact(fact)}{eol}"
        return Placement(prefix + body, prefix.count("\n") + 2, False, True)
    new_line = format_fact(fact) + eol
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += eol  # the previous last line had no ending; the fact needs its own line
    lines.insert(at, new_line)
    return Placement("".join(lines), at + 1, False, False)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old file or the new one, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def read_log(path: Path, relpath: str) -> str | None:
    if not path.exists():
        return None
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{relpath} line {line}: invalid UTF-8; clawmem will not rewrite it",
            hint="re-save the file as UTF-8, then retain again",
        ) from None
