"""``clawmem reflect``: turn the stream of Retain facts into pages a person can review.

One run, under the workspace's write lock:

1. read every fact from the Markdown (``factlog``), as known on ``today``;
2. plan, without writing anything: the generated section of each entity page
   (``bank/entities/<Entity>.md``), of ``bank/opinions.md`` (``opinions``) and of
   ``bank/proposals.md``; with ``apply``, the lines added to ``MEMORY.md``;
3. stop if a generated section was edited by hand since it was written (``ReflectConflict``,
   nothing written) unless forced;
4. write the files that changed, each atomically, then sync the index under the same lock.

Every generated section is a pure function of the facts (dates in it come from the facts, never
the clock), so a second run with no new facts rewrites nothing, byte for byte. A page changes when
its facts changed since the last run; ``since`` narrows the entity pages to those with facts
recorded on or after that day. docs/reflect.md describes the pages and the opinion rule.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.errors import InputError, ReflectConflict, StoreError, WorkspaceError
from clawmem.markdown.factlog import FactLog, LoggedFact, collect_facts, read_text
from clawmem.markdown.kinds import SECTION_TITLES
from clawmem.markdown.links import format_wikilink
from clawmem.markdown.markers import OFF, MarkerError, find_section, is_off, splice
from clawmem.markdown.supersession import KINDS as SUPERSEDABLE
from clawmem.markdown.supersession import (
    Statement,
    conditions_in,
    explicit_target,
    supersedes,
)
from clawmem.markdown.workspace import (
    CORE_FILES,
    FileEntry,
    entity_page_path,
    is_entity_page,
    writable_path,
)
from clawmem.reflect.episodes import (
    Episode,
    Recurring,
    consolidate,
    consolidated_names,
    consolidation_marker,
    episode_body,
)
from clawmem.reflect.opinions import Opinion, cluster
from clawmem.reflect.retention import Retention, apply_retention
from clawmem.reflect.retention import cutoff as retention_cutoff
from clawmem.text.topics import jaccard, topic_words
from clawmem.transcripts import registry

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer
    from clawmem.markdown.workspace import Scan
    from clawmem.reflect.fact_proposals import Proposal as FactProposal

OPINIONS = "bank/opinions.md"
PROPOSALS = "bank/proposals.md"
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


def fact_status(log: FactLog, opinions: list[Opinion]) -> FactStatus:
    st = FactStatus()
    newest: dict[tuple, LoggedFact] = {}
    for f in log.facts:  # oldest first: the last copy seen is the newest
        older = newest.get(f.identity)
        if older is not None:
            st.also.setdefault(f.order, [*st.also.pop(older.order, []), older])
            st.hidden.add(older.order)
        newest[f.identity] = f
    shown = [f for f in log.facts if f.order not in st.hidden]
    # The reference day for "ended" is the newest fact, not the clock: a page changes only when
    # the log does.
    asof = log.newest_day()
    said = {f.order: _statement(f) for f in shown}
    for i, f in enumerate(shown):
        # Only world facts end: a summary's first "until" is rarely the end of what it says.
        end = f.valid_to
        period = end is not None and (f.valid_from is None or f.valid_from < end)
        if f.kind == "W" and asof and end is not None and period and end < asof:
            st.ended[f.order] = end
        if f.day is None or f.kind not in SUPERSEDABLE:
            continue
        for g in reversed(shown[i + 1 :]):  # newest first
            if supersedes(said[g.order], said[f.order]):
                st.superseded_by[f.order] = g
                break
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


def _newest_first(facts: list[LoggedFact]) -> list[LoggedFact]:
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
        cites += "; also " + ", ".join(o.cite for o in _newest_first(st.also[f.order]))
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
    lines = ["## Facts from the log", ""]
    if summary:
        lines += [*summary, ""]
    for kind, title in SECTION_TITLES.items():
        group = _newest_first([f for f in facts if f.kind == kind and f.order not in st.hidden])
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


def _title(name: str) -> str:
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
        "## Opinions tracked by clawmem reflect",
        "",
        "From the `O` facts in the log, oldest opinion first. Confidence moves by at most 0.20 per "
        "statement (0.40 for a second in a row going the same way); docs/reflect.md has the rule.",
    ]
    for op in opinions:
        lines += ["", *opinion_block(op)]
    return lines


def _blocks(body: str | None) -> dict[str, str]:
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


_CONF = re.compile(r"^- confidence: ([0-9.]+)$", re.M)


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


def _covered(words: frozenset[str], core_lines: list[frozenset[str]]) -> bool:
    return bool(words) and any(len(words & c) / len(words) >= COVERED for c in core_lines)


def core_words(core_text: str | None) -> list[frozenset[str]]:
    return [w for w in (topic_words(ln) for ln in (core_text or "").splitlines()) if w]


def proposals(
    log: FactLog, opinions: list[Opinion], st: FactStatus, core_text: str | None
) -> list[Proposal]:
    """Durable, repeatedly stated facts that MEMORY.md does not have yet.

    * a world fact stated on two or more days (the same statement, or one close to it about the
      same entities), neither superseded nor ended;
    * an opinion held at c ≥ 0.8 with at least three supporting statements."""
    core = core_words(core_text)

    def covered(facts: list[LoggedFact]) -> bool:
        return any(_covered(topic_words(f.content), core) for f in facts)

    out: list[Proposal] = []
    groups: list[list[LoggedFact]] = []
    for f in log.facts:
        if f.kind != "W" or f.day is None:
            continue
        for g in groups:
            head = g[0]
            if head.folded_entities == f.folded_entities and (
                head.identity == f.identity or jaccard(head.words, f.words) >= RESTATED_JACCARD
            ):
                g.append(f)
                break
        else:
            groups.append([f])
    for g in groups:
        days = sorted({f.day for f in g if f.day})
        newest = _newest_first(g)
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
                tuple(_newest_first(op.facts)),
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
    """MEMORY.md with the proposals added at the end of its "Added by clawmem reflect" section
    (created at the end of the file when missing). Everything else is kept byte for byte."""
    eol = "\r\n" if core_text and "\r\n" in core_text else "\n"
    new = [p.line for p in props]
    if core_text is None:
        return f"# MEMORY{eol}{eol}{CORE_SECTION}{eol}{eol}" + "".join(x + eol for x in new)
    lines = core_text.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if ln.rstrip("\r\n") == CORE_SECTION), None)
    if at is None:
        text = core_text
        if text and not text.endswith(("\n", "\r")):
            text += eol
        if text.strip() and not text.endswith(eol + eol):
            text += eol
        return text + f"{CORE_SECTION}{eol}{eol}" + "".join(x + eol for x in new)
    end = next(
        (i for i in range(at + 1, len(lines)) if re.match(r"#{1,2}\s", lines[i])), len(lines)
    )
    insert = end
    while insert > at + 1 and not lines[insert - 1].strip():
        insert -= 1
    if insert > 0 and not lines[insert - 1].endswith(("\n", "\r")):
        lines[insert - 1] += eol
    if insert == at + 1:  # an empty section: keep a blank line under the heading
        new = ["", *new]
    return "".join(lines[:insert] + [x + eol for x in new] + lines[insert:])


# --------------------------------------------------------------------------------------------
# The plan


@dataclass
class FileChange:
    path: str  # workspace-relative
    role: str  # "entity" | "opinions" | "proposals" | "core" | "episode"
    old: str | None
    new: str
    entity: str | None = None
    new_facts: int = 0  # sources on the new section that the old one did not cite

    @property
    def status(self) -> str:
        if self.old is None:
            return "created"
        return "unchanged" if self.old == self.new else "updated"

    def diff(self) -> str:
        from clawmem.text.redact import redact  # here: only a diff that is shown needs it

        # What reflect writes is redacted already; the lines around it are the user's, shown
        # as context, and what is shown is redacted (both sides alike: the same hunks).
        old = redact(self.old or "").splitlines(keepends=True)
        new = redact(self.new).splitlines(keepends=True)
        lines = difflib.unified_diff(
            old, new, "/dev/null" if self.old is None else f"a/{self.path}", f"b/{self.path}"
        )
        missing = "\n\\ No newline at end of file\n"
        return "".join(x if x.endswith("\n") else x + missing for x in lines)


@dataclass
class OpinionReport:
    opinion: Opinion
    heading: str
    changed: bool
    previous: float | None

    def to_dict(self) -> dict:
        op = self.opinion
        return {
            "heading": self.heading[4:],
            "entities": list(op.entities),
            "statement": op.first.content,
            "source": op.first.cite,
            "latest": op.latest.content,
            "latest_source": op.latest.cite,
            "confidence": op.confidence,
            "previous_confidence": self.previous,
            "changed": self.changed,
            "last_updated": op.latest.day.isoformat() if op.latest.day else None,
            "supporting": [s.fact.cite for s in op.supporting],
            "contradicting": [s.fact.cite for s in op.contradicting],
            "steps": [
                {
                    "source": s.fact.cite,
                    "day": s.fact.day.isoformat() if s.fact.day else None,
                    "effect": s.effect,
                    "stated": s.stated,
                    "before": s.before,
                    "after": s.after,
                    "joined": s.joined,
                    "reason": s.reason,
                }
                for s in op.steps
            ],
        }


@dataclass
class ReflectResult:
    changes: list[FileChange]
    opinions: list[OpinionReport]
    proposals: list[Proposal | Recurring]
    applied: list[Proposal | Recurring]
    warnings: list[str]
    facts: int
    dry_run: bool
    seconds: float = 0.0
    index_synced: bool = False
    retention: Retention = field(default_factory=Retention)  # episode pages aged out
    fact_proposals: int = 0  # new in memory/proposals/ (proposal_review.py)
    promoted: list[dict] = field(default_factory=list)  # kept by the promotion rule, with why

    def written(self, role: str | None = None) -> list[FileChange]:
        return [c for c in self.changes if c.status != "unchanged" and role in (None, c.role)]

    def diff(self) -> str:
        return "".join(c.diff() for c in self.written())

    def summary_line(self) -> str:
        pages = self.written("entity")
        created = sum(1 for c in pages if c.status == "created")
        changed = sum(1 for o in self.opinions if o.changed)
        n = len(self.proposals)
        episodes = len(self.written("episode"))
        text = (
            f"{len(pages)} entity page{'s' if len(pages) != 1 else ''} "
            f"{'would be ' if self.dry_run else ''}updated"
            + (f" ({created} new)" if created else "")
            + f", {changed} opinion{'s' if changed != 1 else ''} changed"
            + f", {n} proposal{'s' if n != 1 else ''}"
            + (f", {episodes} episode page{'s' if episodes != 1 else ''}" if episodes else "")
        )
        if self.applied:
            verb = "to apply to" if self.dry_run else "applied to"
            text += f" ({len(self.applied)} {verb} MEMORY.md)"
        head = "clawmem reflect (dry run)" if self.dry_run else "clawmem reflect"
        if self.fact_proposals:  # its own clause: the pages' summary reads as it always did
            text += f"; {self.fact_proposals} fact(s) proposed for review (clawmem proposals list)"
        if self.promoted:
            text += f"; {len(self.promoted)} promoted by the promotion rule"
        return f"{head}: {text}; {self.seconds:.1f} s"

    def to_dict(self) -> dict:
        data = {
            "dry_run": self.dry_run,
            "facts": self.facts,
            "seconds": round(self.seconds, 3),
            "files": [
                {
                    "path": c.path,
                    "role": c.role,
                    "status": c.status,
                    "entity": c.entity,
                    "new_facts": c.new_facts,
                }
                for c in self.changes
            ],
            "entity_pages_updated": len(self.written("entity")),
            "episode_pages_written": len(self.written("episode")),
            "episodes_aged_out": self.retention.to_dict(),
            "opinions_changed": sum(1 for o in self.opinions if o.changed),
            "opinions": [o.to_dict() for o in self.opinions],
            "proposals": [
                {
                    "text": p.text,
                    "line": p.line,
                    "sources": [f.cite for f in p.sources],
                    "why": p.why,
                }
                for p in self.proposals
            ],
            "applied": [p.line for p in self.applied],
            "index_synced": self.index_synced,
            "fact_proposals": self.fact_proposals,
            "promoted": self.promoted,
            "warnings": self.warnings,
        }
        if self.dry_run:
            data["diff"] = self.diff()
        return data


_CITE = re.compile(r"[\w./-]+\.md#L\d+")


def _new_citations(old_body: str | None, new_body: list[str]) -> int:
    old = set(_CITE.findall(old_body or ""))
    return len(set(_CITE.findall("\n".join(new_body))) - old)


Summarize = Callable[[str, list[LoggedFact]], str]


def summary_digest(facts: list[LoggedFact]) -> str:
    """What a summary was written from: it is kept for as long as these stay the same."""
    text = "\n".join(f"{f.cite} {f.content}" for f in facts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _summary(
    name: str,
    facts: list[LoggedFact],
    st: FactStatus,
    old_body: str | None,
    summarize: Summarize | None,
    model: str,
) -> list[str]:
    """The optional one-paragraph summary: kept from the old section while its inputs are the
    same, written by ``summarize`` (an LLM) when they changed, dropped when stale and no LLM."""
    current = [
        f
        for f in _newest_first(facts)
        if f.order not in st.hidden
        and f.order not in st.superseded_by
        and f.order not in st.ended
        and not (f.order in st.opinion_of and st.opinion_of[f.order][0].latest is not f)
    ][:12]
    if not current:
        return []
    tag = f"<!-- clawmem:summary inputs={summary_digest(current)} -->"
    if old_body:
        old = old_body.replace("\r\n", "\n").split("\n")
        if tag in old:
            i = old.index(tag)
            if i + 1 < len(old) and old[i + 1].startswith("**Summary**"):
                return [tag, old[i + 1]]
    if summarize is None:
        return []
    text = summarize(name, current)
    if not text:
        return []
    cites = ", ".join(f.cite for f in current)
    return [tag, f"**Summary** ({model}, from the facts below): {text} ({cites})"]


def plan_reflect(
    root: Path,
    log: FactLog,
    *,
    existing_pages: dict[str, str],
    since: date | None = None,
    apply: bool = False,
    force: bool = False,
    summarize: Summarize | None = None,
    model: str = "",
    episodes: Sequence[Episode] = (),
) -> tuple[ReflectResult, list[str]]:
    """Every file reflect would write, and the conflicts that stop it. Reads files, writes none.

    ``existing_pages``: folded entity name -> relpath of its page, for pages already there.
    ``episodes``: finished conversations (episodes.py), each given its page."""
    opinions = cluster(log.facts)
    st = fact_status(log, opinions)
    plan = _Plan(root, force)

    # Entity pages
    for rel, name, facts in _entity_pages(log, existing_pages, since):

        def body_for(
            old_body: str | None, name: str = name, facts: list[LoggedFact] = facts
        ) -> list[str]:
            summary = _summary(name, facts, st, old_body, summarize, model)
            return entity_body(name, facts, st, summary)

        plan.page(rel, "entity", body_for, _title(name), entity=name)

    # Opinions
    reports, old_opinions = _opinion_reports(plan.read(OPINIONS), opinions)
    if opinions or old_opinions:  # no O facts: leave a person's page alone
        plan.page(OPINIONS, "opinions", lambda _old: opinions_body(opinions), "Opinions")

    # Episodes: one page per finished conversation
    for ep in episodes:
        plan.page(ep.page, "episode", lambda _old, ep=ep: episode_body(ep), ep.title)

    # What recurs across episodes, once enough are new (the consolidation is recorded in the
    # proposals page, so "new since the last run" survives between runs).
    try:
        old_props = find_section(plan.read(PROPOSALS) or "")
    except MarkerError:
        old_props = None  # plan.page reports it
    consolidated, recurring = consolidate(
        list(episodes), consolidated_names(old_props.body if old_props else None)
    )

    def uncovered(core_text: str | None) -> list[Recurring]:
        core = core_words(core_text)
        return [r for r in recurring if not _covered(topic_words(r.text), core)]

    # Proposals, and MEMORY.md with --apply
    core_rel = next((n for n in CORE_FILES if (root / n).is_file()), CORE_FILES[0])
    core_old = plan.read(core_rel)
    props: list[Proposal | Recurring] = [
        *proposals(log, opinions, st, core_old),
        *uncovered(core_old),
    ]
    applied: list[Proposal | Recurring] = []
    if apply and props:
        core_new = apply_to_core(core_old, props)
        plan.changes.append(FileChange(core_rel, "core", core_old, core_new))
        applied = props
        props = [*proposals(log, opinions, st, core_new), *uncovered(core_new)]
    if props or (root / PROPOSALS).is_file() or applied or consolidated:
        plan.page(
            PROPOSALS,
            "proposals",
            lambda _old: proposals_body(props, consolidated),
            "Proposals",
        )

    result = ReflectResult(
        plan.changes, reports, props, applied, plan.warnings, len(log.facts), False
    )
    return result, plan.conflicts


class _Plan:
    """The files one reflect run would write, the warnings and the conflicts that stop it."""

    def __init__(self, root: Path, force: bool) -> None:
        self.root, self.force = root, force
        self.changes: list[FileChange] = []
        self.warnings: list[str] = []
        self.conflicts: list[str] = []

    def read(self, rel: str) -> str | None:
        p = writable_path(self.root, rel)  # never read or write through a link out of it
        if not p.is_file():
            return None
        if read_text(p) is None:
            raise InputError(
                f"{rel}: not valid UTF-8; reflect will not rewrite it",
                hint="re-save the file as UTF-8",
            )
        return p.read_bytes().decode("utf-8")  # keep a BOM if there is one

    def page(
        self,
        rel: str,
        role: str,
        body_for: Callable[..., list[str]],  # (the old body or None) -> the new one
        title: str,
        entity: str | None = None,
    ) -> None:
        """Plan ``rel``'s generated section as ``body_for(old body)`` makes it."""
        try:
            old = self.read(rel)
        except WorkspaceError as exc:  # one page behind a link: the others are still written
            self.warnings.append(f"{rel}: skipped: {exc.message}")
            return
        if old is not None and is_off(old):
            self.warnings.append(f"{rel}: skipped (it has {OFF})")
            return
        try:
            section = find_section(old) if old is not None else None
        except MarkerError as exc:
            self.conflicts.append(f"{rel}: {exc}; fix or remove the clawmem:reflect markers")
            return
        old_body = section.body if section else None
        body = body_for(old_body)
        new = splice(old, body, title=title)
        if section is not None and section.edited and new != old:
            if not self.force:
                self.conflicts.append(
                    f"{rel}: the generated section was edited by hand since reflect wrote it"
                )
                return
            self.warnings.append(
                f"{rel}: overwrote a hand edit inside the generated section (--force)"
            )
        self.changes.append(FileChange(rel, role, old, new, entity, _new_citations(old_body, body)))


def _entity_pages(
    log: FactLog, existing_pages: dict[str, str], since: date | None
) -> list[tuple[str, str, list[LoggedFact]]]:
    """(page, entity name, its facts) for every entity with a fact since ``since``."""
    names: dict[str, str] = {}
    by_entity: dict[str, list[LoggedFact]] = {}
    for f in log.facts:
        for e in f.entities:
            key = e.casefold()
            names.setdefault(key, e)
            by_entity.setdefault(key, []).append(f)
    out = []
    for key in sorted(by_entity, key=lambda k: names[k].casefold()):
        facts = by_entity[key]
        if since is not None and not any(f.day and f.day >= since for f in facts):
            continue
        rel = existing_pages.get(key) or entity_page_path(names[key])
        # A page named by the hash of a name too long for a file (entity_page_path) is titled
        # by the name itself.
        name = names[key] if "~" in Path(rel).stem else Path(rel).stem
        out.append((rel, name, facts))
    return out


def _opinion_reports(
    old_ops: str | None, opinions: list[Opinion]
) -> tuple[list[OpinionReport], bool]:
    """How each opinion moved since the opinions page was written, and whether that page has a
    generated section (or broken markers, which plan.page reports)."""
    broken = False
    try:
        old_section = find_section(old_ops) if old_ops else None
    except MarkerError:
        old_section, broken = None, True
    previous = _blocks(old_section.body if old_section else None)
    reports = []
    for op in opinions:
        block = opinion_block(op)
        head = block[0]
        before = previous.get(head)
        prev_c = _CONF.search(before) if before else None
        reports.append(
            OpinionReport(
                op,
                head,
                before != "\n".join(block[1:]).strip(),
                float(prev_c.group(1)) if prev_c else None,
            )
        )
    return reports, old_section is not None or broken


def existing_entity_pages(scan_files: Iterable[FileEntry]) -> dict[str, str]:
    pages: dict[str, str] = {}
    for entry in scan_files:
        rel = entry.relpath
        if is_entity_page(rel):
            pages.setdefault(Path(rel).stem.casefold(), rel)
    return pages


# --------------------------------------------------------------------------------------------
# The run


def _summaries_before_lock(
    ix: Indexer, model_path: Path, today: date, since: date | None
) -> tuple[Summarize, str]:
    """Ask the LLM for every summary the run will need *before* taking the write lock: a small
    model takes seconds per entity, and retain must not wait minutes behind it. Under the lock the
    summaries are looked up by what they were written from; one whose facts changed in between
    is simply left for the next run."""
    from clawmem.reflect.summarize import Summarizer

    summarizer = Summarizer(model_path)
    done: dict[str, str] = {}

    def ask(name: str, facts: list[LoggedFact]) -> str:
        done[summary_digest(facts)] = summarizer.summarize(name, facts)
        return done[summary_digest(facts)]

    sc = ix.scan()
    log = collect_facts(ix.root, sc, today)
    plan_reflect(
        ix.root,
        log,
        existing_pages=existing_entity_pages(sc.files),
        since=since,
        summarize=ask,
        model=summarizer.name,
    )
    return (lambda _name, facts: done.get(summary_digest(facts), "")), summarizer.name


def _propose_facts(
    ix: Indexer, sc: Scan, episodes: list[Episode], since: date | None, today: date
) -> tuple[int, list[tuple[FactProposal, str]]]:
    """Fact proposals from the finished conversations and the daily logs' narrative (outside
    ``## Retain``) since ``since``, appended to memory/proposals/; how many were new, and the
    ones the promotion rule keeps (proposal_review.promotable), with why."""
    from clawmem.reflect.fact_proposals import MIN_CONFIDENCE, scored
    from clawmem.reflect.flush import entity_page_names
    from clawmem.reflect.proposal_review import (
        daily_logs,
        promotable,
        record,
        said_in_transcript,
    )
    from clawmem.text.timeexpr import date_from_path

    said = []
    for ep in episodes:
        if since is None or ep.last_at[:10] >= since.isoformat():
            said += said_in_transcript(ep.relpath, ep.messages)
    logs = []
    for entry in sc.markdown_files:
        day = date_from_path(entry.relpath)
        if day is not None and day <= today and (since is None or day >= since):
            logs.append(entry.relpath)
    said += daily_logs(ix.root, logs)
    every = scored(said, entity_page_names(ix.root), MIN_CONFIDENCE)
    first = list({p.key: p for p in reversed(every)}.values())[::-1]  # propose(): each line once
    new = record(ix.root, first, today)
    return len(new), promotable(every, ix.root)


def reflect(
    ix: Indexer,
    *,
    since: str | None = None,
    today: date | None = None,
    dry_run: bool = False,
    apply: bool = False,
    force: bool = False,
    llm: str | Path | None = None,
    lock_timeout: float = 60.0,
    now: datetime | None = None,
) -> ReflectResult:
    """Update entity pages, opinions and MEMORY.md proposals from the facts since ``since``
    (30d, 2025-11, ...), and write an episode page for each finished conversation: planned, then
    (unless ``dry_run``) written, all under the workspace's write lock. ``now``: the time that
    decides which conversations are finished (their last message older than
    ``session_idle_minutes``). Returns a ``ReflectResult``; raises ``ReflectConflict`` when a
    hand edit would be lost."""
    from clawmem.files.atomic import write_atomic
    from clawmem.files.locking import write_lock
    from clawmem.text.timeexpr import parse_since

    today = today or date.today()
    since_day = parse_since(since, today) if since else None

    t0 = time.perf_counter()
    summarize = model = None
    if llm is not None:
        summarize, model = _summaries_before_lock(ix, Path(llm), today, since_day)
    if dry_run:  # reads only: no lock, so a preview works on a read-only workspace too
        guard: AbstractContextManager = nullcontext()
    else:
        ix.prepare_memory_dir()
        guard = write_lock(ix.memory_dir, timeout=lock_timeout, purpose="clawmem reflect")
    promote: list[tuple[FactProposal, str]] = []
    with guard:
        sc = ix.scan()
        log = collect_facts(ix.root, sc, today)
        pages = existing_entity_pages(sc.files)
        episodes: list[Episode] = []
        episode_warnings: list[str] = []
        if ix.cfg.session_paths or registry.exists(ix.root):  # hooks named some (flush)
            from clawmem.reflect.episodes import finished

            names = sorted(Path(rel).stem for rel in pages.values())
            episodes, episode_warnings = finished(ix.root, ix.cfg, now or datetime.now(UTC), names)
            # A conversation older than the retention keeps no page (retention.py).
            first = retention_cutoff(ix.cfg, today)
            if first is not None:
                episodes = [e for e in episodes if e.first_at[:10] >= first.isoformat()]
        result, conflicts = plan_reflect(
            ix.root,
            log,
            existing_pages=pages,
            since=since_day,
            apply=apply,
            force=force,
            summarize=summarize,
            model=model or "",
            episodes=episodes,
        )
        result.warnings += episode_warnings
        if log.problems:
            result.warnings.append(
                f"{log.problems} malformed fact line(s) were left out; `clawmem check` lists them"
            )
        result.warnings += [f"{p}: not UTF-8; its facts are left out" for p in log.unreadable]
        if conflicts:
            edited = any("edited by hand" in c for c in conflicts)
            raise ReflectConflict(
                "stopped, nothing written: " + "; ".join(conflicts),
                hint="move your edits outside the clawmem:reflect markers (or delete the section "
                "to have it rewritten), or rerun with {param} to overwrite them"
                if edited
                else "a page holds one line <!-- clawmem:reflect:begin … --> and, below it, one line "
                "<!-- clawmem:reflect:end -->; delete both to have the section rewritten",
                param="force",
            )
        result.dry_run = dry_run
        result.retention = apply_retention(ix.root, ix.cfg, today, dry_run=dry_run)
        if not dry_run:
            for change in result.written():
                path = writable_path(ix.root, change.path)
                current = path.read_bytes().decode("utf-8") if path.is_file() else None
                if current != change.old:
                    raise ReflectConflict(
                        f"{change.path} changed while reflect was running; nothing more written",
                        hint="run clawmem reflect again",
                    )
                try:
                    write_atomic(path, change.new)
                except OSError as exc:
                    raise StoreError(
                        f"{change.path}: cannot write ({exc.strerror})",
                        hint="check permissions and free space; rerun reflect to finish",
                    ) from None
            result.fact_proposals, promote = _propose_facts(ix, sc, episodes, since_day, today)
            aged = result.retention.archived or result.retention.pruned
            if (result.written() or result.fact_proposals or aged) and ix.index_path.exists():
                try:
                    ix.index_locked(embed_limit=ix.cfg.lazy_embed_limit)
                except OSError as exc:
                    raise StoreError(
                        f"{ix.memory_dir}: the pages were written but the index sync failed "
                        f"({exc.strerror or exc})",
                        hint="run `clawmem index`",
                    ) from None
                result.index_synced = True
    if not dry_run:
        # Outside the lock: accepting retains each fact, which takes the lock itself.
        from clawmem.reflect.proposal_review import accept

        for p, why in promote:
            result.promoted.append(accept(ix, p.id, promoted=why).to_dict() | {"why": why})
    result.seconds = time.perf_counter() - t0
    return result
