"""The index's vectors: the vector table (sqlite-vec's ``vec0``, or plain rows without it), the
embedding cache keyed by embedder and text hash, and which vector space the index holds.

``IndexVectors`` is the part of ``store.index.Index`` that stores and finds vectors; ``Index``
inherits it, so callers keep one object for a file. ``embed_text`` is what the embedder sees for a
unit (its hash keys the cache).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from clawmem.store import db, schema

if TYPE_CHECKING:
    import numpy as np


def _blob(vec: np.ndarray) -> bytes:
    """A vector as stored (little-endian float32). One from another process (the resident
    embedder) comes as an ``array.array("f")``: storing an edit's few vectors needs no NumPy."""
    import array
    import sys

    if isinstance(vec, array.array) and vec.typecode == "f" and sys.byteorder == "little":
        return vec.tobytes()
    import numpy as np  # lazily: lexical-only commands never need it

    return np.asarray(vec, dtype="<f4").tobytes()


# Looking a text's vector up by its hash, in the units (``_cached_vector``) and for every cache
# entry (``adopt_cached``: the cost follows the cache, texts that left the index, not the index;
# `sha256 IN (SELECT … FROM chunks)` built the set of every embedded unit's hash on every sync,
# 2.8 s of a no-change index at 100k units). `+embedded` keeps SQLite on chunks(sha256): with no
# statistics it searched chunks(embedded) instead, where nearly every row is 1, and walked all of
# them per lookup: 37-65 ms each at 100k units, so a cache of a few hundred old texts made every
# sync take seconds, and each new unit of an edited file cost as much.
LIVE_BY_SHA = "SELECT id FROM chunks WHERE sha256 = ? AND +embedded = 1 LIMIT 1"
DROP_ADOPTED = (
    "DELETE FROM embedding_cache WHERE embedder = ? AND EXISTS "
    "(SELECT 1 FROM chunks c WHERE c.sha256 = embedding_cache.sha256 AND +c.embedded = 1)"
)


class IndexVectors:
    """Vector storage of one index file; mixed into ``Index``, which owns the connection, the
    meta table and the read memo these methods use."""

    conn: db.Connection
    vec: db.VectorSupport

    if TYPE_CHECKING:  # provided by Index

        def get_meta(self, key: str) -> str | None: ...

        def set_meta(self, key: str, value: str) -> None: ...

        def memo(self, name: str) -> dict: ...

    @property
    def dims(self) -> int | None:
        value = self.get_meta("dims")
        return int(value) if value else None

    def set_embedder(self, key: str, identity_json: str, dims: int) -> bool:
        """Declare the vector space. If it differs from the stored one, every vector is dropped
        (vectors from two models never mix) and all units become pending. Returns True if reset."""
        old_key = self.get_meta("embedder")
        if old_key == key and self.dims == dims and self._vector_table_exists():
            return False
        with self.conn:
            old_table = self.vector_table()
            if old_key and old_table:
                # Keep the old model's vectors in the cache: switching back embeds nothing.
                self.conn.execute(
                    "INSERT OR REPLACE INTO embedding_cache(embedder, sha256, vector, last_used) "
                    f"SELECT ?, c.sha256, v.embedding, ? FROM chunks c JOIN {old_table} v "
                    "ON v.chunk_id = c.id",
                    (old_key, int(time.time())),
                )
            self.conn.execute("DROP TABLE IF EXISTS chunk_vectors")
            self.conn.execute("DROP TABLE IF EXISTS chunk_vectors_plain")
            if self.vec.available:
                self.conn.executescript(schema.vec0_ddl(dims))
            else:
                self.conn.executescript(schema.PLAIN_VECTORS_DDL)
            self.conn.execute("UPDATE chunks SET embedded = 0")
            self.set_meta("embedder", key)
            self.set_meta("embedder_identity", identity_json)
            self.set_meta("dims", str(dims))
            self.set_meta("vector_backend", self.vec.backend)
        return True

    def _vector_table_exists(self) -> bool:
        return self.vector_table() is not None

    def vector_table(self) -> str | None:
        """The table holding this index's vectors, judged by what the file contains (an index
        opened only to read its vectors may have been written with the other backend)."""
        names = {
            r[0]
            for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE name IN ('chunk_vectors', 'chunk_vectors_plain')"
            )
        }
        if "chunk_vectors_plain" in names:
            return "chunk_vectors_plain"
        if "chunk_vectors" in names and self.vec.available:
            return "chunk_vectors"
        return None

    def _cached_vector(self, key: str, sha: str) -> bytes | None:
        row = self.conn.execute(
            "SELECT vector FROM embedding_cache WHERE embedder = ? AND sha256 = ?", (key, sha)
        ).fetchone()
        if row is not None:
            # Back in the live table: keep one copy only.
            self.conn.execute(
                "DELETE FROM embedding_cache WHERE embedder = ? AND sha256 = ?", (key, sha)
            )
            return row[0]
        live = self.conn.execute(LIVE_BY_SHA, (sha,)).fetchone()
        if live is not None:
            return self._get_vector(live[0])
        return None

    def _get_vector(self, chunk_id: int) -> bytes | None:
        table = "chunk_vectors" if self.vec.available else "chunk_vectors_plain"
        row = self.conn.execute(
            f"SELECT embedding FROM {table} WHERE chunk_id = ?", (chunk_id,)
        ).fetchone()
        return bytes(row[0]) if row else None

    def _delete_vector(self, chunk_id: int) -> None:
        table = "chunk_vectors" if self.vec.available else "chunk_vectors_plain"
        self.conn.execute(f"DELETE FROM {table} WHERE chunk_id = ?", (chunk_id,))

    def _put_vector(
        self, chunk_id: int, vec: bytes, day: str | None, kind: str | None, now: int
    ) -> None:
        if self.vec.available:
            self.conn.execute(
                "INSERT INTO chunk_vectors(chunk_id, embedding, day, kind, evergreen) "
                "VALUES (?, ?, ?, ?, ?)",
                (chunk_id, vec, day or "", kind or "", 0 if day else 1),
            )
        else:
            self.conn.execute(
                "INSERT INTO chunk_vectors_plain(chunk_id, embedding) VALUES (?, ?)",
                (chunk_id, vec),
            )
        self.conn.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (chunk_id,))

    def pending(self, limit: int) -> list[tuple[int, str, str, str | None, str | None]]:
        """Units still waiting for a vector: (id, embed text, sha256, day, kind)."""
        rows = self.conn.execute(
            "SELECT c.id, c.heading, c.text, c.entities, c.kind, c.sha256, c.day FROM chunks c "
            "WHERE c.embedded = 0 ORDER BY c.id LIMIT ?",
            (limit,),
        ).fetchall()
        return [(r[0], embed_text(r[1], r[2], r[3].split(), r[4]), r[5], r[6], r[4]) for r in rows]

    def pending_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0]

    def store_vectors(
        self, rows: Sequence[tuple[int, np.ndarray | None, str | None, str | None]]
    ) -> None:
        """Commit one batch of computed vectors. A None vector (NaN/zero from the model) is marked
        embedded=-1 so it is neither retried forever nor searched."""
        now = int(time.time())
        with self.conn:
            for cid, vec, day, kind in rows:
                exists = self.conn.execute(
                    "SELECT embedded FROM chunks WHERE id = ?", (cid,)
                ).fetchone()
                if exists is None or exists[0] != 0:
                    continue  # the file changed while we were embedding
                if vec is None:
                    self.conn.execute("UPDATE chunks SET embedded = -1 WHERE id = ?", (cid,))
                else:
                    self._put_vector(cid, _blob(vec), day, kind, now)

    def forget_vectors(self, sha256s: Iterable[str]) -> int:
        """Drop the cached vectors of texts that were forgotten (``clawmem forget``), unless a
        live unit still has that text: a forgotten line leaves nothing behind in the index."""
        shas = sorted(set(sha256s))
        removed = 0
        with self.conn:
            for i in range(0, len(shas), 500):
                part = shas[i : i + 500]
                marks = ",".join("?" * len(part))
                cur = self.conn.execute(
                    f"DELETE FROM embedding_cache WHERE sha256 IN ({marks}) "
                    f"AND sha256 NOT IN (SELECT sha256 FROM chunks WHERE sha256 IN ({marks}))",
                    (*part, *part),
                )
                removed += cur.rowcount
        return removed

    def prune_cache(self, max_entries: int) -> int:
        with self.conn:
            removed = 0
            count = self.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
            if count > max_entries:
                cur = self.conn.execute(
                    "DELETE FROM embedding_cache WHERE (embedder, sha256) IN ("
                    "SELECT embedder, sha256 FROM embedding_cache ORDER BY last_used, sha256 LIMIT ?)",
                    (count - max_entries,),
                )
                removed += cur.rowcount
        return removed

    def import_vectors(self, key: str, source: IndexVectors) -> int:
        """Copy vectors of identical texts from another index (the old one, during a rebuild)
        into this one's cache, so a forced rebuild embeds nothing unchanged."""
        table = source.vector_table()
        if source.get_meta("embedder") != key or table is None:
            return 0
        wanted = [
            r[0] for r in self.conn.execute("SELECT DISTINCT sha256 FROM chunks WHERE embedded = 0")
        ]
        now = int(time.time())
        found = 0
        with self.conn:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = source.conn.execute(
                    f"SELECT c.sha256, v.embedding FROM chunks c JOIN {table} v ON v.chunk_id = c.id "
                    f"WHERE c.sha256 IN ({marks}) "
                    f"UNION ALL SELECT sha256, vector FROM embedding_cache "
                    f"WHERE embedder = ? AND sha256 IN ({marks})",
                    (*part, key, *part),
                ).fetchall()
                seen = set()
                for sha, vec in rows:
                    if sha in seen:
                        continue
                    seen.add(sha)
                    self.conn.execute(
                        "INSERT OR REPLACE INTO embedding_cache(embedder, sha256, vector, last_used) "
                        "VALUES (?, ?, ?, ?)",
                        (key, sha, bytes(vec), now),
                    )
                    found += 1
        return found

    def adopt_cached(self) -> int:
        """Give pending units the vectors waiting for them in the cache. Returns how many."""
        key = self.get_meta("embedder")
        if not key:
            return 0
        rows = self.conn.execute(
            "SELECT c.id, c.sha256, c.day, c.kind FROM chunks c JOIN embedding_cache e "
            "ON e.embedder = ? AND e.sha256 = c.sha256 WHERE c.embedded = 0",
            (key,),
        ).fetchall()
        now = int(time.time())
        with self.conn:
            for cid, sha, day, kind in rows:
                vec = self.conn.execute(
                    "SELECT vector FROM embedding_cache WHERE embedder = ? AND sha256 = ?",
                    (key, sha),
                ).fetchone()
                if vec is None:
                    continue
                self._put_vector(cid, bytes(vec[0]), day, kind, now)
            self.conn.execute(DROP_ADOPTED, (key,))
        return len(rows)

    def vector_counts(self) -> dict[str, int]:
        """Vectors stored and pending, cheaply (recall asks on every query): the partial index
        on pending units makes the second count a lookup, not a scan; the count of all units
        (~1 ms at 100k) is remembered while the index is unchanged."""
        memo = self.memo("vector_counts")
        if None not in memo:
            q = self.conn.execute
            pending = q("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0]
            total = q("SELECT count(*) FROM chunks").fetchone()[0]
            failed = q("SELECT count(*) FROM chunks WHERE embedded = -1").fetchone()[0]
            memo[None] = {"vectors": total - pending - failed, "pending": pending}
        return dict(memo[None])


def embed_text(heading: str, text: str, entities: Sequence[str], kind: str | None) -> str:
    """What the embedder sees for a unit: context first, then the text itself, both as their
    searchable words (markdown/searchable.py), the same words the lexical index holds."""
    from clawmem.markdown.searchable import (  # writes and embedding only
        searchable_heading,
        searchable_text,
    )

    heading, text = searchable_text(searchable_heading(heading)), searchable_text(text)
    if kind:
        return f"{', '.join(entities)}: {text}" if entities else text
    return f"{heading}\n{text}" if heading else text
