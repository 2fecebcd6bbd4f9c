"""What goes over clawmem's Unix sockets: one JSON line each way per connection.

Two servers speak it: a workspace's watcher (``.memory/watch.sock``, ``ingest/journal.py``), which
answers whether the index is fresh and embeds a recall's query with the model it keeps loaded, and
the user's resident embedder (``server.py``, a socket per model in the user's runtime folder),
which embeds queries and the few documents of an edit. Their clients: ``journal.ask_token``,
``ask_vector`` below and ``client.Borrowed``.

* ``{"embed": text, "model": identity key}`` -> ``{"model": key, "vector": base64 float32}``
  (or ``{"why": ...}``): a query's vector, only from a model of that identity;
* ``{"embed_documents": [text, ...], "model": key}`` -> ``{"model": key, "vectors": [...],
  "truncated": n, "windowed": n}``: at most ``MAX_DOCUMENTS`` documents (the resident embedder);
* ``{"search": index path, "vector": base64 float32, "limit": n, "model": key}`` -> ``{"model":
  key, "hits": [[chunk id, cosine], ...], "rows": n}`` (or ``{"why": ...}``): the vector leg of
  a large index, from the copy of its vectors the resident embedder holds (``search_reply``);
  the asking process then never reads every vector itself;
* ``{"status": true}``: the resident embedder's state, for ``clawmem status``;
* the watcher's freshness question is its scan key, a JSON list (``journal.ask_token``).

A missing, dead, hung or garbled server is never an error: the asker gets ``None`` and why, and
does the work itself.
"""

from __future__ import annotations

import array
import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# base64, hashlib and tempfile are imported where they are used: a cold lexical recall imports this
# module (the watcher's freshness question) and never needs them (~5 ms, issue 16).
if TYPE_CHECKING:
    import numpy as np

    from clawmem.embedders.base import Embedder

WATCHER_SOCKET = "watch.sock"  # in the workspace's .memory/
# A query's embedding takes ~30 ms; a watcher busy embedding a batch of its own holds its model
# longer, and the recall then loads the model itself (~1.5 s for the default model).
EMBED_TIMEOUT_S = 0.5
MAX_QUERY_CHARS = 8000  # longer queries are embedded in the asking process
# An embedder that started this long ago or less may still be loading its model (1-2 s here, more
# on a loaded machine): a process waits this long for it rather than load a second copy.
START_TIMEOUT_S = 20.0
# Documents sent in one request at most (an edit's units; bulk indexing loads the model itself).
MAX_DOCUMENTS = 64
MAX_REQUEST_BYTES = 4 << 20
DEFAULT_IDLE_S = 600.0


def runtime_dir() -> Path:
    """The user's folder for the embedder's socket, lock and log: ``$CLAWMEM_RUNTIME_DIR``, else
    ``$XDG_RUNTIME_DIR/clawmem``, else ``clawmem-<uid>`` in the temporary folder (as tmux does)."""
    env = os.environ.get("CLAWMEM_RUNTIME_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "clawmem"
    import tempfile

    return Path(tempfile.gettempdir()) / f"clawmem-{os.getuid()}"


def private_dir(create: bool = True) -> Path:
    """``runtime_dir()``, made if ``create``; OSError unless it is a real folder of this user that
    no one else may enter (anyone who can reach the socket can make the embedder work)."""
    d = runtime_dir()
    if create:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"{d} is not a folder")
    if st.st_uid != os.getuid():
        raise OSError(f"{d} belongs to another user")
    if st.st_mode & 0o077:
        raise OSError(f"{d} is open to other users (mode {st.st_mode & 0o777:o}; want 700)")
    return d


@dataclass(frozen=True)
class Spec:
    """Which model the embedder serves, and how it is started."""

    model_path: Path
    key: str  # the identity key of the vectors it must give
    query_prefix: str
    document_prefix: str
    threads: int = 0  # 0: llama.cpp's embedder picks
    idle_s: float = DEFAULT_IDLE_S

    @property
    def name(self) -> str:
        """The file names' stem: one embedder per model identity (and user, by the folder)."""
        import hashlib

        return "embed-" + hashlib.sha256(self.key.encode()).hexdigest()[:16]

    def paths(self, folder: Path) -> tuple[Path, Path, Path]:
        """(socket, lock, log) in ``folder``."""
        stem = folder / self.name
        return stem.with_suffix(".sock"), stem.with_suffix(".lock"), stem.with_suffix(".log")


def exchange(path: Path, line: bytes, timeout: float, *, who: str) -> tuple[dict | None, str]:
    """One line to the Unix socket ``path`` and its one-line JSON answer: (answer, "") or (None,
    why there is none, naming the server ``who``). The watcher's and the resident embedder's
    protocol. Never raises for a missing, dead, hung or garbled server."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        # Most reads run with no watcher: the connect's answer, given before importing socket
        # (a few ms of every cold recall, issue 16).
        return None, f"no {who} running"
    except OSError:
        pass  # the connect below says what is wrong
    import socket

    if not hasattr(socket, "AF_UNIX"):
        return None, f"no {who} on this platform"
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        return None, f"cannot ask the {who} ({exc.strerror})"
    try:
        s.settimeout(timeout)
        try:
            s.connect(str(path))
        except FileNotFoundError:
            return None, f"no {who} running"
        except ConnectionRefusedError:
            return None, f"the {who} is not running (its socket is left over)"
        except OSError as exc:
            return None, f"cannot reach the {who} ({exc.strerror or exc})"
        deadline = time.monotonic() + timeout
        s.sendall(line + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except TimeoutError:
        return None, f"the {who} did not answer within {timeout * 1000:.0f} ms"
    except OSError as exc:
        return None, f"cannot ask the {who} ({exc.strerror or exc})"
    finally:
        s.close()
    if not buf:
        return None, f"the {who} closed the connection without answering"
    try:
        reply = json.loads(buf)
    except ValueError:
        return None, f"the {who}'s answer was unreadable"
    if not isinstance(reply, dict):
        return None, f"the {who}'s answer was unreadable"
    return reply, ""


def ask_vector(
    memory_dir: Path, model: str, text: str, timeout: float = EMBED_TIMEOUT_S
) -> tuple[bytes | None, str]:
    """(the query vector as float32 bytes, "") from a live watcher whose model has the identity
    key ``model``; else (None, why not). Never raises for a missing, dead or busy watcher."""
    if len(text) > MAX_QUERY_CHARS:
        return None, "the query is too long to send to the watcher"
    line = json.dumps({"embed": text, "model": model}).encode()
    reply, why = exchange(memory_dir / WATCHER_SOCKET, line, timeout, who="watcher")
    if reply is None:
        return None, why
    if reply.get("model") != model or not isinstance(reply.get("vector"), str):
        return None, f"the watcher did not embed the query ({reply.get('why', 'no reason given')})"
    raw = vector_bytes(reply["vector"])
    return (raw, "") if raw is not None else (None, "the watcher's answer was unreadable")


def vector_reply(request: object, emb: Embedder | None, *, who: str) -> dict:
    """The answer to a vector request ``{"embed": text, "model": identity key}`` from ``emb``
    (None: no model): the query's vector, if ``emb`` makes vectors of that identity. The
    watcher's and the resident embedder's."""
    text = request.get("embed") if isinstance(request, dict) else None
    model = request.get("model") if isinstance(request, dict) else None
    if not isinstance(text, str) or not isinstance(model, str):
        return {"why": "the request was unreadable"}
    if emb is None:
        return {"why": f"the {who} has no embedding model"}
    if emb.identity.key() != model:
        return {"why": f"the {who}'s model is {emb.identity.key()}"}
    vec = emb.embed_query(text)
    if vec is None:
        return {"why": "the model returned no usable vector"}
    return {"model": model, "vector": encode(vec)}


# A search request's candidates at most (vec0's own limit on k).
MAX_SEARCH_LIMIT = 4096


def search_reply(request: dict, model: str) -> dict:
    """The answer to a ``search`` request, from the vectors this process holds of that index
    (``store.vector_matrix``: loaded in the background at the first request, thrown away when
    the index changes; meanwhile the answer says why there are no hits, and the asker ranks
    with vec0)."""
    from clawmem.store import vector_matrix

    path, limit = request.get("search"), request.get("limit")
    raw = vector_bytes(request.get("vector"))
    if (
        request.get("model") != model
        or not isinstance(path, str)
        or not isinstance(limit, int)
        or not 0 < limit <= MAX_SEARCH_LIMIT
        or raw is None
        or len(raw) % 4
    ):
        return {"why": "the request was unreadable or for another model"}
    index = Path(path)
    # Only a clawmem index, by its absolute path: nothing else is opened for anyone.
    if not index.is_absolute() or index.name != "index.sqlite" or not index.is_file():
        return {"why": f"{path} is not an index"}
    held = vector_matrix.held_at(index, load_at=1, compressed=True)
    if held is None:
        if vector_matrix.loading(index):
            return {"why": "the resident embedder is loading the index's vectors"}
        return {"why": "the resident embedder could not read the index's vectors"}
    best = vector_matrix.search_held(held, floats(raw), limit)
    if best is None:
        return {"why": "the index changed; the resident embedder reloads its vectors"}
    return {"model": model, "hits": best, "rows": len(held[0])}


def encode(vec: np.ndarray) -> str:
    """A model's vector as base64 little-endian float32 text."""
    import base64

    return base64.b64encode(vec.astype("<f4").tobytes()).decode()


def encode_raw(vec: object) -> str:
    """A query's vector (a float32 ``array.array`` from another process, or NumPy's) as base64
    little-endian float32 text, without importing NumPy for the first."""
    import base64

    if isinstance(vec, array.array) and vec.typecode == "f" and sys.byteorder == "little":
        return base64.b64encode(vec.tobytes()).decode()
    import numpy as np

    return base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()


def floats(raw: bytes) -> array.array:
    """Little-endian float32 bytes as an ``array.array("f")``."""
    vec = array.array("f", raw)
    if sys.byteorder != "little":
        vec.byteswap()
    return vec


def vector_bytes(value: object) -> bytes | None:
    """A vector sent as base64 text, as bytes; None when it is not that."""
    if not isinstance(value, str):
        return None
    try:
        import base64

        return base64.b64decode(value, validate=True)
    except ValueError:
        return None
