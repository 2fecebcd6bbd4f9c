"""Links between notes: the link grammar, and where a link points.

People write links in the Markdown, so links live in the Markdown and the index only derives them:

* ``[[Target]]``, ``[[Target|shown text]]``, ``[[path/to/note.md]]``, ``[[Note#Heading]]``;
* ordinary Markdown links to workspace notes, ``[The Castle](The-Castle.md)`` (a ``.md``
  destination; URLs, images and ``#anchor``-only links are not notes);
* ``@Name``, the entity mention of the Retain grammar (``facts.mention_spans``), which points at
  the entity's page ``bank/entities/Name.md``.

None of them counts inside code spans, fenced or indented code, or HTML blocks (a commented-out
link is not a link). A bullet ``- <relation> [[Target]]`` whose first word is lowercase types the
link it introduces (``depends_on``, ``supersedes``, ``related`` …); any other link is a
``wikilink``, and a mention is a ``mention``. Types are what a person wrote, never guessed.

Resolution (``Resolver``) follows GoClaw's Knowledge Vault: the exact workspace path, the path
plus ``.md``, the base name (any folder), the base name plus ``.md``; case-insensitive, an exact-case
match first. A Markdown link is first read relative to its own file, as Markdown viewers do. When
a step matches several notes and exactly one is an entity page, the page wins (``[[Peter]]`` and
``@Peter`` both mean ``bank/entities/Peter.md``); otherwise the link is ambiguous. Unresolved and
ambiguous links are kept, with the reason, for ``clawmem check`` and ``clawmem links``.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from clawmem.markdown.workspace import entity_page_path, is_entity_page

WIKILINK = "wikilink"  # the type of a link no relation word introduces
MENTION = "mention"  # the type of an @Name
# The relation words GoClaw's vault knows; any other lowercase word is accepted the same way.
KNOWN_RELATIONS = ("reference", "depends_on", "extends", "related", "supersedes", "contradicts")
CONTEXT_CHARS = 25  # context kept either side of a link, as in the seed

# The two link grammars, shared with searchable.py (a link offers its label, not its address).
WIKI = re.compile(r"\[\[([^\[\]\n]+)\]\]")
# [label](destination "title"): the destination is <…> or has no spaces (balanced parentheses
# one level deep); written without nested quantifiers so a hostile line cannot make it backtrack.
MDLINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_RELATION = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+([a-z][a-z0-9_]*(?:-[a-z0-9_]+)*)[ \t]+(?=\[)"
)


@dataclass(frozen=True)
class Link:
    """One link as written in a note."""

    line: int  # 1-based line of the note
    col: int  # 0-based offset of the link in its line
    syntax: str  # "wiki" | "markdown" | "mention"
    type: str  # "wikilink", a relation word, or "mention"
    target: str  # as written, without "#anchor" and "|label" ("Peter", "The-Castle.md")
    anchor: str | None  # the heading after "#", if any
    label: str | None  # the text shown instead of the target, if any
    text: str  # the link exactly as written: "[[Peter|him]]", "[x](x.md)", "@Peter"
    context: str  # about CONTEXT_CHARS characters either side of it, from its line


# ---------------------------------------------------------------------------------- grammar

# A line that may open a fence, indented code or an HTML block. A document without one has no
# code blocks, and the Markdown parse (most of the cost of reading links) is skipped.
_MAY_OPEN_BLOCK = re.compile(r"^(?: {0,3}(?:```|~~~|<)| {4}|\t)", re.M)


def _code_lines(lines: list[str]) -> set[int]:
    """0-based lines inside fences, indented code and HTML blocks: never links."""
    out: set[int] = set()
    if not _MAY_OPEN_BLOCK.search("\n".join(lines)):
        return out
    from clawmem.markdown.facts import markdown_tokens  # see extract_links

    for tok in markdown_tokens(lines):
        if tok.type in ("fence", "code_block", "html_block") and tok.map is not None:
            out.update(range(tok.map[0], tok.map[1]))
    return out


def _paragraphs(lines: list[str], skip: set[int]) -> Iterable[tuple[int, int]]:
    """``[start, end)`` runs of non-blank lines outside code: inline code cannot cross them."""
    start = None
    for i, line in enumerate(lines):
        inside = i not in skip and line.strip() != ""
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            yield start, i
            start = None
    if start is not None:
        yield start, len(lines)


def _blank(chars: list[str], start: int, end: int) -> None:
    chars[start:end] = "\x00" * (end - start)


def _context(line: str, start: int, end: int) -> str:
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(line), end + CONTEXT_CHARS)
    return ("…" if lo else "") + line[lo:hi].strip() + ("…" if hi < len(line) else "")


def split_wiki(inner: str) -> tuple[str, str | None, str | None]:
    target, _, label = inner.partition("|")
    if target.endswith("\\"):  # [[A\|B]]: the pipe escaped inside a table
        target = target[:-1]
    target, hash_, anchor = target.partition("#")
    return target.strip(), (anchor.strip() or None) if hash_ else None, label.strip() or None


def _md_target(dest: str) -> tuple[str, str | None] | None:
    """(note path, anchor) of a Markdown link destination, or None when it is not a note."""
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1]
    if not dest or dest.startswith(("#", "//")) or _SCHEME.match(dest):
        return None  # an anchor in the same page, a URL, mailto:, file:
    dest = dest.split("?", 1)[0]
    path, hash_, anchor = dest.partition("#")
    path = unquote(path).strip()
    if not path.lower().endswith(".md"):
        return None  # an image, a PDF, a folder: not a note
    return path, (unquote(anchor).strip() or None) if hash_ else None


def extract_links(text: str) -> list[Link]:
    """Every link of a Markdown document, in order of line and column."""
    if "[" not in text and "@" not in text:
        return []  # most daily-log lines hold neither; skip the parse
    # The Retain grammar's spans, imported here: recall reads links (``Resolver``, ``MENTION``)
    # from the index, and a cold `clawmem recall` should not import the grammar (issue 16).
    from clawmem.markdown.facts import code_spans, mention_spans

    lines = text.split("\n")
    found: list[Link] = []
    for start, end in _paragraphs(lines, _code_lines(lines)):
        block = "\n".join(lines[start:end])
        if "[" not in block and "@" not in block:
            continue  # most paragraphs hold no link: nothing to mask or search
        offsets = [0]
        for line in lines[start:end]:
            offsets.append(offsets[-1] + len(line) + 1)

        def where(pos: int, offsets: list[int] = offsets, start: int = start) -> tuple[int, int]:
            # A search, not a walk from the paragraph's first line: a paragraph of 20,000
            # lines each holding a link took 4 s (a 5 MB note from a clone, twenty minutes).
            i = bisect.bisect_right(offsets, pos) - 1
            return start + i, pos - offsets[i]

        chars = list(block)
        for s, e in code_spans(block) if "`" in block else ():
            _blank(chars, s, e)
        masked = "".join(chars)
        raw: list[tuple[int, int, str, str, str | None, str | None]] = []
        for m in WIKI.finditer(masked):
            target, anchor, label = split_wiki(m.group(1))
            _blank(chars, m.start(), m.end())
            if target:  # [[#Heading]] points inside its own note: not a link between notes
                raw.append((m.start(), m.end(), "wiki", target, anchor, label))
        masked = "".join(chars)
        for m in MDLINK.finditer(masked):
            if m.start() and masked[m.start() - 1] == "!":
                continue  # an image
            _blank(chars, m.start(), m.end())
            note = _md_target(m.group(2).strip())
            if note is not None:
                raw.append((m.start(), m.end(), "markdown", note[0], note[1], m.group(1) or None))
        for s, e in mention_spans("".join(chars)):
            raw.append((s, e, "mention", block[s + 1 : e], None, None))
        for s, e, syntax, target, anchor, label in raw:
            li, col = where(s)
            line = lines[li]
            found.append(
                Link(
                    line=li + 1,
                    col=col,
                    syntax=syntax,
                    type=MENTION if syntax == "mention" else _relation(line, col) or WIKILINK,
                    target=target,
                    anchor=anchor,
                    label=label,
                    text=block[s:e],
                    context=_context(line, col, col + (e - s)),
                )
            )
    found.sort(key=lambda lk: (lk.line, lk.col))
    return found


# A note's links become index rows: 1 MB of "@a @a …" (a clone can commit it) made 330,000
# identical rows, an 87 MB index and 8 s to build. A link repeated on one line is one row (the
# line is what a row cites), and a note keeps at most this many rows; `index` and `status`
# report the rest as a problem of the note (``TOO_MANY_LINKS``).
MAX_LINKS_PER_NOTE = 10_000
TOO_MANY_LINKS = "too many links: "


def kept_links(links: Iterable[Link]) -> tuple[list[Link], Link | None, int]:
    """The links a note's index rows hold: the first of each (line, type, target, anchor), at
    most ``MAX_LINKS_PER_NOTE``; then the first link left out by the cap and how many were."""
    seen: set[tuple] = set()
    kept: list[Link] = []
    first_out, over = None, 0
    for lk in links:
        key = (lk.line, lk.type, lk.target, lk.anchor)
        if key in seen:
            continue
        seen.add(key)
        if len(kept) < MAX_LINKS_PER_NOTE:
            kept.append(lk)
            continue
        first_out = first_out or lk
        over += 1
    return kept, first_out, over


def too_many_links(first_out: Link, over: int) -> dict:
    """The problem a note's capped links are reported as (``ParsedFile.problems``)."""
    return {
        "line": first_out.line,
        "text": "",
        "message": f"{TOO_MANY_LINKS}{over:,} link(s) from this line on are not indexed, over "
        f"{MAX_LINKS_PER_NOTE:,} a note (`clawmem links` and `clawmem graph` leave them out); "
        "split the note",
    }


def _relation(line: str, col: int) -> str | None:
    """The relation word of ``- word [[Target]]`` when the link at ``col`` is the one it
    introduces."""
    m = _RELATION.match(line)
    return m.group(1) if m and m.end() == col else None


def format_wikilink(
    target: str, *, anchor: str | None = None, label: str | None = None, relation: str | None = None
) -> str:
    """The inverse of the wiki grammar: ``extract_links(format_wikilink(...))`` reads back the
    same target, anchor, label and relation (reflect writes its links with it)."""
    link = "[[" + target + (f"#{anchor}" if anchor else "") + (f"|{label}" if label else "") + "]]"
    return f"- {relation} {link}" if relation else link


# ---------------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class Resolution:
    path: str | None  # the workspace path the link points at, when it resolves
    status: str  # "ok" | "unresolved" | "ambiguous"
    candidates: tuple[str, ...] = ()  # for an ambiguous link: the notes it could mean


class Resolver:
    """Where links point, given the workspace's notes (workspace-relative POSIX paths)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = frozenset(paths)
        self._folded: dict[str, list[str]] = {}
        self._suffix: dict[str, list[str]] = {}  # "Peter.md", "entities/Peter.md" (folded) -> paths
        for p in sorted(self.paths):
            self._folded.setdefault(p.casefold(), []).append(p)
            parts = p.split("/")
            for i in range(len(parts)):
                self._suffix.setdefault("/".join(parts[i:]).casefold(), []).append(p)

    def resolve(self, link: Link, src: str) -> Resolution:
        return self.resolve_target(link.syntax, link.target, src)

    def resolve_target(self, syntax: str, target: str, src: str) -> Resolution:
        if syntax == "mention":
            page = entity_page_path(target)
            return self._pick(self._folded.get(page.casefold(), []), page)
        want = target.strip()
        if syntax == "markdown" and not want.startswith("/"):
            # Markdown reads a destination relative to the file that holds it.
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(src), want))
            if not rel.startswith("../") and rel != "..":
                r = self._pick(self._folded.get(rel.casefold(), []), rel)
                if r.status != "unresolved":
                    return r
        want = want.lstrip("/")
        while want.startswith("./"):
            want = want[2:]
        if not want:
            return Resolution(None, "unresolved")
        steps = (
            (self._folded, want),  # the exact workspace path
            (self._folded, want + ".md"),  # the path without its extension
            (self._suffix, want),  # the base name (or a tail of the path), any folder
            (self._suffix, want + ".md"),
        )
        for table, key in steps:
            r = self._pick(table.get(key.casefold(), []), key)
            if r.status != "unresolved":
                return r
        return Resolution(None, "unresolved")

    @staticmethod
    def _pick(matches: list[str], written: str) -> Resolution:
        if not matches:
            return Resolution(None, "unresolved")
        if len(matches) > 1:
            exact = [p for p in matches if p == written or p.endswith("/" + written)]
            if len(exact) == 1:
                matches = exact
        if len(matches) > 1:
            pages = [p for p in matches if is_entity_page(p)]
            if len(pages) == 1:
                return Resolution(pages[0], "ok")
            return Resolution(None, "ambiguous", tuple(matches))
        return Resolution(matches[0], "ok")


def problem_message(link: Link | dict, res: Resolution | dict) -> str | None:
    """What ``clawmem check`` says about a link, or None when it is fine. A mention of an entity
    without a page is not a problem: pages are written later (by hand or by reflect)."""
    syntax = link["syntax"] if isinstance(link, dict) else link.syntax
    text = link["text"] if isinstance(link, dict) else link.text
    status = res["status"] if isinstance(res, dict) else res.status
    if status == "ok" or syntax == "mention":
        return None
    if status == "ambiguous":
        cands = res["candidates"] if isinstance(res, dict) else res.candidates
        return (
            f"ambiguous link {text}: it matches {', '.join(cands)}; write the path, "
            f"e.g. [[{cands[0]}]]"
        )
    return f"broken link {text}: no memory file matches it; fix the name or create the note"
