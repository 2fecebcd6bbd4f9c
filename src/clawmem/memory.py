"""The library API. The CLI is a thin shell around ``Memory``.

import clawmem
mem = clawmem.open_workspace("~/notes")
mem.index()
result = mem.recall("what did we decide about payments?", since="30d", k=8)
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

from . import db
from .config import Config, load_config
from .errors import (
    ClawmemError,
    InputError,
    LockedError,
    ModelError,
    StoreError,
    UsageError,
    WorkspaceError,
)
from .fusion import Ranking
from .index import Filters, Index
from .locking import try_write_lock, write_lock
from .recall import (
    MODES,
    RecallResult,
    entities_in_query,
    entity_page_hit,
    mark_superseded,
    pack_budget,
    run_recall,
)
from .sync import (
    INDEX_NAME,
    Progress,
    SyncReport,
    apply_plan,
    build_fresh,
    chunking_key,
    embed_pending,
    leftover_rebuilds,
    plan_sync,
    swap_in,
)
from .timeexpr import parse_date, parse_since, parse_until, query_time_hint
from .workspace import INDEX_DIR, Scan, find_root, resolve_member, scan

TOKENIZER = "fts5 porter+unicode61 over NFKC/casefolded/diacritic-free text; CJK as bigrams"


def open_workspace(
    path: str | Path | None = None,
    *,
    environ: dict[str, str] | None = None,
    embedder=None,
) -> Memory:
    """Open the workspace at ``path`` (or found from $CLAWMEM_WORKSPACE / the current folder).

    ``embedder``: use this embedder (anything with ``identity``, ``embed_query`` and
    ``embed_documents``, see embedders/base.py) instead of loading the configured model."""
    root = find_root(Path(path) if path is not None else None)
    return Memory(root, load_config(root, environ), embedder=embedder)


class Memory:
    def __init__(self, root: Path, cfg: Config, *, embedder=None) -> None:
        self.root = root
        self.cfg = cfg
        self.memory_dir = root / INDEX_DIR
        self.index_path = self.memory_dir / INDEX_NAME
        self._embedder = embedder
        self._embedder_error: str | None = None
        self._last_scan: Scan | None = None  # the lazy sync's stat scan, reused for staleness

    # ------------------------------------------------------------------ helpers
    def scan(self) -> Scan:
        return scan(
            self.root,
            self.cfg.extra_paths,
            max_file_bytes=self.cfg.max_file_bytes,
            max_files=self.cfg.max_files,
        )

    def embedder(self):
        """The embedding model, loaded once; None (and ``embedder_error``) when unusable."""
        if self._embedder is None and self._embedder_error is None:
            if not self.cfg.vectors:
                where = self.cfg.sources.get("vectors", "default")
                self._embedder_error = f"vectors are turned off (vectors = false, {where})"
            else:
                from .models import load_embedder

                try:
                    self._embedder = load_embedder(self.root, self.cfg)
                except ModelError as exc:
                    self._embedder_error = f"embedding model unavailable: {exc.message}"
        return self._embedder

    @property
    def embedder_error(self) -> str | None:
        return self._embedder_error

    def _prepare_memory_dir(self) -> None:
        try:
            self.memory_dir.mkdir(exist_ok=True)
            gi = self.memory_dir / ".gitignore"
            if not gi.exists():
                gi.write_text(
                    "# clawmem's derived index: rebuilt from the Markdown at any time\n*\n"
                )
        except OSError as exc:
            raise StoreError(
                f"{self.memory_dir}: cannot write the index folder ({exc.strerror})",
                hint="make the workspace writable, or run read-only commands only",
            ) from None

    def _open_existing(self) -> tuple[Index | None, str | None]:
        """The live index if usable, else (None, why it must be rebuilt)."""
        if not self.index_path.exists():
            return None, "no index yet"
        try:
            idx = Index.open(self.index_path)
            why = idx.check_compatible(chunking_key(self.cfg))
            if why is None:
                idx.conn.execute("PRAGMA journal_mode = WAL")
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

    # ------------------------------------------------------------------ index
    def index(
        self,
        *,
        force: bool = False,
        embed: bool = True,
        embed_limit: int | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 60.0,
    ) -> SyncReport:
        """Bring the index up to date (``force``: rebuild it beside the old one and swap).

        ``lock_timeout``: seconds to wait for another writer before raising LockedError (the watch
        daemon and the git hook wait briefly and retry or skip instead of blocking)."""
        t0 = time.perf_counter()
        self._prepare_memory_dir()
        prog = progress or (lambda *a: None)
        try:
            with write_lock(self.memory_dir, timeout=lock_timeout, purpose="clawmem index"):
                report = self._index_locked(force, embed, embed_limit, prog)
        except OSError as exc:
            raise StoreError(
                f"{self.memory_dir}: {exc.strerror or exc}",
                hint="check free disk space and permissions; the previous index is unchanged",
            ) from None
        report.seconds = time.perf_counter() - t0
        return report

    def _index_locked(self, force, embed, embed_limit, prog) -> SyncReport:
        sc = self.scan()
        emb = self.embedder()  # even with embed=False: the vector space is declared, units pending
        identity = emb.identity if emb is not None else None
        idx, why = (None, "--force") if force else self._open_existing()
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
                        idx.import_vectors(identity.key(), src)
                        src.close()
                    except db.DatabaseError:
                        pass
                from .sync import remove_db_files

                remove_db_files(stale)
            if identity is not None:
                idx.set_embedder(identity.key(), json.dumps(identity.to_dict()), identity.dims)
            plan = plan_sync(sc, idx.file_states())
            report = apply_plan(
                idx, self.root, plan, self.cfg, embedder_key=idx.get_meta("embedder"), progress=prog
            )
            report.skipped[:0] = list(sc.skipped)
            report.reused += idx.adopt_cached()
        try:
            if emb is not None and embed:
                embed_pending(
                    idx,
                    emb,
                    batch=self.cfg.embed_batch,
                    report=report,
                    limit=embed_limit,
                    progress=prog,
                )
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

    def _lazy_sync(self, notes: list[str]) -> None:
        """Before a read: sync files changed since the last sync (a stat check when nothing did)."""
        if not self.cfg.sync_on_read:
            return
        if not os.access(self.memory_dir if self.memory_dir.exists() else self.root, os.W_OK):
            notes.append("the index folder is read-only: changed files were not synced")
            return
        if not self.index_path.exists():
            if self._wait_for_first_build(notes):
                return
            try:
                r = self.index(embed_limit=self.cfg.lazy_embed_limit)
            except StoreError as exc:
                notes.append(f"could not build the index: {exc.message}")
                return
            notes.append(f"built the index first ({r.files_indexed} files)")
            return
        idx, why = self._open_existing()
        if idx is None:
            try:
                self.index(embed_limit=self.cfg.lazy_embed_limit)
            except (StoreError, LockedError) as exc:
                notes.append(f"the index needs a rebuild ({why}) but it failed: {exc.message}")
                return
            notes.append(f"rebuilt the index first: {why}")
            return
        try:
            self._last_scan = self.scan()
            plan = plan_sync(self._last_scan, idx.file_states())
            if plan.empty:
                return
            try:
                lock = try_write_lock(self.memory_dir)
            except OSError:
                lock = None
            if lock is None:
                notes.append(
                    "another process is writing the index; results may be a few seconds old"
                )
                return
            try:
                report = apply_plan(
                    idx, self.root, plan, self.cfg, embedder_key=idx.get_meta("embedder")
                )
                idx.adopt_cached()
                if report.files_indexed and idx.pending_count():
                    emb = self.embedder()
                    if emb is not None and emb.identity.key() == idx.get_meta("embedder"):
                        embed_pending(
                            idx,
                            emb,
                            batch=self.cfg.embed_batch,
                            report=report,
                            limit=self.cfg.lazy_embed_limit,
                        )
                changed = report.files_indexed + report.files_removed
                if changed:
                    notes.append(f"synced {changed} changed file(s) first")
            finally:
                lock.release()
        except (db.DatabaseError, OSError) as exc:
            notes.append(f"could not sync changed files: {exc}")
        finally:
            idx.close()

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

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        query: str,
        *,
        k: int | None = None,
        mode: str = "hybrid",
        since: str | None = None,
        until: str | None = None,
        kind: str | list[str] | None = None,
        entity: str | None = None,
        path: str | None = None,
        as_of: str | None = None,
        budget: int | None = None,
        sync: bool = True,
        today: date | None = None,
        ranking: Ranking | None = None,
    ) -> RecallResult:
        """Search memory. Filters (time, kind, entity, path, as-of) apply before ranking limits;
        ``budget`` packs the best results into about that many tokens. ``ranking`` overrides the
        ranking's numbers (for experiments; results then name it ``…+custom``)."""
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint="use one of: " + ", ".join(MODES))
        k_given = k is not None
        k = self.cfg.k if k is None else k
        if k < 1:
            raise UsageError(f"-k {k}: must be at least 1")
        if budget is not None and budget < 1:
            raise UsageError(f"--budget {budget}: must be a positive number of tokens")
        today = today or date.today()
        kinds: tuple[str, ...] = ()
        if kind:
            raw = [kind] if isinstance(kind, str) else list(kind)
            kinds = tuple(
                x.strip().upper() if x.strip().lower() != "chunk" else "chunk" for x in raw
            )
            bad = [x for x in kinds if x not in {"W", "B", "O", "S", "chunk"}]
            if bad:
                raise UsageError(f"--kind {bad[0]}: unknown kind", hint="use W, B, O, S or chunk")
        try:
            filters = Filters(
                since=parse_since(since, today).isoformat() if since else None,
                until=parse_until(until, today).isoformat() if until else None,
                kinds=kinds,
                entity=entity.lstrip("@") if entity else None,
                path_prefix=path,
                as_of=parse_date(as_of).isoformat() if as_of else None,
            )
        except InputError as exc:
            raise UsageError(exc.message, hint=exc.hint) from None  # a bad option value
        notes: list[str] = []
        self._last_scan = None
        if sync:
            self._lazy_sync(notes)
        if not self.index_path.exists():
            res = RecallResult(query, mode, "none", [])
            res.empty_reason = "no index yet: run `clawmem index` (the workspace may be read-only)"
            return res
        try:
            idx = Index.open(self.index_path, readonly=not os.access(self.memory_dir, os.W_OK))
        except db.DatabaseError as exc:
            raise StoreError(
                f"{self.index_path}: {exc}", hint="run `clawmem index --force`"
            ) from None
        try:
            degraded, vectors, emb = self._vector_state(idx, mode)
            # With a budget, rank more candidates than k and let the packer choose.
            want = max(k, 20) if budget and not k_given else k
            hint = None
            if not (filters.since or filters.until or filters.as_of):
                hint = query_time_hint(query, today)

            rk = ranking or Ranking(rrf_k=self.cfg.rrf_k)

            def search(f: Filters) -> RecallResult:
                return run_recall(
                    idx,
                    query,
                    k=want,
                    mode=mode,
                    filters=f,
                    embedder=emb,
                    fusion_name=self.cfg.fusion,
                    ranking=rk,
                    candidate_multiplier=self.cfg.candidate_multiplier,
                    snippet_chars=self.cfg.snippet_chars,
                    decay_half_life_days=self.cfg.decay_half_life_days,
                    today=today,
                    degraded=degraded,
                )

            try:
                if hint is None:
                    result = search(filters)
                else:
                    result = self._time_hinted(search, filters, hint, rk)
                self._entity_first(idx, query, filters, result, want)
                result.hits = mark_superseded(idx, result.hits, filters.as_of)
                if filters.as_of:
                    result.hits = [h for h in result.hits if h.superseded_by is None] + [
                        h for h in result.hits if h.superseded_by is not None
                    ]
                if budget:
                    result.hits, result.budget = pack_budget(result.hits, budget)
            except db.DatabaseError as exc:
                raise StoreError(
                    f"{self.index_path}: {exc}", hint="run `clawmem index --force` to rebuild it"
                ) from None
            result.notes[:0] = notes
            result.vectors = vectors
            result.filters = {
                "since": filters.since,
                "until": filters.until,
                "kind": list(filters.kinds),
                "entity": filters.entity,
                "path": filters.path_prefix,
            }
            result.filters["as_of"] = filters.as_of
            stale_files = None  # not checked: the caller asked for no sync (a stat of every file)
            if sync:
                stale = plan_sync(self._last_scan or self.scan(), idx.file_states())
                stale_files = len(stale.added) + len(stale.changed) + len(stale.removed)
            result.index = {"path": str(self.index_path), "stale_files": stale_files}
            if stale_files:
                result.degraded.append(
                    f"index is stale: {stale_files} file(s) changed on disk were not synced"
                )
            return result
        finally:
            idx.close()

    @staticmethod
    def _time_hinted(search, filters: Filters, hint, rk: Ranking) -> RecallResult:
        """A time named in the question ("on 29 Dec 2023", "last week") is a preference, not a
        filter: people talk about a day on the next one, and a question may date the wrong
        session. Search the window (widened by ``rk.time_slack_days``) and everywhere, and fuse
        the two rankings, so dated hits rise and nothing outside the window is lost."""
        from datetime import timedelta

        slack = timedelta(days=rk.time_slack_days)
        try:
            since = (hint.start - slack).isoformat() if hint.start else None
        except OverflowError:  # the first days of year 1
            since = hint.start.isoformat()
        try:
            until = (hint.end + slack).isoformat() if hint.end else None
        except OverflowError:
            until = hint.end.isoformat()
        window = replace(filters, since=since, until=until)
        near = search(window)
        wide = search(filters)
        if not near.hits:
            return wide
        fused: dict[str, float] = {}
        by_cite = {}
        for hits, w in ((near.hits, rk.time_weight), (wide.hits, 1.0)):
            for rank, h in enumerate(hits, 1):
                fused[h.citation] = fused.get(h.citation, 0.0) + w / (rk.rrf_k + rank)
                by_cite.setdefault(h.citation, h)
        order = sorted(fused, key=lambda c: -fused[c])  # stable: near's order breaks ties
        wide.hits = [replace(by_cite[c], score=fused[c]) for c in order][
            : max(len(wide.hits), len(near.hits))
        ]
        wide.notes.append(
            f"the question names a time: hits from {window.since or '…'} to {window.until or '…'}"
            " rank higher"
        )
        return wide

    def _entity_first(self, idx: Index, query: str, filters: Filters, result, k: int) -> None:
        """ "Tell me about Peter": the entity's own page leads, then the facts about it."""
        if filters.since or filters.until or filters.facts_only:
            return  # a time window was asked for; an undated page is not in it
        if filters.kinds and "chunk" not in filters.kinds:
            return  # only facts were asked for
        names = [filters.entity] if filters.entity else entities_in_query(idx, query)
        for name in names[:1]:
            page = entity_page_hit(idx, name, self.cfg.snippet_chars)
            if page is None:
                continue
            rest = [
                h
                for h in result.hits
                if not (
                    h.path == page.path
                    and h.start_line <= page.end_line
                    and h.end_line >= page.start_line
                )
            ]
            result.hits = [page, *rest][:k]
            result.notes.append(f"entity: {name} (page {page.path})")

    def _vector_state(self, idx: Index, mode: str):
        """(degraded reasons, vectors summary, embedder or None) for a recall."""
        degraded: list[str] = []
        counts = idx.vector_counts()
        state = {
            "backend": idx.vec.backend,
            "sqlite_vec": idx.vec.version or None,
            "indexed": counts["vectors"],
            "pending": counts["pending"],
            "state": "ok",
            "reason": None,
        }
        if not idx.vec.available:
            degraded.append(f"sqlite-vec unavailable, using an exact NumPy scan: {idx.vec.reason}")
        if mode == "lexical":
            state["state"] = "unused"
            return degraded, state, None
        emb = self.embedder()
        if emb is None:
            state.update(state="off", reason=self.embedder_error)
            degraded.append(f"vector search off: {self.embedder_error}")
            return degraded, state, None
        if idx.get_meta("embedder") != emb.identity.key():
            why = (
                f"the index's vectors were built by {idx.get_meta('embedder') or 'no model'}, "
                f"the configured model is {emb.identity.key()}: run `clawmem index`"
            )
            state.update(state="mismatch", reason=why)
            degraded.append(f"vector search off: {why}")
            return degraded, state, None
        if counts["pending"]:
            state.update(state="partial", reason=f"vectors: {counts['pending']} pending")
            degraded.append(
                f"vectors: {counts['pending']} pending; run `clawmem index` to embed them"
            )
        return degraded, state, emb

    # ------------------------------------------------------------------ status
    def status(self) -> dict:
        sc = self.scan()
        out: dict = {
            "workspace": str(self.root),
            "index_path": str(self.index_path),
            "index_exists": self.index_path.exists(),
            "index_bytes": _db_bytes(self.index_path),
            "tokenizer": TOKENIZER,
            "files_on_disk": len(sc.files),
            "skipped": [{"path": s.relpath, "reason": s.reason} for s in sc.skipped],
        }
        from .watch import describe_watcher, watcher_status

        out["watcher"] = describe_watcher(watcher_status(self.memory_dir))
        if not self.index_path.exists():
            out.update(clean=False, state="no index yet: run `clawmem index`")
            return out
        try:
            idx = Index.open(self.index_path, readonly=not os.access(self.memory_dir, os.W_OK))
            meta = idx.all_meta()
        except db.DatabaseError as exc:
            if db.is_corruption(exc):
                out.update(
                    clean=False, state=f"index is corrupt ({exc}): `clawmem index` rebuilds it"
                )
            else:
                out.update(
                    clean=False, state=f"index unreadable ({exc}): check disk space and permissions"
                )
            return out
        try:
            plan = plan_sync(sc, idx.file_states())
            counts = idx.counts()
            compat = idx.check_compatible(chunking_key(self.cfg))
            out.update(
                schema_version=meta.get("schema_version"),
                chunker_version=meta.get("chunker_version"),
                normalizer_version=meta.get("normalizer_version"),
                last_sync_at=float(meta["last_sync_at"]) if meta.get("last_sync_at") else None,
                files=counts["files"],
                chunks=counts["chunks"],
                facts=counts["facts"],
                changed_on_disk={
                    "added": [f.relpath for f in plan.added],
                    "modified": [f.relpath for f in plan.changed],
                    "deleted": list(plan.removed),
                },
                problems=[{"path": p, **d} for p, d in idx.problems()],
                unreadable=json.loads(meta.get("skipped", "[]")),
            )
            stale = len(plan.added) + len(plan.changed) + len(plan.removed)
            vec: dict = {
                "backend": idx.vec.backend,
                "sqlite_vec": idx.vec.version or None,
                "fallback_reason": idx.vec.reason or None,
                "indexed": counts["vectors"],
                "pending": counts["pending"],
                "unembeddable": counts["unembeddable"],
                "cache_entries": counts["cache_entries"],
                "index_embedder": json.loads(meta["embedder_identity"])
                if meta.get("embedder_identity")
                else None,
                "dims": int(meta["dims"]) if meta.get("dims") else None,
            }
            emb = self.embedder()
            if emb is not None:
                vec["model_path"] = str(emb.model_path)
                vec["configured_embedder"] = emb.identity.to_dict()
                vec["model"] = getattr(emb, "about", None)  # name, languages, licence
                vec["state"] = (
                    "mismatch: run `clawmem index`"
                    if emb.identity.key() != meta.get("embedder")
                    else (f"{counts['pending']} pending" if counts["pending"] else "ok")
                )
            else:
                vec["state"] = f"off: {self.embedder_error}"
            out["vectors"] = vec
            out["clean"] = stale == 0 and compat is None
            if compat:
                out["state"] = f"needs rebuild: {compat}"
            elif stale:
                out["state"] = f"stale: {stale} file(s) changed on disk since the last sync"
            else:
                out["state"] = "clean"
        finally:
            idx.close()
        return out

    # ------------------------------------------------------------------ retain
    def retain(
        self,
        text: str,
        *,
        kind: str = "W",
        confidence: float | None = None,
        entities: tuple[str, ...] | list[str] = (),
        day: str | date | None = None,
        allow_secret: bool = False,
        today: date | None = None,
    ) -> dict:
        """Append a fact to the day's ``## Retain`` section and index it before returning."""
        from .facts import extract_facts, format_fact, make_fact
        from .retain import looks_like_secret, place_fact, read_log, write_atomic

        fact = make_fact(kind, text, entities, confidence)
        what = looks_like_secret(text)
        if what and not allow_secret:
            raise InputError(
                f"refusing to retain text that looks like {what}",
                hint="memory files are plain text (often in git); pass --allow-secret if you mean it",
            )
        try:
            when = (
                day
                if isinstance(day, date)
                else (parse_date(day) if day else (today or date.today()))
            )
        except InputError as exc:
            raise UsageError(exc.message, hint=exc.hint) from None
        relpath = f"memory/{when.isoformat()}.md"
        path = self.root / relpath
        self._prepare_memory_dir()
        with write_lock(self.memory_dir, purpose="clawmem retain"):
            existing = read_log(path, relpath)
            dup = self._duplicate_of(fact, relpath, existing)
            if dup is None:
                placed = place_fact(existing, fact, when)
                try:
                    write_atomic(path, placed.text)
                except OSError as exc:
                    raise StoreError(
                        f"{relpath}: cannot write ({exc.strerror})",
                        hint="the file is unchanged; check permissions and free space",
                    ) from None
                line = placed.line
                # Read-your-writes: the fact is indexed (and embedded) before we return.
                self._index_locked(False, True, self.cfg.lazy_embed_limit, lambda *a: None)
            else:
                relpath, line = dup
        facts, _ = extract_facts((self.root / relpath).read_text(encoding="utf-8"))
        stored = next((f for f in facts if f.line == line), fact)
        citation = f"{relpath}#L{line}-L{line}"
        return {
            "stored": dup is None,
            "duplicate_of": citation if dup is not None else None,
            "kind": stored.kind,
            "timestamp": when.isoformat(),
            "entities": list(stored.entities),
            "confidence": stored.confidence,
            "content": stored.content,
            "line_text": format_fact(stored).rstrip("\r\n"),
            "source": citation,
            "path": relpath,
            "line": line,
        }

    def _duplicate_of(self, fact, relpath: str, existing: str | None) -> tuple[str, int] | None:
        """An identical fact (kind, statement, entities, confidence) already in the workspace."""
        from .facts import extract_facts

        def same(f) -> bool:
            return (f.kind, f.content, set(f.entities), f.confidence) == (
                fact.kind,
                fact.content,
                set(fact.entities),
                fact.confidence,
            )

        if existing is not None:
            found, _ = extract_facts(existing)
            for f in found:
                if same(f):
                    return relpath, f.line
        if not self.index_path.exists():
            return None
        try:
            idx = Index.open(self.index_path)
        except db.DatabaseError:
            return None
        try:
            rows = idx.conn.execute(
                "SELECT path, start_line, entities, confidence FROM chunks WHERE kind = ? AND text = ? "
                "ORDER BY path, start_line",
                (fact.kind, fact.content),
            ).fetchall()
        except db.DatabaseError:
            rows = []
        finally:
            idx.close()
        for path, line, ents, conf in rows:
            if set(ents.split()) == set(fact.entities) and conf == fact.confidence:
                if (self.root / path).exists():
                    return path, line
        return None

    # ------------------------------------------------------------------ reflect
    def reflect(
        self,
        *,
        since: str | None = None,
        today: date | None = None,
        dry_run: bool = False,
        apply: bool = False,
        force: bool = False,
        llm: str | Path | None = None,
        lock_timeout: float = 60.0,
    ):
        """Update entity pages, opinions and MEMORY.md proposals from the facts (see reflect.py).
        Returns a ``ReflectResult``; raises ``ReflectConflict`` when a hand edit would be lost."""
        from .reflect import run_reflect

        today = today or date.today()
        return run_reflect(
            self,
            today=today,
            since=parse_since(since, today) if since else None,
            dry_run=dry_run,
            apply=apply,
            force=force,
            llm=llm,
            lock_timeout=lock_timeout,
        )

    # ------------------------------------------------------------------ entities and check
    def entities(self) -> list[dict]:
        """Every entity with its fact count, last mention and page (if any)."""
        self._lazy_sync([])
        if not self.index_path.exists():
            return []
        idx = Index.open(self.index_path, readonly=not os.access(self.memory_dir, os.W_OK))
        try:
            rows = idx.conn.execute(
                "SELECT e.entity, e.folded, count(DISTINCT c.id), max(c.day) FROM chunk_entities e "
                "JOIN chunks c ON c.id = e.chunk_id WHERE c.kind IS NOT NULL GROUP BY e.folded "
                "ORDER BY count(DISTINCT c.id) DESC, e.folded"
            ).fetchall()
            pages = {
                p.rsplit("/", 1)[1][:-3].casefold(): p
                for (p,) in idx.conn.execute(
                    "SELECT path FROM files WHERE path LIKE 'bank/entities/%.md'"
                )
            }
        finally:
            idx.close()
        out = []
        for name, folded, n, last in rows:
            out.append(
                {"entity": name, "facts": n, "last_mention": last, "page": pages.pop(folded, None)}
            )
        for _, page in sorted(pages.items()):
            out.append(
                {
                    "entity": page.rsplit("/", 1)[1][:-3],
                    "facts": 0,
                    "last_mention": None,
                    "page": page,
                }
            )
        return out

    def check(self) -> list[dict]:
        """Malformed facts in the workspace, read fresh from the Markdown (not from the index)."""
        from .facts import extract_facts

        problems = []
        for entry in self.scan().files:
            try:
                text = (self.root / entry.relpath).read_bytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(
                    {
                        "path": entry.relpath,
                        "line": 0,
                        "text": "",
                        "message": f"invalid UTF-8 at byte {exc.start}; re-save the file as UTF-8",
                    }
                )
                continue
            except OSError:
                continue
            _, found = extract_facts(text)
            problems.extend(
                {"path": entry.relpath, "line": p.line, "text": p.text, "message": p.message}
                for p in found
            )
        return problems

    # ------------------------------------------------------------------ model
    def model_status(self) -> dict:
        """The configured embedding model: name, languages, licence, identity, index match."""
        from .models import model_status

        return model_status(self)

    def use_model(
        self,
        target: str | Path | None = None,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> dict:
        """Use ``target`` here: None (the default), a built-in name ("e5", "minilm") or a
        GGUF path, after checking it loads."""
        from .models import use_model

        return use_model(self, target, query_prefix=query_prefix, document_prefix=document_prefix)

    # ------------------------------------------------------------------ get
    def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> dict:
        if from_line < 1:
            raise UsageError(f"--from {from_line}: lines are numbered from 1")
        if lines is not None and lines < 1:
            raise UsageError(f"--lines {lines}: must be at least 1")
        rel = resolve_member(self.root, path, self.cfg.extra_paths)
        try:
            text = (self.root / rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{rel}: invalid UTF-8 at byte {exc.start}", hint="re-save the file as UTF-8"
            ) from None
        all_lines = text.splitlines()
        if from_line > max(len(all_lines), 1):
            raise UsageError(f"--from {from_line}: {rel} has {len(all_lines)} lines")
        end = len(all_lines) if lines is None else min(len(all_lines), from_line + lines - 1)
        chunk = all_lines[from_line - 1 : end]
        return {
            "path": rel,
            "from": from_line,
            "to": end,
            "total_lines": len(all_lines),
            "citation": f"{rel}#L{from_line}-L{end}",
            "text": "\n".join(chunk),
        }


def _db_bytes(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except OSError:
            pass
    return total


__all__ = ["Memory", "open_workspace", "ClawmemError", "WorkspaceError"]
