"""``clawmem reflect``: turn the stream of Retain facts into pages a person can review.

One run, under the workspace's write lock:

1. read every fact from the Markdown (``factlog``), as known on ``today``;
2. plan, without writing anything: the generated section of each entity page
   (``bank/entities/<Entity>.md``), of ``bank/opinions.md`` (``opinions``) and of
   ``bank/proposals.md``; with ``apply``, the lines added to ``MEMORY.md``;
3. stop if a generated section was edited by hand since it was written (``ReflectConflict``,
   nothing written) unless forced;
4. write the files that changed, each atomically (``MEMORY.md`` only ever appended to, in place:
   a program may hold it open), then sync the index under the same lock.

Every generated section is a pure function of the facts (dates in it come from the facts, never
the clock), so a second run with no new facts rewrites nothing, byte for byte. A page changes when
its facts changed since the last run; ``since`` narrows the entity pages to those with facts
recorded on or after that day. docs/reflect.md describes the pages and the opinion rule.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.errors import (
    ClawmemError,
    InputError,
    ReflectConflict,
    StoreError,
    WorkspaceError,
)
from clawmem.markdown.factlog import FactLog, LoggedFact, collect_facts, read_text
from clawmem.markdown.markers import OFF, MarkerError, find_section, is_off, splice
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
    episode_body,
)
from clawmem.reflect.opinions import Opinion, cluster
from clawmem.reflect.pages import (
    CONFIDENCE_LINE,
    FactStatus,
    Proposal,
    apply_to_core,
    core_words,
    entity_body,
    fact_status,
    in_core,
    newest_first,
    opinion_block,
    opinion_blocks,
    opinions_body,
    page_title,
    proposals,
    proposals_body,
)
from clawmem.reflect.results import FileChange, OpinionReport, ReflectResult
from clawmem.reflect.retention import apply_retention
from clawmem.reflect.retention import cutoff as retention_cutoff
from clawmem.text.topics import topic_words
from clawmem.transcripts import registry

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer
    from clawmem.markdown.workspace import Scan
    from clawmem.reflect.fact_proposals import Proposal as FactProposal

OPINIONS = "bank/opinions.md"
PROPOSALS = "bank/proposals.md"


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
        for f in newest_first(facts)
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


def _append_in_place(path: Path, change: FileChange) -> None:
    """Write a change that only adds to the end of the file (``--apply``'s proposals at the end
    of MEMORY.md, ``apply_to_core``) by appending in place, or create the file if nobody did
    meanwhile: a rename over the file lost every line a program that keeps MEMORY.md open wrote
    after it (its writes went to the replaced file). Whole lines such a program appended since
    reflect read the file stay, before the new ones, as retain keeps a log's (``may_follow``: no
    heading among them, so the new lines land in the section they were planned for); anything
    else is a conflict, and nothing is written."""
    from clawmem.files.cas import read_snapshot, write_if_unchanged
    from clawmem.ingest.retain import may_follow

    old = None if change.old is None else change.old.encode("utf-8")
    new = change.new.encode("utf-8")
    for _ in range(_APPEND_TRIES):
        snap = read_snapshot(path)
        if old is None:  # a new file, unless another program created it meanwhile
            target = new if snap.data is None else None
        elif snap.data == old:
            target = new
        elif (
            snap.data is not None
            and snap.data.startswith(old)
            and old.endswith(b"\n")
            and may_follow(snap.data[len(old) :])
        ):
            target = snap.data + new[len(old) :]
        else:
            target = None
        if target is None:
            break
        if write_if_unchanged(path, snap, target, may_follow=may_follow) is not None:
            return
        time.sleep(0.01)  # a line half written: read it again once it is whole
    raise ReflectConflict(
        f"{change.path} changed while reflect was running; nothing more written",
        hint="run clawmem reflect again",
    )


def _sweep_unwritten(root: Path, changes: Iterable[FileChange]) -> None:
    """A writer killed between its temporary copy and the rename left the copy beside the page
    (.NAME.XXXXXXXX.tmp), and a rewrite killed before it the page's second name
    (.NAME.SIZE-XXXXXXXX.held; killed after it, the old page under that name, whose lines the
    page lacks are added to it: files/rewrite.py). Each write of a page sweeps and settles its
    own; a page this run finds as it wants it is not written, so here (under the write lock:
    none belongs to a write going on)."""
    from clawmem.files.atomic import remove_stale_temps
    from clawmem.files.rewrite import remove_second_names

    for change in changes:
        if change.status == "unchanged":
            path = writable_path(root, change.path)
            remove_stale_temps(path)
            remove_second_names(path)


_APPEND_TRIES = 20


def _writers_once() -> Callable[[], dict[tuple[int, int], list[int]]]:
    """Which files other processes hold open for writing, looked up once per run (a pass over
    every process's descriptors), and only when a page is rewritten."""
    from clawmem.files.rewrite import open_for_writing

    seen: list[dict[tuple[int, int], list[int]]] = []

    def get() -> dict[tuple[int, int], list[int]]:
        if not seen:
            seen.append(open_for_writing())
        return seen[0]

    return get


def _rewrite(
    path: Path,
    change: FileChange,
    warnings: list[str],
    writers: dict[tuple[int, int], list[int]],
) -> bool:
    """Rewrite a page (files/rewrite.py): never while another program holds it open for
    writing (its later lines would go to the replaced file), keeping what one appended while
    the page was compared and renamed. False: the page was left as it is, with a warning."""
    from clawmem.files.rewrite import Changed, HeldOpen, rewrite_page

    assert change.old is not None
    try:
        done = rewrite_page(path, change.old.encode("utf-8"), change.new.encode("utf-8"), writers)
    except HeldOpen as held:
        pids = ", ".join(map(str, held.pids))
        warnings.append(
            f"{change.path}: left as it is: another program (pid {pids}) has it open for "
            "writing, and its later lines would be lost; run reflect again once it has closed it"
        )
        return False
    except Changed:
        raise ReflectConflict(
            f"{change.path} changed while reflect was running; nothing more written",
            hint="run clawmem reflect again",
        ) from None
    if done.kept:
        lines = done.kept.count(b"\n") or 1
        warnings.append(
            f"{change.path}: {lines} line(s) another program appended while reflect wrote the "
            "page were kept at its end"
        )
    return True


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

        plan.page(rel, "entity", body_for, page_title(name), entity=name)

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
        return [r for r in recurring if not in_core(topic_words(r.text), core)]

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
    previous = opinion_blocks(old_section.body if old_section else None)
    reports = []
    for op in opinions:
        block = opinion_block(op)
        head = block[0]
        before = previous.get(head)
        prev_c = CONFIDENCE_LINE.search(before) if before else None
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
    ix: Indexer,
    sc: Scan,
    episodes: list[Episode],
    since: date | None,
    today: date,
    degraded: list[str],
) -> tuple[int, list[tuple[FactProposal, str]]]:
    """Fact proposals from the finished conversations and the daily logs' narrative (outside
    ``## Retain``) since ``since``, appended to memory/proposals/; how many were new, and the
    ones the promotion rule keeps (proposal_review.promotable), with why. A turn reading that
    was skipped is added to ``degraded``."""
    from clawmem.reflect.fact_proposals import selected
    from clawmem.reflect.flush import entity_page_names
    from clawmem.reflect.proposal_review import (
        daily_logs,
        promotable,
        record,
        said_in_transcript,
    )
    from clawmem.reflect.turn_reading import TurnReading
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
    # The embedder reads the turns the budget leaves just out (turn_reading.py): here, not at
    # flush, whose PreCompact budget has no room for the model; a turn flush left out is
    # proposed by the next reflect.
    identity = ix.supply.declared_identity()
    key = identity.key() if identity is not None else None
    read = TurnReading(lambda count: ix.supply.for_documents(count, key))
    every = selected(said, entity_page_names(ix.root), read)
    if read.skipped is not None:
        degraded.append(
            f"turn reading skipped: {read.skipped}; the turns the proposals' budget leaves out "
            "were not read (reflect/turn_reading.py)"
        )
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
            _sweep_unwritten(ix.root, result.changes)
            writers = _writers_once()
            for change in result.written():
                path = writable_path(ix.root, change.path)
                current = path.read_bytes().decode("utf-8") if path.is_file() else None
                # MEMORY.md is only appended to, and may have grown meanwhile by whole lines
                # another program appended: _append_in_place decides.
                if current != change.old and change.role != "core":
                    raise ReflectConflict(
                        f"{change.path} changed while reflect was running; nothing more written",
                        hint="run clawmem reflect again",
                    )
                try:
                    if change.role == "core" or (
                        change.old is not None and change.new.startswith(change.old)
                    ):
                        _append_in_place(path, change)
                    elif change.old is None:
                        write_atomic(path, change.new)  # a new page: nobody holds it open
                    elif not _rewrite(path, change, result.warnings, writers()):
                        change.new = change.old  # left for the next run: "unchanged"
                except OSError as exc:
                    raise StoreError(
                        f"{change.path}: cannot write ({exc.strerror})",
                        hint="check permissions and free space; rerun reflect to finish",
                    ) from None
            result.fact_proposals, promote = _propose_facts(
                ix, sc, episodes, since_day, today, result.degraded
            )
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
            try:
                result.promoted.append(accept(ix, p.id, promoted=why).to_dict() | {"why": why})
            except ClawmemError as exc:
                # One proposal that cannot be kept (a person decided it meanwhile, retain
                # refuses its line) stays on its page; the nightly run goes on and says why.
                result.warnings.append(f"proposal {p.id} not promoted: {exc.message}")
    result.seconds = time.perf_counter() - t0
    return result
