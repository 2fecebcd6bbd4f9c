"""Markdown → search units that follow the document's structure.

markdown-it-py gives every block its exact source lines. Each block (a list item with its nested
items, a paragraph, a code fence, a table) is one unit with its heading path; only a block over
the size cap is cut, by lines (and a single over-long line by characters), into overlapping
windows. Line numbers are 1-based and inclusive.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.text import speakers
from clawmem.text.textnorm import fold

# When chunk boundaries or texts change for the same input, bump schema.CHUNKER_VERSION: the
# index must then be rebuilt. It lives there because every read checks it, and a read that finds
# nothing changed never imports this module.

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_md = None


def _parser() -> MarkdownIt:
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
    """Top-level blocks with their line spans; each list item is its own block, except in a
    list that is one record's fields (``_is_record``): that list is one block."""
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
                items: list[_Block] = []
                while j < len(tokens):
                    t = tokens[j]
                    if t.type == "list_item_open" and t.level == 1 and t.map is not None:
                        items.append(_Block(t.map[0], t.map[1]))
                    depth += t.nesting if t.type.endswith(("list_open", "list_close")) else 0
                    if depth == 0:
                        break
                    j += 1
                if _is_record([lines[b.start] for b in items]):
                    blocks.append(_Block(items[0].start, items[-1].end))
                else:
                    blocks.extend(items)
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


# A list item that is one field of a record: "- confidence: 0.80", "- last_updated: 2025-11-27",
# "- due date: Friday". The field is a lower-case label of up to three words; a capitalised label
# ("- Kate: bring the cake") is more often who said or does something, one line each.
_FIELD = re.compile(r"[-*+][ \t]+([a-z][a-z0-9_]*(?: [a-z][a-z0-9_]*){0,2}):[ \t]+\S")


def _is_record(first_lines: list[str]) -> bool:
    """Is this list one record's fields, each named once ("- confidence: 0.80 / - statement: …
    / - history: …", reflect's opinion pages; a person's "- status: … / - owner: …")? Then it is
    one unit: a field alone ("confidence: 0.80") says nothing a question could ask, and its
    record's heading and other fields say what it is about. A field named twice ("- todo: … /
    - todo: …") is a list of things, one unit each."""
    if len(first_lines) < 2:
        return False
    fields = [_FIELD.match(line.lstrip()) for line in first_lines]
    if any(f is None for f in fields):
        return False
    names = [f.group(1) for f in fields if f is not None]
    return len(set(names)) == len(names)


def _slices(line: str, cap: int, overlap: int) -> list[str]:
    """An over-long line cut into pieces of at most ``cap`` weight, overlapping by ``overlap``."""
    if not _WIDE.search(line):  # the common case: weight is length
        step = max(1, cap - overlap)
        out = []
        for off in range(0, len(line), step):
            out.append(line[off : off + cap])
            if off + cap >= len(line):
                break
        return out
    out, start = [], 0
    while start < len(line):
        end, w = start, 0
        while end < len(line) and w + weight(line[end]) <= cap:
            w += weight(line[end])
            end += 1
        end = max(end, start + 1)
        out.append(line[start:end])
        if end >= len(line):
            break
        back, k = 0, end  # step back by about `overlap` weight, always moving forward
        while k - 1 > start and back + weight(line[k - 1]) <= overlap:
            k -= 1
            back += weight(line[k])
        start = k
    return out


def _split_oversized(
    lines: list[str], start: int, end: int, cap: int, overlap: int
) -> list[tuple[int, int, str]]:
    """Cut one block that is over the cap into line windows (and an over-long line into slices)."""
    pieces: list[tuple[int, int, str]] = []
    i = start
    while i < end:
        line = lines[i]
        if weight(line) + 1 > cap:  # a line that cannot share a chunk (incl. exactly cap long)
            for part in _slices(line, cap, overlap):
                pieces.append((i, i + 1, part))
            i += 1
            continue
        size = 0
        j = i
        while j < end and weight(lines[j]) <= cap and size + weight(lines[j]) + 1 <= cap:
            size += weight(lines[j]) + 1
            j += 1
        j = max(j, i + 1)  # always consume at least one line
        pieces.append((i, j, "\n".join(lines[i:j])))
        if j >= end:
            break
        # Step back by whole lines worth about `overlap` characters, always moving forward.
        back, k = 0, j
        while k - 1 > i and back + weight(lines[k - 1]) + 1 <= overlap:
            k -= 1
            back += weight(lines[k]) + 1
        i = k if lines[j - 1 : j] and k > i else j
    return pieces


def weight(text: str) -> int:
    """Size of ``text`` against the cap, in "Latin characters": about four per model token.

    A CJK character is about one token on its own, so it weighs four: a unit of CJK text stays
    within the embedding model's 512-token window just as a unit of English does."""
    return len(text) + 3 * len(_WIDE.findall(text))


_WIDE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _speaker(line: str) -> str | None:
    """Who says ``line``: "Kate: …", "**Kate:** …", "[10:32] Kate: …" (text/speakers.py, the
    rule recall reads too: a name, not a section's label such as "Background:")."""
    said = speakers.said(line)
    return None if said is None else fold(said.name)


def _is_talk(lines: list[str]) -> bool:
    """Is this paragraph a conversation kept as one block, one message a line?

    Every line must start with a speaker's label, and some speaker must come back (more lines
    than speakers): a talk's speakers return, while a structured abstract ("Background: … /
    Methods: …") or a record ("Decision: … / Owner: …") names each field once, so those stay
    one unit. Two lines by two different people stay together too: nothing says they are not
    fields."""
    if len(lines) < 2:
        return False
    labels = [_speaker(line) for line in lines]
    if any(label is None for label in labels):
        return False
    return len(set(labels)) < len(labels)


def chunk_markdown(text: str, *, max_chars: int = 1600, overlap_chars: int = 320) -> list[Chunk]:
    """The search units of a Markdown document: one per block.

    A unit is a single list item (with its nested items), paragraph, code fence, table or quote,
    citing exactly its lines; its heading path says where it sits. Recall ranks these small units,
    so a hit is the evidence itself, not the section around it (the section still informs
    ranking: see ``index.neighbour_context``). A heading whose section has no body of its own is a
    unit by itself, so every non-blank line is searchable. A paragraph that is a conversation, one
    message a line (``_is_talk``), is one unit per message: the answer is one person's line, and
    the other lines of the talk would dilute it in both search legs. A block over ``max_chars``
    (measured by ``weight``) is cut into line windows that overlap by about ``overlap_chars``.
    """
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

    for i, b in enumerate(blocks):
        if b.heading_level:
            while path and path[-1][0] >= b.heading_level:
                path.pop()
            # A heading with no body before the next heading of its level or higher is searchable
            # on its own ("## Ideas" with nothing under it yet); otherwise it is context only.
            body = False
            for nxt in blocks[i + 1 :]:
                if nxt.heading_level and nxt.heading_level <= b.heading_level:
                    break
                if not nxt.heading_level:
                    body = True
                    break
            path.append((b.heading_level, b.heading_text))
            if not body:
                emit(b.start, b.end)
            continue
        if _is_talk(lines[b.start : b.end]):
            for n in range(b.start, b.end):
                if weight(lines[n]) > max_chars:
                    for s, e, part in _split_oversized(lines, n, n + 1, max_chars, overlap_chars):
                        emit(s, e, part)
                else:
                    emit(n, n + 1)
        elif weight("\n".join(lines[b.start : b.end])) > max_chars:
            for s, e, part in _split_oversized(lines, b.start, b.end, max_chars, overlap_chars):
                emit(s, e, part)
        else:
            emit(b.start, b.end)
    return chunks
