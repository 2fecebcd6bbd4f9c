"""The watcher's journal: lets a recall skip its stat pass when a live ``clawmem watch`` vouches.

A recall's freshness check stats every memory file (``sync.plan_fresh``). When a watcher runs,
it already learns of every change from the kernel, so a recall can ask it instead. The claim must
be *verifiably current*: a watcher that died, hangs, is behind, or never saw an edit must never
make a recall miss one. So the question is a round trip, answered only by a live process:

1. The recall connects to ``.memory/watch.sock`` and sends its scan key (workspace, extra paths,
   transcript folders, size limits: the watcher must be scanning what the recall would scan).
2. The watcher's journal thread touches ``.memory/watch.probe``. Its inotify instance watches the
   memory folders and that probe on one file descriptor, and the kernel queues the events of one
   instance in the order they happened. The journal reads events until it sees its own probe: by
   then it has read every change made before the recall asked (a ``write()`` queues its event
   before it returns).
3. It answers "clean" only if a stat comparison that began after every relevant event read up to
   that probe has *completed* (a sync, or a check that found nothing to sync), and nothing made
   events untrustworthy (queue overflow since, a symlinked or hard-linked memory file, a file
   system that may change without local events). A sync running now applies only later changes,
   which a reader's snapshot does not see half-done. The answer carries that count of events (a
   token): a recall that must wait asks again with it, and waits for its own changes only, not
   for writers to go quiet.

Anything else (no socket, connection refused after a kill, no answer within ``ASK_TIMEOUT_S`` from
a stopped process, another scan key, "dirty") and the recall runs its own stat pass as before.

The same socket answers a second question: a line holding a JSON object ``{"embed": query,
"model": identity key}`` asks the watcher to embed a recall's query with the model it keeps
loaded, if that model has this identity (``embedders/resident/protocol.py``: ``ask_vector``). A
new process then does not load the model just for its query (~1.5 s for the default model,
against ~30 ms for the embedding).

Linux only (inotify through libc, no extra dependency); elsewhere the watcher offers no journal.
Not seen by inotify, hence not vouched for by design: writes through a shared memory mapping
(no editor saves that way) and edits made on another machine to a network file system (refused:
only local file systems are trusted).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from clawmem.embedders.resident import protocol
from clawmem.embedders.resident.protocol import WATCHER_SOCKET as SOCKET_NAME
from clawmem.files import safe_open

if TYPE_CHECKING:
    import socket

    from clawmem.config import Config

PROBE_NAME = "watch.probe"
BEHIND = "the watcher is not caught up"
CHANGED = "changes since its last sync"
ASK_TIMEOUT_S = 0.25  # a stopped or swamped watcher costs a recall this much, then the stat pass
# Query vectors the watcher embeds or queues at once; a recall asking beyond that is told the
# watcher is busy at once (a query takes ~15-30 ms, so the last of 4 waits ~0.1 s).
MAX_EMBEDDING = 4
_PROBE_TIMEOUT_S = 2.0

# inotify(7)
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_ISDIR = 0x40000000
_CHANGES = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)

# File systems whose every change goes through this kernel (and so reaches inotify).
LOCAL_FS = {
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "tmpfs",
    "ramfs",
    "f2fs",
    "zfs",
    "overlay",
    "jfs",
    "bcachefs",
    "nilfs2",
}


def scan_key(root: Path, cfg: Config) -> str:
    """What a stat pass would look at: a watcher vouches only for the same scan."""
    from clawmem.ingest.sync import chunking_key

    return json.dumps(
        [
            str(root),
            list(cfg.extra_paths),
            list(cfg.session_paths),
            cfg.max_file_bytes,
            cfg.max_files,
            chunking_key(cfg),
        ]
    )


# --------------------------------------------------------------------------- the recall's side
def ask(memory_dir: Path, key: str, timeout: float = ASK_TIMEOUT_S) -> tuple[bool, str]:
    """(True, "") when a live watcher vouches that the index holds every change made before this
    call; else (False, why not). Never raises for a missing, dead or hung watcher."""
    answer = ask_token(memory_dir, key, timeout)
    return answer.clean, answer.why


class Answer(NamedTuple):
    clean: bool
    why: str
    token: int | None = None  # the count of changes the watcher had read when asked
    pid: int | None = None  # the watcher's process


def ask_token(
    memory_dir: Path, key: str, timeout: float = ASK_TIMEOUT_S, token: int | None = None
) -> Answer:
    """``ask``, plus the watcher's token for this question: the count of changes it had read
    when the question reached it. Asked again with that token, the watcher vouches once a sync
    that began after those changes has completed, even if newer changes have come in since: a
    recall waits for the changes made before it asked, not for writers to go quiet."""
    # The key is JSON, which never holds a raw tab: a tab separates the token, if any.
    line = key.encode() + (f"\t{token}".encode() if token is not None else b"")
    reply, why = _round_trip(memory_dir, line, timeout)
    if reply is None:
        return Answer(False, why)
    got, pid = (
        v if isinstance(v, int) and not isinstance(v, bool) else None
        for v in (reply.get("token"), reply.get("pid"))
    )
    if reply.get("clean") is True:
        return Answer(True, "", got, pid)
    return Answer(False, f"{BEHIND} ({reply.get('why', 'no reason given')})", got, pid)


def _round_trip(memory_dir: Path, line: bytes, timeout: float) -> tuple[dict | None, str]:
    """Send one line to the watcher's socket and read its one-line JSON answer: (answer, "")
    or (None, why there is none)."""
    return protocol.exchange(memory_dir / SOCKET_NAME, line, timeout, who="watcher")


def wait_caught_up(memory_dir: Path, key: str, timeout: float, token: int | None = None) -> bool:
    """Ask until a live watcher that says it is behind has synced the changes made before the
    question that gave ``token`` (True), or gives another answer, or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = ask_token(memory_dir, key, token=token)
        if answer.clean:
            return True
        if not answer.why.startswith(BEHIND) or time.monotonic() >= deadline:
            return False
        token = token if token is not None else answer.token  # the first question's changes
        time.sleep(0.02)


# --------------------------------------------------------------------------- the watcher's side
class _Inotify:
    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise OSError(errno.ENOSYS, "the watcher journal needs Linux inotify")
        # Here, not at the top: every read imports this module to ask, only the watcher reads.
        import ctypes
        import ctypes.util
        import struct

        self._event = struct.Struct("iIII")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._errno = ctypes.get_errno
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        self.fd = fd

    def add(self, path: str, mask: int) -> int:
        wd = self._add(self.fd, os.fsencode(path), mask)
        if wd < 0:
            e = self._errno()
            raise OSError(e, os.strerror(e), path)
        return int(wd)

    def read(self) -> list[tuple[int, int, str]]:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out, off = [], 0
        ev = self._event
        while off + ev.size <= len(data):
            wd, mask, _cookie, n = ev.unpack_from(data, off)
            name = data[off + ev.size : off + ev.size + n].rstrip(b"\0")
            out.append((wd, mask, os.fsdecode(name)))
            off += ev.size + n
        return out

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _remove_dead_probes(memory_dir: Path) -> None:
    """Remove the probes of processes' own journals that ended without closing (killed)."""
    for p in memory_dir.glob("probe-*-*"):
        pid = p.name.split("-")[1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                p.unlink()
        except OSError:
            pass  # alive, another user's


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file system type), longest mount point first."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) >= 5 and right:
                    point = fields[4].encode().decode("unicode_escape")
                    out.append((point, right.split()[0]))
    except OSError:
        return []
    out.sort(key=lambda m: len(m[0]), reverse=True)
    return out


def _fs_type(path: str, mounts: list[tuple[str, str]]) -> str | None:
    real = os.path.realpath(path)
    for point, fstype in mounts:
        if real == point or real.startswith(point.rstrip("/") + "/"):
            return fstype
    return None


def inside(root: Path, path: str) -> bool:
    """Whether ``path``, its links followed, is inside the workspace ``root`` (a loop or an
    unreadable link: not). What the journal and the watcher watch: a cloned repository's
    ``memory -> /`` had them watch every folder of the machine."""
    try:
        Path(path).resolve().relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return False
    return True


class Journal:
    """The watcher's inotify journal and its socket. ``start()``, then call ``begin()`` before
    and ``caught_up(token)`` after every stat comparison that completed with nothing left to do.

    With ``serve=False`` it is a process's own journal (``Indexer.follow_changes``, for a
    long-running ``clawmem mcp``): no socket and no thread; ``check()`` reads the queued events
    in the caller's thread, up to a probe of its own, and gives the same verdict a recall would
    get from a watcher. The kernel keeps the events between calls (an overflow is an event)."""

    def __init__(
        self,
        root: Path,
        memory_dir: Path,
        cfg: Config,
        *,
        wake: Callable[[], None] = lambda: None,
        log: Callable[[str], None] = lambda m: None,
        embedder: Callable[[], Any] | None = None,
        serve: bool = True,
    ) -> None:
        from clawmem.markdown.workspace import CORE_FILES, TREES
        from clawmem.transcripts.sessions import folders

        self.root = root
        self.memory_dir = memory_dir
        self.key = scan_key(root, cfg)
        self.wake = wake
        self.log = log
        self.serve = serve
        # Each journal's own probe: a process's journal beside a watcher (both watch .memory for
        # probe touches) must not take the watcher's probe for its own, nor the other way round.
        self.probe_name = PROBE_NAME if serve else f"probe-{os.getpid()}-{id(self):x}"
        self._check_mu = threading.Lock()  # one ``check`` at a time reads the queue
        self.broken: str | None = None  # why ``check`` can no longer answer
        self.embedder = embedder  # the watcher's model (loaded on first call), for query vectors
        # Query vectors being embedded or waiting for the model, each on a thread of its own.
        self._embedding = threading.BoundedSemaphore(MAX_EMBEDDING)
        self._mu = threading.Lock()
        self._seq = 0  # relevant events read so far
        self._clean_through = -1  # _seq at the start of the last completed comparison
        self.syncing = False
        self._untrusted: dict[str, str] = {}  # path -> why events cannot vouch for it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._ino: _Inotify | None = None
        self._wds: dict[int, tuple[str, str]] = {}  # wd -> (folder, kind: root|tree|sessions)
        self._probe_seen = 0
        self._overflows = 0
        self._probe_wd = -1
        # What to watch: the root for its core file and for the trees appearing, each memory tree
        # and extra folder recursively, each transcript folder recursively.
        self.core = {n.lower() for n in CORE_FILES}
        self.tree_names = set(TREES)
        self.trees: list[str] = [str(root / t) for t in TREES]
        self.extra_files: set[str] = set()
        for extra in cfg.extra_paths:
            p = root / extra.strip("/")
            if p.suffix.lower() == ".md" and not p.is_dir():
                self.extra_files.add(str(p))
                if p.parent != root:
                    self._untrusted[str(p)] = "an extra path inside a subfolder"
            elif p.parent == root:
                self.tree_names.add(p.name)
                self.trees.append(str(p))
            elif p.is_dir():
                self.trees.append(str(p))
                self._untrusted[str(p)] = "an extra folder inside a subfolder"
            else:
                self._untrusted[str(p)] = "an extra path that does not exist yet"
        self.sessions = [str(f) for f in folders(root, cfg)]
        for f in self.sessions:
            if not os.path.isdir(f):
                self._untrusted[f] = "a transcript folder that does not exist yet"

    # ------------------------------------------------------------------ state
    def begin(self) -> int:
        """Call just before a stat comparison; pass the token to ``caught_up``."""
        with self._mu:
            return self._seq

    def caught_up(self, token: int) -> None:
        """A comparison that began at ``token`` completed with the index matching the files."""
        with self._mu:
            self._clean_through = max(self._clean_through, token)

    def _event(self) -> None:
        with self._mu:
            self._seq += 1
        self.wake()

    def verdict(self, token: int | None = None) -> tuple[bool, str, int]:
        """(clean, why not, token). Clean when a stat comparison that began after the first
        ``token`` changes were read has completed with the index matching the files: every
        change made before the question that got ``token`` is in the index (a sync running now
        only applies later ones, which a reader's snapshot does not see half-done). With no token
        (a first question), every change read so far counts."""
        with self._mu:
            seq, through = self._seq, self._clean_through
        token = seq if token is None else min(token, seq)
        if self._untrusted:
            path, why = next(iter(self._untrusted.items()))
            return False, f"{why}: {path}", token
        if through >= token:
            return True, "", token
        if self.syncing:
            return False, "a sync is running", token
        return False, CHANGED, token

    # ------------------------------------------------------------------ watches
    def _watch_tree(self, top: str, kind: str) -> None:
        """Watch ``top`` and every folder below it (hidden and tool folders aside, as the scan)."""
        from clawmem.markdown.workspace import SKIP_DIRS

        stack = [top]
        while stack:
            d = stack.pop()
            try:
                self._wds[self._ino.add(d, _CHANGES | IN_ONLYDIR)] = (d, kind)  # type: ignore[union-attr]
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone already: its deletion is an event of its parent
                raise
            try:
                with os.scandir(d) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                if e.name.startswith(".") or (kind != "sessions" and e.name in SKIP_DIRS):
                    continue  # what the scans skip (sessions.scan skips hidden folders only)
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        self._check_file(e.path, kind)
                except OSError:
                    continue

    def _relevant_name(self, name: str, kind: str) -> bool:
        if kind == "sessions":
            return name.endswith(".jsonl") and not name.startswith(".")
        return name.lower().endswith(".md") and not name.startswith(".")

    def _check_file(self, path: str, kind: str) -> None:
        """A symlinked or hard-linked memory file can change without an event in these folders."""
        name = os.path.basename(path)
        if not self._relevant_name(name, kind):
            return
        try:
            st = os.lstat(path)
        except OSError:
            self._untrusted.pop(path, None)
            return
        if stat.S_ISLNK(st.st_mode):
            self._untrusted[path] = "a symlinked memory file"
        elif st.st_nlink > 1:
            self._untrusted[path] = "a hard-linked memory file"
        else:
            self._untrusted.pop(path, None)

    def _watch_all(self) -> None:
        """Watch the root and every memory folder below it (again after an overflow: a folder
        created while events were lost would otherwise go unwatched; adding a watch that exists
        is harmless)."""
        assert self._ino is not None
        self._wds[self._ino.add(str(self.root), _CHANGES | IN_ONLYDIR)] = (str(self.root), "root")
        for top in self.trees:
            # Not through a link out of the workspace (a cloned repository's `memory -> /`):
            # the walk listed every folder there and used up the user's inotify watches. The
            # scan reads nothing through it either, so there is nothing to follow.
            if os.path.isdir(top) and inside(self.root, top):
                self._watch_tree(top, "tree")
        for top in self.sessions:
            if os.path.isdir(top):
                self._watch_tree(top, "sessions")
        for name in os.listdir(self.root):
            if name.lower() in self.core:
                self._check_file(str(self.root / name), "root")

    def _setup(self) -> None:
        mounts = _mounts()
        self._ino = _Inotify()
        self._watch_all()
        for top in [str(self.root), *self.trees, *self.sessions]:
            if os.path.exists(top):
                fstype = _fs_type(top, mounts)
                if fstype not in LOCAL_FS:
                    self._untrusted[top] = f"a folder on a {fstype or 'unknown'} file system"
        # The probe: its own mask (attribute changes only) on .memory, whose database writes
        # would otherwise flood the descriptor.
        probe = self.memory_dir / self.probe_name
        if not self.serve:
            _remove_dead_probes(self.memory_dir)
        os.close(safe_open.open_file(probe, os.O_WRONLY | os.O_CREAT))
        self._probe_wd = self._ino.add(str(self.memory_dir), IN_ATTRIB | IN_ONLYDIR)
        if not self.serve:
            return
        sock_path = self.memory_dir / SOCKET_NAME
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()  # left by a killed watcher; we hold the watch lock
        import socket

        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(str(sock_path))
            # Only this user may ask (before listen(): nobody can connect yet). Made with the
            # umask, a group-writable socket (umask 002) let another user of the group hold
            # the journal's one thread or have the watcher's model embed for them.
            os.chmod(sock_path, 0o600)
        except OSError:
            s.close()
            raise
        s.listen(16)
        s.setblocking(False)
        self._sock = s

    def start(self) -> None:
        """Set up the watches and the socket, then serve on a thread. Raises OSError if the
        journal cannot run here (the watcher then works as before, recalls stat the files)."""
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        if not self.serve:
            return
        self._thread = threading.Thread(target=self._serve, name="clawmem-journal", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        if self._sock is not None:
            with contextlib.suppress(OSError):
                (self.memory_dir / SOCKET_NAME).unlink()
            self._sock.close()
            self._sock = None
        if self._ino is not None:
            self._ino.close()
            self._ino = None
        if not self.serve:
            with contextlib.suppress(OSError):
                (self.memory_dir / self.probe_name).unlink()

    def check(self, token: int | None = None) -> tuple[bool, str, int | None]:
        """A process's own question (``serve=False``): read every event queued before this call,
        then ``verdict``. The token is None when the probe did not come back."""
        with self._check_mu:
            if self._ino is None:
                return False, "the journal is closed", None
            try:
                arrived = self._await_probe()
            except Exception as exc:  # noqa: BLE001 - a broken journal must only stop vouching
                # (.memory/ removed with the probe in it, a watch limit reached on an overflow):
                # its owner starts another one.
                self.broken = f"the journal failed ({type(exc).__name__}: {exc})"
                self._untrusted["journal"] = self.broken
                return False, self.broken, None
            if not arrived:
                return False, "its probe event did not arrive", None
            return self.verdict(token)

    def _await_probe(self) -> bool:
        """Touch the probe and read events until its own event comes back: by then every change
        made before the touch has been read (one inotify instance queues events in order)."""
        seen, lost = self._probe_seen, self._overflows
        os.utime(self.memory_dir / self.probe_name)
        deadline = time.monotonic() + _PROBE_TIMEOUT_S
        while self._probe_seen == seen and time.monotonic() < deadline:
            select.select([self._ino.fd], [], [], 0.05)  # type: ignore[union-attr]
            self._drain()
            if self._overflows != lost:  # the probe's event may have been lost with the rest
                lost = self._overflows
                os.utime(self.memory_dir / self.probe_name)
        return self._probe_seen != seen

    # ------------------------------------------------------------------ serving
    def _drain(self) -> None:
        for wd, mask, name in self._ino.read():  # type: ignore[union-attr]
            self._handle(wd, mask, name)

    def _handle(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            # Events were lost: watch any folder made meanwhile, and only a new comparison (which
            # begins after this count) can vouch again.
            self._overflows += 1
            self._watch_all()
            self._event()
            return
        if wd == self._probe_wd:
            if name == self.probe_name:
                self._probe_seen += 1
            return
        where = self._wds.get(wd)
        if where is None:
            return
        folder, kind = where
        if mask & IN_IGNORED:
            self._wds.pop(wd, None)
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
            self._event()
            return
        path = os.path.join(folder, name) if name else folder
        is_dir = bool(mask & IN_ISDIR)
        if kind == "root":
            low = name.lower()
            if is_dir and name in self.tree_names:
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self._watch_tree(path, "tree")
                self._event()
            elif low in self.core or path in self.extra_files:
                self._check_file(path, "root")
                self._event()
            return
        if is_dir:
            if name.startswith("."):
                return
            if mask & (IN_CREATE | IN_MOVED_TO):
                # Watch it before counting the event: a comparison that starts after the count
                # runs with the watch in place, so nothing written in it goes unseen.
                self._watch_tree(path, kind)
            self._event()
            return
        if self._relevant_name(name, kind):
            if mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB):
                self._check_file(path, kind)
            elif mask & (IN_DELETE | IN_MOVED_FROM):
                self._untrusted.pop(path, None)
            self._event()

    def _answer(self, conn: socket.socket) -> None:
        """One question: read the key, let the probe pass through the queue, answer. A request
        for a query's vector is answered on a thread of its own, as the model may be busy."""
        handed_off = False
        try:
            # One second for the whole question, not for each read: a client sending a byte at
            # a time held the journal's one thread (no event drained, no other recall answered)
            # for as long as it liked.
            deadline = time.monotonic() + 1.0
            buf = b""
            while not buf.endswith(b"\n") and len(buf) < 65536:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                conn.settimeout(left)
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            conn.settimeout(1.0)  # for the answer
            if buf.startswith(b"{"):  # a JSON object: a vector request (a scan key is a list)
                if not self._embedding.acquire(blocking=False):
                    # The model is busy with as many queries as it may queue: each waiting
                    # recall would time out anyway, so say so now (it then loads the model).
                    conn.sendall(b'{"why": "the watcher is busy embedding other queries"}\n')
                    return
                try:
                    threading.Thread(
                        target=self._vector_reply, args=(conn, buf), name="clawmem-query-vector"
                    ).start()
                except RuntimeError:  # no thread to be had: the recall loads the model itself
                    self._embedding.release()
                    return
                handed_off = True
                return
            key, _, asked = buf.decode("utf-8", "replace").rstrip("\n").partition("\t")
            token = int(asked) if asked.isdigit() else None
            if key != self.key:
                reply = {"clean": False, "why": "it watches with other settings"}
            else:
                if not self._await_probe():
                    reply = {"clean": False, "why": "its probe event did not arrive"}
                else:
                    clean, why, token = self.verdict(token)
                    reply = {"clean": clean, "why": why, "pid": os.getpid(), "token": token}
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass
        finally:
            if not handed_off:
                conn.close()

    def _vector_reply(self, conn: socket.socket, buf: bytes) -> None:
        """Embed a recall's query with the watcher's model, if it is the model the recall asks
        for (its identity key): the recall then skips loading the model itself."""
        try:
            try:
                request = json.loads(buf)
            except ValueError:
                request = None
            emb = self.embedder() if self.embedder is not None else None
            reply = protocol.vector_reply(request, emb, who="watcher")
            conn.settimeout(1.0)
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except Exception as exc:  # noqa: BLE001 - a failed answer must only make the recall load
            self.log(f"note: a recall's query vector failed in the watcher: {exc}")
        finally:
            self._embedding.release()
            conn.close()

    def _serve(self) -> None:
        assert self._ino is not None and self._sock is not None
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self._ino.fd, self._sock], [], [], 0.5)
                if self._ino.fd in ready:
                    self._drain()
                if self._sock in ready:
                    try:
                        conn, _ = self._sock.accept()
                    except BlockingIOError:
                        continue
                    self._answer(conn)
            except Exception as exc:  # noqa: BLE001 - a broken journal must only stop vouching
                self._untrusted["journal"] = f"the journal failed ({type(exc).__name__}: {exc})"
                self.log(f"warning: the watcher journal stopped: {exc}; recalls stat the files")
                # No socket left to time out on: a recall is refused at once and stats the files.
                if self._sock is not None:
                    with contextlib.suppress(OSError):
                        (self.memory_dir / SOCKET_NAME).unlink()
                    self._sock.close()
                    self._sock = None
                return
