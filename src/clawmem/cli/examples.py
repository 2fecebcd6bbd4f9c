"""The examples at the end of every command's ``--help`` (and of its section in docs/cli.md).

One or two real command lines per command, written as a user types them in a workspace like
``fixtures/workspace`` (the README's /tmp/notes). tests/test_help_examples.py runs every one of
them there, as written, and checks that each command has some; ``cli.app`` puts them in each
command's epilog. A comment after two spaces and ``#`` says what the line does.
"""

from __future__ import annotations

# Keyed by the command's path without "clawmem": "recall", "hook install".
EXAMPLES: dict[str, tuple[str, ...]] = {
    "index": (
        "clawmem index  # sync what changed, then embed what has no vector",
        "clawmem index --force --no-embed  # rebuild the lexical index from scratch, at once",
    ),
    "recall": (
        'clawmem recall "DEC-0054" -k 2',
        'clawmem recall "where is Peter?" --as-of 2025-11-10 --kind W --json',
    ),
    "status": ("clawmem status", "clawmem status --json"),
    "get": (
        "clawmem get memory/2025-11-12.md --from 1 --lines 8",
        "clawmem get memory/2025-11-17.md#L38-L39  # a citation, as recall prints it",
    ),
    "config": ("clawmem config", "clawmem config --json"),
    "init": (
        "clawmem init ~/notes --git  # a new workspace, in a new git repository",
        "clawmem init  # finish setting up this one (safe to run again, in every clone)",
    ),
    "context": ('clawmem context "how long should my WhatsApp answers to Peter be?"',),
    "retain": (
        'clawmem retain "Peter prefers concise replies on WhatsApp" --kind O -c 0.9 --entity Peter',
        'clawmem retain "The staging cluster moved to Hetzner" --entity payments-service',
    ),
    "facts": (
        "clawmem facts --entity Peter",
        "clawmem facts --kind O --min-confidence 0.9 --json",
    ),
    "history": (
        "clawmem history memory/2025-11-27.md#L26-L26",
        "clawmem history @Peter --json",
    ),
    "correct": (
        'clawmem correct memory/2025-11-27.md#L26-L26 "Peter is in Essaouira until Dec 1, 2025"',
    ),
    "forget": (
        "clawmem forget memory/2025-11-16.md#L12-L12 --dry-run  # the preview; --yes forgets",
        "clawmem forget --entity Kenji --dry-run --json",
    ),
    "export": (
        "clawmem export  # every fact as JSONL on stdout",
        "clawmem export --format okf --out ~/notes-okf",
    ),
    "import": ("clawmem import ~/facts.jsonl --dry-run  # the preview; --yes imports",),
    "entities": ("clawmem entities", "clawmem entities --json"),
    "links": ("clawmem links Peter", "clawmem links bank/entities/The-Castle.md --json"),
    "graph": (
        "clawmem graph  # writes .memory/graph.html, to open in a browser",
        "clawmem graph --format mermaid --no-mentions",
    ),
    "check": ("clawmem check", "clawmem check --json"),
    "merge-driver": (
        "clawmem merge-driver base.md ours.md theirs.md memory/2025-11-27.md  # what git runs",
    ),
    "mcp": (
        "clawmem mcp --read-only  # on stdio, started by the agent",
        "clawmem mcp --http 127.0.0.1:8765  # for remote agents, with tokens",
    ),
    "trust": (
        "clawmem trust --show  # what this clawmem.toml reaches outside the workspace",
        "clawmem trust  # approve it as it is now",
    ),
    "reflect": ("clawmem reflect --dry-run", "clawmem reflect --explain"),
    "flush": (
        "clawmem flush ~/.claude/projects/-home-peter-code-payments-service/"
        "5c2e9f14-8a7b-4c3d-b2e1-9f8a7b6c5d4e.jsonl",
    ),
    "watch": ("clawmem watch", "clawmem watch --poll --reconcile-seconds 10  # a network drive"),
    "doctor": ("clawmem doctor", "clawmem doctor --json --no-model"),
    "hook": ("clawmem hook install", "clawmem hook uninstall"),
    "hook install": ("clawmem hook install", "clawmem hook install --strict"),
    "hook uninstall": ("clawmem hook uninstall",),
    "hook run": ("clawmem hook run  # what the pre-commit hook runs",),
    "hook sync": ("clawmem hook sync post-merge  # what the post-merge hook runs",),
    "token": ("clawmem token create --name laptop", "clawmem token list"),
    "token create": (
        "clawmem token create --name laptop  # read only",
        "clawmem token create --name ci --write --json",
    ),
    "token list": ("clawmem token list", "clawmem token list --json"),
    "token revoke": ("clawmem token revoke laptop",),
    "model": ("clawmem model status", "clawmem model use minilm"),
    "proposals": ("clawmem proposals list", "clawmem proposals list --status all --json"),
    "proposals list": ("clawmem proposals list", "clawmem proposals list --json"),
    "proposals accept": ("clawmem proposals accept 8b3c2df307  # an id from the list",),
    "proposals reject": ("clawmem proposals reject c70c13bb76  # never proposed again",),
    "model status": ("clawmem model status", "clawmem model status --json"),
    "model import": ("clawmem model import ~/models/all-MiniLM-L6-v2 --use",),
    "model use": (
        "clawmem model use minilm  # English only, faster",
        "clawmem model use default  # back to multilingual-e5-small",
    ),
}


def epilog(path: str) -> str | None:
    """The examples of the command ``path`` as its help's last lines, or None."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    # One paragraph: typer's rich help prints its lines as written.
    return "Examples:\n" + "\n".join(f"  {line}" for line in lines)
