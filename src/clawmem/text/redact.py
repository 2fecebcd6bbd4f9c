"""Credentials in text: recognising them (``retain`` refuses them) and redacting them. Everything
clawmem indexes, caches, writes or prints passes through ``redact`` first: the index (units, the
lexical terms, vectors computed from the redacted text), ``get``, ``recall``, ``context`` and the
MCP tools, and the pages ``reflect`` writes (entity pages, opinions, episodes).

Four sets of rules, all run on every text: ``secret_shapes`` (a token whose form gives it away,
``ghp_…``, a PEM block, ``DB_PASS=…``, ``mysql -p…``, a card number that passes Luhn, an IBAN),
``secret_words`` (a secret said in words: "the wifi password is …", "mật khẩu là …",
"パスワードは …"), ``secret_tables`` (a column or a cell of a table whose header names a secret)
and ``seed_words`` (a wallet's seed words, bare). Each rule names a few lower-case needles; one
Aho-Corasick pass over the text finds them all, and a rule runs only where its needles are (most
text is ordinary talk, and transcripts run to megabytes); the few shapes with no needle are
searched by patterns that start with a literal. Redaction keeps every line break, so line numbers
and citations of the text around a secret do not move. docs/sessions.md lists the rules.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from clawmem.text import secret_shapes, secret_tables, secret_words, seed_words

REDACTED = "[redacted]"
# What str.splitlines breaks a line at ("\r\n" is one break).
LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


@dataclass(frozen=True)
class Found:
    start: int  # the secret's span in the text
    end: int
    kind: str  # what it is, in words: "a GitHub token", "a password said in words"


# How far past its needle one try of a shape reads (``secret_words.REACH``, the one bound for
# every rule).
REACH = secret_words.REACH

_WORDS = -1  # the owner of secret_words' needles in the automaton
_TABLES = -2  # and of secret_tables'


@lru_cache(maxsize=1)
def _automaton() -> Any:  # ahocorasick.Automaton, which has no type information
    import ahocorasick  # here: only a text that needs redacting pays for the import

    owners: dict[str, set[int]] = {}
    for i, shape in enumerate(secret_shapes.SHAPES):
        for n in shape.needles:
            owners.setdefault(n, set()).add(i)
    for n in secret_words.NEEDLES:
        owners.setdefault(n, set()).add(_WORDS)
    for n in secret_tables.NEEDLES:
        owners.setdefault(n, set()).add(_TABLES)
    auto = ahocorasick.Automaton()
    for n, who in owners.items():
        auto.add_word(n, (len(n), frozenset(who)))
    auto.make_automaton()
    return auto


@lru_cache(maxsize=1)
def _no_needle() -> tuple[re.Pattern[str], ...]:
    """Where a rule with no needle may match, from the hints of them all: one pattern per
    literal a hint starts with. A pattern that starts with one literal is searched at the speed
    of a byte scan; one alternation of them all was checked a character at a time, at five times
    the cost. Searched in the text after a "\n", so that a hint that starts a line finds the
    first."""
    by_first: dict[str, list[str]] = {}
    for first, rest in [s.hint for s in secret_shapes.SCANNED] + [
        secret_shapes.DISCORD_HINT,
        *seed_words.HINTS,
    ]:
        by_first.setdefault(first, []).append(rest)
    return tuple(
        re.compile(re.escape(first) + "(?:" + "|".join(rests) + ")")
        for first, rests in by_first.items()
    )


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    # A letter whose lower case is longer ("İ"): keep it, so positions still match the text.
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


# Markdown's emphasis: a run of one to three "_" or "*", or "~~", that opens (after the line's
# start, a space or an opening mark, before a character) and one that closes (after a character,
# before a space or the end, maybe after closing marks: "_…_).", "**Password:** …", "_928843_#";
# or before the "=" of an assignment whose name it emphasises: "**DB_PASS**=…").
# Intraword marks ("snake_case", "DB_PASS", "a*b") are neither, nor one inside a value
# ("r_!V@c…"); a list's "* " opens nothing.
_EMPHASIS_OPENS = re.compile(r"(?<![^\s(\[{\"'>])(?:_{1,3}|\*{1,3}|~~)(?=[^\s_*~])")
_EMPHASIS_CLOSES = re.compile(r"(?<=[^\s_*~])(?:_{1,3}|\*{1,3}|~~)(?=[.,;:!?)\]}\"'<#]*(?:\s|$)|=)")
# Where a paragraph ends, and the emphasis in it: marks pair across the line breaks of one
# paragraph ("_see\nghp_…_"), as Markdown pairs them, never past a blank line or a line that
# starts another block (a list item, a heading, a quote, a table row, a fence): a bold opened
# in one item of a list closed in a later one, and took the marks of a value between.
_BLOCK_ENDS = re.compile(r"\n[ \t]*(?:\r?\n|[-*+>|#]|\d{1,9}[.)]|```|~~~)")
# What may be a secret's value just before a closing mark nothing opened: four or more of a
# token's characters, a digit among them ("4821", "ghp_…"), not a word of prose ("word_").
_VALUE_BEFORE = re.compile(r"(?=[A-Za-z+/=-]*[0-9])[A-Za-z0-9+/=-]{4,}\Z")


def _emphasis_off(text: str) -> tuple[str, str]:
    """``text`` with the marks of Markdown's emphasis that its paragraphs pair ("__DB_PASS=…__",
    "_my PIN is 6364_") read as spaces: the same length, so a secret's span in it is its span in
    ``text``, and the marks themselves are kept. Read as they are, "_" is a word's character:
    the shapes' word boundaries did not hold ("\\bghp_", "\\bDB_PASS") and a value ran into the
    closing marks, and some thirty kinds of secret were left as written (REDACTION_VERSION 7).
    So are "*", "**" and "~~" (9): a bold label, "**Password:** …", "**password**: …", broke
    the assignment it names. One pass over the marks (each closer pairs with the last opener of
    the same run in its paragraph: a token between marks on two lines, "_see\nghp_…_", was left
    as written while the marks were paired on one line only, 10).

    Returned twice: as paired, and with a closing mark that nothing opened read as a space too
    where it ends what may be a value (``_VALUE_BEFORE``: "ghp_…_" after a list item or a blank
    line, a literal "_" to Markdown and a word's character to the token's boundary, 11)."""
    if "_" not in text and "*" not in text and "~" not in text:
        return text, text
    marks = sorted(
        [(m.start(), m.end(), True) for m in _EMPHASIS_OPENS.finditer(text)]
        + [(m.start(), m.end(), False) for m in _EMPHASIS_CLOSES.finditer(text)]
    )
    open_at: dict[str, list[tuple[int, int]]] = {}  # a run ("__", "*") -> the paragraph's openers
    paired: list[tuple[int, int]] = []
    lone: list[tuple[int, int]] = []  # closers nothing opened, after what may be a value
    pos = 0
    for s, e, opens in marks:
        if s < pos:
            continue  # a run read as an opener and as a closer: the first reading counts
        if text.find("\n", pos, s) >= 0 and _BLOCK_ENDS.search(text, pos, s):
            open_at.clear()
        pos = e
        pending = open_at.get(text[s:e])
        if not opens and pending:
            paired += [pending.pop(), (s, e)]
        elif opens:
            open_at.setdefault(text[s:e], []).append((s, e))
        elif _VALUE_BEFORE.search(text, max(0, s - 64), s):
            lone.append((s, e))
    view = _spaced(text, paired)
    return view, _spaced(text, paired + lone) if lone else view


def _spaced(text: str, marks: list[tuple[int, int]]) -> str:
    if not marks:
        return text
    out, at = [], 0
    for s, e in sorted(marks):
        out += [text[at:s], " " * (e - s)]
        at = e
    out.append(text[at:])
    return "".join(out)


def find_secrets(text: str) -> list[Found]:
    """Every credential in ``text``, in the order the rules found them (spans may overlap)."""
    if not text:
        return []
    # Read without the underscores of emphasis; their spans are the text's, less the marks a
    # rule that reads to a clause's end (a passphrase, codes) took as its spaces.
    view, wider = _emphasis_off(text)
    found = _found_in(text) if view is text else _unmarked(text, view, _found_in(view))
    # A closing mark nothing opened ("…ghp_…_" after a list item or a blank line) is a word's
    # character to a shape's boundary: 72 of the soak's 808 planted secrets followed by one were
    # left as written. Read once more with such marks as spaces (only a text that has one), and
    # what that finds besides is a secret too; what the first reading found stays as it was.
    if wider is not view:
        taken = _Spans(found)
        found += [f for f in _unmarked(text, wider, _found_in(wider)) if not taken.overlaps(f)]
    return found


class _Spans:
    """Whether a span overlaps one of the spans found (a bisect: texts have many)."""

    def __init__(self, found: list[Found]) -> None:
        merged: list[list[int]] = []
        for s, e in sorted((f.start, f.end) for f in found):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self.starts = [m[0] for m in merged]
        self.ends = [m[1] for m in merged]

    def overlaps(self, f: Found) -> bool:
        i = bisect.bisect_left(self.starts, f.end) - 1
        return i >= 0 and self.ends[i] > f.start


def _unmarked(text: str, view: str, found: list[Found]) -> list[Found]:
    """``found`` in ``view`` as spans of ``text``: less the marks at either end that a rule
    reading to a clause's end took as its spaces."""
    out = []
    for f in found:
        s, e = f.start, f.end
        while e > s and text[e - 1] in "_*~" and view[e - 1] == " ":
            e -= 1
        while s < e and text[s] in "_*~" and view[s] == " ":
            s += 1
        out.append(f if (s, e) == (f.start, f.end) else Found(s, e, f.kind))
    return out


def _found_in(text: str) -> list[Found]:
    at: dict[int, list[int]] = {}  # rule -> where its needles start
    for end, (length, who) in _automaton().iter(_lower(text)):
        for rule in who:
            at.setdefault(rule, []).append(end - length + 1)
    found: list[Found] = []
    for rule, starts in sorted(at.items()):
        if rule >= 0:
            found += _anchored(secret_shapes.SHAPES[rule], text, starts)
    # The rules with no needle, only where one of them may be (one search, most text fails it).
    after_nl, rare = "\n" + text, False
    for hint in _no_needle():  # a loop, not any(): a generator per text costs more
        if hint.search(after_nl):
            rare = True
            break
    if rare:
        for shape in secret_shapes.SCANNED:
            found += _matches(shape, text, 0, len(text))
        found += [Found(s, e, "a Discord bot token") for s, e in secret_shapes.discord_tokens(text)]
    if found:
        found = _unwrapped(text, found)
    for run in secret_shapes.NUMBER_RUN.finditer(text):
        for shape in secret_shapes.NUMBER_SHAPES:
            lo, hi = max(0, run.start() - shape.back), min(len(text), run.end() + shape.back)
            found += _matches(shape, text, lo, hi)
    if _WORDS in at:
        found += [Found(s.start, s.end, s.kind) for s in secret_words.find_said(text, at[_WORDS])]
    if _TABLES in at:
        cells = secret_tables.find_in_tables(text, at[_TABLES])
        found += [Found(c.start, c.end, c.kind) for c in cells]
    if rare:
        found += [Found(s, e, "seed words") for s, e in seed_words.find_seeds(text)]
    return found


# A line that is only the rest of a long token wrapped by an editor, a terminal or a mail client.
_WRAPPED_REST = re.compile(r"[ \t]*\\?\r?\n[ \t]*([A-Za-z0-9+/=_-]{16,})[ \t]*(?=\r?\n|$)")


def _unwrapped(text: str, found: list[Found]) -> list[Found]:
    """A token of 32 characters or more that ends its line, followed by a line that is only
    more of the same alphabet (with a digit and a letter): the token wrapped onto two lines, and
    both are redacted."""
    out = []
    for f in found:
        m = _WRAPPED_REST.match(text, f.end) if f.end - f.start >= 32 else None
        rest = m.group(1) if m else ""
        if m and any(c.isdigit() for c in rest) and any(c.isalpha() for c in rest):
            f = Found(f.start, m.end(1), f.kind)
        out.append(f)
    return out


def _anchored(shape: secret_shapes.Shape, text: str, needles_at: list[int]) -> list[Found]:
    """The shape's secrets, tried only where they can start: every match holds one of the
    shape's needles, at most ``shape.back`` characters in (searching the whole text for each
    shape whose needle occurs took half of redaction's time). A match its check refuses is tried
    one character on: "note: SECRET_KEY=…" matches first as the assignment "note: …", which is
    not one, and the real one starts inside it. After a match, the next try starts at its value:
    in "password: DB_PASSWORD = hunter2" the value of the first is the name of the second."""
    out: list[Found] = []
    # Positions before ``done`` were tried already, or lie inside a secret found: a position
    # refused for one needle is refused for every later one (its match, if any, ends before), so
    # dense needles ("token: token: …") cost one try per position, not one per needle.
    done = 0
    # Needles before ``whole_to`` lie inside the last secret found, where a match can only find
    # a part of it: a secret that is a whole match (a token, a key block) is a run that any
    # match starting inside it ends with; a bare value (``NAME=value``) is a run in which a
    # name starting more than ``shape.to_value`` before its end has its value inside it too.
    # Tried anyway, each such needle matched to the run's end: "sk-" 30,000 times over, 3,000
    # BEGIN PRIVATE KEY lines with no END, or "aws_secret_key=" 5,000 times over took 6-10 s
    # to redact, and three or four times that for twice the text.
    whole_to = 0
    run_end, ends_at = -1, -1  # a shape with ``run_end``: the run read last, where matches end
    for i in needles_at:
        if i < whole_to:
            continue
        if shape.run_end is not None:
            # Every match in the needle's run ends at one place (read once per run): the
            # window ends there, however far, or the needle starts none.
            if i >= run_end:
                run_end, ends_at = shape.run_end(text, i)
            if ends_at <= i:
                continue
            window = ends_at
        else:
            # A try reads at most REACH characters past its needle (or the shape's ``reach``):
            # a match refused by its check leaves the needles inside it to be tried again, each
            # of which read to the end of the run ("?code=" 15,000 times over, 9,000
            # "?password=": 48 s).
            window = min(len(text), i + (shape.reach or REACH))
        for start in range(max(done, whole_to, i - shape.back), i + 1):
            done = start + 1
            m = shape.pattern.match(text, start, window)
            if m is None or m.end() <= i or (shape.check is not None and not shape.check(m)):
                continue
            if m.end() == window < len(text) and shape.run_end is None:
                # Judged a secret within the window, it is redacted whole: read once more
                # without one (at most once per secret: the needles inside it are skipped).
                m = shape.pattern.match(text, start) or m
            s, e = secret_shapes.secret_span(m)
            if e > s:
                out.append(Found(s, e, shape.kind))
                # A match from a needle inside this one would end where it does (or with the
                # run's matches): a part of it.
                if (s, e) == m.span() or shape.run_end is not None:
                    whole_to = e
                elif shape.to_value >= 0 and m.span("value") == (s, e):
                    whole_to = e - shape.to_value
            done = max(s, start + 1)
            break
    return out


def _matches(shape: secret_shapes.Shape, text: str, lo: int, hi: int) -> list[Found]:
    """The shape's secrets in ``text[lo:hi]`` (a refused match is tried one character on)."""
    out = []
    m = shape.pattern.search(text, lo, hi)
    while m is not None:
        if shape.check is None or shape.check(m):
            s, e = secret_shapes.secret_span(m)
            if e > s:
                out.append(Found(s, e, shape.kind))
            nxt = max(m.end(), m.start() + 1)
        else:
            nxt = m.start() + 1
        m = shape.pattern.search(text, nxt, hi) if nxt < hi else None
    return out


def find_secret(text: str) -> str | None:
    """What kind of credential ``text`` seems to contain, or None."""
    found = find_secrets(text)
    return min(found, key=lambda f: f.start).kind if found else None


# Passes of ``redact`` at most (two are the most a real text has needed).
_MAX_PASSES = 6


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[redacted]`` (newlines kept). Redacting
    twice changes nothing: a pass that found something runs again over its own output, since
    what a cue reads depends on the words between it and its value. In "mật khẩu password
    --password is login" the first cue takes "login"; once that is "[redacted]", the next cue
    reads "--password" as its own value. The request itself is read once: a text with no
    secret is returned after one search, untouched."""
    for _ in range(_MAX_PASSES):
        found = find_secrets(text)
        if not found:
            break
        out = _replaced(text, found)
        if out == text:
            break  # what it found was a redaction already
        text = out
    return text


def _replaced(text: str, found: list[Found]) -> str:
    spans: list[list[int]] = []
    for s, e in sorted((f.start, f.end) for f in found):
        if spans and s <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], e)
        else:
            spans.append([s, e])
    out, pos = [], 0
    for s, e in spans:
        # Keep the line breaks a secret spanned (a PEM block): the lines after it keep their
        # numbers, counted by "\n" (the index) or by str.splitlines (get), which also breaks
        # at U+2028, \x85, \f and the like.
        out += [text[pos:s], REDACTED, *LINE_BREAK.findall(text, s, e)]
        pos = e
    out.append(text[pos:])
    return "".join(out)
