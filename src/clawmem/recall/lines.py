"""``clawmem get``: lines of a memory file, a transcript or a read scope's file, with their
citation (what a hit's citation reads back).

A citation names a workspace path (``memory/2025-11-27.md#L12-L20``), a transcript
(``sessions/…``: what was said in those lines) or a read scope's file (``team:memory/x.md``, read
from that workspace with its own settings). Credentials come back ``[redacted]``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from clawmem.ingest.indexing import Indexer
from clawmem.markdown.workspace import Lines, read_lines, split_citation

if TYPE_CHECKING:
    from clawmem.transcripts.sessions import TranscriptLines


def get_lines(
    ix: Indexer, path: str, *, from_line: int | None = None, lines: int | None = None
) -> Lines | TranscriptLines:
    """Lines of a memory file with their citation (``clawmem get``); for a transcript
    (``sessions/…``), what was said in those lines. Credentials come back ``[redacted]``.
    ``path`` may be a citation (``memory/2025-11-27.md#L12-L20``): it names the lines unless
    ``from_line`` or ``lines`` are given; a plain path reads from line 1."""
    # Imported here: `clawmem get` of a Markdown file needs neither transcripts nor recall.
    from clawmem.transcripts.sessions import is_transcript_path, read_messages

    path, from_line, lines = split_citation(path, from_line, lines)
    if ":" in path:  # team:memory/x.md, a read scope's file
        from clawmem.config import load_config, parse_scopes
        from clawmem.recall.scopes import split_scope, unknown_scope

        scopes = parse_scopes(ix.cfg, ix.root) if ix.cfg.read_scopes else {}
        name, rest = split_scope(path, scopes)
        if name is None:
            unknown_scope(ix, path, scopes)
        else:
            root = scopes[name]
            theirs = load_config(root)  # as recall searches the scope (recall/scopes.py)
            if is_transcript_path(rest):
                # team:sessions/…, a transcript of the scope's own, as recall cites it: refused
                # as "not a memory file", the citation could not be read back.
                said = read_messages(root, theirs, rest, from_line=from_line, lines=lines)
                return replace(said, path=path, citation=f"{name}:{said.citation}")
            got = read_lines(
                root,
                rest,
                from_line=from_line,
                lines=lines,
                extra_paths=theirs.extra_paths,
                max_bytes=theirs.max_file_bytes,
            )
            return replace(got, path=path, citation=f"{name}:{got.citation}")
    if is_transcript_path(path):
        return read_messages(ix.root, ix.cfg, path, from_line=from_line, lines=lines)
    return read_lines(
        ix.root,
        path,
        from_line=from_line,
        lines=lines,
        extra_paths=ix.cfg.extra_paths,
        max_bytes=ix.cfg.max_file_bytes,
    )
