"""JSON that comes from outside clawmem (a transcript's line, a hook's stdin, a file to import, a
batch of queries): one rule for reading it.

Python's parser recurses once per level of nesting, so a line of 50,000 ``[`` raised
``RecursionError``, which no caller expected: one such line in a transcript made every
``clawmem index`` and ``recall`` of the workspace an internal error. Here it is what any other
malformed JSON is, a ``ValueError`` (``json.JSONDecodeError`` is one, and so is a
``UnicodeDecodeError`` of bytes that are not UTF-8), which the callers already handle.
"""

from __future__ import annotations

import json
from typing import Any


class TooDeep(ValueError):
    """JSON nested deeper than the parser can follow."""

    msg = "nested too deeply"


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``; JSON nested too deeply raises ``TooDeep`` (a ``ValueError``)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None
