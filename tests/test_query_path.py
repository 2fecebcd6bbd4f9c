"""The NumPy query path (embedders/query_path.py, ugm.py, numpy_bert.py) against llama.cpp, on
the real default model: the same token ids on tricky texts, the same vectors, a cache that knows
when it is stale or of a model it cannot serve, and a cold CLI recall that uses it visibly.

The whole evaluation sets are checked by ``python -m benchmarks.suites.query_path``; this is the sample
that runs in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from clawmem.embedders import query_path
from clawmem.embedders.default import default_model_path
from clawmem.embedders.llama import LlamaEmbedder
from clawmem.embedders.ugm import ESCAPED_SPACE, normalize

from .conftest import copy_indexed
from .test_resident import embedder_pids, rt  # noqa: F401 - the fixture
from .test_watch import wait_until

TRICKY = [
    "",
    " ",
    "hello world",
    "  many   spaces   between  ",
    "tabs\tand\nnewlines\r\nand\u00a0no-break spaces",
    "emoji 😀🎉👩‍👩‍👧 and flags 🇻🇳",
    "CJK 中文測試 日本語のテキスト 한국어 문장",
    "combining e\u0301 a\u0308 o\u0323\u0302 and precomposed é ä ộ",
    "ligature ﬁ, full-width ＦＵＬＬ ｗｉｄｔｈ, ① ½ ㎏",
    "Tiếng Việt có dấu: đặt lịch họp ở Hà Nội",
    "العربية من اليمين إلى اليسار",
    "ภาษาไทยไม่มีช่องว่าง",
    "<s> </s> <unk> <mask> [SEP] [CLS] [PAD250002]",
    f"already escaped {ESCAPED_SPACE}space{ESCAPED_SPACE}{ESCAPED_SPACE}",
    "zero\u200bwidth\u200djoiner\ufeffbom \x00\x01\x07 controls \x7f",
    "a lone surrogate \ud800 from an undecodable file",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math 𝟙𝟚𝟛 and rare CJK 𠀀𪜀",
    "x" * 700,
    "word " * 1300,  # past the model's context: three windows
    "DEC-0054 v2.3.1-rc1 /usr/local/bin foo_bar.baz() #123 @peter 2025-11-17T09:30Z",
]


@pytest.fixture(scope="module")
def pair(model_cache):
    model = default_model_path(model_cache)
    llama = LlamaEmbedder(model)
    query_path.ensure(model, llama.identity.model_sha256)
    fast = query_path.QueryPathEmbedder.open(model, llama.identity)
    assert not isinstance(fast, str), fast
    yield llama, fast
    llama.close()


# The default model's layers are 4-bit: llama.cpp rounds each matrix product's input to int8
# blocks, which the NumPy path imitates (numpy_bert._q8_0) but not bit for bit; measured on these
# texts 0.99989-1.0 (0.9999+ with float32 layers).
COS_MIN = 0.9998


def llama_windows(llama: LlamaEmbedder, text: str, *, query: bool) -> list[list[int]]:
    prefix = llama._query_prefix if query else llama._document_prefix
    return llama._tokenize(llama._prepare(prefix + text))[0]


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_token_ids_are_llama_cpps(pair, text):
    llama, fast = pair
    for query in (True, False):
        assert fast.windows(text, query=query) == llama_windows(llama, text, query=query)


def test_vectors_are_llama_cpps(pair):
    llama, fast = pair
    for text in TRICKY:
        a = llama.embed_query(text)
        b = fast.embed_query(text)
        assert b.dtype == np.float32 and b.shape == a.shape
        assert float(np.dot(a, b)) >= COS_MIN, text[:60]
    docs = TRICKY[2:12]
    want = llama.embed_documents(docs).vectors
    got = fast.embed_texts(docs, query=False)
    assert min(float(np.dot(a, b)) for a, b in zip(want, got, strict=True)) >= COS_MIN


def test_a_sample_of_the_agent_memory_questions(pair):
    """Questions from benchmarks/questions (in the repository): ids and vectors."""
    llama, fast = pair
    root = Path(__file__).resolve().parents[1] / "benchmarks" / "questions"
    rows = [json.loads(x) for x in (root / "multilingual.jsonl").read_text().splitlines() if x]
    rows += [json.loads(x) for x in (root / "authored.jsonl").read_text().splitlines() if x][:20]
    texts = [r.get("query") or r.get("question") for r in rows][::3]
    assert len(texts) >= 40
    for text in texts:
        assert fast.windows(text) == llama_windows(llama, text, query=True), text
        assert float(np.dot(llama.embed_query(text), fast.embed_query(text))) >= COS_MIN, text


def test_normalisation_follows_llama_cpp():
    """Spaces escaped one for one, one prefix before the first word, none after the last."""
    e = ESCAPED_SPACE
    assert normalize("a  b ", add_space_prefix=True, merge_spaces=False) == f"{e}a{e}{e}b{e}"
    assert normalize("  a", add_space_prefix=True, merge_spaces=False) == f"{e}{e}{e}a"
    assert normalize("a  b ", add_space_prefix=True, merge_spaces=True) == f"{e}a{e}b"
    assert normalize("", add_space_prefix=True, merge_spaces=False) == ""


@pytest.fixture
def model_copy(model_cache, tmp_path) -> Path:
    """The default model copied into a folder of the test's own (with its sidecar, the same
    mtime): its query-path cache can be removed, made stale or damaged without touching the
    run's."""
    src = default_model_path(model_cache)
    folder = tmp_path / "models"
    folder.mkdir()
    for f in (src, src.with_name(src.name + ".sha256")):
        shutil.copy2(f, folder / f.name)
    return folder / src.name


def test_the_cache_is_built_once_and_known_stale_when_the_model_changes(model_copy):
    from clawmem.embedders.model_identity import identity_of

    ident = identity_of(model_copy)
    assert ident is not None
    assert query_path.QueryPathEmbedder.open(model_copy, ident) == "its cache is not built yet"
    assert query_path.ensure(model_copy, ident.model_sha256) is None
    cache = query_path.cache_path(model_copy)
    assert cache.exists() and query_path.fresh(model_copy)
    built = cache.stat().st_mtime_ns
    assert query_path.ensure(model_copy, ident.model_sha256) is None
    assert cache.stat().st_mtime_ns == built  # fresh: not built again
    assert not isinstance(query_path.QueryPathEmbedder.open(model_copy, ident), str)

    os.utime(model_copy, ns=(built, built + 10**9))  # the model file replaced (same size)
    assert not query_path.fresh(model_copy)
    assert query_path.QueryPathEmbedder.open(model_copy, ident) == "its cache is stale"

    cache.write_bytes(b"not a database")
    assert query_path.QueryPathEmbedder.open(model_copy, ident).startswith("its cache is")


def test_the_4_bit_layers_are_expanded_once_beside_the_cache(model_copy):
    """A cold process maps the layers the cache build expanded instead of expanding them itself
    (0.1 s of CPU), with the same vectors; a file that is not the one recorded is not used."""
    from clawmem.embedders.model_identity import identity_of

    ident = identity_of(model_copy)
    assert ident is not None and query_path.ensure(model_copy, ident.model_sha256) is None
    layers = query_path.expanded_path(model_copy)
    assert layers.exists() and 80 << 20 < layers.stat().st_size < 90 << 20

    def vector(text: str):
        e = query_path.QueryPathEmbedder.open(model_copy, ident)
        assert not isinstance(e, str), e
        return e, e.embed_query(text)

    mapped, v = vector("where does Peter live?")
    assert mapped._bert._expanded  # the expanded file is the one in use
    os.utime(layers, ns=(0, layers.stat().st_mtime_ns + 10**9))  # not the file recorded
    expanded_here, w = vector("where does Peter live?")
    assert not expanded_here._bert._expanded
    assert float(abs(v - w).max()) < 1e-6
    layers.unlink()
    assert not isinstance(query_path.QueryPathEmbedder.open(model_copy, ident), str)


def test_a_model_it_cannot_run_is_recorded_as_such(tmp_path):
    """A GGUF with a WordPiece vocabulary (as all-MiniLM's): the cache says why, once."""
    import gguf

    path = tmp_path / "wordpiece.gguf"
    w = gguf.GGUFWriter(str(path), "bert")
    w.add_block_count(1)
    w.add_tokenizer_model("bert")
    w.add_token_list(["[PAD]", "[UNK]", "hello"])
    w.add_tensor("token_embd.weight", np.zeros((3, 32), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    why = query_path.ensure(path, "0" * 64)
    assert why is not None and "not SentencePiece unigram" in why
    assert query_path.fresh(path)

    class Ident:
        model_sha256, dims, provider, pooling = "0" * 64, 32, "llama.cpp", "mean"

    opened = query_path.QueryPathEmbedder.open(path, Ident())
    assert isinstance(opened, str) and opened.startswith("the model is not supported")


def _recall(ws: Path, env: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "recall", "a feline resting on a rug",
         "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident embedder: Linux")
def test_a_cold_recall_embeds_its_query_here_and_starts_the_embedder_for_the_next(
    rt,  # noqa: F811 - the fixture
    indexed_template,
    tmp_path,
    model_cache,
):
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    env = {**os.environ, "CLAWMEM_RUNTIME_DIR": str(rt)}
    # The run's model was converted by this clawmem: its query-path cache was built then.
    assert query_path.fresh(default_model_path(model_cache))
    st = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "status", "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(st.stdout)["query_path"].startswith("ready"), st.stdout
    first = _recall(ws, env)
    assert first["vectors"]["state"] == "ok"
    assert first["vectors"]["query_by"].startswith("numpy query path"), first["vectors"]
    assert "memory/2025-11-17.md#L39-L39" in [r["citation"] for r in first["results"][:3]]
    # ... and started the resident embedder, which the next call uses.
    wait_until(lambda: len(embedder_pids(rt)) == 1, timeout=30)
    (pid,) = embedder_pids(rt)
    wait_until(lambda: _recall(ws, env)["vectors"]["query_by"].startswith("resident"), timeout=60)
    second = _recall(ws, env)
    assert second["vectors"]["query_by"] == f"resident embedder (pid {pid})"
    assert [r["citation"] for r in second["results"]] == [r["citation"] for r in first["results"]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident embedder: Linux")
def test_turned_off_or_without_its_cache_the_first_call_waits_for_the_embedder(
    rt,  # noqa: F811 - the fixture
    indexed_template,
    tmp_path,
    model_copy,
):
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    env = {**os.environ, "CLAWMEM_RUNTIME_DIR": str(rt), "CLAWMEM_QUERY_PATH": "0"}
    off = _recall(ws, env)
    assert off["vectors"]["query_by"].startswith("resident embedder (pid "), off["vectors"]
    st = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "status"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "query path  off (query_path = false, $CLAWMEM_QUERY_PATH)" in st.stdout, st.stdout
    for sock in rt.glob("embed-*.sock"):
        sock.unlink()  # that embedder ends
    wait_until(lambda: not embedder_pids(rt), timeout=10)

    # The same model in a folder of its own, no cache beside it yet: said, then waited for.
    env = {**os.environ, "CLAWMEM_RUNTIME_DIR": str(rt), "CLAWMEM_MODEL": str(model_copy)}
    st = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "status", "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "its cache is not built yet" in json.loads(st.stdout)["query_path"]
    got = _recall(ws, env)
    assert got["vectors"]["query_by"].startswith("resident embedder (pid "), got["vectors"]
    # The resident embedder builds the cache (at a low priority, after its model loaded) ...
    wait_until(lambda: query_path.fresh(model_copy), timeout=60)
    for sock in rt.glob("embed-*.sock"):
        sock.unlink()
    wait_until(lambda: not embedder_pids(rt), timeout=10)
    # ... so the next first call of a session no longer waits.
    got = _recall(ws, env)
    assert got["vectors"]["query_by"].startswith("numpy query path"), got["vectors"]


def test_the_cache_database_is_read_only_and_small(pair, model_cache):
    cache = query_path.cache_path(default_model_path(model_cache))
    assert cache.stat().st_size < 16 << 20
    db = sqlite3.connect(f"{cache.as_uri()}?mode=ro", uri=True)
    (n,) = db.execute("SELECT count(*) FROM vocab").fetchone()
    db.close()
    assert n == 250_037 - 39 - 1  # every piece but the control tokens and <unk>


def test_cold_process_without_llama_cpp(pair, model_cache):
    """Embedding through the query path never imports llama.cpp."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from clawmem.embedders.model_identity import identity_of\n"
        "from clawmem.embedders.query_path import QueryPathEmbedder\n"
        f"p = Path({str(default_model_path(model_cache))!r})\n"
        "e = QueryPathEmbedder.open(p, identity_of(p))\n"
        "v = e.embed_query('hello')\n"
        "print(v.shape, 'llama_cpp' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["(384,)", "False"]


def test_a_loading_embedder_says_so_at_once_to_a_process_that_will_not_wait(model_cache, tmp_path):
    """``ready_only``: the question of a process that has the query path at hand is answered at
    once while the model loads (it then embeds the query itself); others still wait for it.
    "At once" is read off the load itself, not a clock (a loaded machine made a one-second wall
    bound fail): the answer came while the model, loading beside it, was not ready yet. A reply
    that waited for the model would carry a vector, and find it ready."""
    import threading

    from clawmem.embedders.resident.server import Server

    from .test_resident import spec_of

    spec = spec_of(default_model_path(model_cache))
    ask = {"embed": "x", "model": spec.key, "ready_only": True}
    server = Server(spec, tmp_path / "s.sock", tmp_path / "s.lock")  # not loaded yet
    assert server.reply(ask) == {"why": "the resident embedder is loading its model"}
    loading = threading.Thread(target=server.load)
    loading.start()
    reply = server.reply(ask)
    ready_by_then = server.ready.is_set()
    waited = server.reply({"embed": "x", "model": spec.key})  # no ready_only: waits for it
    loading.join()
    assert reply == {"why": "the resident embedder is loading its model"}
    assert not ready_by_then
    assert waited["model"] == spec.key and waited["vector"]
    reply = server.reply(ask)
    assert reply["model"] == spec.key and reply["vector"]
    server.emb.close()
