"""``clawmem init``: the files of a new workspace, created without touching what is already there.

Every step is idempotent: a file that exists is kept byte for byte, except ``.gitignore`` and
``.gitattributes``, which get clawmem's lines appended when they lack them (a person's lines
stay as they were). ``init_workspace`` returns what it did, step by step, for the CLI to tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clawmem.config import CONFIG_FILE, trust
from clawmem.files.atomic import write_atomic
from clawmem.markdown.workspace import INDEX_DIR

# The guidance is an HTML comment: a reader of the file sees it, recall never does
# (markdown/searchable.py drops comments), so a new workspace holds no memory until one is written.
MEMORY_MD = """\
# Memory

<!-- Durable facts and preferences, the small core an agent reads first. Keep it short: the
day's notes go in memory/YYYY-MM-DD.md (`clawmem retain` writes facts there), pages about people
and projects in bank/entities/ (`clawmem reflect` writes them). Write below this comment. -->
"""

CONFIG_TOML = """\
# clawmem settings for this workspace. Every line is commented out: the defaults apply.
# Environment variables override this file (CLAWMEM_K=8, ...); `clawmem config` shows the
# values in effect and where each came from. Reference: docs/cli.md.

# The embedding model: "" is the built-in multilingual-e5-small, "minilm" the faster
# English-only all-MiniLM-L6-v2, or the path of a GGUF embedding model. `clawmem model use`
# switches it.
# model = ""

# Results per recall and the length of each snippet.
# k = 6
# snippet_chars = 700

# Folders outside memory/ and bank/ to index too (paths relative to this folder).
# extra_paths = ["notes"]

# Half-life in days for ranking older dated notes lower (0: off).
# decay_half_life_days = 0

# Conversations to remember: your agent's transcript folders (docs/sessions.md).
# [sessions]
# paths = ["~/.openclaw/agents/main/sessions"]

# A clone that agents write to (over MCP, from cron): commit each fact retained at once;
# docs/operations.md has the timer that pulls and pushes.
# [git]
# autocommit = true
"""

GITIGNORE_LINES = (
    "# clawmem's index is derived from the Markdown: every clone builds its own",
    f"{INDEX_DIR}/",
)
# A path pattern per tree clawmem writes; the merge driver picks the rule by path and content.
GITATTRIBUTES_LINES = (
    "# clawmem: daily logs merge as append-only, generated sections never conflict",
    "memory/** merge=clawmem",
    "bank/** merge=clawmem",
    "# the forgotten lines and who wrote each fact: both sides' entries are kept",
    ".clawmem/forgotten merge=union",
    ".clawmem/writers merge=union",
    # lines added to the core at the same place on two clones are both kept
    "/MEMORY.md merge=clawmem",
    "/memory.md merge=clawmem",
)


@dataclass(frozen=True)
class Step:
    path: str  # relative to the workspace ("memory/" for a folder)
    action: str  # "created", "exists" (kept as it was), "updated" (lines appended)
    detail: str = ""


def _ignores_index(text: str) -> bool:
    names = {line.strip() for line in text.splitlines()}
    return bool(names & {INDEX_DIR, f"{INDEX_DIR}/", f"/{INDEX_DIR}", f"/{INDEX_DIR}/"})


def _missing_lines(text: str, wanted: tuple[str, ...]) -> list[str]:
    have = {line.strip() for line in text.splitlines()}
    rules = [line for line in wanted if not line.startswith("#") and line not in have]
    if not rules:
        return []
    return [line for line in wanted if line.startswith("#")] + rules


def _append_lines(path: Path, rel: str, wanted: tuple[str, ...], label: str) -> Step:
    if path.is_symlink():  # never written through: it may lead out of the workspace
        return Step(rel, "exists", "a link, left alone")
    if not path.exists():
        write_atomic(path, "\n".join(wanted) + "\n")
        return Step(rel, "created", label)
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    if rel == ".gitignore" and _ignores_index(text):
        return Step(rel, "exists", label)
    lines = _missing_lines(text, wanted)
    if not lines:
        return Step(rel, "exists", label)
    eol = "\r\n" if "\r\n" in text else "\n"
    prefix = text if not text or text.endswith(("\n", "\r")) else text + eol
    if prefix.strip():
        prefix += eol
    addition = eol.join(lines) + eol
    write_atomic(path, (prefix + addition).encode("utf-8", "surrogateescape"))
    return Step(rel, "updated", "added " + ", ".join(x for x in lines if not x.startswith("#")))


def init_workspace(root: Path) -> list[Step]:
    """Create the workspace at ``root`` (made if missing); return what was done."""
    steps: list[Step] = []
    root.mkdir(parents=True, exist_ok=True)
    for rel in ("memory", "bank", "bank/entities"):
        folder = root / rel
        if (root / rel.split("/")[0]).is_symlink() or folder.is_symlink():
            # Never created through a link (a cloned repository's may lead anywhere).
            steps.append(Step(rel + "/", "exists", "a link, left alone"))
        elif folder.is_dir():
            steps.append(Step(rel + "/", "exists"))
        else:
            folder.mkdir(parents=True)
            steps.append(Step(rel + "/", "created"))
    for rel, text, label in (
        ("MEMORY.md", MEMORY_MD, "the core: durable facts and preferences"),
        (CONFIG_FILE, CONFIG_TOML, "settings, all commented out"),
    ):
        path = root / rel
        core_alias = rel == "MEMORY.md" and (root / "memory.md").is_file()
        if path.exists() or path.is_symlink() or core_alias:
            steps.append(Step("memory.md" if core_alias else rel, "exists"))
            continue
        write_atomic(path, text)
        if rel == CONFIG_FILE:  # the user's own file: approved on this machine (config/trust.py)
            trust.approve(root, text.encode("utf-8"))
        steps.append(Step(rel, "created", label))
    steps.append(
        _append_lines(
            root / ".gitignore", ".gitignore", GITIGNORE_LINES, "keeps .memory/ out of git"
        )
    )
    steps.append(
        _append_lines(
            root / ".gitattributes", ".gitattributes", GITATTRIBUTES_LINES, "clawmem's merge rules"
        )
    )
    return steps
