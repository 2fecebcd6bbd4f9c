"""The index's life cycle for one workspace: build, sync, rebuild, and the lazy sync before a read.

``Indexer`` owns the paths (``.memory/index.sqlite``) and the configuration of an opened
workspace; its vectors come from its ``supply`` (``embedders/supply.py``). What a sync does to
the database is in ``sync.py`` (pure planning, then applying the plan); this module decides
*when*: under the write lock, rebuilding when the index is missing, incompatible or corrupt, and
syncing changed files before a read when that is cheap.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.config import Config
from clawmem.embedders.supply import EmbedderSupply
from clawmem.errors import LockedError, StoreError
from clawmem.files import safe_open
from clawmem.files.locking import WRITE_LOCK, read_owner, try_write_lock, write_lock
from clawmem.ingest import journal
from clawmem.ingest.sync import (
    INDEX_NAME,
    Progress,
    SyncPlan,
    SyncReport,
    apply_plan,
    build_fresh,
    chunking_key,
    embed_pending,
    leftover_rebuilds,
    plan_fresh,
    remove_db_files,
    swap_in,
)
from clawmem.markdown.workspace import INDEX_DIR, FileEntry, Scan, scan
from clawmem.store import db
from clawmem.store.index import FOREIGN, ForeignIndex, Index, inode
from clawmem.transcripts import registry

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder, VectorSource
    from clawmem.transcripts.sessions import Read


def _silent(stage: str, done: int, total: int) -> None:
    pass


# The scan a lazy sync "returns" when a live watcher vouched for the index instead (no stat pass).
WATCHED = Scan((), ())
# The reasons a scan leaves out a file that is memory (markdown/workspace.py, transcripts/):
# what recall names as not searchable. A link out of the workspace is left out by design.
_LEFT_OUT = (
    "cannot stat",
    "cannot read",
    "over max_file_bytes",
    "over max_files",
    "transcript cap",
    "line break or control character",
    "a rewrite that did not finish",  # a page as it was (workspace._Walker.held_copy)
)
# How long a read waits for a watcher that holds the write lock to finish syncing what changed.
WATCHER_WAIT_S = 2.0


class Indexer:
    """One workspace's index: where it is, how it is built; ``supply`` gives its vectors."""

    def __init__(self, root: Path, cfg: Config, *, embedder: Embedder | None = None) -> None:
        self.root = root
        self.memory_dir = root / INDEX_DIR
        self.index_path = self.memory_dir / INDEX_NAME
        # A .memory that is a link, another user's, or holding a link (a cloned repository can
        # commit one) is refused before anything opens a file in it (files/safe_open.py).
        safe_open.check_state_dir(self.memory_dir)
        self.supply = EmbedderSupply(root, cfg, self.memory_dir, embedder=embedder)
        self._clean_scan: Scan | None = None  # the last scan a lazy sync found nothing new in
        # How the last lazy sync knew the index was fresh: ("watcher" | "stat scan", why the
        # watcher was not asked or not trusted, or None).
        self.freshness: tuple[str | None, str | None] = (None, None)
        self._journal = journal.Answer(False, "")  # the watcher's answer to this read's question
        # The process's own inotify journal (``follow_changes``): None until asked for; once
        # asked, started at the next read, and dropped (with why) when it cannot run here.
        self._follow = False
        self._own: journal.Journal | None = None
        self._own_error: str | None = None
        self._own_mu = threading.Lock()
        # One connection given back by the last read (``release``), for the next one: opening
        # and closing a connection per recall cost ~4 ms at 100k units (mapping the pages again,
        # unmapping them at close), and the connection's remembered counts (``Index.memo``)
        # would be lost with it.
        self._kept: Index | None = None
        self._kept_lock = threading.Lock()

    # ------------------------------------------------------------------ configuration
    @property
    def cfg(self) -> Config:
        return self.supply.cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:
        self.supply.cfg = cfg  # the same model: options such as debounce or sync-on-read

    def reconfigure(self, cfg: Config, *, embedder: Embedder | None = None) -> None:
        """Use ``cfg`` from now on; the model is loaded again when next needed."""
        self.supply.reconfigure(cfg, embedder=embedder)

    def follow_changes(self) -> None:
        """For a long-running process (``clawmem mcp``): follow the memory files' changes with an
        inotify journal of this process's own, so that a read with nothing changed since the
        last one skips its stat pass of every file, as with a live ``clawmem watch`` (Linux; a
        read says which way it knew under ``fresh_by``). Started at the next read."""
        self._follow = True

    def _own_journal(self, key: str) -> journal.Journal | None:
        """The started own journal for the scan settings ``key``, or None (``_own_error`` says
        why)."""
        if not self._follow:
            return None
        with self._own_mu:
            if self._own is not None and (self._own.key != key or self._own.broken):
                # Other settings (``reconfigure``): other folders to follow. Broken (its probe
                # removed with .memory/): a new one, which compares every file once.
                self._own.close()
                self._own, self._own_error = None, None
            if self._own is None and self._own_error is None:
                own = journal.Journal(self.root, self.memory_dir, self.cfg, serve=False)
                try:
                    own.start()
                except OSError as exc:
                    self._own_error = f"cannot follow the files here ({exc.strerror or exc})"
                else:
                    self._own = own
            return self._own

    def scan(self) -> Scan:
        """Memory files of the workspace, and the transcripts of the configured sessions folders
        and those a hook named to ``clawmem flush`` (transcripts/registry.py)."""
        sc = scan(
            self.root,
            self.cfg.extra_paths,
            max_file_bytes=self.cfg.max_file_bytes,
            max_files=self.cfg.max_files,
        )
        if self.cfg.session_paths:
            from clawmem.transcripts.sessions import scan as scan_sessions

            files, skipped = scan_sessions(self.root, self.cfg)
        elif registry.exists(self.root):
            found: dict[str, FileEntry] = {}
            skipped = []
            registry.scan(self.root, found, skipped, set())
            files = list(found.values())
        else:
            return sc
        return Scan(
            tuple(sorted([*sc.files, *files], key=lambda f: f.relpath)),
            (*sc.skipped, *skipped),
        )

    # ------------------------------------------------------------------ opening
    def prepare_memory_dir(self) -> None:
        """Create ``.memory/`` (ignored by git) if needed; StoreError when it cannot be written."""
        try:
            safe_open.make_state_dir(self.memory_dir)
            safe_open.create_if_absent(
                self.memory_dir / ".gitignore",
                b"# clawmem's derived index: rebuilt from the Markdown at any time\n*\n",
            )
        except OSError as exc:
            raise StoreError(
                f"{self.memory_dir}: cannot write the index folder ({exc.strerror})",
                hint="make the workspace writable, or run read-only commands only",
            ) from None

    def open_existing(self) -> tuple[Index | None, str | None]:
        """The live index if usable, else (None, why it must be rebuilt)."""
        if not self.index_path.exists():
            return None, "no index yet"
        try:
            idx = self._take_kept(writable=True)
            if idx is None:
                idx = Index.open(self.index_path)
                idx.conn.execute("PRAGMA journal_mode = WAL")  # persistent: once per opening
            why = idx.check_compatible(chunking_key(self.cfg))
            if why is None:
                return idx, None
            idx.close()
            return None, why
        except db.DatabaseError as exc:
            if not db.is_corruption(exc):
                # A full disk or an I/O error is not fixed by rebuilding: say what it is.
                raise StoreError(
                    f"{self.index_path}: {exc}",
                    hint="check free disk space and permissions; the index itself is unchanged",
                ) from None
            return None, f"index.sqlite is corrupt ({exc}); rebuilding it from the Markdown"

    def open_for_read(self) -> Index:
        """The index for a query (read-only when the folder is); raises ``db.DatabaseError``.
        Close it, or hand it to ``release`` for the next read to reuse."""
        readonly = not os.access(self.memory_dir, os.W_OK)
        idx = self._take_kept(writable=not readonly)
        if idx is not None:
            return idx
        idx = Index.open(self.index_path, readonly=readonly)
        try:
            foreign = idx.foreign()
        except BaseException:
            idx.close()
            raise
        if foreign:
            # Never read what this machine did not build (a read-only clone, sync_on_read off,
            # or a rebuild that failed): its texts need not be the Markdown's.
            idx.close()
            raise ForeignIndex(f"{FOREIGN}: `clawmem index` rebuilds it from the Markdown")
        return idx

    def release(self, idx: Index) -> None:
        """Done with ``idx`` (from ``open_for_read`` or ``sync_for_read``): kept open for this
        process's next read, or closed if another is kept already or it is mid-transaction."""
        if not idx.conn.in_transaction:
            idx.read_memo = {}
            with self._kept_lock:
                if self._kept is None:
                    self._kept = idx
                    return
        idx.close()

    def close(self) -> None:
        """Close the connection kept for the next read, if any (the index files stay), and the
        own journal (a later read starts it again)."""
        with self._kept_lock:
            idx, self._kept = self._kept, None
        if idx is not None:
            idx.close()
        with self._own_mu:
            own, self._own, self._own_error = self._own, None, None
        if own is not None:
            own.close()

    def _take_kept(self, *, writable: bool) -> Index | None:
        """The kept connection if it is still on the live index file: a rebuild that had to
        rename a new file into place (``sync.swap_in``'s fallback) changes the inode, and a
        connection on the old file is closed, never read."""
        with self._kept_lock:
            idx, self._kept = self._kept, None
        if idx is None:
            return None
        if idx.ino is None or idx.ino != inode(self.index_path) or (writable and idx.readonly):
            idx.close()
            return None
        return idx

    # ------------------------------------------------------------------ writing
    def index(
        self,
        *,
        force: bool = False,
        embed: bool = True,
        embed_limit: int | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 60.0,
    ) -> SyncReport:
        """Bring the index up to date under the write lock (``force``: rebuild it beside the old
        one and swap). ``lock_timeout``: seconds to wait for another writer before raising
        LockedError (the watch daemon and the git hook wait briefly and retry or skip instead of
        blocking)."""
        t0 = time.perf_counter()
        self.prepare_memory_dir()
        # The model is loaded only when there is something to embed, and outside the lock: the
        # Markdown is synced first (its new units pending), then the model loads (~1.5 s for
        # the default) while other writers may go on, then the lock is taken again to embed.
        # A sync that changed no text (a pre-commit hook, cron, `clawmem index` out of habit)
        # never loads it.
        supply = self.supply
        defer = embed and supply.loaded is None and supply.declared_identity() is not None
        first = not self.index_path.exists()
        try:
            with write_lock(self.memory_dir, timeout=lock_timeout, purpose="clawmem index"):
                report = self.index_locked(
                    force=force,
                    embed=embed and not defer,
                    embed_limit=embed_limit,
                    progress=progress,
                )
            if defer and report.pending:
                count = min(report.pending, embed_limit or report.pending)
                declared = supply.declared_identity()
                emb = supply.for_documents(count, declared.key() if declared else None)
                if emb is not None:
                    with write_lock(self.memory_dir, timeout=lock_timeout, purpose="clawmem index"):
                        self._embed_round(emb, report, embed_limit, progress)
        except (OSError, db.DatabaseError) as exc:
            if not db.disk_full(exc):
                if isinstance(exc, OSError):
                    raise StoreError(
                        f"{self.memory_dir}: {exc.strerror or exc}",
                        hint="check free disk space and permissions; the previous index is "
                        "unchanged",
                    ) from None
                raise
            raise self._after_full_disk(first) from None
        report.seconds = time.perf_counter() - t0
        return report

    def _after_full_disk(self, first: bool) -> StoreError:
        """Leave nothing behind a write the full disk stopped: a first index is removed whole
        (its WAL alone can hold megabytes that keep the disk full); an older one keeps its
        committed state, its WAL emptied if the disk lets SQLite do it."""
        for stale in leftover_rebuilds(self.memory_dir):
            remove_db_files(stale)
        if first:
            remove_db_files(self.index_path)
            return StoreError(
                f"{self.memory_dir}: the disk is full; the first index could not be built and "
                "nothing was left behind",
                hint="free some disk space, then run `clawmem index` again",
            )
        try:
            conn, _ = db.connect(self.index_path)
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        except db.DatabaseError:
            pass  # still full: the WAL stays until the next write that has room
        return StoreError(
            f"{self.memory_dir}: the disk is full; the index keeps what it had committed",
            hint="free some disk space, then run `clawmem index` again to finish",
        )

    def _embed_round(
        self,
        emb: VectorSource | None,
        report: SyncReport,
        embed_limit: int | None,
        progress: Progress | None,
    ) -> None:
        """Embed the pending units of the live index (the second half of a deferred ``index``)."""
        idx = Index.open(self.index_path)
        try:
            if emb is not None:
                ident = emb.identity
                if ident.key() != idx.get_meta("embedder"):
                    # The model file's metadata promised another vector space than the loaded
                    # model gives (it should not): the model's word wins, as a model switch.
                    idx.set_embedder(ident.key(), json.dumps(ident.to_dict()), ident.dims)
                    report.reused += idx.adopt_cached()
                self._embed_pending(idx, emb, report, embed_limit, progress or _silent)
            report.pending = idx.pending_count()
            report.problems = idx.problems()
        finally:
            idx.close()

    def _embed_pending(
        self,
        idx: Index,
        emb: VectorSource,
        report: SyncReport,
        limit: int | None,
        progress: Progress = _silent,
    ) -> None:
        """Embed ``idx``'s pending units with ``emb`` in the configured batches, into ``report``."""
        embed_pending(
            idx, emb, batch=self.cfg.embed_batch, report=report, limit=limit, progress=progress
        )

    def index_locked(
        self,
        *,
        force: bool = False,
        embed: bool = True,
        embed_limit: int | None = None,
        progress: Progress | None = None,
        load_model: bool = True,
    ) -> SyncReport:
        """``index`` for a caller that already holds the write lock (retain, reflect).
        ``load_model=False`` (with ``embed=False``, for a hook that must return at once): do not
        touch the model, not even its file's metadata; the index declares its vector space at
        the next run that loads the model."""
        prog = progress or _silent
        sc = self.scan()
        # Even with embed=False the vector space is declared (units pending): from the model
        # file's metadata when that tells, else by loading the model.
        supply, loaded = self.supply, self.supply.loaded
        if load_model:
            identity = supply.declared_identity()
        else:
            identity = loaded.identity if loaded is not None else None
        load = (identity is None and load_model) or embed
        # The few units of a retain are embedded by the resident embedder when it can (as
        # ``index`` does after an edit): a cold retain would otherwise load the model, 1-2 s.
        few = embed and loaded is None and identity is not None
        emb: VectorSource | None = supply.embedder() if load and not few else loaded
        if emb is not None:
            identity = emb.identity
        idx, why = (None, "--force") if force else self.open_existing()
        if idx is None:
            try:
                tmp, report = build_fresh(
                    self.memory_dir, self.root, sc, self.cfg, identity=identity, progress=prog
                )
            except db.DatabaseError as exc:
                raise StoreError(
                    f"{self.memory_dir}: rebuilding the index failed ({exc})",
                    hint="the previous index is unchanged; check disk space and retry",
                ) from None
            swap_in(self.memory_dir, tmp)
            report.rebuilt, report.rebuild_reason = True, why or ""
            idx = Index.open(self.index_path)
            idx.conn.execute("PRAGMA journal_mode = WAL")
        else:
            for stale in leftover_rebuilds(self.memory_dir):
                # A rebuild that was killed before its swap: mine it for vectors, then drop it.
                if identity is not None:
                    try:
                        src = Index.open(stale, readonly=True)
                        if not src.foreign():  # shipped by a clone, not left by a kill here
                            idx.import_vectors(identity.key(), src)
                        src.close()
                    except db.DatabaseError:
                        pass
                remove_db_files(stale)
            if identity is not None:
                idx.set_embedder(identity.key(), json.dumps(identity.to_dict()), identity.dims)
            plan = plan_fresh(self.root, sc, idx)
            # Bytes of Markdown this sync drops: deleted files, and what changed files lost (a
            # file edited in place, however large, is not a reason to compact the index).
            before = idx.file_states() if plan.removed or plan.changed else {}
            dropped = sum(before[p][0] for p in plan.removed if p in before) + sum(
                max(0, before[e.relpath][0] - e.size) for e in plan.changed if e.relpath in before
            )
            report = apply_plan(
                idx, self.root, plan, self.cfg, embedder_key=idx.get_meta("embedder"), progress=prog
            )
            report.skipped[:0] = list(sc.skipped)
            report.reused += idx.adopt_cached()
            if dropped:
                idx.reclaim(text_removed=dropped)  # a deleted 50 MB note no longer keeps its pages
        try:
            if few and identity is not None:
                pending = idx.pending_count()
                if pending:
                    emb = supply.for_documents(min(pending, embed_limit or pending), identity.key())
            if emb is not None and embed:
                self._embed_pending(idx, emb, report, embed_limit, prog)
            report.pending = idx.pending_count()
            idx.prune_cache(self.cfg.cache_max_entries)
            with idx.conn:
                idx.set_meta(
                    "skipped",
                    json.dumps([{"path": s.relpath, "reason": s.reason} for s in report.skipped]),
                )
            report.problems = idx.problems()
        finally:
            idx.close()
        return report

    def sync_files(
        self, entries: Sequence[FileEntry], *, read: Mapping[str, Read] | None = None
    ) -> tuple[SyncReport | None, str | None]:
        """For a caller holding the write lock (``clawmem flush``): bring just these files up to
        date, never loading the model; their new units wait for ``index`` or ``watch`` to embed
        them. With no index yet, it is built first, lexically. (None, why) when the index needs
        a rebuild (a rebuild of a large workspace is no job for a hook) or cannot be written.
        ``read``: transcripts the caller has read already (``apply_plan``)."""
        if not self.index_path.exists():
            return self.index_locked(embed=False, load_model=False), None
        try:
            idx, why = self.open_existing()
        except StoreError as exc:
            return None, exc.message
        if idx is None:
            return None, f"the index needs a rebuild ({why})"
        try:
            states = idx.file_states()
            added = tuple(e for e in entries if e.relpath not in states)
            changed = tuple(
                e
                for e in entries
                if e.relpath in states and tuple(states[e.relpath][:2]) != (e.size, e.mtime_ns)
            )
            plan = SyncPlan(added, changed, (), len(entries) - len(added) - len(changed))
            key = idx.get_meta("embedder")
            report = apply_plan(idx, self.root, plan, self.cfg, embedder_key=key, read=read)
            report.reused += idx.adopt_cached()
            report.pending = idx.pending_count()
        except db.DatabaseError as exc:
            return None, f"the index could not be written ({exc})"
        finally:
            idx.close()
        return report, None

    def lazy_sync(self, notes: list[str]) -> Scan | None:
        """Before a read: sync files changed since the last sync (a stat check when nothing did).
        Says what happened in ``notes``; returns the scan it compared, for a staleness check."""
        sc, idx = self.sync_for_read(notes)
        if idx is not None:
            idx.close()
        return sc

    def sync_for_read(
        self, notes: list[str], *, embed: bool = False
    ) -> tuple[Scan | None, Index | None]:
        """``lazy_sync`` that also hands over the index it opened, still open, when it is usable
        (the caller reads on that one connection and closes it); else (scan, None). ``embed``
        (a recall that ranks by vectors): units left without vectors, by this sync or an
        earlier one that did not embed (a git hook's), get up to ``lazy_embed_limit`` of them."""
        self.freshness = (None, None)
        if not self.cfg.sync_on_read:
            return None, None
        if not os.access(self.memory_dir if self.memory_dir.exists() else self.root, os.W_OK):
            notes.append("the index folder is read-only: changed files were not synced")
            return None, None
        if not self.index_path.exists():
            if self._wait_for_first_build(notes):
                return None, None
            try:
                r = self.index(embed_limit=self.cfg.lazy_embed_limit)
            except StoreError as exc:
                notes.append(f"could not build the index: {exc.message}")
                return None, None
            notes.append(f"built the index first ({r.files_indexed} file(s))")
            return None, None
        idx, why = self.open_existing()
        if idx is None:
            try:
                self.index(embed_limit=self.cfg.lazy_embed_limit)
            except (StoreError, LockedError) as exc:
                notes.append(f"the index needs a rebuild ({why}) but it failed: {exc.message}")
                return None, None
            notes.append(f"rebuilt the index first: {why}")
            return None, None
        sc: Scan | None = None
        # The own journal first (no socket, ~0.1 ms): it vouches when a comparison that began
        # after every change it has read found the index matching. Else its token marks this
        # read's question, and whatever vouches below (the watcher, or this read's own stat
        # pass finding nothing to do or syncing what it found) vouches for it too.
        key = journal.scan_key(self.root, self.cfg)
        own = self._own_journal(key)
        own_token: int | None = None
        own_why = self._own_error if self._follow and own is None else None
        if own is not None:
            clean, why, own_token = own.check()
            if why != journal.CHANGED:  # a lasting reason (a symlinked file, ...): say it
                own_why = why
            if clean:
                self.freshness = ("own journal", None)
                self._embed_left_pending(idx, notes, embed)
                return WATCHED, idx

        def vouched() -> None:
            if own is not None and own_token is not None:
                own.caught_up(own_token)

        self._journal = journal.ask_token(self.memory_dir, key)
        trusted, why_not = self._journal.clean, self._journal.why
        if trusted:
            vouched()
            self.freshness = ("watcher", None)
            return WATCHED, idx
        if own_why:
            why_not = f"{why_not}; own journal: {own_why}"
        self.freshness = ("stat scan", why_not)
        try:
            sc = self.scan()
            plan = plan_fresh(self.root, sc, idx)
            if plan.empty:
                self._clean_scan = sc  # recall's staleness check need not compare it again
                vouched()
                self._embed_left_pending(idx, notes, embed)
            else:
                outcome = self._apply_now(idx, plan, notes, embed=embed)
                if outcome != "busy":
                    vouched()  # synced here, or the watcher synced it and vouched
                if outcome == "watcher":
                    return WATCHED, idx
        except (db.DatabaseError, OSError) as exc:
            notes.append(f"could not sync changed files: {exc}")
            idx.close()
            return sc, None
        except BaseException:
            idx.close()
            raise
        return sc, idx

    def left_out(self, sc: Scan | None, idx: Index) -> list[tuple[str, str]]:
        """(path, why) of every file the scan leaves out whole although it is memory (over
        max_file_bytes or max_files, a transcript over its cap, one it cannot stat): no recall
        can find what it holds, and a recall must say so. ``sc``: the scan the lazy sync
        compared, if any; else what the last sync recorded."""
        if sc is not None and sc is not WATCHED:
            rows = [(s.relpath, s.reason) for s in sc.skipped]
        else:
            try:
                rows = [
                    (r["path"], r["reason"]) for r in json.loads(idx.get_meta("skipped") or "[]")
                ]
            except (ValueError, TypeError, KeyError):
                return []
        return [(p, why) for p, why in rows if any(r in why for r in _LEFT_OUT)]

    def stale_files(self, sc: Scan | None, idx: Index) -> int:
        """How many files differ from ``idx`` (``sc``: the scan the lazy sync compared, if any)."""
        if sc is WATCHED or (sc is not None and sc is self._clean_scan):
            return 0  # compared before the recall, nothing differed: no second stat pass
        plan = plan_fresh(self.root, sc or self.scan(), idx)
        return len(plan.added) + len(plan.changed) + len(plan.removed)

    def _embed_left_pending(self, idx: Index, notes: list[str], embed: bool) -> None:
        """Embed up to ``lazy_embed_limit`` units that an earlier sync left without vectors (a
        git hook syncs the Markdown only), if the write lock is free right now. Without this,
        a teammate's facts pulled into a clone stayed out of the vector leg until someone ran
        `clawmem index` (issue 45). Nothing pending: one remembered count, no lock. ``embed``
        False (a read that does not rank by vectors): nothing."""
        if not embed or not idx.vector_counts()["pending"]:
            return
        try:
            lock = try_write_lock(self.memory_dir)
        except OSError:
            lock = None
        if lock is None:
            return  # another writer: most likely embedding them already
        try:
            report = SyncReport()
            self._embed_some(idx, report)
            if report.embedded or report.reused:
                notes.append(f"embedded {report.embedded + report.reused} pending unit(s) first")
        finally:
            lock.release()

    def _embed_some(self, idx: Index, report: SyncReport) -> None:
        """Up to ``lazy_embed_limit`` of ``idx``'s pending units, with the index's own model
        (the resident embedder's for a few), under the caller's write lock."""
        pending = idx.pending_count()
        key = idx.get_meta("embedder")
        if not pending or not key:
            return
        emb = self.supply.for_documents(min(pending, self.cfg.lazy_embed_limit), key)
        if emb is not None and emb.identity.key() == key:
            self._embed_pending(idx, emb, report, self.cfg.lazy_embed_limit)

    def _apply_now(self, idx: Index, plan: SyncPlan, notes: list[str], *, embed: bool) -> str:
        """Apply a lazy sync's plan if the write lock is free right now (a few units embedded):
        "applied"; "watcher" when, instead, a live watcher that was syncing these changes
        vouched once done; "busy" when another writer holds the lock (results may be behind)."""
        try:
            lock = try_write_lock(self.memory_dir)
        except OSError:
            lock = None
        if lock is None:
            holder = read_owner(self.memory_dir / WRITE_LOCK)
            if (
                (self.freshness[1] or "").startswith(journal.BEHIND)
                and self._journal.pid is not None
                and (holder is None or holder.pid == self._journal.pid)
                and journal.wait_caught_up(
                    self.memory_dir,
                    journal.scan_key(self.root, self.cfg),
                    WATCHER_WAIT_S,
                    self._journal.token,
                )
            ):
                # The writer is the watcher, syncing what this scan found: its word (once it has
                # synced the changes made before this read asked) beats results a sync behind.
                # No holder named: the lock was let go a moment ago, most likely by the watcher.
                # Another writer (a retain) is not waited for: the watcher could not sync before
                # it lets go, and a recall would pay the whole wait on every call under writes.
                self.freshness = ("watcher", None)
                return "watcher"
            notes.append("another process is writing the index; results may be a few seconds old")
            return "busy"
        try:
            report = apply_plan(
                idx, self.root, plan, self.cfg, embedder_key=idx.get_meta("embedder")
            )
            idx.adopt_cached()
            # The units this sync left pending, and (for a recall by vectors) those an earlier
            # one did: a git hook's sync indexes a pull's files without embedding them.
            if report.files_indexed or embed:
                self._embed_some(idx, report)
            changed = report.files_indexed + report.files_removed
            if changed:
                notes.append(f"synced {changed} changed file(s) first")
        finally:
            lock.release()
        return "applied"

    def _wait_for_first_build(self, notes: list[str], timeout: float = 60.0) -> bool:
        """True if another process is building the first index: wait for its lexical rows (the
        build swaps the database in before it embeds), not for its vectors."""
        try:
            lock = try_write_lock(self.memory_dir)
        except OSError:
            return False
        if lock is not None:
            lock.release()
            return False
        deadline = time.monotonic() + timeout
        while not self.index_path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        notes.append("another process is building the index; vectors may still be pending")
        return True
