"""Entities: the people, places and projects facts mention (``@Peter``) and their pages
(``bank/entities/Peter.md``): listing them, and finding them named in a question."""

from __future__ import annotations

import re

from clawmem.ingest.indexing import Indexer
from clawmem.markdown.workspace import entity_page_path
from clawmem.store import queries
from clawmem.store.index import Index
from clawmem.text.textnorm import fold

_WORD = re.compile(r"[^\W_]+")


def list_entities(ix: Indexer) -> list[dict]:
    """Every entity with its fact count, last mention and page (if any), most mentioned first."""
    ix.lazy_sync([])
    if not ix.index_path.exists():
        return []
    idx = ix.open_for_read()
    try:
        rows = queries.entity_mentions(idx)
        pages = {p.casefold(): p for p in queries.entity_pages(idx)}
    finally:
        idx.close()
    out = []
    for name, _folded, n, last in rows:
        out.append(
            {
                "entity": name,
                "facts": n,
                "last_mention": last,
                "page": pages.pop(entity_page_path(name).casefold(), None),
            }
        )
    for _, page in sorted(pages.items()):
        out.append(
            {"entity": page.rsplit("/", 1)[1][:-3], "facts": 0, "last_mention": None, "page": page}
        )
    return out


def known_entities(index: Index) -> dict[str, str]:
    """folded name → display name, from entity pages and fact mentions."""
    names: dict[str, str] = {}
    for path in queries.entity_pages(index):
        stem = path.rsplit("/", 1)[1][:-3]
        names[stem.casefold()] = stem
    for ent in queries.entity_names(index):
        names.setdefault(ent.casefold(), ent)
    return names


def entities_in_query(index: Index, query: str) -> list[str]:
    """Entities named in a question ("tell me about Peter", "what about @The-Castle?")."""
    words = " " + " ".join(_WORD.findall(fold(query))) + " "
    memo = index.memo("entities_spoken")  # every recall asks; the names change only on writes
    if None not in memo:
        spoken = (
            (" " + " ".join(_WORD.findall(fold(n))) + " ", n)
            for n in known_entities(index).values()
        )
        memo[None] = [(s, n) for s, n in spoken if s.strip()]
    found = [name for spoken, name in memo[None] if spoken in words]
    return sorted(found, key=lambda n: -len(n))
