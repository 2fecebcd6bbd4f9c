"""The fact a citation names: what ``correct``, ``retain --supersedes``, ``forget`` and
``history`` start from.

A citation is what recall prints (``memory/2025-11-12.md#L30-L30``); ``path:30`` and
``path#L30`` are read too. The file is read from the Markdown (the source of truth), never from
the index, and only inside the workspace (``workspace.resolve_member``): a citation is user input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clawmem.errors import InputError, UsageError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.facts import Fact, extract_facts
from clawmem.markdown.lines import text_lines
from clawmem.markdown.workspace import resolve_member, writable_path
from clawmem.text.redact import redact

_CITED = re.compile(r"(?P<path>.+?)(?:#L(?P<a>\d+)(?:-L?(?P<b>\d+))?|:(?P<c>\d+))")


@dataclass(frozen=True)
class CitedFact:
    """A fact found at a citation: its file, its line and the fact as parsed."""

    path: str  # workspace-relative POSIX path
    fact: Fact

    @property
    def line(self) -> int:
        return self.fact.line

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.line}-L{self.line}"


def split_cited(citation: str) -> tuple[str, int]:
    """(path, line) of ``path#L12-L12``, ``path#L12`` or ``path:12``; ``UsageError`` otherwise
    (a citation of several lines names no single fact)."""
    m = _CITED.fullmatch(citation.strip())
    if m is None:
        raise UsageError(
            f"{citation}: not a citation of one line",
            hint="pass a fact's citation as recall prints it, e.g. memory/2025-11-12.md#L30-L30",
        )
    first = int(m.group("a") or m.group("c"))
    last = int(m.group("b")) if m.group("b") else first
    if last != first:
        raise UsageError(
            f"{citation}: names lines {first}-{last}; a fact is one line",
            hint=f"name the fact's own line, e.g. {m.group('path')}#L{first}-L{first}",
        )
    return m.group("path"), first


def fact_at(ix: Indexer, citation: str) -> CitedFact:
    """The fact at ``citation``, read from the Markdown; ``UsageError`` when the line is not a
    fact (with what it is), ``WorkspaceError`` for a path outside the workspace's memory files."""
    path, line = split_cited(citation)
    relpath = resolve_member(ix.root, path, ix.cfg.extra_paths, max_bytes=ix.cfg.max_file_bytes)
    raw = writable_path(ix.root, relpath).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{relpath}: invalid UTF-8", hint="re-save the file as UTF-8, then try again"
        ) from None
    facts, _problems = extract_facts(text)
    for f in facts:
        if f.line == line:
            return CitedFact(relpath, f)
    lines = text_lines(text)
    if not 1 <= line <= len(lines):
        raise UsageError(
            f"{relpath}#L{line}: the file has {len(lines)} lines", hint="see `clawmem get`"
        )
    raise UsageError(
        f"{relpath} line {line} is not a fact: {redact(lines[line - 1].strip())[:80]!r}",
        hint="facts are the bullets of a ## Retain section; `clawmem facts` lists them",
    )
