"""The vectors of an index held in memory, for a process that recalls more than once.

sqlite-vec's ``vec0`` KNN is an exact brute-force scan in plain C (no SIMD in the published
wheels): about 0.7 µs per 384-dimension vector here, 70 ms at 100k units, on every recall. A
process that recalls repeatedly (the MCP server, a long-running agent, the benchmark) instead keeps
the same vectors as one float32 matrix and scores them in memory (``cosines``: ~13 ms at 100k on
one core, ~9 on two). The result is the same exact cosine ranking; nothing is approximated.

When turned on (``CODES_MIN_ROWS``, off by default: see there why), from that many held vectors on
(a million units: 1.5 GB, ~120 ms a query on one core) a scan reads a compact copy first: one
sign bit per dimension of each vector, centred on the held vectors' mean (``Codes``: 48 bytes a
vector, ~10 ms at 1M), keeps the ``pool`` rows nearest by Hamming distance (1% of them, at
least 2,000), and ranks those by exact cosine from the float32 matrix. The top-k is then the
exact one whenever the exact top-k lies inside the pool (tests/test_vector_codes.py); what the
pool may miss is measured by benchmarks/suites/scale.py and, with the codes forced on, on each quality
set (docs/benchmarks.md). Below the threshold nothing changes: every row is scored exactly.

This is a cache of the vec0 table, not a second index: it is read from vec0's own storage (its
chunk blobs: ~100 reads at 100k units instead of 100k row lookups) and thrown away as soon as any
other connection commits to the database (``PRAGMA data_version`` on a connection kept for that
purpose) or the file is swapped by a rebuild (its inode changes). A one-shot CLI never loads it:
the matrix is built at the second vector search on the same index in a process, so a cold
``clawmem recall`` pays vec0's scan and nothing more.

The layout read here is sqlite-vec 0.1's (``<table>_chunks``: size, validity bitmap, rowids;
``<table>_vector_chunks00``: the vectors). Anything unexpected (another layout, counts that do not
add up) means: no matrix, vec0 answers (tests/test_vector_matrix.py checks the layout against
vec0's own answers, so an upgrade that changes it fails a test rather than a recall).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.store import db
from clawmem.store.index import inode

if TYPE_CHECKING:
    import array
    from pathlib import Path

    import numpy as np

    # A query's vector as embedders give it (embedders.base.Vector; store is below embedders).
    Vector = np.ndarray | array.array
    from clawmem.store.index import Index
    from clawmem.store.vector_lists import Lists

# The matrix is loaded at this many-th unfiltered vector search on one index in this process.
LOAD_AT_SEARCH = 2
# From this many held vectors on, a scan ranks binary codes first and rescores a pool exactly
# (``Codes``); None: never (the default). At 1M units the exact scan is ~130 ms of CPU a query,
# the codes' ~20, but on real conversation vectors (REALTALK's) a sign-bit first pass orders
# the exact top 10 within its first 10% of rows for only 30% of the questions, and with a
# pool of 2 rows per candidate REALTALK's hybrid ER@2k fell 0.008 (docs/benchmarks.md, "1M
# units"): over the 0.005 a compressed first pass may cost. So it stays off until a first pass
# that keeps the exact candidates on real data is measured; benchmarks turn it on
# (``python -m benchmarks --codes-from N``, ``benchmarks/suites/scale.py``). Read at load and at each
# scan.
CODES_MIN_ROWS: int | None = None
# The pool rescored exactly: at least POOL_MIN rows, POOL_PER_HIT per hit asked for, and
# POOL_SHARE of the rows ranked. At 1M units (synthetic vectors, benchmarks/suites/scale.py) a pool of
# 2,000 kept 78% of the exact 80 candidates for a query near the data, 8,000 kept 96%, 20,000
# 99.5%; each costs ~2 ms more per 5,000 rows rescored (a scan: ~19, 22, 31 ms of CPU).
POOL_MIN = 2000
POOL_PER_HIT = 16
POOL_SHARE = 0.01
# From this many vectors on, a process holds the compressed copy (``vector_lists``: int8 rows in
# inverted lists, exact rescoring of a pool; 392 bytes a vector instead of 1,536, and a query
# scores ~5% of the rows) instead of the float32 matrix. Below it the exact scan is cheap enough
# (~13 ms of CPU at 100k units) and nothing is approximated.
LISTS_MIN_ROWS = 250_000
# From this many vectors on, a process that holds none (a one-shot CLI) asks the resident
# embedder, which holds them (from LISTS_MIN_ROWS on, the compressed copy), for an unfiltered
# vector leg instead of running vec0's KNN over every vector (~0.7 µs a vector: 70 ms at 100k
# units, ~700 ms of CPU at 1M); below it vec0 is quick, and the embedder holds nothing.
REMOTE_MIN_ROWS = 50_000
# Indexes whose matrices one process keeps at most (each holds its vectors and an open file); the
# one held longest goes first. A server has one workspace; a test run or a script has many.
MAX_HELD = 4


@dataclass
class _Matrix:
    ino: int
    probe: db.Connection  # kept open: its data_version moves when anyone else commits
    version: int
    ids: np.ndarray  # int64 chunk ids, one per row of ``mat``
    mat: np.ndarray | Lists  # float32, L2-normalised rows; or the compressed copy
    codes: Codes | None  # the rows' binary codes, from CODES_MIN_ROWS rows on


_lock = threading.Lock()
_matrices: dict[str, _Matrix] = {}
_searches: dict[str, int] = {}
_loading: dict[str, threading.Thread] = {}


def _data_version(conn: db.Connection) -> int:
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def matrix(
    index: Index, *, count: bool = True
) -> tuple[np.ndarray, np.ndarray | Lists, Codes | None] | None:
    """(chunk ids, vectors or their compressed copy, their codes or None) of ``index``'s vec0
    table when this process holds them fresh; else
    None (the caller scans with vec0), and from the second counted search on, a background load
    starts: recall never waits for it (~1 s of CPU at 100k units). ``count=False``: a search
    that uses a held matrix but does not count towards loading one (a time-filtered search: a
    question naming a day ranks twice in one recall, and a one-shot CLI must not load)."""
    return held_at(index.path, count=count)


def held_at(
    path: Path, *, count: bool = True, load_at: int | None = None, compressed: bool = False
) -> tuple[np.ndarray, np.ndarray | Lists, Codes | None] | None:
    """``matrix`` for the index file at ``path`` (the resident embedder's, which answers for
    other processes and opens no index of its own: it loads at the first search, ``load_at``,
    and holds the compressed copy whatever the size, ``compressed``: a quarter of the memory)."""
    key = str(path)
    with _lock:
        ino = inode(path)
        m = _matrices.get(key)
        if m is not None:
            try:
                fresh = m.ino == ino and _data_version(m.probe) == m.version
            except db.DatabaseError:
                fresh = False
            if fresh:
                return m.ids, m.mat, m.codes
            forget(key)
        if not count:
            return None
        _searches[key] = _searches.get(key, 0) + 1
        if (
            _searches[key] >= (load_at or LOAD_AT_SEARCH)
            and ino is not None
            and key not in _loading
        ):
            t = threading.Thread(
                target=_load_in_background,
                args=(path, ino, compressed),
                daemon=True,
                name="clawmem-vectors",
            )
            _loading[key] = t
            t.start()
        return None


def wait() -> None:
    """Wait for background loads to finish (tests and benchmarks)."""
    for t in list(_loading.values()):
        t.join()


def _load_in_background(path: Path, ino: int, compressed: bool = False) -> None:
    key = str(path)
    probe = None
    loaded: tuple[np.ndarray, np.ndarray | Lists] | None = None
    try:
        probe = db.sqlite.connect(db.uri(path, "mode=ro"), uri=True, check_same_thread=False)
        probe.execute(f"PRAGMA mmap_size = {db.MMAP_BYTES}")
        version = _data_version(probe)  # before reading: a commit after it forces a reload
        codes = None
        (rows,) = probe.execute("SELECT count(*) FROM chunk_vectors_rowids").fetchone()
        if compressed or rows >= LISTS_MIN_ROWS:
            from clawmem.store import vector_lists

            lists = vector_lists.build(str(path))
            loaded = None if lists is None else (lists.ids, lists)
        else:
            plain = load(probe)
            loaded = None if plain is None else (plain[0], plain[1])
        if loaded is not None and not _is_lists(loaded[1]) and _coded(len(loaded[0])):
            codes = Codes(loaded[1])  # type: ignore[arg-type]
    except db.DatabaseError:
        pass  # a read-only folder (no -shm can be made), a swapped file: vec0 keeps answering
    except Exception:  # noqa: BLE001 - raised here, it ended the thread before the cleanup
        # below, and the index read as "loading" for the process's life (a column of another
        # type in a damaged index, memory running out): no copy, and vec0 answers, as for a
        # layout this module does not know.
        loaded = None
    with _lock:
        _loading.pop(key, None)
        if loaded is None or probe is None or inode(path) != ino:
            if probe is not None:
                probe.close()
            return
        forget(key)
        while len(_matrices) >= MAX_HELD:
            forget(next(iter(_matrices)))
        _matrices[key] = _Matrix(ino, probe, version, *loaded, codes)


def _is_lists(mat: object) -> bool:
    from clawmem.store.vector_lists import Lists

    return isinstance(mat, Lists)


def loading(path: Path) -> bool:
    """Whether a load of the index at ``path`` is under way in this process."""
    with _lock:
        return str(path) in _loading


def search_held(
    held: tuple[np.ndarray, np.ndarray | Lists, Codes | None], qvec: Vector, limit: int
) -> list[tuple[int, float]] | None:
    """The ``limit`` best (chunk id, exact cosine) of what ``held_at`` returned, on this thread;
    None when the index changed under a compressed copy."""
    ids, mat, codes = held
    if _is_lists(mat):
        return mat.search(qvec, limit)  # type: ignore[union-attr]
    scan = Scan(ids, mat, qvec, limit, codes=codes)  # type: ignore[arg-type]
    scan.work()
    return scan.best()


def held_state(path: Path) -> tuple[int, bool] | None:
    """(rows, whether a scan ranks codes first) of the matrix this process holds for the index
    at ``path``, or None (vec0 answers); changes nothing (``recall --json``'s vectors.search)."""
    with _lock:
        m = _matrices.get(str(path))
        if m is None:
            return None
        return len(m.ids), m.codes is not None and _coded(len(m.ids))


def held_summary() -> list[dict]:
    """What this process holds, per index (benchmarks): rows, bytes, whether codes are kept."""
    with _lock:
        return [
            {
                "index": key,
                "rows": len(m.ids),
                "matrix_bytes": int(m.mat.nbytes) if not _is_lists(m.mat) else 0,
                "lists_bytes": int(m.mat.nbytes) if _is_lists(m.mat) else 0,
                "codes_bytes": int(m.codes.words.nbytes) if m.codes is not None else 0,
            }
            for key, m in _matrices.items()
        ]


def drop_gone() -> list[str]:
    """Drop the matrices of indexes no longer at their path (the workspace removed, the index
    rebuilt or deleted), and return their paths. Asked again, such a copy would be thrown away
    (``held_at``); but nobody asks about a workspace that is gone, and the resident embedder held
    its vectors and its open, deleted file (the disk space with it) until it went idle."""
    from pathlib import Path

    with _lock:
        gone = [key for key, m in _matrices.items() if inode(Path(key)) != m.ino]
        for key in gone:
            forget(key)
            _searches.pop(key, None)
        return gone


def forget(key: str | None = None) -> None:
    """Drop the matrix of the index at ``key`` (every matrix when None)."""
    for k in [key] if key is not None else list(_matrices):
        m = _matrices.pop(k, None)
        if m is not None:
            m.probe.close()
            if _is_lists(m.mat):
                m.mat.close()  # type: ignore[union-attr]


def load(conn: db.Connection, table: str = "chunk_vectors") -> tuple[np.ndarray, np.ndarray] | None:
    """Every vector of the vec0 ``table`` from its chunk blobs, or None if the layout is not the
    one this module knows."""
    import numpy as np

    try:
        dims = conn.execute(
            f"SELECT length(vectors) / (SELECT size FROM {table}_chunks LIMIT 1) / 4 "
            f"FROM {table}_vector_chunks00 LIMIT 1"
        ).fetchone()
        (expected,) = conn.execute(f"SELECT count(*) FROM {table}_rowids").fetchone()
        if dims is None or not dims[0] or not expected:
            return None
        d = int(dims[0])
        # Filled one chunk blob at a time: at 1M units the blobs are 1.5 GB, and holding them
        # all (fetchall) beside their filtered copies and the joined matrix peaked at ~4.5 GB.
        # Ordered by the vector table's own key (its "rowid" column, which is the chunk id):
        # ``ORDER BY c.chunk_id`` made SQLite scan the vector blobs first and sort all of them in
        # a temporary B-tree (1.5 GB at 1M units) before the first row came back.
        ids = np.empty(expected, dtype=np.int64)
        mat = np.empty((expected, d), dtype=np.float32)
        n = 0
        for size, validity, rowids, vectors in conn.execute(
            f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {table}_chunks c "
            f"JOIN {table}_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY v.rowid"
        ):
            if len(rowids) != size * 8 or len(vectors) != size * d * 4 or len(validity) * 8 < size:
                return None
            valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
            keep = valid.astype(bool)
            m = int(keep.sum())
            if n + m > expected:
                return None
            ids[n : n + m] = np.frombuffer(rowids, "<i8")[keep]
            mat[n : n + m] = np.frombuffer(vectors, "<f4").reshape(size, d)[keep]
            n += m
    except db.DatabaseError:
        return None
    if n != expected:
        return None
    return ids, mat


def rows_of(ids: np.ndarray, wanted: list[int]) -> np.ndarray:
    """A boolean mask over the held rows: True where the row's chunk id is in ``wanted`` (ids the
    matrix does not hold, units not embedded, are left out, as vec0 leaves them out)."""
    import numpy as np

    keep = np.zeros(len(ids), dtype=bool)
    if wanted:
        keep |= np.isin(ids, np.asarray(wanted, dtype=np.int64), assume_unique=True)
    return keep


def top(ids: np.ndarray, mat: np.ndarray, qvec: Vector, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best (chunk id, cosine) by score, then id: vec0's ranking, exactly."""
    scan = Scan(ids, mat, qvec, limit)
    scan.work()
    return scan.best()


class Codes:
    """One sign bit per dimension of each held vector, after subtracting the vectors' mean.

    A sentence model's vectors share a large common direction (every cosine of this model's
    vectors is well above zero), so raw signs say little; centred, the Hamming distance between
    two codes tracks the angle between the vectors. Held as 64-bit words, word-major (``words[j]``
    is the j-th word of every row): the scan XORs and counts one contiguous column at a time."""

    BLOCK = 65536  # rows encoded at a time: bounds the temporary copies of the float rows

    def __init__(self, mat: np.ndarray) -> None:
        import numpy as np

        n, d = mat.shape
        total = np.zeros(d, dtype=np.float64)
        for a in range(0, n, self.BLOCK):  # in blocks: no float64 copy of the whole matrix
            total += mat[a : a + self.BLOCK].sum(axis=0, dtype=np.float64)
        self.mean = (total / max(n, 1)).astype(np.float32)
        self.n_words = (d + 63) // 64
        self.words = np.empty((self.n_words, n), dtype=np.uint64)
        for a in range(0, n, self.BLOCK):
            b = min(a + self.BLOCK, n)
            self.words[:, a:b] = self._pack(mat[a:b]).T

    def _pack(self, rows: np.ndarray) -> np.ndarray:
        """(rows, n_words) uint64 codes of float rows."""
        import numpy as np

        bits = np.packbits(rows > self.mean, axis=1, bitorder="little")
        pad = self.n_words * 8 - bits.shape[1]
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(bits).view("<u8")

    def query(self, q: np.ndarray) -> np.ndarray:
        return self._pack(q.reshape(1, -1))[0]

    def distances(self, qwords: np.ndarray, a: int, b: int, out: np.ndarray) -> None:
        """Hamming distance of rows a..b to the query's code, into ``out`` (uint16)."""
        import numpy as np

        tmp = np.empty(b - a, dtype=np.uint64)
        out[:] = 0
        for j in range(self.n_words):
            np.bitwise_xor(self.words[j, a:b], qwords[j], out=tmp)
            out += np.bitwise_count(tmp)


class Scan:
    """One query's scan of a held matrix, in blocks of rows that any thread may score: the
    thread that embedded the query starts it, and the recall's own thread, once its lexical
    leg is done, takes a share instead of waiting (two cores score 100k vectors in ~9 ms, one
    in ~15). The scores are the same whoever computes a block.

    With ``codes`` (and at least CODES_MIN_ROWS rows), a block is the Hamming distances of its
    rows' codes; ``best`` then rescores the nearest ``pool`` rows exactly (``compressed``)."""

    BLOCK = 8192  # rows per block: ~12 MB of vectors, ~1 ms
    CODE_BLOCK = 131072  # rows per block of codes: 1 MB of codes, ~1 ms

    def __init__(
        self,
        ids: np.ndarray,
        mat: np.ndarray,
        qvec: Vector,
        limit: int,
        *,
        keep: np.ndarray | None = None,
        codes: Codes | None = None,
    ) -> None:
        import numpy as np

        self._ids, self._mat, self._limit = ids, mat, limit
        # Rows that may be answered (a time window): all are scored, a block at a time as
        # without one, and only these are ranked. Scoring the rest costs less than gathering
        # the window's rows into a matrix of their own.
        self._keep = keep
        self._q = np.asarray(qvec, dtype=np.float32)
        self.compressed = codes is not None and _coded(len(mat))
        self._codes = codes if self.compressed else None
        if self._codes is not None:
            self._qwords = self._codes.query(self._q)
            self._sims = np.empty(len(mat), dtype=np.uint16)  # Hamming distances
            self._block = self.CODE_BLOCK
        else:
            self._sims = np.empty(len(mat), dtype=np.float32)
            self._block = self.BLOCK
        self.pool_ids: np.ndarray | None = None  # the rows rescored, once ``best`` ran
        self._next = 0  # first row no thread has taken yet
        self._left = len(mat)  # rows not scored yet
        self._cv = threading.Condition()

    def work(self) -> None:
        """Score blocks until none is left to take."""
        n = len(self._mat)
        while True:
            with self._cv:
                a = self._next
                if a >= n:
                    return
                b = self._next = min(a + self._block, n)
            if self._codes is not None:
                self._codes.distances(self._qwords, a, b, self._sims[a:b])
            else:
                cosines(self._mat[a:b], self._q, out=self._sims[a:b])
            with self._cv:
                self._left -= b - a
                if not self._left:
                    self._cv.notify_all()

    def pool_size(self, rows: int) -> int:
        return pool_for(rows, self._limit)

    def best(self) -> list[tuple[int, float]]:
        """Once every block is scored (waits for a block another thread is still on)."""
        import numpy as np

        with self._cv:
            self._cv.wait_for(lambda: not self._left)
        if self._codes is not None:
            # The pool: the rows nearest by Hamming distance, scored exactly.
            rows = np.arange(len(self._mat)) if self._keep is None else np.flatnonzero(self._keep)
            dist = self._sims if self._keep is None else self._sims[rows]
            pool = self.pool_size(len(rows))
            if pool < len(rows):
                rows = np.sort(rows[np.argpartition(dist, pool - 1)[:pool]])
            ids, sims = self._ids[rows], cosines(self._mat[rows], self._q)
            self.pool_ids = ids
        else:
            ids, sims = self._ids, self._sims
            if self._keep is not None:
                ids, sims = ids[self._keep], sims[self._keep]
        n = len(sims)
        if n == 0:
            return []
        want = min(n, self._limit)
        if want < n:
            # Everything tied with the last kept score comes along, so ties break by id as
            # vec0's caller does (sort by score, then id), not by where argpartition put them.
            cut = np.partition(sims, n - want)[n - want]
            pick = np.flatnonzero(sims >= cut)
        else:
            pick = np.arange(n)
        order = sorted(((int(ids[i]), float(sims[i])) for i in pick), key=lambda r: (-r[1], r[0]))
        return order[:want]


def _coded(rows: int) -> bool:
    """Whether a matrix of ``rows`` vectors is scanned through its codes first."""
    return CODES_MIN_ROWS is not None and rows >= CODES_MIN_ROWS


def pool_for(rows: int, limit: int) -> int:
    """How many of ``rows`` ranked rows the codes' first pass keeps for exact rescoring."""
    return max(POOL_MIN, POOL_PER_HIT * limit, int(POOL_SHARE * rows))


def cosines(mat: np.ndarray, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``mat @ q`` for unit vectors, on the calling thread only.

    numpy's own loop (einsum), not BLAS: OpenBLAS would split a large product over its worker
    threads, and those spin for a while after every call, on the core that the lexical leg and
    the next recall need. Limiting it around each scan (threadpoolctl) was not enough: after
    some sequences of recalls (vector searches, then hybrid ones) the worker spun through every
    later recall, ~60 ms of CPU each (hybrid p50 at 100k units 45 -> 70 ms, quiet machine).
    This loop is about as fast here (~1.3 ms per 10k vectors of 384 dimensions, BLAS on one
    thread ~1.25) and leaves the process's BLAS settings alone."""
    import numpy as np

    return np.einsum("ij,j->i", mat, q, out=out)
