"""The MCP tools: each tool's name, JSON schema, description and handler, and the server's
instructions.

Plain data and plain functions over a ``Memory``: nothing here imports the SDK, so the catalogue can
be read and tested without the protocol. A tool's schema is both what the agent sees and what its
arguments are checked against (``clawmem.cli.mcp.arguments``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.cli.mcp import access
from clawmem.cli.mcp.access import TOKEN_HINT, Grant
from clawmem.errors import InputError, UsageError
from clawmem.markdown.kinds import KINDS
from clawmem.recall.pipeline import KINDS as RECALL_KINDS
from clawmem.recall.pipeline import MODES, SOURCES

if TYPE_CHECKING:
    from clawmem.memory import Memory

MAX_QUERY_CHARS = 4_000
MAX_TEXT_CHARS = 4_000
MAX_SHORT_CHARS = 200
# A required text must say something: blank is refused as empty ("'query' is empty").
NOT_BLANK = r"\S"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    schema: dict
    # (the workspace, validated arguments, what the request may reach) -> JSON object
    run: Callable[[Memory, dict, Grant], dict]
    writes: bool = False


def _short(description: str) -> dict:
    return {"type": "string", "maxLength": MAX_SHORT_CHARS, "description": description}


# The filters memory_search and memory_list share, described once (as `clawmem recall` and
# `clawmem facts` share their options).
_WHEN = {
    "since": _short(
        "Only what was recorded on or after this: 30d, 2w, 3m, 1y, 2025-11, 2025-11-27."
    ),
    "until": _short("Only what was recorded on or before this; same forms as since."),
    "as_of": _short(
        "YYYY-MM-DD: answer as of that day (later facts are ignored, facts superseded by then "
        "are marked)."
    ),
}
_WHERE = {"path": _short("Only files under this workspace path prefix, e.g. memory/ or bank/.")}


def _kinds(a: dict) -> list[str] | None:
    kind = a.get("kind")  # one kind or several
    return [kind] if isinstance(kind, str) else kind


def _search(mem: Memory, a: dict, grant: Grant) -> dict:
    scopes = access.search_scopes(grant, [entry.partition("=")[0] for entry in mem.cfg.read_scopes])
    res = mem.recall(
        a["query"],
        k=a.get("k"),
        mode=a.get("mode", "hybrid"),
        since=a.get("since"),
        until=a.get("until"),
        kind=_kinds(a),
        entity=a.get("entity"),
        path=a.get("path"),
        as_of=a.get("as_of"),
        budget=a.get("budget"),
        source=access.search_source(grant, a.get("source")),
        expand=bool(a.get("expand", False)),
        min_relevance=a.get("min_relevance"),
        scopes=scopes,
    )
    return res.to_dict()


def _get(mem: Memory, a: dict, grant: Grant) -> dict:
    # A citation from memory_search works as it is: memory/2025-11-27.md#L12-L20.
    access.check_get(grant, a["path"])
    return mem.get(a["path"], from_line=a.get("from"), lines=a.get("lines")).to_dict()


def _retain(mem: Memory, a: dict, grant: Grant) -> dict:
    try:
        return mem.retain(
            a["text"],
            kind=a.get("kind"),
            confidence=a.get("confidence"),
            entities=a.get("entities") or [],
            day=a.get("date"),
            writer="mcp",
        ).to_dict()
    except InputError as exc:
        if exc.param != "allow_secret":
            raise
        # The tool has no argument to insist with (docs/agents.md): an agent is never the one
        # to decide that a credential goes into files that are often committed. A person can.
        raise InputError(
            exc.message,
            hint="retain it without the credential (say where it is kept, not what it is); "
            "a person can store one with `clawmem retain --allow-secret`",
        ) from None


def _list(mem: Memory, a: dict, grant: Grant) -> dict:
    return mem.facts(
        entity=a.get("entity"),
        kind=_kinds(a),
        since=a.get("since"),
        until=a.get("until"),
        as_of=a.get("as_of"),
        path=a.get("path"),
        min_confidence=a.get("min_confidence"),
        include_superseded=not a.get("current", False),
        limit=a.get("limit", 50),
    ).to_dict()


def _update(mem: Memory, a: dict, grant: Grant) -> dict:
    return mem.correct(
        a["citation"],
        a["text"],
        kind=a.get("kind"),
        confidence=a.get("confidence"),
        entities=a.get("entities"),
        writer=f"mcp:{grant.who}",
    ).to_dict()


def _forget(mem: Memory, a: dict, grant: Grant) -> dict:
    cited = a.get("citations") or []
    if not grant.sessions and any(c.startswith("sessions/") for c in cited):
        raise UsageError("this token does not reach conversation transcripts", hint=TOKEN_HINT)
    return mem.forget(
        a.get("citations") or [], entity=a.get("entity"), dry_run=not a.get("confirm", False)
    ).to_dict()


def _history(mem: Memory, a: dict, grant: Grant) -> dict:
    return mem.history(a["target"]).to_dict()


def _files(mem: Memory, a: dict, grant: Grant) -> dict:
    return {"result": mem.memory_tool(writer=f"mcp:{grant.who}").handle(a)}


def _status(mem: Memory, a: dict, grant: Grant) -> dict:
    data = mem.status().to_dict()
    if data.get("scopes") and grant.scopes is not None:  # only the scopes the request reaches
        data["scopes"] = [s for s in data["scopes"] if grant.reaches_scope(s["name"])]
    if not grant.sessions:  # nor where transcripts are read from
        data["sessions"] = {**data["sessions"], "folders": []}
    return data


def _entities(mem: Memory, a: dict, grant: Grant) -> dict:
    rows = [r.to_dict() for r in mem.entities()]
    return {"entities": rows, "count": len(rows)}


def _proposals(mem: Memory, a: dict, grant: Grant) -> dict:
    status = a.get("status", "pending")
    rows = [r.to_dict() for r in mem.list_proposals(status=None if status == "all" else status)]
    if not grant.sessions:  # what transcripts said stays with the requests that reach them
        rows = [r for r in rows if not r["source"].startswith("sessions/")]
    return {"proposals": rows, "count": len(rows)}


def _review(accept: bool) -> Callable[[Memory, dict, Grant], dict]:
    def run(mem: Memory, a: dict, grant: Grant) -> dict:
        # Matched as accept and reject match it (a prefix of the whole key, up to 64 digits):
        # an id longer than the ten shown matched no short id, and passed unchecked.
        wanted = a["id"].lower()
        hits = [r for r in mem.list_proposals(status=None) if r.proposal.key.startswith(wanted)]
        if not grant.sessions and any(r.proposal.source.startswith("sessions/") for r in hits):
            raise InputError(f"no proposal {a['id']!r}", hint="memory_proposals lists them")
        done = mem.accept_proposal(a["id"]) if accept else mem.reject_proposal(a["id"])
        return done.to_dict()

    return run


_PROPOSAL_ID = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "pattern": "^[0-9a-fA-F]{4,64}$",
            "description": "The proposal's id from memory_proposals (or a unique prefix).",
        }
    },
    "required": ["id"],
    "additionalProperties": False,
}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_search",
        title="Search long-term memory",
        description=(
            "Search the user's long-term memory (Markdown notes, daily logs, entity pages and "
            "retained facts) and get the best passages with citations. Use it before answering "
            "anything about people, projects, decisions, preferences or past events. Lexical and "
            "semantic at once: exact names and identifiers (DEC-0054, payment_processor) and "
            "paraphrases both work, in any language. Each result has `citation` "
            "(path#Lstart-Lend, pass it to memory_get to read more), `snippet`, `score`, "
            "`timestamp` (the day it was recorded), `relevance` (the estimated probability, 0-1, that "
            "it is evidence for the query: below 0.1 it most likely is not), and for a retained "
            "fact `kind`, `content`, "
            "`entities`, `confidence`, `superseded_by`; a result reached through a link (expand) has "
            "`via`. When no result is relevant enough (none reaches min_relevance) there are no "
            "results and `empty_reason` says so with the best relevance: memory has nothing on it, "
            "answer without it. `empty_reason` also says why nothing was found otherwise; "
            "`degraded` says what was off (for example vectors). The JSON is the same as "
            "`clawmem recall --json`."
        ),
        schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": NOT_BLANK,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What to look for: a question, names, identifiers or keywords.",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "How many results (default 6).",
                },
                **_WHEN,
                "kind": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(RECALL_KINDS)},
                    "description": (
                        "Only these kinds: W world fact, B the agent's own experience, O opinion, "
                        "S summary, chunk (plain notes that are not facts)."
                    ),
                },
                "entity": _short(
                    "Only facts mentioning this entity (Peter or @Peter), plus its page."
                ),
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100_000,
                    "description": "Pack the best results into about this many tokens.",
                },
                **_WHERE,
                "mode": {
                    "type": "string",
                    "enum": list(MODES),
                    "description": "hybrid (default), lexical only, or vector only.",
                },
                "source": {
                    "type": "string",
                    "enum": list(SOURCES),
                    "description": (
                        "all (default), memory (the notes) or sessions (what was said in "
                        "conversations, when transcripts are configured)."
                    ),
                },
                "expand": {
                    "type": "boolean",
                    "description": (
                        "Also return notes one link away ([[wikilinks]], Markdown links, "
                        "@mentions) from the best hits, after them; each carries `via`: the link "
                        "that reached it."
                    ),
                },
                "min_relevance": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": (
                        "Return no results unless one reaches this relevance (default: the "
                        "workspace's min_relevance setting, else the fitted model's threshold, "
                        "0.03 for hybrid recall with the default model, 0.01 lexical); 0 returns "
                        "every result however weak."
                    ),
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        run=_search,
    ),
    ToolSpec(
        name="memory_get",
        title="Read lines of a memory file",
        description=(
            "Read lines of a memory file in the workspace, e.g. to see the context around a "
            "memory_search citation. `path` is a workspace-relative Markdown file "
            "(memory/2025-11-27.md, MEMORY.md, bank/entities/Peter.md) or a citation "
            "(memory/2025-11-27.md#L12-L20). Files outside the workspace are refused. Returns "
            "`text`, `citation`, `from`, `to` and `total_lines`."
        ),
        schema={
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": NOT_BLANK,
                    "maxLength": 1_000,
                    "description": "Workspace-relative file, or a citation path#Lstart-Lend.",
                },
                "from": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line, 1-based (default 1, or the citation's start).",
                },
                "lines": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines (default: to the end, or the citation's range).",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        run=_get,
    ),
    ToolSpec(
        name="memory_retain",
        title="Remember a fact",
        description=(
            "Store one durable, self-contained fact in long-term memory: it is appended to the "
            "day's log (memory/YYYY-MM-DD.md) under '## Retain' and is searchable as soon as this "
            "returns. Write it so it makes sense on its own months later (names, not pronouns; "
            "dates where they matter). Kinds: W objective fact about the world, B something you "
            "(the agent) did or experienced, O an opinion or preference with a confidence, S a "
            "summary. Name the people and things it is about in `entities`. An identical fact is "
            "not stored twice (`stored` false, `duplicate_of` its citation). Text that looks "
            "like a password, key or token is refused. Returns the stored line and its citation."
        ),
        schema={
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": NOT_BLANK,
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "The fact, one self-contained statement, one line; or the "
                    'fact as a Retain line ("O(c=0.9) @Peter: prefers short replies").',
                },
                "kind": {
                    "type": "string",
                    "enum": list(KINDS),
                    "description": "W world (default), B experience, O opinion, S summary.",
                },
                "entities": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": MAX_SHORT_CHARS},
                    "maxItems": 20,
                    "description": 'Who or what it is about, e.g. ["Peter", "warelay"].',
                },
                "confidence": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Opinions (kind O) only: how sure, 0.0 to 1.0.",
                },
                "date": _short("The day it belongs to, YYYY-MM-DD (default today)."),
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        run=_retain,
        writes=True,
    ),
    ToolSpec(
        name="memory_status",
        title="Memory index status",
        description=(
            "The state of the memory index: files and chunks indexed, files changed on disk since "
            "the last sync, vectors (model, indexed, pending, or why they are off), the watcher, "
            "and malformed facts. Use it when search results look stale or degraded."
        ),
        schema={"type": "object", "properties": {}, "additionalProperties": False},
        run=_status,
    ),
    ToolSpec(
        name="memory_entities",
        title="Entities in memory",
        description=(
            "Who and what the remembered facts are about: each entity with its number of facts, "
            "the day it was last mentioned, and its page (bank/entities/NAME.md) if it has one. "
            "Use the names with memory_search's `entity` filter."
        ),
        schema={"type": "object", "properties": {}, "additionalProperties": False},
        run=_entities,
    ),
    ToolSpec(
        name="memory_list",
        title="List facts",
        description=(
            "List remembered facts without a query, newest first: everything about an entity, "
            "every opinion above a confidence, what was recorded in a period. Each fact has its "
            "citation, kind, entities, confidence, day and `superseded_by` (a newer fact that "
            "replaced it). Use memory_search to find facts by meaning instead."
        ),
        schema={
            "type": "object",
            "properties": {
                "entity": _short("Only facts about this entity (Peter or @Peter)."),
                "kind": {"type": "string", "enum": list(KINDS), "description": "W, B, O or S."},
                **_WHEN,
                **_WHERE,
                "min_confidence": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Only opinions at least this confident.",
                },
                "current": {"type": "boolean", "description": "Leave out superseded facts."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 500,
                    "description": "At most this many (default 50).",
                },
            },
            "additionalProperties": False,
        },
        run=_list,
    ),
    ToolSpec(
        name="memory_history",
        title="History of a fact or entity",
        description=(
            "How a fact came to be: the statements it replaced and that replaced it (by its "
            "citation), or every fact about an entity (@Name), oldest first, each with who wrote "
            "it (retain, correct, mcp, import, or a hand edit with its git commit)."
        ),
        schema={
            "type": "object",
            "properties": {"target": _short("A fact's citation (path#Lx-Lx) or an @entity.")},
            "required": ["target"],
            "additionalProperties": False,
        },
        run=_history,
    ),
    ToolSpec(
        name="memory_update",
        title="Correct a fact",
        description=(
            "Correct a wrong fact: the right statement is stored today and marked as superseding "
            "the old one (given by its citation from memory_search or memory_list). The old line "
            "stays for the record; searches show the correction first. Kind, entities and "
            "confidence default to the old fact's."
        ),
        schema={
            "type": "object",
            "properties": {
                "citation": _short("The wrong fact's citation, e.g. memory/2025-11-27.md#L26-L26."),
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": NOT_BLANK,
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "The right statement, one line.",
                },
                "kind": {
                    "type": "string",
                    "enum": list(KINDS),
                    "description": "W, B, O or S (default: the old fact's).",
                },
                "entities": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": MAX_SHORT_CHARS},
                    "maxItems": 20,
                    "description": "Who or what it is about (default: the old fact's).",
                },
                "confidence": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Opinions: how sure (default: the old one's).",
                },
            },
            "required": ["citation", "text"],
            "additionalProperties": False,
        },
        run=_update,
        writes=True,
    ),
    ToolSpec(
        name="memory_forget",
        title="Forget lines",
        description=(
            "Forget lines for good, by citation or by entity. Without `confirm` it only returns "
            "the preview: exactly which lines of which files would go. With `confirm: true` the "
            "lines are blanked in the Markdown, dropped from the index and kept out of every "
            "rebuild, merge and page. Show the user the preview before confirming."
        ),
        schema={
            "type": "object",
            "properties": {
                "citations": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": MAX_SHORT_CHARS},
                    "maxItems": 50,
                    "description": "Citations of the lines to forget (path#Lx-Ly).",
                },
                "entity": _short("Forget an entity: its facts, @mentions, links and page."),
                "confirm": {"type": "boolean", "description": "Apply (default: preview only)."},
            },
            "additionalProperties": False,
        },
        run=_forget,
        writes=True,
    ),
    ToolSpec(
        name="memory_files",
        title="Memory files (Claude's memory tool)",
        description=(
            "The commands of Claude's memory tool over a /memories folder kept in this memory "
            "(bank/memories/): view, create, str_replace, insert, delete, rename. Files are "
            "redacted, indexed at once and searchable with memory_search."
        ),
        schema={
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
                    "description": "The memory tool's command.",
                },
                "path": _short("/memories/…"),
                "file_text": {
                    "type": "string",
                    "maxLength": 1_000_000,
                    "description": "create: the file's text.",
                },
                "old_str": {
                    "type": "string",
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "str_replace: the text to replace (once in the file).",
                },
                "new_str": {
                    "type": "string",
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "str_replace: what replaces it.",
                },
                "insert_line": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "insert: the line after which to insert (0: at the top).",
                },
                "insert_text": {
                    "type": "string",
                    "maxLength": MAX_TEXT_CHARS,
                    "description": "insert: the text.",
                },
                "old_path": _short("/memories/…"),
                "new_path": _short("/memories/…"),
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "maxItems": 2,
                    "description": "view: [first, last] lines (last -1: to the end).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
        run=_files,
        writes=True,
    ),
    ToolSpec(
        name="memory_proposals",
        title="Facts proposed for review",
        description=(
            "Facts clawmem noticed in conversations and daily notes (at flush and reflect) and "
            "proposes to remember; none is a fact until accepted. Each has `id`, `line_text` "
            "(the Retain line), `kind`, `entities`, `confidence`, `date`, `source` (the line it "
            "was said on, for memory_get) and `status`. Show them to the user and accept or "
            "reject only what they confirm."
        ),
        schema={
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["pending", "accepted", "rejected", "all"],
                    "description": "Which proposals (default pending).",
                }
            },
            "additionalProperties": False,
        },
        run=_proposals,
    ),
    ToolSpec(
        name="memory_proposal_accept",
        title="Accept a proposed fact",
        description=(
            "Keep a proposed fact: its line is retained into its day's log with the citation of "
            "what it was proposed from. Returns the citation of the stored fact."
        ),
        schema=_PROPOSAL_ID,
        run=_review(True),
        writes=True,
    ),
    ToolSpec(
        name="memory_proposal_reject",
        title="Reject a proposed fact",
        description=(
            "Drop a proposed fact for good: the same line is never proposed again, whatever "
            "conversation or note it is seen in next."
        ),
        schema=_PROPOSAL_ID,
        run=_review(False),
        writes=True,
    ),
)

INSTRUCTIONS = """\
clawmem is this user's long-term memory: a folder of Markdown notes (MEMORY.md, daily logs in \
memory/, entity pages in bank/entities/) searched offline.
- Before answering about people, projects, decisions, preferences or past events, call \
memory_search; cite what you use by its citation (path#Lstart-Lend). Read around a hit with \
memory_get.
- When you learn something durable (a decision, a preference, a fact about a person or project, \
something you did that worked or failed), store it with memory_retain: one self-contained \
statement, the right kind (W/B/O/S), the entities it is about, a confidence for opinions. Do not \
store secrets or transient chatter. When a stored fact is wrong, correct it with memory_update \
(its citation and the right statement) rather than storing a contradiction.
"""


def tools(read_only: bool = False) -> list[ToolSpec]:
    return [t for t in TOOLS if not (read_only and t.writes)]
