"""The resident embedder: one model process shared by every clawmem process of the user.

A fresh process that embeds a query (a terminal's ``clawmem recall``, an agent's shell call, the
hook before each prompt, cron) would otherwise load the model first: 1-2 s and ~500 MB for the
default model, against ~20 ms for the embedding itself (issue 29). So the first process that needs
a vector starts one embedder for the user and model, and every later process asks it over a Unix
socket, as eslint_d, gpg-agent and watchman do for their tools.

Its life, each rule tested in ``tests/test_resident.py``:

* Started on demand (``spawn``): ``python -m clawmem.ingest.resident``, which forks once more and
  lets its first process end, so the embedder has no parent, runs in a session of its own, and
  holds no descriptor of its starter: stdin and stdout are /dev/null, stderr its log. An agent's
  shell reading ``clawmem recall … | cat`` sees the pipe close as soon as the recall is done.
* One per user and model identity: it holds an ``flock`` on ``embed-<id>.lock`` in the user's
  runtime folder for its whole life, and one started in a race finds the lock taken and ends.
* It ends after ``resident_idle_minutes`` without a request, and within a second when its socket
  or lock file is removed or replaced (a cleaned ``/run/user`` or ``/tmp``, or by hand: ``rm`` of
  its socket is how to stop it).
* Off with ``resident_embedder = false`` in ``clawmem.toml`` or ``CLAWMEM_RESIDENT_EMBEDDER=0``:
  each process then loads the model itself, as before.

The protocol is the watcher's (``journal.py``): one JSON line per connection, ``{"embed": text,
"model": identity key}`` answered ``{"model": key, "vector": base64 float32}``, and
``{"embed_documents": [text, ...], "model": key}`` for the few units of an edit.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawmem.errors import ModelError
from clawmem.ingest import journal

# A loaded embedder answers a query in ~20 ms; one embedding a few documents for another process
# holds its model longer. Beyond this the process loads the model itself.
ANSWER_TIMEOUT_S = 3.0
# An embedder that started this long ago or less may still be loading its model (1-2 s here, more
# on a loaded machine): a process waits this long for it rather than load a second copy.
START_TIMEOUT_S = 20.0
# A process that started an embedder waits this long for it to take its lock, counted from the
# end of its launcher (which is Python's start, however loaded the machine is).
LOCK_GRACE_S = 5.0
# Documents sent in one request at most (an edit's units; bulk indexing loads the model itself).
MAX_DOCUMENTS = 64
MAX_REQUEST_BYTES = 4 << 20
DEFAULT_IDLE_S = 600.0
_SUN_PATH_MAX = 107  # a Unix socket's path, in bytes
_MEMO_MAX = 16  # query vectors a process keeps from other processes
_TICK_S = 0.5
_QUICK_NAME = "numpy query path"


def runtime_dir() -> Path:
    """The user's folder for the embedder's socket, lock and log: ``$CLAWMEM_RUNTIME_DIR``, else
    ``$XDG_RUNTIME_DIR/clawmem``, else ``clawmem-<uid>`` in the temporary folder (as tmux does)."""
    env = os.environ.get("CLAWMEM_RUNTIME_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "clawmem"
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
        return "embed-" + hashlib.sha256(self.key.encode()).hexdigest()[:16]

    def paths(self, folder: Path) -> tuple[Path, Path, Path]:
        """(socket, lock, log) in ``folder``."""
        stem = folder / self.name
        return stem.with_suffix(".sock"), stem.with_suffix(".lock"), stem.with_suffix(".log")


# --------------------------------------------------------------------------- the client's side
def spec_for(root: Path, cfg: Any, identity: Any) -> Spec | None:
    """What the resident embedder for this workspace's model is; None when it is turned off or
    the model file is not there yet (a built-in model converts on first load, in-process)."""
    if not cfg.resident_embedder or not hasattr(os, "fork") or not hasattr(os, "getuid"):
        return None  # off, or not a POSIX system (Unix sockets, fork, a user's own folder)
    from clawmem.ingest.model_choice import model_choice

    path = model_choice(root, cfg).file(convert=False)
    if path is None or not path.exists():
        return None
    return Spec(
        path.resolve(),
        identity.key(),
        identity.query_prefix,
        identity.document_prefix,
        cfg.embed_threads,
        max(1.0, cfg.resident_idle_minutes * 60),
    )


class Borrowed:
    """An ``Embedder`` for a process that has not loaded the model: a query's vector from a
    running watcher of the workspace, else from the user's resident embedder (started if none
    runs), documents from the resident embedder; if they cannot, from ``load()`` (the model
    loaded here after all: the same file, so the same vectors). ``query_by`` says which."""

    def __init__(
        self,
        identity: Any,
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
        self._quick: Any = None

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

    def _ask(self, request: dict) -> tuple[dict | None, str]:
        self.start()
        if self._spec is None or self._sock is None:
            return None, self._off
        line = json.dumps(request).encode()
        reply, why = _exchange_waiting(self._sock, line, self._spec, spawned=self._spawned)
        if reply is None and _absent(why) and self._spawned is None:
            # None ran, or it ended (idle) between our look and our question: start one.
            self._spawn()
            reply, why = _exchange_waiting(self._sock, line, self._spec, spawned=self._spawned)
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
            raw, why = journal.ask_vector(self._watcher_dir, self.identity.key(), text)
            if raw is not None and len(raw) == 4 * self.identity.dims:
                self.query_by = "watcher"
                return _floats(raw)
            whys.append(why or "the watcher sent a vector of another size")
        self.start()
        if self._spec is None and self._wanted:
            whys.append(self._off)
        quick = self._quick_path()
        if self._spec is not None:
            if len(text) > journal.MAX_QUERY_CHARS:
                whys.append("the query is too long to send to the resident embedder")
            else:
                request = {"embed": text, "model": self._spec.key}
                # With the query path at hand, a resident embedder that is not ready is not
                # waited for: it keeps loading for the next calls, this one goes on at once.
                ask = self._ask if isinstance(quick, str) else self._ask_at_once
                reply, why = ask(request)
                raw = _vector(reply.get("vector")) if reply else None
                if reply is not None and raw is not None and len(raw) == 4 * self.identity.dims:
                    self.query_by = f"resident embedder (pid {reply.get('pid')})"
                    return _floats(raw)
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
        reply, why = journal.exchange(self._sock, line, ANSWER_TIMEOUT_S, who="resident embedder")
        if reply is not None and reply.get("model") != self._spec.key:
            why = reply.get("why") or "the resident embedder did not embed it"
            reply = None
        return reply, why

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """Documents' vectors (float32 ``array.array``s from the resident embedder, which the
        index stores as they are), or the model loaded here for more than ``MAX_DOCUMENTS``."""
        from clawmem.embedders.base import EmbedResult

        texts = list(texts)
        if self._spec is not None and len(texts) <= MAX_DOCUMENTS:
            reply, _ = self._ask({"embed_documents": texts, "model": self._spec.key})
            vecs = reply.get("vectors") if reply is not None else None
            if isinstance(vecs, list) and len(vecs) == len(texts):
                out: list[Any] = []
                for v in vecs:
                    raw = _vector(v)
                    good = raw is not None and len(raw) == 4 * self.identity.dims
                    out.append(_floats(raw) if good and raw is not None else None)
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


def _floats(raw: bytes) -> Any:
    """Little-endian float32 bytes as an ``array.array("f")``."""
    import array

    vec = array.array("f", raw)
    if sys.byteorder != "little":
        vec.byteswap()
    return vec


def _vector(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return None


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
    sock: Path, line: bytes, spec: Spec, *, spawned: Launch | None
) -> tuple[dict | None, str]:
    """One question. An embedder that is starting (its lock taken but its socket not yet there,
    or its model loading; or, if this process ``spawned`` one at that time, not even its lock
    for ``LOCK_GRACE_S``) is waited for up to ``START_TIMEOUT_S`` from its start, one that has
    run longer ``ANSWER_TIMEOUT_S``."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            age = time.time() - os.lstat(sock).st_mtime  # its bind: when it started
        except OSError:
            age = None
        why = "no resident embedder running"
        if age is not None:
            timeout = ANSWER_TIMEOUT_S if age > START_TIMEOUT_S else START_TIMEOUT_S - age + 1
            reply, why = journal.exchange(sock, line, timeout, who="resident embedder")
            if reply is not None or not _absent(why):
                return reply, why
        if time.monotonic() >= deadline or not _starting(spec, spawned=spawned):
            return None, why
        time.sleep(0.01)


def _absent(why: str) -> bool:
    """Whether ``journal.exchange``'s reason means no embedder listens (rather than a failure):
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
        "clawmem.ingest.resident",
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


def status_of(root: Path, cfg: Any) -> dict:
    """The resident embedder of this workspace's model, for ``clawmem status`` (never starts it)."""
    if not cfg.resident_embedder:
        where = cfg.sources.get("resident_embedder", "default")
        return {"state": f"off (resident_embedder = false, {where})"}
    if not cfg.vectors:
        return {"state": "not used (vectors are off)"}
    from clawmem.ingest.model_choice import configured_identity

    identity = configured_identity(root, cfg)
    if identity is None:
        return {"state": "not running (its model file is not there yet)"}
    return describe(spec_for(root, cfg, identity))


def query_path_status(root: Path, cfg: Any) -> str:
    """The NumPy query path of this workspace's model, for ``clawmem status``: what the first
    hybrid call of a session does while no watcher or resident embedder is ready."""
    if not cfg.query_path:
        return f"off (query_path = false, {cfg.sources.get('query_path', 'default')})"
    if not cfg.vectors:
        return "not used (vectors are off)"
    from clawmem.ingest.model_choice import configured_identity

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
    reply, why = journal.exchange(
        sock, json.dumps({"status": True}).encode(), 0.5, who="resident embedder"
    )
    if reply is None:
        return {"state": "not running", "socket": str(sock), "reason": why}
    return {"state": "running", "socket": str(sock), "log": str(log), **reply}


# --------------------------------------------------------------------------- the embedder's side
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
    from clawmem.embedders.llama import _trim_heap as trim

    trim()


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


class _Server:
    def __init__(self, spec: Spec, sock_path: Path, lock_path: Path) -> None:
        self.spec = spec
        self.sock_path = sock_path
        self.lock_path = lock_path
        self.ready = threading.Event()
        self.emb: Any = None
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
            }
        if request.get("ready_only") and not self.ready.is_set():
            return {"why": "the resident embedder is loading its model"}
        if not self.ready.wait(START_TIMEOUT_S):
            return {"why": "the resident embedder is still loading its model"}
        if self.emb is None:
            return {"why": self.why or "no model"}
        if "embed_documents" not in request:
            answer = journal.vector_reply(request, self.emb, who="resident embedder")
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
                "vectors": [
                    None if v is None else base64.b64encode(v.astype("<f4").tobytes()).decode()
                    for v in res.vectors
                ],
                "truncated": res.truncated,
                "windowed": res.windowed,
            }
        answer["pid"] = os.getpid()
        return answer

    def answer(self, conn: Any) -> None:
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

    def serve(self, listener: Any) -> str:
        """Answer until idle or until its files go; returns why it ends."""
        import select

        sock_ino, lock_ino = _inode(self.sock_path), _inode(self.lock_path)
        while True:  # noqa: PLR1702
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
            with self._mu:
                idle = self.active == 0 and time.monotonic() - self.last > self.spec.idle_s
                failed = self.active == 0 and self.why is not None
            if idle:
                return f"idle for {self.spec.idle_s:g} s"
            if failed:
                return self.why or "failed"


_KEPT: list[Any] = []  # the server of this process, never freed before os._exit (run)


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
        server = _Server(spec, sock_path, lock_path)
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

    p = argparse.ArgumentParser(prog="python -m clawmem.ingest.resident")
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
