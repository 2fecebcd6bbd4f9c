"""``clawmem export``: every fact, in a form another tool (or another clawmem) reads back.

* **JSONL** — one object per fact: kind, statement, entities, confidence, the day it was
  recorded, the validity it states, its citation and what superseded it. ``clawmem import``
  reads it back (docs/cli.md has the schema).
* **OKF v0.2** (the Open Knowledge Format: a folder of Markdown concept files with YAML front
  matter; only ``type`` is required) — one concept per entity (``entities/<slug>.md``, type
  ``Entity``) and one for facts about no entity (``facts.md``, type ``Facts``). Each claim is a
  bullet in the Retain grammar followed by a footnote keyed to the concept's ``sources`` (the
  fact's citation as ``resource``, the day as ``last_modified``); ``generated`` says clawmem
  wrote it; a superseded fact is a claim of a concept whose ``status`` stays ``stable`` but the
  claim line carries ``(superseded)``. The root ``index.md`` declares ``okf_version: "0.2"``.

Text is exported as the index holds it: redacted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from clawmem import __version__
from clawmem.errors import BadArgument, UsageError, WorkspaceError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.facts import format_fact, make_fact
from clawmem.recall.facts_list import list_facts
from clawmem.recall.results import Hit
from clawmem.text.records import as_json

FORMATS = ("jsonl", "okf")


@dataclass
class Exported:
    """What ``export`` wrote."""

    format: str
    facts: int
    path: str | None  # the file or folder; None for JSONL on stdout
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return as_json(self)


def fact_record(h: Hit) -> dict[str, object]:
    """A fact as one JSONL object (the schema ``clawmem import`` reads)."""
    return {
        "kind": h.kind,
        "content": h.text,
        "entities": list(h.entities),
        "confidence": h.confidence,
        "timestamp": h.day,
        "valid_from": h.valid_from,
        "valid_to": h.valid_to,
        "citation": h.citation,
        "superseded_by": h.superseded_by,
    }


def jsonl_lines(ix: Indexer) -> Iterator[str]:
    """Every fact, oldest first, as JSONL lines (each ending in a newline)."""
    for h in reversed(list_facts(ix, limit=None).facts):
        yield json.dumps(fact_record(h), ensure_ascii=False) + "\n"


def export(ix: Indexer, fmt: str = "jsonl", out: str | Path | None = None) -> Exported:
    """Write every fact as ``fmt`` to ``out`` (JSONL: a file; OKF: a folder, created, which must
    be empty or absent). JSONL without ``out`` is ``jsonl_lines``' business (stdout)."""
    if fmt not in FORMATS:
        raise BadArgument("format", fmt, "unknown export format", hint="use jsonl or okf")
    if out is None:
        raise UsageError("export needs an output path", hint="e.g. --out memory.jsonl")
    target = Path(out).expanduser()
    _refuse_inside(ix, target)
    if fmt == "jsonl":
        n = 0
        try:
            f = open(target, "x", encoding="utf-8")  # never overwrite a file
        except FileExistsError:
            raise UsageError(
                f"{target}: already exists; export never overwrites a file",
                hint="pass a new path to --out",
            ) from None
        except OSError as exc:
            raise _cannot_write(target, exc) from None
        try:
            with f:
                for line in jsonl_lines(ix):
                    f.write(line)
                    n += 1
        except OSError as exc:  # disk full: the half-written file is ours, and of no use
            target.unlink(missing_ok=True)
            raise _cannot_write(target, exc) from None
        return Exported(fmt, n, str(target))
    try:
        return _export_okf(ix, target)
    except OSError as exc:
        raise _cannot_write(target, exc) from None


def _cannot_write(target: Path, exc: OSError) -> UsageError:
    return UsageError(
        f"{target}: cannot write the export ({exc.strerror or exc})",
        hint="pass --out a path in a folder that exists and that you can write",
    )


def _refuse_inside(ix: Indexer, target: Path) -> None:
    """An export inside the workspace would be indexed as memory: refused."""
    try:
        target.resolve().relative_to(ix.root.resolve())
    except ValueError:
        return
    raise WorkspaceError(
        f"{target}: inside the workspace; the export would be read back as memory",
        hint="export to a path outside the workspace",
    )


_SLUG = re.compile(r"[^a-z0-9_.-]+")


def _slug(name: str) -> str:
    return _SLUG.sub("-", name.casefold()).strip("-.") or "entity"


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a YAML string


def _export_okf(ix: Indexer, folder: Path) -> Exported:
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder}: not empty", hint="export OKF into a new or empty folder")
    facts = list(reversed(list_facts(ix, limit=None).facts))  # oldest first
    groups: dict[str, list[Hit]] = {}
    names: dict[str, str] = {}
    for h in facts:
        lead = h.entities[0] if h.entities else ""
        key = _slug(lead) if lead else ""
        names.setdefault(key, lead)
        groups.setdefault(key, []).append(h)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    (folder / "entities").mkdir(parents=True, exist_ok=True)
    files = []
    index_lines = []
    for key in sorted(groups):
        rel = f"entities/{key}.md" if key else "facts.md"
        title = names[key] or "Facts about no entity"
        body = _concept(groups[key], title, "Entity" if key else "Facts", now)
        (folder / rel).write_text(body, encoding="utf-8")
        files.append(rel)
        index_lines.append(f"- [{title}]({rel})")
    (folder / "index.md").write_text(
        '---\nokf_version: "0.2"\n---\n# clawmem export\n\n' + "\n".join(index_lines) + "\n",
        encoding="utf-8",
    )
    (folder / "log.md").write_text(
        f"# Log\n\n## {now[:10]}: exported {len(facts)} facts from clawmem\n", encoding="utf-8"
    )
    return Exported("okf", len(facts), str(folder), ["index.md", "log.md", *files])


def _concept(facts: list[Hit], title: str, kind: str, now: str) -> str:
    head = [
        "---",
        f"type: {kind}",
        f"title: {_yaml_str(title)}",
        f"generated: {{by: {_yaml_str('clawmem/' + __version__)}, at: {_yaml_str(now)}}}",
        "sources:",
    ]
    body = [f"# {title}", ""]
    for i, h in enumerate(facts, 1):
        head += [
            f"  - id: s{i}",
            f"    resource: {_yaml_str(h.citation)}",
            f"    title: {_yaml_str(h.path + ' line ' + str(h.start_line))}",
        ]
        if h.day:
            head.append(f"    last_modified: {_yaml_str(h.day)}")
        lead = [e for e in h.entities if f"@{e}" not in h.text]  # inline mentions stay inline
        line = format_fact(make_fact(h.kind or "W", h.text, lead, h.confidence))
        mark = " (superseded)" if h.superseded_by else ""
        body.append(f"{line} [^s{i}]{mark}")
    body.append("")
    for i, h in enumerate(facts, 1):
        body.append(f"[^s{i}]: {h.citation}" + (f", {h.day}" if h.day else ""))
    return "\n".join([*head, "---", *body]) + "\n"
