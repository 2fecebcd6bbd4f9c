"""Finding the workspace and the Markdown files that belong to it.

Only memory files are ever read: ``MEMORY.md`` (or ``memory.md``), ``memory/**/*.md``,
``bank/**/*.md`` and configured extra paths inside the workspace. The walk never follows a
symlink that leaves the workspace, never enters ``.git``, ``node_modules`` or hidden folders, and
bounds file count and size; everything it leaves out is reported by name with the reason.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import NamedTuple

from clawmem.errors import BadArgument, InputError, WorkspaceError
from clawmem.files import safe_open
from clawmem.markdown.lines import text_lines

INDEX_DIR = ".memory"
CORE_FILES = ("MEMORY.md", "memory.md")
TREES = ("memory", "bank")
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
# Transcripts of the configured sessions folders are known by this prefix (sessions.py); it is
# not a workspace folder, so no Markdown path may start with it.
TRANSCRIPT_PREFIX = "sessions/"
# A transcript bigger than this is not read (nor its appends): a bound on one sync's work.
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024
# One page per entity: bank/entities/Peter.md (entity pages are written by reflect, read by all).
ENTITY_DIR = "bank/entities"
# Markers that identify a workspace root when walking up from the current folder. Not
# ``.memory/``: clawmem creates it, so a folder that holds one only (a ``-w notes/memory`` of
# an older version) would capture the discovery of every folder below it.
ROOT_MARKERS = ("clawmem.toml", "MEMORY.md", "memory.md")


class FileEntry(NamedTuple):
    # A tuple, not a dataclass: one is made per file on every recall's stat pass.
    relpath: str  # workspace-relative, POSIX separators: the key everywhere in the index
    size: int
    mtime_ns: int


# files/rewrite.py's second names: the bytes the rewrite read, then 4 random bytes (older
# names: the random bytes alone).
_HELD_TOKEN = re.compile(r"(?:[0-9]+-)?[0-9a-f]{8}")


@dataclass(frozen=True)
class Skipped:
    relpath: str
    reason: str


@dataclass(frozen=True)
class Scan:
    files: tuple[FileEntry, ...]  # Markdown files, and transcripts (sessions/…) when configured
    skipped: tuple[Skipped, ...]

    @property
    def markdown_files(self) -> tuple[FileEntry, ...]:
        """The workspace's own Markdown files (what facts, checks and reflect read)."""
        return tuple(f for f in self.files if not f.relpath.startswith(TRANSCRIPT_PREFIX))


# An entity page's file name must fit every common file system (255 bytes a name) with room for
# the temporary copy written beside it (``.NAME.XXXXXXXX.tmp``, files/atomic.py).
MAX_PAGE_NAME_BYTES = 200


def entity_page_path(entity: str) -> str:
    """The workspace path of ``entity``'s page: ``bank/entities/<entity>.md``. A name too long
    for a file name (an entity may be any length; 300 characters made every reflect fail with
    "File name too long") gets a stable, collision-free one instead: the start of the folded
    name, ``~`` (which no entity name holds, so it is never another entity's own page) and a
    hash of the whole folded name."""
    if len(entity.encode("utf-8")) + 3 <= MAX_PAGE_NAME_BYTES:
        return f"{ENTITY_DIR}/{entity}.md"
    import hashlib

    folded = entity.casefold()
    digest = hashlib.sha256(folded.encode("utf-8")).hexdigest()[:16]
    room = MAX_PAGE_NAME_BYTES - 3 - 1 - len(digest)
    start = folded.encode("utf-8")[:room].decode("utf-8", "ignore")  # whole characters only
    return f"{ENTITY_DIR}/{start}~{digest}.md"


def is_entity_page(path: str) -> bool:
    """Whether the workspace path ``path`` is an entity page (directly in ``bank/entities/``)."""
    return path.startswith(ENTITY_DIR + "/") and path.count("/") == 2 and path.endswith(".md")


_CITATION = re.compile(r"(.+?)#L(\d+)(?:-L?(\d+))?")


def split_citation(
    path: str, from_line: int | None = None, lines: int | None = None
) -> tuple[str, int, int | None]:
    """``path`` as ``get`` reads it: a citation (``memory/2025-11-27.md#L12-L20``) names its
    lines, unless ``from_line`` or ``lines`` are given; a plain path reads from line 1."""
    m = _CITATION.fullmatch(path)
    if m:
        path = m.group(1)
        if from_line is None:
            from_line = int(m.group(2))
        if lines is None and m.group(3):
            lines = int(m.group(3)) - int(m.group(2)) + 1
    return path, 1 if from_line is None else from_line, lines


def find_root(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """``--workspace``, then ``$CLAWMEM_WORKSPACE``, then the nearest parent with a marker."""
    if explicit is None and os.environ.get("CLAWMEM_WORKSPACE"):
        explicit = Path(os.environ["CLAWMEM_WORKSPACE"])
    if explicit is not None:
        root = explicit.expanduser()
        if not root.is_dir():
            raise WorkspaceError(
                f"workspace {root} does not exist or is not a folder",
                hint="pass an existing folder to --workspace or $CLAWMEM_WORKSPACE",
            )
        if not is_workspace(root):
            # Never a .memory/ (an index) in a folder that is not a workspace: `-w /etc`.
            raise WorkspaceError(
                f"{root}: not a clawmem workspace (no MEMORY.md, memory/, bank/ or "
                "clawmem.toml); nothing was created there",
                hint=f"start one with `clawmem init {root}`, or pass the workspace's own folder",
            )
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    found = enclosing_root(here)
    if found is not None:
        return found
    raise WorkspaceError(
        f"no clawmem workspace found in {here} or any parent folder",
        hint="start one here with `clawmem init`, or cd into a workspace (a folder with "
        "MEMORY.md or memory/), or pass --workspace DIR",
    )


def enclosing_root(here: Path) -> Path | None:
    """The nearest folder from ``here`` upward that is a workspace, else None (no
    ``$CLAWMEM_WORKSPACE``: where the user stands)."""
    for candidate in (here, *here.parents):
        if any((candidate / m).exists() for m in ROOT_MARKERS):
            return candidate
        if (candidate / "memory").is_dir() and (
            (candidate / "bank").is_dir()
            or any((candidate / "memory").glob("[12][0-9][0-9][0-9]-*.md"))
        ):
            return candidate  # a daily-log folder is a workspace even before its first index
    return None


def is_workspace(folder: Path) -> bool:
    """Whether ``folder`` is a workspace: it holds a marker file, ``memory/`` or ``bank/``
    (``.memory/`` alone is not one: clawmem creates it)."""
    return any((folder / m).exists() for m in ROOT_MARKERS) or any(
        (folder / t).is_dir() for t in TREES
    )


def is_memory_path(relpath: str, extra_paths: tuple[str, ...] = ()) -> bool:
    """Whether a workspace-relative path is one clawmem indexes (and `get` may read)."""
    p = PurePosixPath(relpath)
    if p.suffix.lower() != ".md" or any(part.startswith(".") for part in p.parts):
        return False
    if any(part in SKIP_DIRS for part in p.parts):
        return False
    if len(p.parts) == 1 and p.name in CORE_FILES:
        return True
    if p.parts[0] in TREES:
        return True
    for extra in extra_paths:
        e = PurePosixPath(extra.strip("/"))
        if p == e or e in p.parents:
            return True
    return False


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except (ValueError, OSError):
        return False
    except RuntimeError:  # a link loop (Python < 3.13): it leads nowhere, so not inside
        return False


def _loops(path: str) -> str | None:
    """Why a link cannot be followed (a loop), or None when it can."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"cannot stat: {exc.strerror} (a symbolic link loop)"
    return None


def scan(
    root: Path, extra_paths: tuple[str, ...] = (), *, max_file_bytes: int, max_files: int
) -> Scan:
    """Stat every memory file. Reads no content: this is the cheap check run before every read."""
    walker = _Walker(root, max_file_bytes, max_files)
    for name in CORE_FILES:
        p = root / name
        if p.is_file() and name in os.listdir(root):  # exact case on case-insensitive disks
            walker.consider(str(p))
            break
    for tree in TREES:
        if (root / tree).is_dir():
            walker.walk(root / tree)
    for extra in extra_paths:
        walker.extra(extra)
    ordered = tuple(sorted(walker.files.values(), key=lambda f: f.relpath))
    return Scan(ordered, tuple(walker.skipped))


class _Walker:
    """One scan's state: the files found and what was left out, with reasons.

    Strings and os.scandir rather than Path objects and os.walk: this runs before every recall,
    over every file (18k files: ~0.9 s before, now the stat calls themselves dominate)."""

    def __init__(self, root: Path, max_file_bytes: int, max_files: int) -> None:
        self.root = root
        self.cut = len(str(root)) + 1
        self.max_file_bytes, self.max_files = max_file_bytes, max_files
        self.files: dict[str, FileEntry] = {}
        self.skipped: list[Skipped] = []

    def consider(self, path: str, is_link: bool | None = None) -> None:
        """One file, checked for everything that leaves it out."""
        rel = path[self.cut :].replace(os.sep, "/")
        if rel in self.files:
            return
        if not citable_name(rel):
            shown = rel.encode("unicode_escape").decode("ascii")
            self.skipped.append(Skipped(shown, "a name with a line break or control character"))
            return
        if is_link is None:
            is_link = os.path.islink(path)
        if is_link and not _inside(self.root, Path(path)):
            # A link that loops (a clone's `memory/x.md -> x.md`) is said as what it is: stat
            # names the loop.
            loops = _loops(path)
            self.skipped.append(Skipped(rel, loops or "symlink leaves the workspace"))
            return
        try:
            st = os.stat(path)
        except OSError as exc:
            self.skipped.append(Skipped(rel, f"cannot stat: {exc.strerror}"))
            return
        if not S_ISREG(st.st_mode):
            # A FIFO or a device named *.md: reading it blocked every index and recall for ever.
            self.skipped.append(Skipped(rel, "cannot read: not a regular file"))
            return
        if st.st_size > self.max_file_bytes:
            self.skipped.append(
                Skipped(rel, f"{st.st_size:,} bytes is over max_file_bytes={self.max_file_bytes:,}")
            )
            return
        if len(self.files) >= self.max_files:
            self.skipped.append(Skipped(rel, f"over max_files={self.max_files}"))
            return
        self.files[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns)

    def walk(self, top: Path) -> None:
        if top.is_symlink() and not _inside(self.root, top):
            rel = top.relative_to(self.root).as_posix()
            self.skipped.append(Skipped(rel, "symlink leaves the workspace"))
            return
        self.walk_dir(str(top))

    def walk_dir(self, path: str) -> None:
        """One folder, then its subfolders in name order (os.walk's top-down order).

        Names from os.listdir and one lstat each, the common case inline (a plain Markdown
        file seen once): this loop is most of a recall's freshness check when no watcher
        vouches (18k files: ~50% more CPU with DirEntry objects and a call per file)."""
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return  # unreadable folder: as os.walk, nothing to index in it
        base = path + os.sep
        prefix = path[self.cut :].replace(os.sep, "/") + "/"
        files, lstat, limit, biggest = self.files, os.lstat, self.max_files, self.max_file_bytes
        subdirs: list[str] = []
        for name in names:
            full = base + name
            try:
                st = lstat(full)
            except OSError:
                if not name.startswith(".") and name.lower().endswith(".md"):
                    self.consider(full, False)  # vanished or unreadable: reported by consider
                continue
            mode = st.st_mode
            if S_ISDIR(mode):
                subdirs.append(name)
                continue
            if name.startswith(".") or not name.lower().endswith(".md"):
                if S_ISLNK(mode) and os.path.isdir(full):
                    subdirs.append(name)  # os.walk lists a link to a folder as a folder
                elif name.endswith(".held") and S_ISREG(mode):
                    self.held_copy(base, prefix, name, st)
                continue
            rel = prefix + name
            if S_ISLNK(mode):
                if os.path.isdir(full):
                    subdirs.append(name)
                else:
                    self.consider(full, True)
            elif (
                rel in files
                or len(files) >= limit
                or st.st_size > biggest
                or not S_ISREG(mode)
                or not citable_name(rel)
            ):
                self.consider(full, False)
            else:
                files[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns)
        for name in subdirs:
            self.descend(base, prefix, name)

    def held_copy(self, base: str, prefix: str, name: str, st: os.stat_result) -> None:
        """A page's second name during a rewrite (files/rewrite.py's ``.NAME.SIZE-XXXXXXXX.held``)
        that a run left: the page itself (killed before its rename: the page's next rewrite
        removes it) says nothing; the page as it was (killed or stopped after its rename, or
        a full disk where the page could not be put back) may hold the only copy of lines
        another program appended while it was rewritten, and is reported until it is gone."""
        page, dot, tail = name[1:].rpartition(".")[0].rpartition(".")
        if not (page and dot and _HELD_TOKEN.fullmatch(tail)) or not citable_name(prefix + name):
            return  # (a name with a line break: its page is reported for that)
        try:
            now = os.lstat(base + page)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                return
        except OSError:
            pass
        self.skipped.append(
            Skipped(
                prefix + name,
                f"the page {page} as it was before a rewrite that did not finish: lines another "
                "program appended to it meanwhile may be only here; copy what the page lacks "
                "into it, then remove this file",
            )
        )

    def descend(self, base: str, prefix: str, name: str) -> None:
        """A subfolder: walked, unless hidden, a tool's folder or a link."""
        if name.startswith(".") or name in SKIP_DIRS:
            return  # hidden and tool folders are never memory; not worth a report line
        full = base + name
        if not os.path.islink(full):
            self.walk_dir(full)
        elif _inside(self.root, Path(full)):
            # os.walk does not follow links; the target is walked where it lives.
            self.skipped.append(
                Skipped(
                    prefix + name,
                    "symlinked folder not followed (its target is indexed "
                    "only where it lives, if that is a memory folder)",
                )
            )
        else:
            self.skipped.append(Skipped(prefix + name, "symlink leaves the workspace"))

    def extra(self, extra: str) -> None:
        """One of ``extra_paths``: a folder walked, or a Markdown file."""
        target = (self.root / extra).absolute()
        if (PurePosixPath(extra.strip("/")).as_posix() + "/").startswith(TRANSCRIPT_PREFIX):
            self.skipped.append(Skipped(extra, "the sessions/ prefix is reserved for transcripts"))
        elif not _inside(self.root, target):
            self.skipped.append(Skipped(extra, "extra path is outside the workspace"))
        elif target.is_dir():
            self.walk(target)
        elif target.is_file() and target.suffix.lower() == ".md":
            self.consider(str(target))
        else:
            self.skipped.append(Skipped(extra, "extra path not found"))


def writable_path(root: Path, relpath: str) -> Path:
    """Where clawmem may write (and read before writing) the workspace file ``relpath``, or
    ``WorkspaceError``: the one rule for every file clawmem writes in the workspace (retain's
    daily log, reflect's pages, MEMORY.md).

    It follows the scan: a top-level folder (``memory/``, ``bank/``) may be a link that stays
    inside the workspace, which the scan walks through; any other link on the way is one the
    scan does not follow, or leaves the workspace. The file itself is never a link: writing
    through one would put workspace text elsewhere, and the rename would replace the link."""
    parts = PurePosixPath(relpath).parts
    where = root
    for depth, part in enumerate(parts):
        where = where / part
        if not where.is_symlink():
            continue
        last = depth == len(parts) - 1
        if not last and depth == 0 and _inside(root, where):
            continue
        shown = "/".join(parts[: depth + 1])
        why = "leaves the workspace" if not _inside(root, where) else "is not followed"
        raise WorkspaceError(
            f"{relpath}: {shown} is a symbolic link that {why}; clawmem reads and writes memory "
            "files only inside the workspace",
            hint=f"replace the link {shown} with the {'file' if last else 'folder'} itself",
        )
    if not _inside(root, where.parent):
        raise WorkspaceError(
            f"{relpath}: outside the workspace {root}",
            hint="clawmem writes memory files only inside its workspace",
        )
    try:
        st = os.lstat(where)
    except OSError:
        st = None  # not there yet (or unreadable: the write itself says why)
    if st is not None and not (S_ISREG(st.st_mode) or S_ISDIR(st.st_mode)):
        # A FIFO named memory/2025-12-09.md: reading it before the write blocked for ever.
        raise WorkspaceError(
            f"{relpath}: not a regular file; clawmem writes memory only to regular files",
            hint=f"move {relpath} away (it is not a note) and run the command again",
        )
    # A folder's link count is its subfolders' (and "."): only a file's names are links.
    names = 1
    if st is not None and S_ISREG(st.st_mode) and st.st_nlink > 1:
        names = st.st_nlink - _own_temps(where, st.st_ino)
    if names > 1:
        # A hard link: the same file under another name, which may be anywhere on the disk (a
        # `cp -al` backup, a file linked in from elsewhere). Retain appends in place, so the
        # other name would change too; a rename would quietly split the two.
        raise WorkspaceError(
            f"{relpath}: is a hard link (the file has {names} names); clawmem writes memory "
            "files only inside the workspace, never through a link",
            hint=f"give {relpath} a file of its own: cp {relpath} {relpath}.own && "
            f"mv {relpath}.own {relpath}",
        )
    return where


def _own_temps(path: Path, ino: int) -> int:
    """How many of the names of ``path``'s file (inode ``ino``) are a killed write's temporary
    copy beside it (files/cas.py creates a file by linking its copy into place; the next write
    removes the copy) or a killed rewrite's second name for the page (files/rewrite.py's
    ``.NAME.XXXXXXXX.held``, which the next rewrite removes): those names are ours, not a link."""
    import glob

    from clawmem.files.rewrite import HELD_SUFFIX

    n = 0
    for suffix in (".tmp", HELD_SUFFIX):
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*{suffix}"):
            try:
                n += os.lstat(tmp).st_ino == ino
            except OSError:
                pass
    return n


def folder_identity(folder: Path) -> tuple[int, int] | None:
    """(device, inode) of ``folder``, or None when it is not there: what a long-running process
    (``clawmem watch``, ``clawmem mcp --http``) compares to know that its workspace is still the
    folder it started in (``folder_gone``)."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def folder_gone(folder: Path, identity: tuple[int, int] | None) -> str | None:
    """How ``folder`` is no longer the one whose ``folder_identity`` was ``identity``, if it is
    not: "was removed" or "was replaced by another folder". A process whose workspace went has
    nothing left to serve, and a write of its (write_atomic makes its folders) would bring the
    folder back, empty."""
    now = folder_identity(folder)
    if now == identity:
        return None
    return "was removed" if now is None else "was replaced by another folder"


def citable_name(relpath: str) -> bool:
    """Whether a file's workspace path may be read and cited: no line break or other control
    or format character. Pages clawmem writes cite it (``(bank/x.md#L2)``): a name holding
    "\n## Retain\n- W @X: …" would write a fact nobody stated into them. The scan leaves any
    other out, and nothing clawmem writes (the memory tool's files) is given one."""
    return relpath.isprintable()


def resolve_member(
    root: Path, user_path: str, extra_paths: tuple[str, ...] = (), *, max_bytes: int
) -> str:
    """Map a path given by a user (relative or absolute) to a workspace memory file, or refuse.
    A file over ``max_bytes`` (the workspace's ``max_file_bytes``) is refused as the scan leaves
    it out: ``get`` of a 3 GB file full of NUL bytes, which no index holds, read it whole (18 GB
    of memory and four minutes; an MCP server's memory for a read-only token's memory_get)."""
    raw = Path(user_path)
    candidate = raw if raw.is_absolute() else root / raw
    try:
        resolved = candidate.resolve()
    except (RuntimeError, OSError, ValueError) as exc:  # a symlink loop, a NUL byte, a surrogate
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in user_path)  # one line
        raise WorkspaceError(
            f"{shown}: cannot be resolved ({exc})", hint="fix or remove the symbolic link"
        ) from None
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        raise WorkspaceError(
            f"{user_path}: outside the workspace {root}",
            hint="clawmem only reads memory files inside its workspace",
        ) from None
    relpath = rel.as_posix()
    if not is_memory_path(relpath, extra_paths):
        raise WorkspaceError(
            f"{user_path}: not a memory file",
            hint="memory files are MEMORY.md, memory/**/*.md, bank/**/*.md and configured extra_paths",
        )
    try:
        st = resolved.stat()
    except OSError:
        raise WorkspaceError(
            f"{relpath}: no such file in the workspace", hint="see `clawmem status`"
        ) from None
    if not S_ISREG(st.st_mode):
        raise not_a_plain_file(relpath, st.st_mode)
    if st.st_size > max_bytes:
        raise InputError(
            f"{relpath}: {st.st_size:,} bytes is over max_file_bytes={max_bytes:,}; "
            "the index leaves it out and clawmem does not read it",
            hint="split the file, or raise max_file_bytes in clawmem.toml",
        )
    return relpath


def not_a_plain_file(relpath: str, mode: int) -> WorkspaceError:
    """The error for a memory path that is there but holds no text: a FIFO (reading it would
    wait for a writer for ever), a socket, a device or a folder named like a note."""
    rm = f"rm -r {relpath}" if S_ISDIR(mode) else f"rm {relpath}"
    return WorkspaceError(
        f"{relpath}: is {kind_of(mode)}, not a file of notes; clawmem reads only regular files",
        hint=f"remove or rename it ({rm}), or put a regular file there",
    )


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    import stat

    if S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_plain(path: Path, relpath: str) -> bytes:
    """The bytes of a regular file, opened without blocking: a FIFO put there after the check
    (or a link swapped for one) is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise WorkspaceError(
            f"{relpath}: no such file in the workspace", hint="see `clawmem status`"
        ) from None
    except OSError as exc:
        raise WorkspaceError(
            f"{relpath}: cannot be read ({exc.strerror or exc})", hint="check its permissions"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not S_ISREG(mode):
            raise not_a_plain_file(relpath, mode)
        return safe_open.read_all(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Lines:
    """Lines of a memory file, as ``clawmem get`` reads them."""

    path: str  # the workspace path (``team:path`` for a read scope's file)
    from_line: int  # the first line, 1-based (JSON ``from``)
    to_line: int  # the last line, inclusive (JSON ``to``)
    total_lines: int  # how many lines the file has
    citation: str  # path#Lfrom-Lto
    text: str  # the lines, redacted, joined by newlines

    def to_dict(self) -> dict:
        """``clawmem get --json``'s form of them (a credential in the file's name redacted)."""
        from clawmem.text.records import as_json
        from clawmem.text.shown_path import shown_path

        shown = {"path": shown_path(self.path), "citation": shown_path(self.citation)}
        return as_json(self, keys={"from_line": "from", "to_line": "to"}, **shown)


def read_lines(
    root: Path,
    path: str,
    *,
    from_line: int = 1,
    lines: int | None = None,
    extra_paths: tuple[str, ...] = (),
    max_bytes: int,
) -> Lines:
    """Lines ``from_line`` .. ``from_line + lines - 1`` of a memory file, with their citation.
    ``max_bytes``: the workspace's ``max_file_bytes`` (``resolve_member``)."""
    if from_line < 1:
        raise BadArgument("from_line", from_line, "lines are numbered from 1")
    if lines is not None and lines < 1:
        raise BadArgument("lines", lines, "must be at least 1")
    rel = resolve_member(root, path, extra_paths, max_bytes=max_bytes)
    try:
        text = read_plain(root / rel, rel).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{rel}: invalid UTF-8 at byte {exc.start}", hint="re-save the file as UTF-8"
        ) from None
    all_lines = text_lines(text)  # the lines the index cites (markdown/lines.py)
    if from_line > max(len(all_lines), 1):
        raise BadArgument("from_line", from_line, f"{rel} has {len(all_lines)} lines")
    end = len(all_lines) if lines is None else min(len(all_lines), from_line + lines - 1)
    return Lines(
        path=rel,
        from_line=from_line,
        to_line=end,
        total_lines=len(all_lines),
        citation=f"{rel}#L{from_line}-L{end}",
        # The file is the user's; what clawmem hands on (often to an agent) is redacted.
        text="\n".join(_redacted_lines(text, all_lines)[from_line - 1 : end]),
    )


def _redacted_lines(text: str, lines: list[str]) -> list[str]:
    """The file's lines, redacted as a whole: a secret that spans lines (a key block, a list of
    recovery codes) is recognised even when only some of its lines are asked for."""
    from clawmem.text.redact import redact  # lazily: scanning never needs it

    out = text_lines(redact(text))
    # Redaction keeps every line break (\r\n, \r, \n, and U+2028, \x85, \f too), so the lines
    # match. Were they ever not to, the redacted text is still what is shown, never a line
    # redacted on its own: a key block split at a U+2028 is no key block to a line's rules.
    return (out + [""] * len(lines))[: len(lines)]
