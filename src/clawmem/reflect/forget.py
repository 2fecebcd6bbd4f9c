"""``clawmem forget``: take lines out of memory, and keep them out.

Planned, then applied (the plan is the preview a person confirms):

* **What goes.** A citation names its lines (a fact takes its notes with it); an entity names
  every fact that mentions it, every line that @mentions it and its entity page. Lines of
  transcripts (``sessions/…``) are not clawmem's to edit: they are forgotten by their tombstone
  alone. A query is turned into citations by the caller (recall), so the preview shows exactly
  the lines, never "whatever matches".
* **How.** A forgotten Markdown line is overwritten in place by as many spaces as it had bytes:
  the file keeps its size, its inode and every line number (citations elsewhere, in pages, in
  ``supersedes`` notes and in other clones, still point at the right lines), nothing another
  program appends meanwhile can be lost, and the text does not linger in a renamed-away copy.
  Each write first checks that the bytes are still the ones the plan showed. An entity page is
  removed whole. Every forgotten line's hash is appended to ``.clawmem/forgotten``
  (markdown/forgotten.py), which keeps it out of the index, recall, pages and merges for good:
  after its file is blanked, never before, so a blanking that is refused (or a crash) never
  leaves a tombstone hiding a line the file still holds.
* **After.** The index is synced (the lines' units go), the forgotten texts' cached vectors are
  dropped, and reflect regenerates the pages that repeated a forgotten fact. What git history
  still holds is counted, with the command that would rewrite it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from clawmem.errors import InputError, ReflectConflict, StoreError, UsageError, WorkspaceError
from clawmem.ingest.cited import split_cited
from clawmem.ingest.indexing import Indexer
from clawmem.markdown import forgotten
from clawmem.markdown.facts import extract_facts
from clawmem.markdown.lines import line_starts, text_lines
from clawmem.markdown.workspace import (
    TRANSCRIPT_PREFIX,
    entity_page_path,
    resolve_member,
    writable_path,
)
from clawmem.store import db
from clawmem.store.index import Index
from clawmem.text.records import as_json
from clawmem.text.redact import redact

GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ForgetLine:
    """One line to forget: where it is and what it says (redacted: the preview is output)."""

    path: str
    line: int
    text: str

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.line}-L{self.line}"

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "citation": self.citation, "text": self.text}


@dataclass
class ForgetPlan:
    """What ``forget`` would do: the preview."""

    lines: list[ForgetLine] = field(default_factory=list)  # Markdown lines to blank
    transcript_lines: list[ForgetLine] = field(default_factory=list)  # tombstoned only
    pages_removed: list[str] = field(default_factory=list)  # entity pages removed whole
    pages_regenerated: list[str] = field(default_factory=list)  # pages that repeat a line
    git_commits: int = 0  # commits of this repository whose files still hold a forgotten line
    git_command: str | None = None  # what would rewrite that history
    notes: list[str] = field(default_factory=list)
    # The raw text of each line, for the tombstones and the checks; never shown.
    _raw: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)

    @property
    def empty(self) -> bool:
        return not (self.lines or self.transcript_lines or self.pages_removed)

    def to_dict(self) -> dict[str, object]:
        return as_json(self)  # ``_raw`` stays the plan's own


@dataclass
class ForgetResult:
    """What ``forget`` did (``dry_run``: what it would do)."""

    plan: ForgetPlan
    applied: bool
    lines_forgotten: int = 0
    tombstones_added: int = 0
    vectors_dropped: int = 0
    reflect_notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "lines_forgotten": self.lines_forgotten,
            "tombstones_added": self.tombstones_added,
            "vectors_dropped": self.vectors_dropped,
            "reflect_notes": list(self.reflect_notes),
            **self.plan.to_dict(),
        }


# ---------------------------------------------------------------------------- planning


def plan_forget(
    ix: Indexer, citations: list[str] | tuple[str, ...] = (), *, entity: str | None = None
) -> ForgetPlan:
    """The lines ``citations`` and ``entity`` name (see the module docstring). Reads the
    Markdown and the index; writes nothing."""
    if not citations and not entity:
        raise UsageError(
            "nothing to forget: name a citation, an entity or a query",
            hint="e.g. clawmem forget memory/2025-11-12.md#L30-L30, --entity Peter, or --query",
        )
    plan = ForgetPlan()
    wanted: dict[str, set[int]] = {}
    for c in citations:
        _add_citation(ix, plan, wanted, c)
    if entity:
        _add_entity(ix, plan, wanted, entity.lstrip("@"))
    for relpath, numbers in sorted(wanted.items()):
        _add_markdown_lines(ix, plan, relpath, numbers)
    plan.pages_regenerated = _pages_citing(ix, plan)
    plan.git_commits, plan.git_command = _git_history(ix.root, plan)
    return plan


def _add_citation(ix: Indexer, plan: ForgetPlan, wanted: dict[str, set[int]], cited: str) -> None:
    path, first, last = _lines_of(cited)
    if ":" in path.split("/", 1)[0] and not path.startswith(TRANSCRIPT_PREFIX):
        scope = path.split(":", 1)[0]
        raise UsageError(
            f"{cited}: lines of the read scope {scope!r} belong to another workspace",
            hint=f"run `clawmem forget` in {scope}'s workspace",
        )
    if path.startswith(TRANSCRIPT_PREFIX):
        from clawmem.transcripts.sessions import read_messages

        said = read_messages(ix.root, ix.cfg, path, from_line=first, lines=last - first + 1)
        for m in said.messages:
            plan.transcript_lines.append(ForgetLine(path, m.line, m.text))
            plan._raw[(path, m.line)] = m.text
        if not said.messages:
            plan.notes.append(f"{cited}: no message was said in these lines")
        return
    relpath = resolve_member(ix.root, path, ix.cfg.extra_paths, max_bytes=ix.cfg.max_file_bytes)
    wanted.setdefault(relpath, set()).update(range(first, last + 1))


def _lines_of(cited: str) -> tuple[str, int, int]:
    """(path, first, last) of a citation of one or several lines."""
    import re

    m = re.fullmatch(r"(.+?)#L(\d+)(?:-L?(\d+))?", cited.strip())
    if m is None:
        path, line = split_cited(cited)  # path:12, or the error that names the forms
        return path, line, line
    first, last = int(m.group(2)), int(m.group(3) or m.group(2))
    if first < 1 or last < first:
        raise UsageError(f"{cited}: not a range of lines", hint="e.g. memory/x.md#L3-L5")
    return m.group(1), first, last


def _add_entity(ix: Indexer, plan: ForgetPlan, wanted: dict[str, set[int]], name: str) -> None:
    """Every fact mentioning ``name``, every line that @mentions it, and its page."""
    ix.lazy_sync([])
    if not ix.index_path.exists():
        raise StoreError("no index yet", hint="run `clawmem index`, then forget again")
    idx = ix.open_for_read()  # never an index this machine did not build (store/index.py)
    try:
        folded = name.casefold()
        rows = idx.conn.execute(
            "SELECT c.path, c.start_line FROM chunks c JOIN chunk_entities e ON e.chunk_id = c.id "
            "WHERE e.folded = ? AND c.kind IS NOT NULL "
            "UNION SELECT l.src, l.line FROM links l WHERE l.type = 'mention' "
            "AND lower(l.target) = ? "
            "UNION SELECT l.src, l.line FROM links l WHERE lower(l.dst) = lower(?)",
            (folded, folded, entity_page_path(name)),
        ).fetchall()
    finally:
        idx.close()
    page = entity_page_path(name)
    found_page = None
    for p in (ix.root / "bank" / "entities").glob("*.md"):
        rel = p.relative_to(ix.root).as_posix()
        if rel.casefold() == page.casefold():
            found_page = rel
    for path, line in rows:
        if found_page is not None and path == found_page:
            continue
        if path.startswith(TRANSCRIPT_PREFIX):
            continue
        wanted.setdefault(path, set()).add(line)
    if found_page is not None:
        writable_path(ix.root, found_page)  # never through a link
        plan.pages_removed.append(found_page)
    plain = _named_in_plain_text(ix, name, wanted, found_page)
    if plain:
        shown = ", ".join(plain[:3]) + (" …" if len(plain) > 3 else "")
        plan.notes.append(
            f"{len(plain)} other line(s) name {name} in plain text and are kept ({shown}); "
            "forget them by citation or with --query"
        )
    if not rows and found_page is None:
        raise UsageError(
            f"@{name}: no fact, mention or page names this entity",
            hint="`clawmem entities` lists the known ones",
        )


def _named_in_plain_text(
    ix: Indexer, name: str, wanted: dict[str, set[int]], page: str | None
) -> list[str]:
    """Citations of lines that write the entity's name as a plain word (no @, no link): an
    entity's name is often an ordinary word, so these are named, not forgotten."""
    import re

    word = re.compile(rf"(?<![\w@]){re.escape(name)}(?!\w)", re.IGNORECASE)
    out = []
    for entry in ix.scan().markdown_files:
        if entry.relpath == page:
            continue
        try:
            text = (ix.root / entry.relpath).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        taken = wanted.get(entry.relpath, set())
        for n, line in enumerate(text_lines(text), 1):
            if n not in taken and word.search(line):
                out.append(f"{entry.relpath}#L{n}")
    return out


def _add_markdown_lines(ix: Indexer, plan: ForgetPlan, relpath: str, numbers: set[int]) -> None:
    path = writable_path(ix.root, relpath)  # refuses a link out of the workspace
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{relpath}: invalid UTF-8; clawmem will not edit it",
            hint="re-save the file as UTF-8, then forget again",
        ) from None
    lines = text_lines(text)  # as the index numbers them (markdown/lines.py)
    facts, _ = extract_facts(text)
    notes_of = {f.line: len(f.notes) for f in facts}
    chosen = set()
    for n in numbers:
        if not 1 <= n <= len(lines):
            raise UsageError(f"{relpath}#L{n}: the file has {len(lines)} lines")
        chosen.add(n)
        # A fact's notes (nested bullets) belong to it: they go with it.
        for k in range(1, notes_of.get(n, 0) + 1):
            if n + k <= len(lines):
                chosen.add(n + k)
    for n in sorted(chosen):
        raw = lines[n - 1]
        if not raw.strip():
            continue
        plan.lines.append(ForgetLine(relpath, n, redact(raw.strip())))
        plan._raw[(relpath, n)] = raw


def _pages_citing(ix: Indexer, plan: ForgetPlan) -> list[str]:
    """Generated pages under bank/ that cite a line being forgotten (reflect regenerates them)."""
    cites = {f"{x.path}#L{x.line}" for x in plan.lines}
    if not cites:
        return []
    out = []
    gone = set(plan.pages_removed)
    for p in sorted((ix.root / "bank").rglob("*.md")) if (ix.root / "bank").is_dir() else []:
        rel = p.relative_to(ix.root).as_posix()
        if rel in gone or p.is_symlink():
            continue
        try:
            body = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(c + "]" in body or c + "-" in body or c + ")" in body for c in cites):
            out.append(rel)
    return out


def _git_history(root: Path, plan: ForgetPlan) -> tuple[int, str | None]:
    """How many commits hold a forgotten line of a tracked file, and the command that would
    rewrite them (git filter-repo, reading the texts from a file under .memory/)."""
    if not (root / ".git").exists() or not plan.lines:
        return 0, None
    commits: set[str] = set()
    for x in plan.lines:
        raw = plan._raw[(x.path, x.line)].strip()
        try:
            out = subprocess.run(
                ["git", "log", "--format=%H", "-S", raw, "--", x.path],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return 0, None
        commits.update(out.stdout.split())
    if not commits:
        return 0, None
    return len(commits), (
        "git filter-repo --replace-text .memory/forgotten-texts.txt  "
        "(then force-push every clone's copy; see docs/operations.md)"
    )


# ---------------------------------------------------------------------------- applying


def forget(
    ix: Indexer,
    citations: list[str] | tuple[str, ...] = (),
    *,
    entity: str | None = None,
    dry_run: bool = False,
    today: date | None = None,
    lock_timeout: float = 60.0,
) -> ForgetResult:
    """Forget what ``citations`` and ``entity`` name (see the module docstring); with
    ``dry_run``, only the plan (the preview)."""
    from clawmem.files.locking import write_lock

    today = today or date.today()
    plan = plan_forget(ix, citations, entity=entity)
    if dry_run or plan.empty:
        return ForgetResult(plan, applied=False)
    ix.prepare_memory_dir()
    res = ForgetResult(plan, applied=True)
    with write_lock(ix.memory_dir, timeout=lock_timeout, purpose="clawmem forget"):
        shas = _unit_hashes(ix, plan)
        # Each line is recorded only once it is gone from its file, never before: a line the
        # file still holds is never hidden. A blanking the file refuses (changed since the
        # plan, not writable) records nothing of that file; a crash between a file's blanking
        # and its record leaves a blank line unrecorded (a clone could merge it back, and
        # `forget` of that clone's line forgets it again) rather than a tombstone hiding a
        # line the user still has. The transcript lines and the removed pages come last.
        page_entries = _page_lines(ix, plan.pages_removed) if plan.pages_removed else []
        # The list must take appends before any line goes: a list that cannot (a link, read
        # only) then leaves every file as it was.
        _record(ix, [], today, probe=True)
        for relpath in sorted({x.path for x in plan.lines}):
            mine = [(x.line, plan._raw[(x.path, x.line)]) for x in plan.lines if x.path == relpath]
            blanked: list[tuple[int, str]] = []
            try:
                _blank_in_place(ix.root, relpath, mine, blanked)
            finally:
                # What was written before a failed write is gone from the file: recorded too.
                res.tombstones_added += _record(ix, [(t, relpath) for _, t in blanked], today)
            res.lines_forgotten += len(blanked)
        for page in plan.pages_removed:
            os.unlink(writable_path(ix.root, page))
        transcript = [(plan._raw[(x.path, x.line)], x.path) for x in plan.transcript_lines]
        res.tombstones_added += _record(ix, page_entries + transcript, today)
        res.lines_forgotten += len(plan.transcript_lines)
        if ix.index_path.exists():
            idx = Index.open(ix.index_path)
            try:
                for rel in sorted({x.path for x in plan.transcript_lines}):
                    # Read again from the start: the tombstones now leave its messages out.
                    idx.delete_file(rel, keep_vectors=False)
            finally:
                idx.close()
            ix.index_locked(embed_limit=0)
            idx = Index.open(ix.index_path)
            try:
                res.vectors_dropped = idx.forget_vectors(shas)
            finally:
                idx.close()
    _write_replace_texts(ix, plan)
    if plan.pages_regenerated or plan.pages_removed:
        res.reflect_notes = _regenerate(ix, today)
    return res


def _unit_hashes(ix: Indexer, plan: ForgetPlan) -> list[str]:
    """The embedded-text hashes of every unit that holds a line being forgotten (their vectors
    go to the cache when the file is indexed again; ``forget_vectors`` drops them there)."""
    if not ix.index_path.exists():
        return []
    try:
        idx = Index.open(ix.index_path, readonly=True)
    except db.DatabaseError:
        return []
    try:
        out = []
        for x in [*plan.lines, *plan.transcript_lines]:
            out += [
                r[0]
                for r in idx.conn.execute(
                    "SELECT sha256 FROM chunks WHERE path = ? AND start_line <= ? AND end_line >= ?",
                    (x.path, x.line, x.line),
                )
            ]
        for page in plan.pages_removed:
            out += [
                r[0] for r in idx.conn.execute("SELECT sha256 FROM chunks WHERE path = ?", (page,))
            ]
        return out
    finally:
        idx.close()


def _record(
    ix: Indexer, entries: list[tuple[str, str]], today: date, *, probe: bool = False
) -> int:
    """Append ``entries`` ((text, where) pairs) to the forgotten list; how many tombstones.
    ``probe``: append nothing (the list is created with its header), only check that it can."""
    if not entries and not probe:
        return 0
    try:
        forgotten.append(ix.root, forgotten.entries(entries, today))
    except OSError as exc:
        if probe:
            raise StoreError(
                f"{forgotten.FORGOTTEN}: cannot write ({exc})",
                hint="nothing was forgotten; fix the file (not a link, writable) and try again",
            ) from None
        raise StoreError(
            f"{forgotten.FORGOTTEN}: cannot write ({exc})",
            hint="the lines blanked so far are gone from the files but not kept out of merges; "
            "fix the file (not a link, writable) and forget again what a clone brings back",
        ) from None
    return sum(not forgotten.is_structure(text) for text, _ in entries)


def _page_lines(ix: Indexer, pages: list[str]) -> list[tuple[str, str]]:
    out = []
    for page in pages:
        try:
            text = writable_path(ix.root, page).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += [(line, page) for line in text.splitlines() if line.strip()]
    return out


def _blank_in_place(
    root: Path, relpath: str, lines: list[tuple[int, str]], blanked: list[tuple[int, str]]
) -> None:
    """Overwrite each (line number, text) with spaces, in place, after checking that the bytes
    are still those texts: same size, same inode, so no line number moves and nothing another
    program appends is lost. All lines are checked before any is written (a file that changed
    keeps every line); each line written is added to ``blanked`` (the caller records those)."""
    from clawmem.files.cas import flocked

    path = writable_path(root, relpath)
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        # flocked: a writer that takes the file's lock is kept out while we check and write;
        # one that never lets go no longer hangs forget (the checks still guard the write).
        with flocked(fd):
            data = b""
            while chunk := os.pread(fd, 1 << 20, len(data)):
                data += chunk
            starts = line_starts(data)  # numbered as the preview numbered them
            spots = []
            for n, text in lines:
                want = text.rstrip("\r\n").encode("utf-8")
                if n > len(starts):
                    raise StoreError(
                        f"{relpath}#L{n}: the file changed since the preview; nothing was "
                        "forgotten in this file",
                        hint="run forget again to see the new preview",
                    )
                at = starts[n - 1]
                got = data[at : at + len(want)]
                end = at + len(want)
                if got != want or (end < len(data) and data[end : end + 1] not in (b"\n", b"\r")):
                    raise StoreError(
                        f"{relpath} line {n}: changed since the preview; nothing was forgotten "
                        "in this file",
                        hint="run forget again to see the new preview",
                    )
                spots.append((at, want, n, text))
            for at, want, n, text in spots:
                os.pwrite(fd, b" " * len(want), at)
                blanked.append((n, text))
            os.fsync(fd)
    finally:
        os.close(fd)


def _write_replace_texts(ix: Indexer, plan: ForgetPlan) -> None:
    """The texts `git filter-repo --replace-text` needs, under .memory/ (never committed, 0600):
    printed nowhere, since they are what was forgotten."""
    if not plan.git_commits:
        return
    path = ix.memory_dir / "forgotten-texts.txt"
    body = "".join(f"{plan._raw[(x.path, x.line)].strip()}==>\n" for x in plan.lines)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(body)
    except OSError:
        plan.notes.append(f"{path.name}: cannot write; rewrite the history by hand")


def _regenerate(ix: Indexer, today: date) -> list[str]:
    """Reflect again, so no page repeats what was forgotten; a page reflect cannot rewrite (a
    hand edit) is named, not overwritten."""
    from clawmem.reflect.pipeline import reflect

    try:
        result = reflect(ix, today=today)
    except ReflectConflict as exc:
        return [f"reflect did not rewrite the pages: {exc.message}"]
    except (WorkspaceError, StoreError) as exc:
        return [f"reflect did not run: {exc.message}"]
    return [f"reflect: {result.summary_line()}"]
