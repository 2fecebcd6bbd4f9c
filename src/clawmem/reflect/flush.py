"""``clawmem flush``: write a conversation into Markdown now, before the agent's context is trimmed.

An agent about to compact its context (Claude Code's ``PreCompact``, OpenClaw's
``session:compact:before``) or ending a session (``SessionEnd``, ``/new``) runs a hook; the hook
hands clawmem the transcript's path on stdin, and ``flush``:

1. reads that one file (a regular ``*.jsonl`` file, never through a symlink), whichever folder it
   is in, configured in ``clawmem.toml`` or not;
2. writes or updates the conversation's episode page (``memory/episodes/…``, the page reflect writes
   for a finished conversation, episodes.py: a pure function of the transcript, so flushing the
   same content again changes nothing and a longer session updates the same page);
3. remembers a transcript outside the configured folders (transcripts/registry.py), so later syncs
   keep it and ``get`` reads its citations;
4. indexes the transcript up to its current end and the page, lexically: the model is never loaded
   here (a hook must return within a second); ``clawmem index`` or ``watch`` embeds them later.

Nothing is proposed beyond what the episode page proposes ("Proposed Retain"): no fact reaches
``MEMORY.md`` without ``clawmem reflect --apply``. Run from a hook (``flush_from_hook``) it never
raises and never blocks the agent: what it could not do is one line in ``.memory/flush.log``.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from clawmem.errors import ClawmemError, InputError, LockedError, StoreError
from clawmem.markdown.workspace import ENTITY_DIR, MAX_TRANSCRIPT_BYTES, FileEntry
from clawmem.text import untrusted_json
from clawmem.transcripts import formats, registry
from clawmem.transcripts.flushlog import log
from clawmem.transcripts.sessions import SUFFIX, name_of

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer
    from clawmem.reflect.episodes import Episode
    from clawmem.transcripts.sessions import Read

# How long a flush waits for another writer (a `clawmem index` embedding, the watcher). Past it
# the page and the registry are still written (they are what must not be lost); the index
# catches up at its next sync.
LOCK_TIMEOUT_S = 5.0


@dataclass
class FlushResult:
    """What one flush did (``clawmem flush --json``)."""

    transcript: str  # sessions/… : the name it is indexed and cited by
    path: str  # the file read
    session_id: str | None = None
    format: str | None = None
    messages: int = 0
    page: str | None = None  # memory/episodes/… (None: nothing said yet)
    page_status: str = "none"  # written | unchanged | kept (see notes) | none
    registered: bool = False  # newly remembered as a transcript outside the configured folders
    indexed: bool = False
    units_added: int = 0
    vectors_pending: int = 0
    proposed: int = 0  # fact proposals new in memory/proposals/ (proposal_review.py)
    proposal_pages: list[str] = field(default_factory=list)  # the pages they were appended to
    event: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "transcript": self.transcript,
            "path": self.path,
            "session_id": self.session_id,
            "format": self.format,
            "messages": self.messages,
            "page": self.page,
            "page_status": self.page_status,
            "registered": self.registered,
            "indexed": self.indexed,
            "units_added": self.units_added,
            "vectors_pending": self.vectors_pending,
            "proposed": self.proposed,
            "event": self.event,
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        page = f"{self.page} {self.page_status}" if self.page else "no page (nothing said yet)"
        notes = list(self.notes)
        if self.indexed:
            index = f"indexed (+{self.units_added} units)"
        else:  # said once, with why: not "not indexed; not indexed: the index is busy"
            index = next((n for n in notes if n.startswith("not indexed: ")), "not indexed")
            notes = [n for n in notes if n != index]
        text = f"{self.transcript}: {self.messages} messages; {page}; {index}"
        if self.proposed:
            text += f"; {self.proposed} fact(s) proposed (`clawmem proposals list`)"
        return text + "".join(f"; {n}" for n in notes)


# ---------------------------------------------------------------------------- reading the file


def read_transcript(path: Path) -> tuple[bytes, os.stat_result]:
    """The bytes of the transcript at ``path`` and its stat, read through one descriptor opened
    without following a symlink: a hook names a file, and only that file is read."""
    if path.suffix != SUFFIX:
        raise InputError(
            f"{path}: not a transcript (a transcript is a *.jsonl file)",
            hint="pass the transcript_path the agent's hook gives",
        )
    if not path.name.isprintable():  # its name is cited in the episode page, one line each
        raise InputError(
            f"{ascii(str(path))}: a transcript name with a line break or control character",
            hint="rename the file",
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if os.path.islink(path):
            raise InputError(
                f"{path}: a symlink; clawmem reads a transcript only as a regular file",
                hint="pass the path of the file itself",
            )
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(f"{path}: no such transcript", hint="check the path") from None
    except OSError as exc:
        raise InputError(
            f"{path}: cannot open ({exc.strerror})", hint="check permissions"
        ) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_TRANSCRIPT_BYTES:
        os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: not a regular file", hint="pass a transcript file")
        raise InputError(
            f"{path}: {st.st_size:,} bytes is over the transcript cap", hint="nothing was read"
        )
    with os.fdopen(fd, "rb") as f:
        # What the stat says, no more: a line appended meanwhile waits for the next sync.
        return f.read(st.st_size), st


# ---------------------------------------------------------------------------- the flush


def flush(
    ix: Indexer,
    transcript: str | Path,
    *,
    event: str = "",
    lock_timeout: float = LOCK_TIMEOUT_S,
) -> FlushResult:
    """Write ``transcript``'s episode page and index it now (see the module's doc). Raises
    ``InputError`` for a file that is not a transcript clawmem reads, ``StoreError`` when the
    workspace cannot be written."""
    from clawmem.files.locking import write_lock

    t0 = time.perf_counter()
    path = Path(os.path.abspath(Path(transcript).expanduser()))
    data, st = read_transcript(path)
    from clawmem.markdown.forgotten import load as forgotten_lines

    parsed = formats.parse(data, forgotten=forgotten_lines(ix.root))
    if parsed.format is None:
        raise InputError(
            f"{path}: not a transcript format clawmem reads (OpenClaw or Claude Code session JSONL)",
            hint="docs/sessions.md lists the formats",
        )
    rel, outside = name_of(ix.root, ix.cfg, path, parsed.format)
    episode = _episode(ix, rel, parsed)
    res = FlushResult(rel, str(path), event=event, format=parsed.format)
    res.session_id = episode.session_id if episode else parsed.session_id
    res.messages = len(episode.messages) if episode else 0
    ix.prepare_memory_dir()
    try:
        with write_lock(ix.memory_dir, timeout=lock_timeout, purpose="clawmem flush"):
            _write(ix, res, episode, outside, path)
            if episode is not None:
                res.proposed, res.proposal_pages = _propose(ix, episode)
            _index(ix, res, FileEntry(rel, st.st_size, st.st_mtime_ns), (data, parsed))
    except LockedError as exc:
        # Another writer holds the index (an `index` embedding, the watcher): the Markdown page
        # and the registry do not wait for it; the index catches up at its next sync.
        _write(ix, res, episode, outside, path)
        res.notes.append(f"index busy ({exc.message}); the next sync indexes the transcript")
    except OSError as exc:
        raise StoreError(
            f"{ix.memory_dir}: {exc.strerror or exc}", hint="check free disk space and permissions"
        ) from None
    res.seconds = time.perf_counter() - t0
    return res


def _episode(ix: Indexer, rel: str, parsed: formats.Parsed) -> Episode | None:
    from clawmem.reflect.episodes import episode_of, placed

    episode = episode_of(rel, parsed, entity_page_names(ix.root))
    return placed(ix.root, episode) if episode is not None else None


def _propose(ix: Indexer, episode: Episode) -> tuple[int, list[str]]:
    """Fact proposals from what the user said (fact_proposals.py), appended to the review pages;
    how many were new, and the pages written (indexed with the transcript). The caller holds the
    write lock."""
    from clawmem.reflect.fact_proposals import propose
    from clawmem.reflect.proposal_review import PAGE_DIR, record, said_in_transcript

    said = said_in_transcript(episode.relpath, episode.messages)
    new = record(ix.root, propose(said, entity_page_names(ix.root)))
    return len(new), sorted({f"{PAGE_DIR}/{p.day}.md" for p in new})


def entity_page_names(root: Path) -> list[str]:
    """The entities that have a page (``bank/entities/<Name>.md``), as reflect names them (none
    when the folder is a link the workspace scan does not follow: its names are not ours)."""
    from clawmem.markdown.workspace import writable_path

    try:
        found = os.scandir(writable_path(root, ENTITY_DIR))
    except (OSError, ClawmemError):
        return []
    with found:
        return sorted(
            e.name[:-3]
            for e in found
            if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
        )


def _write(
    ix: Indexer, res: FlushResult, episode: Episode | None, outside: bool, path: Path
) -> None:
    """The page (unless a person's edit inside its generated section would be lost), then the
    registry entry of a transcript no configured folder holds."""
    if episode is not None:
        res.page = episode.page
        res.page_status = _write_page(ix.root, episode, res.notes)
    if outside and not res.registered:
        res.registered = registry.register(ix.root, res.transcript, path)


def _write_page(root: Path, episode: Episode, notes: list[str]) -> str:
    from clawmem.files import safe_open
    from clawmem.files.atomic import write_atomic
    from clawmem.markdown.markers import OFF, MarkerError, find_section, is_off, splice
    from clawmem.markdown.workspace import writable_path
    from clawmem.reflect.episodes import episode_body

    # Never through a link (the page, or its folder, one that a cloned repository committed):
    # WorkspaceError names the link and the fix, and the hook's log says it.
    target = writable_path(root, episode.page)
    try:
        raw = safe_open.read_bytes(target)
        old = raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        # Rewriting it would replace bytes someone wrote: reflect refuses such a page too.
        notes.append(f"{episode.page}: not valid UTF-8, so it was left as it is")
        return "kept"
    if old is not None:
        if is_off(old):
            notes.append(f"{episode.page} has {OFF}: left as it is")
            return "kept"
        try:
            section = find_section(old)
        except MarkerError as exc:
            notes.append(f"{episode.page}: {exc}; the page was left as it is")
            return "kept"
        if section is not None and section.edited:
            notes.append(
                f"{episode.page}: its generated section was edited by hand, so it was left as it "
                "is (`clawmem reflect --force` rewrites it)"
            )
            return "kept"
    new = splice(old, episode_body(episode), title=episode.title)
    if new == old:
        return "unchanged"
    if raw is None:
        write_atomic(target, new)
        return "written"
    # A page a program holds open for writing is not renamed over (files/rewrite.py).
    from clawmem.files.rewrite import Changed, HeldOpen, rewrite_page

    try:
        kept = rewrite_page(target, raw, new.encode("utf-8")).kept
    except (HeldOpen, Changed):
        notes.append(
            f"{episode.page}: another program has it open for writing or changed it meanwhile, "
            "so it was left as it is (the next flush or reflect writes it)"
        )
        return "kept"
    if kept:
        notes.append(f"{episode.page}: lines another program appended meanwhile were kept")
    return "written"


def _index(ix: Indexer, res: FlushResult, transcript: FileEntry, read: Read) -> None:
    entries = [transcript]
    for page in ([res.page] if res.page is not None else []) + res.proposal_pages:
        try:
            pst = os.stat(ix.root / page)
            entries.append(FileEntry(page, pst.st_size, pst.st_mtime_ns))
        except OSError:
            pass
    report, why = ix.sync_files(entries, read={transcript.relpath: read})
    if report is None:
        res.notes.append(f"not indexed: {why}; `clawmem index` indexes it")
        return
    res.indexed = True
    res.units_added = report.units
    res.vectors_pending = report.pending
    res.notes += [f"{s.relpath}: {s.reason}" for s in report.skipped]


# ---------------------------------------------------------------------------- from a hook


@dataclass(frozen=True)
class HookRequest:
    """What a hook's JSON names: the transcript, and the event (for the log)."""

    event: str
    transcript: Path | None
    session_id: str | None
    problem: str | None = None  # why no transcript is named


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def request_from_hook(text: str, environ: dict[str, str] | None = None) -> HookRequest:
    """Read a hook's stdin. Claude Code (``PreCompact``, ``SessionEnd``, any event) sends
    ``{"session_id", "transcript_path", "cwd", "hook_event_name", "trigger" | "reason", …}``;
    an OpenClaw hook forwards its event, ``{"type", "action", "sessionKey", "context": {…}}``
    (docs/agents.md), whose transcript is ``context.sessionFile`` (or the previous session
    entry's, for ``/new`` and ``/reset``), else ``$OPENCLAW_STATE_DIR/agents/<agent>/sessions/
    <sessionId>.jsonl`` (``~/.openclaw`` by default; the agent from ``agent:<agent>:…``)."""
    env = os.environ if environ is None else environ
    try:
        data = untrusted_json.loads(text)
    except ValueError:
        return HookRequest("", None, None, "the hook's input is not JSON")
    if not isinstance(data, dict):
        return HookRequest("", None, None, "the hook's input is not a JSON object")
    raw_ctx = data.get("context")
    ctx: dict = raw_ctx if isinstance(raw_ctx, dict) else {}
    entries = [
        e for e in (ctx.get("previousSessionEntry"), ctx.get("sessionEntry")) if isinstance(e, dict)
    ]
    kind, action = _str(data.get("type")), _str(data.get("action"))
    event = _str(data.get("hook_event_name")) or (f"{kind}:{action}" if kind and action else "")
    detail = _str(data.get("trigger")) or _str(data.get("reason"))
    if detail:
        event = f"{event} ({detail})" if event else detail
    session = (
        _str(data.get("session_id"))
        or _str(data.get("sessionId"))
        or _str(ctx.get("sessionId"))
        or next((_str(e.get("sessionId")) for e in entries if _str(e.get("sessionId"))), None)
    )
    named = (
        _str(data.get("transcript_path"))
        or _str(ctx.get("sessionFile"))
        or next((_str(e.get("sessionFile")) for e in entries if _str(e.get("sessionFile"))), None)
    )
    if named is not None:
        p = Path(named).expanduser()
        if not p.is_absolute():
            cwd = _str(data.get("cwd"))
            if cwd is None:
                return HookRequest(
                    event, None, session, f"{named}: a relative transcript_path and no cwd"
                )
            p = Path(cwd).expanduser() / p
        return HookRequest(event, p, session)
    key = _str(data.get("sessionKey")) or _str(data.get("session_key"))
    if session is not None and (kind or key):
        return _openclaw_default(event, session, key, env)
    return HookRequest(
        event, None, session, "the hook's input names no transcript (transcript_path)"
    )


def _openclaw_default(
    event: str, session: str, key: str | None, env: Mapping[str, str]
) -> HookRequest:
    agent = "main"
    if key:
        parts = key.split(":")
        if len(parts) >= 3 and parts[0] == "agent" and parts[1]:
            agent = parts[1]
    for part in (agent, session):
        if PurePosixPath(part).name != part or part in (".", ".."):
            return HookRequest(event, None, session, f"{part!r} cannot name a transcript file")
    state = _str(env.get("OPENCLAW_STATE_DIR")) or "~/.openclaw"
    path = Path(state).expanduser() / "agents" / agent / "sessions" / f"{session}{SUFFIX}"
    return HookRequest(event, path, session)


def flush_from_hook(
    ix: Indexer, text: str, *, environ: dict[str, str] | None = None
) -> FlushResult | None:
    """``flush`` for a hook: never raises; what happened (done, or why not) is one line in
    ``.memory/flush.log``. Returns the result, or None when nothing was flushed."""
    req = request_from_hook(text, environ)
    try:
        ix.prepare_memory_dir()
    except ClawmemError:
        return None  # a read-only workspace: nowhere to write the page, nor to say so
    try:
        if req.transcript is None:
            log(ix.memory_dir, f"skipped: {req.problem}", req.event)
            return None
        res = flush(ix, req.transcript, event=req.event)
    except ClawmemError as exc:
        log(ix.memory_dir, f"skipped: {exc.message}", req.event)
        return None
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the agent; the log says why
        log(ix.memory_dir, f"failed: internal error: {type(exc).__name__}: {exc}", req.event)
        return None
    log(ix.memory_dir, f"flushed {res.summary()} ({res.seconds:.2f} s)", req.event)
    return res
