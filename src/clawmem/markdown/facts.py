"""The Retain grammar: structured facts written as Markdown bullets.

```
## Retain
- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) for Andy's birthday.
- O(c=0.95) @Peter: Prefers concise replies on WhatsApp.
- W: The office moved to Berlin.
```

A fact line is ``[indent] bullet " " KIND ["(c=" CONF ")"] (" @" ENTITY)* ": " STATEMENT``:

* bullet ``-``, ``*`` or ``+``; KIND ``W`` world, ``B`` experience, ``O`` opinion, ``S``
  observation;
* CONF (opinions only) is ``0``, ``1`` or ``0.``/``1.`` followed by digits, within 0–1. ``.5`` is
  rejected with the fix "write 0.5": one spelling per value keeps files greppable and diffs quiet;
* ENTITY is a slug of letters (any script), digits, ``_``, ``-`` and ``.``; it starts with a
  letter, digit or ``_`` and does not end with ``.`` or ``-``, so ``@Peter.`` ending a sentence is
  ``Peter``;
* ``@Name`` inside the statement mentions an entity too, except in e-mail addresses, URLs, link
  targets and inline code. Inline mentions must start with a letter (``@3pm`` is a time);
* spacing is exact: one space after the bullet, before each mention and after the colon. Anything
  else inside a Retain section is reported with the fix rather than guessed at.

The grammar applies only inside a section headed "Retain" (any level, any case) and up to the next
heading of the same or a higher level; fenced code never holds facts or headings. basic-memory
matched its grammar anywhere and then had to patch out timestamps, task boxes and callouts.

Decisions that keep ``format_fact(parse_fact(line)) == line`` exact:

* indentation, trailing spaces/tabs and a final line ending (``\\n``, ``\\r\\n`` or ``\\r``) are
  kept in ``indent``, ``trailing`` and ``eol``; ``content`` never includes them. ``extract_facts``
  hands lines over without their ending, so a CRLF file yields the same facts as an LF file;
* the literal confidence (``0.950`` vs ``0.95``) is kept in ``confidence_text``; lead mentions are
  kept as written (``lead_entities``, duplicates included) while ``entities`` is de-duplicated.

Nested sub-bullets and indented continuation lines under a fact annotate it: ``extract_facts``
keeps them, stripped of indentation and bullet, in ``Fact.notes``. They are not facts themselves
and never malformed, and the statement stays the single fact line, so every fact is exactly one
line that can be cited, rewritten in place and round-tripped.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from clawmem.errors import InputError
from clawmem.markdown.kinds import KINDS
from clawmem.markdown.lines import split_lines

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from markdown_it.token import Token

_KIND_BY_NAME = {name: kind for kind, name in KINDS.items()}
BULLETS = "-*+"
GRAMMAR_HINT = 'a fact looks like "- W @Entity: statement" (kinds W, B, O(c=0.9), S)'


@dataclass(frozen=True)
class Fact:
    kind: str  # "W" | "B" | "O" | "S"
    content: str  # the statement after ": ", without trailing whitespace
    entities: tuple[str, ...]  # lead mentions in order, then inline mentions; de-duplicated
    confidence: float | None  # opinions only
    line: int  # 1-based line in its file; 0 for a fact not read from a file
    bullet: str = "-"
    lead_entities: tuple[str, ...] = ()  # mentions before the colon, exactly as written
    confidence_text: str | None = None  # the literal number, e.g. "0.950"
    indent: str = ""  # leading spaces/tabs
    trailing: str = ""  # trailing spaces/tabs after the statement
    eol: str = ""  # "", "\n", "\r\n" or "\r", as given to parse_fact
    notes: tuple[str, ...] = ()  # nested sub-bullets / continuation lines (extract_facts only)

    @property
    def kind_name(self) -> str:
        return KINDS[self.kind]


@dataclass(frozen=True)
class FactProblem:
    line: int  # 1-based
    text: str  # the offending line, without its line ending
    message: str  # what is wrong and how to fix it


class _Malformed(Exception):
    """Internal: one grammar violation, turned into InputError or FactProblem by the caller."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------------------------
# Entities


def _is_slug_char(ch: str) -> bool:
    # Letters, digits and combining marks of every script: Vietnamese typed in decomposed form and
    # Indic vowel signs are marks, and a name must not be cut in the middle of a letter.
    return ch.isalnum() or ch in "_.-" or unicodedata.category(ch)[0] == "M"


def _scan_slug(text: str, start: int) -> int:
    """End of the entity slug that starts at ``start`` (== start when there is none)."""
    if start >= len(text) or text[start] in ".-" or not _is_slug_char(text[start]):
        return start
    if unicodedata.category(text[start])[0] == "M":
        return start
    end = start
    while end < len(text) and _is_slug_char(text[end]):
        end += 1
    while text[end - 1] in ".-":  # "@Peter." ends a sentence; the slug is "Peter"
        end -= 1
    return end


def is_entity_slug(name: str) -> bool:
    """Whether ``name`` (without ``@``) is a valid entity slug."""
    return bool(name) and _scan_slug(name, 0) == len(name)


def _is_cjk(ch: str) -> bool:
    # Scripts written without spaces: "会议@Kenji" is a mention, "peter@example.com" is not.
    cp = ord(ch)
    return (
        0x3040 <= cp <= 0x30FF  # kana
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xAC00 <= cp <= 0xD7AF  # hangul
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
    )


_NOT_BEFORE_MENTION = set("_.-+%/\\@=:~&#!$^|`\x00")


def _may_precede_mention(prev: str) -> bool:
    if prev in _NOT_BEFORE_MENTION:
        return False
    if prev.isalnum():
        return _is_cjk(prev)
    return True


# Spans where "@" is never a mention are masked with NUL, which also stops a slug. Code spans and
# link targets are found by linear scans: the obvious regexes are quadratic on a long line of
# backticks or of "](" without ")".
_URLS = re.compile(
    r"<[^<>\s]+>"  # autolink: <https://a.b/@c>
    r"|\b[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s<>()\[\]]*"  # bare URL (schemes are short)
    r"|\bwww\.[^\s<>()\[\]]*"
)


def _code_spans(text: str) -> Iterator[tuple[int, int]]:
    """Inline code as CommonMark reads it: a backtick run up to the next run of the same length."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    later: dict[int, list[int]] = {}  # run length -> indices of runs of that length, ascending
    for i, (start, end) in enumerate(runs):
        later.setdefault(end - start, []).append(i)
    seen = dict.fromkeys(later, 0)  # per length: how many of those runs lie behind us
    i = 0
    while i < len(runs):
        length = runs[i][1] - runs[i][0]
        same, k = later[length], seen[length]
        while k < len(same) and same[k] <= i:
            k += 1
        seen[length] = k
        if k < len(same):  # a closing run: the span is code
            yield runs[i][0], runs[same[k]][1]
            i = same[k] + 1
        else:  # no closer: the backticks are literal
            i += 1


def _mask(text: str) -> str:
    chars = list(text)

    def blank(start: int, end: int) -> None:
        chars[start:end] = "\x00" * (end - start)

    for start, end in _code_spans(text):
        blank(start, end)
    masked = "".join(chars)
    pos = masked.find("](")
    while pos != -1:  # Markdown link target: [x](https://a.b/@c)
        close = masked.find(")", pos + 2)
        if close == -1:
            break
        blank(pos, close + 1)
        pos = masked.find("](", close + 1)
    for m in _URLS.finditer(masked):
        blank(m.start(), m.end())
    return "".join(chars)


def mention_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every inline ``@Name`` in ``text`` (start at the ``@``): the one rule
    for mentions, used by the Retain grammar and by the link graph (links.py)."""
    if "@" not in text:
        return []
    masked = _mask(text)
    found = []
    at = masked.find("@")
    while at != -1:
        prev = masked[at - 1] if at else " "
        end = _scan_slug(masked, at + 1)
        if end > at + 1 and masked[at + 1].isalpha() and _may_precede_mention(prev):
            found.append((at, end))
        at = masked.find("@", max(end, at + 1))
    return found


def code_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the inline code spans of ``text`` (CommonMark's backtick rule)."""
    return list(_code_spans(text))


def _inline_mentions(content: str) -> list[str]:
    return [content[s + 1 : e] for s, e in mention_spans(content)]


def _entities(lead: Iterable[str], content: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*lead, *_inline_mentions(content)]))


# --------------------------------------------------------------------------------------------
# One line


def _quote(text: str, limit: int = 40) -> str:
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


_TASK_BOX = re.compile(r"\[[ xX]\](?=\s|$)")
# [0-9], not \d: \d also matches Arabic-Indic and full-width digits, which float() accepts.
_CONFIDENCE = re.compile(r"c=([01](?:\.[0-9]+)?)")
_NUMBER = re.compile(r"c=\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))\s*")


def _parse(line: str, lineno: int) -> Fact:
    # Plain string operations, not one regex: a lazy ".*?[ \t]*$" is quadratic on long runs of
    # inner spaces, and a single pasted log line can hold thousands. Each step reads from ``pos``
    # in the text after the bullet and says where it stopped.
    indent, body, trailing, eol = _layout(line)
    bullet, rest = _bullet(body)
    kind = _kind(rest)
    confidence, confidence_text, pos = _confidence(rest, len(kind), kind)
    lead, pos = _lead_entities(rest, pos)
    content = _statement(rest, pos, bullet)
    return Fact(
        kind=kind,
        content=content,
        entities=_entities(lead, content),
        confidence=confidence,
        line=lineno,
        bullet=bullet,
        lead_entities=tuple(lead),
        confidence_text=confidence_text,
        indent=indent,
        trailing=trailing,
        eol=eol or "",
    )


def _layout(line: str) -> tuple[str, str, str, str]:
    """(indent, body, trailing blanks, line ending) of a fact line."""
    eol = next((end for end in ("\r\n", "\n", "\r") if line.endswith(end)), "")
    body = line[: len(line) - len(eol)]
    stripped = body.rstrip(" \t")
    trailing, body = body[len(stripped) :], stripped
    stripped = body.lstrip(" \t")
    indent, body = body[: len(body) - len(stripped)], stripped
    if "\n" in body or "\r" in body:
        raise _Malformed("a fact is a single line; write one fact per line")
    return indent, body, trailing, eol


def _bullet(body: str) -> tuple[str, str]:
    """The bullet and the text after its one space."""
    if not body or body[0] not in BULLETS:
        raise _Malformed(f'a fact starts with "- ", got {_quote(body)}')
    bullet, rest = body[0], body[1:]
    if not rest:
        raise _Malformed('empty bullet: write "- W @Entity: statement" or remove the line')
    if rest[0] != " ":
        raise _Malformed(f'expected a space after "{bullet}", got {_quote(body)}')
    rest = rest[1:]
    if rest[:1] in (" ", "\t"):
        raise _Malformed(f'expected one space after "{bullet}", got {_quote(body)}')
    if _TASK_BOX.match(rest):
        raise _Malformed(
            f"task boxes are not facts: move {_quote(body)} out of the Retain section, "
            'or state it as a fact ("- W @Entity: statement")'
        )
    return bullet, rest


def _kind(rest: str) -> str:
    token = re.match(r"[^\s(:@]*", rest).group()  # type: ignore[union-attr]
    if token not in KINDS:
        if token.upper() in KINDS:
            raise _Malformed(f'kinds are upper-case: write "{token.upper()}", got "{token}"')
        raise _Malformed(
            f"unknown kind {_quote(token)}: expected W (world), B (experience), O (opinion) "
            'or S (observation), as in "- W @Entity: statement"'
        )
    return token


def _confidence(rest: str, pos: int, kind: str) -> tuple[float | None, str | None, int]:
    """An opinion's ``(c=0.9)`` after its kind: (value, as written, where it ends)."""
    if rest[pos : pos + 1] != "(":
        return None, None, pos
    close = rest.find(")", pos)
    got = rest[: close + 1] if close != -1 else rest[: pos + 12]
    if kind != "O":
        paren = got[pos:]
        raise _Malformed(
            f'only opinions carry a confidence: write "O{paren}" or drop {_quote(paren)}'
        )
    if close == -1:
        raise _Malformed(f'expected "O(c=0.0–1.0)", got {_quote(got)}')
    inner = rest[pos + 1 : close]
    ok = _CONFIDENCE.fullmatch(inner)
    if ok and float(ok.group(1)) <= 1:
        return float(ok.group(1)), ok.group(1), close + 1
    number = _NUMBER.fullmatch(inner)
    if number is None:
        raise _Malformed(f'expected "O(c=0.0–1.0)", got {_quote(got)}')
    value = float(number.group(1))
    if not 0 <= value <= 1:
        raise _Malformed(f"confidence must be within 0.0–1.0, got {_quote(got)}")
    raise _Malformed(
        f'expected "O(c=0.0–1.0)", got {_quote(got)}: write "O(c={_format_number(value)})"'
    )


def _lead_entities(rest: str, pos: int) -> tuple[list[str], int]:
    """The `` @Entity`` mentions before the colon, and where they end."""
    lead: list[str] = []
    while True:
        if rest[pos : pos + 1] == "@":
            raise _Malformed(f"expected a space before {_quote(rest[pos : pos + 20])}")
        if rest[pos : pos + 2] != " @":
            return lead, pos
        end = _scan_slug(rest, pos + 2)
        if end == pos + 2:
            raise _Malformed(
                f"invalid entity {_quote(rest[pos + 1 : pos + 12])}: an entity is @ followed by "
                'letters, digits, "_", "-" or "." (not at the end), e.g. "@Peter" or "@api.v2"'
            )
        lead.append(rest[pos + 2 : end])
        pos = end


def _statement(rest: str, pos: int, bullet: str) -> str:
    """The statement after ``: ``."""
    head = rest[:pos]
    if rest[pos : pos + 1] != ":":
        raise _Malformed(
            f'expected ": " after {_quote(head)}, got {_quote(rest[pos:], 24)}: '
            f'write "{bullet} {head}: statement"'
        )
    if pos + 1 == len(rest):
        raise _Malformed(f'empty statement after "{head}:"; write "{bullet} {head}: statement"')
    if rest[pos + 1] != " ":
        raise _Malformed(f'expected a space after "{head}:", got {_quote(rest[pos:], 24)}')
    content = rest[pos + 2 :]
    if content[0] in " \t":
        raise _Malformed(f'expected one space after "{head}:", got {_quote(rest[pos:], 24)}')
    return content


def parse_fact(line: str, lineno: int = 0) -> Fact:
    """Parse one fact line (optionally ending in ``\\n``, ``\\r\\n`` or ``\\r``).

    Raises InputError naming the exact problem and its fix, prefixed with ``line N:`` when
    ``lineno`` is given."""
    try:
        return _parse(line, lineno)
    except _Malformed as exc:
        where = f"line {lineno}: " if lineno else ""
        raise InputError(where + exc.message, hint=GRAMMAR_HINT) from None


def _format_number(value: float) -> str:
    """Shortest decimal that reads back as the same float, never in exponent form (1e-05)."""
    text = format(Decimal(repr(float(value))), "f")
    return text if "." in text else text + ".0"


def format_fact(fact: Fact) -> str:
    """The fact's line: the exact inverse of ``parse_fact``. ``notes`` are not part of it."""
    if fact.kind not in KINDS:
        raise InputError(f"unknown fact kind {_quote(fact.kind)}", hint=GRAMMAR_HINT)
    head = fact.kind
    if fact.confidence is not None:
        if fact.kind != "O":
            raise InputError(f'only opinions carry a confidence, not "{fact.kind}"')
        text = fact.confidence_text
        # A confidence changed with dataclasses.replace must not print the stale literal.
        if text is None or not _CONFIDENCE.fullmatch("c=" + text) or float(text) != fact.confidence:
            text = _format_number(fact.confidence)
        head += f"(c={text})"
    head += "".join(f" @{name}" for name in fact.lead_entities)
    return f"{fact.indent}{fact.bullet} {head}: {fact.content}{fact.trailing}{fact.eol}"


def format_block(fact: Fact, eol: str = "\n") -> str:
    """The fact's line and its notes, as nested bullets under it, without a final line ending:
    what retain writes. ``extract_facts`` reads the notes back into ``Fact.notes``."""
    notes = "".join(f"{eol}{fact.indent}  - {note}" for note in fact.notes)
    return format_fact(replace(fact, eol="")) + notes


def make_fact(
    kind: str,
    content: str,
    entities: Iterable[str] = (),
    confidence: float | None = None,
) -> Fact:
    """A canonical, validated fact for ``clawmem retain``.

    ``kind`` is a letter or a name ("W", "world", "opinion"); ``entities`` become the lead
    mentions (a leading "@" is optional); the statement is stripped and must be one line."""
    letter = kind.strip().upper()
    if letter not in KINDS:
        letter = _KIND_BY_NAME.get(kind.strip().lower(), "")
    if not letter:
        raise InputError(
            f"unknown fact kind {_quote(kind)}: use W (world), B (experience), O (opinion) "
            "or S (observation)"
        )
    text = content.strip()
    if not text:
        raise InputError("a fact needs a statement; got an empty one")
    if len(text.splitlines()) > 1:
        # splitlines also breaks on \v, \f, \x1c-\x1e, \x85, \u2028, \u2029: other tools will too.
        raise InputError(
            f"a fact is a single line; the statement has {len(text.splitlines())} lines",
            hint="retain one fact per line",
        )
    if isinstance(entities, str):
        entities = [entities]
    lead: list[str] = []
    for raw in entities:
        name = raw.strip()
        name = name[1:] if name.startswith("@") else name
        if not is_entity_slug(name):
            raise InputError(
                f"invalid entity {_quote(raw)}: use letters, digits, "
                '"_", "-" and "." (not at the end), e.g. "Peter" or "api.v2"'
            )
        lead.append(name)
    lead = list(dict.fromkeys(lead))
    confidence_text = None
    if confidence is not None:
        if letter != "O":
            raise InputError(
                f'only opinions (O) carry a confidence, not "{letter}"',
                hint="make it an opinion (kind O: `--kind O`), or leave the confidence out",
            )
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            raise InputError(f"confidence must be a number within 0.0–1.0, got {confidence!r}")
        confidence = float(confidence)
        if not 0 <= confidence <= 1:  # also rejects NaN
            raise InputError(f"confidence must be within 0.0–1.0, got {confidence}")
        confidence_text = _format_number(confidence)
    return Fact(
        kind=letter,
        content=text,
        entities=_entities(lead, text),
        confidence=confidence,
        line=0,
        lead_entities=tuple(lead),
        confidence_text=confidence_text,
    )


# --------------------------------------------------------------------------------------------
# Whole documents

_md = None


# The last document parsed and its tokens: reading a file's facts and then its links parses it
# once. Tokens are only read, never changed, so sharing them is safe.
_last: tuple[str, list[Token]] | None = None


def _tokens(lines: list[str]) -> list[Token]:
    """markdown-it tokens, parsed like the chunker parses (same headings, fences, list items).

    markdown-it is imported on first use so that importing clawmem stays fast."""
    global _md, _last
    if _md is None:
        from markdown_it import MarkdownIt

        _md = MarkdownIt("commonmark").enable("table")
    source = "\n".join(lines)
    last = _last
    if last is not None and last[0] == source:
        return last[1]  # the same document again: facts, then its links (sync.parse_file, check)
    tokens = _md.parse(source)
    _last = (source, tokens)
    return tokens


def markdown_tokens(lines: list[str]) -> list[Token]:
    """The Markdown block tokens of ``lines``, from the one parser facts and links share
    (building a parser costs tens of milliseconds, a lot for a pre-commit hook)."""
    return _tokens(lines)


def _split_lines(text: str) -> list[str]:
    # The same line breaks markdown-it counts (\r\n, \r, \n), so token line maps index this list.
    # str.splitlines would also split on \f, \x85, \u2028 … and shift every later line number.
    return split_lines(text)


def markdown_lines(text: str) -> list[str]:
    """``text``'s lines as ``markdown_tokens``' line maps count them."""
    return _split_lines(text)


def _lines_of(lines: list[str]) -> list[str]:
    return [line.rstrip("\r\n") for line in lines]


def _is_retain_heading(tokens: list[Token], i: int) -> bool:
    inline = tokens[i + 1] if i + 1 < len(tokens) else None
    return inline is not None and inline.content.strip().casefold() == "retain"


def _retain_sections(tokens: list[Token], n_lines: int) -> Iterator[tuple[int, int]]:
    """0-based ``[start, end)`` line spans of every Retain section, heading included.

    Only top-level headings count: a "## Retain" inside a list item or a block quote is content."""
    start = level = None
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or tok.map is None:
            continue
        this = int(tok.tag[1])
        if start is not None and level is not None and this <= level:
            yield start, tok.map[0]
            start = level = None
        if start is None and _is_retain_heading(tokens, i):
            start, level = tok.map[0], this
    if start is not None:
        yield start, n_lines


def _retain_items(tokens: list[Token], n_lines: int) -> Iterator[tuple[int, int, bool]]:
    """``(first line, end line, ordered)`` of every top-level list item inside a Retain section."""
    sections = list(_retain_sections(tokens, n_lines))
    if not sections:
        return
    ordered = False
    for tok in tokens:
        if tok.level == 0 and tok.type in ("bullet_list_open", "ordered_list_open"):
            ordered = tok.type == "ordered_list_open"
        elif tok.level == 1 and tok.type == "list_item_open" and tok.map is not None:
            first = tok.map[0]
            if any(start < first < end for start, end in sections):
                yield first, tok.map[1], ordered


_NOTE_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")


def _note(line: str) -> str:
    text = line.strip()
    marker = _NOTE_MARKER.match(text)
    return text[marker.end() :] if marker else text


# The notes clawmem itself writes under a fact: the fact it corrects (``clawmem correct``), the
# line an accepted proposal came from, the source of an import. They say where the fact came
# from, not what it says.
_OWN_NOTE = re.compile(
    r"supersedes \[\[[^\]\n]+\]\]"
    r"|from \S+#L\d+(?:-L\d+)?(?:; promoted by reflect: .*)?"
    r"|imported from \S+"
)


def says_only_the_fact(lines: list[str]) -> bool:
    """Whether a unit whose first line is a fact's says nothing the fact's own unit does not:
    every line after the first is blank or a note clawmem wrote under it. Such a unit would be
    a second copy of the fact, without its kind, people or date, competing with it for a place
    in recall's answer; a note a person wrote under a fact keeps its unit."""
    return all(not line.strip() or _OWN_NOTE.fullmatch(_note(line)) for line in lines[1:])


def fact_items(text: str) -> list[tuple[Fact, int, int]]:
    """Every well-formed fact with its list item's 0-based ``[first, end)`` line span (the bullet,
    its notes, and any blank lines markdown counts into the item): for moving or dropping whole
    items (``clawmem.markdown.merging``)."""
    if "retain" not in text.casefold():
        return []
    lines = _split_lines(text)
    out: list[tuple[Fact, int, int]] = []
    for first, end, ordered in _retain_items(_tokens(lines), len(lines)):
        if ordered:
            continue
        try:
            fact = _parse(lines[first], first + 1)
        except _Malformed:
            continue
        notes = tuple(note for note in map(_note, lines[first + 1 : end]) if note)
        out.append((replace(fact, notes=notes) if notes else fact, first, end))
    return out


def extract_facts(text: str) -> tuple[list[Fact], list[FactProblem]]:
    """All facts of a Markdown document and the malformed fact bullets, with 1-based line numbers.

    Only top-level bullets inside Retain sections are read. Nested bullets and indented
    continuation lines become the parent's ``notes``; blank lines and paragraphs are ignored;
    numbered items and task boxes are reported, because they look like facts that were meant."""
    if "retain" not in text.casefold():  # cheap exit for the many files without a Retain section
        return [], []
    lines = _split_lines(text)
    facts: list[Fact] = []
    problems: list[FactProblem] = []
    for first, end, ordered in _retain_items(_tokens(lines), len(lines)):
        raw = lines[first]
        if ordered:
            problems.append(
                FactProblem(
                    first + 1, raw, 'numbered items are not facts: write "- W @Entity: statement"'
                )
            )
            continue
        try:
            fact = _parse(raw, first + 1)
        except _Malformed as exc:
            problems.append(FactProblem(first + 1, raw, exc.message))
            continue
        notes = tuple(note for note in map(_note, lines[first + 1 : end]) if note)
        facts.append(replace(fact, notes=notes) if notes else fact)
    return facts, problems


def stray_facts(text: str) -> list[FactProblem]:
    """Top-level bullets written as facts (``- W @Peter: …``) below a later heading of a file
    that has a Retain section (``## Lunch`` after ``## Retain``): they are not facts, since only
    a Retain section's bullets are, and nothing else would say so (``clawmem check``)."""
    if "retain" not in text.casefold():
        return []
    lines = _split_lines(text)
    tokens = _tokens(lines)
    sections = list(_retain_sections(tokens, len(lines)))
    if not sections:
        return []
    first_start = sections[0][0]
    out: list[FactProblem] = []
    heading = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map is not None:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            heading = f"{tok.markup} {inline.content.strip() if inline else ''}".strip()
            continue
        if tok.level != 1 or tok.type != "list_item_open" or tok.map is None:
            continue
        first = tok.map[0]
        if first < first_start or any(start < first < end for start, end in sections):
            continue
        try:
            _parse(lines[first], first + 1)
        except _Malformed:
            continue  # an ordinary bullet, not a fact that lost its section
        out.append(
            FactProblem(
                first + 1,
                lines[first],
                f'written as a fact, but under "{heading}", not a Retain section, so it is not '
                'read as a fact: move it under "## Retain"',
            )
        )
    return out


def find_retain_section(lines: list[str]) -> tuple[int, int] | None:
    """0-based ``[start, end)`` of the first Retain section, its heading line included; ``end`` is
    the next heading of the same or a higher level, or ``len(lines)``. ``lines`` may keep or drop
    their line endings. To append a fact, insert at ``retain_insert_index(lines)``."""
    plain = _lines_of(lines)
    if not any("retain" in line.casefold() for line in plain):
        return None
    return next(_retain_sections(_tokens(plain), len(plain)), None)


def count_lines(text: str) -> int:
    """The lines of ``text`` as its facts are numbered (a text ending in a line break has an
    empty last line): the 1-based number of a line appended to it."""
    return len(_split_lines(text))


def ends_in_retain_section(text: str) -> bool:
    """Whether the document's last line belongs to a Retain section, so that a fact appended at
    the end of the file is in it."""
    if "retain" not in text.casefold():
        return False
    plain = _split_lines(text)
    ends = [end for _start, end in _retain_sections(_tokens(plain), len(plain))]
    return bool(ends) and ends[-1] == len(plain)


def retain_insert_index(lines: list[str]) -> int | None:
    """Where a new fact line goes: after the last non-blank line of the first Retain section (so
    the blank line before the next heading stays), or None when there is no Retain section."""
    section = find_retain_section(lines)
    if section is None:
        return None
    start, end = section
    plain = _lines_of(lines)
    while end - 1 > start and not plain[end - 1].strip():
        end -= 1
    return end
