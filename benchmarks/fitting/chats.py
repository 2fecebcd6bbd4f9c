"""REALTALK's chats as the fitting scripts read them (``answer_match`` and ``relevance``): each
chat's workspace built, opened and indexed in turn, one at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from benchmarks.datasets.realtalk import Chat, build, chat_files, convert
from benchmarks.systems.clawmem import open_with

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory


def indexed_chats(
    numbers: Iterable[int], emb: Embedder | None
) -> Iterator[tuple[Chat, dict[int, Chat], Memory]]:
    """For each chat of ``numbers``, in order: the chat, every chat by its number (a question
    of another chat is asked too), and clawmem on the chat's workspace, indexed (the vector leg
    with ``emb``, a loaded model); each closed when the next is asked for."""
    every = {c.number: c for c in (convert(p) for p in chat_files())}
    for n in numbers:
        chat = every[n]
        mem = open_with(build(chat), emb)
        try:
            mem.index()
            yield chat, every, mem
        finally:
            mem.close()
