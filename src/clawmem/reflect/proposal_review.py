"""Fact proposals under review: the pages they are written to, the ledger of what a person
accepted or rejected, and ``clawmem proposals list|accept|reject``.

Where proposals go: ``memory/proposals/YYYY-MM-DD.md``, one page per day the proposals speak of,
each a ``## Proposed`` section of Retain lines (the grammar reads facts only under ``## Retain``,
so nothing here is a fact yet; recall finds them, cited under ``memory/proposals/``)::

    - W: Before I forget: the staging Redis for payments-service now lives on pay-fsn1
      - proposal 3f9a0c2b1d, confidence 0.80, from sessions/3b8f….jsonl#L4-L4

Pages are only appended to: a proposal whose line is on some page already, or in the ledger, is
never written again, so a second flush or reflect proposes nothing new; nor is a turn that goes
on from one a person accepted or rejected, cited from the same first line (the user's next
message joined it since the last flush, fact_proposals.turns), so a rejected statement does not
come back longer (one still pending is proposed again, longer, beside it).

The ledger, ``.clawmem/proposals-reviewed`` (tracked with the workspace, append-only), holds one
line per decision: ``accepted <sha256 of the line>`` or ``rejected <sha256>`` (``accepted <sha256>
promoted`` when reflect promoted it, below), then the length and a hash of the text decided and
the line its turn started at (``rejected <sha256> 41 3f2a… sessions/x.jsonl#L4``), so that the turn
grown later is known as decided even once the page that showed it is deleted. A rejected line is
never proposed again; an accepted one is retained (ingest/retain.py) into the day's ``## Retain``
with the citation as its note, so reflect's entity pages cite the conversation.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from clawmem.errors import BadArgument, InputError, LockedError
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.facts import parse_fact
from clawmem.markdown.lines import text_lines
from clawmem.markdown.proposal_ledger import LEDGER, ledger_lines, verdicts
from clawmem.reflect.fact_proposals import Proposal, Said
from clawmem.text.records import as_json
from clawmem.transcripts.formats import Message

PAGE_DIR = "memory/proposals"
# Promotion: reflect keeps a pending proposal as a fact without a person's review only when the
# same statement (the same Retain line) was proposed from at least PROMOTE_CONVERSATIONS
# different conversations or daily logs in the facts reflect reads, or when the model's
# confidence is at least PROMOTE_CONFIDENCE. Conservative on purpose: on REALTALK's tuning chats
# a confidence of 0.6 or more was right 70% of the time, and the model rarely gives 0.9; notes
# and decisions proposed on a rule (fact_proposals._ASKED_TO_KEEP) sit at the threshold and are
# promoted only by repetition. A promoted fact goes where an accepted one goes
# (the day's ``## Retain``, its note saying why); nothing reaches MEMORY.md without review.
PROMOTE_CONVERSATIONS = 3
PROMOTE_CONFIDENCE = 0.9
_NOTE = re.compile(
    r"^\s+[-*+] proposal (?P<id>[0-9a-f]{10}), confidence (?P<conf>[01](?:\.\d+)?), "
    r"from (?P<source>\S(?:.*\S)?)\s*$"  # to the line's end: a transcript's name may hold
    # spaces (greedy: a lazy ".*?" before "\s*$" was quadratic on a long run of spaces)
)
_DAY_PAGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


@dataclass(frozen=True)
class Listed:
    """A proposal as ``clawmem proposals list`` shows it."""

    proposal: Proposal
    status: str  # "pending" | "accepted" | "rejected"
    page: str  # memory/proposals/YYYY-MM-DD.md
    line: int  # its line on the page, 1-based

    def to_dict(self) -> dict:
        p = self.proposal
        return {
            "id": p.id,
            "status": self.status,
            "line_text": p.line,
            "kind": p.kind,
            "statement": p.text,
            "entities": list(p.entities),
            "confidence": p.confidence,
            "date": p.day,
            "source": p.source,
            "page": f"{self.page}#L{self.line}-L{self.line + 1}",
        }


@dataclass(frozen=True)
class Reviewed:
    """What ``accept`` or ``reject`` did."""

    id: str
    status: str  # "accepted" | "rejected"
    line_text: str
    retained: str | None  # accept: the citation of the fact in its daily log

    def to_dict(self) -> dict:
        return as_json(self)


# ---------------------------------------------------------------------------- what was said


def said_in_transcript(relpath: str, messages: tuple[Message, ...] | list[Message]) -> list[Said]:
    """The messages of a transcript: the user's to propose from, the agent's as context only
    (what the agent says is not the user's memory, but that it asks or echoes a topic counts)."""
    out = []
    for m in messages:
        day = date.fromisoformat(m.at[:10]) if m.at else None
        src = f"{relpath}#L{m.line}-L{m.line}"
        out.append(Said(m.text, src, day, None if m.role == "user" else m.role, m.at))
        if m.role != "user":
            out[-1] = Said(m.text, src, day, m.role, m.at, context_only=True)
    return out


def said_in_log(relpath: str, text: str, day: date | None) -> list[Said]:
    """A daily log's narrative: its paragraphs and bullets (a wrapped line joined to the one
    before), outside ``## Retain``, code fences, headings, tables and quotes."""
    out: list[Said] = []
    item: list[str] = []
    first = 0

    def close(last: int) -> None:
        if item:
            out.append(Said(" ".join(item), f"{relpath}#L{first}-L{last}", day))
            item.clear()

    fence: str | None = None
    skip_level = 0  # inside a Retain section of this heading level
    n = 0
    for n, line in enumerate(text_lines(text), 1):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        starts = re.match(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", stripped)
        if (
            not stripped
            or heading
            or starts
            or stripped.startswith(("```", "~~~", "<!--", "|", ">"))
        ):
            close(n - 1)
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if heading:
            level = len(heading.group(1))
            if skip_level and level <= skip_level:
                skip_level = 0
            if heading.group(2).strip().casefold() == "retain":
                skip_level = level
            continue
        if skip_level or not stripped or stripped.startswith(("<!--", "|", ">")):
            continue
        if not item:
            first = n
        item.append(stripped[starts.end() :] if starts else stripped)
    close(n)
    return out


def daily_logs(root: Path, relpaths: list[str]) -> list[Said]:
    """The narrative of every daily log among ``relpaths`` (not the proposal or episode pages)."""
    from clawmem.markdown.factlog import read_text
    from clawmem.text.timeexpr import date_from_path

    out = []
    for rel in relpaths:
        if not rel.startswith("memory/") or rel.startswith((PAGE_DIR + "/", "memory/episodes/")):
            continue
        day = date_from_path(rel)
        if day is None:
            continue
        text = read_text(root / rel)
        if text is not None:
            out += said_in_log(rel, text, day)
    return out


# ---------------------------------------------------------------------------- the pages


def _page_entries(text: str) -> list[tuple[Proposal, int]]:
    lines = text_lines(text)
    out = []
    for i, line in enumerate(lines[:-1]):
        note = _NOTE.match(lines[i + 1])
        if note is None or not line.startswith("- "):
            continue
        try:
            fact = parse_fact(line)
        except InputError:
            continue
        conf = float(note.group("conf"))
        # The lead mentions only, as Proposal.line wrote them: the statement's own "@bob" is
        # one of fact.entities too, and with it the key would not be the one written (the line
        # was proposed again on every flush and reflect).
        lead = fact.lead_entities
        p = Proposal(fact.kind, fact.content, lead, conf, "", note.group("source"))
        out.append((p, i + 1))
    return out


def _pages(root: Path) -> list[tuple[str, str]]:
    """(relpath, text) of every proposal page, oldest day first."""
    from clawmem.markdown.factlog import read_text
    from clawmem.markdown.workspace import writable_path

    try:
        folder = writable_path(root, PAGE_DIR)
    except Exception:  # noqa: BLE001 - a link out of the workspace: none of ours
        return []
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.iterdir()):
        if _DAY_PAGE.match(path.name) and path.is_file() and not path.is_symlink():
            text = read_text(path)
            if text is None:  # a line that is not UTF-8: the page's other lines still count
                text = path.read_bytes().decode("utf-8", errors="replace")
            out.append((f"{PAGE_DIR}/{path.name}", text))
    return out


def _ledger(root: Path) -> dict[str, str]:
    return verdicts(ledger_lines(root))


def _decision(verdict: str, p: Proposal, promoted: bool = False) -> str:
    """The ledger's line for a decision on ``p``: its key, and the length and hash of its text
    with the line its turn started at, so that the turn grown by a later message is known as
    the one decided (``_grown``) even once the proposals page that showed it is gone."""
    text = p.text.rstrip("…")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    mark = " promoted" if promoted else ""
    return f"{verdict} {p.key}{mark} {len(text)} {digest} {_start(p.source)}\n"


def _decided_prefixes(lines: list[re.Match[str]]) -> dict[str, list[tuple[int, str]]]:
    """ "path#L12" -> (length, hash) of each text decided there, from the ledger's ``lines``
    that say where (a line written before they did says nothing: its page still does)."""
    out: dict[str, list[tuple[int, str]]] = {}
    for m in lines:
        if m.group(4) is not None:
            out.setdefault(m.group(6), []).append((int(m.group(4)), m.group(5)))
    return out


def _append(root: Path, relpath: str, text: str, head: str) -> None:
    """Append ``text`` to a workspace file (``head`` starts a new one), never through a link, in
    place (files/cas.py): a rewrite renamed over the page or the ledger lost what a program
    holding it open wrote afterwards. Whole lines another program appended meanwhile stay,
    before ours."""
    from clawmem.files.cas import read_snapshot, write_if_unchanged
    from clawmem.markdown.workspace import writable_path

    path = writable_path(root, relpath)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_APPEND_TRIES):
        snap = read_snapshot(path)
        # As bytes: whatever the file holds (text that is not UTF-8 included) is kept as it was.
        old = snap.data if snap.data is not None else head.encode("utf-8")
        if old and not old.endswith(b"\n"):
            old += b"\n"
        new = old + text.encode("utf-8")
        if write_if_unchanged(path, snap, new, may_follow=lambda extra: extra.endswith(b"\n")):
            return
        time.sleep(0.01)  # a line half written, or a rewrite: read it again once it is done
    raise LockedError(
        f"{relpath}: another program kept changing the file ({_APPEND_TRIES} tries); "
        "nothing was written",
        hint="run the command again once the other program has finished writing it",
    )


_APPEND_TRIES = 20


def _page_head(day: str) -> str:
    return (
        f"# Proposed facts: {day}\n\n"
        "Noticed by clawmem in conversations and notes; nothing here is a fact yet. "
        "`clawmem proposals accept ID` keeps one, `clawmem proposals reject ID` drops it for "
        "good.\n\n## Proposed\n"
    )


def _start(source: str) -> str:
    """The line a citation starts at: "sessions/x.jsonl#L12-L14" -> "sessions/x.jsonl#L12"."""
    return source.rsplit("-L", 1)[0]


def _grown(
    p: Proposal, reviewed: dict[str, list[str]], decided: dict[str, list[tuple[int, str]]]
) -> bool:
    """Whether ``p`` is a turn a person already accepted or rejected, from the same first line,
    grown by a message said since (fact_proposals.turns): its text goes on from that one's, as
    a proposals page shows it (``reviewed``) or as the ledger recorded it (``decided``: length
    and hash). (A grown turn whose shorter self is still pending is proposed: the review sees
    both.)"""
    start = _start(p.source)
    if any(p.text.startswith(old) for old in reviewed.get(start, ())):
        return True
    text = p.text.rstrip("…").encode("utf-8")
    for n, digest in decided.get(start, ()):
        head = p.text[:n].encode("utf-8")
        if len(text) > len(head) and hashlib.sha256(head).hexdigest()[:16] == digest:
            return True
    return False


def record(root: Path, proposals: list[Proposal], today: date | None = None) -> list[Proposal]:
    """Append the proposals that no page holds and no one rejected; the ones written. The caller
    holds the workspace's write lock."""
    lines = ledger_lines(root)  # the ledger read once
    ledger = verdicts(lines)
    known = set(ledger)
    decided = _decided_prefixes(lines)
    reviewed: dict[str, list[str]] = {}  # "path#L12" -> the texts accepted or rejected from there
    for _rel, text in _pages(root):
        for p, _ in _page_entries(text):
            known.add(p.key)
            if p.key in ledger:
                reviewed.setdefault(_start(p.source), []).append(p.text.rstrip("…"))
    by_day: dict[str, list[Proposal]] = {}
    for p in proposals:
        if p.key in known or _grown(p, reviewed, decided):
            continue
        known.add(p.key)
        by_day.setdefault(p.day or (today or date.today()).isoformat(), []).append(p)
    for day, props in sorted(by_day.items()):
        body = "".join(
            f"{p.line}\n  - proposal {p.id}, confidence {p.confidence:.2f}, from {p.source}\n"
            for p in props
        )
        _append(root, f"{PAGE_DIR}/{day}.md", body, _page_head(day))
    return [p for props in by_day.values() for p in props]


def promotable(sightings: list[Proposal], root: Path) -> list[tuple[Proposal, str]]:
    """The proposals among ``sightings`` (every proposal reflect read, repeats included) that
    the promotion rule keeps, with why: only those pending on a page. None a person already
    accepted or rejected, nor a turn grown from one they did (``record`` writes it on no page:
    promoted, it kept a statement the person had rejected, and accepting an id no page holds
    ended every later reflect with "no proposal")."""
    ledger = _ledger(root)
    on_pages = {p.key for _rel, text in _pages(root) for p, _ in _page_entries(text)}
    where: dict[str, set[str]] = {}
    best: dict[str, Proposal] = {}
    for p in sightings:
        where.setdefault(p.key, set()).add(p.source.split("#", 1)[0])
        if p.key not in best or p.confidence > best[p.key].confidence:
            best[p.key] = p
    out = []
    for key, p in best.items():
        if key in ledger or key not in on_pages:
            continue
        if len(where[key]) >= PROMOTE_CONVERSATIONS:
            out.append((p, f"said in {len(where[key])} conversations"))
        elif p.confidence >= PROMOTE_CONFIDENCE:
            out.append((p, f"confidence {p.confidence:.2f}"))
    return out


def list_proposals(ix: Indexer, *, status: str | None = "pending") -> list[Listed]:
    """The proposals on the pages, with their status (``status=None``: all of them)."""
    if status not in (None, "pending", "accepted", "rejected"):
        raise BadArgument(
            "status", status, "not a proposal status", hint="use pending, accepted, rejected or all"
        )
    ledger = _ledger(ix.root)
    out = []
    for rel, text in _pages(ix.root):
        day = Path(rel).stem
        for p, line in _page_entries(text):
            p = Proposal(p.kind, p.text, p.entities, p.confidence, day, p.source)
            st = ledger.get(p.key, "pending")
            if status is None or st == status:
                out.append(Listed(p, st, rel, line))
    return out


def _find(ix: Indexer, pid: str) -> Listed:
    pid = pid.strip().lower()
    found = [x for x in list_proposals(ix, status=None) if x.proposal.key.startswith(pid)]
    if len(pid) < 4 or not found:
        raise InputError(
            f"no proposal {pid!r}", hint="`clawmem proposals list` shows the pending ids"
        )
    if len({x.proposal.key for x in found}) > 1:
        raise InputError(f"proposal id {pid!r} is ambiguous", hint="give more of the id")
    return found[0]


def accept(ix: Indexer, pid: str, *, promoted: str | None = None) -> Reviewed:
    """Retain the proposal's line, with its citation as the fact's note, and record it accepted.
    ``promoted``: reflect keeps it by the promotion rule, and why (the note and ledger say so)."""
    from clawmem.files.locking import write_lock
    from clawmem.ingest.retain import retain

    found = _find(ix, pid)
    p = found.proposal
    if found.status != "pending":
        raise InputError(f"proposal {p.id} was {found.status} already", hint="nothing to do")
    res = retain(
        ix,
        p.text,
        kind=p.kind,
        confidence=p.confidence if p.kind == "O" else None,
        entities=p.entities,
        day=p.day or None,
        literal=True,
        note=f"from {p.source}" + (f"; promoted by reflect: {promoted}" if promoted else ""),
    )
    with write_lock(ix.memory_dir, purpose="clawmem proposals accept"):
        _append(ix.root, LEDGER, _decision("accepted", p, bool(promoted)), "")
    return Reviewed(p.id, "accepted", p.line, res.source)


def reject(ix: Indexer, pid: str) -> Reviewed:
    """Record the proposal rejected: its line is never proposed again."""
    from clawmem.files.locking import write_lock

    found = _find(ix, pid)
    p = found.proposal
    if found.status != "pending":
        raise InputError(f"proposal {p.id} was {found.status} already", hint="nothing to do")
    ix.prepare_memory_dir()
    with write_lock(ix.memory_dir, purpose="clawmem proposals reject"):
        _append(ix.root, LEDGER, _decision("rejected", p), "")
    return Reviewed(p.id, "rejected", p.line, None)
