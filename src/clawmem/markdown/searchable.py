"""What of a unit's Markdown is content: the one place that decides which words a unit offers
to the lexical index and to the embedder.

A unit is stored and shown exactly as written (its citation's lines are its text), but its
syntax is not what it says. ``searchable_text`` keeps the words a reader sees and drops the
machinery around them:

* a link shows its label: ``[shown](path/to/note.md)`` -> ``shown``; ``[[Target|shown]]`` ->
  ``shown``; ``[[Peter]]`` or ``[[Peter#Work]]`` -> ``Peter`` (the name of the page it points to);
  ``[[bank/entities/Peter.md]]`` -> ``Peter``; a link to another path (``[[bank/world.md#x]]``)
  offers no words: its folders, file name and anchor are an address, not content ("bank PIN"
  and "world cup" must not find it);
* an image shows its alternative text;
* HTML comments are dropped whole: reflect's markers (``<!-- clawmem:reflect:begin … -->``), and
  the guidance text of a new workspace's ``MEMORY.md`` (``markdown/scaffold.py`` writes it as a
  comment so that it is never recalled as memory);
* a task's checkbox (``- [ ]``, ``- [x]``) and a citation written in the text
  (``(memory/2025-11-12.md#L182)``, what reflect's pages end each line with) are dropped.

A unit's heading path counts as its context (``searchable_heading``), except the titles reflect
gives the sections it generates ("Facts from the log", and under it a kind's "World",
"Opinions", …): they are the page's layout, and "who won the 1998 world cup?" must not find every
line of every entity page's World section. A person's own headings all count.

``has_content`` says whether anything is left: a unit with nothing (a marker line alone) is not
indexed, so it can never be a hit, a snippet, or an entity page's first unit.

Changing what is kept changes what is indexed: bump ``schema.CHUNKER_VERSION`` (the index is
then rebuilt).
"""

from __future__ import annotations

import re

from clawmem.markdown.kinds import FACTS_SECTION, OPINIONS_SECTION, SECTION_TITLES
from clawmem.markdown.links import MDLINK, WIKI, split_wiki
from clawmem.markdown.workspace import is_entity_page

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_CHECKBOX = re.compile(r"^([ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[[ xX]\](?=\s|$)", re.M)
# A workspace path with a folder, or any path with a line anchor: "memory/2025-11-12.md#L182",
# "team:memory/x.md#L5-L7", "MEMORY.md#L3"; in parentheses, those go too.
# A path starts where a run of path characters does (the lookbehind): tried from every character
# of a long run, the regex was quadratic (a 1,600-character unit of one word and an ".md" took
# 70 ms, three times a unit, so a hostile page of them took minutes to index).
_PATH = r"(?<![\w.~/:-])/?(?:[\w-]+:)?(?:[\w.~-]+/)*[\w.~-]+\.md(?:#L\d+(?:-L?\d+)?)"
_CITED_PATH = re.compile(
    rf"\(\s*{_PATH}\s*\)|{_PATH}|(?<![\w.~/:-])/?(?:[\w-]+:)?(?:[\w.~-]+/)+[\w.~-]+\.md\b"
    r"(?:#[\w-]+)?"
)
# Nothing here can change a text without one of these: most units are returned as they are.
_MAY_HOLD = re.compile(r"\[|<!--|\.md")
_WORDLESS = " \t\r\n-*_#>|:=`~+.,;()[]{}<>!"


def _wiki_words(m: re.Match[str]) -> str:
    target, _anchor, label = split_wiki(m.group(1))
    if label:
        return label
    if "/" not in target and not target.lower().endswith(".md"):
        return target  # a page's name: "Peter", "The Castle"
    path = target if target.lower().endswith(".md") else target + ".md"
    if is_entity_page(path):
        return path.rsplit("/", 1)[1][:-3].replace("-", " ")
    return ""  # an address elsewhere: no words


def _md_words(m: re.Match[str]) -> str:
    return m.group(1)  # the label (an image's alternative text); the destination goes


def searchable_text(text: str) -> str:
    """``text`` without its Markdown machinery (see the module's docstring), for the FTS
    columns and the embedder. Every other character is kept as it is."""
    if not _MAY_HOLD.search(text):
        return text
    text = _COMMENT.sub(" ", text)
    text = WIKI.sub(_wiki_words, text)
    text = MDLINK.sub(_md_words, text)
    text = _CHECKBOX.sub(r"\1", text)
    return _CITED_PATH.sub(" ", text)


def has_content(text: str) -> bool:
    """Whether ``text`` says anything once its Markdown machinery is gone."""
    return bool(searchable_text(text).strip(_WORDLESS))


_GENERATED = (FACTS_SECTION, OPINIONS_SECTION)
_KIND_TITLES = frozenset(SECTION_TITLES.values())


def searchable_heading(heading: str) -> str:
    """A unit's heading path (``Kate > Facts from the log > World``) as context words: without
    the titles of reflect's generated sections and, below one, the kinds' titles
    (``Kate``)."""
    parts = heading.split(" > ")
    for i, part in enumerate(parts):
        if part in _GENERATED:
            kept = [p for p in parts[i + 1 :] if p not in _KIND_TITLES]
            return " > ".join(parts[:i] + kept)
    return heading
