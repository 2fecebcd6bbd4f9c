"""The in-memory copy of the vectors (vector_matrix.py) that a recalling process keeps: it must
hold exactly what vec0 holds, rank exactly as vec0 ranks, and never answer from stale vectors."""

import numpy as np
import pytest

import clawmem
from clawmem.embedders.testing import HashEmbedder
from clawmem.recall import legs
from clawmem.store import vector_matrix
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


def _vec0_rows(idx: Index) -> dict[int, np.ndarray]:
    return {
        r[0]: np.frombuffer(bytes(r[1]), "<f4")
        for r in idx.conn.execute("SELECT chunk_id, embedding FROM chunk_vectors")
    }


def test_the_matrix_holds_exactly_what_vec0_holds(tmp_path):
    """Over 1024 vectors (several vec0 chunks), after deletions (holes in the validity bitmap)."""
    ws = _workspace(tmp_path)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    for d in (3, 17):  # delete two files: their vectors leave holes in vec0's chunks
        (ws / "memory" / f"2025-01-{d + 1:02d}.md").unlink()
    mem.index()
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        want = _vec0_rows(idx)
        assert len(want) > 1024
        ids, mat = vector_matrix.load(idx.conn)
        assert sorted(ids.tolist()) == sorted(want)
        for cid, row in zip(ids.tolist(), mat, strict=True):
            assert np.array_equal(row, want[cid])
    finally:
        idx.close()


def test_the_matrix_ranks_as_vec0_does(tmp_path, monkeypatch):
    ws = _workspace(tmp_path)
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    queries = ("topic7 value3", "note 12-40", "topic52", "value44")
    try:
        monkeypatch.setattr(vector_matrix, "LOAD_AT_SEARCH", 10**9)
        by_vec0 = [legs.vector_leg(idx, emb.embed_query(q), Filters(), 30) for q in queries]
        assert not vector_matrix._loading and not vector_matrix._matrices  # vec0 answered
        monkeypatch.setattr(vector_matrix, "LOAD_AT_SEARCH", 1)
        legs.vector_leg(idx, emb.embed_query(queries[0]), Filters(), 30)
        vector_matrix.wait()
        assert str(idx.path) in vector_matrix._matrices
        by_matrix = [legs.vector_leg(idx, emb.embed_query(q), Filters(), 30) for q in queries]
        for a, b in zip(by_matrix, by_vec0, strict=True):
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)
            # Units tied at the cut are interchangeable (vec0 keeps whichever it met first; the
            # matrix keeps the lowest ids); above it the same units, with the same scores (the
            # test embedder makes many exact ties, which float rounding may order either way).
            cut = b[-1].score + 1e-5

            def above(hits, cut=cut):
                return sorted((round(h.score, 4), h.chunk_id) for h in hits if h.score > cut)

            assert above(a) == above(b)
            assert above(b)
    finally:
        idx.close()


def test_an_edit_is_never_answered_from_the_old_matrix(tmp_path):
    """A process keeps recalling while the Markdown changes: after the edit is indexed, the
    next vector recall sees it (the matrix is dropped on the commit, vec0 answers meanwhile)."""
    ws = _workspace(tmp_path, n_files=3, lines=5)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    for _ in range(3):
        mem.recall("zebra crossing", mode="vector", sync=False)
        vector_matrix.wait()
    assert vector_matrix._matrices  # held
    target = ws / "memory" / "2025-01-02.md"
    target.write_text(target.read_text() + "\n- zebra crossing near the office\n")
    res = mem.recall("zebra crossing", mode="vector")  # syncs the edit first
    assert res.hits and "zebra crossing" in res.hits[0].text
    vector_matrix.wait()
    res = mem.recall("zebra crossing", mode="vector", sync=False)  # the reloaded matrix
    assert res.hits and "zebra crossing" in res.hits[0].text


def test_an_unknown_layout_means_no_matrix(tmp_path):
    """vec0's storage is not ours: counts that do not add up mean vec0 answers instead."""
    ws = _workspace(tmp_path, n_files=2, lines=5)
    clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder()).index()
    idx = Index.open(ws / ".memory" / "index.sqlite")
    try:
        assert vector_matrix.load(idx.conn) is not None
        with idx.conn:
            idx.conn.execute("UPDATE chunk_vectors_chunks SET size = size + 1")
        assert vector_matrix.load(idx.conn) is None
        assert vector_matrix.load(idx.conn, table="no_such_table") is None
    finally:
        idx.close()


def test_a_process_holds_a_bounded_number_of_matrices(tmp_path):
    emb = HashEmbedder()
    paths = []
    for n in range(vector_matrix.MAX_HELD + 2):
        ws = _workspace(tmp_path / str(n), n_files=1, lines=3)
        clawmem.open_workspace(ws, environ={}, embedder=emb).index()
        idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
        try:
            for _ in range(vector_matrix.LOAD_AT_SEARCH):
                legs.vector_leg(idx, emb.embed_query("note"), Filters(), 5)
                vector_matrix.wait()
        finally:
            idx.close()
        paths.append(str(idx.path))
    assert list(vector_matrix._matrices) == paths[-vector_matrix.MAX_HELD :]


def test_a_scan_shared_by_two_threads_ranks_as_one_thread_does(monkeypatch):
    """A hybrid recall's own thread takes blocks of the scan that the vector leg's thread
    started: the answer must not depend on who scored which block, and BLAS's thread count is
    what it was once both are done."""
    import threading

    rng = np.random.default_rng(7)
    mat = rng.standard_normal((5000, 16)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    mat[100] = mat[4000]  # an exact tie across two blocks: broken by id either way
    ids = np.arange(10, 5010, dtype=np.int64)
    q = mat[4000] + 0.01
    alone = vector_matrix.top(ids, mat, q, 40)
    monkeypatch.setattr(vector_matrix.Scan, "BLOCK", 128)  # 40 blocks to share
    for _ in range(20):
        scan = vector_matrix.Scan(ids, mat, q, 40)
        helpers = [threading.Thread(target=scan.work) for _ in range(2)]
        for t in helpers:
            t.start()
        scan.work()
        for t in helpers:
            t.join()
        assert scan.best() == alone
    assert alone[0][0] in (110, 4010) and {alone[0][0], alone[1][0]} == {110, 4010}


@pytest.mark.parametrize(
    "window",
    [
        {"since": "2025-01-20"},
        {"until": "2025-01-05"},
        {"since": "2025-01-21", "until": "2025-01-22"},
    ],
)
def test_under_a_time_window_the_matrix_ranks_as_vec0_and_the_exact_scan_do(
    tmp_path, monkeypatch, window
):
    """`recall --since 30d`, what an agent asks most: the held matrix answers it (its rows masked
    to the window and to the facts whose stated validity overlaps it) exactly as vec0's filtered
    KNN plus the exact scan of those facts did."""
    ws = _workspace(tmp_path)
    (ws / "memory" / "2025-01-02.md").write_text(
        "# Day\n\n## Retain\n- W @Peter: Currently in Oslo (Jan 20–Jan 25, 2025) for topic7.\n"
    )
    emb = HashEmbedder()
    clawmem.open_workspace(ws, environ={}, embedder=emb).index()
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    f = Filters(**window)
    queries = ("topic7 value3", "Peter Oslo topic7", "topic52", "value44")
    try:
        monkeypatch.setattr(vector_matrix, "LOAD_AT_SEARCH", 10**9)
        by_vec0 = [legs.vector_leg(idx, emb.embed_query(q), f, 30) for q in queries]
        assert not vector_matrix._matrices  # vec0 (and the exact scan) answered
        monkeypatch.setattr(vector_matrix, "LOAD_AT_SEARCH", 1)
        legs.vector_leg(idx, emb.embed_query(queries[0]), Filters(), 30)
        vector_matrix.wait()
        assert legs.held_vectors(idx, f) is not None
        by_matrix = [legs.vector_leg(idx, emb.embed_query(q), f, 30) for q in queries]
        compared = 0
        for a, b in zip(by_matrix, by_vec0, strict=True):
            assert len(a) == len(b)
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)
            cut = b[-1].score + 1e-5

            def above(hits, cut=cut):
                return sorted((round(h.score, 4), h.chunk_id) for h in hits if h.score > cut)

            assert above(a) == above(b)
            compared += len(above(b))
        assert compared  # some units ranked above the ties at the cut
        if "since" in window and window["since"] > "2025-01-02":  # the Oslo fact, by validity
            oslo = idx.conn.execute("SELECT id FROM chunks WHERE valid_from IS NOT NULL").fetchone()
            assert oslo[0] in {h.chunk_id for h in by_matrix[1]}
    finally:
        idx.close()


def test_a_one_shot_time_hinted_recall_loads_no_matrix(tmp_path):
    """A question naming a day ranks twice (the window, then everywhere): in a one-shot CLI that
    must not count as the second search that starts loading every vector (~1 s of CPU at 100k
    units, beside the recall itself). Time-filtered searches use a matrix already held, but only
    unfiltered ones count towards loading it."""
    ws = _workspace(tmp_path, n_files=3, lines=5)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    res = mem.recall("what was noted on 2025-01-02?", mode="hybrid", sync=False)
    assert any("names a time" in n for n in res.notes), res.notes  # it did rank twice
    assert not vector_matrix._loading and not vector_matrix._matrices, vector_matrix._searches


def test_a_copy_that_fails_to_load_is_not_loading_for_ever(tmp_path):
    """A damaged index whose vec0 rows read as text, not bytes: the background load raised
    TypeError, which ended its thread before it said it was done, so the index read as
    "loading" for the life of the process (the resident embedder answered every search so).
    Now it is no copy, and vec0 answers, as for a layout this module does not know."""
    ws = _workspace(tmp_path, n_files=2, lines=5)
    clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder()).index()
    path = ws / ".memory" / "index.sqlite"
    idx = Index.open(path)
    try:
        with idx.conn:
            idx.conn.execute("UPDATE chunk_vectors_chunks SET rowids = CAST(rowids AS TEXT)")
    finally:
        idx.close()
    assert vector_matrix.held_at(path, load_at=1, compressed=True) is None
    vector_matrix.wait()
    assert not vector_matrix.loading(path)
    assert vector_matrix.held_summary() == []
