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

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from clawmem.config import Config, load_config, trust_state
from clawmem.errors import ClawmemError, WorkspaceError
from clawmem.ingest.indexing import Indexer
from clawmem.ingest.sync import SyncReport
from clawmem.markdown.workspace import Lines, Scan, find_root
from clawmem.store.index import Index

P = ParamSpec("P")
R = TypeVar("R")


class _Lazy:
    """``module.name``, imported on its first call: every CLI start imports this module, and the
    recall pipeline alone would add tens of milliseconds to commands that never recall.
    ``inspect.signature`` (and so ``help`` and editors that ask at run time) imports it then and
    sees the real signature."""

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"See {module}.{name}."

    def _real(self) -> Callable[..., Any]:
        # __import__, not importlib.import_module: only the former shows in `python -X
        # importtime`, which tests/test_layering.py reads to see what a recall imports.
        return getattr(__import__(self._module, fromlist=[self.__name__]), self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._real()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._real())


if TYPE_CHECKING:  # the real signatures, for type checkers and editors
    from clawmem.config.trust import TrustState
    from clawmem.embedders.base import Embedder, VectorSource
    from clawmem.ingest.check import check as _check
    from clawmem.ingest.claude_memory import MemoryTool
    from clawmem.ingest.correct import correct as _correct
    from clawmem.ingest.importing import import_memory as _import_memory
    from clawmem.ingest.models import ModelStatus, ModelUsed
    from clawmem.ingest.retain import retain as _retain
    from clawmem.ingest.status import status as _status
    from clawmem.recall.entities import list_entities as _list_entities
    from clawmem.recall.export import export as _export
    from clawmem.recall.facts_list import entity_detail as _entity_detail
    from clawmem.recall.facts_list import list_facts as _list_facts
    from clawmem.recall.graph import graph_data as _graph_data
    from clawmem.recall.graph import links_of as _links_of
    from clawmem.recall.history import history as _history
    from clawmem.recall.pipeline import recall as _recall
    from clawmem.reflect.flush import flush as _flush
    from clawmem.reflect.forget import forget as _forget
    from clawmem.reflect.merged import rewrite_merged as _rewrite_merged
    from clawmem.reflect.pipeline import reflect as _reflect
    from clawmem.reflect.proposal_review import accept as _accept_proposal
    from clawmem.reflect.proposal_review import list_proposals as _list_proposals
    from clawmem.reflect.proposal_review import reject as _reject_proposal
    from clawmem.transcripts.sessions import TranscriptLines
else:
    _check = _Lazy("clawmem.ingest.check", "check")
    _list_facts = _Lazy("clawmem.recall.facts_list", "list_facts")
    _entity_detail = _Lazy("clawmem.recall.facts_list", "entity_detail")
    _history = _Lazy("clawmem.recall.history", "history")
    _list_entities = _Lazy("clawmem.recall.entities", "list_entities")
    _graph_data = _Lazy("clawmem.recall.graph", "graph_data")
    _links_of = _Lazy("clawmem.recall.graph", "links_of")
    # With read scopes ([scopes] in clawmem.toml) recall searches them too (recall/scopes.py).
    _recall = _Lazy("clawmem.recall.scopes", "recall_with_scopes")
    _retain = _Lazy("clawmem.ingest.retain", "retain")
    _correct = _Lazy("clawmem.ingest.correct", "correct")
    _import_memory = _Lazy("clawmem.ingest.importing", "import_memory")
    _export = _Lazy("clawmem.recall.export", "export")
    _status = _Lazy("clawmem.ingest.status", "status")
    _reflect = _Lazy("clawmem.reflect.pipeline", "reflect")
    _flush = _Lazy("clawmem.reflect.flush", "flush")
    _forget = _Lazy("clawmem.reflect.forget", "forget")
    _rewrite_merged = _Lazy("clawmem.reflect.merged", "rewrite_merged")
    _list_proposals = _Lazy("clawmem.reflect.proposal_review", "list_proposals")
    _accept_proposal = _Lazy("clawmem.reflect.proposal_review", "accept")
    _reject_proposal = _Lazy("clawmem.reflect.proposal_review", "reject")


def _on_indexer(func: Callable[Concatenate[Indexer, P], R]) -> Callable[Concatenate[Memory, P], R]:
    """A ``Memory`` method that calls ``func`` with the workspace's indexer and the caller's
    arguments: the facade only delegates, and its signature is ``func``'s (written once): type
    checkers read it through ``P``, ``inspect.signature`` through ``__wrapped__``."""

    def method(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return func(self.indexer, *args, **kwargs)

    method.__wrapped__ = func  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = func.__name__
    method.__doc__ = func.__doc__
    return method


def open_workspace(
    path: str | Path | None = None,
    *,
    environ: dict[str, str] | None = None,
    embedder: Embedder | None = None,
) -> Memory:
    """Open the workspace at ``path`` (or found from $CLAWMEM_WORKSPACE / the current folder).

    ``embedder``: use this embedder (anything with ``identity``, ``embed_query`` and
    ``embed_documents``, see embedders/base.py; ``embedders.testing.HashEmbedder`` for tests)
    instead of loading the configured model."""
    root = find_root(Path(path) if path is not None else None)
    return Memory(root, load_config(root, environ), embedder=embedder)


class Memory:
    """One workspace: its Markdown, its index and its embedding model."""

    def __init__(self, root: Path, cfg: Config, *, embedder: Embedder | None = None) -> None:
        self.indexer = Indexer(root, cfg, embedder=embedder)
        self.root = root
        self.memory_dir = self.indexer.memory_dir
        self.index_path = self.indexer.index_path

    def close(self) -> None:
        """Close the index connection kept between recalls (reopened by the next call)."""
        self.indexer.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ configuration, model
    @property
    def cfg(self) -> Config:
        return self.indexer.cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:
        self.indexer.cfg = cfg  # same model: options such as debounce or sync-on-read

    def reconfigure(self, cfg: Config | None = None, *, embedder: Embedder | None = None) -> None:
        """Use ``cfg`` (default: ``clawmem.toml`` read again) and load the model again when next
        needed (or use ``embedder``)."""
        self.indexer.reconfigure(cfg or load_config(self.root), embedder=embedder)

    def embedder(self) -> Embedder | None:
        """The embedding model, loaded once; None (and ``embedder_error``) when unusable."""
        return self.indexer.supply.embedder()

    def query_embedder(self) -> VectorSource | None:
        """An embedder for a query or two without loading the model here when another process
        holds it (``EmbedderSupply.query_embedder``); None (and ``embedder_error``) when unusable."""
        return self.indexer.supply.query_embedder()

    def warm_up(self) -> None:
        """Make this process's first query vector quick: start the user's resident embedder if
        it is on (this process then never loads the model for queries), else load the model."""
        self.indexer.supply.warm_up()

    @property
    def embedder_error(self) -> str | None:
        return self.indexer.supply.error

    def scan(self) -> Scan:
        """The memory files of the workspace (and what was left out, with reasons)."""
        return self.indexer.scan()

    def prepare_memory_dir(self) -> None:
        """Create ``.memory/`` (git-ignored) if needed."""
        self.indexer.prepare_memory_dir()

    # ------------------------------------------------------------------ index
    # Bring the index up to date; see ``Indexer.index``.
    index = _on_indexer(Indexer.index)

    def index_locked(self, *, embed_limit: int | None = None) -> SyncReport:
        """``index`` for a caller that already holds the workspace's write lock."""
        return self.indexer.index_locked(embed_limit=embed_limit)

    # A long-running process's own inotify journal: reads skip their stat pass when nothing
    # changed; see ``Indexer.follow_changes``.
    follow_changes = _on_indexer(Indexer.follow_changes)

    def open_index(self) -> Index:
        """The index, opened for reading (close it); raises ``db.DatabaseError``."""
        return self.indexer.open_for_read()

    # ------------------------------------------------------------------ recall
    # Search memory; see ``recall.recall`` (the arguments) and docs/python-api.md.
    recall = _on_indexer(_recall)

    # ------------------------------------------------------------------ links
    # A note's links and backlinks (``clawmem links``); the link graph (``clawmem graph``).
    links = _on_indexer(_links_of)
    graph = _on_indexer(_graph_data)

    # ------------------------------------------------------------------ status
    # What the index holds and whether it is in step with the Markdown (``clawmem status``).
    status = _on_indexer(_status)

    # ------------------------------------------------------------------ retain
    # Append a fact to the day's ``## Retain`` section and index it; see ``retain.retain``.
    retain = _on_indexer(_retain)
    # Retain the right statement, marked as superseding a wrong fact; see ``correct.correct``.
    correct = _on_indexer(_correct)

    # ------------------------------------------------------------------ reflect
    # Update entity pages, opinions and MEMORY.md proposals from the facts, and write an episode
    # page for each finished conversation; see ``reflect.pipeline.reflect``.
    reflect = _on_indexer(_reflect)

    # Rewrite, without a model, the generated sections a git merge left as two clones' union
    # (what the hooks run after a merge or rebase); see ``reflect.merged.rewrite_merged``.
    rewrite_merged = _on_indexer(_rewrite_merged)

    # Write a conversation's episode page and index its transcript now (an agent's hook, before
    # it compacts its context); see ``reflect.flush.flush``. Returns a ``FlushResult``.
    flush = _on_indexer(_flush)

    # Take lines out of memory for good (their Markdown, index rows, vectors, the pages that
    # repeat them), or with ``dry_run`` show exactly which; see ``reflect.forget``.
    forget = _on_indexer(_forget)
    # Facts proposed from conversations and notes at flush and reflect, for review: listed,
    # accepted (retained with the citation) or rejected for good; see
    # ``reflect.proposal_review``.
    list_proposals = _on_indexer(_list_proposals)
    accept_proposal = _on_indexer(_accept_proposal)
    reject_proposal = _on_indexer(_reject_proposal)

    # ------------------------------------------------------------------ entities and check
    # Every entity with its fact count, last mention and page; malformed facts and links.
    entities = _on_indexer(_list_entities)
    # The facts memory holds, without a question: filtered, newest first (``clawmem facts``);
    # and one entity's page and facts (``clawmem entities NAME``).
    facts = _on_indexer(_list_facts)
    entity = _on_indexer(_entity_detail)
    # Carry memory out (JSONL, OKF v0.2) and in (clawmem JSONL, OKF, Claude Code's auto memory,
    # basic-memory, mem0), previewed first; see ``recall.export`` and ``ingest.importing``.
    export = _on_indexer(_export)
    import_memory = _on_indexer(_import_memory)

    def export_lines(self) -> Iterator[str]:
        """Every fact as JSONL lines, oldest first (``clawmem export`` to stdout)."""
        from clawmem.recall.export import jsonl_lines

        return jsonl_lines(self.indexer)

    def memory_tool(self, writer: str = "claude-memory") -> MemoryTool:
        """Claude's memory tool (``memory_20250818``) over ``bank/memories/``: hand each tool
        call's input to ``.handle(...)``; see ``ingest.claude_memory`` and docs/agents.md."""
        from clawmem.ingest.claude_memory import MemoryTool

        return MemoryTool(self.indexer, writer)

    # How a fact (its chain of corrections) or an entity's facts came to be, and who wrote them.
    history = _on_indexer(_history)
    check = _on_indexer(_check)

    # ------------------------------------------------------------------ model
    def model_status(self) -> ModelStatus:
        """The configured embedding model: name, languages, licence, identity, index match."""
        from clawmem.ingest.models import model_status

        return model_status(self.indexer)

    def use_model(
        self,
        target: str | Path | None = None,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> ModelUsed:
        """Use ``target`` here: None (the default), a built-in name ("e5", "minilm") or a
        GGUF path, after checking it loads."""
        from clawmem.ingest.models import use_model

        return use_model(
            self.indexer, target, query_prefix=query_prefix, document_prefix=document_prefix
        )

    # ------------------------------------------------------------------ trust
    def trust_state(self) -> TrustState:
        """Whether this machine's user approved the workspace's clawmem.toml as it is now, and
        which of its settings lead outside the workspace (ignored until it is approved)."""
        return trust_state(self.root)

    def trust(self, *, revoke: bool = False) -> TrustState:
        """Approve the workspace's clawmem.toml as it is now (``revoke``: forget the approval),
        then read the settings again (``clawmem trust``)."""
        from clawmem.config import trust

        if revoke:
            trust.revoke(self.root)
        else:
            trust.approve(self.root)
        self.reconfigure()
        return self.trust_state()

    # ------------------------------------------------------------------ get
    def get(
        self, path: str, *, from_line: int | None = None, lines: int | None = None
    ) -> Lines | TranscriptLines:
        """Lines of a memory file with their citation (``clawmem get``); for a transcript
        (``sessions/…``), what was said in those lines. Credentials come back ``[redacted]``.
        ``path`` may be a citation (``memory/2025-11-27.md#L12-L20``): it names the lines unless
        ``from_line`` or ``lines`` are given; a plain path reads from line 1."""
        from clawmem.recall.lines import get_lines

        return get_lines(self.indexer, path, from_line=from_line, lines=lines)


__all__ = ["Memory", "open_workspace", "ClawmemError", "WorkspaceError"]
