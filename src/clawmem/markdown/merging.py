"""Merging what clawmem owns when git merges two clones: daily logs and generated sections.

Pure text in, text out; the three-way line merge itself is git's (``git merge-file``), passed in
as ``LineMerge`` so these rules can be read and tested without it.

- **A daily log** (``memory/YYYY-MM-DD.md``) is append-only narrative with a ``## Retain``
  section: where both sides added lines at the same place, both are kept (git's *union* merge:
  ours, then theirs), so no line is ever lost and nothing conflicts. Two rules then settle the
  facts: a fact both sides retained is kept once (clawmem's duplicate rule: same kind, statement,
  entities, confidence, notes), and a fact that the union left outside the Retain section (one
  side added a heading after it, the other a fact) is moved back into it.
- **A page with a generated section** (``bank/``: entity pages, opinions, proposals): the text
  a person wrote around the section is merged by the ordinary three-way merge, which may
  conflict like any hand-written text. The section itself never conflicts: a side that did not
  change it takes the other's; when both rewrote it, the union of the two is kept, under a
  marker flagged ``merged`` that the hooks after a merge regenerate from the merged facts
  (``clawmem reflect``). A section someone edited by hand keeps its stale hash, so reflect
  still refuses to overwrite it.
- Anything else: the ordinary three-way merge.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clawmem.markdown.facts import Fact, fact_items, retain_insert_index
from clawmem.markdown.markers import (
    NOTE,
    MarkerError,
    Section,
    begin_marker,
    eol_of,
    find_section,
)
from clawmem.text.timeexpr import date_from_path

# (base, ours, theirs, union) -> (merged text, number of conflicting hunks left in it)
LineMerge = Callable[[str, str, str, bool], tuple[str, int]]

# Lines as the Markdown grammar counts them (\r\n, \r, \n; not str.splitlines' \f, \x85, …), with
# their endings, so that fact_items' line numbers index them.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


# Stands for the generated section while the hand-written text around it is merged.
_PLACEHOLDER = "<!-- clawmem:merge:generated-section -->"
MERGED_FLAG = "merged"


@dataclass(frozen=True)
class Merged:
    text: str
    conflicts: int  # hunks left with conflict markers (only ever in hand-written text)
    how: str  # "log", "page", "plain": which rule merged it
    regenerate: bool = False  # a generated section was rewritten on both sides


def is_daily_log(relpath: str) -> bool:
    parts = relpath.replace("\\", "/").split("/")
    return "memory" in parts[:-1] and date_from_path(relpath) is not None


def merge(relpath: str, base: str, ours: str, theirs: str, line_merge: LineMerge) -> Merged:
    """Merge one file by the rule its path and content call for."""
    if is_daily_log(relpath):
        return merge_log(base, ours, theirs, line_merge)
    return merge_page(base, ours, theirs, line_merge)


def _trivial(base: str, ours: str, theirs: str) -> str | None:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


# ---------------------------------------------------------------------------------- daily logs

_Identity = tuple[str, str, frozenset[str], float | None, tuple[str, ...]]


def _identity(f: Fact) -> _Identity:
    # retain's duplicate rule, plus the notes under the bullet: an item whose notes differ is
    # not the same item, and collapsing it would lose lines.
    return (f.kind, f.content, frozenset(f.entities), f.confidence, f.notes)


def _items(text: str) -> list[tuple[_Identity, int, int]]:
    return [(_identity(f), start, end) for f, start, end in fact_items(text)]


def _wanted(base: int, ours: int, theirs: int) -> int:
    """How many copies of one fact the merge keeps. A side that did not change the count takes
    the other's; both added: the larger (the same fact retained on both sides is one fact);
    both removed: the smaller; otherwise the larger (never lose a fact)."""
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    if ours < base and theirs < base:
        return min(ours, theirs)
    return max(ours, theirs)


def merge_log(base: str, ours: str, theirs: str, line_merge: LineMerge) -> Merged:
    same = _trivial(base, ours, theirs)
    if same is not None:
        return Merged(same, 0, "log")
    text, _ = line_merge(base, ours, theirs, True)
    counts = [Counter(ident for ident, _, _ in _items(t)) for t in (base, ours, theirs)]
    wanted = {
        ident: _wanted(counts[0][ident], counts[1][ident], counts[2][ident])
        for ident in set(counts[1]) | set(counts[2])
    }
    # Each side's own lines for every fact it has, to find (and move) one the union displaced.
    lines_of: dict[_Identity, list[str]] = {}
    for side in (theirs, ours):
        side_lines = _lines(side)
        for ident, start, end in _items(side):
            lines_of[ident] = _trim(side_lines[start:end])
    text = _rescue(text, wanted, lines_of)
    text = _collapse(text, wanted)
    return Merged(text, 0, "log")


def _trim(lines: list[str]) -> list[str]:
    """An item's lines without the blank lines markdown counts into its end."""
    end = len(lines)
    while end > 1 and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def _rescue(text: str, wanted: dict[_Identity, int], lines_of: dict[_Identity, list[str]]) -> str:
    """Move back into the Retain section each fact the union left outside it."""
    have = Counter(ident for ident, _, _ in _items(text))
    missing = [ident for ident, n in wanted.items() if n > have[ident] and ident in lines_of]
    if not missing:
        return text
    lines = _lines(text)
    inside = {i for _, start, end in _items(text) for i in range(start, end)}
    moved: list[list[str]] = []
    for ident in sorted(missing, key=lambda i: _first_index(lines, lines_of[i])):
        item = lines_of[ident]
        for _ in range(wanted[ident] - have[ident]):
            at = _find_outside(lines, item, inside)
            if at is not None:  # the displaced copy goes; the copy added below replaces it
                del lines[at : at + len(item)]
                inside = {i - len(item) if i > at else i for i in inside}
            moved.append(item)
    return _append_to_retain("".join(lines), moved)


def _first_index(lines: list[str], item: list[str]) -> int:
    first = item[0].rstrip("\r\n")
    return next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == first), len(lines))


def _find_outside(lines: list[str], item: list[str], inside: set[int]) -> int | None:
    want = [line.rstrip("\r\n") for line in item]
    for i in range(len(lines) - len(want) + 1):
        if i in inside:
            continue
        if [line.rstrip("\r\n") for line in lines[i : i + len(want)]] == want:
            return i
    return None


def _append_to_retain(text: str, items: list[list[str]]) -> str:
    if not items:
        return text
    eol = eol_of(text)
    body = ["".join(line.rstrip("\r\n") + eol for line in item) for item in items]
    lines = _lines(text)
    at = retain_insert_index(lines)
    if at is None:  # the section itself is gone on both sides: a new one at the end
        prefix = text
        if prefix and not prefix.endswith(("\n", "\r")):
            prefix += eol
        if prefix.strip() and not prefix.endswith(eol * 2):
            prefix += eol
        return prefix + f"## Retain{eol}" + "".join(body)
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += eol
    lines[at:at] = body
    return "".join(lines)


def _collapse(text: str, wanted: dict[_Identity, int]) -> str:
    """Drop the later copies of a fact beyond the number the merge keeps."""
    seen: Counter[_Identity] = Counter()
    drop: list[tuple[int, int]] = []
    lines = _lines(text)
    for ident, start, end in _items(text):
        seen[ident] += 1
        if ident in wanted and seen[ident] > wanted[ident]:
            drop.append((start, start + len(_trim(lines[start:end]))))
    for start, end in reversed(drop):
        del lines[start:end]
    return "".join(lines)


# --------------------------------------------------------------------------- generated sections


def _sections(texts: tuple[str, str, str]) -> tuple[Section | None, ...] | None:
    try:
        return tuple(find_section(t) if t else None for t in texts)
    except MarkerError:
        return None


def merge_page(base: str, ours: str, theirs: str, line_merge: LineMerge) -> Merged:
    same = _trivial(base, ours, theirs)
    if same is not None:
        return Merged(same, 0, "plain")
    found = _sections((base, ours, theirs))
    if found is None or found[1] is None or found[2] is None:
        text, conflicts = line_merge(base, ours, theirs, False)
        return Merged(text, conflicts, "plain")
    sb, so, st = found
    assert so is not None and st is not None

    def hand(text: str, sec: Section | None) -> str:
        if sec is None:
            return text
        return sec.before + _PLACEHOLDER + eol_of(text) + sec.after

    around, conflicts = line_merge(hand(base, sb), hand(ours, so), hand(theirs, st), False)
    section, regenerate = _merge_section(sb, so, st, line_merge)
    placeholder_lines = [
        i for i, line in enumerate(around.splitlines(keepends=True)) if line.strip() == _PLACEHOLDER
    ]
    if len(placeholder_lines) != 1:  # the section's place itself conflicted: merge as text
        text, conflicts = line_merge(base, ours, theirs, False)
        return Merged(text, max(conflicts, 1), "plain")
    lines = around.splitlines(keepends=True)
    lines[placeholder_lines[0]] = section
    return Merged("".join(lines), conflicts, "page", regenerate)


def _whole(sec: Section) -> str:
    return sec.begin + sec.body + sec.end


def _merge_section(
    sb: Section | None, so: Section, st: Section, line_merge: LineMerge
) -> tuple[str, bool]:
    """The merged section's lines (markers included) and whether reflect should rewrite it."""
    base_body = sb.body if sb is not None else None
    if so.body == st.body or st.body == base_body:
        return _whole(so), False
    if so.body == base_body:
        return _whole(st), False
    body, _ = line_merge(base_body or "", so.body, st.body, True)
    eol = eol_of(so.begin)
    end = so.end if so.end.endswith(("\n", "\r")) else so.end + eol
    if so.edited or st.edited:
        # Someone edited it by hand: a begin line whose hash does not match keeps reflect from
        # overwriting the union until a person looks (reflect stops with exit 10).
        begin = so.begin if so.edited else st.begin
        return begin + body + end, False
    return flagged_begin(body) + eol + body + end, True


def flagged_begin(body: str) -> str:
    """A begin marker whose hash matches ``body`` (not hand-edited) and that says the body is the
    union of two clones' sections, stale until reflect rewrites it."""
    return begin_marker(body).replace(f" {NOTE}", f" {MERGED_FLAG} {NOTE}", 1)


def is_merged(section: Section) -> bool:
    """A section ``merge_page`` took the union of, not yet rewritten by reflect."""
    return f" {MERGED_FLAG} (" in section.begin


def merged_sections(root: Path) -> list[str]:
    """The pages under ``bank/`` whose generated section is a merge's union, not yet rewritten."""
    found: list[str] = []
    bank = root / "bank"
    if not bank.is_dir():
        return found
    for path in sorted(bank.rglob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if f" {MERGED_FLAG} (" not in text:
            continue
        try:
            section = find_section(text)
        except MarkerError:
            continue
        if section is not None and is_merged(section):
            found.append(path.relative_to(root).as_posix())
    return found
