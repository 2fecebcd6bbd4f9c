"""Text embedders: a protocol, the llama.cpp implementation, and the bundled default.

Importing this package is cheap: llama_cpp and gguf are imported only when a
model is opened or converted.
"""

from .base import Embedder, EmbedderIdentity, EmbedResult
from .convert import convert_sentence_transformers
from .default import default_cache_dir, default_model_available, default_model_path
from .llama import LlamaEmbedder

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
