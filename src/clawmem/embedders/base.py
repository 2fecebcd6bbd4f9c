"""What every embedder promises, independent of the engine behind it.

The index stores vectors next to an ``EmbedderIdentity.key()``; two vectors are
only comparable when their keys match, so the key must change whenever anything
that moves a vector changes: the weights, the dimensions, the prefixes, the pooling.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

from clawmem.text.records import as_json

if TYPE_CHECKING:
    import array

    import numpy as np


@dataclass(frozen=True)
class EmbedderIdentity:
    """Everything that determines which vector space an embedder produces."""

    provider: str  # "llama.cpp"
    model: str  # display name, e.g. "all-MiniLM-L6-v2"
    model_sha256: str  # sha256 of the model file, hex
    dims: int
    query_prefix: str
    document_prefix: str
    pooling: str  # "mean" | "cls" | "last"
    normalization: str = ""  # text normalisation before tokenising: "" (none) | "nfkc"

    def key(self) -> str:
        """A short, stable string naming the vector space.

        The display name is included for humans reading the index meta table; the
        hash prefix is what actually distinguishes files. Prefixes and pooling are
        folded into one short digest because they can be long and arbitrary text;
        the normalisation joins them only when set, so keys of models without one
        stay what they were.
        """
        parts = [self.query_prefix, self.document_prefix, self.pooling]
        if self.normalization:
            parts.append(self.normalization)
        knobs = json.dumps(parts, ensure_ascii=False)
        knob_hash = hashlib.sha256(knobs.encode("utf-8")).hexdigest()[:8]
        return f"{self.provider}:{self.model}:{self.model_sha256[:16]}:{self.dims}:{knob_hash}"

    def to_dict(self) -> dict:
        return as_json(self)


@dataclass(frozen=True)
class EmbedResult:
    """Vectors for a batch of documents, in input order.

    A ``None`` entry means the model produced a non-finite or all-zero vector for
    that input; callers count and report these instead of indexing garbage.
    """

    vectors: list[np.ndarray | None]  # float32, L2-normalised, shape (dims,)
    truncated: int  # inputs so long that even windowing could not cover them, so cut
    windowed: int = 0  # inputs longer than the model context, embedded window by window


@runtime_checkable
class Embedder(Protocol):
    identity: EmbedderIdentity
    model_path: Path
    max_tokens: int

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        """Embed documents (document prefix and normalisation applied, batched internally).

        Inputs longer than ``max_tokens`` are embedded whole, window by window."""
        ...

    def embed_query(self, text: str) -> np.ndarray | None:
        """Embed one search query (query prefix applied)."""
        ...

    def close(self) -> None: ...


# A query's vector: float32, as NumPy gives it (a model loaded here) or as an ``array.array`` (lent
# by another process, so that a process that borrows never imports NumPy).
Vector = Union["np.ndarray", "array.array"]


class VectorSource(Protocol):
    """What a query or the few units of an edit need: vectors of one identity, from a model
    loaded here (an ``Embedder``) or lent by another process (``resident.client.Borrowed``:
    float32 ``array.array``s, so that a process that borrows never imports NumPy)."""

    identity: EmbedderIdentity

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult: ...

    def embed_query(self, text: str) -> Vector | None: ...


def normalize(vec: np.ndarray) -> np.ndarray | None:
    """L2-normalise to float32, or ``None`` for a vector that cannot be trusted."""
    import numpy as np  # here: reading a model's identity (``EmbedderIdentity``) needs no NumPy

    vec = np.asarray(vec, dtype=np.float32)
    if not np.all(np.isfinite(vec)):
        return None
    norm = float(np.linalg.norm(vec))
    if norm == 0.0 or not np.isfinite(norm):
        return None
    return vec / norm
