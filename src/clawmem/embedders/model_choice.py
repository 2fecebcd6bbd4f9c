"""Which embedding model a workspace uses, its identity, and loading it (lazily: llama.cpp costs
~0.5 s). ``clawmem model status|use`` are ``ingest/models.py``'s.

The ``model`` setting is empty (the default, multilingual-e5-small), the name of a
built-in model (``e5``, ``minilm``: see ``embedders.default``), or the path of a
GGUF embedding model, relative to the workspace or absolute.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.config import Config
from clawmem.embedders.default import DEFAULT, BuiltinModel, builtin
from clawmem.errors import ModelError

if TYPE_CHECKING:
    from clawmem.embedders.base import EmbedderIdentity
    from clawmem.embedders.llama import LlamaEmbedder


@dataclass(frozen=True)
class ModelChoice:
    path: Path | None  # a GGUF file; None for a built-in model
    builtin: BuiltinModel | None  # the built-in model, converted on first use
    query_prefix: str | None
    document_prefix: str | None

    @property
    def is_default(self) -> bool:
        return self.path is None and self.builtin is DEFAULT

    def file(self, *, convert: bool) -> Path | None:
        """The GGUF to load: the user's, or the built-in model's, converted now if ``convert``
        (else None while it has not been converted)."""
        if self.path is not None:
            return self.path
        from clawmem.embedders.default import builtin_model_path, converted_path

        assert self.builtin is not None
        return builtin_model_path(self.builtin) if convert else converted_path(self.builtin)

    def describe(self) -> dict | None:
        """Name, languages and licence of a built-in model (None for a user's GGUF)."""
        return self.builtin.describe() if self.builtin is not None else None


def model_choice(root: Path, cfg: Config) -> ModelChoice:
    value = (cfg.model or "").strip()
    if not value:
        return ModelChoice(None, DEFAULT, cfg.query_prefix, cfg.document_prefix)
    named = builtin(value)
    if named is not None and not value.lower().endswith(".gguf"):
        return ModelChoice(None, named, cfg.query_prefix, cfg.document_prefix)
    p = Path(value).expanduser()
    path = p if p.is_absolute() else root / p
    return ModelChoice(path, None, cfg.query_prefix, cfg.document_prefix)


def load_embedder(root: Path, cfg: Config) -> LlamaEmbedder:
    """The configured embedder, or ModelError saying why it cannot be used."""
    from clawmem.embedders.llama import LlamaEmbedder

    choice = model_choice(root, cfg)
    path = choice.file(convert=True)
    assert path is not None  # converting gives a file or raises ModelError
    if not path.exists():
        raise ModelError(
            f"{path}: model file not found",
            hint="fix `model` in clawmem.toml, or `clawmem model use e5|minilm|PATH.gguf`",
        )
    emb = LlamaEmbedder(
        path,
        query_prefix=choice.query_prefix,
        document_prefix=choice.document_prefix,
        n_threads=cfg.embed_threads or None,
    )
    emb.about = choice.describe()
    return emb


def configured_identity(root: Path, cfg: Config) -> EmbedderIdentity | None:
    """The identity of the configured model's vectors, read from its file's metadata without
    loading llama.cpp; None when that cannot tell (a built-in model not converted yet, a file
    missing or without its dimensions), and the model must be loaded to know."""
    from clawmem.embedders.model_identity import identity_of

    choice = model_choice(root, cfg)
    path = choice.file(convert=False)
    if path is None or not path.exists():
        return None
    try:
        return identity_of(path, choice.query_prefix, choice.document_prefix)
    except ModelError:
        return None
