"""The NumPy query path: a query's vector in a cold process without loading llama.cpp.

Loading the default model through llama.cpp costs ~1 s before the first vector (0.13 s to import
``llama_cpp``, ~0.85 s to build its 250,037-piece vocabulary), against ~20 ms for the embedding
itself (issue 29). A process whose first hybrid call finds no watcher and no resident embedder
ready embeds its query here instead, in about 0.2 s of CPU from a cold start (docs/benchmarks.md):
the unigram tokenizer (``ugm``) looks up only the query's substrings in a SQLite table, and the
BERT forward pass (``numpy_bert``) runs on the GGUF's own weights, memory-mapped. Documents stay
on llama.cpp.

The cache, ``<model>.qpath.sqlite`` beside the model: the vocabulary (piece, id, score), the
tensors' places in the GGUF and the hyper-parameters, keyed by the model file's size, mtime and
sha256. It is built outside any query's path -- when a built-in model is converted, and by the
resident embedder once its model is loaded -- and a query finding it absent or stale simply
does not use this path. A GGUF this path does not reproduce (not a mean-pooled ``bert`` with a
unigram vocabulary: all-MiniLM's WordPiece, for one) gets a cache that says why, so it is not
examined again.

The vectors are llama.cpp's to a cosine above 0.9999 (0.9998 for the default's 4-bit layers, whose
matrix products llama.cpp feeds int8-rounded inputs: ``numpy_bert._q8_0``) and the token ids
identical, checked on
every evaluation text by ``python -m benchmarks.suites.query_path`` and on a sample in
``tests/test_query_path.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from clawmem.errors import ModelError

if TYPE_CHECKING:
    from clawmem.embedders.base import EmbedderIdentity
    from clawmem.embedders.gguf_header import Layout

FORMAT = 2  # 2: the 4-bit layers expanded beside the cache (``expanded_path``)
NAME = "numpy query path"
_POOLING_MEAN = 1
_MAX_TOKENS_CAP = 2048  # as llama.MAX_TOKENS_CAP
_CHARS_PER_TOKEN_BOUND = 50  # as llama._CHARS_PER_TOKEN_BOUND
_MAX_WINDOWS = 16  # as llama._MAX_WINDOWS
_TOKENIZER_ARRAYS = frozenset(
    {
        "tokenizer.ggml.tokens",
        "tokenizer.ggml.scores",
        "tokenizer.ggml.token_type",
        "tokenizer.ggml.precompiled_charsmap",
    }
)
_TOP_TENSORS = (
    "token_embd.weight",
    "position_embd.weight",
    "token_types.weight",
    "token_embd_norm.weight",
    "token_embd_norm.bias",
)


def cache_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + ".qpath.sqlite")


def expanded_path(model_path: Path) -> Path:
    """The model's 4-bit layers expanded to float32 (numpy_bert.expand_layers), beside the
    cache: mapped by a cold process instead of expanded by it (0.11 s of CPU for the default
    model, 85 MB of disk)."""
    return model_path.with_name(model_path.name + ".qpath.f32")


# --------------------------------------------------------------------------- building the cache
def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"format": FORMAT, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def fresh(model_path: Path) -> bool:
    """Whether the cache beside ``model_path`` is there and of this very file (built or not)."""
    try:
        with _connect(cache_path(model_path)) as db:
            meta = dict(db.execute("SELECT key, value FROM meta"))
        stamp = json.loads(meta["stamp"])
    except (sqlite3.Error, OSError, KeyError, ValueError):
        return False
    try:
        return bool(stamp == _stamp(model_path))
    except OSError:
        return False


def ensure(model_path: Path, sha256: str) -> str | None:
    """Build the cache for ``model_path`` unless it is fresh; returns why the model is not
    supported (recorded in the cache too), or None. Best effort: a read-only folder only leaves
    the path unused. A few seconds for the default model: never on a query's path."""
    model_path = Path(model_path)
    if fresh(model_path):
        return None
    try:
        build(model_path, sha256)
        with _connect(cache_path(model_path)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'unsupported'").fetchone()
    except (OSError, sqlite3.Error) as exc:
        return f"could not write {cache_path(model_path)}: {exc}"
    except (ValueError, KeyError, TypeError, struct.error) as exc:  # a GGUF read_layout rejects
        return f"could not read {model_path}: {exc}"
    return row[0] if row else None


def build(model_path: Path, sha256: str) -> Path:
    """Write ``<model>.qpath.sqlite`` atomically (a temporary file renamed over it)."""
    import clawmem.embedders.ugm as ugm  # the module itself: not the package's lazy facade
    from clawmem.embedders.gguf_header import read_layout

    stamp = _stamp(model_path)
    layout = read_layout(model_path, _TOKENIZER_ARRAYS)
    why, meta, rows = _describe(layout, ugm)
    target = cache_path(model_path)
    if not why:
        meta = {**meta, **_expand(model_path, meta["tensors"])}
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        db = sqlite3.connect(tmp)
        with db:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute(
                "CREATE TABLE vocab (piece TEXT PRIMARY KEY, id INTEGER NOT NULL, "
                "score REAL NOT NULL) WITHOUT ROWID"
            )
            meta = {**meta, "stamp": stamp, "sha256": sha256}
            if why:
                meta["unsupported"] = why
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in meta.items()],
            )
            db.executemany("INSERT INTO vocab VALUES (?, ?, ?)", rows)
        db.close()
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _expand(model_path: Path, tensors: dict) -> dict:
    """The expanded layers written atomically beside the cache, and what the cache records of
    them: their offsets and the file's stamp (a file that no longer matches is not used). No
    4-bit layers, nothing written."""
    from clawmem.embedders.numpy_bert import GGML_Q4_0, expand_layers

    target = expanded_path(model_path)
    if not any(kind == GGML_Q4_0 for _shape, kind, _offset in tensors.values()):
        target.unlink(missing_ok=True)
        return {}
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        offsets = expand_layers(model_path, tensors, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    return {"expanded": {"offsets": offsets, "size": st.st_size, "mtime_ns": st.st_mtime_ns}}


def _describe(layout: Layout, ugm: ModuleType) -> tuple[str | None, dict, list]:
    """(why unsupported or None, meta, vocabulary rows) for a GGUF's layout."""
    from clawmem.embedders.numpy_bert import BLOCK_TENSORS, SUPPORTED_TYPES

    f = layout.fields
    arch = f.get("general.architecture")
    if arch != "bert":
        return f"architecture {arch!r} (only bert)", {}, []
    if f.get("bert.pooling_type", _POOLING_MEAN) != _POOLING_MEAN:
        return "its pooling is not mean", {}, []
    if f.get("bert.attention.causal"):
        return "its attention is causal", {}, []
    if layout.arrays.get("tokenizer.ggml.precompiled_charsmap"):
        return "its tokenizer has a precompiled charsmap", {}, []
    tokens = layout.arrays.get("tokenizer.ggml.tokens") or []
    scores = layout.arrays.get("tokenizer.ggml.scores") or []
    types = layout.arrays.get("tokenizer.ggml.token_type") or []
    why = ugm.supported(f, types, tokens)
    if why:
        return why, {}, []
    layers = int(f["bert.block_count"])
    names = [*_TOP_TENSORS] + [f"blk.{i}.{t}" for i in range(layers) for t in BLOCK_TENSORS]
    tensors: dict[str, list] = {}
    for name in names:
        t = layout.tensors.get(name)
        if t is None:
            return f"it has no tensor {name}", {}, []
        if t.ggml_type not in SUPPORTED_TYPES:
            return f"tensor {name} is of ggml type {t.ggml_type}", {}, []
        tensors[name] = [list(t.shape), t.ggml_type, t.offset]
    if len(tokens) != len(scores) or len(tokens) != len(types):
        return "its vocabulary arrays differ in length", {}, []
    if tensors["token_embd.weight"][0][1] != len(tokens):
        return "its token table and vocabulary differ in size", {}, []
    rows, unknown_score, longest = ugm.vocab_rows(tokens, scores, types)
    context = int(f.get("bert.context_length") or 512)
    if not (
        f.get("tokenizer.ggml.add_bos_token", True) and f.get("tokenizer.ggml.add_eos_token", True)
    ):
        return "its tokenizer does not add both start and end tokens", {}, []
    meta: dict[str, Any] = {
        "tensors": tensors,
        "hyper": {
            "layers": layers,
            "heads": int(f["bert.attention.head_count"]),
            "eps": float(f["bert.attention.layer_norm_epsilon"]),
            "context": context,
            "dims": int(f["bert.embedding_length"]),
        },
        "tokenizer": {
            "bos": int(f.get("tokenizer.ggml.bos_token_id", 0)),
            "eos": int(f.get("tokenizer.ggml.eos_token_id", 2)),
            "unk": int(f.get("tokenizer.ggml.unknown_token_id", 3)),
            "unknown_score": unknown_score,
            "max_piece_chars": longest,
            "add_space_prefix": bool(f.get("tokenizer.ggml.add_space_prefix", True)),
            "merge_spaces": bool(f.get("tokenizer.ggml.remove_extra_whitespaces", False)),
        },
    }
    return None, meta, rows


def _connect(path: Path) -> sqlite3.Connection:
    # Read-only and immutable: no journal, no lock files next to a shared model.
    return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)


# --------------------------------------------------------------------------- the embedder
class QueryPathEmbedder:
    """Query vectors for ``identity`` (a ``LlamaEmbedder``'s of ``model_path``) from the cache;
    ``open`` says why not when it cannot."""

    def __init__(
        self, model_path: Path, identity: EmbedderIdentity, db: sqlite3.Connection, meta: dict
    ):
        from clawmem.embedders.ugm import UgmTokenizer

        self.identity = identity
        self.model_path = model_path
        hyper = json.loads(meta["hyper"])
        tok = json.loads(meta["tokenizer"])
        self._tok = UgmTokenizer(
            db,
            bos=tok["bos"],
            eos=tok["eos"],
            unk=tok["unk"],
            unknown_score=tok["unknown_score"],
            max_piece_chars=tok["max_piece_chars"],
            add_space_prefix=tok["add_space_prefix"],
            merge_spaces=tok["merge_spaces"],
        )
        self.max_tokens = min(hyper["context"], _MAX_TOKENS_CAP)
        self._hyper = hyper
        self._tensors = meta["tensors"]
        self._expanded = json.loads(meta["expanded"]) if "expanded" in meta else None
        self._model: Any = None

    @property
    def _bert(self) -> Any:
        """The encoder, made on first use: opening the path (to know it can serve) imports no
        NumPy, so a process whose resident embedder answers never pays for it."""
        if self._model is None:
            _import_numpy_single_threaded()
            from clawmem.embedders.numpy_bert import Hyper, NumpyBert

            h = self._hyper
            self._model = NumpyBert(
                self.model_path,
                json.loads(self._tensors),
                Hyper(h["layers"], h["heads"], h["eps"], h["context"]),
                self._expanded_layers(),
            )
        return self._model

    def _expanded_layers(self) -> tuple[Path, dict[str, int]] | None:
        """The expanded layers' file and offsets, if the cache recorded them and the file is
        still the one it recorded; else None (the encoder expands the layers itself)."""
        x = self._expanded
        if not x:
            return None
        path = expanded_path(self.model_path)
        try:
            st = path.stat()
        except OSError:
            return None
        if (st.st_size, st.st_mtime_ns) != (x["size"], x["mtime_ns"]):
            return None
        return path, x["offsets"]

    @classmethod
    def open(cls, model_path: Path, identity: EmbedderIdentity) -> QueryPathEmbedder | str:
        """The embedder, or why this path cannot serve ``identity`` now."""
        model_path = Path(model_path)
        try:
            db = _connect(cache_path(model_path))
            meta = dict(db.execute("SELECT key, value FROM meta"))
        except (sqlite3.Error, OSError):
            return "its cache is not built yet"
        try:
            if json.loads(meta["stamp"]) != _stamp(model_path):
                return "its cache is stale"
            if meta.get("unsupported"):
                return f"the model is not supported ({meta['unsupported']})"
            if meta["sha256"] != identity.model_sha256:
                return "its cache is of another model"
            if json.loads(meta["hyper"])["dims"] != identity.dims:
                return "its cache gives vectors of another size"
            if identity.provider != "llama.cpp" or identity.pooling != "mean":
                return "the vectors are not a llama.cpp mean-pooled model's"
            return cls(model_path, identity, db, meta)
        except (KeyError, ValueError, TypeError, OSError) as exc:
            return f"its cache is unreadable ({exc})"

    def windows(self, text: str, *, query: bool = True) -> list[list[int]]:
        """The token ids of ``text`` as ``LlamaEmbedder._tokenize`` gives them to llama.cpp: one
        window, or for a text longer than the context several that each keep the start and end
        tokens (at most ``_MAX_WINDOWS``)."""
        tokens = self._tok.encode(self._prepare(text, query=query))
        if len(tokens) <= self.max_tokens:
            return [tokens]
        body, width = tokens[1:-1], self.max_tokens - 2
        spans = range(0, len(body), width)
        return [[tokens[0], *body[i : i + width], tokens[-1]] for i in spans][:_MAX_WINDOWS]

    def _prepare(self, text: str, *, query: bool) -> str:
        from clawmem.embedders.llama import nfkc_prepare

        prefix = self.identity.query_prefix if query else self.identity.document_prefix
        text = prefix + text
        if self.identity.normalization == "nfkc":
            text = nfkc_prepare(text)
        limit = self.max_tokens * _CHARS_PER_TOKEN_BOUND * _MAX_WINDOWS // 4
        text = text[:limit]
        # As llama.py hands llama.cpp the text: UTF-8, a lone surrogate replaced.
        return text.encode("utf-8", errors="replace").decode("utf-8")

    def embed_query(self, text: str) -> Any:
        return self._embed(text, query=True)

    def embed_texts(self, texts: Sequence[str], *, query: bool) -> list[Any]:
        """Vectors as ``LlamaEmbedder`` makes them (for the benchmark's documents sample)."""
        return [self._embed(t, query=query) for t in texts]

    def _embed(self, text: str, *, query: bool) -> Any:
        """Raises OSError or ValueError when the cache or the model file fails it."""
        try:
            return self._embed_unchecked(text, query=query)
        except sqlite3.Error as exc:
            raise OSError(f"{cache_path(self.model_path)}: {exc}") from exc

    def _embed_unchecked(self, text: str, *, query: bool) -> Any:
        bert = self._bert
        import numpy as np

        from clawmem.embedders.base import normalize

        windows = self.windows(text, query=query)
        if len(windows) == 1:
            return normalize(bert.pooled(windows[0]))
        # As LlamaEmbedder: the windows' means weighted by their own tokens.
        total = np.zeros(bert.width, dtype=np.float64)
        for window in windows:
            total += bert.pooled(window).astype(np.float64) * max(1, len(window) - 2)
        return normalize(total)

    def close(self) -> None:
        pass


_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _import_numpy_single_threaded() -> None:
    """Import NumPy with its BLAS on one thread, if this process has not imported it yet.

    A query's matrices are a few rows: BLAS threads gain nothing, and when other processes hold
    the cores their spin-waits cost a lot (measured, load 12 on 2 cores: 0.4-1.7 s a forward
    pass on two threads, 0.14 s on one; llama.py's rule for a few-token batch is the same). The
    variables are read once, when the BLAS library loads, and are put back at once, so the
    processes this one starts (the resident embedder) are not affected."""
    if "numpy" in sys.modules:
        return
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    for k in _THREAD_VARS:
        os.environ.setdefault(k, "1")
    try:
        import numpy  # noqa: F401
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def open_or_why(model_path: Path, identity: EmbedderIdentity) -> QueryPathEmbedder | str:
    try:
        return QueryPathEmbedder.open(model_path, identity)
    except ModelError as exc:
        return exc.message
