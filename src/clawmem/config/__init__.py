"""Effective configuration: defaults, then ``clawmem.toml``, then ``CLAWMEM_*`` environment variables.

Every value remembers where it came from so ``clawmem config`` can show it. Settings of the file
that lead outside the workspace wait for the user's approval of the file (``config/trust.py``).
Defaults follow the
design seeds (chunks of ~400 tokens with 80 overlap, 6 results, 700-character snippets, candidate
80 candidates per search leg).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from clawmem.config import trust
from clawmem.config.trust import CONFIG_FILE
from clawmem.errors import ConfigError


@dataclass(frozen=True)
class Config:
    # Chunking (token counts are estimated as characters / 4, like the seeds).
    chunk_tokens: int = 400
    chunk_overlap: int = 80
    # Recall.
    k: int = 6
    snippet_chars: int = 700
    # Units each search leg brings to fusion, whatever k (so -k 3 is the first 3 of -k 10).
    candidates: int = 80
    # recall returns no hits when none of the first ten reaches this relevance (the estimated
    # probability that a hit is evidence; recall/relevance.py); 0 turns abstention off. Unset,
    # each fitted model's own threshold (relevance.Model.threshold): the largest that keeps 99.5%
    # of each tuning set's answerable questions answered, 0.03 for the default model's hybrid
    # recall, 0.01 for lexical recall, whose probabilities run lower (python -m
    # benchmarks.relevance, docs/benchmarks.md).
    min_relevance: float | None = None
    fusion: str = "rrf"  # "rrf" | "weighted" (OpenClaw's 0.7 vector + 0.3 text)
    rrf_k: int = 20  # = fusion.Ranking().rrf_k, chosen on the REALTALK tuning split
    # Half-life in days for the age decay of dated notes; 0 turns decay off. Evergreen files never decay.
    decay_half_life_days: float = 0.0
    # Workspace scanning bounds; anything over them is skipped and reported by name.
    extra_paths: tuple[str, ...] = ()
    max_file_bytes: int = 5_000_000
    max_files: int = 50_000
    # Embeddings. An empty model means the built-in multilingual-e5-small, converted on first use;
    # "minilm" the built-in English all-MiniLM-L6-v2; anything else is the path of a GGUF.
    model: str = ""
    query_prefix: str | None = None
    document_prefix: str | None = None
    embed_batch: int = 32
    # Threads for bulk embedding; 0 picks by measurement (see embedders/llama.py).
    embed_threads: int = 0
    vectors: bool = True
    # A process that has not loaded the model asks the user's resident embedder for its vectors
    # (embedders/resident/client.py), starting it if none runs; it exits after this many idle minutes.
    resident_embedder: bool = True
    resident_idle_minutes: float = 10.0
    # A process whose query finds no watcher and no resident embedder ready embeds it with the
    # NumPy query path (embedders/query_path.py) instead of waiting for a model to load.
    query_path: bool = True
    # Vectors of texts no longer in the index are kept for reuse up to this many entries.
    cache_max_entries: int = 20_000
    # Read commands sync changed files first; embedding more than this many chunks is left to `index`.
    sync_on_read: bool = True
    lazy_embed_limit: int = 64
    # watch
    debounce_ms: int = 1500
    reconcile_seconds: int = 30
    # Agent session transcripts (``[sessions]`` in clawmem.toml; see docs/sessions.md): the folders
    # of .jsonl files to index beside the Markdown, the only places outside the workspace clawmem
    # reads. A session with no new line for ``session_idle_minutes`` is finished (reflect writes
    # its episode). The watcher syncs a growing transcript once this many bytes or messages are
    # new, or when it goes quiet (the seeds' delta thresholds).
    session_paths: tuple[str, ...] = ()
    session_idle_minutes: int = 60
    session_batch_bytes: int = 100_000
    session_batch_messages: int = 50
    # Episode pages of conversations that began more than this many days ago are archived (or
    # pruned) by reflect; 0 keeps them for ever (reflect/retention.py; seed 004 suggests 90).
    session_retention_days: int = 0
    session_retention: str = "archive"  # "archive" (.clawmem/archive/episodes/) or "prune"
    # Other workspaces this one reads (``[scopes]`` in clawmem.toml: ``team = "~/team-notes"``),
    # each as "NAME=PATH": recall searches them too, `get NAME:path` reads them, nothing writes
    # to them (docs/workspace.md).
    read_scopes: tuple[str, ...] = ()
    # `clawmem mcp --http`: where each request's line goes (docs/agents.md; relative to the
    # workspace; "-" stderr, "" none), whether it holds the question (it is the user's text), and
    # the web origins whose pages may call the server (CORS; "*" any).
    http_access_log: str = ".memory/access.log"
    http_log_queries: bool = False
    http_cors_origins: tuple[str, ...] = ()
    # ``[git] autocommit = true``: each fact retained is committed at once (files/gitcommit.py),
    # for a clone written by agents that hold none of their own (docs/operations.md).
    git_autocommit: bool = False
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # The settings of clawmem.toml ignored because they lead outside the workspace and the user
    # has not approved the file on this machine (config/trust.py), as a person would write them.
    held_back: tuple[str, ...] = field(default=(), compare=False)

    @property
    def chunk_chars(self) -> int:
        return self.chunk_tokens * 4

    @property
    def overlap_chars(self) -> int:
        return self.chunk_overlap * 4

    def items(self) -> list[tuple[str, Any, str]]:
        """(name, value, source) for every setting, in declaration order."""
        out = []
        for f in fields(self):
            if f.name in _NOT_SETTINGS:
                continue
            out.append((f.name, getattr(self, f.name), self.sources.get(f.name, "default")))
        return out


_NOT_SETTINGS = frozenset({"sources", "held_back"})


def _settable_fields() -> dict[str, Any]:
    return {f.name: f for f in fields(Config) if f.name not in _NOT_SETTINGS}


# Settings for which 0 means nothing sensible (``embed_batch = 0`` left every vector pending,
# forever): each must be at least 1. The others take any non-negative value (0 turns a feature
# off: decay, the lazy embedding, the cache).
AT_LEAST_ONE = frozenset(
    {
        "k",
        "snippet_chars",
        "candidate_multiplier",
        "rrf_k",
        "max_file_bytes",
        "max_files",
        "embed_batch",
        "reconcile_seconds",
        "session_batch_bytes",
        "session_batch_messages",
    }
)


# A list in an environment variable is split on os.pathsep (":"), except where its items hold
# that character themselves: web origins (https://app.example) are separated by commas.
LIST_SEPARATORS = {"http_cors_origins": ","}
# A clawmem.toml larger than this is refused: settings take a few KB, and every command reads it.
MAX_CONFIG_BYTES = 1 << 20


class _OutOfRange(ValueError):
    """A number of the right type below the setting's least value (``k = 0``)."""


def _coerce(
    name: str, raw: Any, default: Any, origin: str, *, typed: bool = False, written: str = ""
) -> Any:
    """Convert a TOML or environment value to the type of the default, or explain the problem.

    ``typed``: the value comes from TOML, which has types: it must already be of the setting's
    type (``k = "6"`` or ``vectors = "no"`` is a mistake to point out, not to guess at);
    environment variables are text and are parsed. ``written``: the setting as the file spells
    it (``[sessions] paths``), for the message; else ``name``."""
    shown_default = _shown(default)
    if default is None and _NUMBER_OR_UNSET.get(name) is not None:
        # unset by default (decided elsewhere), a number when set: parsed as that number
        default, shown_default = _NUMBER_OR_UNSET[name](), "unset"
    expected = type(default) if default is not None else str
    kind = "list of strings" if isinstance(default, tuple) else expected.__name__
    try:
        if typed and not _toml_type_fits(raw, default):
            raise TypeError
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError
        if isinstance(default, tuple):
            if isinstance(raw, list):
                return tuple(str(x) for x in raw)
            sep = LIST_SEPARATORS.get(name, os.pathsep)
            return tuple(p.strip() for p in str(raw).split(sep) if p.strip())
        if isinstance(default, int):
            if isinstance(raw, bool):
                raise ValueError
            value = int(raw)
            if value < (1 if name in AT_LEAST_ONE else 0):
                raise _OutOfRange
            return value
        if isinstance(default, float):
            number = float(raw)
            if not math.isfinite(number):  # TOML spells inf and nan
                raise ValueError
            if number < 0:
                raise _OutOfRange
            return number
        return str(raw)
    except (TypeError, ValueError, OverflowError) as exc:  # int(inf) overflows
        least = "a positive" if name in AT_LEAST_ONE else "a non-negative"
        shown = "a" if kind in ("str", "list of strings", "bool") else least
        label = written or name
        # `k = 0` is an int: say what is wrong with it, not that it is not one.
        problem = (
            f"is not {least} {kind}" if isinstance(exc, _OutOfRange) else f"is not a valid {kind}"
        )
        raise ConfigError(
            f"{origin}: {label} = {_shown(raw)} {problem}",
            hint=f"set {label} to {shown} {kind} (default {shown_default}), or remove it to use "
            "the default",
        ) from None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        value = list(value)
    return repr(value)


# Settings whose default is None (unset: decided elsewhere) but whose value is a number when
# set, read from their annotations ("float | None" -> float), so a new one needs no list here.
_NUMBER_OR_UNSET: dict[str, type] = {
    f.name: kind
    for f in fields(Config)
    for kind in (int, float)
    if str(f.type).replace(" ", "") in (f"{kind.__name__}|None", f"None|{kind.__name__}")
}


def _toml_type_fits(raw: Any, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(raw, bool)
    if isinstance(default, tuple):
        return isinstance(raw, list) and all(isinstance(x, str) for x in raw)
    if isinstance(default, int):
        return isinstance(raw, int) and not isinstance(raw, bool)
    if isinstance(default, float):
        return isinstance(raw, (int, float)) and not isinstance(raw, bool)
    return isinstance(raw, str)


def _key_lines(text: str) -> dict[str, int]:
    """The line of each setting in a clawmem.toml (its name as ``Config`` spells it): a TOML
    parser gives values, not where they were written, and an error names the line to fix."""
    import re

    lines: dict[str, int] = {}
    table = ""
    for n, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[\s*([A-Za-z0-9_.-]+)\s*\]", line)
        if head:
            table = head.group(1)
            continue
        key = re.match(r"""\s*["']?([A-Za-z0-9_-]+)["']?\s*=""", line)
        if key:
            name = key.group(1)
            if table == "sessions":
                name = SESSION_KEYS.get(name, name)
            elif table == "git":
                name = GIT_KEYS.get(name, name)
            lines.setdefault(name, n)
    return lines


# ``[sessions] paths = [...]`` is written ``session_paths`` everywhere else (``clawmem config``,
# ``$CLAWMEM_SESSION_PATHS``).
SESSION_KEYS = {
    "paths": "session_paths",
    "idle_minutes": "session_idle_minutes",
    "batch_bytes": "session_batch_bytes",
    "batch_messages": "session_batch_messages",
    "retention_days": "session_retention_days",
    "retention": "session_retention",
}


def _flatten_sessions(table: dict) -> dict:
    section = table.get("sessions")
    if section is None:
        return table
    if not isinstance(section, dict):
        raise ConfigError(
            f"{CONFIG_FILE}: sessions must be a table",
            hint='write [sessions] with paths = ["~/.openclaw/agents/main/sessions"]',
        )
    out = {k: v for k, v in table.items() if k != "sessions"}
    for key, raw in section.items():
        if key not in SESSION_KEYS:
            raise ConfigError(
                f"{CONFIG_FILE}: unknown setting {key!r} in [sessions]",
                hint="known: " + ", ".join(sorted(SESSION_KEYS)),
            )
        out[SESSION_KEYS[key]] = raw
    return out


# ``[git] autocommit = true`` is ``git_autocommit`` everywhere else ($CLAWMEM_GIT_AUTOCOMMIT).
GIT_KEYS = {"autocommit": "git_autocommit"}
# How clawmem.toml spells a setting of a table, for an error about the file's value.
_WRITTEN = {
    **{field: f"[sessions] {key}" for key, field in SESSION_KEYS.items()},
    **{field: f"[git] {key}" for key, field in GIT_KEYS.items()},
}


def _flatten_git(table: dict) -> dict:
    section = table.get("git")
    if section is None:
        return table
    if not isinstance(section, dict):
        raise ConfigError(
            f"{CONFIG_FILE}: git must be a table", hint="write [git] with autocommit = true"
        )
    out = {k: v for k, v in table.items() if k != "git"}
    for key, raw in section.items():
        if key not in GIT_KEYS:
            raise ConfigError(
                f"{CONFIG_FILE}: unknown setting {key!r} in [git]",
                hint="known: " + ", ".join(sorted(GIT_KEYS)),
            )
        out[GIT_KEYS[key]] = raw
    return out


def toml_spellings() -> list[str]:
    """Every setting as it is written in clawmem.toml: the sessions' settings in ``[sessions]``
    and the read scopes as ``[scopes]`` entries, the rest at the top level."""
    tables = {v: f"[sessions] {k}" for k, v in SESSION_KEYS.items()}
    tables["read_scopes"] = '[scopes] NAME = "PATH"'
    tables |= {v: f"[git] {k}" for k, v in GIT_KEYS.items()}
    return [tables.get(name, name) for name in sorted(_settable_fields())]


def unknown_setting_hint(key: str) -> str:
    """The hint for an unknown key: the closest setting as it must be written, then them all."""
    import difflib

    spelled = toml_spellings()
    bare = {s.split()[1] if s.startswith(("[sessions]", "[git]")) else s: s for s in spelled}
    bare |= dict(zip(sorted(_settable_fields()), spelled, strict=True))
    bare["scopes"] = bare["read_scopes"]
    close = difflib.get_close_matches(key, list(bare), n=1, cutoff=0.75)
    known = "known settings: " + ", ".join(spelled)
    return f"did you mean {bare[close[0]]}? {known}" if close else known


SCOPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")


def _flatten_scopes(table: dict) -> dict:
    """``[scopes] team = "~/team-notes"`` is ``read_scopes = ("team=~/team-notes",)``."""
    section = table.get("scopes")
    if section is None:
        return table
    if not isinstance(section, dict):
        raise ConfigError(
            f"{CONFIG_FILE}: scopes must be a table",
            hint='write [scopes] with team = "~/team-notes"',
        )
    out = {k: v for k, v in table.items() if k != "scopes"}
    entries = []
    for name, path in section.items():
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(
                f"{CONFIG_FILE}: [scopes] {name} must be the path of a workspace",
                hint=f'{name} = "~/team-notes"',
            )
        entries.append(f"{name}={path}")
    out["read_scopes"] = entries
    return out


def scopes_origin(cfg: Config) -> str:
    """Where the read scopes were set, as a person fixes them: ``[scopes] in clawmem.toml`` or
    ``$CLAWMEM_READ_SCOPES`` (which replaces the file's)."""
    where = cfg.sources.get("read_scopes", CONFIG_FILE)
    return where if where.startswith("$") else f"[scopes] in {CONFIG_FILE}"


def parse_scopes(cfg: Config, root: Path) -> dict[str, Path]:
    """The read scopes by name, paths resolved against the workspace; ConfigError when bad."""
    out: dict[str, Path] = {}
    where = cfg.sources.get("read_scopes", CONFIG_FILE)
    for entry in cfg.read_scopes:
        name, sep, raw = entry.partition("=")
        if not sep or not SCOPE_NAME.fullmatch(name) or not raw.strip():
            raise ConfigError(
                f"{where}: scope {entry!r} is not NAME=PATH",
                hint="a name of letters, digits, - and _, then the workspace's path",
            )
        path = Path(raw.strip()).expanduser()
        try:
            path = (root / path if not path.is_absolute() else path).resolve()
        except RuntimeError:  # a link loop (Python < 3.13): a clone's `[scopes] x = "loop"`
            raise ConfigError(
                f"{where}: scope {name!r}: {raw.strip()} is a symbolic link loop",
                hint="point the scope at a workspace's folder",
            ) from None
        if path == root.resolve():
            raise ConfigError(f"{where}: scope {name!r} is this workspace itself")
        out[name] = path
    return out


# Settings whose values name places on disk, each with how a person writes one value in
# clawmem.toml. A value of the file that leads outside the workspace takes effect only once the
# user approved the file (config/trust.py); a new setting that names a place belongs here.
# extra_paths does not: the scanner never leaves the workspace for it (markdown/workspace.py).
PATH_SETTINGS: dict[str, str] = {
    "read_scopes": "[scopes] {name} = {path}",
    "session_paths": "[sessions] paths {path}",
    "model": "model = {path}",
    "http_access_log": "http_access_log = {path}",
}
# Settings that let something outside in, whatever their value: they too wait for approval.
OPENING_SETTINGS: dict[str, str] = {
    "http_cors_origins": "http_cors_origins {path}",
}
# Settings whose files clawmem writes, and the folder of the workspace the file may name without
# approval: the access log goes under .memory/ (derived, git-ignored). Elsewhere in the workspace
# it appends request lines to a file a cloned repository chose: a daily log (read back as
# memory), or .git/hooks/pre-commit, whose shell runs `method="$(…)"` of any request.
CONFINED_SETTINGS: dict[str, str] = {"http_access_log": ".memory"}


def _places(key: str, value: Any) -> list[tuple[Any, str, str]]:
    """(the value as stored, the place it names, how a person writes it) for each of ``value``."""
    out = []
    for item in value if isinstance(value, tuple) else (value,):
        name, _, place = item.partition("=") if key == "read_scopes" else ("", "", item)
        if place.strip():
            form = PATH_SETTINGS.get(key) or OPENING_SETTINGS[key]
            shown = form.format(name=name, path=json.dumps(place.strip()))
            out.append((item, place.strip(), shown))
    return out


def leads_inside(root: Path, path: Path) -> bool:
    """Whether ``path``, links followed, is inside the workspace ``root`` (a link loop leads
    nowhere: not inside)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except RuntimeError:  # a link loop, on Python < 3.13 (later ones return the path)
        return False


def names_a_model_file(place: str) -> bool:
    """Whether a ``model`` value names a file (``models/x.gguf``) rather than one of clawmem's
    own models by name (``e5``, ``e5-f32``). A file is read by llama.cpp's GGUF parser, native
    code that has had memory-safety flaws: one that a cloned repository carries waits for
    approval even inside the workspace; a model clawmem converts itself needs none."""
    return place.lower().endswith(".gguf") or "/" in place or os.sep in place


def leads_outside(root: Path, place: str, within: str = "") -> bool:
    """Whether ``place`` (relative to the workspace, ``~`` expanded) is outside ``root`` (or
    its folder ``within``), links followed: a link inside the workspace to a folder outside
    leads outside."""
    p = Path(place).expanduser()
    p = p if p.is_absolute() else root / p
    try:
        return not p.resolve().is_relative_to((root / within).resolve())
    except RuntimeError:  # a link loop (Python < 3.13): a place that cannot be followed waits
        return True  # for approval like one outside (a clone's `[sessions] paths = ["loop"]`)


def reaches_outside(root: Path, values: dict[str, Any]) -> dict[str, list[tuple[Any, str]]]:
    """Of the settings ``values``, those that lead outside the workspace: key -> [(value as
    stored, how a person writes it)]."""
    out: dict[str, list[tuple[Any, str]]] = {}
    for key in [k for k in (*PATH_SETTINGS, *OPENING_SETTINGS) if k in values]:
        far = [
            (item, shown)
            for item, place, shown in _places(key, values[key])
            if key in OPENING_SETTINGS
            or (key == "model" and names_a_model_file(place))
            or (place != "-" and leads_outside(root, place, CONFINED_SETTINGS.get(key, "")))
        ]
        if far:
            out[key] = far
    return out


def _hold_back(
    root: Path, values: dict[str, Any], sources: dict[str, str], content: bytes
) -> dict[str, list[str]]:
    """Drop from ``values`` what leads outside the workspace unless the user approved this file;
    what was dropped, as a person writes it."""
    far = reaches_outside(root, values)
    if not far:
        return {}
    if trust.is_approved(root, content):
        return {}
    held: dict[str, list[str]] = {}
    for key, items in far.items():
        drop = {item for item, _ in items}
        value = values[key]
        kept = tuple(v for v in value if v not in drop) if isinstance(value, tuple) else None
        if kept:
            values[key] = kept
        else:
            del values[key]
            del sources[key]
        held[key] = [shown for _, shown in items]
    return held


def _read_file(root: Path) -> tuple[dict[str, Any], dict[str, str], bytes | None]:
    """The settings of the workspace's clawmem.toml, where each came from, and the file's bytes
    (None without one); ConfigError naming the line when one is wrong."""
    allowed = _settable_fields()
    defaults = Config()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    path = root / CONFIG_FILE
    if not path.is_file():
        return values, sources, None
    if path.is_symlink() and not leads_inside(root, path):
        # A committed link (clawmem.toml -> ~/.config/…/secrets.toml) would have every command
        # read a file of the user's outside the workspace, and show its values in errors.
        raise ConfigError(
            f"{CONFIG_FILE}: a symbolic link out of the workspace (to {os.readlink(path)}); "
            "clawmem reads settings only from a file inside it",
            hint="replace the link with a copy of the file it points to, or delete it",
        )
    import tomllib  # here: every command reads the config; without clawmem.toml, no parser

    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:  # read by every command: a clone's 1 GB file, read each time
        raise ConfigError(
            f"{CONFIG_FILE}: {size:,} bytes; a settings file is at most {MAX_CONFIG_BYTES:,}",
            hint="keep only the settings in it, or delete the file",
        )
    try:
        content = path.read_bytes()
        text = content.decode("utf-8")
        data = tomllib.loads(text)
        where = _key_lines(text)
    except UnicodeDecodeError as exc:  # the line of the first bad byte, as `check` names it
        bad = content[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{CONFIG_FILE} line {bad}: not UTF-8 (byte 0x{content[exc.start]:02x})",
            hint="save the file as UTF-8",
        ) from None
    except tomllib.TOMLDecodeError as exc:
        import re

        # tomllib ends its message with "(at line 2, column 8)": lead with the line, as every
        # other error about the file does.
        at = re.search(r"\s*\(at line (\d+), column (\d+)\)$", str(exc))
        said = f"line {at.group(1)}: {str(exc)[: at.start()]} (column {at.group(2)})" if at else exc
        raise ConfigError(
            f"{CONFIG_FILE}{' ' if at else ': '}{said}",
            hint="fix the TOML syntax (docs/workspace.md lists the settings), or delete the file "
            "to use the defaults",
        ) from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(
            f"{CONFIG_FILE}: values nested too deeply", hint="fix the file or delete it"
        ) from None
    # Settings may live at the top level or under [clawmem].
    table = data.get("clawmem", data) if isinstance(data.get("clawmem"), dict) else data
    table = _flatten_git(_flatten_scopes(_flatten_sessions(table)))
    for key, raw in table.items():
        if key not in allowed:
            line = where.get(key)
            raise ConfigError(
                f"{CONFIG_FILE}{f' line {line}' if line else ''}: unknown setting {key!r}",
                hint=unknown_setting_hint(key),
            )
        line = where.get(key)
        origin = f"{CONFIG_FILE} line {line}" if line else CONFIG_FILE
        values[key] = _coerce(
            key, raw, getattr(defaults, key), origin, typed=True, written=_WRITTEN.get(key, "")
        )
        texts = values[key] if isinstance(values[key], tuple) else (values[key],)
        if any(isinstance(t, str) and "\x00" in t for t in texts):
            # TOML writes one as "\u0000"; no path holds it, and resolving one (a scope, the
            # transcripts folder, the access log) raised ValueError out of every command.
            raise ConfigError(
                f"{origin}: {_WRITTEN.get(key) or ('[scopes]' if key == 'read_scopes' else key)}"
                " holds a NUL character (\\u0000)",
                hint="remove it from the value",
            )
        sources[key] = CONFIG_FILE
    return values, sources, content


def trust_state(root: Path) -> trust.TrustState:
    """Whether the workspace's clawmem.toml is approved here, and what it reaches outside."""
    values, _, content = _read_file(root)
    reaches = [shown for items in reaches_outside(root, values).values() for _, shown in items]
    approved = content is not None and trust.is_approved(root, content)
    return trust.TrustState(
        file=trust.config_key(root),
        exists=content is not None,
        approved=approved,
        changed=not approved and trust.was_approved(root),
        reaches=tuple(reaches),
        held_back=() if approved else tuple(reaches),
        store=str(trust.store_path()),
    )


def load_config(root: Path, environ: dict[str, str] | None = None) -> Config:
    env = os.environ if environ is None else environ
    allowed = _settable_fields()
    defaults = Config()
    values, sources, content = _read_file(root)
    held_back: dict[str, list[str]] = {}
    if content is not None:
        held_back = _hold_back(root, values, sources, content)
    for key in allowed:
        var = "CLAWMEM_" + key.upper()
        if var in env:
            held_back.pop(key, None)  # the user's own setting replaces the file's
            values[key] = _coerce(key, env[var], getattr(defaults, key), f"${var}")
            sources[key] = f"${var}"

    if values.get("fusion", defaults.fusion) not in {"rrf", "weighted"}:
        raise ConfigError(
            f"{sources.get('fusion')}: fusion = {values['fusion']!r} is not known",
            hint='use "rrf" (default) or "weighted"',
        )
    if values.get("session_retention", defaults.session_retention) not in {"archive", "prune"}:
        raise ConfigError(
            f"{sources.get('session_retention')}: [sessions] retention = "
            f"{values['session_retention']!r} is not known",
            hint='use "archive" (default: moved to .clawmem/archive/episodes/) or "prune"',
        )
    if (values.get("min_relevance") or 0.0) > 1.0:
        raise ConfigError(
            f"{sources.get('min_relevance')}: min_relevance = {values['min_relevance']!r} is not a "
            "probability",
            hint="set min_relevance between 0 (show every hit) and 1, or remove it for the "
            "fitted model's threshold",
        )
    if values.get("candidates", defaults.candidates) < 1:
        raise ConfigError(
            f"{sources.get('candidates')}: candidates = 0 leaves recall nothing to rank",
            hint="set candidates to at least 1 (default 80), or remove it",
        )
    held = tuple(shown for key in held_back for shown in held_back[key])
    cfg = Config(**values, sources=sources, held_back=held)
    if cfg.chunk_tokens < 16 or cfg.chunk_overlap >= cfg.chunk_tokens:
        raise ConfigError(
            f"chunk_tokens={cfg.chunk_tokens}, chunk_overlap={cfg.chunk_overlap} cannot chunk",
            hint="chunk_tokens must be at least 16 and larger than chunk_overlap",
        )
    return cfg
