"""A deterministic embedder for tests and examples: no model file, no llama.cpp, microseconds.

``HashEmbedder`` hashes each word of a text (folded as the lexical index folds it) into one of
``dims`` buckets and L2-normalises the counts (a text without words has no vector, like a text a
real model cannot embed). Texts sharing words get a high cosine,
so plumbing (vector storage, the embedding cache, fusion, model switches, pending counts) can be
tested exactly and fast; what depends on meaning ("feline" finds "cat") needs the real model.

    mem = clawmem.open_workspace(path, embedder=HashEmbedder())
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from clawmem.embedders.base import EmbedderIdentity, EmbedResult, normalize
from clawmem.text.textnorm import tokens


class HashEmbedder:
    """Feature hashing of words; ``name`` and ``dims`` name its vector space (change either and
    the index sees a different model). ``embedded`` counts the texts it was asked to embed."""

    max_tokens = 512

    def __init__(
        self,
        *,
        dims: int = 256,
        name: str = "hash-test",
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        digest = hashlib.sha256(f"{name}:{dims}".encode()).hexdigest()
        # Prefixes are part of the identity, as with a real model: a new vector space.
        self.identity = EmbedderIdentity(
            provider="test",
            model=name,
            model_sha256=digest,
            dims=dims,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
            pooling="hash",
        )
        self.model_path = Path(f"<{name}>")
        self.about = {"name": name, "languages": "any (words only)", "licence": "MIT"}
        self.embedded = 0

    def _vector(self, text: str) -> np.ndarray | None:
        vec = np.zeros(self.identity.dims, dtype=np.float32)
        for word in tokens(text):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vec[h % self.identity.dims] += 1.0
        return normalize(vec)

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        self.embedded += len(texts)
        return EmbedResult([self._vector(t) for t in texts], truncated=0)

    def embed_query(self, text: str) -> np.ndarray | None:
        return self._vector(text)

    def close(self) -> None:
        pass
