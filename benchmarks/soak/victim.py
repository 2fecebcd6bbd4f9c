"""``python -m benchmarks.soak.victim MARKS ARGS...``: ``python -m clawmem ARGS...`` that says
where it is.

The kills part starts every process it kills through this module, so that after a SIGKILL the
soak knows what the victim was doing when it died, from the victim's own side rather than from a
guess by the clock. Before each step that matters for a crash it appends one line,
``<CLOCK_MONOTONIC seconds> <phase>``, to MARKS with a single unbuffered ``write`` (the kernel
keeps it whatever kills the process afterwards); the phase at the kill is the last line written.

The steps are found by wrapping, in this process only, the calls that every write path makes:
``locking.acquire_write`` (the write lock), ``tempfile.mkstemp`` and ``os.replace`` (``write_atomic``'s
temporary copy and its rename), ``indexing.apply_plan`` (the sync's index transactions),
``indexing.build_fresh`` and ``indexing.swap_in`` (a rebuild's new file and its swap). Nothing
else changes: the command is clawmem's own CLI, run as ``python -m clawmem`` runs it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawmem.files.locking import HeldLock

# The phases, in the order a command can pass through them (the report keeps this order).
PHASES = (
    "interpreter start-up",
    "importing clawmem",
    "before writing",
    "waiting for the write lock",
    "holding the lock, before writing",
    "writing a temporary copy",
    "after a rename",
    "building the new index",
    "swapping the new index in",
    "after the swap",
    "index transaction",
    "after the index transaction",
    "finished",
)


def read_marks(path: str | Path) -> list[tuple[float, str]]:
    """The marks a victim left (time, phase), oldest first; [] if it wrote none."""
    try:
        text = open(path, encoding="utf-8").read()  # read at once
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        t, _, phase = line.partition(" ")
        try:
            out.append((float(t), phase))
        except ValueError:
            continue  # a line cut by the kill: the kernel keeps whole writes, but be safe
    return out


def main() -> None:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def mark(phase: str) -> None:
        os.write(fd, f"{time.monotonic():.4f} {phase}\n".encode())

    mark("importing clawmem")
    import tempfile

    import clawmem.files.locking as locking
    import clawmem.ingest.indexing as indexing
    from clawmem.cli.app import main as cli_main

    real_acquire, real_mkstemp, real_replace = locking.acquire_write, tempfile.mkstemp, os.replace
    real_apply, real_build, real_swap = indexing.apply_plan, indexing.build_fresh, indexing.swap_in

    def acquire(memory_dir: Path, **kw: Any) -> HeldLock | None:
        mark("waiting for the write lock")
        held = real_acquire(memory_dir, **kw)
        if held is not None:
            mark("holding the lock, before writing")
        return held

    def mkstemp(*a: Any, **kw: Any) -> Any:
        if str(kw.get("suffix", "")).endswith(".tmp"):
            mark("writing a temporary copy")
        return real_mkstemp(*a, **kw)

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        real_replace(src, dst, **kw)
        if os.fspath(src).endswith(".tmp"):
            mark("after a rename")

    def apply_plan(*a: Any, **kw: Any) -> Any:
        mark("index transaction")
        report = real_apply(*a, **kw)
        mark("after the index transaction")
        return report

    def build_fresh(*a: Any, **kw: Any) -> Any:
        # Its own apply_plan is the sync module's, not the wrapped one: one phase for the build.
        mark("building the new index")
        return real_build(*a, **kw)

    def swap_in(*a: Any, **kw: Any) -> None:
        mark("swapping the new index in")
        real_swap(*a, **kw)
        mark("after the swap")

    locking.acquire_write, tempfile.mkstemp, os.replace = acquire, mkstemp, replace
    indexing.apply_plan, indexing.build_fresh, indexing.swap_in = apply_plan, build_fresh, swap_in
    mark("before writing")
    try:
        cli_main(sys.argv[2:])
    finally:
        mark("finished")


if __name__ == "__main__":
    main()
