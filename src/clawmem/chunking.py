"""Markdown → chunks that follow the document's structure.

markdown-it-py gives every block its exact source lines. Chunks never cross a heading, never split
a code fence, table or list item (unless one block alone is over the size cap, which is then cut by
lines, and a single over-long line by characters), carry their heading path, and overlap their
predecessor by whole blocks up to ``overlap_chars``. Line numbers are 1-based and inclusive.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# Bump when chunk boundaries or texts change for the same input: the index must then be rebuilt.
CHUNKER_VERSION = 1

_md = None


def _parser():
    # Built on first use: importing markdown-it costs ~50 ms that read-only commands never need.
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        _md = MarkdownIt("commonmark").enable("table")
    return _md


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    heading: str  # heading path, "Title > Section"
    text: str
    sha256: str

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


@dataclass(frozen=True)
class _Block:
    start: int  # 0-based, inclusive
    end: int  # 0-based, exclusive
    heading_level: int = 0  # > 0 for headings
    heading_text: str = ""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _blocks(lines: list[str]) -> list[_Block]:
    """Top-level blocks with their line spans; each list item is its own block."""
    tokens = _parser().parse("\n".join(lines))
    blocks: list[_Block] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level == 0 and tok.map is not None and tok.nesting in (0, 1):
            if tok.type == "heading_open":
                inline = tokens[i + 1].content if i + 1 < len(tokens) else ""
                blocks.append(_Block(tok.map[0], tok.map[1], int(tok.tag[1]), inline.strip()))
            elif tok.type in ("bullet_list_open", "ordered_list_open"):
                # Items of a top-level list are separate blocks: a chunk boundary may fall between
                # two items but never inside one (nested lists stay inside their parent item).
                depth = 0
                j = i
                while j < len(tokens):
                    t = tokens[j]
                    if t.type == "list_item_open" and t.level == 1 and t.map is not None:
                        blocks.append(_Block(t.map[0], t.map[1]))
                    depth += t.nesting if t.type.endswith(("list_open", "list_close")) else 0
                    if depth == 0:
                        break
                    j += 1
                i = j
            else:
                blocks.append(_Block(tok.map[0], tok.map[1]))
        i += 1
    # Trailing blank lines inside a block span add nothing to a citation.
    out = []
    for b in blocks:
        end = b.end
        while end > b.start + 1 and not lines[end - 1].strip():
            end -= 1
        out.append(_Block(b.start, end, b.heading_level, b.heading_text))
    return out


def _split_oversized(lines: list[str], start: int, end: int, cap: int, overlap: int):
    """Cut one block that is over the cap into line windows (and an over-long line into slices)."""
    pieces: list[tuple[int, int, str]] = []
    i = start
    while i < end:
        line = lines[i]
        if len(line) + 1 > cap:  # a line that cannot share a chunk (incl. exactly cap long)
            step = max(1, cap - overlap)
            for off in range(0, len(line), step):
                pieces.append((i, i + 1, line[off : off + cap]))
                if off + cap >= len(line):
                    break
            i += 1
            continue
        size = 0
        j = i
        while j < end and len(lines[j]) <= cap and size + len(lines[j]) + 1 <= cap:
            size += len(lines[j]) + 1
            j += 1
        j = max(j, i + 1)  # always consume at least one line
        pieces.append((i, j, "\n".join(lines[i:j])))
        if j >= end:
            break
        # Step back by whole lines worth about `overlap` characters, always moving forward.
        back, k = 0, j
        while k - 1 > i and back + len(lines[k - 1]) + 1 <= overlap:
            k -= 1
            back += len(lines[k]) + 1
        i = k if lines[j - 1 : j] and k > i else j
    return pieces


def chunk_markdown(text: str, *, max_chars: int = 1600, overlap_chars: int = 320) -> list[Chunk]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    blocks = _blocks(lines)
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []  # (level, text) stack of enclosing headings

    def emit(s: int, e: int, body: str | None = None) -> None:
        body = "\n".join(lines[s:e]) if body is None else body
        if not body.strip():
            return
        heading = " > ".join(t for _, t in path)
        chunks.append(Chunk(s + 1, e, heading, body, sha256(body)))

    def flush(section: list[_Block]) -> None:
        group: list[_Block] = []
        size = 0
        for b in section:
            bsize = sum(len(line) + 1 for line in lines[b.start : b.end])
            if bsize > max_chars:
                if group:
                    emit(group[0].start, group[-1].end)
                for s, e, body in _split_oversized(lines, b.start, b.end, max_chars, overlap_chars):
                    emit(s, e, body)
                group, size = [], 0
                continue
            if group and size + bsize > max_chars:
                emit(group[0].start, group[-1].end)
                # Carry trailing blocks of the previous chunk as overlap (never the heading).
                carry: list[_Block] = []
                csize = 0
                for prev in reversed(group):
                    psize = sum(len(line) + 1 for line in lines[prev.start : prev.end])
                    if (
                        prev.heading_level
                        or csize + psize > overlap_chars
                        or csize + psize + bsize > max_chars
                    ):
                        break
                    carry.insert(0, prev)
                    csize += psize
                group, size = carry, csize
            group.append(b)
            size += bsize
        if group:
            emit(group[0].start, group[-1].end)

    section: list[_Block] = []
    for b in blocks:
        if b.heading_level:
            # A heading directly followed by another heading has no body: keep it with the next.
            if section and not all(x.heading_level for x in section):
                flush(section)
                section = []
            while path and path[-1][0] >= b.heading_level:
                path.pop()
            path.append((b.heading_level, b.heading_text))
        section.append(b)
    if section:
        flush(section)
    return chunks
