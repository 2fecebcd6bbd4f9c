"""The derived index: one SQLite file with FTS5, a vector table and the embedding cache.

``Index`` owns a connection and knows the tables; it has no opinion about *what* to index (that is
``sync``) or how to rank (that is ``recall``). Writes to one file happen in one transaction.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.store import db, schema, term_bounds, term_lists
from clawmem.store.vectors import IndexVectors, embed_text
from clawmem.text.textnorm import NORMALIZER_VERSION, search_text

if TYPE_CHECKING:
    from clawmem.markdown.links import Link


@dataclass(frozen=True)
class Unit:
    """Something to index: a structural chunk of a file, or one Retain fact."""

    start_line: int
    end_line: int
    heading: str
    text: str
    sha256: str  # hash of embed_text(...): the embedding cache key
    day: str | None
    kind: str | None = None
    confidence: float | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    entities: tuple[str, ...] = ()
    said_at: str | None = None  # a transcript message: when it was said


@dataclass(frozen=True)
class TranscriptState:
    """What the index remembers of a transcript between syncs (the files row's extra columns)."""

    offset: int  # bytes of complete lines indexed
    format: str | None
    session_id: str | None
    first_at: str | None
    last_at: str | None


@dataclass(frozen=True)
class Filters:
    """Restrictions applied *before* ranking limits, in both legs."""

    since: str | None = None  # YYYY-MM-DD inclusive; excludes evergreen files
    until: str | None = None
    kinds: tuple[str, ...] = ()  # fact kinds; "chunk" selects plain chunks
    entity: str | None = None  # folded entity name
    path_prefix: str | None = None
    facts_only: bool = False
    as_of: str | None = None  # YYYY-MM-DD: only what was recorded by then and still valid then
    source: str | None = None  # "memory" (the Markdown) or "sessions" (transcripts); None = all

    @property
    def active(self) -> bool:
        return any(
            [
                self.since,
                self.until,
                self.kinds,
                self.entity,
                self.path_prefix,
                self.facts_only,
                self.as_of,
                self.source,
            ]
        )


def expected_meta(chunking: str | None = None) -> dict[str, str]:
    """Meta values the index must carry for this code (and these chunk settings) to use it."""
    meta = {
        "schema_version": str(schema.SCHEMA_VERSION),
        "chunker_version": str(schema.CHUNKER_VERSION),
        "normalizer_version": str(NORMALIZER_VERSION),
        "redaction_version": str(schema.REDACTION_VERSION),
    }
    if chunking is not None:
        meta["chunking"] = chunking  # "tokens/overlap": other settings give other chunks
    return meta


def fts_values(
    text: str, heading: str, entities: Iterable[str], context: str
) -> tuple[str, str, str]:
    """The FTS columns of a unit: its searchable words only (markdown/searchable.py: a link's
    label, not its address; no markers, checkboxes or citations)."""
    from clawmem.markdown.searchable import (  # writes, and a few rows' phrases at 1M units
        searchable_heading,
        searchable_text,
    )

    return (
        search_text(searchable_text(text)),
        search_text(searchable_text(" ".join([searchable_heading(heading), *entities]))),
        search_text(searchable_text(context)),
    )


# How much of each neighbour a unit carries as context: enough for the message that asked the
# question a reply answers, not so much that a unit matches for its whole section.
CONTEXT_CHARS = 300


def neighbour_context(units: Sequence[tuple[str, str, str | None]]) -> list[str]:
    """For units of one file in file order, given as (heading, text, kind): the text of each
    plain unit's neighbours in the same section ("" for facts, which are self-contained).

    It is indexed (at low weight) but not stored: deleting a contentless FTS5 row restates its
    values, which are re-derived from the file's stored rows in the same order, so this must stay
    a pure function of them."""
    out = []
    for i, (heading, _text, kind) in enumerate(units):
        if kind is not None:
            out.append("")
            continue
        near = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(units) and units[j][2] is None and units[j][0] == heading:
                near.append(units[j][1][:CONTEXT_CHARS])
        out.append("\n".join(near))
    return out


# Answers one ``Index.memo`` dict holds before it starts again (a few MB at most).
MEMO_ENTRIES = 20_000


def inode(path: str | Path) -> int | None:
    """The inode of ``path`` (None if it is gone): the "is this still the live index file" test
    after a rebuild renamed a new file into place."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


# The meta key holding where this machine made the index file: "device:inode" of the file as
# it was when clawmem built it (``stamp_origin``). A copy of the file (a clone that committed
# it, a tarball, a synced folder, ``cp``) is another file, so its record names a file that it
# is not; such an index is foreign and is rebuilt from the Markdown, never read: its chunk
# texts could say what no Markdown file says, under real citations.
ORIGIN_META = "origin"
# An index of an older clawmem has no record either, and cannot be told from a shipped one.
FOREIGN = (
    "the index came from elsewhere (copied or cloned, or made by an older clawmem: "
    "nothing records that it was built here)"
)


class ForeignIndex(db.DatabaseError):
    """An index this machine did not build (``Index.foreign``): a read refuses it."""


def origin_of(path: str | Path) -> str | None:
    """The "device:inode" of the file at ``path`` (None if it is gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


class Index(IndexVectors):
    """One index file: its connection, meta, files, units, links and (``IndexVectors``) vectors."""

    def __init__(self, path: Path, conn: db.Connection, vec: db.VectorSupport) -> None:
        self.path = path
        self.conn = conn
        self.vec = vec
        self.readonly = False
        # The file this connection was opened on (stat before opening: a swap in between makes
        # the two differ, and a reader kept for reuse is then reopened, never trusted).
        self.ino: int | None = None
        # Answers of read queries that several steps of one recall ask (bm25_topk.phrase_rows),
        # kept by their owner together with the data version they hold for; emptied when the
        # connection is kept for another read (``Indexer.release``): counts of the query's own
        # terms are not carried from one question to the next.
        self.read_memo: dict = {}
        self._memo: dict[str, dict] = {}
        self._memo_version: tuple[int, int] | None = None

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, path: Path, *, readonly: bool = False) -> Index:
        ino = inode(path)
        conn, vec = db.connect(path, readonly=readonly)
        idx = cls(path, conn, vec)
        idx.readonly, idx.ino = readonly, ino
        return idx

    @classmethod
    def create(cls, path: Path, *, chunking: str | None = None) -> Index:
        """A fresh, empty index at ``path`` (which must not exist)."""
        idx = cls.open(path)
        # Before any table: pages freed by deleted rows can then be given back to the disk
        # (``reclaim``); without it a deleted 50 MB note left the index at its largest for good.
        idx.conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        with idx.conn:
            idx.conn.executescript(schema.DDL)
            for key, value in expected_meta(chunking).items():
                idx.set_meta(key, value)
            idx.set_meta("created_at", str(int(time.time())))
            idx.stamp_origin()
            idx.set_meta("vector_backend", idx.vec.backend)
        return idx

    def close(self) -> None:
        self.conn.close()

    def reclaim(self, *, text_removed: int = 0, min_bytes: int = 1 << 20) -> int:
        """Give back to the disk what deleted rows held, once it is at least ``min_bytes``;
        returns the bytes freed. ``text_removed``: bytes of Markdown a sync just dropped or
        replaced. FTS5 keeps deleted entries in its segments until they merge, so a large drop
        merges them first (``optimize``: its cost is the size of the full-text index). An index
        made before ``create`` set incremental auto-vacuum is converted once (a VACUUM), when a
        quarter of it is free."""
        q = self.conn.execute
        if text_removed >= min_bytes:
            with self.conn:
                for table in ("chunks_fts", "proposals_fts"):
                    q(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        page = int(q("PRAGMA page_size").fetchone()[0])
        free = int(q("PRAGMA freelist_count").fetchone()[0]) * page
        if free < min_bytes:
            return 0
        if int(q("PRAGMA auto_vacuum").fetchone()[0]) != 2:
            total = int(q("PRAGMA page_count").fetchone()[0]) * page
            if free * 4 < total:
                return 0
            q("PRAGMA auto_vacuum = INCREMENTAL")
            q("VACUUM")
        else:
            q("PRAGMA incremental_vacuum").fetchall()
        q("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # the file shrinks at the checkpoint
        return free

    def memo(self, name: str) -> dict:
        """A dict for answers of read queries, kept while the database is unchanged: emptied
        when any connection commits (``PRAGMA data_version``) or this one writes. For answers
        every recall asks whatever the question (the entities' names, the vector counts): a
        reader kept open between recalls (``Indexer.release``) then asks them once. Each dict
        holds at most ``MEMO_ENTRIES`` answers."""
        conn = self.conn
        version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
        if version != self._memo_version:
            self._memo.clear()
            self._memo_version = version
        memo = self._memo.setdefault(name, {})
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        return memo

    def check_compatible(self, chunking: str | None = None) -> str | None:
        """None if this index matches the code (and chunk settings); otherwise why it must be
        rebuilt."""
        try:
            meta = self.all_meta()
        except db.DatabaseError as exc:
            return f"unreadable ({exc})"
        for key, want in expected_meta(chunking).items():
            if meta.get(key) != want:
                return f"{key} is {meta.get(key)!r}, this clawmem writes {want!r}"
        if meta.get("vector_backend", self.vec.backend) != self.vec.backend:
            return (
                f"vectors were stored for {meta['vector_backend']}, "
                f"but {self.vec.backend} is in use now"
            )
        if self.foreign():
            return FOREIGN
        return None

    def stamp_origin(self, origin: str | None = None) -> None:
        """Record ``origin`` (this file's own, by default) as where the index was made, in the
        caller's transaction: only a build of clawmem's own (``Index.create``, ``sync.swap_in``)
        calls it."""
        self.set_meta(ORIGIN_META, origin or origin_of(self.path) or "")

    def foreign(self) -> bool:
        """Whether this index was not built as this file on this machine: its recorded origin
        (none in an index made before the record existed) is not the file's device and inode."""
        return self.get_meta(ORIGIN_META) != origin_of(self.path)

    # ----------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def all_meta(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.conn.execute("SELECT key, value FROM meta")}

    # ----------------------------------------------------------------- files
    def file_states(self) -> dict[str, tuple[int, int, str]]:
        rows = self.conn.execute("SELECT path, size, mtime_ns, sha256 FROM files")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def same_stats(self, files: Collection[tuple[str, int, int]]) -> bool:
        """Whether the index holds exactly these (relpath, size, mtime_ns) and nothing else.

        The check before every read, so it is built for speed: one row from SQLite (the files
        table as one string) instead of a row per file, and one set comparison. Fields are
        joined by "|" with the digits last (so each string names one triple); a path holding
        the record separator only splits into more pieces than rows, which the count refuses."""
        n, joined = self.conn.execute(
            "SELECT count(*), group_concat(path || '|' || size || '|' || mtime_ns, char(10)) "
            "FROM files"
        ).fetchone()
        if n != len(files):
            return False
        if not n:
            return True
        rows = joined.split("\n")
        return len(rows) == n and set(rows) == {f"{p}|{s}|{m}" for p, s, m in files}

    def touch_file(self, relpath: str, size: int, mtime_ns: int) -> None:
        """Content unchanged (same hash) but the stat moved: remember the new stat."""
        with self.conn:
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, relpath)
            )

    def replace_file(
        self,
        relpath: str,
        *,
        sha256: str,
        size: int,
        mtime_ns: int,
        day: str | None,
        lines: int,
        units: Sequence[Unit],
        problems: Sequence[dict],
        embedder_key: str | None,
        transcript: TranscriptState | None = None,
        links: Sequence[Link] = (),
    ) -> int:
        """Swap everything indexed for one file in a single transaction. Returns units reused
        from the embedding cache (their vectors did not need computing again)."""
        now = int(time.time())
        with self.conn:
            self._remove_file_rows(relpath, keep_vectors=embedder_key is not None, now=now)
            t = transcript
            self.conn.execute(
                "INSERT INTO files(path, sha256, size, mtime_ns, day, lines, problems, "
                "offset, format, session_id, first_at, last_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    relpath,
                    sha256,
                    size,
                    mtime_ns,
                    day,
                    lines,
                    json.dumps(list(problems)),
                    t.offset if t else None,
                    t.format if t else None,
                    t.session_id if t else None,
                    t.first_at if t else None,
                    t.last_at if t else None,
                ),
            )
            contexts = neighbour_context([(u.heading, u.text, u.kind) for u in units])
            reused = self._insert_units(relpath, units, contexts, embedder_key, now)
            # Unresolved until resolve_links runs over the final set of files (sync.apply_plan).
            self.conn.executemany(
                "INSERT INTO links(src, line, col, syntax, type, target, anchor, label, text, "
                "context, dst, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'unresolved')",
                [
                    (relpath, lk.line, lk.col, lk.syntax, lk.type, lk.target, lk.anchor)
                    + (lk.label, lk.text, lk.context)
                    for lk in links
                ],
            )
            return reused

    def append_units(
        self,
        relpath: str,
        units: Sequence[Unit],
        *,
        sha256: str,
        size: int,
        mtime_ns: int,
        lines: int,
        problems: Sequence[dict],
        transcript: TranscriptState,
        embedder_key: str | None,
    ) -> int:
        """Add units after a file's last ones (a transcript that grew), in one transaction; the
        units already indexed stay as they are. Returns units reused from the embedding cache.

        The last old unit gains a neighbour, so its lexical row is restated with its new context
        (``neighbour_context`` must keep describing the stored rows, see there)."""
        now = int(time.time())
        with self.conn:
            old = self.conn.execute(
                "SELECT id, heading, text, entities, kind FROM chunks WHERE path = ? "
                "ORDER BY id DESC LIMIT 2",
                (relpath,),
            ).fetchall()[::-1]
            tail = [(r["heading"], r["text"], r["kind"]) for r in old]
            new = [(u.heading, u.text, u.kind) for u in units]
            contexts = neighbour_context(tail + new)
            if old:
                last = old[-1]
                before = neighbour_context(tail)[-1]
                after = contexts[len(tail) - 1]
                if before != after:
                    ents = last["entities"].split()
                    body, head, ctx = fts_values(last["text"], last["heading"], ents, before)
                    self._fts_delete(relpath, [(last["id"], body, head, ctx)])
                    body, head, ctx = fts_values(last["text"], last["heading"], ents, after)
                    self._fts_insert(relpath, [(last["id"], body, head, ctx)])
            t = transcript
            self.conn.execute(
                "UPDATE files SET sha256 = ?, size = ?, mtime_ns = ?, lines = ?, problems = ?, "
                "offset = ?, format = ?, session_id = ?, first_at = ?, last_at = ? WHERE path = ?",
                (
                    sha256,
                    size,
                    mtime_ns,
                    lines,
                    json.dumps(list(problems)),
                    t.offset,
                    t.format,
                    t.session_id,
                    t.first_at,
                    t.last_at,
                    relpath,
                ),
            )
            return self._insert_units(relpath, units, contexts[len(tail) :], embedder_key, now)

    def transcript_state(self, relpath: str) -> tuple[TranscriptState, int, str, str] | None:
        """(state, lines, sha256, problems JSON) of an indexed transcript, or None."""
        row = self.conn.execute(
            "SELECT offset, format, session_id, first_at, last_at, lines, sha256, problems "
            "FROM files WHERE path = ? AND offset IS NOT NULL",
            (relpath,),
        ).fetchone()
        if row is None:
            return None
        state = TranscriptState(row[0], row[1], row[2], row[3], row[4])
        return state, row[5], row[6], row[7]

    def _insert_units(
        self,
        relpath: str,
        units: Sequence[Unit],
        contexts: Sequence[str],
        embedder_key: str | None,
        now: int,
    ) -> int:
        reused = 0
        fts_rows = []
        for u, context in zip(units, contexts, strict=True):
            cur = self.conn.execute(
                "INSERT INTO chunks(path, start_line, end_line, heading, text, sha256, day, "
                "kind, confidence, valid_from, valid_to, entities, said_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    relpath,
                    u.start_line,
                    u.end_line,
                    u.heading,
                    u.text,
                    u.sha256,
                    u.day,
                    u.kind,
                    u.confidence,
                    u.valid_from,
                    u.valid_to,
                    " ".join(u.entities),
                    u.said_at,
                ),
            )
            cid = cur.lastrowid
            fts_rows.append((cid, *fts_values(u.text, u.heading, u.entities, context)))
            for ent in dict.fromkeys(u.entities):
                self.conn.execute(
                    "INSERT OR IGNORE INTO chunk_entities(chunk_id, entity, folded, day, kind) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (cid, ent, ent.casefold(), u.day, u.kind),
                )
            if embedder_key is not None:
                vec = self._cached_vector(embedder_key, u.sha256)
                if vec is not None:
                    self._put_vector(cid, vec, u.day, u.kind, now)
                    reused += 1
        self._fts_insert(relpath, fts_rows)
        return reused

    def _fts_insert(self, relpath: str, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Give ``rows`` (rowid, body, heading, context) of ``relpath``'s units to their lexical
        table (schema.fts_table); chunks_fts's also to the lexical leg's bounds and lists, in
        the caller's transaction."""
        if not rows:  # see _fts_delete
            return
        table = schema.fts_table(relpath)
        self.conn.executemany(
            f"INSERT INTO {table}(rowid, body, heading, context) VALUES (?, ?, ?, ?)", rows
        )
        if table == "chunks_fts":
            term_bounds.note(self.conn, rows)

    def _fts_delete(self, relpath: str, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Take ``rows`` (as they were given to ``_fts_insert``) out of their lexical table, and
        chunks_fts's out of the terms' lists. Contentless FTS5 deletes by restating the indexed
        values (deterministic, see textnorm)."""
        if not rows:
            # Nothing to take out (a new file). An empty executemany still opens the transaction
            # and the lists' reads would then hold a read snapshot, so the next write could not
            # wait for another writer: SQLite returns "database is locked" at once instead of
            # running the busy handler (the soak's "database held" check).
            return
        table = schema.fts_table(relpath)
        self.conn.executemany(
            f"INSERT INTO {table}({table}, rowid, body, heading, context) "
            "VALUES('delete', ?, ?, ?, ?)",
            rows,
        )
        if table == "chunks_fts":
            term_lists.forget(self.conn, *term_bounds.counts(rows))

    def resolve_links(self, only_src: Iterable[str] | None = None) -> int:
        """Point links at the notes that exist now: every link, or those held by ``only_src``.
        Returns how many rows changed. Run after a sync's files are written, so the result is
        the same whatever order the files were indexed in (a rebuild equals an incremental
        sync)."""
        from clawmem.markdown.links import (
            Resolver,  # the link grammar: only when links are resolved
        )

        resolver = Resolver(p for (p,) in self.conn.execute("SELECT path FROM files"))
        if only_src is None:
            rows = self.conn.execute(
                "SELECT id, src, syntax, target, dst, status, candidates FROM links"
            ).fetchall()
        else:
            rows = []
            for src in only_src:
                rows += self.conn.execute(
                    "SELECT id, src, syntax, target, dst, status, candidates FROM links "
                    "WHERE src = ?",
                    (src,),
                ).fetchall()
        changes = []
        for r in rows:
            res = resolver.resolve_target(r["syntax"], r["target"], r["src"])
            new = (res.path, res.status, "\n".join(res.candidates))
            if new != (r["dst"], r["status"], r["candidates"]):
                changes.append((*new, r["id"]))
        with self.conn:
            self.conn.executemany(
                "UPDATE links SET dst = ?, status = ?, candidates = ? WHERE id = ?", changes
            )
        return len(changes)

    def lexical_rows(self, ids: Iterable[int]) -> list[tuple[int, str, str, str]]:
        """The values chunks_fts was given for the units ``ids``: (rowid, body, heading, context),
        re-derived from the stored units as a delete restates them (a unit's context is the text
        of its neighbours in its file, ``neighbour_context``). For the lexical leg, which counts
        a phrase of several words in a few rows this way (recall/bm25_topk.py). A unit no longer
        stored is left out."""
        ids = list(ids)
        near = set(ids) | {i - 1 for i in ids} | {i + 1 for i in ids}
        units: dict[int, db.Row] = {}
        wanted = sorted(near)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            for r in self.conn.execute(
                "SELECT id, path, heading, text, entities, kind FROM chunks WHERE id IN "
                f"({','.join('?' * len(part))})",
                part,
            ):
                units[r["id"]] = r
        out = []
        for cid in ids:
            unit = units.get(cid)
            if unit is None:
                continue
            # A file's units have ascending ids: the next id in the same file is its neighbour;
            # else (the file's first or last unit, or a file rewritten in part) ask for it.
            side = []
            for i, order in ((cid - 1, "id < ? ORDER BY id DESC"), (cid + 1, "id > ? ORDER BY id")):
                r = units.get(i)
                if r is None or r["path"] != unit["path"]:
                    r = self.conn.execute(
                        "SELECT heading, text, kind FROM chunks WHERE path = ? AND "
                        f"{order} LIMIT 1",
                        (unit["path"], cid),
                    ).fetchone()
                side.append(r)
            seq = [side[0], unit, side[1]]
            context = neighbour_context(
                [(u["heading"], u["text"], u["kind"]) for u in seq if u is not None]
            )[1 if side[0] is not None else 0]
            ents = unit["entities"].split()
            out.append((cid, *fts_values(unit["text"], unit["heading"], ents, context)))
        return out

    def delete_file(self, relpath: str, *, keep_vectors: bool) -> None:
        with self.conn:
            self._remove_file_rows(relpath, keep_vectors=keep_vectors, now=int(time.time()))

    def _remove_file_rows(self, relpath: str, *, keep_vectors: bool, now: int) -> None:
        rows = self.conn.execute(
            "SELECT id, heading, text, entities, sha256, embedded, kind FROM chunks "
            "WHERE path = ? ORDER BY id",
            (relpath,),
        ).fetchall()
        key = self.get_meta("embedder")
        contexts = neighbour_context([(r["heading"], r["text"], r["kind"]) for r in rows])
        gone = []
        for r, context in zip(rows, contexts, strict=True):
            gone.append(
                (r["id"], *fts_values(r["text"], r["heading"], r["entities"].split(), context))
            )
            if r["embedded"]:
                if keep_vectors and key:
                    vec = self._get_vector(r["id"])
                    if vec is not None:
                        self.conn.execute(
                            "INSERT OR REPLACE INTO embedding_cache(embedder, sha256, vector, last_used) "
                            "VALUES (?, ?, ?, ?)",
                            (key, r["sha256"], vec, now),
                        )
                self._delete_vector(r["id"])
        self._fts_delete(relpath, gone)
        self.conn.execute("DELETE FROM links WHERE src = ?", (relpath,))
        self.conn.execute("DELETE FROM chunks WHERE path = ?", (relpath,))  # cascades entities
        self.conn.execute("DELETE FROM files WHERE path = ?", (relpath,))

    # ----------------------------------------------------------------- stats
    def counts(self) -> dict[str, int]:
        q = self.conn.execute
        return {
            "files": q("SELECT count(*) FROM files").fetchone()[0],
            "chunks": q("SELECT count(*) FROM chunks WHERE kind IS NULL").fetchone()[0],
            "facts": q("SELECT count(*) FROM chunks WHERE kind IS NOT NULL").fetchone()[0],
            "vectors": q("SELECT count(*) FROM chunks WHERE embedded = 1").fetchone()[0],
            "pending": q("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0],
            "unembeddable": q("SELECT count(*) FROM chunks WHERE embedded = -1").fetchone()[0],
            "cache_entries": q("SELECT count(*) FROM embedding_cache").fetchone()[0],
        }

    def problems(self) -> list[tuple[str, dict]]:
        out: list[tuple[str, dict]] = []
        for path, raw in self.conn.execute(
            "SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"
        ):
            out.extend((path, p) for p in json.loads(raw))
        return out


def make_unit(
    start_line: int,
    end_line: int,
    heading: str,
    text: str,
    day: str | None,
    *,
    kind: str | None = None,
    confidence: float | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
    entities: tuple[str, ...] = (),
    said_at: str | None = None,
) -> Unit:
    import hashlib  # here: a read that finds nothing changed makes no unit (~4 ms of its start)

    sha = hashlib.sha256(embed_text(heading, text, entities, kind).encode("utf-8")).hexdigest()
    return Unit(
        start_line,
        end_line,
        heading,
        text,
        sha,
        day,
        kind,
        confidence,
        valid_from,
        valid_to,
        entities,
        said_at,
    )
