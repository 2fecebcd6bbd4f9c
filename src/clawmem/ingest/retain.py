"""Writing facts: ``clawmem retain`` appends one bullet to a day's ``## Retain`` section.

The daily log is the source of truth, so the write is careful: everything already in the file is
kept byte for byte (only the new line is inserted), the new content goes to a temporary file that
is fsynced and renamed over the original (a crash leaves the old file or the new one, never half
of one), an exact duplicate is not appended twice, and text that looks like a credential is
refused unless the caller insists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from clawmem.errors import InputError, StoreError, UsageError
from clawmem.files.atomic import write_atomic
from clawmem.files.locking import write_lock
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.facts import Fact, extract_facts, format_fact, make_fact, retain_insert_index
from clawmem.store import db, queries
from clawmem.store.index import Index
from clawmem.text.redact import find_secret, redact
from clawmem.text.textnorm import require_text
from clawmem.text.timeexpr import parse_date


def looks_like_secret(text: str) -> str | None:
    """What kind of credential ``text`` seems to contain, or None (the shapes are redact.py's:
    what retain refuses is exactly what indexing would redact)."""
    return find_secret(text)


@dataclass(frozen=True)
class Placement:
    text: str  # the whole new file content
    line: int  # 1-based line of the new fact
    created_file: bool
    created_section: bool


def place_fact(existing: str | None, fact: Fact, day: date) -> Placement:
    """Pure: where the fact goes in the day's log and what the file becomes."""
    if existing is None:
        head = f"# {day.isoformat()}\n\n## Retain\n"
        return Placement(head + format_fact(fact) + "\n", 4, True, True)
    eol = "\r\n" if "\r\n" in existing else "\n"
    lines = existing.splitlines(keepends=True)
    at = retain_insert_index(lines)
    if at is None:
        # No Retain section yet: add one at the end, separated by a blank line.
        prefix = existing
        if prefix and not prefix.endswith(("\n", "\r")):
            prefix += eol
        if prefix.strip() and not prefix.endswith(eol * 2):
            prefix += eol
        body = f"## Retain{eol}{format_fact(fact)}{eol}"
        return Placement(prefix + body, prefix.count("\n") + 2, False, True)
    new_line = format_fact(fact) + eol
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += eol  # the previous last line had no ending; the fact needs its own line
    lines.insert(at, new_line)
    return Placement("".join(lines), at + 1, False, False)


def read_log(path: Path, relpath: str) -> str | None:
    if not path.exists():
        return None
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{relpath} line {line}: invalid UTF-8; clawmem will not rewrite it",
            hint="re-save the file as UTF-8, then retain again",
        ) from None


# ---------------------------------------------------------------------------- retain, end to end


def retain(
    ix: Indexer,
    text: str,
    *,
    kind: str = "W",
    confidence: float | None = None,
    entities: tuple[str, ...] | list[str] = (),
    day: str | date | None = None,
    allow_secret: bool = False,
    today: date | None = None,
) -> dict:
    """Append a fact to the day's ``## Retain`` section and index it before returning (a retained
    fact is recallable at once). An identical fact already in the workspace is not written again:
    the result names it (``duplicate_of``)."""
    require_text(text, "text")
    for entity in entities:
        require_text(entity, "entities")
    fact = make_fact(kind, text, entities, confidence)
    what = looks_like_secret(text) or looks_like_secret(" ".join(entities))
    if what and not allow_secret:
        raise InputError(
            f"refusing to retain text that looks like {what}",
            hint="memory files are plain text (often in git); pass {param} if you mean it",
            param="allow_secret",
        )
    try:
        when = (
            day if isinstance(day, date) else (parse_date(day) if day else (today or date.today()))
        )
    except InputError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    relpath = f"memory/{when.isoformat()}.md"
    path = ix.root / relpath
    ix.prepare_memory_dir()
    # The model is loaded before the lock (seconds on a cold start): other writers wait only
    # for the write and the fact's one embedding, not for this process's start-up.
    ix.embedder()
    with write_lock(ix.memory_dir, purpose="clawmem retain"):
        existing = read_log(path, relpath)
        dup = _duplicate_of(ix, fact, relpath, existing)
        if dup is None:
            placed = place_fact(existing, fact, when)
            try:
                write_atomic(path, placed.text)
            except OSError as exc:
                raise StoreError(
                    f"{relpath}: cannot write ({exc.strerror})",
                    hint="the file is unchanged; check permissions and free space",
                ) from None
            line = placed.line
            # Read-your-writes: the fact is indexed (and embedded) before we return.
            ix.index_locked(embed_limit=ix.cfg.lazy_embed_limit)
        else:
            relpath, line = dup
    facts, _ = extract_facts((ix.root / relpath).read_text(encoding="utf-8"))
    stored = next((f for f in facts if f.line == line), fact)
    citation = f"{relpath}#L{line}-L{line}"
    return {
        "stored": dup is None,
        "duplicate_of": citation if dup is not None else None,
        "kind": stored.kind,
        "timestamp": when.isoformat(),
        "entities": list(stored.entities),
        "confidence": stored.confidence,
        # What was written is the caller's (with allow_secret, a credential too); what is shown
        # of it is redacted, like every other output.
        "content": redact(stored.content),
        "line_text": redact(format_fact(stored).rstrip("\r\n")),
        "source": citation,
        "path": relpath,
        "line": line,
    }


def _duplicate_of(ix: Indexer, fact: Fact, relpath: str, existing: str | None):
    """An identical fact (kind, statement, entities, confidence) already in the workspace: in
    the day's own log, else anywhere the index knows of. Returns (path, line) or None."""

    def same(f: Fact) -> bool:
        return (f.kind, f.content, set(f.entities), f.confidence) == (
            fact.kind,
            fact.content,
            set(fact.entities),
            fact.confidence,
        )

    if existing is not None:
        found, _ = extract_facts(existing)
        for f in found:
            if same(f):
                return relpath, f.line
    if not ix.index_path.exists():
        return None
    try:
        idx = Index.open(ix.index_path)
    except db.DatabaseError:
        return None
    try:
        rows = queries.facts_stating(idx, fact.kind, fact.content)
    except db.DatabaseError:
        rows = []
    finally:
        idx.close()
    for path, line, ents, conf in rows:
        if set(ents.split()) == set(fact.entities) and conf == fact.confidence:
            if (ix.root / path).exists():
                return path, line
    return None
