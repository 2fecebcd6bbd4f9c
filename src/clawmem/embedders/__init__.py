"""Text embedders: a protocol, the llama.cpp implementation, and the bundled default.

Importing this package is cheap: its names are imported on first use (``__getattr__``), so a
process that only reads a model file's identity (``clawmem.embedders.model_choice``) never imports
NumPy, and llama_cpp and gguf are imported only when a model is opened or converted.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Embedder, EmbedderIdentity, EmbedResult
    from .convert import convert_sentence_transformers
    from .default import default_cache_dir, default_model_available, default_model_path
    from .llama import LlamaEmbedder

_WHERE = {
    "Embedder": "base",
    "EmbedderIdentity": "base",
    "EmbedResult": "base",
    "LlamaEmbedder": "llama",
    "convert_sentence_transformers": "convert",
    "default_cache_dir": "default",
    "default_model_available": "default",
    "default_model_path": "default",
}

__all__ = [
    "Embedder",
    "EmbedderIdentity",
    "EmbedResult",
    "LlamaEmbedder",
    "convert_sentence_transformers",
    "default_cache_dir",
    "default_model_available",
    "default_model_path",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
