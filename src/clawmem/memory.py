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
from datetime import date
from pathlib import Path

from . import db
from .config import Config, load_config
from .errors import ClawmemError, InputError, ModelError, StoreError, UsageError, WorkspaceError
from .index import Filters, Index
from .locking import try_write_lock, write_lock
from .recall import MODES, RecallResult, run_recall
from .sync import (
    INDEX_NAME,
    Progress,
    SyncReport,
    apply_plan,
    build_fresh,
    embed_pending,
    leftover_rebuilds,
    plan_sync,
    swap_in,
)
from .timeexpr import parse_since, parse_until
from .workspace import INDEX_DIR, Scan, find_root, resolve_member, scan

TOKENIZER = "fts5 porter+unicode61 over NFKC/casefolded/diacritic-free text; CJK as bigrams"


def open_workspace(path: str | Path | None = None, *, environ: dict[str, str] | None = None) -> Memory:
    """Open the workspace at ``path`` (or found from $CLAWMEM_WORKSPACE / the current folder)."""
    root = find_root(Path(path) if path is not None else None)
    return Memory(root, load_config(root, environ))


class Memory:
    def __init__(self, root: Path, cfg: Config) -> None:
        self.root = root
        self.cfg = cfg
        self.memory_dir = root / INDEX_DIR
        self.index_path = self.memory_dir / INDEX_NAME
        self._embedder = None
        self._embedder_error: str | None = None

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
                self._embedder_error = f"vectors are turned off (vectors = false, {self.cfg.sources.get('vectors', 'default')})"
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
                gi.write_text("# clawmem's derived index: rebuilt from the Markdown at any time\n*\n")
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
            why = idx.check_compatible()
            if why is None:
                idx.conn.execute("PRAGMA journal_mode = WAL")
                return idx, None
            idx.close()
            return None, why
        except db.DatabaseError as exc:
            return None, f"index.sqlite is corrupt ({exc}); rebuilding it from the Markdown"

    # ------------------------------------------------------------------ index
    def index(
        self,
        *,
        force: bool = False,
        embed: bool = True,
        embed_limit: int | None = None,
        progress: Progress | None = None,
    ) -> SyncReport:
        """Bring the index up to date (``force``: rebuild it beside the old one and swap)."""
        t0 = time.perf_counter()
        self._prepare_memory_dir()
        prog = progress or (lambda *a: None)
        try:
            with write_lock(self.memory_dir, purpose="clawmem index"):
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
        emb = self.embedder() if embed else None
        identity = emb.identity if emb is not None else None
        idx, why = (None, "--force") if force else self._open_existing()
        if idx is None:
            if identity is None and self.index_path.exists() and not force:
                pass  # rebuild without vectors is still a rebuild; vectors come when the model does
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
            if emb is not None:
                embed_pending(
                    idx, emb, batch=self.cfg.embed_batch, report=report, limit=embed_limit,
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
            try:
                r = self.index(embed_limit=self.cfg.lazy_embed_limit)
            except StoreError as exc:
                notes.append(f"could not build the index: {exc.message}")
                return
            notes.append(f"built the index first ({r.files_indexed} files)")
            return
        try:
            idx = Index.open(self.index_path)
        except db.DatabaseError:
            return
        try:
            if idx.check_compatible() is not None:
                idx.close()
                self.index(embed_limit=self.cfg.lazy_embed_limit)
                notes.append("rebuilt the index (it was made by another clawmem version)")
                return
            plan = plan_sync(self.scan(), idx.file_states())
            if plan.empty:
                return
            try:
                lock = try_write_lock(self.memory_dir)
            except OSError:
                lock = None
            if lock is None:
                notes.append("another process is writing the index; results may be a few seconds old")
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
                            idx, emb, batch=self.cfg.embed_batch, report=report,
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
        sync: bool = True,
        today: date | None = None,
    ) -> RecallResult:
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint="use one of: " + ", ".join(MODES))
        k = self.cfg.k if k is None else k
        if k < 1:
            raise UsageError(f"-k {k}: must be at least 1")
        today = today or date.today()
        kinds: tuple[str, ...] = ()
        if kind:
            raw = [kind] if isinstance(kind, str) else list(kind)
            kinds = tuple(x.strip().upper() if x.strip().lower() != "chunk" else "chunk" for x in raw)
            bad = [x for x in kinds if x not in {"W", "B", "O", "S", "chunk"}]
            if bad:
                raise UsageError(f"--kind {bad[0]}: unknown kind", hint="use W, B, O, S or chunk")
        filters = Filters(
            since=parse_since(since, today).isoformat() if since else None,
            until=parse_until(until, today).isoformat() if until else None,
            kinds=kinds,
            entity=entity.lstrip("@") if entity else None,
            path_prefix=path,
        )
        notes: list[str] = []
        if sync:
            self._lazy_sync(notes)
        if not self.index_path.exists():
            res = RecallResult(query, mode, "none", [])
            res.empty_reason = "no index yet: run `clawmem index` (the workspace may be read-only)"
            return res
        try:
            idx = Index.open(self.index_path, readonly=not os.access(self.memory_dir, os.W_OK))
        except db.DatabaseError as exc:
            raise StoreError(f"{self.index_path}: {exc}", hint="run `clawmem index --force`") from None
        try:
            degraded, vectors, emb = self._vector_state(idx, mode)
            try:
                result = run_recall(
                    idx,
                    query,
                    k=k,
                    mode=mode,
                    filters=filters,
                    embedder=emb,
                    fusion_name=self.cfg.fusion,
                    rrf_k=self.cfg.rrf_k,
                    candidate_multiplier=self.cfg.candidate_multiplier,
                    snippet_chars=self.cfg.snippet_chars,
                    decay_half_life_days=self.cfg.decay_half_life_days,
                    today=today,
                    degraded=degraded,
                )
            except db.DatabaseError as exc:
                raise StoreError(
                    f"{self.index_path}: {exc}", hint="run `clawmem index --force` to rebuild it"
                ) from None
            result.notes[:0] = notes
            result.vectors = vectors
            result.filters = {
                "since": filters.since, "until": filters.until, "kind": list(filters.kinds),
                "entity": filters.entity, "path": filters.path_prefix,
            }
            stale = plan_sync(self.scan(), idx.file_states())
            result.index = {
                "path": str(self.index_path),
                "stale_files": len(stale.added) + len(stale.changed) + len(stale.removed),
            }
            return result
        finally:
            idx.close()

    def _vector_state(self, idx: Index, mode: str):
        """(degraded reasons, vectors summary, embedder or None) for a recall."""
        degraded: list[str] = []
        counts = idx.counts()
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
        if not self.index_path.exists():
            out.update(clean=False, state="no index yet: run `clawmem index`")
            return out
        try:
            idx = Index.open(self.index_path, readonly=not os.access(self.memory_dir, os.W_OK))
            meta = idx.all_meta()
        except db.DatabaseError as exc:
            out.update(clean=False, state=f"index is corrupt ({exc}): `clawmem index` rebuilds it")
            return out
        try:
            plan = plan_sync(sc, idx.file_states())
            counts = idx.counts()
            compat = idx.check_compatible()
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
                "index_embedder": json.loads(meta["embedder_identity"]) if meta.get("embedder_identity") else None,
                "dims": int(meta["dims"]) if meta.get("dims") else None,
            }
            emb = self.embedder()
            if emb is not None:
                vec["model_path"] = str(emb.model_path)
                vec["configured_embedder"] = emb.identity.to_dict()
                vec["state"] = (
                    "mismatch: run `clawmem index`" if emb.identity.key() != meta.get("embedder")
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
