"""The held vectors' binary first pass (vector_matrix.Codes): from CODES_MIN_ROWS rows on, a scan
ranks a pool found by Hamming distance with exact cosines. The top-k must then be exactly the
exact scan's whenever the exact top-k lies inside the pool, and below the threshold nothing may
change."""

import numpy as np
import pytest

import clawmem
from clawmem.embedders.testing import HashEmbedder
from clawmem.recall import legs
from clawmem.store import vector_matrix
from clawmem.store.index import Filters, Index

# _fresh_cache: test_vector_matrix's autouse fixture (each test starts with no held vectors).
from .test_vector_matrix import _fresh_cache, _workspace  # noqa: F401


def _corpus(n: int, d: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in clusters around a shared direction, as a sentence model's are."""
    rng = np.random.default_rng(seed)
    common = rng.standard_normal(d).astype(np.float32) * 2
    centres = rng.standard_normal((40, d)).astype(np.float32)
    mat = common + centres[rng.integers(0, 40, n)] + rng.standard_normal((n, d)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    return np.arange(100, 100 + n, dtype=np.int64), mat.astype(np.float32)


@pytest.mark.parametrize("d", [64, 48, 384])
def test_hamming_distances_count_the_centred_sign_bits_that_differ(d):
    ids, mat = _corpus(700, d)
    codes = vector_matrix.Codes(mat)
    q = mat[5] * 0.5 + mat[9] * 0.5
    out = np.empty(len(mat), dtype=np.uint16)
    codes.distances(codes.query(q), 0, len(mat), out)
    mean = mat.mean(axis=0)
    want = ((mat > mean) != (q > mean)).sum(axis=1)
    assert np.array_equal(out, want)


@pytest.mark.parametrize("keep_every", [None, 3])
def test_rescored_top_k_is_the_exact_top_k_whenever_the_pool_holds_it(monkeypatch, keep_every):
    monkeypatch.setattr(vector_matrix, "CODES_MIN_ROWS", 0)
    monkeypatch.setattr(vector_matrix, "POOL_MIN", 150)
    monkeypatch.setattr(vector_matrix, "POOL_PER_HIT", 2)
    ids, mat = _corpus(4000, 96)
    codes = vector_matrix.Codes(mat)
    keep = None if keep_every is None else (np.arange(len(ids)) % keep_every == 0)
    rng = np.random.default_rng(11)
    covered = missed = 0
    for _ in range(60):
        q = mat[rng.integers(0, len(mat))] + rng.standard_normal(96).astype(np.float32) * 0.03
        q /= np.linalg.norm(q)
        exact = vector_matrix.Scan(ids, mat, q, 20, keep=keep)
        exact.work()
        want = exact.best()
        assert not exact.compressed
        scan = vector_matrix.Scan(ids, mat, q, 20, keep=keep, codes=codes)
        scan.work()
        got = scan.best()
        assert scan.compressed and scan.pool_ids is not None and len(scan.pool_ids) == 150
        if keep is not None:
            assert all(keep[cid - 100] for cid in scan.pool_ids.tolist())
        if {cid for cid, _ in want} <= set(scan.pool_ids.tolist()):
            covered += 1
            assert got == want  # the same ids, in the same order, with the same scores
        else:
            missed += 1
            # Whatever it returned was scored exactly and ranked as the exact scan ranks.
            exact_score = dict(zip(ids.tolist(), (mat @ q).tolist(), strict=True))
            assert all(abs(s - exact_score[cid]) < 1e-6 for cid, s in got)
            assert got == sorted(got, key=lambda r: (-r[1], r[0]))
    # Both cases occur on this corpus: the property was checked, not skipped.
    assert covered >= 15 and missed >= 1, (covered, missed)


def _held(idx: Index, f: Filters):
    for _ in range(vector_matrix.LOAD_AT_SEARCH):
        legs.held_vectors(idx, Filters())
        vector_matrix.wait()
    return legs.held_vectors(idx, f)


@pytest.mark.parametrize("above", [False, True])
def test_the_switch_on_both_sides_of_codes_min_rows(tmp_path, monkeypatch, above):
    """A real index's held vectors: below the threshold no codes are kept and the scan is the
    exact one; at it, codes are kept, the scan is compressed, and with a pool holding the exact
    top-k (every row here) the vector leg's answer is the exact one, windowed or not."""
    ws = _workspace(tmp_path)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        (rows,) = idx.conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()
        monkeypatch.setattr(vector_matrix, "CODES_MIN_ROWS", rows if above else rows + 1)
        monkeypatch.setattr(vector_matrix, "POOL_MIN", rows)
        q = np.asarray(HashEmbedder().embed_query("topic7 value3"), dtype=np.float32)
        for f in (Filters(), Filters(since="2025-01-20")):
            held = _held(idx, f)
            assert held is not None
            assert (held[2] is not None) == above
            assert (vector_matrix.held_summary()[0]["codes_bytes"] > 0) == above
            scan = legs.held_scan(held, q, 25)
            assert scan.compressed == above
            got = [(h.chunk_id, h.score) for h in legs.scan_hits(scan)]
            ids, mat, _codes, keep = held
            exact = vector_matrix.Scan(ids, mat, q, 25, keep=keep)
            assert [(h.chunk_id, h.score) for h in legs.scan_hits(exact)] == got
            # ... and that is vec0's answer (scores equal but for a cosine's last bits).
            want = {h.chunk_id: h.score for h in legs.stored_leg(idx, q, f, len(ids))}
            assert all(abs(want[cid] - s) < 1e-5 for cid, s in got)
            assert sorted(want.values(), reverse=True)[24] <= got[-1][1] + 1e-5
    finally:
        idx.close()


def test_recall_json_says_how_the_vector_leg_ranked(tmp_path, monkeypatch):
    """vectors.search: vec0 for a one-shot recall, then the held matrix, and the codes' first
    pass once the matrix is at least CODES_MIN_ROWS rows (an approximation must be visible)."""
    assert vector_matrix.CODES_MIN_ROWS is None  # off by default (see vector_matrix)
    ws = _workspace(tmp_path)
    mem = clawmem.open_workspace(ws, environ={}, embedder=HashEmbedder())
    mem.index()
    first = mem.recall("topic7 value3", mode="hybrid")
    assert first.vectors["search"] == "sqlite-vec"
    vector_matrix.wait()
    mem.recall("topic8 value3", mode="hybrid")  # the second search loads the matrix
    vector_matrix.wait()
    held = mem.recall("topic9 value3", mode="hybrid").vectors["search"]
    assert held.startswith("held in memory: exact scan of ")
    vector_matrix.forget()
    vector_matrix._searches.clear()
    monkeypatch.setattr(vector_matrix, "CODES_MIN_ROWS", 1000)
    for q in ("topic7 value3", "topic8 value3"):
        mem.recall(q, mode="hybrid")
        vector_matrix.wait()
    coded = mem.recall("topic9 value3", mode="hybrid").vectors["search"]
    assert coded.startswith("held in memory: binary codes, then exact cosine of the nearest 2,000")
    assert "search" not in mem.recall("topic9", mode="lexical").vectors
    mem.close()
