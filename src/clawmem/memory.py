"""The library API: ``open_workspace`` and the ``Memory`` facade. The CLI is a thin shell around it.

    import clawmem
    mem = clawmem.open_workspace("~/notes")
    mem.index()
    result = mem.recall("what did we decide about payments?", since="30d", k=8)

``Memory`` only delegates; each concern lives in the module named after it: ``indexing`` (build,
sync, the lazy sync before a read), ``recall`` (the recall pipeline), ``retain``, ``status``,
``entities``, ``check``, ``reflect``, ``model_choice`` (which embedding model), and ``workspace``
(finding files, reading lines).
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from .config import Config, load_config
from .errors import ClawmemError, WorkspaceError
from .fusion import Ranking
from .index import Index
from .indexing import Indexer
from .results import RecallResult
from .sync import Progress, SyncReport
from .workspace import Scan, find_root, read_lines


def open_workspace(
    path: str | Path | None = None,
    *,
    environ: dict[str, str] | None = None,
    embedder=None,
) -> Memory:
    """Open the workspace at ``path`` (or found from $CLAWMEM_WORKSPACE / the current folder).

    ``embedder``: use this embedder (anything with ``identity``, ``embed_query`` and
    ``embed_documents``, see embedders/base.py; ``embedders.testing.HashEmbedder`` for tests)
    instead of loading the configured model."""
    root = find_root(Path(path) if path is not None else None)
    return Memory(root, load_config(root, environ), embedder=embedder)


class Memory:
    """One workspace: its Markdown, its index and its embedding model."""

    def __init__(self, root: Path, cfg: Config, *, embedder=None) -> None:
        self.indexer = Indexer(root, cfg, embedder=embedder)
        self.root = root
        self.memory_dir = self.indexer.memory_dir
        self.index_path = self.indexer.index_path

    # ------------------------------------------------------------------ configuration, model
    @property
    def cfg(self) -> Config:
        return self.indexer.cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:
        self.indexer.cfg = cfg  # same model: options such as debounce or sync-on-read

    def reconfigure(self, cfg: Config | None = None, *, embedder=None) -> None:
        """Use ``cfg`` (default: ``clawmem.toml`` read again) and load the model again when next
        needed (or use ``embedder``)."""
        self.indexer.reconfigure(cfg or load_config(self.root), embedder=embedder)

    def embedder(self):
        """The embedding model, loaded once; None (and ``embedder_error``) when unusable."""
        return self.indexer.embedder()

    @property
    def embedder_error(self) -> str | None:
        return self.indexer.embedder_error

    def scan(self) -> Scan:
        """The memory files of the workspace (and what was left out, with reasons)."""
        return self.indexer.scan()

    def prepare_memory_dir(self) -> None:
        """Create ``.memory/`` (git-ignored) if needed."""
        self.indexer.prepare_memory_dir()

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
        return self.indexer.index(
            force=force,
            embed=embed,
            embed_limit=embed_limit,
            progress=progress,
            lock_timeout=lock_timeout,
        )

    def index_locked(self, *, embed_limit: int | None = None) -> SyncReport:
        """``index`` for a caller that already holds the workspace's write lock."""
        return self.indexer.index_locked(embed_limit=embed_limit)

    def open_index(self) -> Index:
        """The index, opened for reading (close it); raises ``db.DatabaseError``."""
        return self.indexer.open_for_read()

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
        source: str | None = None,
        expand: bool = False,
    ) -> RecallResult:
        """Search memory. Filters (time, kind, entity, path, as-of, source) apply before ranking
        limits; ``source`` is "memory" (the Markdown), "sessions" (transcripts) or "all" (None).
        ``budget`` packs the best results into about that many tokens. ``ranking`` overrides the
        ranking's numbers (for experiments; results then name it ``…+custom``). ``expand`` adds
        the notes one link away from the best hits, after them, each marked with the link that
        reached it (``Hit.via``)."""
        from .recall import recall

        return recall(
            self.indexer,
            query,
            k=k,
            mode=mode,
            since=since,
            until=until,
            kind=kind,
            entity=entity,
            path=path,
            as_of=as_of,
            budget=budget,
            sync=sync,
            today=today,
            ranking=ranking,
            source=source,
            expand=expand,
        )

    # ------------------------------------------------------------------ links
    def links(self, note: str) -> dict:
        """A note's outgoing links and backlinks with types, lines and context (``clawmem
        links``). ``note``: a workspace path or a name a link may use ("Peter", "@Peter")."""
        from .graph import links_of

        return links_of(self.indexer, note)

    def graph(self, *, mentions: bool = True) -> dict:
        """The link graph: nodes (notes, entity pages) and edges (resolved links by type)."""
        from .graph import graph_data

        return graph_data(self.indexer, mentions=mentions)

    # ------------------------------------------------------------------ status
    def status(self) -> dict:
        """What the index holds and whether it is in step with the Markdown (``clawmem status``)."""
        from .status import status

        return status(self.indexer)

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
        from .retain import retain

        return retain(
            self.indexer,
            text,
            kind=kind,
            confidence=confidence,
            entities=entities,
            day=day,
            allow_secret=allow_secret,
            today=today,
        )

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
        now: datetime | None = None,
    ):
        """Update entity pages, opinions and MEMORY.md proposals from the facts, and write an episode
        page for each finished conversation (see reflect.py, episodes.py; ``now`` decides which
        conversations are finished). Returns a ``ReflectResult``; raises ``ReflectConflict`` when
        a hand edit would be lost."""
        from .reflect import run_reflect
        from .timeexpr import parse_since

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
            now=now,
        )

    # ------------------------------------------------------------------ entities and check
    def entities(self) -> list[dict]:
        """Every entity with its fact count, last mention and page (if any)."""
        from .entities import list_entities

        return list_entities(self.indexer)

    def check(self) -> list[dict]:
        """Malformed facts in the workspace, read fresh from the Markdown (not from the index)."""
        from .check import check

        return check(self.indexer)

    # ------------------------------------------------------------------ model
    def model_status(self) -> dict:
        """The configured embedding model: name, languages, licence, identity, index match."""
        from .model_choice import model_status

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
        from .model_choice import use_model

        return use_model(self, target, query_prefix=query_prefix, document_prefix=document_prefix)

    # ------------------------------------------------------------------ get
    def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> dict:
        """Lines of a memory file with their citation (``clawmem get``); for a transcript
        (``sessions/…``), what was said in those lines. Credentials come back ``[redacted]``."""
        from .sessions import is_transcript_path, read_messages

        if is_transcript_path(path):
            return read_messages(self.root, self.cfg, path, from_line=from_line, lines=lines)
        return read_lines(
            self.root, path, from_line=from_line, lines=lines, extra_paths=self.cfg.extra_paths
        )


__all__ = ["Memory", "open_workspace", "ClawmemError", "WorkspaceError"]
