"""Opinions over time: which ``O`` facts state the same opinion, and how its confidence moves.

No model and no LLM: two opinion facts are one opinion when they are about the same entities and
share topic words (see ``same_opinion``); the confidence follows the rule below, one statement at
a time, oldest first. Every step records why it moved, so ``clawmem reflect --explain`` and the
evidence lines in ``bank/opinions.md`` can say it in words. docs/reflect.md has a worked example.

The rule
--------
* The first statement sets the confidence: its stated ``c``, or ``DEFAULT_START`` without one.
* Every later statement with a stated ``c`` *supports* the opinion when ``c`` is at least the
  current confidence minus ``AGREE_TOLERANCE``, and *contradicts* it otherwise.
* The confidence moves toward the stated ``c``, but by at most ``STEP`` × k, where k counts the
  statements in a row that went the same way (this one included). One contradiction moves it at
  most 0.20; a second in a row at most 0.40; so a large change needs strong, repeated evidence,
  and a single stray line can never flip an opinion.
* A statement without ``c`` counts as support (target: current + ``UNSTATED_SUPPORT``) unless it is
  phrased with the opposite polarity of the first statement ("not", "never", "n't" …), which makes
  it a contradiction (target: current − ``UNSTATED_CONTRADICT``); the same caps apply.

A stated ``c`` is read as the author's confidence in the opinion *as first stated*, the way a
person writes "confidence: 0.20 (that Rust is the right choice)" under a statement that by now
says the opposite. Reflect takes the author at their word, only more slowly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from clawmem.markdown.factlog import LoggedFact, is_negated
from clawmem.reflect.candidates import OverlapIndex, word_rank
from clawmem.text.topics import jaccard

STEP = 0.20
AGREE_TOLERANCE = 0.05
DEFAULT_START = 0.60
UNSTATED_SUPPORT = 0.05
UNSTATED_CONTRADICT = 0.20


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _signed(x: float) -> str:
    return f"{'+' if x >= 0 else '−'}{abs(x):.2f}"


def same_opinion(a: LoggedFact, b: LoggedFact) -> tuple[int, str] | None:
    """(strength, reason) when two opinion facts state the same opinion, else None.

    Same entities and at least two shared topic words ("rust", "cli"); overlapping but different
    entities need three shared words and a word overlap (Jaccard) of at least 0.3; facts without
    entities need three shared words and 0.4."""
    ea, eb = a.folded_entities, b.folded_entities
    shared = a.words & b.words
    words = ", ".join(sorted(shared))
    if ea and ea == eb and len(shared) >= 2:
        return len(shared), f"same entities, shared topic words: {words}"
    if ea and eb and ea & eb and len(shared) >= 3 and jaccard(a.words, b.words) >= 0.3:
        return len(shared), f"overlapping entities, shared topic words: {words}"
    if not ea and not eb and len(shared) >= 3 and jaccard(a.words, b.words) >= 0.4:
        return len(shared), f"shared topic words: {words}"
    return None


@dataclass(frozen=True)
class Step:
    fact: LoggedFact
    effect: str  # "first" | "supports" | "contradicts"
    before: float | None
    after: float
    stated: float | None
    streak: int  # statements in a row with this effect, this one included
    joined: str  # why this fact belongs to the opinion ("" for the first)
    reason: str  # why the confidence moved, in words

    @property
    def delta(self) -> float:
        return 0.0 if self.before is None else round(self.after - self.before, 2)


@dataclass
class Opinion:
    facts: list[LoggedFact]
    joins: list[str] = field(default_factory=list)  # parallel to facts; "" for the first
    steps: list[Step] = field(default_factory=list)

    @property
    def first(self) -> LoggedFact:
        return self.facts[0]

    @property
    def latest(self) -> LoggedFact:
        return self.facts[-1]

    @property
    def confidence(self) -> float:
        return self.steps[-1].after

    @property
    def entities(self) -> tuple[str, ...]:
        seen: dict[str, str] = {}
        for f in self.facts:
            for e in f.entities:
                seen.setdefault(e.casefold(), e)
        return tuple(seen.values())

    @property
    def supporting(self) -> list[Step]:
        return [s for s in self.steps if s.effect in ("first", "supports")]

    @property
    def contradicting(self) -> list[Step]:
        return [s for s in self.steps if s.effect == "contradicts"]

    @property
    def last_updated(self) -> date | None:
        return self.latest.day


def cluster(facts: list[LoggedFact]) -> list[Opinion]:
    """Group opinion facts (oldest first) into opinions. Each fact joins the opinion it matches
    best (any member counts; the earliest opinion wins a tie) or starts a new one."""
    opinions: list[Opinion] = []
    stated = [f for f in facts if f.kind == "O"]
    # Every way to match shares two topic words, and an entity unless neither has one: each
    # fact is compared only with the members that do (candidates.py), in the order a scan of
    # every member of every opinion meets them, so the opinions are the same as that scan's
    # (which cost minutes on a committed log of many opinions).
    sharing = OverlapIndex(2, word_rank(f.words for f in stated))
    member_of: list[int] = []  # member (its place in `stated`) -> its opinion
    distinct: set[tuple[int, frozenset[str], frozenset[str]]] = set()
    for n, fact in enumerate(stated):
        found: set[int] = set()
        for group in fact.folded_entities or (None,):
            found |= sharing.query(group, fact.words)
        best: tuple[int, int, str] | None = None  # (strength, -index, reason)
        for m in sorted(found):  # oldest member first: within an opinion, op.facts order
            i = member_of[m]
            if best is not None and (len(stated[m].words & fact.words), -i) <= best[:2]:
                continue  # its strength (the shared words) cannot beat the best: skip the rule
            match = same_opinion(stated[m], fact)
            if match and (best is None or (match[0], -i) > best[:2]):
                best = (match[0], -i, match[1])
        if best is None:
            member_of.append(len(opinions))
            opinions.append(Opinion([fact], [""]))
        else:
            member_of.append(-best[1])
            op = opinions[-best[1]]
            op.facts.append(fact)
            op.joins.append(best[2])
        # A member saying what an earlier member of its opinion says (same entities and topic
        # words) matches every later fact as that one does, and loses the tie to it: only the
        # first is compared (an opinion restated 20,000 times was 200 million comparisons).
        said = (member_of[-1], fact.folded_entities, fact.words)
        if said not in distinct:
            distinct.add(said)
            for group in fact.folded_entities or (None,):
                sharing.add(group, fact.words, n)
    for op in opinions:
        op.steps = trajectory(op.facts, op.joins)
    return opinions


def trajectory(facts: list[LoggedFact], joins: list[str]) -> list[Step]:
    """Apply the rule (module docstring) to one opinion's statements, oldest first."""
    steps: list[Step] = []
    first = facts[0]
    c = round(first.confidence if first.confidence is not None else DEFAULT_START, 2)
    why = (
        f"first statement, stated c={c:.2f}"
        if first.confidence is not None
        else f"first statement, no c stated: starts at {c:.2f}"
    )
    steps.append(Step(first, "first", None, c, first.confidence, 1, "", why))
    polarity = is_negated(first.content)
    last_effect, streak = "first", 0
    for fact, joined in zip(facts[1:], joins[1:], strict=True):
        stated = fact.confidence
        if stated is not None:
            effect = "supports" if stated >= c - AGREE_TOLERANCE else "contradicts"
            target = stated
            basis = f"stated c={stated:.2f} " + (
                f"≥ {c:.2f} − {AGREE_TOLERANCE:.2f}" if effect == "supports" else f"< {c:.2f}"
            )
        elif is_negated(fact.content) != polarity:
            effect, target = "contradicts", max(0.0, c - UNSTATED_CONTRADICT)
            basis = "no c stated; phrased with the opposite polarity"
        else:
            effect, target = "supports", min(1.0, c + UNSTATED_SUPPORT)
            basis = "no c stated; restates it"
        streak = streak + 1 if effect == last_effect else 1
        last_effect = effect
        cap = round(STEP * streak, 2)
        gap = round(target - c, 2)
        move = max(-cap, min(cap, gap))
        after = round(min(1.0, max(0.0, c + move)), 2)
        capped = abs(gap) > cap
        reason = f"{effect} ({basis})"
        if streak > 1:
            reason += f", {_ordinal(streak)} in a row"
        if capped:
            reason += f": step capped at {cap:.2f}, {_signed(move)} of {_signed(gap)}"
        else:
            reason += f": {_signed(move)}"
        reason += f" → {after:.2f}"
        steps.append(Step(fact, effect, c, after, stated, streak, joined, reason))
        c = after
    return steps
