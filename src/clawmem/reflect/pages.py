"""What reflect writes, each a pure function of the facts: the status of each fact (a restated
copy, superseded, ended, a step of an opinion), the generated section of an entity page
(``entity_body``), of ``bank/opinions.md`` (``opinions_body``) and of ``bank/proposals.md``
(``proposals_body``), and the lines a run adds to ``MEMORY.md`` (``apply_to_core``). No I/O:
``reflect/pipeline.py`` plans which pages change and writes them. docs/reflect.md describes
the pages and the opinion rule.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from clawmem.markdown.factlog import FactLog, LoggedFact
from clawmem.markdown.kinds import FACTS_SECTION, OPINIONS_SECTION, SECTION_TITLES
from clawmem.markdown.links import format_wikilink
from clawmem.markdown.supersession import KINDS as SUPERSEDABLE
from clawmem.markdown.supersession import (
    OPINION_SHARED_WORDS,
    TOPIC_JACCARD,
    Statement,
    conditions_in,
    explicit_target,
    supersedes,
)
from clawmem.reflect.candidates import JaccardIndex, OverlapIndex, word_rank
from clawmem.reflect.episodes import Recurring, consolidation_marker
from clawmem.reflect.opinions import Opinion
from clawmem.text.topics import jaccard, topic_words

CORE_SECTION = "## Added by clawmem reflect"
MAX_PER_KIND = 60  # older facts of a kind are counted, not listed: recall has them all
RESTATED_JACCARD = 0.6  # W facts this close, on different days, count as one restated fact
COVERED = 0.6  # share of a candidate's words found in one MEMORY.md line: already there
CORE_MIN_CONFIDENCE = 0.8
CORE_MIN_SUPPORT = 3


# --------------------------------------------------------------------------------------------
# What each fact's status is: duplicate, superseded, ended


@dataclass
class FactStatus:
    also: dict[int, list[LoggedFact]] = field(default_factory=dict)  # newest copy -> older copies
    hidden: set[int] = field(default_factory=set)  # older copies of a restated fact
    superseded_by: dict[int, LoggedFact] = field(default_factory=dict)
    ended: dict[int, date] = field(default_factory=dict)
    opinion_of: dict[int, tuple[Opinion, int]] = field(default_factory=dict)  # -> (opinion, step)


def _statement(f: LoggedFact) -> Statement:
    day = f.day.isoformat() if f.day else None
    return Statement(f.kind, day, f.folded_entities, f.words, conditions_in(f.content))


def _superseded(shown: list[LoggedFact]) -> dict[int, LoggedFact]:
    """Each fact the rule (supersession.py) says a later one replaces -> the newest such fact.

    Comparing every fact with every later one cost minutes for a log of 40,000 facts, which a
    clone can commit: each fact is compared only with the facts the rule could let replace it
    (same kind, an entity in common, topic words close enough: candidates.py), newest first,
    and the rule itself still decides, so the pages are the same as comparing every pair."""
    said = {f.order: _statement(f) for f in shown}
    # Only a dated fact of a supersedable kind about some entity can replace or be replaced.
    part = [
        (i, f)
        for i, f in enumerate(shown)
        if f.day is not None and f.kind in SUPERSEDABLE and f.folded_entities
    ]
    rank = word_rank(f.words for _, f in part)
    close = JaccardIndex(TOPIC_JACCARD, rank)  # rule 4
    shared = OverlapIndex(OPINION_SHARED_WORDS, rank)  # rule 4, opinions on the same entities
    for i, f in part:
        for e in f.folded_entities:
            close.add((f.kind, e), f.words, i)
        if f.kind == "O":
            shared.add(f.folded_entities, f.words, i)
    days = [f.day or date.min for f in shown]  # shown is oldest first (FactLog.facts)
    out: dict[int, LoggedFact] = {}
    # Facts saying the same (kind, entities, topic and condition words) have the same newest
    # replacement, whatever their day: found once (a log restating one fact 10,000 times).
    newest: dict[tuple, int | None] = {}
    for _, f in part:
        later = bisect_right(days, f.day or date.min)  # the first fact of a later day (rule 2)
        old = said[f.order]
        key = (old.kind, old.entities, old.words, old.conditions)
        if key not in newest:
            found: set[int] = set()
            for e in old.entities:
                found |= close.query((f.kind, e), old.words, later)
            if f.kind == "O":
                found |= shared.query(old.entities, old.words, later)
            newest[key] = next(
                (j for j in sorted(found, reverse=True) if supersedes(said[shown[j].order], old)),
                None,
            )
        j = newest[key]
        if j is not None and j >= later:
            out[f.order] = shown[j]
    return out


def fact_status(log: FactLog, opinions: list[Opinion]) -> FactStatus:
    st = FactStatus()
    newest: dict[tuple, LoggedFact] = {}
    for f in log.facts:  # oldest first: the last copy seen is the newest
        older = newest.get(f.identity)
        if older is not None:
            # The copies' list moves on to the newest copy, appended in place: copying it at
            # each copy cost time quadratic in the copies (20,000 copies of one line: 0.3 s).
            copies = st.also.pop(older.order, [])
            copies.append(older)
            st.also[f.order] = copies
            st.hidden.add(older.order)
        newest[f.identity] = f
    shown = [f for f in log.facts if f.order not in st.hidden]
    # The reference day for "ended" is the newest fact, not the clock: a page changes only when
    # the log does.
    asof = log.newest_day()
    for f in shown:
        # Only world facts end: a summary's first "until" is rarely the end of what it says.
        end = f.valid_to
        period = end is not None and (f.valid_from is None or f.valid_from < end)
        if f.kind == "W" and asof and end is not None and period and end < asof:
            st.ended[f.order] = end
    st.superseded_by.update(_superseded(shown))
    # Corrections the Markdown states (``supersedes [[path#Lline]]`` under the new fact, written
    # by `clawmem correct`) win over the rule, whatever the kinds: the person said so.
    at = {(f.path, f.fact.line): f for f in shown}
    for g in shown:  # oldest first: the newest correction of a fact is the one kept
        target = explicit_target(g.fact.notes)
        old = at.get(target) if target else None
        if old is not None and old.order != g.order:
            st.superseded_by[old.order] = g
    for op in opinions:
        for i, step in enumerate(op.steps):
            st.opinion_of[step.fact.order] = (op, i)
    return st


# --------------------------------------------------------------------------------------------
# Entity pages


def _day(f: LoggedFact) -> str:
    return f.day.isoformat() if f.day else "undated"


def newest_first(facts: list[LoggedFact]) -> list[LoggedFact]:
    return sorted(facts, key=lambda f: f.sort_key, reverse=True)


def fact_line(f: LoggedFact, st: FactStatus, page: str | None = None) -> str:
    """One fact on an entity page: day, statement, source(s), then what became of it, and a
    link to each other entity it is about (so generated pages join the link graph)."""
    cites = f.cite
    # An accepted proposal's note cites the conversation it was said in (proposal_review.py):
    # the page cites it too, so what was said about someone leads back to where it was said.
    said = [
        n[5:].split(";", 1)[0].strip()
        for n in f.fact.notes
        if n.startswith(("from sessions/", "from memory/"))
    ]
    if said:
        cites += ", said in " + ", ".join(said)
    if f.order in st.also:
        cites += "; also " + ", ".join(o.cite for o in newest_first(st.also[f.order]))
    text = f.content
    notes: list[str] = []
    if f.order in st.superseded_by:
        g = st.superseded_by[f.order]
        text = f"~~{text}~~"
        notes.append(f"superseded by {g.cite} ({_day(g)})")
    elif f.order in st.ended:
        text = f"~~{text}~~"
        notes.append(f"ended {st.ended[f.order].isoformat()}")
    if f.kind == "O":
        if f.confidence is not None:
            text = f"(c={f.fact.confidence_text or f.confidence}) {text}"
        if f.order in st.opinion_of:
            op, i = st.opinion_of[f.order]
            step = op.steps[i]
            if step.effect == "contradicts":
                prev = op.steps[i - 1]
                notes.append(
                    f"contradicts {prev.fact.cite}: confidence {step.before:.2f} → {step.after:.2f}"
                )
            # Earlier statements carry no pointer to the latest one: a new statement would then
            # rewrite every older line, and the diff a person reviews would be mostly noise.
            if f is op.latest and len(op.facts) > 1:
                notes.append(
                    f"latest of {len(op.facts)} statements; opinion now c={op.confidence:.2f}"
                )
    if page is not None:
        others = [e for e in f.entities if e.casefold() != page.casefold()]
        if others:
            # First: what became of the fact stays the end of the line, where readers look.
            notes.insert(0, "also about " + ", ".join(format_wikilink(e) for e in others))
    line = f"- {_day(f)} — {text} ({cites})"
    return line + (" — " + "; ".join(notes) if notes else "")


def entity_body(
    name: str, facts: list[LoggedFact], st: FactStatus, summary: list[str]
) -> list[str]:
    lines = [f"## {FACTS_SECTION}", ""]
    if summary:
        lines += [*summary, ""]
    for kind, title in SECTION_TITLES.items():
        group = newest_first([f for f in facts if f.kind == kind and f.order not in st.hidden])
        if not group:
            continue
        lines.append(f"### {title}")
        lines += [fact_line(f, st, name) for f in group[:MAX_PER_KIND]]
        if len(group) > MAX_PER_KIND:
            rest, until = len(group) - MAX_PER_KIND, _day(group[MAX_PER_KIND])
            lines.append(
                f"- … {rest} older {title.lower()} fact(s): "
                f"`clawmem recall --entity {name} --kind {kind} --until {until}`"
            )
        lines.append("")
    while lines and not lines[-1]:
        lines.pop()
    return lines


def page_title(name: str) -> str:
    # A page titled "Retain" would make its own generated lines look like malformed facts.
    return f"{name} (entity)" if name.casefold() == "retain" else name


# --------------------------------------------------------------------------------------------
# Opinions page


def opinion_heading(op: Opinion) -> str:
    who = " ".join(f"@{e}" for e in op.entities) or "(no entity)"
    text = op.first.content
    if len(text) > 80:
        text = text[:80].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return f"### {who} — {text}"


def opinion_block(op: Opinion) -> list[str]:
    history = " → ".join(f"{s.after:.2f} ({_day(s.fact)})" for s in op.steps)
    lines = [
        opinion_heading(op),
        f"- confidence: {op.confidence:.2f}",
        f"- last_updated: {_day(op.latest)}",
        f"- statement: {op.first.content} ({op.first.cite})",
    ]
    if len(op.facts) > 1:
        lines.append(f"- latest: {op.latest.content} ({op.latest.cite})")
    lines.append(f"- history: {history}")
    lines.append(
        f"- evidence: {len(op.supporting)} supporting, {len(op.contradicting)} contradicting"
    )
    for s in op.steps:
        sign = "−" if s.effect == "contradicts" else "+"
        lines.append(f"  - {sign} {s.fact.cite} ({_day(s.fact)}) — {s.reason}")
    return lines


def opinions_body(opinions: list[Opinion]) -> list[str]:
    lines = [
        f"## {OPINIONS_SECTION}",
        "",
        # For the person reading the file, not memory: a comment, so that recall never offers
        # it as a hit (searchable.py drops comments, as it does MEMORY.md's guidance).
        "<!-- From the `O` facts in the log, oldest opinion first. Confidence moves by at most "
        "0.20 per statement (0.40 for a second in a row going the same way); docs/reflect.md "
        "has the rule. -->",
    ]
    for op in opinions:
        lines += ["", *opinion_block(op)]
    return lines


def opinion_blocks(body: str | None) -> dict[str, str]:
    """The previous opinion blocks, by heading, to tell which opinions changed."""
    out: dict[str, str] = {}
    if not body:
        return out
    current: str | None = None
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.startswith("### "):
            current = line
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    return {k: v.strip() for k, v in out.items()}


CONFIDENCE_LINE = re.compile(r"^- confidence: ([0-9.]+)$", re.M)


# --------------------------------------------------------------------------------------------
# Proposals for MEMORY.md


@dataclass(frozen=True)
class Proposal:
    text: str  # the line for MEMORY.md, without bullet and sources
    sources: tuple[LoggedFact, ...]  # newest first
    why: str

    @property
    def line(self) -> str:
        return f"- {self.text} ({', '.join(f.cite for f in self.sources)})"


class CoreLines:
    """The topic words of each line of MEMORY.md, indexed by word. Every candidate was compared
    with every line: a MEMORY.md of 8,000 lines beside a log of 20,000 facts (both can come with
    a cloned repository) took 9 s of reflect's CPU, and the file may hold 100,000 lines. A line
    can hold a COVERED share of a candidate's words only if it holds one of the candidate's
    rarest words (the prefix filter of candidates.py), so only lines holding one are compared,
    with the same rule: the answer is the same."""

    def __init__(self, lines: list[frozenset[str]]) -> None:
        self.lines = lines
        self.postings: dict[str, list[int]] = {}
        for i, words in enumerate(lines):
            for w in words:
                self.postings.setdefault(w, []).append(i)
        self._known: dict[frozenset[str], bool] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def holds(self, words: frozenset[str]) -> bool:
        """Whether one line holds at least a COVERED share of ``words``."""
        if not words:
            return False
        known = self._known.get(words)
        if known is not None:
            return known
        n = len(words)
        need = next(k for k in range(1, n + 1) if k / n >= COVERED)
        rare = sorted(words, key=lambda w: (len(self.postings.get(w, ())), w))[: n - need + 1]
        seen: set[int] = set()
        found = False
        for w in rare:
            for i in self.postings.get(w, ()):
                if i not in seen:
                    seen.add(i)
                    if len(words & self.lines[i]) / n >= COVERED:
                        found = True
                        break
            if found:
                break
        self._known[words] = found
        return found


def in_core(words: frozenset[str], core_lines: CoreLines) -> bool:
    """Whether one line of MEMORY.md (``core_words``) already holds most of these words."""
    return core_lines.holds(words)


def core_words(core_text: str | None) -> CoreLines:
    return CoreLines([w for w in (topic_words(ln) for ln in (core_text or "").splitlines()) if w])


def restated_groups(facts: list[LoggedFact]) -> list[list[LoggedFact]]:
    """The facts in groups of one restated statement: each fact joins the first group whose
    first fact is about the same entities and says the same (the same statement, or topic words
    at Jaccard ≥ RESTATED_JACCARD), else starts a group. Each fact is compared only with the
    groups it could join (candidates.py): comparing it with every group cost minutes on a log
    of many distinct facts, and the groups are the same."""
    groups: list[list[LoggedFact]] = []
    close = JaccardIndex(RESTATED_JACCARD, word_rank(f.words for f in facts))
    by_identity: dict[tuple, int] = {}
    for f in facts:
        found = close.query(f.folded_entities, f.words)
        same = by_identity.get(f.identity)
        if same is not None:
            found.add(same)
        for k in sorted(found):  # the first group that fits, as a scan of all of them finds
            head = groups[k][0]
            if head.folded_entities == f.folded_entities and (
                head.identity == f.identity or jaccard(head.words, f.words) >= RESTATED_JACCARD
            ):
                groups[k].append(f)
                break
        else:
            close.add(f.folded_entities, f.words, len(groups))
            by_identity.setdefault(f.identity, len(groups))
            groups.append([f])
    return groups


def proposals(
    log: FactLog, opinions: list[Opinion], st: FactStatus, core_text: str | None
) -> list[Proposal]:
    """Durable, repeatedly stated facts that MEMORY.md does not have yet.

    * a world fact stated on two or more days (the same statement, or one close to it about the
      same entities), neither superseded nor ended;
    * an opinion held at c ≥ 0.8 with at least three supporting statements."""
    core = core_words(core_text)

    def covered(facts: list[LoggedFact]) -> bool:
        return any(in_core(topic_words(f.content), core) for f in facts)

    out: list[Proposal] = []
    groups = restated_groups([f for f in log.facts if f.kind == "W" and f.day is not None])
    for g in groups:
        days = sorted({f.day for f in g if f.day})
        newest = newest_first(g)
        top = newest[0]
        if len(days) < 2 or top.order in st.superseded_by or top.order in st.ended:
            continue
        if covered(g):
            continue
        when = ", ".join(d.isoformat() for d in days)
        why = f"world fact stated on {len(days)} days ({when})"
        out.append(Proposal(top.content, tuple(newest), why))
    for op in opinions:
        if op.confidence < CORE_MIN_CONFIDENCE or len(op.supporting) < CORE_MIN_SUPPORT:
            continue
        if covered(op.facts):
            continue
        who = ", ".join(op.entities)
        text = f"{who}: {op.first.content} (c={op.confidence:.2f})" if who else op.first.content
        out.append(
            Proposal(
                text,
                tuple(newest_first(op.facts)),
                f"opinion at c={op.confidence:.2f} with {len(op.supporting)} supporting statements",
            )
        )
    return out


def proposals_body(
    props: Sequence[Proposal | Recurring], consolidated: Sequence[str] = ()
) -> list[str]:
    lines = [
        "## Proposed for MEMORY.md (clawmem reflect)",
        "",
        "Durable, repeatedly stated facts that `MEMORY.md` does not hold yet. Nothing here is "
        "applied until `clawmem reflect --apply`, which adds them under "
        f'"{CORE_SECTION[3:]}"; or copy what you want in your own words.',
        "",
    ]
    if not props:
        lines.append("No pending proposals.")
    for p in props:
        lines.append(f"{p.line} — {p.why}")
    if consolidated:
        lines += ["", consolidation_marker(list(consolidated))]
    return lines


def apply_to_core(core_text: str | None, props: Sequence[Proposal | Recurring]) -> str:
    """MEMORY.md with the proposals appended at its end: under its last section when that is
    "Added by clawmem reflect", else under a new such heading. Everything before is kept byte
    for byte and nothing is ever inserted mid-file, so that the write only appends, in place
    (reflect/pipeline.py): rewriting the file to insert lines above a person's later section lost
    what a program holding MEMORY.md open (an editor, an agent's logger) wrote after it."""
    eol = "\r\n" if core_text and "\r\n" in core_text else "\n"
    new = [p.line + eol for p in props]
    if core_text is None:
        return f"# MEMORY{eol}{eol}{CORE_SECTION}{eol}{eol}" + "".join(new)
    text = core_text
    if text and not text.endswith(("\n", "\r")):
        text += eol
    lines = text.splitlines()
    last = next((ln for ln in reversed(lines) if re.match(r"#{1,2}\s", ln)), None)
    if last is None or last.rstrip() != CORE_SECTION:
        if text.strip() and not text.endswith(eol + eol):
            text += eol
        return text + f"{CORE_SECTION}{eol}{eol}" + "".join(new)
    if lines[-1].rstrip() == CORE_SECTION:  # an empty section: a blank line under the heading
        text += eol
    return text + "".join(new)
