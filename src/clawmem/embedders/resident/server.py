"""The resident embedder's own process: ``python -m clawmem.embedders.resident.server``.

Its life, each rule tested in ``tests/test_resident.py``:

* Started on demand by a client (``client.spawn``), it forks once more and lets its first process
  end, so the embedder has no parent, runs in a session of its own, and holds no descriptor of its
  starter: stdin and stdout are /dev/null, stderr its log. An agent's shell reading ``clawmem
  recall … | cat`` sees the pipe close as soon as the recall is done.
* One per user and model identity: it holds an ``flock`` on ``embed-<id>.lock`` in the user's
  runtime folder for its whole life, and one started in a race finds the lock taken and ends.
* It listens at once and loads its model on a thread (asked meanwhile, it answers when loaded, or
  at once "loading" to a client that would rather not wait); then it builds the NumPy query
  path's cache for its model (``embedders/query_path.py``) at a low priority.
* It ends after ``resident_idle_minutes`` without a request, and within a second when its socket
  or lock file is removed or replaced (a cleaned ``/run/user`` or ``/tmp``, or by hand: ``rm`` of
  its socket is how to stop it). A copy of an index's vectors it holds (``search``) is let go
  within a second of that index file going (a workspace removed, an index rebuilt).

What it answers: ``protocol.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.embedders.resident.protocol import (
    DEFAULT_IDLE_S,
    MAX_DOCUMENTS,
    MAX_REQUEST_BYTES,
    START_TIMEOUT_S,
    Spec,
    encode,
    private_dir,
    search_reply,
    vector_reply,
)
from clawmem.errors import ModelError

if TYPE_CHECKING:
    from clawmem.embedders.llama import LlamaEmbedder

_TICK_S = 0.5  # how often it looks at its files and its idle time


def _take_lock(path: Path) -> int | None:
    """The lock's descriptor, held, or None if another embedder holds it. Checked against the path
    after locking: a lock file removed by an ending embedder must not be held in a second copy."""
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # removed or replaced while we locked it: lock the file there now


def _trim_heap() -> None:
    """Give the C heap's free pages back once no request is being answered: each answer's
    thread leaves glibc's arenas holding what llama.cpp and the JSON freed (measured: 174 MB
    anonymous after the first query, 231 MB after 40 more requests without this)."""
    from clawmem.embedders.llama_load import trim_heap

    trim_heap()


def _build_query_cache(model_path: Path, sha256: str) -> None:
    """The NumPy query path's cache for the model (embedders/query_path.py), if it is not there:
    here, in a process that is not answering anyone yet and lives on, at a low priority (a few
    seconds of one core, once per model file)."""
    from clawmem.embedders.query_path import ensure, fresh

    if fresh(model_path):
        return
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # this thread (Linux)
    why = ensure(model_path, sha256)
    if why:
        print(f"clawmem embedder: no NumPy query path: {why}", file=sys.stderr, flush=True)


def _inode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _drop_gone_indexes() -> None:
    """Let go of the copies of indexes that are no longer there (a workspace removed): their
    memory and their open, deleted files. Nothing to do before the first search request."""
    if "clawmem.store.vector_matrix" not in sys.modules:
        return  # no search yet: NumPy is not loaded for nothing
    # Imported, not taken from sys.modules: the first search imports the module on its own
    # thread, and until that import ends sys.modules holds it half made (no ``drop_gone`` yet:
    # the AttributeError ended the embedder). The import system makes this thread wait for it.
    import importlib

    vector_matrix = importlib.import_module("clawmem.store.vector_matrix")
    for path in vector_matrix.drop_gone():
        print(f"clawmem embedder: let go of {path}: no longer there", file=sys.stderr, flush=True)


def _held() -> list[dict]:
    """The indexes' vectors this embedder holds for other processes' vector legs."""
    from clawmem.store import vector_matrix

    return vector_matrix.held_summary()


class Server:
    """The embedder's state: its model (loaded on a thread of its own while it already answers
    \"loading\"), and the requests it answers until idle."""

    def __init__(self, spec: Spec, sock_path: Path, lock_path: Path) -> None:
        self.spec = spec
        self.sock_path = sock_path
        self.lock_path = lock_path
        self.ready = threading.Event()
        self.emb: LlamaEmbedder | None = None
        self.why: str | None = None
        self.started = time.time()
        self.last = time.monotonic()
        self.active = 0
        self.requests = 0
        self._mu = threading.Lock()

    def load(self) -> None:
        try:
            from clawmem.embedders.llama import LlamaEmbedder

            emb = LlamaEmbedder(
                self.spec.model_path,
                query_prefix=self.spec.query_prefix,
                document_prefix=self.spec.document_prefix,
                n_threads=self.spec.threads or None,
            )
            if emb.identity.key() != self.spec.key:
                self.why = f"the model file gives {emb.identity.key()}, not {self.spec.key}"
            else:
                self.emb = emb
        except ModelError as exc:
            self.why = f"embedding model unavailable: {exc.message}"
        except Exception as exc:  # noqa: BLE001 - said to every asker, then the embedder ends
            self.why = f"the model failed to load ({type(exc).__name__}: {exc})"
        finally:
            self.ready.set()
        if self.emb is not None:
            _build_query_cache(self.spec.model_path, self.emb.identity.model_sha256)

    def reply(self, request: dict) -> dict:
        if request.get("status"):
            return {
                "pid": os.getpid(),
                "model": self.spec.key,
                "model_path": str(self.spec.model_path),
                "loaded": self.emb is not None,
                "started": self.started,
                "requests": self.requests,
                "idle_exit_s": self.spec.idle_s,
                "rss_mb": _rss_mb(),
                "held_vectors": _held(),
            }
        if "search" in request:  # needs the index's vectors, not the model
            return search_reply(request, self.spec.key)
        if request.get("ready_only") and not self.ready.is_set():
            return {"why": "the resident embedder is loading its model"}
        if not self.ready.wait(START_TIMEOUT_S):
            return {"why": "the resident embedder is still loading its model"}
        if self.emb is None:
            return {"why": self.why or "no model"}
        if "embed_documents" not in request:
            answer = vector_reply(request, self.emb, who="resident embedder")
        else:
            texts = request["embed_documents"]
            if (
                request.get("model") != self.spec.key
                or not isinstance(texts, list)
                or len(texts) > MAX_DOCUMENTS
                or not all(isinstance(t, str) for t in texts)
            ):
                return {"why": "the request was unreadable or for another model"}
            res = self.emb.embed_documents(texts)
            answer = {
                "model": self.spec.key,
                "vectors": [None if v is None else encode(v) for v in res.vectors],
                "truncated": res.truncated,
                "windowed": res.windowed,
            }
        answer["pid"] = os.getpid()
        return answer

    def answer(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5.0)
            buf = b""
            while not buf.endswith(b"\n") and len(buf) < MAX_REQUEST_BYTES:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    return
                buf += chunk
            try:
                request = json.loads(buf)
                if not isinstance(request, dict):
                    raise ValueError
            except ValueError:
                out: dict = {"why": "the request was unreadable"}
            else:
                out = self.reply(request)
            conn.settimeout(5.0)
            conn.sendall(json.dumps(out).encode() + b"\n")
        except Exception as exc:  # noqa: BLE001 - one failed answer must not end the embedder
            print(f"clawmem embedder: a request failed: {exc}", file=sys.stderr, flush=True)
        finally:
            conn.close()
            with self._mu:
                self.active -= 1
                self.requests += 1
                self.last = time.monotonic()
                idle = self.active == 0
            if idle:
                _trim_heap()

    def serve(self, listener: socket.socket) -> str:
        """Answer until idle or until its files go; returns why it ends."""
        import select

        sock_ino, lock_ino = _inode(self.sock_path), _inode(self.lock_path)
        while True:
            ready, _, _ = select.select([listener], [], [], _TICK_S)
            if ready:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    conn = None
                if conn is not None:
                    with self._mu:
                        self.active += 1
                    threading.Thread(target=self.answer, args=(conn,), daemon=True).start()
            if _inode(self.sock_path) != sock_ino:
                return "its socket was removed"
            if _inode(self.lock_path) != lock_ino:
                return "its lock file was removed"
            _drop_gone_indexes()
            with self._mu:
                idle = self.active == 0 and time.monotonic() - self.last > self.spec.idle_s
                failed = self.active == 0 and self.why is not None
            if idle:
                return f"idle for {self.spec.idle_s:g} s"
            if failed:
                return self.why or "failed"


_KEPT: list[Server] = []  # the server of this process, never freed before os._exit (run)


def run(spec: Spec) -> int:
    """The embedder's life: take the lock (or end: one runs), listen, load, answer, end."""
    import socket

    try:
        folder = private_dir()
    except OSError as exc:
        print(f"clawmem embedder: {exc}", file=sys.stderr)
        return 1
    sock_path, lock_path, log_path = spec.paths(folder)
    fd = _take_lock(lock_path)
    if fd is None:
        return 0  # another embedder of this model runs or starts
    with contextlib.suppress(OSError):
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 2)
        os.close(log)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()  # left by a killed embedder: we hold the lock
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    why = "?"
    sock_ino: int | None = None
    try:
        listener.bind(str(sock_path))
        sock_ino = _inode(sock_path)
        listener.listen(64)
        server = Server(spec, sock_path, lock_path)
        # Held until the process ends: the last reference dropped when run() returns would free
        # the model first (the default's vocabulary: 0.3-0.5 s, 1.7 s on a loaded machine),
        # between "exiting" in the log and the end that the docs promise within a second.
        _KEPT.append(server)
        print(f"clawmem embedder {os.getpid()}: serving {spec.key}", file=sys.stderr, flush=True)
        threading.Thread(target=server.load, name="clawmem-load", daemon=True).start()
        why = server.serve(listener)
    finally:
        listener.close()
        # Our own files only: a successor may have made new ones under these names.
        for path, ino in ((sock_path, sock_ino), (lock_path, os.fstat(fd).st_ino)):
            if ino is not None and _inode(path) == ino:
                with contextlib.suppress(OSError):
                    path.unlink()
        print(f"clawmem embedder {os.getpid()}: exiting, {why}", file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m clawmem.embedders.resident.server")
    p.add_argument("--model", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--query-prefix", default="")
    p.add_argument("--document-prefix", default="")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    p.add_argument("--foreground", action="store_true", help="do not detach (tests, debugging)")
    a = p.parse_args(argv)
    spec = Spec(
        Path(a.model), a.key, a.query_prefix, a.document_prefix, a.threads, max(1.0, a.idle)
    )
    if not a.foreground and os.fork() > 0:
        os._exit(0)  # the launcher ends; its starter reaps it. The embedder is nobody's child.
    code = run(spec)
    sys.stderr.flush()
    os._exit(code)  # no teardown of the model's vocabulary (0.3-0.5 s of freeing, cli._exit)


if __name__ == "__main__":
    main()
