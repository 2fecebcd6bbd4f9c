"""``clawmem check``: malformed facts in the workspace, read fresh from the Markdown.

The index is not consulted: a person fixing a line wants to see it fixed at once, and the index
may be stale or absent.
"""

from __future__ import annotations

from .factlog import decode
from .facts import extract_facts
from .indexing import Indexer


def check(ix: Indexer) -> list[dict]:
    """Every malformed fact line (and every file that is not UTF-8): path, line, text, message."""
    problems = []
    for entry in ix.scan().markdown_files:
        try:
            text = decode((ix.root / entry.relpath).read_bytes())
        except UnicodeDecodeError as exc:
            problems.append(
                {
                    "path": entry.relpath,
                    "line": 0,
                    "text": "",
                    "message": f"invalid UTF-8 at byte {exc.start}; re-save the file as UTF-8",
                }
            )
            continue
        except OSError:
            continue
        _, found = extract_facts(text)
        problems.extend(
            {"path": entry.relpath, "line": p.line, "text": p.text, "message": p.message}
            for p in found
        )
    return problems
