"""Session transcripts as a source of memory: the configured folders, their files, and reading a
transcript incrementally into the index.

Transcript folders are opted into explicitly (``[sessions] paths`` in clawmem.toml): they are the
only places outside the workspace clawmem reads, and only their ``*.jsonl`` files, besides the
single transcripts that an agent's hook named to ``clawmem flush`` (registry.py). A transcript
is known in the index, in citations and to ``clawmem get`` as ``sessions/<path in its folder>``
(``sessions/4f1c….jsonl#L120-L124``); it is never written to.

Transcripts are append-only, so a sync reads only the bytes after the last complete line it
indexed. The index remembers that offset with a hash of the first and last few kilobytes before
it; a file that shrank, or whose remembered prefix no longer hashes the same, is read again
whole. Each user or assistant message is one unit citing its own line (a long one is cut into
pieces that all cite it), dated by when it was said.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from clawmem.config import Config
from clawmem.errors import BadArgument, WorkspaceError
from clawmem.markdown import forgotten
from clawmem.markdown.forgotten import Forgotten
from clawmem.markdown.workspace import (
    MAX_TRANSCRIPT_BYTES,
    TRANSCRIPT_PREFIX,
    FileEntry,
    Scan,
    Skipped,
    kind_of,
    read_plain,
)
from clawmem.store.index import Index, TranscriptState, Unit, make_unit
from clawmem.transcripts import formats as transcripts
from clawmem.transcripts import registry
from clawmem.transcripts.formats import Message

SUFFIX = ".jsonl"
# The prefix hash covers this many bytes at each end of the indexed part (cheap for 50 MB files).
SAMPLE_BYTES = 4096
ROLE_LABEL = {"user": "User", "assistant": "Assistant"}


def is_transcript_path(relpath: str) -> bool:
    return relpath.startswith(TRANSCRIPT_PREFIX)


def folders(root: Path, cfg: Config) -> list[Path]:
    """The configured transcript folders, absolute (relative ones are relative to the workspace)."""
    out = []
    for raw in cfg.session_paths:
        p = Path(raw).expanduser()
        out.append(p if p.is_absolute() else root / p)
    return out


def scan(root: Path, cfg: Config) -> tuple[list[FileEntry], list[Skipped]]:
    """Stat every transcript of the configured folders, and those a hook named (registry.py)
    that no configured folder holds (no content is read)."""
    files: dict[str, FileEntry] = {}
    skipped: list[Skipped] = []
    seen: set[tuple[int, int]] = set()  # (device, inode) of each configured transcript
    for raw, folder in zip(cfg.session_paths, folders(root, cfg), strict=True):
        if not folder.is_dir():
            skipped.append(Skipped(raw, "sessions folder not found"))
            continue
        # os.walk does not enter linked folders; hidden ones are pruned here (_refusal's rule).
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            base = Path(dirpath)
            for name in sorted(filenames):
                if name.startswith(".") or not name.endswith(SUFFIX):
                    continue
                path = base / name
                inner = PurePosixPath(path.relative_to(folder).as_posix())
                rel = TRANSCRIPT_PREFIX + inner.as_posix()
                if not rel.isprintable():
                    # Its name is cited in pages clawmem writes: "a\n## Retain\n- W @X: …" there
                    # would be a fact nobody stated.
                    shown = rel.encode("unicode_escape").decode("ascii")
                    skipped.append(Skipped(shown, "a name with a line break or control character"))
                    continue
                if rel in files:
                    skipped.append(Skipped(rel, f"same name in an earlier sessions folder ({raw})"))
                    continue
                why, st = _refusal(folder, inner)
                if why is not None:
                    skipped.append(Skipped(rel, why))
                    continue
                assert st is not None
                files[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns)
                seen.add((st.st_dev, st.st_ino))
    registry.scan(root, files, skipped, seen)
    return list(files.values()), skipped


def _refusal(folder: Path, inner: PurePosixPath) -> tuple[str | None, os.stat_result | None]:
    """Why the transcript ``inner`` of a sessions folder is not read, else (None, its stat): the
    one rule the scan and ``get`` share, so that nothing the index leaves out can be read back
    (a hidden folder, a link, a file over the cap)."""
    if any(part.startswith(".") for part in inner.parts):
        return "hidden files and folders are not read in a sessions folder", None
    where = folder
    for part in inner.parts:
        where = where / part
        if where.is_symlink():
            return "symlink not followed in a sessions folder", None
    try:
        st = where.stat()
    except OSError as exc:
        return f"cannot stat: {exc.strerror}", None
    if not stat.S_ISREG(st.st_mode):  # a FIFO named *.jsonl: reading it would block for ever
        return "cannot read: not a regular file", None
    if st.st_size > MAX_TRANSCRIPT_BYTES:
        return f"{st.st_size:,} bytes is over the transcript cap", None
    return None, st


def locate(root: Path, cfg: Config, relpath: str) -> Path | None:
    """The transcript file behind ``sessions/…``: the first configured folder holding it, if the
    scan would read it, else the file a hook named under that name (registry.py)."""
    return find(root, cfg, relpath)[0]


def find(root: Path, cfg: Config, relpath: str) -> tuple[Path | None, str]:
    """``locate``, with why not when there is no transcript to read."""
    found, why = _in_folders(root, cfg, relpath)
    if found is None and is_transcript_path(relpath):
        p = registry.load(root).get(relpath)
        if p is not None and p.is_file() and not p.is_symlink():
            return p, ""
    return found, why


def _in_folders(root: Path, cfg: Config, relpath: str) -> tuple[Path | None, str]:
    if not is_transcript_path(relpath):
        return None, "not a transcript path"
    inner = PurePosixPath(relpath[len(TRANSCRIPT_PREFIX) :])
    if inner.is_absolute() or ".." in inner.parts or inner.suffix != SUFFIX:
        return None, "not a transcript in a sessions folder"
    refused = ""
    for folder in folders(root, cfg):
        p = folder / inner
        if p.is_file() or p.is_symlink():
            why, _ = _refusal(folder, inner)
            if why is None:
                return p, ""
            refused = refused or why  # as the scan: a later folder's file of that name is read
        elif p.exists():  # a FIFO, a folder: there, but nothing to read (and a FIFO would block)
            refused = refused or (
                f"is {kind_of(p.stat().st_mode)}, not a transcript; clawmem reads only regular "
                f"files (remove or rename {p})"
            )
    return None, refused or "no such transcript in the configured sessions folders"


def name_of(root: Path, cfg: Config, path: Path, fmt: str | None) -> tuple[str, bool]:
    """(the ``sessions/…`` name of the transcript at ``path``, whether it needs registering):
    its configured folder's name for it when a configured folder holds it as a scan finds it,
    else its name in the registry (registry.name_for)."""
    for folder in folders(root, cfg):
        for base, file in ((folder, path), (Path(os.path.realpath(folder)), _real(path))):
            try:
                inner = file.relative_to(base)
            except ValueError:
                continue
            if any(part.startswith(".") for part in inner.parts):
                continue  # a scan does not enter hidden folders
            rel = TRANSCRIPT_PREFIX + inner.as_posix()
            held = _in_folders(root, cfg, rel)[0]
            if held is not None and _same(held, path):
                return rel, False
    return registry.name_for(root, path, fmt, lambda rel: _in_folders(root, cfg, rel)[0]), True


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.parent)) / path.name


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


# ---------------------------------------------------------------------------- reading into units


def prefix_hash(path: Path, offset: int) -> str:
    """A hash of the first and last ``SAMPLE_BYTES`` of the first ``offset`` bytes (and of the
    offset itself): enough to notice a transcript that was replaced or rewritten, without reading
    a large one whole on every append."""
    h = hashlib.sha256(str(offset).encode())
    with open(path, "rb") as f:
        head = f.read(min(offset, SAMPLE_BYTES))
        h.update(head)
        if offset > SAMPLE_BYTES:
            f.seek(max(SAMPLE_BYTES, offset - SAMPLE_BYTES))
            h.update(f.read(offset - max(SAMPLE_BYTES, offset - SAMPLE_BYTES)))
    return h.hexdigest()


def units_of(messages: tuple[Message, ...] | list[Message], max_chars: int) -> list[Unit]:
    """One unit per message ("User: …"), dated by when it was said; a message longer than
    ``max_chars`` is cut at line (else character) boundaries into pieces that each cite its line."""
    out = []
    for m in messages:
        day = m.at[:10] if m.at else None
        for piece in _pieces(f"{ROLE_LABEL[m.role]}: {m.text}", max_chars):
            out.append(make_unit(m.line, m.line, "", piece, day, said_at=m.at))
    return out


def _pieces(text: str, max_chars: int) -> list[str]:
    if len(text) <= max_chars:
        return [text]
    pieces, cur = [], ""
    for line in text.split("\n"):
        while len(line) > max_chars:
            if cur:
                pieces.append(cur)
                cur = ""
            pieces.append(line[:max_chars])
            line = line[max_chars:]
        if cur and len(cur) + 1 + len(line) > max_chars:
            pieces.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur.strip():
        pieces.append(cur)
    return [p for p in pieces if p.strip()]


def _problems(bad_lines: tuple[int, ...]) -> list[dict]:
    return [
        {
            "line": n,
            "text": "",
            "message": "not a JSON line; skipped (a transcript is read as JSON Lines)",
        }
        for n in bad_lines
    ]


@dataclass(frozen=True)
class TranscriptSync:
    """What syncing one transcript did."""

    mode: str  # "appended" | "rewritten" | "unchanged"
    units: int  # units written
    reused: int  # of which vectors came from the cache
    bytes_read: int


# A transcript's first ``entry.size`` bytes, parsed, when the caller has read them already
# (``clawmem flush`` reads the whole file for the episode page): no second read nor parse.
Read = tuple[bytes, transcripts.Parsed]


def sync_transcript(
    index: Index,
    root: Path,
    cfg: Config,
    entry: FileEntry,
    *,
    embedder_key: str | None,
    read: Read | None = None,
) -> TranscriptSync | Skipped:
    """Bring one transcript's rows up to date: read only what was appended when its indexed
    prefix is unchanged, else all of it. Never raises for bad content: it reports."""
    path = locate(root, cfg, entry.relpath)
    if path is None:
        return Skipped(entry.relpath, "deleted while indexing")
    known = index.transcript_state(entry.relpath)
    gone = forgotten.load(root)
    try:
        if known is not None:
            state, lines, sha, problems_json = known
            if entry.size >= state.offset and prefix_hash(path, state.offset) == sha:
                return _append(
                    index, path, cfg, entry, state, lines, problems_json, embedder_key, read, gone
                )
        return _rewrite(index, path, cfg, entry, embedder_key, read, gone)
    except FileNotFoundError:
        return Skipped(entry.relpath, "deleted while indexing")
    except OSError as exc:
        return Skipped(entry.relpath, f"cannot read: {exc.strerror}")


def _read_from(path: Path, offset: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read()


def _unknown_format(entry: FileEntry, parsed: transcripts.Parsed) -> Skipped | None:
    if parsed.format is None and parsed.lines:
        return Skipped(
            entry.relpath,
            "not a transcript format clawmem reads (OpenClaw or Claude Code session JSONL)",
        )
    return None


def _rewrite(
    index: Index,
    path: Path,
    cfg: Config,
    entry: FileEntry,
    embedder_key: str | None,
    read: Read | None = None,
    gone: Forgotten | None = None,
) -> TranscriptSync | Skipped:
    if read is not None:
        data, parsed = read
        if gone:
            parsed = replace(
                parsed, messages=tuple(m for m in parsed.messages if not gone.holds(m.text))
            )
    else:
        data = _read_from(path, 0)
        parsed = transcripts.parse(data, forgotten=gone)
    unknown = _unknown_format(entry, parsed)
    if unknown is not None:
        return unknown
    units = units_of(parsed.messages, cfg.chunk_chars)
    ats = [m.at for m in parsed.messages if m.at]
    state = TranscriptState(
        offset=parsed.consumed,
        format=parsed.format,
        session_id=parsed.session_id or _name_id(entry.relpath),
        first_at=min(ats) if ats else None,
        last_at=max(ats) if ats else None,
    )
    reused = index.replace_file(
        entry.relpath,
        sha256=prefix_hash(path, parsed.consumed),
        size=entry.size,
        mtime_ns=entry.mtime_ns,
        day=state.first_at[:10] if state.first_at else None,
        lines=parsed.lines,
        units=units,
        problems=_problems(parsed.bad_lines),
        embedder_key=embedder_key,
        transcript=state,
    )
    return TranscriptSync("rewritten", len(units), reused, len(data))


def _append(
    index: Index,
    path: Path,
    cfg: Config,
    entry: FileEntry,
    state: TranscriptState,
    lines: int,
    problems_json: str,
    embedder_key: str | None,
    read: Read | None = None,
    gone: Forgotten | None = None,
) -> TranscriptSync | Skipped:
    import json

    data = read[0][state.offset :] if read is not None else _read_from(path, state.offset)
    parsed = transcripts.parse(
        data,
        first_line=lines + 1,
        fmt=state.format,
        session_id=state.session_id,
        forgotten=gone,
    )
    if state.format is None:
        unknown = _unknown_format(entry, parsed)
        if unknown is not None:
            return unknown
    units = units_of(parsed.messages, cfg.chunk_chars)
    ats = [a for a in [state.first_at, state.last_at, *(m.at for m in parsed.messages)] if a]
    offset = state.offset + parsed.consumed
    new_state = TranscriptState(
        offset=offset,
        format=parsed.format,
        # A file named after its session until a line states the id.
        session_id=parsed.session_id or state.session_id,
        first_at=min(ats) if ats else None,
        last_at=max(ats) if ats else None,
    )
    reused = index.append_units(
        entry.relpath,
        units,
        sha256=prefix_hash(path, offset),
        size=entry.size,
        mtime_ns=entry.mtime_ns,
        lines=lines + parsed.lines,
        problems=[*json.loads(problems_json), *_problems(parsed.bad_lines)],
        transcript=new_state,
        embedder_key=embedder_key,
    )
    return TranscriptSync("appended" if units else "unchanged", len(units), reused, len(data))


def _name_id(relpath: str) -> str:
    return PurePosixPath(relpath).stem


def backlog(index: Index, root: Path, cfg: Config, scan: Scan, cap: int) -> tuple[int, int]:
    """(bytes, lines) appended to the scanned transcripts since they were indexed: what a
    watcher weighs against its batch thresholds. Reads at most ``cap`` bytes per file (enough to
    decide)."""
    size = lines = 0
    for entry in scan.files:
        if not is_transcript_path(entry.relpath):
            continue
        known = index.transcript_state(entry.relpath)
        offset = known[0].offset if known is not None else 0
        if entry.size <= offset:
            continue
        size += entry.size - offset
        path = locate(root, cfg, entry.relpath)
        if path is not None:
            with open(path, "rb") as f:
                f.seek(offset)
                lines += f.read(cap).count(b"\n")
    return size, lines


# ---------------------------------------------------------------------------- get


@dataclass(frozen=True, slots=True)
class TranscriptLines:
    """Lines of a transcript, as ``clawmem get`` reads them: what was said in them."""

    path: str  # sessions/…
    from_line: int  # the first line, 1-based (JSON ``from``)
    to_line: int  # the last line, inclusive (JSON ``to``)
    total_lines: int  # how many lines the transcript has
    citation: str  # path#Lfrom-Lto
    session_id: str
    format: str | None  # "openclaw", "claude-code"
    messages: tuple[Message, ...]  # what was said on those lines, redacted
    text: str  # the messages as "User: …" and "Assistant: …" paragraphs

    def to_dict(self) -> dict:
        """``clawmem get --json``'s form of them (a credential in the file's name redacted)."""
        from clawmem.text.records import as_json
        from clawmem.text.shown_path import shown_path

        return as_json(
            self,
            keys={"from_line": "from", "to_line": "to"},
            path=shown_path(self.path),
            citation=shown_path(self.citation),
            messages=[
                {"line": m.line, "role": m.role, "at": m.at, "text": m.text} for m in self.messages
            ],
        )


def read_messages(
    root: Path, cfg: Config, relpath: str, *, from_line: int = 1, lines: int | None = None
) -> TranscriptLines:
    """Lines ``from_line`` .. ``from_line + lines - 1`` of a transcript as what was said in them
    (redacted, like the index; tool calls and other lines shown as nothing), with the citation."""
    if from_line < 1:
        raise BadArgument("from_line", from_line, "lines are numbered from 1")
    if lines is not None and lines < 1:
        raise BadArgument("lines", lines, "must be at least 1")
    path, why = find(root, cfg, relpath)
    if path is None:
        raise WorkspaceError(
            f"{relpath}: {why}",
            hint="see [sessions] paths in clawmem.toml and `clawmem status`",
        )
    data = read_plain(path, relpath)  # never waits on a FIFO put there since
    parsed = transcripts.parse(data, forgotten=forgotten.load(root))
    total = parsed.lines
    if from_line > max(total, 1):
        raise BadArgument("from_line", from_line, f"{relpath} has {total} lines")
    end = total if lines is None else min(total, from_line + lines - 1)
    said = [m for m in parsed.messages if from_line <= m.line <= end]
    return TranscriptLines(
        path=relpath,
        from_line=from_line,
        to_line=end,
        total_lines=total,
        citation=f"{relpath}#L{from_line}-L{end}",
        session_id=parsed.session_id or _name_id(relpath),
        format=parsed.format,
        messages=tuple(said),
        text="\n\n".join(f"{ROLE_LABEL[m.role]}: {m.text}" for m in said),
    )
