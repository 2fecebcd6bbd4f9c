"""Text made fit for a terminal: control characters written out.

A file name or a line from a workspace someone else wrote (``memory/\\x1b]52;c;….md``, a note
holding ``\\x1b[2J``) reached the terminal as it was: escape sequences that clear the screen,
retitle the window or write the clipboard. Everything clawmem prints for a person goes through
``visible`` (``cli/render.py``'s consoles, the error line, ``check``); ``--json`` escapes control
characters as JSON does, and ``get`` prints a file's lines exactly, as ``cat`` does.
"""

from __future__ import annotations

import re

# Control characters other than a line break or a tab (C0, DEL, C1), and Unicode's bidirectional
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): a line holding "\u202e"
# showed its words in another order than they are written ("Trojan Source"), so a note could
# read on screen as saying what it does not. Right-to-left text needs none of them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _written_out(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with its control characters (other than a line break or a tab) written out as
    ``\\x1b``, and its bidirectional overrides as ``\\u202e``."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_written_out, text)
