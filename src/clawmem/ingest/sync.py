"""Keeping the index in step with the Markdown.

``plan_sync`` is pure: it compares a stat scan of the workspace with what the index holds. Applying
the plan reads and parses only the files that changed, one transaction per file. A full rebuild
writes a new database beside the old one and swaps it in with ``os.replace``; until that moment
the old index keeps answering, and a killed rebuild leaves a file that the next run mines for
vectors and then deletes. Embedding is a separate phase that commits batch by batch, so lexical
recall works before vectors finish and an interrupted run loses at most one batch.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.config import Config
from clawmem.markdown.workspace import TRANSCRIPT_PREFIX, FileEntry, Scan, Skipped
from clawmem.store import db
from clawmem.store.index import Index, make_unit, origin_of
from clawmem.text.shown_path import shown_path

if TYPE_CHECKING:
    from types import FrameType

    from clawmem.embedders.base import EmbedderIdentity, VectorSource
    from clawmem.markdown.links import Link
    from clawmem.transcripts.sessions import Read

Progress = Callable[[str, int, int], None]  # (stage, done, total)

INDEX_NAME = "index.sqlite"
REBUILD_PREFIX = "index.sqlite.rebuild-"


def _noop(stage: str, done: int, total: int) -> None:
    pass


def chunking_key(cfg: Config) -> str:
    return f"{cfg.chunk_tokens}/{cfg.chunk_overlap}"


@dataclass(frozen=True)
class SyncPlan:
    added: tuple[FileEntry, ...]
    changed: tuple[FileEntry, ...]  # stat differs; content may or may not
    removed: tuple[str, ...]
    unchanged: int

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


def plan_sync(scan: Scan, indexed: dict[str, tuple[int, int, str]]) -> SyncPlan:
    added, changed = [], []
    for f in scan.files:
        state = indexed.get(f.relpath)
        if state is None:
            added.append(f)
        elif (state[0], state[1]) != (f.size, f.mtime_ns):
            changed.append(f)
    present = {f.relpath for f in scan.files}
    removed = tuple(sorted(p for p in indexed if p not in present))
    unchanged = len(scan.files) - len(added) - len(changed)
    return SyncPlan(tuple(added), tuple(changed), removed, unchanged)


# A file read less than this after its last modification can change again within the same
# timestamp tick (the kernel's coarse clock; whole seconds on FAT, HFS+ and some network file
# systems) with the same size, leaving (size, mtime) as the index recorded them. Such files are
# "racy" (git's word): their content is compared by hash until a later read settles them.
RACY_NS = 2_000_000_000
RACY_META = "racy_files"  # JSON {path: mtime_ns} of the files indexed while racy


def racy_files(index: Index) -> dict[str, int]:
    try:
        return dict(json.loads(index.get_meta(RACY_META) or "{}"))
    except (ValueError, TypeError):
        return {}


def _content_differs(root: Path, relpath: str, sha256: str) -> bool:
    import hashlib  # here, as below: a read that finds nothing changed hashes nothing (~4 ms)

    try:
        return hashlib.sha256((root / relpath).read_bytes()).hexdigest() != sha256
    except OSError:
        return True  # unreadable now: let the sync find out and report it


def plan_fresh(root: Path, scan: Scan, index: Index) -> SyncPlan:
    """``plan_sync`` against ``index``, plus the racy files whose content changed although their
    (size, mtime) did not (an edit in the same clock tick as the sync that read them)."""
    racy = racy_files(index)
    if not racy and index.same_stats(scan.files):
        return SyncPlan((), (), (), len(scan.files))  # the usual answer before a read, cheaply
    states = index.file_states()
    plan = plan_sync(scan, states)
    if not racy:
        return plan
    planned = {f.relpath for f in plan.changed}
    moved = [
        f
        for f in scan.files
        if f.relpath in racy
        and f.relpath not in planned
        and f.relpath in states
        and _content_differs(root, f.relpath, states[f.relpath][2])
    ]
    if not moved:
        return plan
    return SyncPlan(plan.added, (*plan.changed, *moved), plan.removed, plan.unchanged - len(moved))


def _settle_racy(
    root: Path, index: Index, old: dict[str, int], fresh: dict[str, int], done: set[str]
) -> dict[str, int]:
    """The racy set after a sync: the files it read while racy, and the earlier ones not yet
    settled. One is settled when read (and found unchanged) more than RACY_NS after its mtime:
    any later edit must then move its mtime."""
    now = time.time_ns()
    states = index.file_states()
    keep = {p: m for p, m in fresh.items() if p in states}  # not those skipped as unreadable
    for path, mtime in old.items():
        if path in done or path in keep or path not in states:
            continue
        if states[path][1] != mtime:
            continue  # re-indexed since by a path that recorded it afresh
        if now - mtime > RACY_NS and not _content_differs(root, path, states[path][2]):
            continue
        keep[path] = mtime
    return keep


@dataclass
class SyncReport:
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    units: int = 0
    reused: int = 0
    embedded: int = 0
    truncated: int = 0
    unembeddable: int = 0
    pending: int = 0
    rebuilt: bool = False
    rebuild_reason: str = ""
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[tuple[str, dict]] = field(default_factory=list)
    # Transcripts: how many grew (only their new lines read), how many were read whole, and the
    # bytes read from them.
    transcripts_appended: int = 0
    transcripts_read_whole: int = 0
    transcript_bytes_read: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "files_indexed": self.files_indexed,
            "files_unchanged": self.files_unchanged,
            "files_removed": self.files_removed,
            "units": self.units,
            "vectors_reused": self.reused,
            "vectors_embedded": self.embedded,
            "vectors_pending": self.pending,
            "truncated": self.truncated,
            "unembeddable": self.unembeddable,
            "rebuilt": self.rebuilt,
            "rebuild_reason": self.rebuild_reason,
            # File names shown redacted, as every command shows them (text/shown_path.py).
            "skipped": [{"path": shown_path(s.relpath), "reason": s.reason} for s in self.skipped],
            "problems": [{"path": shown_path(p), **d} for p, d in self.problems],
            "transcripts": {
                "appended": self.transcripts_appended,
                "read_whole": self.transcripts_read_whole,
                "bytes_read": self.transcript_bytes_read,
            },
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class ParsedFile:
    entry: FileEntry
    sha256: str
    day: str | None
    lines: int
    units: tuple
    problems: tuple[dict, ...]
    links: tuple[Link, ...] = ()
    # Why its content is not indexed (binary, not UTF-8), or None. Such a file is still recorded,
    # with no units and the reason as its problem: otherwise every read found it "changed on
    # disk" and said the index was stale, forever, while `index` said it was up to date.
    skipped: str | None = None


def unindexable(raw: bytes) -> str | None:
    """Why a memory file's bytes are not indexed as Markdown, or None: the one rule that sync
    and retain share (retain refuses to store a fact where the index would not read it)."""
    if b"\x00" in raw[:8192]:
        return "binary content (NUL bytes), not Markdown"
    return None


def not_utf8(raw: bytes, exc: UnicodeDecodeError) -> tuple[int, str]:
    """(line, why) of a memory file that is not UTF-8: the one wording that index, status,
    recall and check share (they used to disagree on the line)."""
    line = raw[: exc.start].count(b"\n") + 1
    return line, f"line {line}: invalid UTF-8 at byte {exc.start}; re-save the file as UTF-8"


def parse_file(root: Path, entry: FileEntry, cfg: Config) -> ParsedFile | Skipped:
    """Read one file and turn it into units. Never raises for bad content: it reports."""
    path = root / entry.relpath
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Skipped(entry.relpath, "deleted while indexing")
    except OSError as exc:
        return Skipped(entry.relpath, f"cannot read: {exc.strerror}")
    why = unindexable(raw)
    if why is not None:
        return _not_markdown(entry, raw, why, 1)
    # The Markdown grammars, imported here: every read imports this module for ``plan_fresh``,
    # and importing them up front cost a cold lexical `clawmem recall` ~40 ms that only a read
    # finding a changed file needs (issue 16).
    from clawmem.markdown.chunking import chunk_markdown
    from clawmem.markdown.factlog import decode, fact_dates
    from clawmem.markdown.facts import extract_facts, says_only_the_fact
    from clawmem.markdown.links import extract_links, kept_links, too_many_links
    from clawmem.markdown.searchable import has_content
    from clawmem.text.timeexpr import date_from_path

    try:
        text = decode(raw)
    except UnicodeDecodeError as exc:
        line, why = not_utf8(raw, exc)
        return _not_markdown(entry, raw, why, line)
    from clawmem.markdown.forgotten import load as forgotten_lines
    from clawmem.text.redact import (
        redact,  # here: a sync with nothing to parse never compiles its patterns
    )

    # Credentials never reach the index; redaction keeps every newline, so lines still cite.
    # Lines `clawmem forget` forgot (say, merged back in from a clone) are blanked first.
    text = redact(forgotten_lines(root).blank(text.replace("\r\n", "\n").replace("\r", "\n")))
    file_day = date_from_path(entry.relpath)
    day = file_day.isoformat() if file_day else None
    facts, problems = extract_facts(text)
    fact_lines = {f.line for f in facts}
    units = []
    for c in chunk_markdown(text, max_chars=cfg.chunk_chars, overlap_chars=cfg.overlap_chars):
        if c.start_line in fact_lines and says_only_the_fact(c.text.split("\n")):
            # The fact's own unit (below) stands for these lines, with its kind and date: its
            # line, and the notes clawmem wrote under it (what it corrects, where it came from).
            continue
        if not has_content(c.text):
            continue  # a marker or a comment alone: nothing to find, never a hit or a snippet
        units.append(make_unit(c.start_line, c.end_line, c.heading, c.text, day))
    today = date.today()
    for fact in facts:
        recorded, start, end = fact_dates(fact, file_day, today)
        units.append(
            make_unit(
                fact.line,
                fact.line,
                "Retain",
                fact.content,
                # Recorded day (the daily log's); outside daily logs, the start it states.
                recorded.isoformat() if recorded else None,
                kind=fact.kind,
                confidence=fact.confidence,
                valid_from=start.isoformat() if start else None,
                valid_to=end.isoformat() if end else None,
                entities=tuple(fact.entities),
            )
        )
    import hashlib

    probs = tuple({"line": p.line, "text": p.text, "message": p.message} for p in problems)
    links, first_out, over = kept_links(extract_links(text))
    if first_out is not None:
        probs += (too_many_links(first_out, over),)
    n_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return ParsedFile(
        entry,
        hashlib.sha256(raw).hexdigest(),
        day,
        n_lines,
        tuple(units),
        probs,
        tuple(links),
    )


def _not_markdown(entry: FileEntry, raw: bytes, why: str, line: int) -> ParsedFile:
    """A file whose content is not indexed: recorded with no units, the reason its problem."""
    import hashlib

    problem = {"line": line, "text": "", "message": f"not indexed: {why}"}
    n_lines = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
    return ParsedFile(
        entry, hashlib.sha256(raw).hexdigest(), None, n_lines, (), (problem,), skipped=why
    )


def apply_plan(
    index: Index,
    root: Path,
    plan: SyncPlan,
    cfg: Config,
    *,
    embedder_key: str | None,
    progress: Progress = _noop,
    read: Mapping[str, Read] | None = None,
) -> SyncReport:
    """Apply ``plan`` to ``index``. ``read``: transcripts the caller has read and parsed already
    (sessions.Read, by path), which are not read again."""
    report = SyncReport(files_unchanged=plan.unchanged)
    todo = [*plan.added, *plan.changed]
    states = index.file_states()
    written: list[str] = []
    old_racy = racy_files(index)
    racy: dict[str, int] = {}
    done: set[str] = set(plan.removed)
    for n, entry in enumerate(todo, 1):
        progress("index", n - 1, len(todo))
        if entry.relpath.startswith(TRANSCRIPT_PREFIX):
            pre = read.get(entry.relpath) if read else None
            _sync_transcript(index, root, cfg, entry, embedder_key, states, report, pre)
            continue
        done.add(entry.relpath)
        if entry.mtime_ns > time.time_ns() - RACY_NS:
            racy[entry.relpath] = entry.mtime_ns  # read within a tick of its last write
        parsed = parse_file(root, entry, cfg)
        if isinstance(parsed, Skipped):
            report.skipped.append(parsed)
            if entry.relpath in states:
                # Keep nothing stale: a file we can no longer read is not what the index says.
                index.delete_file(entry.relpath, keep_vectors=embedder_key is not None)
                report.files_removed += 1
            continue
        old = states.get(entry.relpath)
        if old is not None and old[2] == parsed.sha256:
            index.touch_file(entry.relpath, entry.size, entry.mtime_ns)
            report.files_unchanged += 1
            continue
        report.reused += index.replace_file(
            entry.relpath,
            sha256=parsed.sha256,
            size=entry.size,
            mtime_ns=entry.mtime_ns,
            day=parsed.day,
            lines=parsed.lines,
            units=parsed.units,
            problems=parsed.problems,
            embedder_key=embedder_key,
            links=parsed.links,
        )
        written.append(entry.relpath)
        if parsed.skipped is not None:
            report.skipped.append(Skipped(entry.relpath, parsed.skipped))
            continue
        report.files_indexed += 1
        report.units += len(parsed.units)
    progress("index", len(todo), len(todo))
    for relpath in plan.removed:
        index.delete_file(relpath, keep_vectors=embedder_key is not None)
        report.files_removed += 1
    # Where a link points depends on which notes exist: when a note appeared or went (a rename is
    # both), every link is resolved again; otherwise only the links of the files written.
    if set(index.file_states()) != set(states):
        index.resolve_links()
    elif written:
        index.resolve_links(written)
    settled = _settle_racy(root, index, old_racy, racy, done) if (old_racy or racy) else {}
    with index.conn:
        index.set_meta("last_sync_at", str(time.time()))
        if settled or old_racy:
            index.set_meta(RACY_META, json.dumps(settled, sort_keys=True))
    return report


def _sync_transcript(
    index: Index,
    root: Path,
    cfg: Config,
    entry: FileEntry,
    embedder_key: str | None,
    states: dict,
    report: SyncReport,
    read: Read | None = None,
) -> None:
    from clawmem.transcripts.sessions import sync_transcript

    done = sync_transcript(index, root, cfg, entry, embedder_key=embedder_key, read=read)
    if isinstance(done, Skipped):
        report.skipped.append(done)
        if entry.relpath in states:
            index.delete_file(entry.relpath, keep_vectors=embedder_key is not None)
            report.files_removed += 1
        return
    report.transcript_bytes_read += done.bytes_read
    report.reused += done.reused
    report.units += done.units
    if done.mode == "appended":
        report.transcripts_appended += 1
    elif done.mode == "rewritten":
        report.transcripts_read_whole += 1
    if done.mode == "unchanged":
        report.files_unchanged += 1
    else:
        report.files_indexed += 1


def embed_pending(
    index: Index,
    embedder: VectorSource,
    *,
    batch: int,
    report: SyncReport,
    limit: int | None = None,
    progress: Progress = _noop,
) -> None:
    """Embed units without vectors, committing each batch. Stops after ``limit`` units if given."""
    total = index.pending_count()
    if limit is not None:
        total = min(total, limit)
    done = 0
    progress("embed", 0, total)
    with _interrupt_between_batches() as check:
        while done < total:
            rows = index.pending(min(batch, total - done))
            if not rows:
                break
            result = embedder.embed_documents([r[1] for r in rows])
            index.store_vectors(
                [(r[0], vec, r[3], r[4]) for r, vec in zip(rows, result.vectors, strict=True)]
            )
            report.truncated += result.truncated
            report.unembeddable += sum(1 for v in result.vectors if v is None)
            report.embedded += sum(1 for v in result.vectors if v is not None)
            done += len(rows)
            progress("embed", done, total)
            check()
    report.pending = index.pending_count()


@contextmanager
def _interrupt_between_batches() -> Iterator[Callable[[], None]]:
    """Ctrl-C during embedding always stops the run, at the latest after the batch in hand is
    committed. A KeyboardInterrupt raised while llama.cpp is calling back into Python (its log
    callback) is printed and swallowed by ctypes, and the run would go on to the end; so the
    signal is also remembered, and checked after each batch."""
    import signal
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: None  # not ours to change (a thread, or a caller's own handler)
        return
    seen: list[int] = []

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    def check() -> None:
        if seen:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def leftover_rebuilds(memory_dir: Path) -> list[Path]:
    """Databases of rebuilds that never swapped in, by base name. A kill during cleanup can leave
    only a ``-journal`` or ``-wal`` behind; its base name is listed too so it gets removed."""
    bases = set()
    for p in memory_dir.glob(REBUILD_PREFIX + "*"):
        name = p.name
        for suffix in ("-wal", "-shm", "-journal"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        bases.add(p.with_name(name))
    return sorted(bases)


def remove_db_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def build_fresh(
    memory_dir: Path,
    root: Path,
    scan: Scan,
    cfg: Config,
    *,
    identity: EmbedderIdentity | None = None,
    progress: Progress = _noop,
) -> tuple[Path, SyncReport]:
    """Build a complete new index beside the live one (not yet swapped in).

    Vectors for unchanged texts come from the live index and from any rebuild that was killed
    before it could swap, so nothing unchanged is embedded twice.
    """
    tmp = memory_dir / f"{REBUILD_PREFIX}{os.getpid()}"
    remove_db_files(tmp)
    try:
        new = Index.create(tmp, chunking=chunking_key(cfg))
    except BaseException:
        # The schema alone can fill a disk with a few kilobytes left: the file it began goes.
        remove_db_files(tmp)
        raise
    try:
        # The file is worthless until swapped in, so it skips per-commit fsyncs; durability
        # comes from the swap (one transaction into the live file, or an fsync before the rename).
        new.conn.execute("PRAGMA synchronous = OFF")
        key = None
        if identity is not None:
            import json

            key = identity.key()
            new.set_embedder(key, json.dumps(identity.to_dict()), identity.dims)
        else:
            # No model now (vectors off, model missing): keep the vector space the old index
            # had, so its vectors survive the rebuild instead of being thrown away.
            carried = _old_vector_space(memory_dir / INDEX_NAME)
            if carried is not None:
                key = carried[0]
                new.set_embedder(*carried)
        plan = plan_sync(scan, {})
        report = apply_plan(new, root, plan, cfg, embedder_key=None, progress=progress)
        report.skipped[:0] = list(scan.skipped)
        if key is not None:
            sources = [
                memory_dir / INDEX_NAME,
                *[p for p in leftover_rebuilds(memory_dir) if p != tmp],
            ]
            for src in sources:
                if not src.exists():
                    continue
                try:
                    old = Index.open(src, readonly=True)
                    try:
                        # Not from an index this machine did not build (a clone can ship a
                        # live index or a leftover rebuild): its vector for a text could be any.
                        if not old.foreign():
                            new.import_vectors(key, old)
                    finally:
                        old.close()
                except db.DatabaseError:
                    continue  # a corrupt or half-written source simply contributes nothing
            report.reused = new.adopt_cached()
        report.pending = new.pending_count()
        new.conn.execute("PRAGMA journal_mode = WAL")
    except Exception:
        # A rebuild that failed (a full disk, an error) is worth nothing: it goes, even when
        # closing it fails too. One that was killed cannot clean up; the next index mines it
        # for vectors, then removes it.
        with contextlib.suppress(db.DatabaseError):
            new.close()
        remove_db_files(tmp)
        raise
    finally:
        new.close()
    return tmp, report


def _copy_into_live(tmp: Path, live: Path) -> bool:
    """Replace the live index's pages with ``tmp``'s in one write transaction (backup API).

    Renaming a new file over a WAL database that other processes have open leaves their old
    connections sharing ``-wal``/``-shm`` with the new file, and their next read fails with
    "database disk image is malformed". Copying through SQLite keeps every reader on a consistent
    snapshot and shows the new index to its next query; a kill mid-copy leaves an uncommitted
    transaction that recovery discards. False if the live file cannot take it (corrupt, other
    page size): the caller falls back to renaming.
    """
    try:
        src, _ = db.connect(tmp, readonly=True)
    except db.DatabaseError:
        return False
    try:
        dst, _ = db.connect(live)
        try:
            src.backup(dst)  # all pages in one step: one transaction
            dst.execute("PRAGMA wal_checkpoint(PASSIVE)")  # never waits for readers
            return True
        finally:
            dst.close()
    except db.DatabaseError:
        return False
    finally:
        src.close()


def _old_vector_space(path: Path) -> tuple[str, str, int] | None:
    """(embedder key, identity JSON, dims) of an existing index, if it is readable."""
    if not path.exists():
        return None
    try:
        old = Index.open(path, readonly=True)
        try:
            meta = {} if old.foreign() else old.all_meta()
        finally:
            old.close()
    except db.DatabaseError:
        return None
    if meta.get("embedder") and meta.get("dims"):
        return meta["embedder"], meta.get("embedder_identity", "{}"), int(meta["dims"])
    return None


def _stamp(tmp: Path, origin: str | None) -> bool:
    """Record ``origin`` in the rebuilt index ``tmp``; False when there is none to record."""
    if origin is None:
        return False
    new = Index.open(tmp)
    try:
        with new.conn:
            new.stamp_origin(origin)
    finally:
        new.close()
    return True


def swap_in(memory_dir: Path, tmp: Path) -> None:
    """Atomically make ``tmp`` the live index, then delete abandoned rebuilds."""
    live = memory_dir / INDEX_NAME
    # The new index records the file it will be once in place (store/index.py, ORIGIN_META):
    # the live file, whose pages it replaces, or else itself, renamed (a rename keeps its inode).
    # A kill in between leaves a record that does not match: the next run rebuilds again.
    if live.exists() and _stamp(tmp, origin_of(live)) and _copy_into_live(tmp, live):
        remove_db_files(tmp)
        for p in leftover_rebuilds(memory_dir):
            remove_db_files(p)
        return
    if live.exists():
        try:
            conn, _ = db.connect(live)
            # Empty the old WAL so its frames can never be replayed onto the new file.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
        except db.DatabaseError:
            pass  # corrupt old index: nothing worth checkpointing
    _stamp(tmp, origin_of(tmp))
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)  # it was written with synchronous=OFF
    finally:
        os.close(fd)
    os.replace(tmp, live)
    try:
        fd = os.open(memory_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
    for p in leftover_rebuilds(memory_dir):
        remove_db_files(p)
