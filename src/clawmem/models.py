"""Which embedding model a workspace uses, and loading it (lazily: llama.cpp costs ~0.5 s)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import Config
from .errors import ModelError


@dataclass(frozen=True)
class ModelChoice:
    path: Path | None  # None: the bundled default, converted on first use
    query_prefix: str | None
    document_prefix: str | None

    @property
    def is_default(self) -> bool:
        return self.path is None


def model_choice(root: Path, cfg: Config) -> ModelChoice:
    path = None
    if cfg.model:
        p = Path(cfg.model).expanduser()
        path = p if p.is_absolute() else root / p
    return ModelChoice(path, cfg.query_prefix, cfg.document_prefix)


def load_embedder(root: Path, cfg: Config):
    """The configured embedder, or ModelError saying why it cannot be used."""
    from .embedders.llama import LlamaEmbedder

    choice = model_choice(root, cfg)
    path = choice.path
    if path is None:
        from .embedders.default import default_model_path

        path = default_model_path()
    if not path.exists():
        raise ModelError(
            f"{path}: model file not found",
            hint="fix `model` in clawmem.toml, or `clawmem model use PATH.gguf`",
        )
    return LlamaEmbedder(
        path, query_prefix=choice.query_prefix, document_prefix=choice.document_prefix
    )
