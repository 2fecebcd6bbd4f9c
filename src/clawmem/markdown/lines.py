"""How clawmem counts a Markdown file's lines: the one rule every citation follows.

A line ends at "\r\n", "\r" or "\n", as markdown-it (and so the index, the chunker and the fact
grammar) reads them. ``str.splitlines`` also ends a line at "\f", "\v", "\x1c"-"\x1e", "\x85",
U+2028 and U+2029, which a PDF's page break or a pasted JavaScript string puts in a note: read
so, ``get`` of a citation showed other lines than recall had cited, and ``forget`` of a fact's
citation offered to blank the line above it (its section's heading).
"""

from __future__ import annotations

import re

BREAK = re.compile(r"\r\n|\r|\n")
BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Every line, the empty one after a final line break included (markdown-it's count)."""
    return BREAK.split(text)


def text_lines(text: str) -> list[str]:
    """The lines a reader numbers (``str.splitlines``' list, with this module's breaks): no line
    after a final line break, none at all in an empty text."""
    lines = BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines_with_ends(text: str) -> list[str]:
    """Every line with its line break (the last one without, when the text has none)."""
    return _WITH_END.findall(text)


def line_starts(data: bytes) -> list[int]:
    """The byte offset where each line of ``data`` starts (line 1 at 0)."""
    return [0, *(m.end() for m in BREAK_BYTES.finditer(data))]
