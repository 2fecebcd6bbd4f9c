"""What ``clawmem reflect`` returns: each file it changed or would change (``FileChange``, with
its diff), each opinion's report and the run's ``ReflectResult`` (its summary line and JSON).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from clawmem.reflect.episodes import Recurring
from clawmem.reflect.opinions import Opinion
from clawmem.reflect.pages import Proposal
from clawmem.reflect.retention import Retention


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
    degraded: list[str] = field(default_factory=list)  # a part that ran without what it reads

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
        if self.degraded:  # briefly: --json says what and why
            text += "; degraded: " + ", ".join(d.split(":", 1)[0] for d in self.degraded)
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
            "degraded": self.degraded,
        }
        if self.dry_run:
            data["diff"] = self.diff()
        return data
