"""Merging what clawmem owns when git merges two clones: daily logs and generated sections.

Pure text in, text out; the three-way line merge itself is git's (``git merge-file``), passed in
as ``LineMerge`` so these rules can be read and tested without it.

- **A daily log** (``memory/YYYY-MM-DD.md``) is append-only narrative with a ``## Retain``
  section: where both sides added lines at the same place, both are kept (git's *union* merge:
  ours, then theirs), so no line is ever lost and nothing conflicts. Two rules then settle the
  facts: a fact both sides retained is kept once (clawmem's duplicate rule: same kind, statement,
  entities, confidence, notes), and a fact that the union left outside the Retain section (one
  side added a heading after it, the other a fact) is moved back into it. A union must never
  bring back a narrative line that one side deleted or rewrote (a scrubbed password) because
  the other changed a line next to it: such a merge conflicts, with git's markers, as plain git
  would.
- **The core** (``MEMORY.md``): hand-written. Where both sides only added lines at the same
  place (the README invites a line at its end), both are kept, ours then theirs; any other
  overlap conflicts as in any merge.
- **A page with a generated section** (``bank/``: entity pages, opinions, proposals): the text
  a person wrote around the section is merged by the ordinary three-way merge, which may
  conflict like any hand-written text. The section itself never conflicts: a side that did not
  change it takes the other's; when both rewrote it, the union of the two is kept, under a
  marker flagged ``merged`` that the hooks after a merge regenerate from the merged facts
  (``clawmem reflect``). A section someone edited by hand keeps its stale hash, so reflect
  still refuses to overwrite it.
- Anything else: the ordinary three-way merge.

Line endings never decide anything: when one side converted the file (CRLF against LF), all
three are merged with ``\n`` and written with the converting side's endings, so a conversion is
not a change of every line (which a union would keep twice).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from clawmem.markdown.facts import Fact, fact_items, retain_insert_index
from clawmem.markdown.lines import lines_with_ends
from clawmem.markdown.markers import (
    NOTE,
    MarkerError,
    Section,
    begin_marker,
    eol_of,
    find_section,
)
from clawmem.markdown.workspace import CORE_FILES
from clawmem.text.timeexpr import date_from_path

# (base, ours, theirs, union) -> (merged text, number of conflicting hunks left in it)
LineMerge = Callable[[str, str, str, bool], tuple[str, int]]
# (base, ours, theirs) -> the hunks a plain merge leaves conflicting: (base's, ours', theirs'
# lines), each line without its ending.
Hunk = tuple[list[str], list[str], list[str]]
ConflictHunks = Callable[[str, str, str], list[Hunk]]

# Lines as the Markdown grammar counts them (\r\n, \r, \n; not str.splitlines' \f, \x85, …), with
# their endings, so that fact_items' line numbers index them.
_lines = lines_with_ends


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


def is_core(relpath: str) -> bool:
    return relpath.replace("\\", "/").rsplit("/", 1)[-1] in CORE_FILES


def owns(relpath: str) -> bool:
    """Whether clawmem's merge rules are for this file: Markdown in a ``memory/`` or ``bank/``
    folder (at any depth: a workspace may be a folder of the repository) or ``MEMORY.md``. A
    repository's ``.gitattributes`` names the files the driver is given, and a cloned one can
    name any (``*.py merge=clawmem``): the rest get git's own merge, never the forgotten list's
    blanking (its committed list blanked a line of the user's source code in a merge)."""
    parts = relpath.replace("\\", "/").split("/")
    if parts[-1] in CORE_FILES:
        return True
    return parts[-1].lower().endswith(".md") and any(p in ("memory", "bank") for p in parts[:-1])


def merge(
    relpath: str,
    base: str,
    ours: str,
    theirs: str,
    line_merge: LineMerge,
    hunks: ConflictHunks,
) -> Merged:
    """Merge one file by the rule its path and content call for."""
    eol = _converted_eol(base, ours, theirs)
    if eol is not None:
        lf = [t.replace("\r\n", "\n") for t in (base, ours, theirs)]
        m = merge(relpath, lf[0], lf[1], lf[2], line_merge, hunks)
        return replace(m, text=m.text.replace("\n", eol))
    if is_daily_log(relpath):
        return merge_log(base, ours, theirs, line_merge, hunks)
    if is_core(relpath):
        return merge_core(base, ours, theirs, line_merge, hunks)
    return merge_page(base, ours, theirs, line_merge)


def _converted_eol(base: str, ours: str, theirs: str) -> str | None:
    """The line ending to write when the three disagree on it (one side converted the file):
    the converting side's; None when they agree."""
    have = [eol_of(t) if t else None for t in (base, ours, theirs)]
    if len({e for e in have if e is not None}) < 2:
        return None
    b, o, t = have
    if o is not None and o != b:
        return o
    return t if t is not None else o


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


def merge_log(
    base: str, ours: str, theirs: str, line_merge: LineMerge, hunks: ConflictHunks
) -> Merged:
    same = _trivial(base, ours, theirs)
    if same is not None:
        return Merged(same, 0, "log")
    if _brings_back(base, hunks(base, ours, theirs)):
        text, conflicts = line_merge(base, ours, theirs, False)
        return Merged(text, max(conflicts, 1), "log")
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


def _brings_back(base: str, found: list[Hunk]) -> bool:
    """Whether a union of these hunks would bring back a narrative line of the base that one
    side deleted or rewrote while the other kept it (the fact rules settle facts: a fact one side
    changed is counted, not brought back)."""
    if not found:
        return False
    lines = _lines(base)
    in_facts = {
        lines[i].rstrip("\r\n") for _, start, end in _items(base) for i in range(start, end)
    }
    for old, ours, theirs in found:
        for line in old:
            if line.strip() and line not in in_facts and (line in ours) != (line in theirs):
                return True
    return False


# ------------------------------------------------------------------------------------ the core


def merge_core(
    base: str, ours: str, theirs: str, line_merge: LineMerge, hunks: ConflictHunks
) -> Merged:
    """Both sides only added lines where they overlap: both kept (ours, then theirs). Otherwise
    git's merge, conflicts and all: the core is a person's text."""
    same = _trivial(base, ours, theirs)
    if same is not None:
        return Merged(same, 0, "core")
    found = hunks(base, ours, theirs)
    only_added = all(
        line in ours_lines and line in theirs_lines
        for old, ours_lines, theirs_lines in found
        for line in old
        if line.strip()
    )
    text, conflicts = line_merge(base, ours, theirs, bool(found) and only_added)
    return Merged(text, conflicts, "core")


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
    body = union_by_heading(base_body or "", so.body, st.body, line_merge)
    eol = eol_of(so.begin)
    end = so.end if so.end.endswith(("\n", "\r")) else so.end + eol
    if so.edited or st.edited:
        # Someone edited it by hand: a begin line whose hash does not match keeps reflect from
        # overwriting the union until a person looks (reflect stops with exit 10).
        begin = so.begin if so.edited else st.begin
        return begin + body + end, False
    return flagged_begin(body) + eol + body + end, True


def _blocks(body: str) -> tuple[str, dict[str, str]] | None:
    """(the lines before the first ``### `` heading, {heading line: its block}), each block's
    trailing blank lines left out; None when a heading repeats (the blocks cannot be told apart)."""
    lines = _lines(body)
    first = next((i for i, line in enumerate(lines) if line.startswith("### ")), len(lines))
    blocks: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines[first:]:
        if line.startswith("### "):
            head = line.rstrip("\r\n")
            if head in blocks:
                return None
            current = blocks[head] = [line]
        else:
            current.append(line)
    return "".join(_trim(lines[:first])), {h: "".join(_trim(b)) for h, b in blocks.items()}


def union_by_heading(base: str, ours: str, theirs: str, line_merge: LineMerge) -> str:
    """Two clones' rewrites of one generated section, kept together heading by heading: each
    ``### `` block (a kind of fact on an entity page, an opinion on the opinions page) is the
    union of its two sides, so no line lands under another block's heading and no heading is
    there twice. A block one side dropped and the other left as it was is dropped; new blocks
    keep their side's place. The union is stale all the same (citations point at each side's own
    log): the hooks after the merge rewrite it from the merged facts."""
    parts = [_blocks(t) for t in (base, ours, theirs)]
    if parts[0] is None or parts[1] is None or parts[2] is None:
        return line_merge(base, ours, theirs, True)[0]
    (pre_b, b), (pre_o, o), (pre_t, t) = parts[0], parts[1], parts[2]
    eol = eol_of(ours)

    def union(x: str, y: str, z: str) -> str:
        same = _trivial(x, y, z)
        return same if same is not None else line_merge(x, y, z, True)[0]

    order = list(o)
    for i, head in enumerate(t):  # theirs' new blocks go after the block before them in theirs
        if head not in o:
            before = [h for h in list(t)[:i] if h in order]
            order.insert(order.index(before[-1]) + 1 if before else 0, head)
    blocks = []
    for head in order:
        if head in o and head in t:
            blocks.append(union(b.get(head, ""), o[head], t[head]))
        elif head not in b or b[head] != (o.get(head) or t.get(head)):
            blocks.append(o.get(head) or t[head])  # new, or changed where the other dropped it
    chunks = [c for c in (union(pre_b, pre_o, pre_t), *blocks) if c.strip()]
    return "".join(_joined(chunks, eol))


def _joined(chunks: list[str], eol: str) -> list[str]:
    """The chunks with one blank line between each two."""
    out = []
    for i, chunk in enumerate(chunks):
        if i:
            out.append(eol)
        out.append(chunk if chunk.endswith(("\n", "\r")) else chunk + eol)
    return out


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
