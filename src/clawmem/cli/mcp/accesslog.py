"""The HTTP server's access log: one line per request, never a token.

    2026-11-28T10:03:55Z token=laptop method=tools/call tool=memory_search status=200 result=ok ms=41

Fields: the time (UTC), the token's name (``-`` without one), the JSON-RPC method, the tool called,
the HTTP status, the outcome (``ok``, ``tool-error``, ``error``, ``refused``) and the time taken.
The question itself (``query=…``) only with ``http_log_queries = true``: it is the user's text.
Every value is written as one word or a JSON string, so no value can start a line of its own, and
what the client sent (the method, the tool, the question) is redacted first: a question may hold
a password, and the log is a file clawmem writes like any page.

Where (``http_access_log``): ``.memory/access.log`` by default, ``-`` for stderr, empty for none.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import IO

from clawmem.errors import StoreError, UnsafePathError
from clawmem.files import safe_open
from clawmem.text.redact import redact

_PLAIN = re.compile(r"[A-Za-z0-9_./:@+-]{1,80}")


def field(value: object) -> str:
    """One value as one word: plain as it is, anything else as a JSON string."""
    text = "-" if value is None or value == "" else str(value)
    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=True)


def _sent(value: str | None) -> str | None:
    """A value the client sent, as the log may keep it: redacted (``text/redact.py``)."""
    return None if value is None else redact(value)


def _open_append(path: Path) -> int:
    """The log's descriptor, appending: opened without following a link (a cloned repository may
    commit ``.memory/access.log`` as a link to a file of yours; ``files/safe_open.py`` is the one
    rule for that) and refused unless it is a regular file of this user."""
    try:
        fd = safe_open.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except UnsafePathError:
        raise
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot open the access log ({exc.strerror or exc})",
            hint='set http_access_log to another file, - (stderr) or "" (none)',
        ) from None
    if hasattr(os, "getuid") and os.fstat(fd).st_uid != os.getuid():
        os.close(fd)
        raise StoreError(
            f"{path}: the access log is not a file of yours",
            hint="remove it, or set http_access_log elsewhere",
        )
    return fd


class AccessLog:
    def __init__(self, target: str, root: Path, *, queries: bool = False) -> None:
        self.queries = queries
        self._fd: int | None = None
        self._stream: IO[str] | None = None
        self._lock = threading.Lock()
        self.where = "none"
        if target == "-":
            self._stream, self.where = sys.stderr, "stderr"
        elif target:
            path = Path(target).expanduser()
            path = path if path.is_absolute() else root / path
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd, self.where = _open_append(path), str(path)

    def write(
        self,
        *,
        who: str | None,
        method: str | None,
        tool: str | None,
        status: int,
        result: str,
        started: float,
        query: str | None = None,
    ) -> None:
        if self._fd is None and self._stream is None:
            return
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = (
            f"{at} token={field(who)} method={field(_sent(method))} tool={field(_sent(tool))} "
            f"status={status} "
            f"result={field(result)} ms={round((time.monotonic() - started) * 1000)}"
        )
        if self.queries and query is not None:
            line += f" query={json.dumps(_sent(query), ensure_ascii=True)}"  # no U+2028 either
        data = line + "\n"
        with self._lock:
            if self._fd is not None:
                os.write(self._fd, data.encode("utf-8"))  # one write: one whole line, appended
            elif self._stream is not None:
                self._stream.write(data)
                self._stream.flush()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
