"""``clawmem doctor``: is this setup sound, and if not, what fixes it.

One finding per thing a user can get wrong, each with its fix: the install (Python, the
dependencies, SQLite's extension loading, FTS5, sqlite-vec), the embedding model (converted,
loadable, its hash, the index's), the index (present, its schema, stale files, units without
vectors, files it cannot read), the git setup (the repository, .gitignore, .gitattributes, the
hooks and the merge driver, and the interpreter they run), the resident embedder (running, or a
socket left by a killed one), the watcher, and the configuration (valid, and whether anyone
else may write it). ``status`` says what the index holds; ``doctor`` says what is broken.

Nothing here changes anything: the model is loaded (not converted) to see that it loads, git is
asked, files are read. A finding is ``ok``, ``warn`` (works, but something is off: a stale index,
hooks not installed), ``fail`` (broken: ``clawmem doctor`` exits non-zero) or ``off`` (does not
apply here: no git repository, vectors turned off).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.config import CONFIG_FILE, load_config
from clawmem.errors import ClawmemError
from clawmem.markdown.links import TOO_MANY_LINKS
from clawmem.text.records import as_json
from clawmem.text.shown_path import shown_path

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer

OK, WARN, FAIL, OFF = "ok", "warn", "fail", "off"
STATES = (OK, WARN, FAIL, OFF)
# The git hooks `clawmem hook install` writes (cli/git_hooks.py owns them; these are their names and
# the line that marks clawmem's block, which that module writes).
HOOKS = ("pre-commit", "post-merge", "post-checkout", "post-rewrite")
HOOK_MARK = "# >>> clawmem hook ("
DRIVER_KEY = "merge.clawmem.driver"
REINSTALL = 'python3 -m pip install -e ".[dev]" (from a clawmem checkout), or pip install clawmem'


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing doctor looked at."""

    area: str  # install, config, model, index, git, resident, watcher
    check: str  # what, in a few words: "python", "sqlite-vec", "pre-commit hook"
    state: str  # ok, warn, fail, off
    detail: str  # what was found
    fix: str | None = None  # what to run or change (None when nothing needs doing)

    def to_dict(self) -> dict:
        """``clawmem doctor --json``'s form of it."""
        return as_json(self)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every finding, in the order they were made (install first)."""

    workspace: str | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def broken(self) -> list[Finding]:
        return [f for f in self.findings if f.state == FAIL]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.state == WARN]

    def summary(self) -> str:
        """ "1 broken, 2 warnings (14 checks)"."""
        return (
            f"{len(self.broken)} broken, {len(self.warnings)} warning(s) "
            f"({len(self.findings)} checks)"
        )

    def to_dict(self) -> dict:
        """``clawmem doctor --json``."""
        return {
            "workspace": self.workspace,
            "ok": not self.broken,
            "counts": {s: sum(1 for f in self.findings if f.state == s) for s in STATES},
            "findings": [f.to_dict() for f in self.findings],
        }


def diagnose(
    workspace: Path | None = None,
    *,
    environ: dict[str, str] | None = None,
    load_model: bool = True,
) -> Diagnosis:
    """Check the install, then the workspace at ``workspace`` (or found as every command finds
    it): its configuration, model, index, git setup, resident embedder and watcher.
    ``load_model``: load the configured model to see that it loads (1-2 s for the default).
    Never raises a ClawmemError: what goes wrong is a finding."""
    from clawmem.markdown.workspace import find_root

    found: list[Finding] = list(_install())
    try:
        root = find_root(workspace)
    except ClawmemError as exc:
        found.append(Finding("workspace", "workspace", FAIL, exc.message, exc.hint))
        return Diagnosis(None, found)
    found.append(Finding("workspace", "workspace", OK, str(root)))
    env = os.environ if environ is None else environ
    found += _config_trust(root)
    try:
        cfg = load_config(root, dict(env))
    except ClawmemError as exc:
        found.append(Finding("config", CONFIG_FILE, FAIL, exc.message, exc.hint))
        found += _git(root)
        return Diagnosis(str(root), found)
    overrides = sorted(v for v in cfg.sources.values() if v.startswith("$"))
    found.append(
        Finding(
            "config",
            "settings",
            OK,
            "valid"
            + (f"; set from the environment: {', '.join(overrides)}" if overrides else "")
            + " (`clawmem config` shows each setting and where it came from)",
        )
    )
    from clawmem.ingest.indexing import Indexer

    ix = Indexer(root, cfg)
    try:
        found += _safely("model", lambda: _model(ix, load_model))
        found += _safely("index", lambda: _index(ix))
        found += _safely("resident", lambda: _resident(ix))
        found += _safely("git", lambda: _git(root))
    finally:
        ix.close()
    return Diagnosis(str(root), found)


def _safely(area: str, check: Callable[[], list[Finding]]) -> list[Finding]:
    """The findings of ``check``, or one finding with the error that stopped it: one broken
    part must not hide the others."""
    try:
        return check()
    except ClawmemError as exc:
        return [Finding(area, area, FAIL, exc.message, exc.hint)]


# --------------------------------------------------------------------------- the install


# (module, distribution): what clawmem imports, and what to install when it is missing. The
# shells' own (typer, rich, mcp, uvicorn) are only looked for: the library never imports them.
_NEEDED = (
    ("markdown_it", "markdown-it-py"),
    ("numpy", "numpy"),
    ("llama_cpp", "llama-cpp-python"),
    ("sqlean", "sqlean-py"),
    ("watchdog", "watchdog"),
    ("platformdirs", "platformdirs"),
    ("filelock", "filelock"),
    ("ahocorasick", "pyahocorasick"),
    ("jellyfish", "jellyfish"),
    ("gguf", "gguf"),
)
_LOOKED_FOR = (("typer", "typer"), ("rich", "rich"), ("mcp", "mcp"), ("uvicorn", "uvicorn"))


def _install() -> Iterator[Finding]:
    v = sys.version_info
    python = f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
    if v < (3, 11):
        yield Finding("install", "python", FAIL, python, "clawmem needs Python 3.11 or newer")
    else:
        yield Finding("install", "python", OK, python)
    missing: list[tuple[str, str]] = []
    broken: list[tuple[str, str]] = []
    for module, dist in _NEEDED:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            (missing if isinstance(exc, ModuleNotFoundError) else broken).append((dist, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a native library that fails to load
            broken.append((dist, f"{type(exc).__name__}: {exc}"))
    missing += [(d, "not installed") for m, d in _LOOKED_FOR if importlib.util.find_spec(m) is None]
    if missing or broken:
        names = ", ".join(f"{d} ({why})" for d, why in [*missing, *broken])
        yield Finding("install", "dependencies", FAIL, f"cannot import: {names}", REINSTALL)
    else:
        yield Finding(
            "install", "dependencies", OK, f"{len(_NEEDED) + len(_LOOKED_FOR)} packages import"
        )
    yield from _sqlite()


def _sqlite() -> Iterator[Finding]:
    from clawmem.store import db

    name = db.sqlite.__name__
    conn = db.sqlite.connect(":memory:")
    try:
        where = f"SQLite {db.sqlite_version()} through {name}"
        if not hasattr(conn, "enable_load_extension"):
            yield Finding(
                "install",
                "sqlite extensions",
                FAIL,
                f"{where}, built without extension loading: sqlite-vec cannot load",
                "pip install sqlean-py (a SQLite module that loads extensions)",
            )
        else:
            yield Finding("install", "sqlite extensions", OK, f"{where}, extension loading on")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
            yield Finding("install", "fts5", OK, "FTS5 full-text search available")
        except db.DatabaseError as exc:
            yield Finding(
                "install",
                "fts5",
                FAIL,
                f"FTS5 missing ({exc}): lexical search cannot work",
                "pip install sqlean-py (it ships FTS5)",
            )
    finally:
        conn.close()
    vec = db._load_vec(db.sqlite.connect(":memory:"))
    if vec.available:
        yield Finding("install", "sqlite-vec", OK, f"sqlite-vec {vec.version} loads")
    else:
        yield Finding(
            "install",
            "sqlite-vec",
            WARN,
            f"{vec.reason}: vectors are searched by an exact NumPy scan instead (slower on "
            "large indexes)",
            "pip install sqlite-vec"
            if "not installed" in vec.reason
            else "unset $CLAWMEM_DISABLE_SQLITE_VEC"
            if "CLAWMEM_DISABLE_SQLITE_VEC" in vec.reason
            else "reinstall sqlite-vec for this platform (pip install --force-reinstall sqlite-vec)",
        )


# --------------------------------------------------------------------------- configuration


def _config_trust(root: Path) -> list[Finding]:
    """Whether ``clawmem.toml`` is trusted: approved on this machine (``clawmem trust``) when
    its settings lead outside the workspace, and writable by its owner alone."""
    return [*_approval(root), *_file_rights(root)]


def _approval(root: Path) -> list[Finding]:
    """``clawmem trust``: a clawmem.toml that came through git reaches outside the workspace
    (read scopes, transcript folders, a model file) only once approved here."""
    from clawmem.config import trust_state

    try:
        state = trust_state(root)
    except ClawmemError as exc:
        return [Finding("config", "approval", FAIL, exc.message, exc.hint)]
    if not state.exists or not state.reaches:
        return [Finding("config", "approval", OK, "nothing in it leads outside the workspace")]
    reaches = ", ".join(state.reaches)
    if state.approved:
        return [Finding("config", "approval", OK, f"approved on this machine; reaches {reaches}")]
    again = " (it changed since it was approved)" if state.changed else ""
    return [
        Finding(
            "config",
            "approval",
            WARN,
            f"{CONFIG_FILE} is not approved on this machine{again}: ignoring {reaches}",
            "clawmem trust --show (read what it reaches), then clawmem trust",
        )
    ]


def _file_rights(root: Path) -> list[Finding]:
    """Who may change ``clawmem.toml``: it chooses the model file clawmem loads, the folders it
    reads (extra_paths, [sessions], [scopes]); a file another user can write can point them
    anywhere."""
    path = root / CONFIG_FILE
    try:
        st = path.lstat()
    except FileNotFoundError:
        return [Finding("config", "permissions", OK, f"no {CONFIG_FILE}: the defaults apply")]
    except OSError as exc:
        return [Finding("config", "permissions", FAIL, f"{CONFIG_FILE}: {exc.strerror}")]
    if stat.S_ISLNK(st.st_mode):
        return [
            Finding(
                "config",
                "permissions",
                WARN,
                f"{CONFIG_FILE} is a symbolic link: whoever controls its target chooses this "
                "workspace's settings",
                f"replace the link with the file itself (cp --remove-destination "
                f"$(readlink -f {CONFIG_FILE}) {CONFIG_FILE})",
            )
        ]
    problems = []
    if hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0):
        problems.append(f"owned by another user (uid {st.st_uid})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problems.append("writable by other users")
    if problems:
        return [
            Finding(
                "config",
                "permissions",
                WARN,
                f"{CONFIG_FILE} is {' and '.join(problems)}: they choose the model clawmem loads "
                "and the folders it reads",
                f"chmod go-w {CONFIG_FILE} (and chown it to yourself), after reading it",
            )
        ]
    return [
        Finding("config", "permissions", OK, f"{CONFIG_FILE} is yours and only you can write it")
    ]


# --------------------------------------------------------------------------- the model


def _model(ix: Indexer, load: bool) -> list[Finding]:
    if not ix.cfg.vectors:
        where = ix.cfg.sources.get("vectors", "default")
        return [Finding("model", "model", OFF, f"vectors are off (vectors = false, {where})")]
    from clawmem.embedders.model_choice import configured_identity, model_choice

    fix_model = "clawmem model status (and `clawmem model use e5|minilm|PATH.gguf`)"
    choice = model_choice(ix.root, ix.cfg)
    out: list[Finding] = []
    if choice.builtin is not None:
        from clawmem.embedders.default import builtin_available, verify_cached

        ok, why = builtin_available(choice.builtin)
        if not ok:
            return [Finding("model", "weights", FAIL, f"{choice.builtin.name}: {why}", REINSTALL)]
        damaged = verify_cached(choice.builtin)
        if damaged is not None:
            out.append(Finding("model", "converted", FAIL, damaged, fix_model))
            return out
    path = choice.file(convert=False)
    if path is None:
        name = choice.builtin.name if choice.builtin is not None else "the model"
        return [
            Finding(
                "model",
                "converted",
                WARN,
                f"{name} is not converted to GGUF yet: the first `clawmem index` or hybrid "
                "recall converts it",
                "clawmem index",
            )
        ]
    if not path.exists():
        return [Finding("model", "file", FAIL, f"{path}: model file not found", fix_model)]
    out.append(Finding("model", "file", OK, str(path)))
    identity = configured_identity(ix.root, ix.cfg)
    if load:
        emb = ix.supply.embedder()
        if emb is None:
            out.append(Finding("model", "loads", FAIL, str(ix.supply.error), fix_model))
            return out
        identity = emb.identity
        out.append(
            Finding(
                "model",
                "loads",
                OK,
                f"{identity.model}: {identity.dims} dimensions, sha256 {identity.model_sha256[:12]}…",
            )
        )
    elif identity is not None:
        out.append(
            Finding("model", "metadata", OK, f"sha256 {identity.model_sha256[:12]}… (not loaded)")
        )
    built = _index_meta(ix, "embedder")
    if identity is not None and built is not None and built != identity.key():
        out.append(
            Finding(
                "model",
                "index vectors",
                WARN,
                "the index's vectors were made by another model: vector search is off until "
                "it is re-embedded",
                "clawmem index",
            )
        )
    return out


def _index_meta(ix: Indexer, key: str) -> str | None:
    if not ix.index_path.exists():
        return None
    from clawmem.store import db
    from clawmem.store.index import Index

    try:
        idx = Index.open(ix.index_path, readonly=True)
    except db.DatabaseError:
        return None
    try:
        return idx.get_meta(key)
    except db.DatabaseError:
        return None
    finally:
        idx.close()


# --------------------------------------------------------------------------- the index


def _index(ix: Indexer) -> list[Finding]:
    from clawmem.ingest.status import status

    try:
        s = status(ix)
    except ClawmemError as exc:
        return [Finding("index", "index", FAIL, exc.message, exc.hint)]
    d = s.to_dict()
    if not s.index_exists:
        return [
            Finding("index", "index", WARN, "no index yet: recall finds nothing", "clawmem index")
        ]
    if s.vectors is None:  # it could not be read
        return [Finding("index", "index", FAIL, s.state, "clawmem index --force")]
    out = [Finding("index", "index", OK, f"{s.index_path}: {s.chunks} chunks, {s.facts} facts")]
    if s.state.startswith("needs rebuild"):
        out.append(Finding("index", "schema", WARN, s.state, "clawmem index"))
    else:
        out.append(Finding("index", "schema", OK, f"schema {s.schema_version}"))
    changed = d["changed_on_disk"]
    stale = sum(len(changed[k]) for k in ("added", "modified", "deleted"))
    if stale:
        out.append(
            Finding(
                "index",
                "fresh",
                WARN,
                f"{stale} file(s) changed on disk since the last sync (each read syncs them)",
                "clawmem index (or keep `clawmem watch` running)",
            )
        )
    else:
        out.append(Finding("index", "fresh", OK, "in step with the Markdown"))
    v = s.vectors
    pending = v.get("pending", 0)
    state = str(v.get("state", ""))
    if not ix.cfg.vectors:
        out.append(Finding("index", "vectors", OFF, "vectors are off: lexical search only"))
    elif state.startswith("off"):
        out.append(
            Finding("index", "vectors", WARN, f"vector search {state}", "clawmem model status")
        )
    elif pending:
        out.append(
            Finding(
                "index",
                "vectors",
                WARN,
                f"{pending} unit(s) without vectors: semantic search misses them",
                "clawmem index",
            )
        )
    else:
        out.append(Finding("index", "vectors", OK, f"{v.get('indexed', 0)} vectors"))
    unread = [p for p in s.problems or [] if str(p.get("message", "")).startswith("not indexed")]
    for p in unread:
        shown = shown_path(p["path"])  # a file named with a credential, as every path is shown
        out.append(
            Finding(
                "index",
                "unreadable file",
                WARN,
                f"{shown}:{p['line']}: {p['message']}",
                f"re-save {shown} as UTF-8 Markdown, then clawmem index",
            )
        )
    capped = [p for p in s.problems or [] if str(p.get("message", "")).startswith(TOO_MANY_LINKS)]
    for p in capped:
        shown = shown_path(p["path"])
        fix = f"split {shown} into smaller notes, then clawmem index"
        out.append(Finding("index", "links", WARN, f"{shown}:{p['line']}: {p['message']}", fix))
    facts = [p for p in s.problems or [] if p not in unread and p not in capped]
    if facts:
        out.append(
            Finding(
                "index",
                "facts",
                WARN,
                f"{len(facts)} malformed fact line(s)",
                "clawmem check (it names each line and its fix)",
            )
        )
    return out


# --------------------------------------------------------------------------- resident, watcher


def _resident(ix: Indexer) -> list[Finding]:
    from clawmem.embedders.resident.client import status_of
    from clawmem.ingest.watch import describe_watcher, watcher_status

    out = []
    r = status_of(ix.root, ix.cfg)
    state = r.get("state", "")
    if state == "running":
        out.append(
            Finding("resident", "embedder", OK, f"running, pid {r.get('pid')} ({r.get('socket')})")
        )
    elif state == "not running" and r.get("socket") and Path(r["socket"]).exists():
        out.append(
            Finding(
                "resident",
                "embedder",
                WARN,
                f"a socket with no embedder behind it ({r['socket']}: {r.get('reason')}), left "
                "by one that was killed; the next recall starts a new one",
                f"rm {shlex.quote(r['socket'])}",
            )
        )
    elif state == "not running" and "socket" not in r and r.get("reason"):
        # Its folder is unusable (another user's, open to others): it cannot start at all.
        out.append(
            Finding(
                "resident",
                "embedder",
                WARN,
                f"cannot start: {r['reason']}; every process loads the model itself",
                "make $CLAWMEM_RUNTIME_DIR (or $XDG_RUNTIME_DIR/clawmem) a folder of yours "
                "with mode 700",
            )
        )
    else:
        detail = state
        if state == "not running":
            detail += ": the next hybrid recall starts it"
        out.append(Finding("resident", "embedder", OFF if "off" in state else OK, detail))
    w = watcher_status(ix.memory_dir)
    text = describe_watcher(w)
    if w is not None and w.get("running") and not w.get("responsive", True):
        out.append(Finding("watcher", "watch", WARN, text, "restart `clawmem watch`"))
    else:
        out.append(Finding("watcher", "watch", OK, text))
    return out


# --------------------------------------------------------------------------- git


def _run_git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=30, check=False
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None


def _git(root: Path) -> list[Finding]:
    top = _run_git(root, "rev-parse", "--show-toplevel")
    if top is None:
        if any(p.joinpath(".git").exists() for p in (root, *root.parents)):
            return [
                Finding(
                    "git", "git", FAIL, "a git repository, but git is not on PATH", "install git"
                )
            ]
        return [Finding("git", "repository", OFF, "git is not installed: no hooks, no sharing")]
    if top.returncode != 0:
        return [
            Finding(
                "git",
                "repository",
                OFF,
                "not in a git repository: no hooks, no sharing between machines",
                "clawmem init --git (to share it through git)",
            )
        ]
    out = [Finding("git", "repository", OK, top.stdout.strip())]
    probe = ".memory/index.sqlite"
    ignored = _run_git(root, "check-ignore", "-q", probe)
    if ignored is not None and ignored.returncode != 0:
        out.append(
            Finding(
                "git",
                ".gitignore",
                WARN,
                ".memory/ is not ignored: the derived index would be committed",
                "clawmem init (adds .memory/ to .gitignore)",
            )
        )
    else:
        out.append(Finding("git", ".gitignore", OK, ".memory/ is ignored"))
    attr = _run_git(root, "check-attr", "merge", "--", "memory/2025-01-01.md")
    merged = attr is not None and attr.stdout.strip().endswith(": clawmem")
    if not merged:
        out.append(
            Finding(
                "git",
                ".gitattributes",
                WARN,
                "daily logs do not use clawmem's merge driver: two clones' appends conflict",
                "clawmem init (writes .gitattributes)",
            )
        )
    else:
        out.append(Finding("git", ".gitattributes", OK, "daily logs merge with clawmem's driver"))
    out += _hooks(root)
    out.append(_driver(root, merged))
    return out


def _hooks(root: Path) -> list[Finding]:
    got = _run_git(root, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
    if got is None or got.returncode != 0:
        return []
    folder = Path(got.stdout.strip())
    missing, out = [], []
    for name in HOOKS:
        hook = folder / name
        try:
            text = hook.read_text(encoding="utf-8", errors="replace")
        except OSError:
            missing.append(name)
            continue
        if HOOK_MARK not in text:
            missing.append(name)
            continue
        if not os.access(hook, os.X_OK):
            out.append(
                Finding(
                    "git", f"{name} hook", FAIL, f"{hook} is not executable", f"chmod +x {hook}"
                )
            )
            continue
        python = _hook_python(text)
        if python is not None and not os.access(python, os.X_OK):
            on_path = shutil.which("clawmem")
            out.append(
                Finding(
                    "git",
                    f"{name} hook",
                    WARN if on_path else FAIL,
                    f"it runs {python}, which no longer exists, "
                    + (f"so it falls back on {on_path}" if on_path else "so the hook does nothing"),
                    "clawmem hook install (writes this Python's path into the hooks)",
                )
            )
    if missing:
        out.insert(
            0,
            Finding(
                "git",
                "hooks",
                WARN,
                f"not installed: {', '.join(missing)} (the index is not refreshed by git)",
                "clawmem hook install",
            ),
        )
    elif not out:
        out.append(Finding("git", "hooks", OK, f"{', '.join(HOOKS)} installed in {folder}"))
    return out


def _hook_python(text: str) -> str | None:
    """The interpreter clawmem's block runs (``if [ -x /usr/bin/python3 ]; then``)."""
    start = text.index(HOOK_MARK)
    for line in text[start:].splitlines():
        line = line.strip()
        if line.startswith("if [ -x ") and line.endswith("]; then"):
            try:
                return shlex.split(line[len("if [ -x ") : -len("]; then")])[0]
            except (ValueError, IndexError):
                return None
    return None


def _driver_python(command: str) -> str | None:
    """The interpreter a registered driver command runs: ``… if [ -x PY ]; then …`` (with its
    fallbacks), or the first word of an older ``PY -m clawmem merge-driver …``."""
    import re

    found = re.search(r"if \[ -x (.+?) \]; then", command)
    try:
        return shlex.split(found.group(1) if found else command)[0]
    except (ValueError, IndexError):
        return None


def _driver(root: Path, wanted: bool) -> Finding:
    got = _run_git(root, "config", "--get", DRIVER_KEY)
    command = got.stdout.strip() if got is not None and got.returncode == 0 else ""
    if not command:
        return Finding(
            "git",
            "merge driver",
            FAIL if wanted else WARN,
            f"{DRIVER_KEY} is not set"
            + (": .gitattributes names it, so git cannot merge daily logs" if wanted else ""),
            "clawmem init (or clawmem hook install) registers it",
        )
    program = _driver_python(command)
    # `clawmem hook install` registers a command with fallbacks (the Python, else `clawmem` on
    # the PATH, else git's own merge with markers); an older one ran the Python alone.
    fallback = "if [ -x " in command
    if program is not None and shutil.which(program) is None and not os.access(program, os.X_OK):
        if fallback:
            on_path = shutil.which("clawmem")
            return Finding(
                "git",
                "merge driver",
                WARN,
                f"{DRIVER_KEY} runs {program}, which no longer exists, so it falls back on "
                + (on_path or "git's own merge: two clones' appends to a daily log conflict"),
                "clawmem hook install (registers this Python)",
            )
        return Finding(
            "git",
            "merge driver",
            FAIL,
            f"{DRIVER_KEY} runs {program}, which does not exist: merges of daily logs fail",
            "clawmem hook install (registers this Python)",
        )
    if not fallback:
        return Finding(
            "git",
            "merge driver",
            WARN,
            f"{DRIVER_KEY} was registered by an older clawmem, without a fallback for when its "
            "Python moves",
            "clawmem hook install",
        )
    return Finding(
        "git",
        "merge driver",
        OK,
        f"runs {program} -m clawmem merge-driver; falls back on `clawmem` on the PATH, then on "
        "git's own merge (conflict markers, never our side alone)",
    )
