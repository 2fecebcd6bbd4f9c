"""Processes of the concurrency part: ``python -m benchmarks.soak.workers KIND WS STOP OUT N``.

Each loops until the file STOP exists, then writes its figures to OUT as JSON.

- ``retain``: facts through the library's ``retain`` (each with a unique token, to be counted
  afterwards), timing how long each waited for the write lock;
- ``recall``: lexical recalls, with the lazy sync before each when N is odd;
- ``mcp``: ``memory_search`` calls to a ``clawmem mcp`` server, through the MCP SDK's client;
- ``append``: another program writing the daily logs the retain workers write: one line every
  10 ms (100 a second), appended as ``echo … >> log`` does, each with a unique token to be
  counted afterwards.
- ``held``: a logger that keeps one of those logs open for the whole run, 20 lines a second
  (``open_writer.py`` measures 250 a second beside a retain loop and beside a watcher).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawmem.files.locking import HeldLock

QUERIES = ["payment ledger", "castle birthday", "deploy rollback", "Peter", "soak fact"]


def _retain(ws: Path, stop: _Stop, n: int) -> dict[str, Any]:
    import clawmem.files.locking as locking

    from .workspace import ENTITIES, WORDS, mem

    waits: list[float] = []
    real_acquire = locking.acquire_write

    def timed_acquire(memory_dir: Path, *, timeout: float, purpose: str = "") -> HeldLock | None:
        t0 = time.monotonic()
        try:
            return real_acquire(memory_dir, timeout=timeout, purpose=purpose)
        finally:
            if timeout > 0:
                waits.append(time.monotonic() - t0)

    locking.acquire_write = timed_acquire  # instrumentation: the real lock (and its queue), timed
    rnd = random.Random(n)
    m = mem(ws)
    done: list[str] = []
    errors: list[str] = []
    j = 0
    while not stop.exists():
        j += 1
        token = f"soakw{n}n{j}"
        text = f"Soak fact {token} about the {rnd.choice(WORDS)} {rnd.choice(WORDS)}."
        try:
            m.retain(text, entities=[rnd.choice(ENTITIES)], day=f"2030-01-0{rnd.randrange(1, 4)}")
            done.append(token)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors.append(f"{type(exc).__name__}: {exc}")
    return {"retained": done, "errors": errors, "lock_waits": waits}


def _recall(ws: Path, stop: _Stop, n: int) -> dict[str, Any]:
    from .workspace import mem

    m = mem(ws)
    ops = empty = 0
    errors: list[str] = []
    while not stop.exists():
        ops += 1
        try:
            r = m.recall(QUERIES[ops % len(QUERIES)], mode="lexical", k=3, sync=n % 2 == 1)
            empty += not r.hits
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
    return {"ops": ops, "empty": empty, "errors": errors}


def _mcp(ws: Path, stop: _Stop, n: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from .workspace import child_env

    env = child_env()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawmem", "mcp", "-w", str(ws)],
        env={k: v for k, v in env.items() if k.startswith("CLAWMEM_") or k == "PYTHONPATH"},
    )
    out: dict = {"ops": 0, "errors": []}

    async def main() -> None:
        with open(stop.parent_dir / "mcp-server.log", "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    while not stop.exists():
                        q = QUERIES[out["ops"] % len(QUERIES)]
                        out["ops"] += 1
                        res = await session.call_tool("memory_search", {"query": q})
                        if res.is_error:
                            # A tool error is text content; anything else is shown as it is.
                            first = res.content[0]
                            out["errors"].append(str(getattr(first, "text", first))[:300])

    try:
        anyio.run(main)
    except Exception:  # noqa: BLE001
        out["errors"].append(traceback.format_exc()[-500:])
    return out


def _append(ws: Path, stop: _Stop, n: int) -> dict[str, Any]:
    rnd = random.Random(n)
    lines: list[str] = []
    errors: list[str] = []
    while not stop.exists():
        token = f"foreign{n}x{len(lines)}"
        log = ws / "memory" / f"2030-01-0{rnd.randrange(1, 4)}.md"
        try:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"A note {token} from another program.\n")
            lines.append(token)
        except OSError as exc:
            errors.append(f"{log.name}: {exc}")
        time.sleep(0.01)
    return {"appended": lines, "errors": errors}


def _held(ws: Path, stop: _Stop, n: int) -> dict[str, Any]:
    """A logger that keeps one daily log open for the whole run and appends 20 lines a second
    to it, flushing each (issue 40: a log renamed over sent such a writer's lines into the
    deleted file)."""
    log = ws / "memory" / "2030-01-02.md"
    written = 0
    errors: list[str] = []
    t0 = time.monotonic()
    try:
        with open(log, "a", encoding="utf-8") as fh:
            while not stop.exists():
                fh.write(f"A held note held{n}x{written} from a logger.\n")
                fh.flush()
                written += 1
                lag = t0 + written / 20 - time.monotonic()
                if lag > 0:
                    time.sleep(lag)
    except OSError as exc:
        errors.append(f"{log.name}: {exc}")
    return {"held": written, "prefix": f"held{n}x", "errors": errors}


class _Stop:
    """The stop file, or the soak that started us gone (then stop too, instead of running on)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parent = os.getppid()

    def exists(self) -> bool:
        return self.path.exists() or os.getppid() != self.parent

    @property
    def parent_dir(self) -> Path:
        return self.path.parent


def main() -> None:
    kind, ws, out, n = sys.argv[1], Path(sys.argv[2]), sys.argv[4], int(sys.argv[5])
    stop = _Stop(Path(sys.argv[3]))
    fn = {"retain": _retain, "recall": _recall, "mcp": _mcp, "append": _append, "held": _held}[kind]
    Path(out + ".ready").touch()
    result = fn(ws, stop, n)
    Path(out).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
