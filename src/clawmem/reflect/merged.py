"""Rewrite the generated sections a git merge left as two clones' union, right after the merge.

When both clones rewrote a page's generated section, the merge driver keeps the union of the two
(``markdown.merging``), its begin marker flagged ``merged``: nothing is lost, but the union is
stale (each side's citations point at lines of its own log, and both sides' statements of one
opinion stand side by side). The hooks after a merge or a rebase call ``rewrite_merged``, which
rewrites exactly those sections from the merged facts, as ``clawmem reflect`` would, where that
needs no model: no embedding and no LLM. A section is left flagged (``status`` and ``check``
name it until ``clawmem reflect`` runs) when its rewrite would drop an LLM's summary, when it was
edited by hand since, or when it is not an entity, opinions or proposals page (an episode page is
written from its transcript).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from clawmem.errors import ClawmemError
from clawmem.files.atomic import write_atomic
from clawmem.files.locking import write_lock
from clawmem.files.rewrite import Changed, HeldOpen, rewrite_page
from clawmem.markdown.factlog import collect_facts
from clawmem.markdown.markers import MarkerError, find_section
from clawmem.markdown.merging import merged_sections
from clawmem.markdown.workspace import writable_path
from clawmem.reflect.pipeline import existing_entity_pages, plan_reflect

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer

# What a rewrite without a model or transcripts cannot write again: an LLM's summary on an entity
# page, the record of consolidated conversations (episodes) on the proposals page.
_NEEDS_MORE = ("<!-- clawmem:summary ", "<!-- clawmem:episodes-consolidated")


@dataclass
class MergedRewrite:
    rewritten: list[str] = field(default_factory=list)  # pages whose section was rewritten
    left: list[str] = field(default_factory=list)  # still flagged, for reflect to rewrite


def _body(text: str | None) -> str:
    try:
        section = find_section(text) if text else None
    except MarkerError:
        return ""
    return section.body if section else ""


def rewrite_merged(
    ix: Indexer, *, today: date | None = None, lock_timeout: float = 3.0
) -> MergedRewrite:
    """Rewrite, from the facts on disk, each generated section that a merge left as a union
    (and only those), without a model. Does not sync the index (the caller does)."""
    out = MergedRewrite()
    pages = merged_sections(ix.root)
    if not pages:
        return out
    ix.prepare_memory_dir()
    with write_lock(ix.memory_dir, timeout=lock_timeout, purpose="clawmem merge rewrite"):
        sc = ix.scan()
        log = collect_facts(ix.root, sc, today or date.today())
        result, _conflicts = plan_reflect(
            ix.root, log, existing_pages=existing_entity_pages(sc.files)
        )
        planned = {change.path: change for change in result.changes}
        for rel in pages:
            change = planned.get(rel)
            needs_more = change is not None and any(
                tag in _body(change.old) and tag not in _body(change.new) for tag in _NEEDS_MORE
            )
            if change is None or needs_more:
                out.left.append(rel)
                continue
            try:
                path = writable_path(ix.root, rel)  # never through a link out of the workspace
                current = path.read_bytes().decode("utf-8") if path.is_file() else None
                if current != change.old:  # changed since it was read: reflect will see to it
                    out.left.append(rel)
                    continue
                if change.old is None:
                    write_atomic(path, change.new)
                else:  # never renamed over while a program holds it open (files/rewrite.py)
                    rewrite_page(path, change.old.encode("utf-8"), change.new.encode("utf-8"))
            except (OSError, UnicodeDecodeError, ClawmemError, HeldOpen, Changed):
                out.left.append(rel)
                continue
            out.rewritten.append(rel)
    return out
