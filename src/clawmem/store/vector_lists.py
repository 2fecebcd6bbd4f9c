"""A compressed copy of a large index's vectors: int8 rows, with exact rescoring from the file.

At a million units the float32 vectors are 1.5 GB; one sign bit per dimension
(``vector_matrix.Codes``) is small and quick but does not keep the order of real conversation
vectors. This copy keeps it, at 408 bytes a vector (384 dimensions) instead of 1,536:

* every vector as int8, scaled by its own largest component: its score against the query's own
  int8 copy is within ~0.0003 of the exact cosine on average, p99 0.001 (REALTALK's real
  vectors, docs/benchmarks.md "1M units"); held as those int8 values plus 128 (uint8, the same
  bytes), with each row's sum of them, because SimSIMD's unsigned kernel is ~20% faster on
  AVX2 and the sums give back the exact signed dot product (``int8_dots``);
* a query scores every row by int8 dot product (``ListsScan``, in blocks the recall's two
  threads share; ``int8_dots``: SimSIMD's SIMD kernel), keeps the ``POOL_PER_HIT`` × limit
  best (at least ``POOL_MIN``), and rescores those exactly from the float32 rows in the index
  file itself (vec0's chunk blobs, read one row at a time through SQLite's blob I/O in a read
  transaction), so every score returned is the exact cosine vec0 gives;
* optionally (``PROBE_SHARE`` < 1, off: see there why) the rows are grouped into ``~sqrt(n)/2``
  inverted lists by spherical k-means on a seeded sample, and a query scores only the lists
  whose centroids are nearest to it.

What this may miss is a row of the exact top-k whose int8 score fell outside the pool: measured
on REALTALK's real vectors and at 1M (benchmarks/suites/scale.py, docs/benchmarks.md).

It is a cache of the vec0 table, built by ``build`` from it (``vector_matrix`` decides when, and
throws it away when the index changes), never stored: the index stays rebuildable from Markdown.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clawmem.store import db

if TYPE_CHECKING:
    import array

    import numpy as np

    # A query's vector as embedders give it (embedders.base.Vector; store is below embedders).
    Vector = np.ndarray | array.array

# Share of the rows whose lists a query scores, and the fewest rows it scores. 1.0 (the
# default): every row, in one list. On REALTALK's real vectors the int8 order holds each
# question's exact top 10 within its first 2.4% of rows (p90; 142 questions, chats 1-3), so a
# pool of 4 rows per hit keeps the exact list; the lists' own first pass does not: probing 5% of
# the rows (~22 lists) kept 46-59% of the exact top 10, 20% kept 83-87% (docs/benchmarks.md,
# "1M units"). They stay for a machine where a full int8 pass is too slow, measured, not on.
PROBE_SHARE = 1.0
PROBE_MIN = 4096
# Rows rescored exactly per hit asked for (and at least POOL_MIN). On the quality sets' real
# vectors (SciFact, REALTALK chats 1-4, agent memory: 1,092 questions) the int8 order held every
# question's exact top k within its first 1.25 k rows for k = 80, 320 and 1,000 (1.6 k for
# k = 10), so 2 per hit keeps the exact list; each row rescored costs ~30 us of SQLite's blob
# I/O at 1M units (docs/benchmarks.md, "1M units").
POOL_PER_HIT = 2
POOL_MIN = 128
# Lists: LISTS_PER_SQRT * sqrt(rows); the k-means sample: SAMPLE_PER_LIST rows per list.
LISTS_PER_SQRT = 0.5
SAMPLE_PER_LIST = 48
KMEANS_ROUNDS = 8
_BLOCK = 16384  # rows assigned to lists at a time (a temporary of BLOCK x lists float32)


# Threads SimSIMD's kernel may split a block's rows over (OpenMP, inside the call, which holds
# the GIL: the recall's two Python threads sharing the blocks never score at once). 1: off. On
# the 2-core benchmark machine, with other work on the cores (load 4-6), two threads made the
# pass ~3x slower (blocks of 65,536 rows: 245 against 91 ms wall, 122 against 45 ms of CPU):
# OpenMP's workers spin at each block's barrier while the thread they wait for has no core.
# With OMP_WAIT_POLICY=passive they no longer spin, but were no faster either there, and the
# variable is process-wide (llama.cpp's OpenMP reads it too). A machine with idle cores may gain;
# not measured here (docs/benchmarks.md, "1M units"). The rows' sums are the same integers on
# any number of threads (tests/test_vector_lists.py).
SCAN_THREADS = 1


def _chunks(conn: db.Connection, table: str, d: int) -> Iterator[tuple]:
    """(chunk rowid, ids, positions in the chunk, float32 rows) of every vec0 chunk, valid rows
    only (vector_matrix.load's reading of sqlite-vec 0.1's layout, in the same order: by the
    vector table's key, so SQLite sorts nothing)."""
    import numpy as np

    for chunk, size, validity, rowids, vectors in conn.execute(
        f"SELECT c.chunk_id, c.size, c.validity, c.rowids, v.vectors FROM {table}_chunks c "
        f"JOIN {table}_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY v.rowid"
    ):
        if len(rowids) != size * 8 or len(vectors) != size * d * 4 or len(validity) * 8 < size:
            raise ValueError("unexpected vec0 layout")
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
        pos = np.flatnonzero(valid)
        yield (
            int(chunk),
            np.frombuffer(rowids, "<i8")[pos],
            pos.astype(np.int32),
            np.frombuffer(vectors, "<f4").reshape(size, d)[pos],
        )


def _quantize(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 scale of each): row ≈ int8 row * scale."""
    import numpy as np

    top = np.abs(rows).max(axis=1)
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.rint(rows / scale[:, None])
    return np.clip(q, -127, 127).astype(np.int8), scale


def _kmeans(sample: np.ndarray, k: int, seed: int = 1) -> np.ndarray:
    """Spherical k-means (unit centroids, nearest by dot product) of ``sample``'s rows."""
    import numpy as np

    rng = np.random.default_rng(seed)
    cent = sample[rng.choice(len(sample), size=k, replace=False)].copy()
    for _ in range(KMEANS_ROUNDS):
        label = np.argmax(sample @ cent.T, axis=1)
        sums = np.zeros_like(cent)
        np.add.at(sums, label, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        if empty.any():  # a centroid that lost every row takes a random row again
            sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()), replace=False)]
            norms[empty] = np.linalg.norm(sums[empty], axis=1)
        cent = (sums / norms[:, None]).astype(np.float32)
    return cent


def _open_blob(conn: db.Connection, table: str, rowid: int) -> Any:
    """A read-only handle on the ``vectors`` blob of ``rowid``: sqlean's ``open_blob`` (its flag 1:
    read-only) or the standard module's ``blobopen``."""
    opener = getattr(conn, "open_blob", None)
    if opener is not None:
        return opener(table, "vectors", rowid, 1)
    return conn.blobopen(table, "vectors", rowid, readonly=True)


class Lists:
    """The compressed copy of one index's vectors (``build``), and its searches."""

    def __init__(
        self,
        path: str,
        table: str,
        centroids: np.ndarray,
        starts: np.ndarray,
        ids: np.ndarray,
        rows: np.ndarray,
        lift: np.ndarray,
        scale: np.ndarray,
        chunk: np.ndarray,
        pos: np.ndarray,
    ) -> None:
        self.path, self.table = path, table
        self.centroids = centroids  # (lists, d) float32
        self.starts = starts  # list j's rows are starts[j]:starts[j + 1]
        self.ids = ids  # int64 chunk ids, in list order
        # Each row's int8 values plus 128 (uint8), 128 times their sum (float32, exact: at most
        # 128 * 127 * dims < 2**24 up to 1,031 dimensions) and its scale: the row is about
        # (rows - 128) * scale (``int8_rows``).
        self.rows, self.lift, self.scale = rows, lift, scale
        self.chunk, self.pos = chunk, pos  # where each row's float32 vector is in vec0
        self._conn: db.Connection | None = None  # the connection the copy was read through
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        held = (self.centroids, self.starts, self.ids, self.rows, self.lift, self.scale)
        return sum(int(a.nbytes) for a in (*held, self.chunk, self.pos))

    def __len__(self) -> int:
        return len(self.ids)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def int8_rows(self, sel: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The int8 values of the rows ``sel`` (a copy)."""
        import numpy as np

        return (self.rows[sel] ^ np.uint8(128)).view(np.int8)

    def probe_rows(self) -> int:
        return min(len(self.ids), max(PROBE_MIN, int(PROBE_SHARE * len(self.ids))))

    def candidates(self, q: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray | None:
        """The rows a query scores: None for every row (one list, or every list probed); else
        the nearest lists' (under ``keep``, a mask of the rows that may be answered, only
        those, and every kept row when they are few)."""
        import numpy as np

        want = self.probe_rows()
        if keep is not None:
            kept = np.flatnonzero(keep)
            if len(kept) <= 4 * want or want >= len(self.ids):
                return kept
        elif want >= len(self.ids):
            return None
        order = np.argsort(-(self.centroids @ q), kind="stable")
        sizes = np.diff(self.starts)[order]
        upto = int(np.searchsorted(np.cumsum(sizes), want)) + 1
        parts = [np.arange(self.starts[j], self.starts[j + 1]) for j in order[:upto]]
        rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        if keep is not None:
            rows = rows[keep[rows]]
        return rows

    def search(
        self, qvec: Vector, limit: int, keep: np.ndarray | None = None
    ) -> list[tuple[int, float]] | None:
        """The ``limit`` best (chunk id, exact cosine) by score, then id; None when the index
        changed under the copy (the caller asks vec0)."""
        scan = ListsScan(self, qvec, limit, keep)
        scan.work()
        return scan.best()

    def _exact(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray | None:
        """Exact cosines of ``rows`` from the float32 vectors in the index file; None when it
        changed since the copy was made (``version``) or cannot be read."""
        import numpy as np

        d = self.centroids.shape[1]
        width = 4 * d
        out = np.empty((len(rows), d), dtype=np.float32)
        by_chunk = np.argsort(self.chunk[rows], kind="stable")
        with self._lock:
            conn = self._conn
            if conn is None:
                return None
            try:
                conn.execute("BEGIN")
                try:
                    blob = None
                    at = -1
                    for i in by_chunk.tolist():
                        r = int(rows[i])
                        c = int(self.chunk[r])
                        if c != at:
                            if blob is not None:
                                blob.close()
                            blob = _open_blob(conn, f"{self.table}_vector_chunks00", c)
                            at = c
                        assert blob is not None
                        blob.seek(int(self.pos[r]) * width)
                        out[i] = np.frombuffer(blob.read(width), dtype="<f4")
                    if blob is not None:
                        blob.close()
                finally:
                    conn.execute("COMMIT")
                # Checked after the read: unchanged, no one committed since the copy was made,
                # so the rows read are the ones it was made from.
                if int(conn.execute("PRAGMA data_version").fetchone()[0]) != self.version:
                    return None
            except (db.DatabaseError, ValueError):
                return None
        return out @ q

    version: int = -1  # data_version of ``_conn`` when the copy was made


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """The places of the ``k`` highest ``scores``, in no order (ties at the k-th as
    ``argpartition`` leaves them). A threshold from every ``_SAMPLE_STEP``-th score first: about
    2k rows reach it, and only those are partitioned (over 1M scores ~1 ms of CPU instead of
    ~4-5). When fewer than k reach it, every score is partitioned: the k-th highest is then at
    or above the threshold, so no row of the answer is left out."""
    import numpy as np

    n = len(scores)
    if k >= n:
        return np.arange(n)
    sample = scores[::_SAMPLE_STEP]
    j = 2 * k // _SAMPLE_STEP + 1  # the sample's j-th highest: ~2k of all the rows reach it
    if j < len(sample) // 2:
        at = np.partition(sample, len(sample) - j)[len(sample) - j]
        rows = np.flatnonzero(scores >= at)
        if len(rows) >= k:
            return rows[np.argpartition(-scores[rows], k - 1)[:k]]
    return np.argpartition(-scores, k - 1)[:k]


_SAMPLE_STEP = 64


def int8_dots(
    rows: np.ndarray,
    q8: np.ndarray,
    lift: np.ndarray,
    out: np.ndarray | None = None,
    threads: int | None = None,
) -> np.ndarray:
    """Each row's int8 dot product with ``q8``, written into ``out`` (float32, one per row; a
    new array when None) and returned. ``rows`` holds the int8 values plus 128 (uint8) and
    ``lift`` 128 times each row's sum of them (``Lists``).

    SimSIMD's unsigned kernel for the CPU at hand gives ``sum((x + 128) * (q + 128))``; less
    ``128 * sum(q) + 128² * dims`` and the row's ``lift`` that is ``sum(x * q)``, the signed
    dot product. On AVX2 (no VNNI) the unsigned kernel reads the same bytes in ~20% less CPU
    than the signed one (1M rows of 384: ~31 against ~38 ms of one core with the subtractions,
    ``python -m benchmarks.scale --kernels``), and numpy's int8 ``einsum`` has no SIMD loop
    at all (~125-173 ms). Every sum is an exact integer in float32 while the unsigned one
    stays below 2²⁴: always, when ``255 * (x's sum + 128 * dims)`` does for the block's rows
    (real vectors sum to a few hundred at most, so 384 dimensions have room); otherwise
    (a wider model, a row of large positive values) it is computed in float64 and the signed
    sum stored in float32, exact up to 1,040 dimensions and rounded to 24 bits above (the pool
    it keeps is rescored exactly). The rows are split over ``threads`` (``SCAN_THREADS`` when
    None); the sums are the same integers however split: the order is the one measured on
    real vectors."""
    import numpy as np
    import simsimd

    if out is None:
        out = np.empty(len(rows), dtype=np.float32)
    if not len(rows):
        return out  # SimSIMD refuses an empty matrix
    threads = SCAN_THREADS if threads is None else threads
    d = rows.shape[1]
    qu = (q8 ^ np.int8(-128)).view(np.uint8)
    shift = 128 * int(q8.sum(dtype=np.int64)) + 128 * 128 * d
    if 255 * (float(lift.max()) / 128 + 128 * d) >= 1 << 24:
        wide = np.asarray(simsimd.cdist(qu[None, :], rows, metric="dot", threads=threads))[0]
        wide = wide.astype(np.float64) - shift
        wide -= lift
        out[:] = wide
        return out
    simsimd.cdist(qu[None, :], rows, metric="dot", out=out[None, :], threads=threads)
    # The shift first: sum(x * q) + 128 * sum(x) stays within 2 * 128 * 127 * dims < 2**24.
    out -= shift
    out -= lift
    return out


class ListsScan:
    """One query's search of a ``Lists``, in blocks of rows that any thread may score by int8
    dot product (the recall's two threads share it, as ``vector_matrix.Scan``); ``best`` then
    rescores the pool exactly."""

    BLOCK = 65536  # rows per block: 24 MB of int8 rows, a few ms

    def __init__(
        self, lists: Lists, qvec: Vector, limit: int, keep: np.ndarray | None = None
    ) -> None:
        import numpy as np

        self._lists, self._limit = lists, limit
        self._q = np.asarray(qvec, dtype=np.float32)
        top = float(np.abs(self._q).max()) or 1.0
        self._q8 = np.clip(np.rint(self._q * (127.0 / top)), -127, 127).astype(np.int8)
        self._rows = lists.candidates(self._q, keep)
        self._n = len(lists) if self._rows is None else len(self._rows)
        self._approx = np.empty(self._n, dtype=np.float32)
        self._next = 0
        self._left = self._n
        self._cv = threading.Condition()

    def work(self) -> None:
        """Score blocks until none is left to take."""
        lists = self._lists
        while True:
            with self._cv:
                a = self._next
                if a >= self._n:
                    return
                b = self._next = min(a + self.BLOCK, self._n)
            if self._rows is None:
                rows, lift, scale = lists.rows[a:b], lists.lift[a:b], lists.scale[a:b]
            else:
                sel = self._rows[a:b]
                rows, lift, scale = lists.rows[sel], lists.lift[sel], lists.scale[sel]
            out = int8_dots(rows, self._q8, lift, self._approx[a:b])
            out *= scale
            with self._cv:
                self._left -= b - a
                if not self._left:
                    self._cv.notify_all()

    def best(self) -> list[tuple[int, float]] | None:
        """Once every block is scored: the pool rescored exactly, the best ``limit``."""
        with self._cv:
            self._cv.wait_for(lambda: not self._left)
        if self._n == 0:
            return []
        picked = top_rows(self._approx, max(POOL_MIN, POOL_PER_HIT * self._limit))
        rows = picked if self._rows is None else self._rows[picked]
        exact = self._lists._exact(rows, self._q)
        if exact is None:
            return None
        ids = self._lists.ids[rows]
        order = sorted(zip(ids.tolist(), exact.tolist(), strict=True), key=lambda r: (-r[1], r[0]))
        return order[: self._limit]


def _assign(
    conn: db.Connection, table: str, d: int, n: int, k: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centroids, list starts, each row's place in list order) for ``k`` lists: spherical
    k-means on a seeded sample (pass 1), then each row's nearest centroid (pass 2)."""
    import numpy as np

    step = max(1, n // max(k * SAMPLE_PER_LIST, 1))
    sample, seen = [], 0
    for _, ids, _, vecs in _chunks(conn, table, d):
        first = (-seen) % step
        sample.append(vecs[first::step])
        seen += len(ids)
    if seen != n:
        raise ValueError("vec0's row count does not add up")
    cent = _kmeans(np.concatenate(sample), k, seed)
    del sample
    label = np.empty(n, dtype=np.int32)
    at = 0
    for _, ids, _, vecs in _chunks(conn, table, d):
        for a in range(0, len(ids), _BLOCK):
            part = vecs[a : a + _BLOCK]
            label[at : at + len(part)] = np.argmax(part @ cent.T, axis=1)
            at += len(part)
    counts = np.bincount(label, minlength=k)
    starts = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    place = np.empty(n, dtype=np.int64)
    place[np.argsort(label, kind="stable")] = np.arange(n)
    return cent, starts, place


def build(path: str, table: str = "chunk_vectors", seed: int = 1) -> Lists | None:
    """The compressed copy of the vec0 ``table`` of the index at ``path``, or None when its
    layout is not the one this module knows or it changed while being read."""
    from pathlib import Path

    import numpy as np

    from clawmem.errors import UnsafePathError
    from clawmem.files.safe_open import check_database

    try:
        check_database(Path(path))  # SQLite would follow a link at the index or its side files
    except (OSError, UnsafePathError):
        return None
    conn = db.sqlite.connect(db.uri(path, "mode=ro"), uri=True, check_same_thread=False)
    conn.isolation_level = None
    # No memory map: the copy reads every vector once, then a few rows a query; mapped, the
    # file's pages it read (up to 1 GiB) would count in the holding process's memory.
    conn.execute("PRAGMA mmap_size = 0")
    try:
        conn.execute("BEGIN")  # one snapshot for all three passes
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        row = conn.execute(
            f"SELECT length(vectors) / (SELECT size FROM {table}_chunks LIMIT 1) / 4 "
            f"FROM {table}_vector_chunks00 LIMIT 1"
        ).fetchone()
        (n,) = conn.execute(f"SELECT count(*) FROM {table}_rowids").fetchone()
        if row is None or not row[0] or not n:
            conn.close()
            return None
        d = int(row[0])
        # One list when every row is scored anyway (PROBE_SHARE 1, the default): no k-means.
        k = 1 if PROBE_SHARE >= 1 else max(1, min(n, round(LISTS_PER_SQRT * math.sqrt(n))))
        if k == 1:
            cent = np.zeros((1, d), dtype=np.float32)
            starts = np.array([0, n], dtype=np.int64)
            place = np.arange(n, dtype=np.int64)
        else:
            cent, starts, place = _assign(conn, table, d, n, k, seed)
        out_ids = np.empty(n, dtype=np.int64)
        rows = np.empty((n, d), dtype=np.uint8)
        lift = np.empty(n, dtype=np.float32)
        scale = np.empty(n, dtype=np.float32)
        chunk = np.empty(n, dtype=np.int64)
        pos = np.empty(n, dtype=np.int32)
        at = 0
        for c, ids, p, vecs in _chunks(conn, table, d):
            to = place[at : at + len(ids)]
            out_ids[to] = ids
            q8, scale[to] = _quantize(vecs)
            rows[to] = (q8 ^ np.int8(-128)).view(np.uint8)
            lift[to] = 128 * q8.sum(axis=1, dtype=np.int64)
            chunk[to] = c
            pos[to] = p
            at += len(ids)
        if at != n:
            raise ValueError("vec0's row count does not add up")
        conn.execute("COMMIT")
    except (db.DatabaseError, ValueError):
        conn.close()
        return None
    if int(conn.execute("PRAGMA data_version").fetchone()[0]) != version:
        conn.close()
        return None  # changed while read (the snapshot was consistent, but is already old)
    if len(chunk) and chunk.min() >= 0 and chunk.max() < 1 << 31:
        chunk = chunk.astype(np.int32)  # vec0's chunk ids are small: 4 bytes a row, for ``lift``
    lists = Lists(path, table, cent, starts, out_ids, rows, lift, scale, chunk, pos)
    lists._conn, lists.version = conn, version
    return lists
