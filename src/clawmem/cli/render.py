"""Human-readable output for the terminal (rich). Data goes to stdout, everything else to stderr."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from clawmem.text.visible import visible

if TYPE_CHECKING:
    from clawmem.recall.facts_list import FactList
    from clawmem.reflect.forget import ForgetResult


class _Console(Console):
    # Every string printed has its control characters written out (text/visible.py).
    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def on_broken_pipe(self) -> None:
        # rich exits 1 here; the CLI's boundary (app._closed_pipe) leaves quietly with 0 instead,
        # as a reader that closes the pipe (`clawmem recall … | head -1`) expects.
        raise BrokenPipeError


out = _Console(soft_wrap=True, highlight=False)
err = _Console(stderr=True, soft_wrap=True, highlight=False)


class IndexProgress:
    """A progress bar on a terminal (stderr), with chunks per second while embedding; silent otherwise."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = err.is_terminal if enabled is None else enabled
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> IndexProgress:
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._progress is None:
            return
        label = {"index": "indexing", "embed": "embedding"}.get(stage, stage)
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(label, total=total, rate="")
        task = self._tasks[stage]
        t = self._progress.tasks[task]
        rate = f"{done / t.elapsed:.1f} chunks/s" if stage == "embed" and t.elapsed else ""
        self._progress.update(task, completed=done, total=total, rate=rate)


def index_summary(r: dict) -> str:
    if not (r["files_indexed"] or r["files_removed"] or r["rebuilt"] or r["vectors_embedded"]):
        pending = f", {r['vectors_pending']} vectors pending" if r["vectors_pending"] else ""
        return f"clawmem index: up to date ({r['files_unchanged']} files{pending}); {r['seconds']:.1f} s"
    parts = [
        f"{r['files_indexed']} file(s) indexed",
        f"{r['files_unchanged']} unchanged",
    ]
    if r["files_removed"]:
        parts.append(f"{r['files_removed']} removed")
    parts.append(f"{r['units']} chunks+facts")
    vec = f"vectors: {r['vectors_embedded']} embedded, {r['vectors_reused']} reused"
    if r["vectors_pending"]:
        vec += f", {r['vectors_pending']} pending"
    if r["truncated"]:
        vec += f", {r['truncated']} truncated to the model context"
    head = "rebuilt" if r["rebuilt"] else "synced"
    return f"clawmem index: {head}: {', '.join(parts)}; {vec}; {r['seconds']:.1f} s"


def via_line(via: dict) -> str:
    """How a hit reached through a link is marked: ↳ linked from / ↳ links to."""
    if via["direction"] == "backlink":
        return f"↳ via link: links to {via['from']} ({via['type']} {via['text']} at {via['link']})"
    return f"↳ via link: linked from {via['from']} ({via['type']} {via['text']} at {via['link']})"


def links_human(data: dict) -> None:
    """``clawmem links``: outgoing links, then backlinks, one per line with its context."""
    out.print(f"[bold]{escape(data['path'])}[/bold]")
    out.print(f"outgoing ({len(data['outgoing'])})")
    for lk in data["outgoing"]:
        if lk["status"] == "ok":
            to = f"→ [cyan]{escape(lk['to'])}[/cyan]"
        elif lk["status"] == "ambiguous":
            to = f"[red]ambiguous: {escape(', '.join(lk['candidates']))}[/red]"
        elif lk["syntax"] == "mention":
            to = "[dim](no entity page)[/dim]"
        else:
            to = "[red]unresolved[/red]"
        out.print(f"  L{lk['line']:<5} {escape(lk['type']):<12} {escape(lk['text'])} {to}")
        out.print(f"         [dim]{escape(lk['context'])}[/dim]")
    out.print(f"backlinks ({len(data['backlinks'])})")
    for lk in data["backlinks"]:
        out.print(
            f"  [cyan]{escape(lk['from'])}:{lk['line']}[/cyan] {escape(lk['type'])} "
            f"{escape(lk['text'])}"
        )
        out.print(f"         [dim]{escape(lk['context'])}[/dim]")


def recall_human(res: dict, explain: bool, weak: list[dict] | None = None) -> None:
    for note in res["notes"]:
        err.print(f"[dim]note: {escape(note)}[/dim]")
    for d in res["degraded"]:
        err.print(f"[yellow]degraded: {escape(d)}[/yellow]")
    if not res["results"]:
        if weak:
            # Nothing reached the relevance threshold: say so first, then the closest weak
            # hits, dimmed, for a person to judge (an agent reading --json gets none of them).
            out.print("no relevant memory")
            err.print(f"[dim]{escape(res['empty_reason'] or '')}[/dim]")
            out.print("[dim]closest weak hits:[/dim]")
            for i, h in enumerate(weak[:3], 1):
                first = (h["snippet"].splitlines() or [""])[0]
                out.print(
                    f"[dim]{i}. {escape(h['citation'])}  relevance {h['relevance']:.3f}  "
                    f"{escape(first[:120])}[/dim]"
                )
            return
        err.print(f"no results: {escape(res['empty_reason'] or 'nothing matched')}")
        return
    for i, h in enumerate(res["results"], 1):
        tag = ""
        if h["type"] == "fact":
            tag = f" [magenta]{escape(_fact_label(h))}[/magenta]"
        when = f" [dim]{h['timestamp']}[/dim]" if h.get("timestamp") else ""
        rel = (
            f"  [dim]relevance {h['relevance']:.2f}[/dim]" if h.get("relevance") is not None else ""
        )
        out.print(
            f"[bold]{i}.[/bold] [cyan]{escape(h['citation'])}[/cyan]  {h['score']:.4g}{rel}{tag}{when}"
        )
        if h["heading"] and h["type"] == "chunk":
            out.print(f"   [dim]{escape(h['heading'])}[/dim]")
        if h.get("superseded_by"):
            out.print(f"   [yellow]superseded by {escape(h['superseded_by'])}[/yellow]")
        if h.get("via"):
            out.print(f"   [blue]{escape(via_line(h['via']))}[/blue]")
        if h.get("proposed"):
            out.print(f"   [dim]proposed as a fact: {escape(', '.join(h['proposed']))}[/dim]")
        if h.get("copies"):  # reflect's page lines that restate this fact (rrf-v13)
            out.print(f"   [dim]also on {escape(', '.join(h['copies']))}[/dim]")
        for line in h["snippet"].splitlines() or [""]:
            out.print("   " + escape(line))
        if explain:
            e = h["explain"]
            out.print(
                f"   [dim]lexical rank {e['lexical_rank']} score {e['lexical_score']}; "
                f"vector rank {e['vector_rank']} score {e['vector_score']}; ranking {res['ranking']}[/dim]"
            )
        out.print()


def describe_resident(r: dict) -> str:
    """One line for the resident embedder's state (``clawmem status``)."""
    if r.get("state") != "running":
        return r.get("state", "?") + (f" ({r['reason']})" if r.get("reason") else "")
    mem = f", {r['rss_mb']:.0f} MB" if r.get("rss_mb") else ""
    return (
        f"running, pid {r.get('pid')}{mem}, {r.get('requests', 0)} request(s); "
        f"exits after {r.get('idle_exit_s', 0) / 60:g} idle minute(s)"
    )


def _sessions_human(ses: dict) -> None:
    if ses.get("folders"):
        out.print(
            f"sessions    {ses['transcripts_on_disk']} transcript(s) in "
            f"{escape(', '.join(ses['folders']))}"
        )
    if ses.get("flushed"):
        out.print(f"flushed     {ses['flushed']} transcript(s) named by agents' hooks")
    last = ses.get("last_flush")
    if last:
        # A hook's flush is silent: a failed one is said here.
        colour = "dim" if last["ok"] else "yellow"
        out.print(f"last flush  [{colour}]{escape(last['line'])}[/{colour}]")


def status_human(s: dict) -> None:
    state = s.get("state", "")
    colour = "green" if s.get("clean") else "yellow"
    out.print(f"workspace   {escape(s['workspace'])}")
    out.print(f"index       {escape(s['index_path'])} ({s['index_bytes']:,} bytes)")
    out.print(f"state       [{colour}]{escape(state)}[/{colour}]")
    held = s.get("config_not_approved")
    if held:
        out.print(f"config      [yellow]{escape(held['note'])}[/yellow]")
    if "files" in s:
        out.print(f"files       {s['files']} indexed, {s['files_on_disk']} on disk")
        _sessions_human(s.get("sessions") or {})
        out.print(f"chunks      {s['chunks']} chunks, {s['facts']} facts")
        out.print(
            f"versions    schema {s['schema_version']}, chunker {s['chunker_version']}, "
            f"normalizer {s['normalizer_version']}"
        )
        out.print(f"tokenizer   {s['tokenizer']}")
        if s.get("last_sync_at"):
            out.print(f"last sync   {datetime.fromtimestamp(s['last_sync_at']):%Y-%m-%d %H:%M:%S}")
        ch = s["changed_on_disk"]
        for label, key in (("added", "added"), ("modified", "modified"), ("deleted", "deleted")):
            for p in ch[key]:
                out.print(f"  [yellow]{label:<9}[/yellow] {escape(p)}")
        v = s["vectors"]
        backend = (
            f"sqlite-vec {v['sqlite_vec']}"
            if v["sqlite_vec"]
            else f"numpy fallback ({v['fallback_reason']})"
        )
        out.print(
            f"vectors     {escape(str(v['state']))}: {v['indexed']} indexed, {v['pending']} pending; {escape(backend)}"
        )
        emb = v.get("configured_embedder") or v.get("index_embedder")
        if emb:
            out.print(
                f"embedder    {emb['provider']} {escape(emb['model'])} ({emb['dims']} dims, "
                f"sha256 {emb['model_sha256'][:12]}…)"
            )
        about = v.get("model") or {}
        if about.get("languages") or about.get("licence"):
            out.print(
                f"languages   {escape(about.get('languages') or 'unknown')}; "
                f"licence {escape(about.get('licence') or 'unknown')}"
            )
        if v.get("model_path"):
            out.print(f"model       {escape(v['model_path'])}")
    if "links" in s:
        lk = s["links"]
        bad = f"{lk['broken']} broken, {lk['ambiguous']} ambiguous"
        colour = "yellow" if lk["broken"] or lk["ambiguous"] else "dim"
        out.print(
            f"links       {lk['total']} ({lk['resolved']} resolved; [{colour}]{bad}[/{colour}]"
            " — `clawmem check` lists them)"
        )
    if "watcher" in s:
        out.print(f"watcher     {escape(s['watcher'])}")
    if "resident_embedder" in s:
        out.print(f"resident    {escape(describe_resident(s['resident_embedder']))}")
    if "query_path" in s:
        out.print(f"query path  {escape(s['query_path'])}")
    for sc in s.get("scopes", []):
        colour = "dim" if sc["state"] == "ok" else "yellow"
        out.print(
            f"scope       {escape(sc['name'])} {escape(sc['path'])}: "
            f"[{colour}]{escape(sc['state'])}[/{colour}]"
        )
    if s.get("merged_sections"):
        pages = ", ".join(s["merged_sections"])
        out.print(
            f"[yellow]merged[/yellow]      {escape(pages)}: generated sections merged from two "
            "clones; `clawmem reflect` rewrites them"
        )
    skipped = s.get("skipped", []) + s.get("unreadable", [])
    said = {sk["path"] for sk in skipped}
    for p in s.get("problems", []):
        if p["message"].startswith("not indexed: ") and p["path"] in said:
            continue  # a whole file left out: its "skipped" line below says why, once
        out.print(f"[red]problem[/red]     {escape(p['path'])}:{p['line']}: {escape(p['message'])}")
    for sk in skipped:
        out.print(f"[yellow]skipped[/yellow]     {escape(sk['path'])}: {escape(sk['reason'])}")


def _fact_label(h: dict) -> str:
    """``O(c=0.9) @Peter``, or ``W`` alone for a fact about no entity (no trailing space)."""
    c = f"(c={h['confidence']})" if h.get("confidence") is not None else ""
    return " ".join([f"{h['kind']}{c}", *("@" + e for e in h["entities"])])


def fact_line(h: dict) -> str:
    """One listed fact: its citation, kind, confidence, entities, day and statement (rich markup)."""
    when = h.get("timestamp") or "undated"
    line = (
        f"[cyan]{escape(h['citation'])}[/cyan]  [magenta]{escape(_fact_label(h))}[/magenta]"
        f"  [dim]{when}[/dim]\n   {escape(h['content'])}"
    )
    if h.get("superseded_by"):
        line += f"\n   [yellow]superseded by {escape(h['superseded_by'])}[/yellow]"
    return line


def print_fact_list(result: FactList) -> None:
    """``clawmem facts``: the facts, newest first; how many more there are on stderr."""
    d: dict[str, Any] = result.to_dict()
    for note in d["notes"]:
        err.print(f"[dim]{escape(note)}[/dim]")
    if not d["facts"]:
        f = d["filters"]
        filtered = any(v for k, v in f.items() if k != "include_superseded") or not f.get(
            "include_superseded", True
        )
        # A workspace with no fact at all is not a filter problem: say how one is made.
        err.print(
            "no facts match these filters"
            if filtered
            else 'no facts yet: `clawmem retain "…"` adds one to today\'s ## Retain section'
        )
        return
    for h in d["facts"]:
        out.print(fact_line(h))
    if d["total"] > d["shown"]:
        err.print(
            f"[dim]{d['shown']} of {d['total']} facts shown (newest first); "
            "--all or --limit N shows more[/dim]"
        )


def print_forget(result: ForgetResult) -> None:
    """``clawmem forget``: the preview (or what was done) — every line, by file."""
    d: dict[str, Any] = result.to_dict()
    verb = "forgot" if d["applied"] else "would forget"
    lines, said = d["lines"], d["transcript_lines"]
    out.print(f"{verb} {len(lines) + len(said)} line(s):")
    for x in lines:
        out.print(f"  [cyan]{escape(x['citation'])}[/cyan]  {escape(x['text'][:160])}")
    for x in said:
        out.print(
            f"  [cyan]{escape(x['citation'])}[/cyan]  {escape(x['text'][:160])}  [dim](transcript: tombstone)[/dim]"
        )
    for page in d["pages_removed"]:
        out.print(f"  [cyan]{escape(page)}[/cyan]  [dim](entity page, removed whole)[/dim]")
    if d["pages_regenerated"]:
        out.print(f"pages regenerated by reflect: {escape(', '.join(d['pages_regenerated']))}")
    for note in d["reflect_notes"] + d["notes"]:
        err.print(f"[dim]{escape(note)}[/dim]")
    if d["git_commits"]:
        err.print(
            f"git history still holds these lines in {d['git_commits']} commit(s); to rewrite "
            f"it: {escape(d['git_command'])}"
        )


def doctor_human(d: dict) -> None:
    """``clawmem doctor``: one line per check, its fix under it; a summary last."""
    colours = {"ok": "green", "warn": "yellow", "fail": "red", "off": "dim"}
    for f in d["findings"]:
        c = colours.get(f["state"], "")
        out.print(
            f"[{c}]{f['state']:<5}[/{c}] {escape(f['area']):<10} {escape(f['check']):<18} "
            f"{escape(f['detail'])}"
        )
        if f["fix"] and f["state"] in ("warn", "fail"):
            out.print(f"{'':<35}[bold]fix:[/bold] {escape(f['fix'])}")
    n = d["counts"]
    words = f"{n['fail']} broken, {n['warn']} warning(s), {n['ok']} ok"
    out.print(f"clawmem doctor: {'all good' if not n['fail'] and not n['warn'] else words}")
