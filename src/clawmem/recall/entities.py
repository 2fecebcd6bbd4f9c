"""Entities: the people, places and projects facts mention (``@Peter``) and their pages
(``bank/entities/Peter.md``): listing them, and finding them named in a question."""

from __future__ import annotations

from dataclasses import dataclass, replace

from clawmem.ingest.indexing import Indexer
from clawmem.markdown.workspace import entity_page_path
from clawmem.store import queries
from clawmem.store.index import Index
from clawmem.text.query import Query, words_of
from clawmem.text.records import as_json


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity as ``clawmem entities`` lists it."""

    entity: str  # its name, as a fact mentions it or its page is named
    facts: int  # how many facts mention it
    last_mention: str | None  # the latest day a fact mentions it (YYYY-MM-DD)
    page: str | None  # its page, bank/entities/<entity>.md, if there is one

    def to_dict(self) -> dict:
        """``clawmem entities --json``'s form of it."""
        return as_json(self)


def list_entities(ix: Indexer) -> list[Entity]:
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
        page = pages.pop(entity_page_path(name).casefold(), None)
        out.append(Entity(entity=name, facts=n, last_mention=last, page=page))
    for _, page in sorted(pages.items()):
        out.append(
            Entity(entity=page.rsplit("/", 1)[1][:-3], facts=0, last_mention=None, page=page)
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


def resolve(index: Index, query: Query) -> Query:
    """``query`` with the known entities it names (``Query.entities``, longest name first):
    "tell me about Peter", "what about @The-Castle?". Each name is matched word for word
    against the question's folded words."""
    words = " " + " ".join(query.words) + " "
    memo = index.memo("entities_spoken")  # every recall asks; the names change only on writes
    if None not in memo:
        spoken = ((" " + " ".join(words_of(n)) + " ", n) for n in known_entities(index).values())
        memo[None] = [(s, n) for s, n in spoken if s.strip()]
    found = [name for spoken, name in memo[None] if spoken in words]
    return replace(query, entities=tuple(sorted(found, key=lambda n: -len(n))))
