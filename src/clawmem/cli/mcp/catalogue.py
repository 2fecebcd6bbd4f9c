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

from clawmem.errors import InputError
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
    run: Callable[[Memory, dict], dict]  # (the workspace, validated arguments) -> JSON object
    writes: bool = False


def _short(description: str) -> dict:
    return {"type": "string", "maxLength": MAX_SHORT_CHARS, "description": description}


def _search(mem: Memory, a: dict) -> dict:
    kind = a.get("kind")
    res = mem.recall(
        a["query"],
        k=a.get("k"),
        mode=a.get("mode", "hybrid"),
        since=a.get("since"),
        until=a.get("until"),
        kind=[kind] if isinstance(kind, str) else kind,
        entity=a.get("entity"),
        path=a.get("path"),
        as_of=a.get("as_of"),
        budget=a.get("budget"),
        source=a.get("source"),
        expand=bool(a.get("expand", False)),
        min_relevance=a.get("min_relevance"),
    )
    return res.to_dict()


def _get(mem: Memory, a: dict) -> dict:
    # A citation from memory_search works as it is: memory/2025-11-27.md#L12-L20.
    return mem.get(a["path"], from_line=a.get("from"), lines=a.get("lines")).to_dict()


def _retain(mem: Memory, a: dict) -> dict:
    try:
        return mem.retain(
            a["text"],
            kind=a.get("kind", "W"),
            confidence=a.get("confidence"),
            entities=a.get("entities") or [],
            day=a.get("date"),
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


def _status(mem: Memory, a: dict) -> dict:
    return mem.status().to_dict()


def _entities(mem: Memory, a: dict) -> dict:
    rows = [r.to_dict() for r in mem.entities()]
    return {"entities": rows, "count": len(rows)}


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
                "since": _short(
                    "Only what was recorded on or after this: 30d, 2w, 3m, 1y, 2025-11, 2025-11-27."
                ),
                "until": _short("Only what was recorded on or before this; same forms as since."),
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
                "as_of": _short(
                    "YYYY-MM-DD: answer as of that day (later facts are ignored, facts superseded by "
                    "then are marked)."
                ),
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100_000,
                    "description": "Pack the best results into about this many tokens.",
                },
                "path": _short(
                    "Only files under this workspace path prefix, e.g. memory/ or bank/."
                ),
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
                        "0.07 for hybrid recall with the default model, 0.01 lexical); 0 returns "
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
                    "description": "The fact, one self-contained statement, one line.",
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
store secrets or transient chatter.
"""


def tools(read_only: bool = False) -> list[ToolSpec]:
    return [t for t in TOOLS if not (read_only and t.writes)]
