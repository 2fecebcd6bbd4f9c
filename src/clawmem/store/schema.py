"""The storage schema of ``.memory/index.sqlite``, in one place.

The index is derived data: it is rebuilt, never migrated. ``meta.schema_version`` (and the chunker
and normaliser versions) must match the code, otherwise the next write rebuilds the whole file.
See docs/storage.md for the reasoning behind each table.
"""

from __future__ import annotations

# 8: term_bounds (term_bounds.py); 9: terms, term_lists (term_lists.py); 10: proposals_fts;
# 11: chunk_entities' day and kind, and its facts' index by day (chunk_entities_facts)
SCHEMA_VERSION = 11
# Bump when chunking.py's chunk boundaries or texts change for the same input. Kept here, beside
# the schema's version, so that opening an index for a read (which checks it) does not import the
# chunker (issue 16: a cold lexical recall). Also when markdown/searchable.py keeps other words
# (3: a link's address, markers, checkboxes and citations are no longer indexed; 4: a paragraph
# that is a conversation is one unit per message, chunking._is_talk; 5: a list that is one
# record's fields, "- confidence: … / - statement: …", is one unit, chunking._is_record; and
# reflect's section titles are not a unit's heading words, searchable.searchable_heading; 6: a
# fact with only clawmem's notes under it, facts.says_only_the_fact, is one unit, not two).
CHUNKER_VERSION = 7
# Bump when text/redact.py redacts more for the same input: an index built under the older rules
# may hold what the newer ones catch, so it is rebuilt rather than trusted (issue 31); and when
# it redacts otherwise (8: an assignment in bold keeps its closing "**").
REDACTION_VERSION = 11
# Fact proposals' pages (reflect/proposal_review.py's PAGE_DIR): their units' lexical rows go to
# proposals_fts, not chunks_fts (see the DDL). Spelled here so that neither store nor recall
# imports reflect.
PROPOSAL_PREFIX = "memory/proposals/"


def fts_table(path: str) -> str:
    """The lexical table holding the rows of the units of ``path``."""
    return "proposals_fts" if path.startswith(PROPOSAL_PREFIX) else "chunks_fts"


TERM_LISTS_DDL = """
CREATE TABLE IF NOT EXISTS terms (
    id   INTEGER PRIMARY KEY,
    term TEXT NOT NULL UNIQUE   -- a token as chunks_fts holds it (folded, stemmed)
);
CREATE TABLE IF NOT EXISTS term_lists (
    id    INTEGER PRIMARY KEY,
    term  INTEGER NOT NULL,     -- terms.id
    tier  INTEGER NOT NULL,     -- 0: the rows the term weighs most in, TIERS - 1 the least
    first INTEGER NOT NULL,     -- the part's smallest and largest rowid (parts of a tier are
    last  INTEGER NOT NULL,     -- disjoint ranges)
    n     INTEGER NOT NULL,     -- its rows (a term's rows: the sum over its parts)
    gmax  REAL NOT NULL,        -- its largest impact at the reference length (never lowered)
    docs  BLOB NOT NULL,        -- rowids, uint32 little-endian, ascending
    tfw   BLOB NOT NULL,        -- the term's column-weighted count in each row, in tenths, uint16
    dl    BLOB NOT NULL         -- each row's length in tokens, uint16
);
CREATE INDEX IF NOT EXISTS term_lists_part ON term_lists(term, tier, first, last, n, gmax);
"""

DDL = (
    """
-- Key/value facts about this index: schema_version, chunker_version, normalizer_version,
-- redaction_version,
-- chunking ("tokens/overlap"), embedder (identity key), embedder_identity (JSON), dims,
-- vector_backend, created_at, last_sync_at, skipped (JSON: files the last sync could not read).
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per indexed file: a Markdown file of the workspace, or a session transcript
-- ("sessions/<file>.jsonl", read from a configured [sessions] folder; see docs/sessions.md).
CREATE TABLE IF NOT EXISTS files (
    path       TEXT PRIMARY KEY,   -- workspace-relative POSIX path (sessions/… for transcripts)
    sha256     TEXT NOT NULL,      -- hash of the file's bytes: the incremental sync compares it;
                                   -- a transcript: hash of the start and end of its indexed prefix
    size       INTEGER NOT NULL,   -- stat size and mtime: the cheap "did anything change?" check
    mtime_ns   INTEGER NOT NULL,
    day        TEXT,               -- YYYY-MM-DD for daily logs; NULL for evergreen files
    lines      INTEGER NOT NULL,   -- line count, to validate `get` ranges and citations
                                   -- (a transcript: its complete lines read so far)
    problems   TEXT NOT NULL DEFAULT '[]', -- JSON list of malformed facts: [{line, text, message}]
    -- Transcripts only (NULL for Markdown):
    offset     INTEGER,            -- bytes of complete lines indexed: an append is read from here
    format     TEXT,               -- "openclaw" | "claude-code"
    session_id TEXT,               -- the session's id as the transcript states it (else its name)
    first_at   TEXT,               -- ISO 8601 UTC time of its first and last indexed message
    last_at    TEXT
) WITHOUT ROWID;

-- Search units: one per block of every file (a list item, paragraph, fence, table), and one per
-- `## Retain` fact.
CREATE TABLE IF NOT EXISTS chunks (
    id          INTEGER PRIMARY KEY,  -- its rowid in chunks_fts (or proposals_fts), vector table
    path        TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    start_line  INTEGER NOT NULL,     -- 1-based, inclusive: citations are path#Lstart-Lend
    end_line    INTEGER NOT NULL,
    heading     TEXT NOT NULL,        -- heading path "Day > Retain"
    text        TEXT NOT NULL,        -- the exact source text (a fact: its statement)
    sha256      TEXT NOT NULL,        -- hash of the embedded text: the embedding cache key
    day         TEXT,                 -- the day it was recorded (the daily log's date); NULL = evergreen
    kind        TEXT,                 -- NULL for a chunk; W, B, O or S for a fact
    confidence  REAL,                 -- opinions only
    valid_from  TEXT,                 -- a validity range a fact states ("Nov 27–Dec 1, 2025")
    valid_to    TEXT,
    entities    TEXT NOT NULL DEFAULT '',  -- space-separated @mentions (also in chunk_entities)
    embedded    INTEGER NOT NULL DEFAULT 0, -- 1 once its vector is stored; 0 = pending
    said_at     TEXT                  -- a transcript message: when it was said (ISO 8601 UTC)
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(sha256);
CREATE INDEX IF NOT EXISTS chunks_day ON chunks(day);
-- The few facts that state a validity range: a time-filtered recall looks them up (partial, so
-- the many rows without one cost nothing; without it that lookup walked the whole table).
CREATE INDEX IF NOT EXISTS chunks_valid ON chunks(valid_from) WHERE valid_from IS NOT NULL;
CREATE INDEX IF NOT EXISTS chunks_embedded ON chunks(embedded);  -- pending/failed counts per query

-- Entity mentions, for --entity filters and `clawmem entities`. Stored folded for matching.
CREATE TABLE IF NOT EXISTS chunk_entities (
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    entity   TEXT NOT NULL,   -- as written, e.g. "The-Castle"
    folded   TEXT NOT NULL,   -- casefolded, for case-insensitive lookup
    day      TEXT,            -- the unit's chunks.day and chunks.kind, copied (written with the
    kind     TEXT,            -- unit, never changed): supersession's index below
    PRIMARY KEY (folded, chunk_id)
) WITHOUT ROWID;
-- An entity's facts newest first: supersession asks for the later facts of each fact hit
-- (queries.later_facts) and reads only the few it needs, where ordering them by chunks.day
-- looked up every unit of the entity (at 1M units ~940 an entity, 5-20 ms).
CREATE INDEX IF NOT EXISTS chunk_entities_facts ON chunk_entities(folded, kind, day, chunk_id)
    WHERE kind IS NOT NULL AND day IS NOT NULL;

-- Links between notes (links.py): one row per link as written (a repeat on one line is one row,
-- at most MAX_LINKS_PER_NOTE a note), replaced with its file. Where a
-- link points depends on which notes exist, so dst/status are recomputed whenever the set of
-- files changes (a rename or deletion updates every link that pointed there; sync.apply_plan).
CREATE TABLE IF NOT EXISTS links (
    id         INTEGER PRIMARY KEY,
    src        TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,  -- the note holding it
    line       INTEGER NOT NULL,     -- 1-based line of the link in src
    col        INTEGER NOT NULL,     -- 0-based offset in that line (orders links on one line)
    syntax     TEXT NOT NULL,        -- wiki ([[…]]) | markdown ([…](….md)) | mention (@Name)
    type       TEXT NOT NULL,        -- wikilink, a relation word (depends_on, …) or mention
    target     TEXT NOT NULL,        -- as written, without #anchor and |label
    anchor     TEXT,                 -- the heading after '#', if any
    label      TEXT,                 -- the text shown instead of the target, if any
    text       TEXT NOT NULL,        -- the link exactly as written
    context    TEXT NOT NULL,        -- about 25 characters either side, from its line
    dst        TEXT,                 -- the note it points at; NULL when unresolved or ambiguous
    status     TEXT NOT NULL,        -- ok | unresolved | ambiguous
    candidates TEXT NOT NULL DEFAULT ''  -- ambiguous: the notes it could mean, newline-separated
);
CREATE INDEX IF NOT EXISTS links_src ON links(src, line);
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);

-- Lexical index over the *normalised* text (see textnorm.py). Contentless: the text lives once,
-- in chunks.text; deleting a row re-derives its normalised text, which is deterministic.
-- body: the unit's text; heading: its heading path and entities; context: the text of its
-- neighbours in the same section (index.neighbour_context), ranked at a low weight.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    body, heading, context, content='', tokenize='porter unicode61 remove_diacritics 0'
);

-- The same for the units of fact proposals' pages (PROPOSAL_PREFIX), kept apart: a proposal
-- restates the message it cites, so in chunks_fts its words would raise those terms' document
-- frequencies and move the average length, and lower every other unit's BM25 score, its source's
-- first (issue 44). The lexical leg scores a proposal found here as its source
-- (recall/legs.py); term_bounds and term_lists describe chunks_fts alone.
CREATE VIRTUAL TABLE IF NOT EXISTS proposals_fts USING fts5(
    body, heading, context, content='', tokenize='porter unicode61 remove_diacritics 0'
);

-- The most each term of chunks_fts can add to a row's BM25 score, per unit of its IDF, at the
-- reference average length in meta.term_bounds (store/term_bounds.py): raised for every row
-- chunks_fts receives, in the same transaction; the lexical leg prunes with it.
CREATE TABLE IF NOT EXISTS term_bounds (
    term TEXT PRIMARY KEY,   -- a token as chunks_fts holds it (folded, stemmed)
    gmax REAL NOT NULL       -- tfw*(k1+1)/(tfw + k1*(1-b+b*dl/A)) at its largest over the rows
) WITHOUT ROWID;

-- Each term's rows of chunks_fts in tiers of their impact, best first (store/term_lists.py): the
-- lexical leg's top k at a large index reads a common word's best rows, not all of them.
-- Written for every row chunks_fts receives or loses, in the same transaction.
"""
    + TERM_LISTS_DDL
    + """
-- Vectors of texts that left the index (edited or deleted), kept so that an undo, a rename or a
-- forced rebuild embeds nothing twice. Live vectors are stored once, in the vector table.
-- Bounded by cache_max_entries (least recently used go first).
CREATE TABLE IF NOT EXISTS embedding_cache (
    embedder  TEXT NOT NULL,    -- EmbedderIdentity.key(): model hash, dims, prefixes, pooling
    sha256    TEXT NOT NULL,    -- hash of the embedded text
    vector    BLOB NOT NULL,    -- float32, little-endian, L2-normalised
    last_used INTEGER NOT NULL, -- unix time, for LRU pruning
    PRIMARY KEY (embedder, sha256)
) WITHOUT ROWID;
"""
)


def vec0_ddl(dims: int) -> str:
    # Metadata columns let sqlite-vec filter *inside* the KNN scan rather than after it.
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vectors USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    embedding float[{dims}] distance_metric=cosine,
    day TEXT,        -- '' for evergreen files (vec0 metadata cannot be NULL)
    kind TEXT,       -- '' for chunks, W/B/O/S for facts
    evergreen INTEGER
);
"""


# Used when sqlite-vec cannot be loaded: vectors in a plain table, searched by an exact NumPy scan.
PLAIN_VECTORS_DDL = """
CREATE TABLE IF NOT EXISTS chunk_vectors_plain (
    chunk_id  INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    embedding BLOB NOT NULL     -- float32, little-endian, L2-normalised
);
"""
