"""Text made fit for a terminal: control characters written out.

A file name or a line from a workspace someone else wrote (``memory/\\x1b]52;c;….md``, a note
holding ``\\x1b[2J``) reached the terminal as it was: escape sequences that clear the screen,
retitle the window or write the clipboard. Everything clawmem prints for a person goes through
``visible`` (``cli/render.py``'s consoles, the error line, ``check``); ``--json`` escapes control
characters as JSON does, and ``get`` prints a file's lines exactly, as ``cat`` does.
"""

from __future__ import annotations

import re

# Control characters other than a line break or a tab (C0, DEL, C1).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with its control characters (other than a line break or a tab) written out as
    ``\\x1b``."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
