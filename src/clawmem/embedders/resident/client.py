"""The resident embedder, a process's side: ``Borrowed``, an embedder that does not load the model.

A fresh process that embeds a query (a terminal's ``clawmem recall``, an agent's shell call, the
hook before each prompt, cron) would otherwise load the model first: 1-2 s and ~500 MB for the
default model, against ~20 ms for the embedding itself (issue 29). So the first process that needs
a vector starts one embedder for the user and model (``server.py``), and every later process asks
it over a Unix socket (``protocol.py``), as eslint_d, gpg-agent and watchman do for their tools.
Off with ``resident_embedder = false`` in ``clawmem.toml`` or ``CLAWMEM_RESIDENT_EMBEDDER=0``: each
process then loads the model itself, as before.

Which one a process borrows from, and when: ``embedders/supply.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawmem.embedders.resident.protocol import (
    MAX_DOCUMENTS,
    MAX_QUERY_CHARS,
    START_TIMEOUT_S,
    Spec,
    ask_vector,
    exchange,
    floats,
    private_dir,
    runtime_dir,
    vector_bytes,
)
from clawmem.errors import ModelError

if TYPE_CHECKING:
    from clawmem.config import Config
    from clawmem.embedders.base import EmbedderIdentity, Vector
    from clawmem.embedders.query_path import QueryPathEmbedder

# A loaded embedder answers a query in ~20 ms; one embedding a few documents for another process
# holds its model longer. Beyond this the process loads the model itself.
ANSWER_TIMEOUT_S = 3.0
# And this much more per document of a batch: 64 documents of 512 tokens take the embedder a few
# seconds on a busy machine, and a batch given up on is embedded twice (here, after loading the
# model, while the embedder finishes the first copy).
DOCUMENT_S = 0.25
# A process that started an embedder waits this long for it to take its lock, counted from the
# end of its launcher (which is Python's start, however loaded the machine is).
LOCK_GRACE_S = 5.0
# The longest the resident embedder waits for a request, whatever resident_idle_minutes says (a
# cloned clawmem.toml could keep it forever): a process clawmem starts never outlives its purpose.
MAX_IDLE_MINUTES = 24 * 60
_SUN_PATH_MAX = 107  # a Unix socket's path, in bytes
_MEMO_MAX = 16  # query vectors a process keeps from other processes
_QUICK_NAME = "numpy query path"


# --------------------------------------------------------------------------- the client's side
def spec_for(root: Path, cfg: Config, identity: EmbedderIdentity) -> Spec | None:
    """What the resident embedder for this workspace's model is; None when it is turned off or
    the model file is not there yet (a built-in model converts on first load, in-process)."""
    if not cfg.resident_embedder or not hasattr(os, "fork") or not hasattr(os, "getuid"):
        return None  # off, or not a POSIX system (Unix sockets, fork, a user's own folder)
    from clawmem.embedders.model_choice import model_choice

    path = model_choice(root, cfg).file(convert=False)
    if path is None or not path.exists():
        return None
    return Spec(
        path.resolve(),
        identity.key(),
        identity.query_prefix,
        identity.document_prefix,
        cfg.embed_threads,
        max(1.0, min(cfg.resident_idle_minutes, MAX_IDLE_MINUTES) * 60),
    )


class Borrowed:
    """An ``Embedder`` for a process that has not loaded the model: a query's vector from a
    running watcher of the workspace, else from the user's resident embedder (started if none
    runs), documents from the resident embedder; if they cannot, from ``load()`` (the model
    loaded here after all: the same file, so the same vectors). ``query_by`` says which."""

    def __init__(
        self,
        identity: EmbedderIdentity,
        *,
        watcher_dir: Path | None,
        spec: Spec | None,
        load: Callable[[], Any],
        load_error: Callable[[], str | None],
        memo: dict[tuple[str, str], Any] | None = None,
        quick: bool = False,
    ) -> None:
        self.identity = identity
        self.model_path = spec.model_path if spec is not None else None
        self._watcher_dir = watcher_dir
        self._spec = spec
        self._wanted = spec is not None  # the resident embedder is on (it may fail to start)
        self._load = load
        self._load_error = load_error
        # The process's queries already embedded elsewhere (the owner's, shared by its borrowed
        # embedders): the prompt hook embeds its message for two recalls and its null level.
        self._memo = memo if memo is not None else {}
        self._sock: Path | None = None
        self._spawned: Launch | None = None  # the embedder this process started
        self._off = "the resident embedder is off"  # why it is not asked, once it cannot be
        self.query_by = "this process"
        self.error: str | None = None  # why there is no vector at all
        # The NumPy query path (embedders/query_path.py), used while no watcher or resident
        # embedder can answer at once: opened on first need, or why it cannot serve.
        self._quick_on = quick and spec is not None
        self._quick: QueryPathEmbedder | str | None = None  # or why it cannot serve

    def start(self) -> None:
        """Start the resident embedder if none runs, without waiting for it: a recall calls this
        before its lexical work, so the embedder loads its model meanwhile."""
        if self._spec is None or self._sock is not None:
            return
        try:
            folder = private_dir()
        except OSError as exc:
            self._spec, self._off = None, f"no folder for the resident embedder: {exc}"
            return
        sock, _, _ = self._spec.paths(folder)
        if len(os.fsencode(sock)) > _SUN_PATH_MAX:
            self._spec, self._off = None, f"the resident embedder's socket path is too long: {sock}"
            return
        self._sock = sock
        if self._watcher_dir is None and not _listening(sock):
            self._spawn()

    def _spawn(self) -> None:
        assert self._spec is not None
        launch = spawn(self._spec)
        if launch is None:  # could not even start Python: nothing to wait for
            launch = Launch()
            launch.failed, launch.ended = True, time.monotonic()
        self._spawned = launch

    def _ask(self, request: dict, answer_s: float = ANSWER_TIMEOUT_S) -> tuple[dict | None, str]:
        self.start()
        if self._spec is None or self._sock is None:
            return None, self._off
        line = json.dumps(request).encode()
        spec, spawned = self._spec, self._spawned
        reply, why = _exchange_waiting(self._sock, line, spec, spawned=spawned, answer_s=answer_s)
        if reply is None and _absent(why) and self._spawned is None:
            # None ran, or it ended (idle) between our look and our question: start one.
            self._spawn()
            reply, why = _exchange_waiting(
                self._sock, line, spec, spawned=self._spawned, answer_s=answer_s
            )
        if reply is not None and reply.get("model") != self._spec.key:
            why = f"the resident embedder did not embed it ({reply.get('why', 'no reason given')})"
            reply = None
        return reply, why

    def embed_query(self, text: str) -> Any:
        """The query's vector: a float32 ``array.array`` when it comes from another process
        (the vector leg takes it as is, and this process never imports NumPy)."""
        key = (self.identity.key(), text)
        if key in self._memo:
            return self._memo[key]
        vec = self._embed_query(text)
        if vec is not None and not self.query_by.startswith("this process"):
            if len(self._memo) >= _MEMO_MAX:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = vec  # from another process: the loaded model is not asked again
        return vec

    def _embed_query(self, text: str) -> Any:
        whys = []
        if self._watcher_dir is not None:
            raw, why = ask_vector(self._watcher_dir, self.identity.key(), text)
            if raw is not None and len(raw) == 4 * self.identity.dims:
                self.query_by = "watcher"
                return floats(raw)
            whys.append(why or "the watcher sent a vector of another size")
        self.start()
        if self._spec is None and self._wanted:
            whys.append(self._off)
        quick = self._quick_path()
        if self._spec is not None:
            if len(text) > MAX_QUERY_CHARS:
                whys.append("the query is too long to send to the resident embedder")
            else:
                request = {"embed": text, "model": self._spec.key}
                # With the query path at hand, a resident embedder that is not ready is not
                # waited for: it keeps loading for the next calls, this one goes on at once.
                ask = self._ask if isinstance(quick, str) else self._ask_at_once
                reply, why = ask(request)
                raw = vector_bytes(reply.get("vector")) if reply else None
                if reply is not None and raw is not None and len(raw) == 4 * self.identity.dims:
                    self.query_by = f"resident embedder (pid {reply.get('pid')})"
                    return floats(raw)
                whys.append(why or "the resident embedder sent a vector of another size")
        if not isinstance(quick, str):
            try:
                vec = quick.embed_query(text)
            except (OSError, ValueError, sqlite3.Error) as exc:  # the model or cache changed
                self._quick = f"the query path failed ({type(exc).__name__}: {exc})"
                whys.append(self._quick)
            else:
                self.query_by = _QUICK_NAME + (f" ({'; '.join(whys)})" if whys else "")
                return vec
        elif self._quick_on:
            whys.append(f"no {_QUICK_NAME}: {quick}")
        self.query_by = "this process" + (f" ({'; '.join(whys)})" if whys else "")
        emb = self._loaded()
        return None if emb is None else emb.embed_query(text)

    def _quick_path(self) -> Any:
        """The NumPy query path's embedder, or why there is none (a string)."""
        if not self._quick_on:
            return "off"
        if self._quick is None:
            from clawmem.embedders.query_path import open_or_why

            assert self.model_path is not None
            self._quick = open_or_why(self.model_path, self.identity)
        return self._quick

    def _ask_at_once(self, request: dict) -> tuple[dict | None, str]:
        """``_ask`` without waiting for a model to load: an embedder this process starts, or one
        still loading (it says so at once: ``ready_only``), gives no answer now."""
        self.start()
        if self._spec is None or self._sock is None:
            return None, self._off
        if not _listening(self._sock):
            if self._spawned is None:
                self._spawn()
            return None, "the resident embedder is starting"
        line = json.dumps({**request, "ready_only": True}).encode()
        reply, why = exchange(self._sock, line, ANSWER_TIMEOUT_S, who="resident embedder")
        if reply is not None and reply.get("model") != self._spec.key:
            why = reply.get("why") or "the resident embedder did not embed it"
            reply = None
        return reply, why

    def search_vectors(
        self, index_path: Path, qvec: Vector, limit: int
    ) -> tuple[list[tuple[int, float]] | None, str]:
        """(the ``limit`` units of the index at ``index_path`` nearest to ``qvec``, by exact
        cosine, "") from the copy of its vectors the resident embedder holds; else (None, why
        not). Never waits for a model or a load: the caller ranks with vec0 meanwhile."""
        from clawmem.embedders.resident.protocol import encode_raw

        request = {
            "search": str(index_path.resolve()),
            "vector": encode_raw(qvec),
            "limit": limit,
        }
        if self._spec is None:
            self.start()
        if self._spec is None:
            return None, self._off
        request["model"] = self._spec.key
        reply, why = self._ask_at_once(request)
        hits = reply.get("hits") if reply is not None else None
        if not isinstance(hits, list):
            return None, why or "the resident embedder sent no hits"
        try:
            return [(int(c), float(s)) for c, s in hits], ""
        except (TypeError, ValueError):
            return None, "the resident embedder's hits were unreadable"

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """Documents' vectors (float32 ``array.array``s from the resident embedder, which the
        index stores as they are), or the model loaded here for more than ``MAX_DOCUMENTS``."""
        from clawmem.embedders.base import EmbedResult

        texts = list(texts)
        if self._spec is not None and len(texts) <= MAX_DOCUMENTS:
            request = {"embed_documents": texts, "model": self._spec.key}
            reply, _ = self._ask(request, ANSWER_TIMEOUT_S + DOCUMENT_S * len(texts))
            vecs = reply.get("vectors") if reply is not None else None
            if isinstance(vecs, list) and len(vecs) == len(texts):
                out: list[Any] = []
                for v in vecs:
                    raw = vector_bytes(v)
                    good = raw is not None and len(raw) == 4 * self.identity.dims
                    out.append(floats(raw) if good and raw is not None else None)
                assert reply is not None
                return EmbedResult(
                    out, int(reply.get("truncated", 0)), int(reply.get("windowed", 0))
                )
        emb = self._loaded()
        if emb is None:
            raise ModelError(self.error or "no embedding model")
        return emb.embed_documents(texts)

    def _loaded(self) -> Any:
        emb = self._load()
        if emb is None:
            self.error = self._load_error()
        elif emb.identity.key() != self.identity.key():
            self.error = f"the model loaded is {emb.identity.key()}, not {self.identity.key()}"
            return None
        return emb

    def close(self) -> None:
        pass


def _listening(sock: Path) -> bool:
    """Whether something listens on ``sock`` (an embedder loading its model counts)."""
    import socket

    try:
        os.lstat(sock)
    except OSError:
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(0.2)
        s.connect(str(sock))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _exchange_waiting(
    sock: Path,
    line: bytes,
    spec: Spec,
    *,
    spawned: Launch | None,
    answer_s: float = ANSWER_TIMEOUT_S,
) -> tuple[dict | None, str]:
    """One question. An embedder that is starting (its lock taken but its socket not yet there,
    or its model loading; or, if this process ``spawned`` one at that time, not even its lock
    for ``LOCK_GRACE_S``) is waited for up to ``START_TIMEOUT_S`` from its start, one that has
    run longer ``answer_s``."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            age = time.time() - os.lstat(sock).st_mtime  # its bind: when it started
        except OSError:
            age = None
        why = "no resident embedder running"
        if age is not None:
            timeout = (
                answer_s if age > START_TIMEOUT_S else max(answer_s, START_TIMEOUT_S - age + 1)
            )
            reply, why = exchange(sock, line, timeout, who="resident embedder")
            if reply is not None or not _absent(why):
                return reply, why
        if time.monotonic() >= deadline or not _starting(spec, spawned=spawned):
            return None, why
        time.sleep(0.01)


def _absent(why: str) -> bool:
    """Whether ``exchange``'s reason means no embedder listens (rather than a failure):
    no socket, a refused connection, or one reset or closed unanswered (an embedder that was
    killed, or ended idle, as the question arrived: its last thread still held the socket)."""
    return (
        why.startswith("no resident embedder")
        or "is not running" in why
        or "reset by peer" in why
        or "closed the connection without answering" in why
    )


def _starting(spec: Spec, *, spawned: Launch | None) -> bool:
    """Whether an embedder for ``spec`` runs (the pid in its lock file is alive: it started and
    may not listen yet), or, one that this process ``spawned``, may not have taken its lock yet.
    Never by trying the lock: an embedder starting at that moment would find it taken and end."""
    if spawned is not None and spawned.starting():
        return True
    _, lock, _ = spec.paths(runtime_dir())
    pid = _lock_pid(lock)
    return pid is not None and _alive(pid)


def _lock_pid(lock: Path) -> int | None:
    try:
        text = lock.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process has it: not ours to judge, and it exists
    try:  # a zombie (ended, not yet reaped by its new parent) holds no lock and answers nothing
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class Launch:
    """A started embedder's first process (the launcher, which forks the embedder and ends):
    while it runs, Python is still starting under whatever load the machine has."""

    def __init__(self) -> None:
        self.ended: float | None = None  # when it ended (monotonic)
        self.failed = False  # it ended with an error: no embedder is coming

    def starting(self) -> bool:
        """Whether the embedder may still be on its way to taking its lock."""
        if self.ended is None:
            return True
        return not self.failed and time.monotonic() - self.ended < LOCK_GRACE_S


def spawn(spec: Spec) -> Launch | None:
    """Start an embedder for ``spec`` and return at once. It detaches (see the module docstring);
    if one is running or starting already, the new one finds its lock taken and ends."""
    import subprocess

    args = [
        sys.executable,
        "-m",
        "clawmem.embedders.resident.server",
        "--model",
        str(spec.model_path),
        "--key",
        spec.key,
        "--query-prefix",
        spec.query_prefix,
        "--document-prefix",
        spec.document_prefix,
        "--threads",
        str(spec.threads),
        "--idle",
        str(spec.idle_s),
    ]
    # Two malloc arenas, not one per thread that ever answered (each keeps what it freed).
    env = {**os.environ, "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")}
    try:
        proc = subprocess.Popen(
            args,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            cwd="/",
        )
    except OSError:
        return None  # the question then finds no embedder, and this process loads the model
    # The launcher ends as soon as it has forked the embedder: reap it, so that no zombie waits
    # for this process's end.
    launch = Launch()

    def reap() -> None:
        launch.failed = proc.wait() != 0
        launch.ended = time.monotonic()

    threading.Thread(target=reap, name="clawmem-reap", daemon=True).start()
    return launch


def status_of(root: Path, cfg: Config) -> dict:
    """The resident embedder of this workspace's model, for ``clawmem status`` (never starts it)."""
    if not cfg.resident_embedder:
        where = cfg.sources.get("resident_embedder", "default")
        return {"state": f"off (resident_embedder = false, {where})"}
    if not cfg.vectors:
        return {"state": "not used (vectors are off)"}
    from clawmem.embedders.model_choice import configured_identity

    identity = configured_identity(root, cfg)
    if identity is None:
        return {"state": "not running (its model file is not there yet)"}
    return describe(spec_for(root, cfg, identity))


def query_path_status(root: Path, cfg: Config) -> str:
    """The NumPy query path of this workspace's model, for ``clawmem status``: what the first
    hybrid call of a session does while no watcher or resident embedder is ready."""
    if not cfg.query_path:
        return f"off (query_path = false, {cfg.sources.get('query_path', 'default')})"
    if not cfg.vectors:
        return "not used (vectors are off)"
    from clawmem.embedders.model_choice import configured_identity

    identity = configured_identity(root, cfg)
    spec = spec_for(root, cfg, identity) if identity is not None else None
    if identity is None or spec is None:
        return "not used (no model file yet, or the resident embedder is off)"
    from clawmem.embedders.query_path import open_or_why

    got = open_or_why(spec.model_path, identity)
    if isinstance(got, str):
        return f"not used: {got} (the first call of a session waits for the resident embedder)"
    return "ready (the first call of a session embeds its query here, without loading llama.cpp)"


def describe(spec: Spec | None) -> dict:
    """The embedder's state for ``clawmem status``: running (pid, memory, requests), or not."""
    if spec is None:
        return {"state": "not used (no model file to serve yet)"}
    try:
        folder = private_dir(create=False)
    except OSError as exc:
        return {"state": "not running", "reason": str(exc)}
    sock, lock, log = spec.paths(folder)
    reply, why = exchange(sock, json.dumps({"status": True}).encode(), 0.5, who="resident embedder")
    if reply is None:
        return {"state": "not running", "socket": str(sock), "reason": why}
    return {"state": "running", "socket": str(sock), "log": str(log), **reply}
