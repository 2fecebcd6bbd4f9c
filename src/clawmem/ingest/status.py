"""``clawmem status``: what the index holds, whether it is in step with the Markdown, and why not.

Read-only: a stat scan of the workspace compared with the index (``sync.plan_sync``), the index's
meta table, the vector state against the configured model, and the watch daemon's state file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawmem.config import trust
from clawmem.ingest.indexing import Indexer
from clawmem.ingest.sync import chunking_key, plan_fresh
from clawmem.store import db, queries
from clawmem.store.index import ForeignIndex
from clawmem.text.shown_path import shown_path
from clawmem.transcripts import registry
from clawmem.transcripts.flushlog import last_flush

TOKENIZER = "fts5 porter+unicode61 over NFKC/casefolded/diacritic-free text; CJK as bigrams"


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """What ``clawmem status`` reports. The fields from ``schema_version`` to ``vectors`` are
    read from the index: None when there is none or it cannot be read (``state`` says why),
    and then left out of ``to_dict()``."""

    workspace: str
    index_path: str
    index_exists: bool
    index_bytes: int  # on disk, its WAL and shared-memory files included
    tokenizer: str
    files_on_disk: int
    sessions: dict  # folders, transcripts_on_disk, flushed, last_flush
    skipped: list[dict]  # {path, reason}: files this scan leaves out
    merged_sections: list[str]  # pages a git merge left as two clones' generated sections
    scopes: list[dict] | None = None  # {name, path, state}; None without read scopes
    # clawmem.toml's settings that lead outside the workspace, ignored until the user approves the
    # file (config/trust.py); None when nothing is held back.
    config_not_approved: dict | None = None
    watcher: str
    resident_embedder: dict
    query_path: str  # the NumPy query path: ready, off, or why not (embedders/resident/client.py)
    schema_version: str | None = None
    chunker_version: str | None = None
    normalizer_version: str | None = None
    last_sync_at: float | None = None
    files: int | None = None
    chunks: int | None = None
    facts: int | None = None
    changed_on_disk: dict | None = None  # added, modified, deleted
    problems: list[dict] | None = None  # malformed facts the index holds
    links: dict | None = None
    unreadable: list[dict] | None = None  # what the last sync skipped that this scan does not
    vectors: dict | None = None  # the vector state against the configured model
    clean: bool
    state: str

    def to_dict(self) -> dict:
        """``clawmem status --json``."""
        d: dict = {
            "workspace": self.workspace,
            "index_path": self.index_path,
            "index_exists": self.index_exists,
            "index_bytes": self.index_bytes,
            "tokenizer": self.tokenizer,
            "files_on_disk": self.files_on_disk,
            "sessions": self.sessions,
            # A file named with a credential is shown redacted, as everything printed is.
            "skipped": _shown_rows(self.skipped),
            "merged_sections": [shown_path(p) for p in self.merged_sections],
        }
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.config_not_approved is not None:
            d["config_not_approved"] = self.config_not_approved
        d["watcher"] = self.watcher
        d["resident_embedder"] = self.resident_embedder
        d["query_path"] = self.query_path
        if self.vectors is not None:  # the index was read
            d.update(
                schema_version=self.schema_version,
                chunker_version=self.chunker_version,
                normalizer_version=self.normalizer_version,
                last_sync_at=self.last_sync_at,
                files=self.files,
                chunks=self.chunks,
                facts=self.facts,
                changed_on_disk=None
                if self.changed_on_disk is None
                else {k: [shown_path(p) for p in v] for k, v in self.changed_on_disk.items()},
                problems=None if self.problems is None else _shown_rows(self.problems),
                links=self.links,
                unreadable=None if self.unreadable is None else _shown_rows(self.unreadable),
                vectors=self.vectors,
            )
        d["clean"] = self.clean
        d["state"] = self.state
        return d


def _shown_rows(rows: list[dict]) -> list[dict]:
    return [{**r, "path": shown_path(r["path"])} if "path" in r else r for r in rows]


def status(ix: Indexer) -> Status:
    """What the index holds and whether it is in step with the Markdown (``clawmem status``)."""
    sc = ix.scan()
    skipped = [{"path": s.relpath, "reason": s.reason} for s in sc.skipped]
    out: dict[str, Any] = {
        "workspace": str(ix.root),
        "index_path": str(ix.index_path),
        "index_exists": ix.index_path.exists(),
        "index_bytes": db_bytes(ix.index_path),
        "tokenizer": TOKENIZER,
        "files_on_disk": len(sc.files),
        # Transcript folders are read only when configured; their files count in files_on_disk,
        # as do the transcripts hooks named to `clawmem flush` (``flushed``, registry.py). A
        # hook's flush is silent: its last line in .memory/flush.log says whether it worked.
        "sessions": {
            "folders": list(ix.cfg.session_paths),
            "transcripts_on_disk": sum(1 for f in sc.files if f.relpath.startswith("sessions/")),
            "flushed": len(registry.load(ix.root)),
            "last_flush": last_flush(ix.memory_dir),
        },
        "skipped": skipped,
    }
    from clawmem.markdown.merging import merged_sections

    # Pages a git merge left as the union of two clones' generated sections, until reflect.
    out["merged_sections"] = merged_sections(ix.root)
    if ix.cfg.read_scopes:
        out["scopes"] = scope_states(ix)
    if ix.cfg.held_back:
        out["config_not_approved"] = {
            "ignored": list(ix.cfg.held_back),
            "note": trust.note(ix.cfg.held_back),
            "fix": trust.FIX,
        }
    from clawmem.ingest.watch import describe_watcher, watcher_status

    out["watcher"] = describe_watcher(watcher_status(ix.memory_dir))
    from clawmem.embedders.resident.client import query_path_status, status_of

    out["resident_embedder"] = status_of(ix.root, ix.cfg)
    out["query_path"] = query_path_status(ix.root, ix.cfg)
    if not ix.index_path.exists():
        return Status(**out, clean=False, state="no index yet: run `clawmem index`")
    try:
        idx = ix.open_for_read()
        meta = idx.all_meta()
    except db.DatabaseError as exc:
        if isinstance(exc, ForeignIndex):
            state = str(exc)
        elif db.is_corruption(exc):
            state = f"index is corrupt ({exc}): `clawmem index` rebuilds it"
        else:
            state = f"index unreadable ({exc}): check disk space and permissions"
        return Status(**out, clean=False, state=state)
    try:
        plan = plan_fresh(ix.root, sc, idx)
        counts = idx.counts()
        compat = idx.check_compatible(chunking_key(ix.cfg))
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
            links=queries.link_counts(idx),
            # What the last sync skipped, less what this scan skips anyway (listed once).
            unreadable=[s for s in json.loads(meta.get("skipped", "[]")) if s not in skipped],
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
        # The configured model as its file's metadata describes it: `status` loads no model
        # (1-2 s and ~300 MB for the default) unless only loading it can tell (not converted
        # yet, no dimensions in the file, or a file that fails to load: then it says why).
        configured = _configured(ix)
        if configured is None:
            emb = ix.supply.embedder()
            if emb is not None:
                configured = (emb.model_path, emb.identity, getattr(emb, "about", None))
        if configured is not None:
            path, identity, about = configured
            vec["model_path"] = str(path)
            vec["configured_embedder"] = identity.to_dict()
            vec["model"] = about  # name, languages, licence
            vec["state"] = (
                "mismatch: run `clawmem index`"
                if identity.key() != meta.get("embedder")
                else (f"{counts['pending']} pending" if counts["pending"] else "ok")
            )
        else:
            vec["state"] = f"off: {ix.supply.error}"
        vec["one_shot_search"] = _one_shot_search(ix.index_path, counts["vectors"], out)
        if compat:
            state = f"needs rebuild: {compat}"
        elif stale:
            state = f"stale: {stale} file(s) changed on disk since the last sync"
        else:
            state = "clean"
        return Status(**out, vectors=vec, clean=stale == 0 and compat is None, state=state)
    finally:
        idx.close()


def _one_shot_search(index_path: Path, vectors: int, out: dict) -> str:
    """How a one-shot recall's vector leg runs on this index: vec0's KNN (a small index), or
    the resident embedder's copy of the vectors (a large one), held or not (then vec0 scans
    every vector: slow, and said here as in `recall --json`'s degraded)."""
    from clawmem.store import vector_matrix

    if vectors < vector_matrix.REMOTE_MIN_ROWS:
        return "sqlite-vec KNN"
    want = str(index_path.resolve())
    for held in out["resident_embedder"].get("held_vectors") or []:
        if held.get("index") == want:
            size = held.get("lists_bytes") or held.get("matrix_bytes") or 0
            return f"the resident embedder's copy ({held['rows']:,} rows, {size / 1e6:,.0f} MB)"
    return (
        "degraded: the resident embedder holds no copy of this index's vectors yet (it loads "
        "them at the first recall); until then sqlite-vec scans every vector"
    )


def scope_states(ix: Indexer) -> list[dict]:
    """Each read scope ([scopes] in clawmem.toml) and whether recall can search it."""
    from clawmem.config import parse_scopes, scopes_origin

    out = []
    for name, root in parse_scopes(ix.cfg, ix.root).items():
        if not root.is_dir():
            state = f"not found: fix {scopes_origin(ix.cfg)}"
        elif not (root / ".memory" / "index.sqlite").exists():
            state = f"not indexed: run `clawmem -w {root} index`"
        else:
            state = "ok"
        out.append({"name": name, "path": str(root), "state": state})
    return out


def _configured(ix: Indexer) -> tuple[Path, Any, dict | None] | None:
    """(model file, identity, about) of the configured model, read without loading it; None
    when the model is loaded here already, vectors are off, or only loading it can tell."""
    if ix.supply.loaded is not None or not ix.cfg.vectors or ix.supply.error is not None:
        return None
    from clawmem.embedders.model_choice import configured_identity, model_choice

    identity = configured_identity(ix.root, ix.cfg)
    if identity is None:
        return None
    choice = model_choice(ix.root, ix.cfg)
    path = choice.file(convert=False)
    if path is None:
        return None
    return path, identity, choice.describe()


def db_bytes(path: Path) -> int:
    """The database's size on disk, its WAL and shared-memory files included."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except OSError:
            pass
    return total
