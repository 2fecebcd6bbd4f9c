"""Writing facts: ``clawmem retain`` appends one bullet to a day's ``## Retain`` section.

The daily log is the source of truth, so the write is careful: everything already in the file is
kept byte for byte (only the new line is inserted); the write is a compare-and-swap that keeps
whatever another program (an editor, an agent's own notes, a script) writes to the log at the
same moment (files/cas.py), appending in place or renaming a fsynced copy (a crash leaves the old
file or the new one, never half of one); an exact duplicate is not appended twice; the daily log
is never reached through a link out of the workspace; a fact is stored only where the index will
read it; and text that looks like a credential is refused unless the caller insists.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from clawmem.errors import (
    ClawmemError,
    InputError,
    LockedError,
    StoreError,
    UsageError,
    WorkspaceError,
)
from clawmem.files.cas import (
    Snapshot,
    TooLarge,
    Written,
    read_snapshot,
    take_back,
    write_if_unchanged,
)
from clawmem.files.locking import write_lock
from clawmem.ingest.cited import CitedFact, fact_at
from clawmem.ingest.indexing import Indexer
from clawmem.ingest.sync import unindexable
from clawmem.markdown.facts import (
    BULLETS,
    Fact,
    count_lines,
    ends_in_retain_section,
    extract_facts,
    format_block,
    format_fact,
    make_fact,
    markdown_lines,
    markdown_tokens,
    parse_fact,
)
from clawmem.markdown.supersession import supersedes_note
from clawmem.markdown.workspace import writable_path
from clawmem.markdown.writers import WRITERS
from clawmem.markdown.writers import record as record_writer
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


@dataclass(frozen=True, slots=True)
class Retained:
    """What ``retain`` did: the fact as stored (or the identical one already there)."""

    stored: bool  # appended now; False: an identical fact was there already
    duplicate_of: str | None  # that fact's citation, when not stored
    kind: str  # W, B, O or S
    timestamp: str  # the day's date, YYYY-MM-DD
    entities: tuple[str, ...]
    confidence: float | None
    content: str  # the statement, redacted
    line_text: str  # the whole line as written in the log, redacted
    source: str  # its citation, path#Lline-Lline
    path: str  # the daily log, memory/YYYY-MM-DD.md
    line: int  # 1-based
    supersedes: str | None = None  # the citation of the fact this one corrects, if any
    # Facts already stored that say nearly the same thing (citations): retain still stores the
    # new one, and says so, so that a person or agent can correct or forget instead.
    similar: tuple[str, ...] = ()
    # With ``[git] autocommit``: "committed", or why the log was not committed (the fact is
    # stored either way); None when the setting is off or nothing was written.
    git: str | None = None

    def to_dict(self) -> dict:
        """``clawmem retain --json``'s form of it."""
        extra = {"git": self.git} if self.git is not None else {}
        return {
            "stored": self.stored,
            "duplicate_of": self.duplicate_of,
            "kind": self.kind,
            "timestamp": self.timestamp,
            "entities": list(self.entities),
            "confidence": self.confidence,
            "content": self.content,
            "line_text": self.line_text,
            "source": self.source,
            "path": self.path,
            "line": self.line,
            "supersedes": self.supersedes,
            "similar": list(self.similar),
            **extra,
        }


def place_fact(existing: str | None, fact: Fact, day: date, relpath: str = "the log") -> Placement:
    """Pure: where the fact goes in the day's log and what the file becomes: always the log as
    it was with lines appended. A log is never rewritten, because another program (an editor, a
    logger holding it open, ``{ echo a; sleep 1; echo b; } >> log``) may be appending to it, and
    a file renamed over it sends that program's lines into the deleted file. So the fact goes at
    the end: into the Retain section the log ends in, else under a new ``## Retain`` heading
    there (the grammar reads every Retain section of a file). The fact's notes (``Fact.notes``:
    what it supersedes, where it was proposed or imported from) are nested bullets under it.

    A log that ends inside a block running to the end of the file (a code fence or an HTML
    comment never closed) would read the fact as code: InputError naming where the block opens,
    and nothing is written (the fact was appended there, then reported as "taken out of the
    Retain section" by another program, and each retry appended it again)."""
    if existing is None:
        head = f"# {day.isoformat()}\n\n## Retain\n"
        return Placement(head + format_block(fact) + "\n", 4, True, True)
    eol = "\r\n" if "\r\n" in existing else "\n"
    prefix = existing
    if prefix and not prefix.endswith(("\n", "\r")):
        prefix += eol  # the last line had no ending; the fact needs its own line
    if ends_in_retain_section(existing):
        placed = Placement(
            prefix + format_block(fact, eol) + eol, count_lines(prefix), False, False
        )
        if _reads_fact(placed, fact):
            return placed
        # The section ends in a block the line would join (an HTML block, which a blank line
        # ends): a new section after a blank line.
    # The log ends in another section (or has no Retain section yet): a new one at the end,
    # separated by a blank line.
    if prefix.strip() and not prefix.endswith(eol * 2):
        prefix += eol
    body = f"## Retain{eol}{format_block(fact, eol)}{eol}"
    placed = Placement(prefix + body, count_lines(prefix) + 1, False, True)
    if not _reads_fact(placed, fact):
        raise _open_block(placed, relpath)
    return placed


def _reads_fact(placed: Placement, fact: Fact) -> bool:
    """Whether the log as placed reads the fact at its line. The parse is the one the check
    after writing makes of the same text (cached), so a retain pays for it once."""
    found, _ = extract_facts(placed.text)
    return any(f.line == placed.line and _same(f, fact) for f in found)


# What closes a block that runs to the end of the file (CommonMark's HTML blocks 1-5).
_CLOSERS = (("<!--", "-->"), ("<?", "?>"), ("<![cdata[", "]]>"), ("<!", ">"))


def _open_block(placed: Placement, relpath: str) -> InputError:
    """The error for a log whose last block swallows what is appended: where it opens, what
    closes it."""
    lines = markdown_lines(placed.text)
    at = placed.line - 1
    block = next(
        (
            t
            for t in markdown_tokens(lines)
            if t.level == 0 and t.map is not None and t.map[0] <= at < t.map[1]
        ),
        None,
    )
    opens = block.map[0] if block is not None and block.map is not None else at
    first = lines[opens].strip()
    closer = None
    if block is not None and block.type == "fence":
        what, closer = "a code fence", block.markup
    else:
        what = "an HTML block" if block is not None and block.type == "html_block" else "a block"
        low = first.lower()
        tag = re.match(r"<(script|pre|style|textarea)\b", low)
        closer = (
            f"</{tag.group(1)}>"
            if tag
            else next((c for o, c in _CLOSERS if low.startswith(o)), None)
        )
    fix = f"add the line {closer}" if closer else "close it"
    return InputError(
        f"{relpath} line {opens + 1}: the log ends inside {what} that is never closed, so a "
        "fact appended would not be read as one; nothing was written",
        hint=f"{fix} at the end of {relpath}, then retain again",
    )


def decode_log(raw: bytes | None, relpath: str) -> str | None:
    """A daily log's text (None: no file yet); InputError when clawmem must not rewrite it."""
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{relpath} line {line}: invalid UTF-8; clawmem will not rewrite it",
            hint="re-save the file as UTF-8, then retain again",
        ) from None


def may_follow(appended: bytes) -> bool:
    """Whether lines another program appended to a log since retain read it can stay after the
    new fact unchanged: whole lines that open no heading, code fence or setext underline, so
    the fact stays in its section and every line keeps its meaning."""
    if not appended.endswith(b"\n"):
        return False  # a line still being written: read again once it is whole
    for line in appended.splitlines():
        if line.lstrip(b" \t").startswith((b"#", b"```", b"~~~", b"===", b"---")):
            return False
    return True


def _refuse_unrecallable(ix: Indexer, relpath: str, raw: bytes) -> None:
    """retain says "stored" only for a fact the index will read: refuse, with the reason, a
    log the index skips (binary content, over ``max_file_bytes``)."""
    why = unindexable(raw)
    if why is None and len(raw) > ix.cfg.max_file_bytes:
        why = f"{len(raw):,} bytes would be over max_file_bytes={ix.cfg.max_file_bytes:,}"
    if why is not None:
        raise _unrecallable(relpath, why)


def _unrecallable(relpath: str, why: str) -> InputError:
    return InputError(
        f"{relpath}: not stored: the index skips this log ({why}), so the fact would "
        "not be recallable",
        hint="retain into another day with --date, or fix the log (or raise max_file_bytes)",
    )


# ---------------------------------------------------------------------------- retain, end to end

# How many times retain reads the log again when another program changed it in a way its lines
# cannot simply follow the fact (a rewrite, a heading appended, a line half written).
CAS_ATTEMPTS = 20


# The head of a Retain line: a kind, a parenthesis after it, mentions, the colon. Text that starts
# so and does not parse as a fact is a Retain line written wrong. (A lower-case "w @Kate: …" is not
# the grammar: that is a statement, kept as written.)
_RETAIN_HEAD = re.compile(r"^[-*+][ \t]+[WBOS](?:\([^)]*\))?(?:[ \t]+@[^\s:]+)*[ \t]*:")


def stated_as_a_fact(
    text: str,
    kind: str | None,
    entities: tuple[str, ...] | list[str],
    confidence: float | None,
) -> tuple[str, str, list[str], float | None]:
    """(kind, statement, entities, confidence) of what a caller asked to retain. A caller that
    writes the fact as the log shows it ("O(c=0.8) @Peter: prefers short replies", with or
    without its bullet) means that fact, not a W fact whose statement begins "O(c=0.8) @Peter:";
    its kind, confidence and entities join those given, and a kind or confidence given that
    differs from the line's is a usage error. Any other text is the statement itself, of
    ``kind`` (W when not given)."""
    line = text.strip()
    if line[:1] not in BULLETS:
        line = "- " + line
    try:
        fact = parse_fact(line)
    except InputError as exc:
        if _RETAIN_HEAD.match(line):
            # Written as a Retain line, but not a well-formed one ("O(c=1.5) @Peter: …", "w @Kate:
            # …"): said so, not kept as a W fact whose statement begins with the broken head.
            raise UsageError(
                f"the text reads as a Retain line, but {exc.message}",
                hint="fix the line, or write the statement alone and give --kind",
            ) from None
        return kind or "W", text, list(entities), confidence
    given = make_fact(kind, "x").kind if kind else fact.kind
    if given != fact.kind:
        raise UsageError(
            f'the text is a Retain line of kind {fact.kind} ("{line[2:20]}…"), but the kind '
            f"given is {given}",
            hint="drop the kind option, or write the statement without its Retain prefix",
        )
    if confidence is not None and fact.confidence is not None and confidence != fact.confidence:
        raise UsageError(
            f"the text states a confidence of {fact.confidence:g}, but the confidence given is "
            f"{confidence:g}",
            hint="give the confidence once",
        )
    return (
        fact.kind,
        fact.content,
        [*fact.lead_entities, *entities],
        fact.confidence if confidence is None else confidence,
    )


def retain(
    ix: Indexer,
    text: str,
    *,
    kind: str | None = None,
    confidence: float | None = None,
    entities: tuple[str, ...] | list[str] = (),
    day: str | date | None = None,
    allow_secret: bool = False,
    today: date | None = None,
    supersedes: str | None = None,
    writer: str = "retain",
    note: str | None = None,
    same_day_only: bool = False,
    literal: bool = False,
) -> Retained:
    """Append a fact to the day's ``## Retain`` section and index it before returning (a retained
    fact is recallable at once). An identical fact already in the workspace is not written again:
    the result names it (``duplicate_of``). ``supersedes``: the citation of a fact this one
    corrects; a note under the new fact says so (``supersession.supersedes_note``), recall marks
    the old one ``superseded_by`` and ``--as-of`` an earlier day still shows it. ``writer``: who
    is writing (``mcp:NAME`` for a token, ``flush``, ``import:…``), kept for ``clawmem history``. ``note``: one
    line written under the fact as a nested bullet (an accepted proposal or an import cites its
    source there).
    ``same_day_only``: a duplicate is the same fact in the same day's log only (an import keeps
    a statement made again on another day, as its source did).
    ``kind`` is W unless given or unless ``text`` is written as a Retain line
    (``stated_as_a_fact``); ``literal``: ``text`` is the statement itself, never read as a
    Retain line (an imported or proposed statement, already parsed)."""
    require_text(text, "text")
    if literal:
        kind = kind or "W"
    else:
        kind, text, entities, confidence = stated_as_a_fact(text, kind, entities, confidence)
    for entity in entities:
        require_text(entity, "entities")
    fact = make_fact(kind, text, entities, confidence)
    if note is not None and (not note.strip() or len(note.splitlines()) != 1):
        raise UsageError("note: one line of text", hint="write the note on a single line")
    notes: list[str] = []
    corrects = None
    if supersedes is not None:
        corrects = fact_at(ix, supersedes)
        notes.append(supersedes_note(corrects.path, corrects.line))
    if note:
        notes.append(" ".join(note.split()))
    fact = replace(fact, notes=tuple(notes))
    what = (
        looks_like_secret(text)
        or looks_like_secret(" ".join(entities))
        or looks_like_secret(note or "")
    )
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
    path = writable_path(ix.root, relpath)  # never through a link out of the workspace
    ix.prepare_memory_dir()
    # The fact's vector comes from the resident embedder, started now so that it loads while
    # this process writes; with it off, the model is loaded here before the lock (seconds on a
    # cold start): other writers wait only for the write and the fact's one embedding.
    ix.supply.warm_up()
    with write_lock(ix.memory_dir, purpose="clawmem retain"):
        existing = decode_log(_snapshot(ix, path, relpath).data, relpath)
        # A correction is written even when its statement is already somewhere: the note that
        # it supersedes the old fact is what is new.
        dup = None if corrects else _duplicate_of(ix, fact, relpath, existing, same_day_only)
        if dup is None:
            at, written = _write_fact(ix, fact, when, relpath, path)
            _index_or_take_back(ix, relpath, path, written)
        else:
            relpath, at = dup
    # Read as it was written: never through a link put there since (the duplicate's file too).
    placed = _snapshot(ix, writable_path(ix.root, relpath), relpath).data or b""
    facts, _ = extract_facts(placed.decode("utf-8", errors="replace"))
    # Lines another program appended may have come before the fact: find its line again.
    mine = [f for f in facts if _same(f, fact)]
    stored = next((f for f in mine if f.line == at), mine[-1] if mine else None)
    if stored is None:
        raise StoreError(
            f"{relpath}: the fact was written but another program's edit took it out of the "
            "Retain section",
            hint=f"check {relpath}, then run `clawmem check`",
        )
    line = stored.line
    citation = f"{relpath}#L{line}-L{line}"
    if dup is None:  # who wrote it, for `clawmem history` (.clawmem/writers)
        record_writer(ix.root, format_fact(stored).rstrip("\r\n"), relpath, writer)
    committed = None
    if dup is None and ix.cfg.git_autocommit:  # after the lock: the pre-commit hook takes it
        from clawmem.files.gitcommit import commit_files

        summary = redact(stored.content)
        summary = summary if len(summary) <= 60 else summary[:57] + "..."
        # The log, and the line that says who wrote the fact (.clawmem/writers) with it.
        paths = [relpath] + ([WRITERS] if (ix.root / WRITERS).is_file() else [])
        why_not = commit_files(ix.root, paths, f"clawmem retain: {summary}")
        committed = why_not or "committed"
    return Retained(
        stored=dup is None,
        duplicate_of=citation if dup is not None else None,
        kind=stored.kind,
        timestamp=when.isoformat(),
        entities=tuple(stored.entities),
        confidence=stored.confidence,
        # What was written is the caller's (with allow_secret, a credential too); what is shown
        # of it is redacted, like every other output.
        content=redact(stored.content),
        line_text=redact(format_fact(stored).rstrip("\r\n")),
        source=citation,
        path=relpath,
        line=line,
        supersedes=corrects.citation if corrects else None,
        similar=_similar_facts(ix, stored, citation, corrects) if dup is None else (),
        git=committed,
    )


# Topic overlap (Jaccard of topic words, text/topics.py) from which a stored fact counts as a
# near duplicate of a new one: reflect's threshold for a restated fact (RESTATED_JACCARD).
NEAR_DUPLICATE = 0.6
NEAR_DUPLICATE_SCAN = 500  # the newest facts about the same entities that are compared
NEAR_DUPLICATE_SHOWN = 3


def _similar_facts(
    ix: Indexer, fact: Fact, citation: str, corrects: CitedFact | None
) -> tuple[str, ...]:
    """Citations of stored facts that say nearly what ``fact`` says (not itself, not the fact it
    corrects): the write-time near-duplicate warning."""
    from clawmem.text.topics import jaccard, topic_words

    mine = topic_words(fact.content, fact.entities)
    if not mine:
        return ()
    skip = {citation, corrects.citation if corrects else ""}
    try:
        idx = Index.open(ix.index_path)
    except db.DatabaseError:
        return ()
    try:
        rows = queries.facts_about(idx, tuple(fact.entities), NEAR_DUPLICATE_SCAN)
    except db.DatabaseError:
        rows = []
    finally:
        idx.close()
    out: list[str] = []
    for r in rows:
        cited = f"{r[0]}#L{r[1]}-L{r[2]}"
        if cited in skip:
            continue
        if jaccard(mine, topic_words(r[3], r[4].split())) >= NEAR_DUPLICATE:
            out.append(cited)
            if len(out) == NEAR_DUPLICATE_SHOWN:
                break
    return tuple(out)


def _snapshot(ix: Indexer, path: Path, relpath: str) -> Snapshot:
    """The log as it is now, read only up to ``max_file_bytes`` (a larger one is refused before
    a byte of it is read: the index skips it, so a fact there would not be recallable)."""
    try:
        return read_snapshot(path, limit=ix.cfg.max_file_bytes)
    except TooLarge as big:
        raise _unrecallable(
            relpath, f"{big.size:,} bytes is over max_file_bytes={ix.cfg.max_file_bytes:,}"
        ) from None
    except OSError as exc:  # a link put there since the path was checked (ELOOP), a folder
        raise WorkspaceError(
            f"{relpath}: cannot read ({exc.strerror})",
            hint="a daily log is a plain file inside the workspace",
        ) from None


def _index_or_take_back(ix: Indexer, relpath: str, path: Path, written: Written) -> None:
    """Read-your-writes: index the fact before returning. A retain that cannot (a full disk, an
    index error, a log the index skips) takes its line back and fails: a failed retain leaves
    the log byte for byte, and "stored" means recallable."""
    try:
        report = ix.index_locked(embed_limit=ix.cfg.lazy_embed_limit)
    except (ClawmemError, OSError, db.DatabaseError) as exc:
        taken = take_back(path, written)
        if isinstance(exc, ClawmemError):
            raise
        kept = "" if taken else "; another program wrote the log since, so the line stays in it"
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise StoreError(
            f"{relpath}: not stored: the index could not be updated ({why}){kept}",
            hint="check free disk space and permissions, then retain again",
        ) from None
    skipped = next((s for s in report.skipped if s.relpath == relpath), None)
    if skipped is not None:
        take_back(path, written)
        raise StoreError(
            f"{relpath}: not stored: the index skipped the file ({skipped.reason}), so the "
            "fact would not be recallable",
            hint="fix the file (`clawmem status` lists it), then retain again",
        )


def _write_fact(
    ix: Indexer, fact: Fact, when: date, relpath: str, path: Path
) -> tuple[int, Written]:
    """Write the fact into the day's log, keeping whatever another program writes there at the
    same moment (files/cas.py); the 1-based line it was placed at, and what was written."""
    for _attempt in range(CAS_ATTEMPTS):
        snap = _snapshot(ix, path, relpath)
        placed = place_fact(decode_log(snap.data, relpath), fact, when, relpath)
        raw = placed.text.encode("utf-8")
        _refuse_unrecallable(ix, relpath, raw)
        try:
            written = write_if_unchanged(path, snap, raw, may_follow=may_follow)
            if written is not None:
                return placed.line, written
        except OSError as exc:
            raise StoreError(
                f"{relpath}: cannot write ({exc.strerror})",
                hint="the file is unchanged; check permissions and free space",
            ) from None
        time.sleep(0.01)  # a line half written, or a rewrite: read it again once it is done
    raise LockedError(
        f"{relpath}: another program kept changing the file ({CAS_ATTEMPTS} tries); "
        "nothing was written",
        hint="retain again once the other program has finished writing it",
    )


def _same(f: Fact, fact: Fact) -> bool:
    """The same fact: kind, statement, entities and confidence (how duplicates are told)."""
    return (f.kind, f.content, set(f.entities), f.confidence) == (
        fact.kind,
        fact.content,
        set(fact.entities),
        fact.confidence,
    )


def _duplicate_of(
    ix: Indexer, fact: Fact, relpath: str, existing: str | None, same_day_only: bool = False
) -> tuple[str, int] | None:
    """An identical fact (kind, statement, entities, confidence) already in the workspace: in
    the day's own log, else anywhere the index knows of. Returns (path, line) or None."""
    if existing is not None:
        found, _ = extract_facts(existing)
        for f in found:
            if _same(f, fact):
                return relpath, f.line
    if same_day_only or not ix.index_path.exists():
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
