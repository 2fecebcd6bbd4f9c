"""The ledger of decisions on fact proposals, ``.clawmem/proposals-reviewed`` (tracked with the
workspace, append-only): one line per decision, ``accepted <sha256 of the line>`` or ``rejected
<sha256>``, ``promoted`` when reflect kept it by its rule, then the length and hash of the text
decided and the line its turn started at. ``reflect/proposal_review.py`` writes it and decides
with it; recall reads it so that a hit never says a rejected proposal is pending."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

LEDGER = ".clawmem/proposals-reviewed"
MAX_BYTES = 64 << 20  # a million decisions and more

# A line of the ledger: the verdict and the proposal's key, "promoted" when reflect accepted it by
# the promotion rule, and (since turns grow, fact_proposals.turns) the length and hash of the
# text decided and the line its turn started at.
DECIDED = re.compile(
    r"^(accepted|rejected) ([0-9a-f]{64})( promoted)?(?: ([0-9]{1,9}) ([0-9a-f]{16}) (\S.*))?\s*$"
)  # (a length of 9 digits at most: a longer one is no line of ours, and int() of 5,000 raised)


def ledger_lines(root: Path) -> list[re.Match[str]]:
    """The ledger's decisions, in the order they were made (none without a ledger)."""
    from clawmem.errors import InputError
    from clawmem.files import safe_open
    from clawmem.markdown.workspace import writable_path

    path = writable_path(root, LEDGER)
    if not path.is_file():
        return []
    fd = safe_open.open_file(path, os.O_RDONLY)  # never through a link; a regular file only
    try:
        raw = safe_open.read_all(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        # A ledger that came with a clone may be of any size; recall reads it too.
        raise InputError(
            f"{LEDGER}: over {MAX_BYTES:,} bytes; not read",
            hint="it holds one short line per decision: check where it came from",
        )
    # A line clawmem did not write (a merge's conflict markers, a hand edit, bytes that are not
    # UTF-8 in a ledger that came with a clone) is not a decision: skipped, as every other line
    # that is not one, never the end of `proposals list` or of a nightly reflect.
    lines = raw.decode("utf-8", errors="replace").splitlines()
    return [m for m in map(DECIDED.match, lines) if m is not None]


def verdicts(lines: list[re.Match[str]]) -> dict[str, str]:
    """sha256 -> "accepted" | "rejected" (the last decision wins)."""
    return {m.group(2): m.group(1) for m in lines}


# rejected_ids' last reading of each workspace's ledger: {ledger path: (its stat, the ids)}. A
# process that recalls many times (the MCP server, an agent's library) read and parsed the whole
# ledger on every query that found a proposal; it is read again only when it changed.
_READ: dict[Path, tuple[tuple[int, ...], frozenset[str]]] = {}
_READ_MAX = 8  # workspaces remembered at once (a process serves one, a test run many)
# A reading of a ledger changed this recently (its modification or change time within this many
# nanoseconds of now, or after now) is not remembered: a rewrite in place of the same size
# within one tick of the file system's clock leaves the same stat, and would be served stale.
# Read again next time, as git does for its "racy" entries.
RACY_NS = 2_000_000_000


def rejected_ids(root: Path) -> frozenset[str]:
    """The short ids (the key's first 10 characters, as a proposal's note names it) of the
    proposals whose last decision was to reject them. A ledger behind a link out of the
    workspace, or unreadable, decides nothing. Read again only when the ledger's file changed
    (another inode, size, modification or change time), or had changed within ``RACY_NS`` of
    the last read: the ids are those of its bytes now."""
    from clawmem.errors import ClawmemError
    from clawmem.markdown.workspace import writable_path

    try:
        path = writable_path(root, LEDGER)
        st = os.stat(path, follow_symlinks=False)  # taken before the read: a later write shows
        stamp: tuple[int, ...] | None = (
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if stat.S_ISREG(st.st_mode)
            else None
        )
    except (OSError, ClawmemError):
        path, stamp = None, None
    if path is not None and stamp is not None:
        seen = _READ.get(path)
        if seen is not None and seen[0] == stamp:
            return seen[1]
    try:
        lines = ledger_lines(root)
    except (OSError, ClawmemError):
        return frozenset()
    ids = frozenset(key[:10] for key, v in verdicts(lines).items() if v == "rejected")
    if path is not None and stamp is not None and not _racy(stamp):
        if len(_READ) >= _READ_MAX:
            _READ.clear()
        _READ[path] = (stamp, ids)
    return ids


def _racy(stamp: tuple[int, ...]) -> bool:
    """Whether a ledger with this stat changed too recently for its stat to tell a later
    rewrite apart (``RACY_NS``)."""
    return time.time_ns() - max(stamp[3], stamp[4]) < RACY_NS
