"""The compressed copy of a large index's vectors (vector_lists.py): int8 rows in inverted lists,
with exact rescoring from the index file. Real SQLite files and sqlite-vec; the test embedder's
vectors (plumbing: which rows, which scores); how well it keeps the order on the model's vectors is
measured by the benchmarks (docs/benchmarks.md, "1M units")."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clawmem
from clawmem.embedders.testing import HashEmbedder
from clawmem.recall import legs
from clawmem.store import vector_lists, vector_matrix
from clawmem.store.index import Filters, Index


@pytest.fixture(autouse=True)
def _fresh_cache():
    vector_matrix.wait()
    vector_matrix.forget()
    vector_matrix._searches.clear()
    yield
    vector_matrix.wait()
    vector_matrix.forget()


def _workspace(tmp_path, n_files=30, lines=45):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for d in range(n_files):
        body = "\n\n".join(
            f"- note {d}-{i}: topic{(d * 7 + i) % 53} value{i}" for i in range(lines)
        )
        (ws / "memory" / f"2025-01-{d + 1:02d}.md").write_text(f"# Day {d}\n\n{body}\n")
    return ws


QUERIES = ("topic7 value3", "note 12-40", "topic52", "value44")


def _exact(idx: Index, q: np.ndarray, limit: int) -> list[tuple[int, float]]:
    ids, mat = vector_matrix.load(idx.conn)
    return vector_matrix.top(ids, mat, q, limit)


def test_the_copy_holds_every_row_once_with_its_place_in_vec0(tmp_path):
    ws = _workspace(tmp_path)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    (ws / "memory" / "2025-01-04.md").unlink()  # holes in vec0's validity bitmap
    mem.index()
    path = ws / ".memory" / "index.sqlite"
    lists = vector_lists.build(str(path))
    assert lists is not None
    idx = Index.open(path, readonly=True)
    try:
        ids, mat = vector_matrix.load(idx.conn)
        assert sorted(lists.ids.tolist()) == sorted(ids.tolist())
        assert lists.starts[0] == 0 and lists.starts[-1] == len(ids)
        # A row's bytes: its values, lift, scale, chunk id (int32), place in the chunk and id.
        d = lists.rows.shape[1]
        extra = lists.centroids.nbytes + lists.starts.nbytes
        assert lists.chunk.dtype == np.int32 and lists.nbytes == len(ids) * (d + 24) + extra
        assert np.array_equal(
            lists.lift, 128 * lists.int8_rows().astype(np.int64).sum(axis=1).astype(np.float32)
        )
        assert np.all(np.diff(lists.starts) >= 0)
        # Each int8 row, scaled back, is its float row within half a step of its scale.
        by_id = dict(zip(ids.tolist(), mat, strict=True))
        for r in range(0, len(lists), 97):
            back = lists.int8_rows(r).astype(np.float32) * lists.scale[r]
            assert np.abs(back - by_id[int(lists.ids[r])]).max() <= lists.scale[r] * 0.5 + 1e-7
    finally:
        idx.close()
        lists.close()


def test_with_every_row_probed_and_pooled_it_is_the_exact_ranking(tmp_path, monkeypatch):
    """Scores are exact cosines read back from the index file; when the pool holds every row, the
    list is the exact scan's."""
    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    path = ws / ".memory" / "index.sqlite"
    lists = vector_lists.build(str(path))
    assert lists is not None
    monkeypatch.setattr(vector_lists, "PROBE_SHARE", 1.0)
    monkeypatch.setattr(vector_lists, "POOL_MIN", 10**9)
    idx = Index.open(path, readonly=True)
    try:
        for text in QUERIES:
            q = np.asarray(emb.embed_query(text), dtype=np.float32)
            got = lists.search(q, 30)
            want = _exact(idx, q, 30)
            assert got is not None
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
            assert {c for c, s in got if s > want[-1][1] + 1e-6} == {
                c for c, s in want if s > want[-1][1] + 1e-6
            }
    finally:
        idx.close()
        lists.close()


def test_a_small_probe_scores_few_rows_and_returns_exact_scores(tmp_path, monkeypatch):
    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    path = ws / ".memory" / "index.sqlite"
    monkeypatch.setattr(vector_lists, "PROBE_MIN", 64)
    monkeypatch.setattr(vector_lists, "PROBE_SHARE", 0.1)
    lists = vector_lists.build(str(path))
    assert lists is not None
    idx = Index.open(path, readonly=True)
    try:
        ids, mat = vector_matrix.load(idx.conn)
        exact = dict(zip(ids.tolist(), mat, strict=True))
        q = np.asarray(emb.embed_query(QUERIES[0]), dtype=np.float32)
        rows = lists.candidates(q)
        assert 0.1 * len(lists) <= len(rows) < 0.5 * len(lists)
        got = lists.search(q, 20)
        assert got is not None and len(got) == 20
        for cid, score in got:
            assert score == pytest.approx(float(exact[cid] @ q), abs=1e-6)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    finally:
        idx.close()
        lists.close()


def test_the_first_pass_scores_are_the_int8_rows_exact_dot_products(tmp_path, monkeypatch):
    """The SIMD kernel (``int8_dots``) gives each row the exact integer dot product of its int8
    copy with the query's, times its scale: the order measured on real vectors. Blocks smaller
    than the copy, shared by two threads, every row and a kept subset of them."""
    import threading

    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    lists = vector_lists.build(str(ws / ".memory" / "index.sqlite"))
    assert lists is not None and len(lists) > 1000
    monkeypatch.setattr(vector_lists.ListsScan, "BLOCK", 97)
    keep = np.zeros(len(lists), dtype=bool)
    keep[::3] = True
    try:
        for text, mask in ((QUERIES[0], None), (QUERIES[2], keep)):
            q = np.asarray(emb.embed_query(text), dtype=np.float32)
            scan = vector_lists.ListsScan(lists, q, 10, mask)
            helper = threading.Thread(target=scan.work)
            helper.start()
            scan.work()
            helper.join()
            rows = np.arange(len(lists)) if mask is None else np.flatnonzero(mask)
            dots = lists.int8_rows(rows).astype(np.int64) @ scan._q8.astype(np.int64)
            assert len(scan._approx) == len(rows)
            assert np.array_equal(scan._approx, (dots * lists.scale[rows]).astype(np.float32))
            assert scan.best()
    finally:
        lists.close()


def test_the_first_pass_split_over_threads_gives_the_rows_and_scores_of_one(tmp_path, monkeypatch):
    """``SCAN_THREADS`` splits each block's rows over OpenMP threads: every row's score, the pool
    and the answer are those of one thread, on every row and on a kept subset; blocks of a few
    rows (fewer rows than threads) included."""
    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    lists = vector_lists.build(str(ws / ".memory" / "index.sqlite"))
    assert lists is not None and len(lists) > 1000
    keep = np.zeros(len(lists), dtype=bool)
    keep[1::4] = True
    try:
        for block in (vector_lists.ListsScan.BLOCK, 3):
            monkeypatch.setattr(vector_lists.ListsScan, "BLOCK", block)
            for text, mask in ((QUERIES[1], None), (QUERIES[3], keep)):
                q = np.asarray(emb.embed_query(text), dtype=np.float32)
                got = {}
                for threads in (1, 2, 4):
                    monkeypatch.setattr(vector_lists, "SCAN_THREADS", threads)
                    scan = vector_lists.ListsScan(lists, q, 25, mask)
                    scan.work()
                    got[threads] = (scan._approx.copy(), scan.best())
                for threads in (2, 4):
                    assert np.array_equal(got[threads][0], got[1][0])
                    assert got[threads][1] == got[1][1] and got[1][1]
    finally:
        lists.close()


def _lifted(rows):
    """``rows`` as ``Lists`` holds them: uint8 (value + 128) and 128 times each row's sum."""
    return (rows ^ np.int8(-128)).view(np.uint8), (128 * rows.sum(axis=1, dtype=np.int64)).astype(
        np.float32
    )


def test_int8_dots_are_exact_integers_in_float32():
    """The largest sums 384 dimensions can make are exact in float32 (< 2**24), on any number of
    threads, written into a slice of a larger array: the unsigned kernel's sums, less the query's
    and the row's lifts, are the signed dot products. A row of large positive values (whose
    unsigned sum float32 cannot hold) and a wider model's rows go through float64 (a 1,536-
    dimension model once made the whole vector leg fail): exact at 384, rounded to float32 at
    1,536."""
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, size=(5000, 384), dtype=np.int8)
    q = rng.integers(-127, 128, size=384, dtype=np.int8)
    q[:] = np.where(q >= 0, 127, -127)
    rows[0], rows[1] = q, -q  # the extremes: +-384 * 127**2
    want = rows.astype(np.int64) @ q.astype(np.int64)
    heavy = rows.copy()
    heavy[2] = 127  # a row of large positive values: its unsigned sum can pass 2**24
    for block, fast in ((rows, True), (heavy, False)):
        u, lift = _lifted(block)
        # both of the kernel's ways are tested
        assert (255 * (float(lift.max()) / 128 + 128 * 384) < 1 << 24) == fast
        exact = block.astype(np.int64) @ q.astype(np.int64)
        for threads in (1, 3):
            out = np.full(len(block) + 10, -1.0, dtype=np.float32)
            vector_lists.int8_dots(u, q, lift, out[5:-5], threads=threads)
            assert np.array_equal(out[5:-5].astype(np.int64), exact)
            assert out[:5].tolist() == [-1.0] * 5 and out[-5:].tolist() == [-1.0] * 5
    # A uniform row of 127s against a query of 127s: an unsigned sum of 384 * 255**2 > 2**24.
    flat = np.full((3, 384), 127, dtype=np.int8)
    u, lift = _lifted(flat)
    got = vector_lists.int8_dots(u, np.full(384, 127, dtype=np.int8), lift)
    assert got.tolist() == [384 * 127 * 127] * 3
    assert want[0] == -want[1] == 384 * 127 * 127
    u, lift = _lifted(rows[:0])
    assert len(vector_lists.int8_dots(u, q, lift)) == 0
    wide = rng.integers(-127, 128, size=(50, 1536), dtype=np.int8)
    qw = rng.integers(-127, 128, size=1536, dtype=np.int8)
    uw, lw = _lifted(wide)
    got = vector_lists.int8_dots(uw, qw, lw)
    exact = wide.astype(np.int64) @ qw.astype(np.int64)
    assert got.dtype == np.float32
    assert np.allclose(got, exact, rtol=1e-6, atol=1.0)


@given(
    st.lists(st.integers(-40, 40), min_size=1, max_size=3000),
    st.integers(1, 400),
)
@settings(max_examples=200, deadline=None)
def test_top_rows_holds_the_k_highest_scores(values, k):
    """The threshold from a sample never leaves a row of the top k out, ties included (few
    distinct values: many ties at the k-th)."""
    scores = np.asarray(values, dtype=np.float32) / 8
    got = vector_lists.top_rows(scores, k)
    assert len(set(got.tolist())) == len(got) == min(k, len(scores))
    assert sorted(scores[got].tolist()) == sorted(np.sort(scores)[::-1][:k].tolist())


def test_top_rows_over_many_rows_is_the_k_highest():
    rng = np.random.default_rng(5)
    for n, k in ((1_000_000, 320), (70_000, 256), (5_000, 320), (400, 320)):
        scores = (rng.standard_normal(n) * 0.05 + 0.8).astype(np.float32)
        got = vector_lists.top_rows(scores, k)
        assert set(got.tolist()) == set(np.argsort(-scores, kind="stable")[:k].tolist())


def test_a_copy_never_answers_after_the_index_changed(tmp_path):
    ws = _workspace(tmp_path, n_files=4)
    emb = HashEmbedder()
    mem = clawmem.open_workspace(ws, environ={}, embedder=emb)
    mem.index()
    path = ws / ".memory" / "index.sqlite"
    lists = vector_lists.build(str(path))
    assert lists is not None
    q = np.asarray(emb.embed_query(QUERIES[0]), dtype=np.float32)
    assert lists.search(q, 5)
    (ws / "memory" / "2025-01-02.md").write_text("# Day\n\n- something else entirely\n")
    mem.index()
    assert lists.search(q, 5) is None
    lists.close()


def test_above_lists_min_rows_a_process_holds_the_copy_and_recall_uses_it(tmp_path, monkeypatch):
    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    mem = clawmem.open_workspace(ws, environ={}, embedder=emb)
    mem.index()
    monkeypatch.setattr(vector_matrix, "LISTS_MIN_ROWS", 100)
    monkeypatch.setattr(vector_matrix, "LOAD_AT_SEARCH", 1)
    monkeypatch.setattr(vector_lists, "PROBE_SHARE", 1.0)
    monkeypatch.setattr(vector_lists, "POOL_MIN", 10**9)
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        q = emb.embed_query(QUERIES[1])
        by_vec0 = legs.vector_leg(idx, q, Filters(), 30)
        vector_matrix.wait()
        held = vector_matrix.held_summary()
        assert held and held[0]["lists_bytes"] > 0 and held[0]["matrix_bytes"] == 0
        assert "int8" in legs.vector_search(idx)
        by_lists = legs.vector_leg(idx, q, Filters(), 30)
        assert [h.score for h in by_lists] == pytest.approx([h.score for h in by_vec0], abs=1e-6)
        # A recall through the library, as an agent's process makes it.
        res = mem.recall(QUERIES[1], mode="vector", sync=False)
        assert res.hits
    finally:
        idx.close()


def test_no_copy_is_made_through_a_link(tmp_path):
    """The resident embedder opens an index by the path a client names: a link there (to an
    index elsewhere) is refused, as every clawmem database open refuses it."""
    ws = _workspace(tmp_path, n_files=2)
    clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder()).index()
    real = ws / ".memory" / "index.sqlite"
    other = tmp_path / "other" / ".memory"
    other.mkdir(parents=True)
    (other / "index.sqlite").symlink_to(real)
    assert vector_lists.build(str(other / "index.sqlite")) is None
    lists = vector_lists.build(str(real))
    assert lists is not None
    lists.close()


def test_on_the_models_own_vectors_two_rows_a_hit_give_the_exact_list(indexed, monkeypatch):
    """The pool clawmem rescores exactly (``POOL_PER_HIT`` rows a hit) was chosen on the real
    model's vectors (docs/benchmarks.md, "1M units": every exact top 80 of the quality sets within
    the int8 order's first 1.25 x 80 rows). On the fixture workspace indexed by the model, with no
    minimum pool, the copy's answer has the exact cosine at every rank."""
    from clawmem.config import Config
    from clawmem.embedders.model_choice import load_embedder

    path = indexed / ".memory" / "index.sqlite"
    lists = vector_lists.build(str(path))
    assert lists is not None
    monkeypatch.setattr(vector_lists, "POOL_MIN", 0)
    assert vector_lists.POOL_PER_HIT == 2
    emb = load_embedder(indexed, Config())
    idx = Index.open(path, readonly=True)
    try:
        ids, mat = vector_matrix.load(idx.conn)
        assert len(lists) > 4 * 40  # the pool of 80 leaves most rows out
        for text in (
            "When did Peter book flights to Marrakech?",
            "Which trips has Peter taken?",
            "what did we decide about the database migration",
            "a feline resting on a rug",
            "who is allergic to something",
            "tell me about the budget",
        ):
            q = np.asarray(emb.embed_query(text), dtype=np.float32)
            for limit in (10, 40):
                got = lists.search(q, limit)
                exact = vector_matrix.top(ids, mat, q, limit)
                assert got is not None and len(got) == len(exact) == limit
                assert np.allclose([s for _, s in got], [s for _, s in exact], rtol=0, atol=1e-6)
    finally:
        idx.close()
        lists.close()
