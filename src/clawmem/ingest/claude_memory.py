"""Claude's memory tool (``memory_20250818``), backed by a clawmem workspace.

Anthropic's client-side memory tool lets Claude ``view``, ``create``, ``str_replace``,
``insert``, ``delete`` and ``rename`` files under a ``/memories`` folder that the application
implements. ``MemoryTool`` implements it over ``bank/memories/`` of a workspace, so whatever
Claude keeps there is clawmem memory: indexed at once (recall finds it), reflected, shared
through git. The rules every clawmem write follows hold here too:

* **Confined.** A path is ``/memories`` or below it; ``..``, absolute paths elsewhere, NUL
  bytes, hidden names and links (the file or any folder on the way) are refused, and files are
  opened without following links.
* **Redacted.** Text is redacted before it is written: a credential Claude writes never reaches
  the workspace (``view`` shows what was stored).
* **Indexed at once**, under the workspace's write lock.

Claude may name files ``notes.txt`` or ``prefs.xml``; only ``*.md`` files are memory, so such a
file is stored as ``notes.txt.md`` and shown by its own name. Every command returns the text the
tool result carries; an error is a ``MemoryToolError`` whose message is that text.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from clawmem.errors import ClawmemError, UsageError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.workspace import citable_name
from clawmem.text.redact import redact
from clawmem.text.shown_path import shown_path

ROOT = "/memories"
FOLDER = "bank/memories"  # where /memories lives in the workspace
MAX_FILE_BYTES = 1_000_000
VIEW_LINES = 2_000  # a file longer than this is shown in part; view_range shows the rest


class MemoryToolError(UsageError):
    """A command the tool refuses; its message is what Claude is told."""


@dataclass
class MemoryTool:
    """``memory_20250818`` over ``ix``'s workspace. ``handle`` takes the tool call's input."""

    ix: Indexer
    writer: str = "claude-memory"

    # ------------------------------------------------------------------ dispatch
    def handle(self, call: dict[str, Any]) -> str:
        """Run one tool call (``{"command": "view", "path": "/memories"}``) and return the tool
        result's text; a refused call returns its error text (the tool's convention)."""
        try:
            command = call.get("command")
            if command == "view":
                return self.view(str(call["path"]), call.get("view_range"))
            if command == "create":
                return self.create(str(call["path"]), str(call.get("file_text", "")))
            if command == "str_replace":
                return self.str_replace(
                    str(call["path"]), str(call["old_str"]), str(call.get("new_str", ""))
                )
            if command == "insert":
                return self.insert(
                    str(call["path"]), int(call["insert_line"]), str(call.get("insert_text", ""))
                )
            if command == "delete":
                return self.delete(str(call["path"]))
            if command == "rename":
                return self.rename(str(call["old_path"]), str(call["new_path"]))
            raise MemoryToolError(f"Error: unknown command {command!r}")
        except KeyError as exc:
            return f"Error: missing parameter {exc.args[0]!r} for {call.get('command')!r}"
        except (TypeError, ValueError) as exc:
            return f"Error: bad parameter ({exc})"
        except ClawmemError as exc:
            return exc.message if isinstance(exc, MemoryToolError) else f"Error: {exc.message}"
        except OSError as exc:
            # The disk's refusal (a file where a folder is named, a name too long) is the tool
            # result's text like any other refusal, not an exception out of the tool.
            return f"Error: {call.get('command')}: {exc.strerror or exc}"

    # ------------------------------------------------------------------ paths
    def _where(self, virtual: str, *, root_ok: bool = False) -> tuple[PurePosixPath, Path]:
        """(the virtual path, normalised; the file or folder on disk), or refused."""
        if "\x00" in virtual or not virtual.startswith(ROOT):
            raise MemoryToolError(f"Error: {virtual!r}: paths are under {ROOT}")
        parts = PurePosixPath(virtual).parts
        if parts[:2] != ("/", "memories") or any(p in ("..", ".") for p in parts):
            raise MemoryToolError(f"Error: {virtual!r}: paths are under {ROOT}, without '..'")
        inner = parts[2:]
        if not inner and not root_ok:
            raise MemoryToolError(f"Error: {ROOT} is the folder itself; name a file in it")
        if any(p.startswith(".") for p in inner):
            raise MemoryToolError(f"Error: {virtual!r}: hidden names are not allowed")
        if not citable_name(virtual):  # the index would leave such a file out
            raise MemoryToolError(
                f"Error: {virtual!r}: a name with a line break or control character is not allowed"
            )
        if shown_path(virtual) != virtual:
            # A name is written to the workspace (often committed) and shown in every listing
            # and citation: a credential in it is refused like one in the text would be stored
            # redacted. The message does not repeat the path.
            raise MemoryToolError(
                "Error: the path holds what looks like a credential; name the file after what "
                "it is about"
            )
        disk = self.ix.root / FOLDER
        for i, p in enumerate(inner):
            name = p if i < len(inner) - 1 or p.endswith(".md") else p + ".md"
            disk = disk / name
        self._no_links(disk)
        return PurePosixPath(ROOT, *inner), disk

    def _no_links(self, disk: Path) -> None:
        """Refuse a link anywhere from the workspace down to ``disk``."""
        rel = disk.relative_to(self.ix.root)
        here = self.ix.root
        for part in rel.parts:
            here = here / part
            if here.is_symlink():
                raise MemoryToolError(
                    f"Error: {ROOT}: a symbolic link is on the way ({rel.as_posix()}); refused"
                )

    def _shown(self, disk: Path) -> str:
        rel = disk.relative_to(self.ix.root / FOLDER).as_posix()
        if disk.is_file() and rel.endswith(".md"):
            stem = rel[:-3]
            if PurePosixPath(stem).suffix:  # notes.txt.md is shown as notes.txt
                rel = stem
        return shown_path(f"{ROOT}/{rel}")  # a name a person gave with a credential in it

    def _read(self, disk: Path, virtual: PurePosixPath, *, edit: bool = False) -> str:
        """The file's text. For an edit (``edit``), all of it or a refusal: a file over the cap
        or not UTF-8 (a person may write ``bank/memories/`` too) is never written back from a
        part of it or with its bytes replaced, which would lose what the rest held."""
        try:
            # O_NONBLOCK: a FIFO named like a note must not hang the tool (and its MCP server).
            fd = os.open(disk, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            raise MemoryToolError(f"Error: The path {virtual} does not exist.") from None
        except OSError as exc:
            raise MemoryToolError(f"Error: {virtual}: cannot read ({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise MemoryToolError(f"Error: {virtual}: not a regular file")
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if not edit:
            return data[:MAX_FILE_BYTES].decode("utf-8", "replace")
        if len(data) > MAX_FILE_BYTES:
            raise MemoryToolError(
                f"Error: {virtual} is over {MAX_FILE_BYTES:,} bytes; it is not edited through "
                "the memory tool (create a smaller file instead)"
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MemoryToolError(
                f"Error: {virtual} is not UTF-8 text (byte {exc.start}); it is not edited "
                "through the memory tool"
            ) from None

    def _write(self, disk: Path, text: str, *, new: bool, read: str | None = None) -> None:
        """Write ``text`` (redacted) and index it, under the write lock. ``read``: the file as
        the edit read it; it is replaced only while it is still that, and never while another
        program holds it open for writing (files/rewrite.py: its later lines would be lost)."""
        from clawmem.files.atomic import write_atomic
        from clawmem.files.locking import write_lock
        from clawmem.files.rewrite import Changed, HeldOpen, rewrite_page

        body = redact(text)
        if len(body.encode("utf-8")) > MAX_FILE_BYTES:
            raise MemoryToolError(f"Error: over {MAX_FILE_BYTES:,} bytes; keep memory files small")
        self.ix.prepare_memory_dir()
        with write_lock(self.ix.memory_dir, purpose="claude memory tool"):
            disk.parent.mkdir(parents=True, exist_ok=True)
            self._no_links(disk)
            if new and disk.exists():
                raise MemoryToolError(f"Error: File {self._shown(disk)} already exists")
            if read is None:
                write_atomic(disk, body.encode("utf-8"))
            else:
                try:
                    rewrite_page(disk, read.encode("utf-8"), body.encode("utf-8"))
                except (HeldOpen, Changed):
                    raise MemoryToolError(
                        f"Error: {self._shown(disk)} is being written by another program, or "
                        "changed since it was read; nothing was edited. View it and try again."
                    ) from None
            self.ix.index_locked(embed_limit=self.ix.cfg.lazy_embed_limit)

    # ------------------------------------------------------------------ the commands
    def view(self, path: str, view_range: list[int] | None = None) -> str:
        virtual, disk = self._where(path, root_ok=True)
        if disk.with_suffix("").is_dir() and not disk.exists():
            disk = disk.with_suffix("")
        if not disk.exists() and virtual == PurePosixPath(ROOT):
            disk = self.ix.root / FOLDER
            if not disk.exists():
                return f"Directory: {ROOT}\n(empty)"
        if disk.is_dir():
            lines = [f"Directory: {virtual}"]
            for p in sorted(disk.rglob("*")):
                if p.is_symlink() or any(x.startswith(".") for x in p.relative_to(disk).parts):
                    continue
                size = p.stat().st_size if p.is_file() else 0
                lines.append(f"- {self._shown(p)}" + ("/" if p.is_dir() else f" ({size} bytes)"))
            return "\n".join(lines)
        text = redact(self._read(disk, virtual))
        rows = text.splitlines()
        first, last = 1, min(len(rows), VIEW_LINES)
        if view_range:
            first = max(1, int(view_range[0]))
            last = len(rows) if int(view_range[1]) == -1 else min(len(rows), int(view_range[1]))
        return "\n".join(f"{n:6d}\t{rows[n - 1]}" for n in range(first, last + 1))

    def create(self, path: str, file_text: str) -> str:
        _virtual, disk = self._where(path)
        existed = disk.exists()
        self._write(disk, file_text, new=False)
        return f"File {'overwritten' if existed else 'created'} successfully at {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        virtual, disk = self._where(path)
        text = self._read(disk, virtual, edit=True)
        count = text.count(old_str) if old_str else 0
        if count == 0:
            raise MemoryToolError(
                f"Error: No replacement was performed, old_str did not appear verbatim in {path}."
            )
        if count > 1:
            raise MemoryToolError(
                f"Error: No replacement was performed. Multiple occurrences of old_str in {path}. "
                "Make it unique."
            )
        self._write(disk, text.replace(old_str, new_str, 1), new=False, read=text)
        return f"The memory file {path} has been edited."

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        virtual, disk = self._where(path)
        read = self._read(disk, virtual, edit=True)
        rows = read.splitlines(keepends=True)
        if not 0 <= insert_line <= len(rows):
            raise MemoryToolError(
                f"Error: Invalid `insert_line` parameter: {insert_line}. It should be within "
                f"the range of lines of the file: [0, {len(rows)}]"
            )
        if rows and not rows[-1].endswith("\n"):
            rows[-1] += "\n"
        add = insert_text if insert_text.endswith("\n") else insert_text + "\n"
        rows.insert(insert_line, add)
        self._write(disk, "".join(rows), new=False, read=read)
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        from clawmem.files.locking import write_lock

        virtual, disk = self._where(path)
        if not disk.exists() and disk.with_suffix("").is_dir():
            disk = disk.with_suffix("")
        if not disk.exists():
            raise MemoryToolError(f"Error: The path {virtual} does not exist")
        self.ix.prepare_memory_dir()
        with write_lock(self.ix.memory_dir, purpose="claude memory tool"):
            self._no_links(disk)
            if disk.is_dir():
                import shutil

                shutil.rmtree(disk)
            else:
                disk.unlink()
            self.ix.index_locked(embed_limit=0)
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        from clawmem.files.locking import write_lock

        old_v, old = self._where(old_path)
        _new_v, new = self._where(new_path)
        if not old.exists():
            raise MemoryToolError(f"Error: The path {old_v} does not exist")
        if new.exists():
            raise MemoryToolError(f"Error: The destination {new_path} already exists")
        self.ix.prepare_memory_dir()
        with write_lock(self.ix.memory_dir, purpose="claude memory tool"):
            new.parent.mkdir(parents=True, exist_ok=True)
            self._no_links(old)
            self._no_links(new)
            os.rename(old, new)
            self.ix.index_locked(embed_limit=self.ix.cfg.lazy_embed_limit)
        return f"Successfully renamed {old_path} to {new_path}"
