"""``clawmem import``: bring memory in from another tool, previewed first.

Readers, one per source, each turning what it reads into ``Candidate`` facts:

* ``jsonl`` — clawmem's own export (``clawmem export``): kind, content, entities, confidence,
  timestamp. Export → import into an empty workspace gives the same facts.
* ``okf`` — an Open Knowledge Format v0.2 folder: every bullet of a concept's body. A bullet in
  the Retain grammar keeps its kind, entities and confidence; any other bullet is a ``W`` fact
  about the concept when its ``type`` names a thing (Entity, Person, Organization, Project, …);
  the day is its footnoted source's ``last_modified``, else the concept's ``generated.at``.
* ``claude-code`` — Claude Code's auto memory folder (``~/.claude/projects/<project>/memory``):
  every bullet of its Markdown files, a ``W`` fact.
* ``basic-memory`` — a basic-memory project: observations (``- [category] text #tag``) become
  facts about the note's title (``preference``/``opinion`` → O, ``event``/``experience`` → B,
  ``observation``/``idea``/``note`` → S, others → W); relations (``- works_at [[Acme]]``) become
  ``W`` facts that keep the link.
* ``mem0`` — a mem0 JSON export (a list of memories, or ``{"results": [...]}``): each memory a
  ``W`` fact about its ``user_id``, dated ``created_at``.

Every fact goes through ``retain``: the Retain grammar, the lock, the link rules, and a note
under it that cites its source (``imported from claude-code:MEMORY.md#L4``). Text is redacted
before it is written, so a credential in the source never reaches the workspace. Imports are
idempotent: retain does not append a fact the workspace already states.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from clawmem.errors import BadArgument, ClawmemError, InputError, UsageError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.facts import Fact, parse_fact
from clawmem.text import untrusted_json
from clawmem.text.records import as_json
from clawmem.text.redact import find_secret, redact

FORMATS = ("jsonl", "okf", "claude-code", "basic-memory", "mem0")
MAX_SOURCE_BYTES = 50_000_000  # a source bigger than this is refused, not read into memory
_ENTITY_TYPES = frozenset(
    "entity person people organization organisation company project place team product tool".split()
)
_BM_KINDS = {
    "preference": "O",
    "opinion": "O",
    "belief": "O",
    "event": "B",
    "experience": "B",
    "action": "B",
    "observation": "S",
    "idea": "S",
    "note": "S",
    "question": "S",
}
_BULLET = re.compile(r"^[ \t]*[-*+][ \t]+(?:\[[ xX]\][ \t]+)?(.+?)\s*$")
_BM_OBS = re.compile(r"^[-*+][ \t]+\[([^\]\n]+)\][ \t]+(.+?)\s*$")
_BM_REL = re.compile(r"^[-*+][ \t]+([a-z][a-z0-9_]*)[ \t]+\[\[([^\[\]\n]+)\]\]\s*$")
_FOOTNOTE = re.compile(r"\s*\[\^([^\]\s]+)\](?:\s*\(superseded\))?\s*$")
_SLUG_BAD = re.compile(r"[^\w.-]+")


@dataclass(frozen=True)
class Candidate:
    """A fact read from a source, before it is retained."""

    kind: str
    content: str
    entities: tuple[str, ...]
    confidence: float | None
    day: str | None  # YYYY-MM-DD it was recorded, when the source says
    source: str  # where it was read: "claude-code:MEMORY.md#L4"

    def to_dict(self) -> dict[str, object]:
        return as_json(self, keys={"day": "timestamp"})


@dataclass
class Imported:
    """What ``import_memory`` read and (unless ``dry_run``) stored."""

    format: str
    source: str
    candidates: list[Candidate] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # citations of new facts
    duplicates: list[str] = field(default_factory=list)  # already stated there
    skipped: list[str] = field(default_factory=list)  # "source: why"
    dry_run: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "format": self.format,
            "source": self.source,
            "dry_run": self.dry_run,
            "facts": [c.to_dict() for c in self.candidates],
            "stored": list(self.stored),
            "duplicates": list(self.duplicates),
            "skipped": list(self.skipped),
        }


def import_memory(
    ix: Indexer,
    source: str | Path,
    *,
    fmt: str = "auto",
    dry_run: bool = False,
    today: date | None = None,
) -> Imported:
    """Read ``source`` as ``fmt`` (``auto``: guessed from what it is) and retain every fact it
    holds; with ``dry_run``, only what would be retained (the preview)."""
    from clawmem.ingest.retain import retain

    path = Path(source).expanduser()
    if not path.exists():
        raise UsageError(
            f"{path}: no such file or folder",
            hint="give a clawmem JSONL file (`clawmem export`), an OKF folder, Claude Code's "
            "memory folder, a basic-memory project or a mem0 export",
        )
    if not path.is_file() and not path.is_dir():
        # A FIFO or a device: reading it as a mem0 export waited for ever.
        raise InputError(
            f"{path}: not a regular file or a folder", hint="pass a file or folder to import"
        )
    if path.is_file() and path.stat().st_size > MAX_SOURCE_BYTES:
        # Read as empty, it would "import 0 facts" and exit 0: the user must hear why.
        raise InputError(
            f"{path}: {path.stat().st_size:,} bytes is over the {MAX_SOURCE_BYTES:,}-byte cap "
            "of an import source",
            hint="split it into smaller files and import each",
        )
    fmt = _guess(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise BadArgument(
            "format", fmt, "unknown import format", hint=f"use one of {', '.join(FORMATS)}"
        )
    result = Imported(fmt, str(path), dry_run=dry_run)
    reader = {
        "jsonl": _read_jsonl,
        "okf": _read_okf,
        "claude-code": _read_claude_code,
        "basic-memory": _read_basic_memory,
        "mem0": _read_mem0,
    }[fmt]
    for c in reader(path, result.skipped):
        result.candidates.append(
            Candidate(
                c.kind,
                redact(c.content),
                # Everything the fact's line and its note hold is the source's: an entity that is
                # a credential (@ghp_…) is left out, and the source's name redacted, or retain
                # (told the text is clean) wrote them into the log as they were.
                tuple(e for e in c.entities if find_secret(e) is None),
                c.confidence,
                c.day,
                redact(c.source),
            )
        )
    if dry_run:
        return result
    for c in result.candidates:
        try:
            done = retain(
                ix,
                c.content,
                kind=c.kind,
                confidence=c.confidence,
                entities=c.entities,
                day=c.day,
                today=today,
                literal=True,
                allow_secret=True,  # redacted above: what is left only looks like one
                writer=f"import:{fmt}",
                note=f"imported from {c.source}",
                same_day_only=c.day is not None,
            )
        except ClawmemError as exc:
            result.skipped.append(f"{c.source}: {exc.message}")
            continue
        (result.stored if done.stored else result.duplicates).append(
            done.source if done.stored else done.duplicate_of or done.source
        )
    return result


def _guess(path: Path) -> str:
    if path.is_file():
        with path.open("rb") as fh:  # the head only: a source may be 50 MB
            head = fh.read(4096).lstrip()
        if head.startswith(b"[") or head.startswith(b'{"results"'):
            return "mem0"
        if path.suffix == ".jsonl":
            return "jsonl"
        if head.startswith(b"{"):
            first = head.split(b"\n", 1)[0]
            return "jsonl" if b'"kind"' in first else "mem0"
        raise UsageError(f"{path}: cannot tell its format", hint="pass --format")
    index = path / "index.md"
    if index.is_file() and b"okf_version" in index.read_bytes()[:2048]:
        return "okf"
    mds = list(path.rglob("*.md"))
    if any(_BM_OBS.match(ln) for p in mds[:200] for ln in _lines(p)[:400]):
        return "basic-memory"
    if (path / "MEMORY.md").is_file() or path.name == "memory":
        return "claude-code"
    raise UsageError(f"{path}: cannot tell its format", hint="pass --format")


def _lines(path: Path, skipped: list[str] | None = None, rel: str | None = None) -> list[str]:
    """The lines of a source file; a file left out is named in ``skipped`` with why."""
    why = None
    try:
        if path.is_symlink():
            why = "a link, not followed"
        elif not path.is_file():  # a FIFO named like a note: reading it waits for ever
            why = "not a regular file"
        elif path.stat().st_size > MAX_SOURCE_BYTES:
            why = f"{path.stat().st_size:,} bytes is over the {MAX_SOURCE_BYTES:,}-byte cap"
        else:
            return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        why = f"cannot be read ({exc.strerror or exc})"
    if skipped is not None:
        skipped.append(f"{rel or path.name}: {why}")
    return []


def _md_files(folder: Path) -> list[Path]:
    """The Markdown files of a source folder, links and hidden folders left out."""
    out = []
    for p in sorted(folder.rglob("*.md")):
        rel = p.relative_to(folder)
        if p.is_symlink() or any(part.startswith(".") for part in rel.parts):
            continue
        out.append(p)
    return out


def _day(value: object) -> str | None:
    if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}", value):
        return value[:10]
    return None


def _entity(name: str) -> str | None:
    """A name as an entity slug (``@Peter``, ``@Acme-Corp``), or None when nothing is left."""
    slug = _SLUG_BAD.sub("-", name.strip()).strip("-.")
    return slug if slug and (slug[0].isalnum() or slug[0] == "_") else None


def _plain(
    kind: str, content: str, entities: tuple[str, ...], day: str | None, src: str
) -> Candidate:
    return Candidate(kind, " ".join(content.split()), entities, None, day, src)


# ---------------------------------------------------------------------------- the readers


def _read_jsonl(path: Path, skipped: list[str]) -> Iterator[Candidate]:
    for n, line in enumerate(_lines(path, skipped), 1):
        if not line.strip():
            continue
        try:
            obj = untrusted_json.loads(line)
            kind = str(obj.get("kind") or "W")
            content = str(obj["content"])
            ents = tuple(str(e) for e in obj.get("entities") or ())
            conf = obj.get("confidence")
        except (ValueError, KeyError, TypeError, AttributeError):
            skipped.append(f"{path.name}#L{n}: not a fact object (kind, content, entities, …)")
            continue
        yield Candidate(kind, content, ents, conf, _day(obj.get("timestamp")), f"{path.name}#L{n}")


def _grammar_fact(text: str) -> Fact | None:
    try:
        return parse_fact(text)
    except InputError:
        return None


def _read_okf(folder: Path, skipped: list[str]) -> Iterator[Candidate]:
    import yaml  # type: ignore[import-untyped]  # PyYAML ships no type hints

    for p in _md_files(folder):
        rel = p.relative_to(folder).as_posix()
        if p.name in ("index.md", "log.md"):
            continue
        lines = _lines(p, skipped, rel)
        meta: dict = {}
        body_from = 0
        if lines and lines[0].strip() == "---":
            end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
            if end is not None:
                try:
                    meta = yaml.safe_load("\n".join(lines[1:end])) or {}
                except yaml.YAMLError as exc:
                    skipped.append(f"{rel}: front matter is not YAML ({exc.__class__.__name__})")
                    continue
                except RecursionError:  # PyYAML composes recursively: 20,000 "[" ended the import
                    skipped.append(f"{rel}: front matter is not YAML (nested too deeply)")
                    continue
                body_from = end + 1
        # Only plain values are read: str() of a YAML alias bomb (a title of nested aliases,
        # a few hundred bytes) expanded to billions of items and the import never returned.
        if not isinstance(meta, dict) or not isinstance(meta.get("type"), str) or not meta["type"]:
            skipped.append(f"{rel}: not an OKF concept (no type)")
            continue
        days = {}
        sources = meta.get("sources")
        for s in sources if isinstance(sources, list) else []:
            if isinstance(s, dict) and isinstance(s.get("id"), (str, int)) and s["id"] != "":
                days[str(s["id"])] = _day(s.get("last_modified"))
        gen = meta.get("generated")
        default_day = _day(gen.get("at")) if isinstance(gen, dict) else None
        title = meta.get("title") if isinstance(meta.get("title"), str) else None
        title = title or p.stem
        about = _entity(title) if str(meta["type"]).casefold() in _ENTITY_TYPES else None
        for n in range(body_from, len(lines)):
            line = lines[n]
            m = _BULLET.match(line)
            if not m or line.startswith((" ", "\t")):
                continue
            text = m.group(1)
            note = _FOOTNOTE.search(text)
            day = default_day
            if note:
                day = days.get(note.group(1)) or default_day
                text = text[: note.start()]
            fact = _grammar_fact(line[: len(line) - len(m.group(1))] + text)
            src = f"okf:{rel}#L{n + 1}"
            if fact is not None:
                yield Candidate(fact.kind, fact.content, fact.entities, fact.confidence, day, src)
            else:
                yield _plain("W", text, (about,) if about else (), day, src)


def _read_claude_code(folder: Path, skipped: list[str]) -> Iterator[Candidate]:
    files = [folder] if folder.is_file() else _md_files(folder)
    for p in files:
        rel = p.name if folder.is_file() else p.relative_to(folder).as_posix()
        in_code = False
        for n, line in enumerate(_lines(p, skipped, rel), 1):
            if line.lstrip().startswith(("```", "~~~")):
                in_code = not in_code
            if in_code:
                continue
            m = _BULLET.match(line)
            if m and len(m.group(1)) > 2:
                yield _plain("W", m.group(1), (), None, f"claude-code:{rel}#L{n}")


def _read_basic_memory(folder: Path, skipped: list[str]) -> Iterator[Candidate]:
    for p in _md_files(folder):
        rel = p.relative_to(folder).as_posix()
        lines = _lines(p, skipped, rel)
        title = p.stem
        day = None
        if lines and lines[0].strip() == "---":
            for ln in lines[1:40]:
                if ln.strip() == "---":
                    break
                key, _, value = ln.partition(":")
                if key.strip() == "title" and value.strip():
                    title = value.strip().strip("\"'")
                if key.strip() in ("created", "date") and _day(value.strip().strip("\"'")):
                    day = _day(value.strip().strip("\"'"))
        about = _entity(title)
        ents = (about,) if about else ()
        for n, line in enumerate(lines, 1):
            obs = _BM_OBS.match(line)
            if obs and obs.group(1).strip() not in ("x", "X", " "):
                kind = _BM_KINDS.get(obs.group(1).strip().casefold(), "W")
                yield _plain(kind, obs.group(2), ents, day, f"basic-memory:{rel}#L{n}")
                continue
            rel_m = _BM_REL.match(line)
            if rel_m:
                words = rel_m.group(1).replace("_", " ")
                yield _plain(
                    "W", f"{words} [[{rel_m.group(2)}]]", ents, day, f"basic-memory:{rel}#L{n}"
                )


def _read_mem0(path: Path, skipped: list[str]) -> Iterator[Candidate]:
    try:
        data = untrusted_json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not JSON ({exc})", hint="pass a mem0 JSON export") from None
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError(f"{path}: no list of memories", hint="a mem0 export is a JSON list")
    for i, m in enumerate(items):
        if not isinstance(m, dict) or not isinstance(m.get("memory") or m.get("text"), str):
            skipped.append(f"{path.name}[{i}]: no memory text")
            continue
        who = _entity(str(m.get("user_id") or m.get("agent_id") or ""))
        text = str(m.get("memory") or m.get("text"))
        yield _plain(
            "W", text, (who,) if who else (), _day(m.get("created_at")), f"mem0:{path.name}[{i}]"
        )
