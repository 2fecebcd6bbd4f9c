"""Where one workspace's vectors come from: the one owner of its embedding model.

``EmbedderSupply`` is built from the workspace root, its settings and its ``.memory/`` folder. It
knows which model the settings choose (``model_choice.py``), loads it once in this process when it
must (and keeps why it could not), and otherwise lends a vector from elsewhere, cheapest first:

1. a running watcher of the workspace, which keeps the model loaded (``.memory/watch.sock``);
2. the user's resident embedder (``resident/``), started if none runs;
3. the NumPy query path (``query_path.py``) for a query while neither can answer at once;
4. the model loaded here after all (the same file, so the same vectors).

Who asks: a recall's vector leg (``for_query``), ``context``'s null level (``query_embedder``), a
sync embedding the few units of an edit (``for_documents``) or a whole workspace (``embedder``),
``clawmem mcp`` at start (``warm_up``). The index's life cycle is ``ingest/indexing.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.config import Config
from clawmem.errors import ModelError

if TYPE_CHECKING:
    from clawmem.embedders.base import (
        Embedder,
        EmbedderIdentity,
        EmbedResult,
        Vector,
        VectorSource,
    )
    from clawmem.embedders.resident.client import Borrowed


class EmbedderSupply:
    """One workspace's embedding model: chosen by ``cfg``, loaded at most once, or borrowed."""

    def __init__(
        self, root: Path, cfg: Config, memory_dir: Path, *, embedder: Embedder | None = None
    ) -> None:
        self.root = root
        self.cfg = cfg  # the same model's other options may change under it (``Memory.cfg``)
        self.memory_dir = memory_dir
        self._embedder = embedder
        self._error: str | None = None
        # Queries' vectors from a watcher or the resident embedder, shared by this process's
        # borrowed embedders: the prompt hook embeds its message for two recalls and its null level.
        self._borrowed_vectors: dict = {}

    def reconfigure(self, cfg: Config, *, embedder: Embedder | None = None) -> None:
        """Use ``cfg`` from now on; the model is loaded again when next needed (or ``embedder``)."""
        self.cfg = cfg
        self._embedder, self._error = embedder, None

    # ------------------------------------------------------------------ the model in this process
    def embedder(self) -> Embedder | None:
        """The embedding model, loaded here once; None (and ``error``) when unusable."""
        if self._embedder is None and self._error is None:
            if not self.cfg.vectors:
                where = self.cfg.sources.get("vectors", "default")
                self._error = f"vectors are turned off (vectors = false, {where})"
            else:
                from clawmem.embedders.model_choice import load_embedder

                try:
                    self._embedder = load_embedder(self.root, self.cfg)
                except ModelError as exc:
                    self._error = f"embedding model unavailable: {exc.message}"
        return self._embedder

    @property
    def error(self) -> str | None:
        """Why there is no model (vectors off, the model unavailable); None until it is known."""
        return self._error

    @property
    def loaded(self) -> Embedder | None:
        """The embedding model if this process has loaded it already, else None (never loads)."""
        return self._embedder

    def declared_identity(self) -> EmbedderIdentity | None:
        """The identity of the vectors this workspace asks for: the loaded model's, else read
        from the model file's metadata without loading it; None when vectors are off or only
        loading the model can tell (then ``embedder()`` is asked, and says why if it fails)."""
        if self._embedder is not None:
            return self._embedder.identity
        if not self.cfg.vectors or self._error is not None:
            return None
        from clawmem.embedders.model_choice import configured_identity

        return configured_identity(self.root, self.cfg)

    # ------------------------------------------------------------------ vectors from elsewhere
    def borrowed(self, key: str | None) -> Borrowed | None:
        """An embedder of the vector space ``key`` (the index's) that does not load the model in
        this process: a query's vector from a running watcher, else from the user's resident
        embedder (started if none runs), else the NumPy query path, loading the model here only
        if none can give it. None when the model is loaded here already, vectors are off, the
        configured model (known from its file's metadata) is not the one of ``key``, or neither
        a watcher nor the resident embedder can serve: then ``embedder()`` loads it, or says why
        not."""
        if self._embedder is not None or self._error is not None or not key:
            return None
        if not self.cfg.vectors:
            return None
        from clawmem.embedders.model_choice import configured_identity
        from clawmem.embedders.resident import client
        from clawmem.embedders.resident.protocol import WATCHER_SOCKET

        identity = configured_identity(self.root, self.cfg)
        if identity is None or identity.key() != key:
            return None
        spec = client.spec_for(self.root, self.cfg, identity)
        watcher = self.memory_dir if (self.memory_dir / WATCHER_SOCKET).exists() else None
        if spec is None and watcher is None:
            return None
        return client.Borrowed(
            identity,
            watcher_dir=watcher,
            spec=spec,
            load=self.embedder,
            load_error=lambda: self._error,
            memo=self._borrowed_vectors,
            quick=self.cfg.query_path,
        )

    def for_query(self, key: str | None) -> VectorSource | None:
        """The embedder of a recall's query vector against an index of the vector space ``key``:
        the model if this process loaded it, else one borrowed (the resident embedder, if it must
        start, is started now, so it loads during the recall's lexical leg), else the model
        loaded here. None (and ``error``) when vectors are unusable."""
        if self._embedder is not None:
            return self._remembered(self._embedder)
        emb = self.borrowed(key)
        if emb is not None:
            emb.start()
            return emb
        loaded = self.embedder()
        return self._remembered(loaded) if loaded is not None else None

    def query_embedder(self) -> VectorSource | None:
        """The model if this process loaded it, else an embedder borrowed for the configured
        model (its identity read from the file), else the model loaded here."""
        if self._embedder is None and self._error is None and self.cfg.vectors:
            identity = self.declared_identity()
            emb = self.borrowed(identity.key()) if identity is not None else None
            if emb is not None:
                return emb
        loaded = self.embedder()
        return self._remembered(loaded) if loaded is not None else None

    def _remembered(self, model: Embedder) -> VectorSource:
        """``model`` with its query vectors shared by this process's searches, as a borrowed
        embedder's are: ``context`` embeds its message once for its two searches and its null
        level, whichever process gives the vector."""
        return _Remembered(model, self._borrowed_vectors)

    def for_documents(self, count: int, key: str | None) -> VectorSource | None:
        """The embedder for ``count`` pending units of the vector space ``key``: for the few of
        an edit, the resident embedder's (this process then never loads the model: 1-2 s of a
        0.1 s sync), else the model loaded here."""
        from clawmem.embedders.resident.protocol import MAX_DOCUMENTS

        if count <= MAX_DOCUMENTS:
            emb = self.borrowed(key)
            if emb is not None:
                return emb
        return self.embedder()

    def warm_up(self) -> None:
        """Make this process's first query vector quick: the resident embedder started (not
        waited for), else the model loaded here."""
        if self._embedder is None and self._error is None and self.cfg.vectors:
            identity = self.declared_identity()
            emb = self.borrowed(identity.key()) if identity is not None else None
            if emb is not None:
                emb.start()
                return
        self.embedder()


_MEMO_MAX = 16  # query vectors a process keeps (as client.Borrowed keeps those it borrowed)


class _Remembered:
    """The model loaded here, each query text embedded once per process (documents pass
    through); the vectors kept in the supply's memo, keyed by identity and text."""

    def __init__(self, model: Embedder, memo: dict) -> None:
        self._model = model
        self.identity = model.identity
        self._memo = memo

    def embed_query(self, text: str) -> Vector | None:
        key = (self.identity.key(), text)
        if key not in self._memo:
            if len(self._memo) >= _MEMO_MAX:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = self._model.embed_query(text)
        return self._memo[key]

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        return self._model.embed_documents(texts)

    def __getattr__(self, name: str) -> object:
        return getattr(self._model, name)
