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


def merge_file(
    base: str, ours: str, theirs: str, union: bool = False, *, marker_size: int = 7
) -> tuple[str, int]:
    """(merged text, conflicting hunks). ``union``: a conflicting hunk keeps ours' lines, then
    theirs', with no markers (git's ``--union``), so nothing conflicts."""
    with tempfile.TemporaryDirectory(prefix="clawmem-merge-") as tmp:
        paths = []
        for name, text in zip(LABELS, (ours, base, theirs), strict=True):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            paths.append(str(path))
        args = ["git", "merge-file", "-p", f"--marker-size={marker_size}"]
        if union:
            args.append("--union")
        for label in LABELS:
            args += ["-L", label]
        try:
            proc = subprocess.run([*args, *paths], capture_output=True, timeout=60, check=False)
        except FileNotFoundError:
            raise UsageError("git is not installed (or not on PATH)") from None
    if proc.returncode < 0 or proc.returncode > 127:
        raise UsageError(f"git merge-file failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode
