"""git's own three-way line merge (``git merge-file``) on strings.

clawmem's merge rules (``clawmem.markdown.merging``) decide what to merge how; the line merge
itself is git's, which is on every machine where a git merge calls clawmem's merge driver.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from clawmem.errors import UsageError

LABELS = ("ours", "base", "theirs")
# Markers no line of a note is: conflict_hunks reads git's output back by them.
_WIDE = 41


def merge_file(
    base: str, ours: str, theirs: str, union: bool = False, *, marker_size: int = 7
) -> tuple[str, int]:
    """(merged text, conflicting hunks). ``union``: a conflicting hunk keeps ours' lines, then
    theirs', with no markers (git's ``--union``), so nothing conflicts."""
    return _run(base, ours, theirs, ["--union"] if union else [], marker_size)


# One conflicting hunk: (the base's lines, ours', theirs'), each line without its ending.
Hunk = tuple[list[str], list[str], list[str]]


def conflict_hunks(base: str, ours: str, theirs: str) -> list[Hunk]:
    """The hunks a plain three-way merge would leave conflicting, with the base's lines of each
    (git's ``--diff3`` output, read back): what a union of them would keep or bring back."""
    text, conflicts = _run(base, ours, theirs, ["--diff3"], _WIDE)
    if not conflicts:
        return []
    starts = {"<" * _WIDE + " ours": 0, "|" * _WIDE + " base": 1, "=" * _WIDE: 2}
    end = ">" * _WIDE + " theirs"
    hunks: list[Hunk] = []
    sides: list[list[str]] | None = None  # ours', the base's, theirs' lines of the hunk read now
    current = 0
    for line in text.split("\n"):
        bare = line.rstrip("\r")  # git writes its markers with the file's own line endings
        if bare in starts:
            if starts[bare] == 0:
                sides = [[], [], []]
            current = starts[bare]
        elif bare == end and sides is not None:
            hunks.append((sides[1], sides[0], sides[2]))
            sides = None
        elif sides is not None:
            sides[current].append(bare)
    return hunks


def _run(base: str, ours: str, theirs: str, flags: list[str], marker_size: int) -> tuple[str, int]:
    with tempfile.TemporaryDirectory(prefix="clawmem-merge-") as tmp:
        paths = []
        for name, text in zip(LABELS, (ours, base, theirs), strict=True):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            paths.append(str(path))
        args = ["git", "merge-file", "-p", f"--marker-size={marker_size}", *flags]
        for label in LABELS:
            args += ["-L", label]
        try:
            proc = subprocess.run([*args, *paths], capture_output=True, timeout=60, check=False)
        except FileNotFoundError:
            raise UsageError("git is not installed (or not on PATH)") from None
    if proc.returncode < 0 or proc.returncode > 127:
        raise UsageError(f"git merge-file failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode
