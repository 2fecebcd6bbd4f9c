"""``clawmem history``: how a fact, or what memory holds about an entity, came to be.

For a fact: the chain of statements it belongs to — the ones it replaced and the ones that
replaced it (``supersedes`` notes written by ``clawmem correct``, and the supersession rule) —
oldest first. For an entity: every fact that mentions it, oldest first. Each statement says
when it was recorded, who wrote it (``.clawmem/writers``: retain, correct, an MCP token, flush,
an import; else a hand edit, with what ``git blame`` knows of it) and what superseded it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from clawmem.errors import UsageError
from clawmem.ingest.cited import fact_at
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.forgotten import key
from clawmem.markdown.lines import text_lines
from clawmem.markdown.supersession import Statement, supersedes
from clawmem.markdown.writers import Written, lookup
from clawmem.recall.facts_list import list_facts
from clawmem.recall.results import Hit
from clawmem.text.records import as_json

GIT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Step:
    """One statement in a history."""

    fact: Hit
    writer: str  # "retain", "mcp:laptop", "correct", "flush", "import:…", "hand edit"
    written_at: str | None  # when it was written (UTC ISO), if known
    commit: str | None = None  # git: the commit that added the line, author and date

    def to_dict(self) -> dict[str, object]:
        return {
            **self.fact.to_dict(),
            "writer": self.writer,
            "written_at": self.written_at,
            "commit": self.commit,
        }


@dataclass
class History:
    subject: str  # the citation or @entity asked about
    steps: list[Step] = field(default_factory=list)  # oldest first

    def to_dict(self) -> dict[str, object]:
        return as_json(self)


def history(ix: Indexer, target: str) -> History:
    """The history of the fact at a citation, or of an entity (``@Peter`` or ``Peter``)."""
    if "#L" in target or ":" in target.rsplit("/", 1)[-1]:
        return _fact_history(ix, target)
    name = target.lstrip("@")
    facts = list_facts(ix, entity=name, limit=None).facts
    if not facts:
        raise UsageError(
            f"@{name}: no fact mentions this entity",
            hint="`clawmem entities` lists them; a fact's history takes its citation",
        )
    return History(f"@{name}", _steps(ix, list(reversed(facts))))


def _fact_history(ix: Indexer, citation: str) -> History:
    cited = fact_at(ix, citation)
    everything: list[Hit] = []
    for entity in cited.fact.entities or ("",):
        everything += list_facts(ix, entity=entity or None, limit=None).facts
    by_cite = {h.citation: h for h in everything}
    me = by_cite.get(cited.citation)
    if me is None:
        raise UsageError(
            f"{cited.citation}: the index does not hold this fact yet",
            hint="run `clawmem index`, then ask again",
        )
    chain = [me]
    # Forward: what superseded it, and what superseded that.
    seen = {me.citation}
    nxt = me.superseded_by
    while nxt and nxt not in seen and nxt in by_cite:
        seen.add(nxt)
        chain.append(by_cite[nxt])
        nxt = by_cite[nxt].superseded_by
    # Backward: the facts it replaced (each pointing at the next step of the chain).
    current = me
    while True:
        older = [h for h in everything if h.citation not in seen and _replaced(h, current)]
        if not older:
            break
        current = max(older, key=lambda h: (h.day or "", h.path, h.start_line))
        seen.add(current.citation)
        chain.insert(0, current)
    return History(cited.citation, _steps(ix, chain))


def _replaced(older: Hit, newer: Hit) -> bool:
    """Whether ``newer`` replaced ``older``: by a correction that names it, or by the rule."""
    if older.superseded_by == newer.citation:
        return True
    if not (older.kind and newer.kind and older.day and newer.day):
        return False
    return supersedes(
        Statement.of(newer.kind, newer.day, newer.entities, newer.text),
        Statement.of(older.kind, older.day, older.entities, older.text),
    )


def _steps(ix: Indexer, facts: list[Hit]) -> list[Step]:
    writes = lookup(ix.root)
    out = []
    for h in facts:
        line = _line(ix.root, h)
        found: list[Written] = [w for w in writes.get(key(line), []) if w.path == h.path]
        commit = _blame(ix.root, h)
        if found:
            out.append(Step(h, found[-1].writer, found[-1].at, commit))
        else:
            out.append(Step(replace(h), "hand edit", None, commit))
    return out


def _line(root: Path, h: Hit) -> str:
    try:
        lines = text_lines((root / h.path).read_text(encoding="utf-8"))
        return lines[h.start_line - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return ""


def _blame(root: Path, h: Hit) -> str | None:
    """ "abc1234 Ada Lovelace 2026-11-28" for the commit that added the line; "not committed"
    for a line git does not have yet; None outside git."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "blame", "--porcelain", "-L", f"{h.start_line},{h.start_line}", "--", h.path],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout:
        return None
    lines = out.stdout.splitlines()
    sha = lines[0].split()[0]
    if set(sha) == {"0"}:
        return "not committed"
    fields = dict(ln.split(" ", 1) for ln in lines[1:] if " " in ln and not ln.startswith("\t"))
    from datetime import UTC, datetime

    when = fields.get("author-time")
    day = datetime.fromtimestamp(int(when), UTC).date().isoformat() if when else ""
    return f"{sha[:7]} {fields.get('author', '?')} {day}".strip()
