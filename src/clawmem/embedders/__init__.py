"""Text embedders: a protocol, the llama.cpp implementation, and the bundled default.

Importing this package is cheap: llama_cpp and gguf are imported only when a
model is opened or converted.
"""

from clawmem.embedders.base import Embedder, EmbedderIdentity, EmbedResult
from clawmem.embedders.convert import convert_sentence_transformers
from clawmem.embedders.default import default_cache_dir, default_model_available, default_model_path
from clawmem.embedders.llama import LlamaEmbedder

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
